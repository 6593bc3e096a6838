/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt daemons of the fake host (fakehost.h): each answers at its URI, runs its own
 * domains, and is stopped, started, hung and released by the test; vnumad's connections to them
 * (virt_ops open, close, list_running, dom_open) and the events they deliver on vnumad's loop.
 * The calls on domains are fakehost_virt.c's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakehost_priv.h"
#include "loop.h"

static __thread char fake_error[128];

const char *fake_last_error(void)
{
    return fake_error;
}

void fake_set_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(fake_error, sizeof(fake_error), fmt, ap);
    va_end(ap);
}

/* The loop is woken: events are waiting (or held ones may go now). */
static void wake_loop(void)
{
    if (write(fh.pipe[1], "e", 1) < 0)
        abort();
}

/* ---- the daemons ---- */

void fake_daemons_reset(void)
{
    for (unsigned i = 0; i < FAKE_MAX_DAEMONS; i++)
        if (fh.daemons[i].hanging)
            abort(); /* a test left a call hanging */
    memset(fh.daemons, 0, sizeof(fh.daemons));
    memset(fh.conns, 0, sizeof(fh.conns));
    fh.daemons[0].used = true;
    snprintf(fh.daemons[0].uri, sizeof(fh.daemons[0].uri), "%s", FAKE_DEFAULT_URI);
}

fake_daemon *fake_daemon_default(void)
{
    return &fh.daemons[0];
}

/* The daemon at uri, or NULL. Locked. */
static fake_daemon *daemon_at(const char *uri)
{
    for (unsigned i = 0; i < FAKE_MAX_DAEMONS; i++)
        if (fh.daemons[i].used && strcmp(fh.daemons[i].uri, uri) == 0)
            return &fh.daemons[i];
    return NULL;
}

fake_daemon *fake_daemon_add(const char *uri)
{
    fake_daemon *d = NULL;

    pthread_mutex_lock(&fh.lock);
    if (daemon_at(uri) || strlen(uri) >= sizeof(d->uri))
        abort(); /* one daemon a URI */
    for (unsigned i = 0; i < FAKE_MAX_DAEMONS && !d; i++)
        if (!fh.daemons[i].used)
            d = &fh.daemons[i];
    if (!d)
        abort();
    memset(d, 0, sizeof(*d));
    d->used = true;
    snprintf(d->uri, sizeof(d->uri), "%s", uri);
    pthread_mutex_unlock(&fh.lock);
    return d;
}

/* The connection is alive: open, and its daemon up in the run it was opened in. Locked. */
static bool conn_alive(const fake_conn *c)
{
    return c->open && c->run == c->daemon->run && !c->daemon->down;
}

bool fake_handle_alive(const fake_handle *h)
{
    return h->conn->gen == h->gen && conn_alive(h->conn);
}

/* An event to each connection alive to d. Locked. */
static void queue_locked(fake_daemon *d, const fake_event *e)
{
    for (unsigned i = 0; i < FAKE_MAX_CONNS; i++) {
        const fake_conn *c = &fh.conns[i];
        if (c->daemon != d || !conn_alive(c) || d->nr_events >= FAKE_EVENTS_MAX)
            continue;
        d->events[d->nr_events] = *e;
        d->events[d->nr_events].conn = i;
        d->events[d->nr_events++].gen = c->gen;
    }
}

void fake_daemon_stop(fake_daemon *d)
{
    fake_event e = {.kind = FE_CLOSED};

    pthread_mutex_lock(&fh.lock);
    queue_locked(d, &e);
    d->down = true;
    pthread_mutex_unlock(&fh.lock);
    wake_loop();
}

void fake_daemon_start(fake_daemon *d)
{
    pthread_mutex_lock(&fh.lock);
    if (d->down) {
        d->down = false;
        d->run++; /* the connections of its last run stay dead */
    }
    pthread_mutex_unlock(&fh.lock);
}

void fake_libvirtd_stop(void)
{
    fake_daemon_stop(fake_daemon_default());
}

void fake_libvirtd_start(void)
{
    fake_daemon_start(fake_daemon_default());
}

void fake_daemon_hang(fake_daemon *d)
{
    pthread_mutex_lock(&fh.lock);
    d->hung = true;
    pthread_mutex_unlock(&fh.lock);
}

bool fake_daemon_hung(fake_daemon *d)
{
    bool h;

    pthread_mutex_lock(&fh.lock);
    h = d->hanging > 0;
    pthread_mutex_unlock(&fh.lock);
    return h;
}

void fake_daemon_release(fake_daemon *d)
{
    pthread_mutex_lock(&fh.lock);
    d->hung = false;
    pthread_cond_broadcast(&fh.released);
    pthread_mutex_unlock(&fh.lock);
    wake_loop(); /* its events held meanwhile */
}

void fake_daemon_wait(fake_daemon *d)
{
    if (!d->hung)
        return;
    d->hanging++;
    fake_clock_move((uint64_t)(FAKE_HANG_JUMP_S * 1e9));
    while (d->hung)
        pthread_cond_wait(&fh.released, &fh.lock);
    d->hanging--;
}

unsigned fake_daemon_connections(fake_daemon *d)
{
    unsigned n;

    pthread_mutex_lock(&fh.lock);
    n = d->opened;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

unsigned fake_daemon_open_now(fake_daemon *d)
{
    unsigned n = 0;

    pthread_mutex_lock(&fh.lock);
    for (unsigned i = 0; i < FAKE_MAX_CONNS; i++)
        n += fh.conns[i].open && fh.conns[i].daemon == d;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

unsigned fake_connections(void)
{
    unsigned n;

    pthread_mutex_lock(&fh.lock);
    n = fh.opened;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

/* ---- events ---- */

/* On vnumad's loop: each daemon's events (but a hung one's) to the connections they are for,
 * while those are open. */
static void deliver(int watch, int fd, int events, void *opaque)
{
    fake_event ev[FAKE_EVENTS_MAX];
    virt_callbacks cb[FAKE_EVENTS_MAX];
    char buf[64];

    (void)watch;
    (void)events;
    (void)opaque;
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
    for (unsigned k = 0; k < FAKE_MAX_DAEMONS; k++) {
        fake_daemon *d = &fh.daemons[k];
        unsigned n = 0;
        pthread_mutex_lock(&fh.lock);
        if (!d->used || d->hung) {
            pthread_mutex_unlock(&fh.lock);
            continue;
        }
        for (unsigned i = 0; i < d->nr_events; i++) {
            const fake_conn *c = &fh.conns[d->events[i].conn];
            if (!c->open || c->gen != d->events[i].gen)
                continue; /* closed since */
            ev[n] = d->events[i];
            cb[n++] = c->cb;
        }
        d->nr_events = 0;
        pthread_mutex_unlock(&fh.lock);
        for (unsigned i = 0; i < n; i++) {
            if (ev[i].kind == FE_CLOSED && cb[i].closed)
                cb[i].closed(cb[i].opaque);
            else if (ev[i].kind == FE_LIFECYCLE && cb[i].lifecycle)
                cb[i].lifecycle(cb[i].opaque, ev[i].uuid, ev[i].name, ev[i].ev, ev[i].migrated);
            else if (ev[i].kind == FE_METADATA && cb[i].metadata)
                cb[i].metadata(cb[i].opaque, ev[i].uuid, ev[i].name);
        }
    }
}

unsigned fake_events_queued(void)
{
    unsigned n = 0;

    pthread_mutex_lock(&fh.lock);
    for (unsigned k = 0; k < FAKE_MAX_DAEMONS; k++)
        n += fh.daemons[k].nr_events;
    pthread_mutex_unlock(&fh.lock);
    return n;
}

void fake_queue_event(fake_daemon *d, const fake_event *e)
{
    pthread_mutex_lock(&fh.lock);
    queue_locked(d, e);
    pthread_mutex_unlock(&fh.lock);
    wake_loop();
}

/* ---- vnumad's connections ---- */

int fake_conn_open(const char *uri, const virt_callbacks *cb, virt_conn **ret)
{
    fake_conn *c = NULL;
    fake_daemon *d;
    bool watch;

    pthread_mutex_lock(&fh.lock);
    d = daemon_at(uri ? uri : FAKE_DEFAULT_URI);
    if (!d) {
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: no libvirt daemon at %s", uri);
        return -ENOTCONN;
    }
    fake_daemon_wait(d);
    if (d->down) {
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: libvirtd is not running");
        return -ENOTCONN;
    }
    for (unsigned i = 0; i < FAKE_MAX_CONNS && !c; i++)
        if (!fh.conns[i].open)
            c = &fh.conns[i];
    if (!c)
        abort(); /* more connections open at once than the fake has */
    *c = (fake_conn){.open = true, .daemon = d, .run = d->run, .gen = ++fh.opened, .cb = *cb};
    d->opened++;
    watch = fh.watch == -1;
    if (watch)
        fh.watch = -2; /* (this thread adds it) */
    pthread_mutex_unlock(&fh.lock);
    if (watch) {
        int w = loop_add_fd(fh.pipe[0], LOOP_READABLE, deliver, NULL);
        pthread_mutex_lock(&fh.lock);
        fh.watch = w;
        pthread_mutex_unlock(&fh.lock);
    }
    *ret = (virt_conn *)c;
    return 0;
}

void fake_conn_close(virt_conn *vc)
{
    fake_conn *c = (fake_conn *)vc;

    if (!c)
        return;
    pthread_mutex_lock(&fh.lock);
    c->open = false; /* its handles are dead, its events dropped */
    pthread_mutex_unlock(&fh.lock);
}

int fake_conn_list_running(virt_conn *vc, virt_dom_id **ret, size_t *ret_n)
{
    fake_conn *c = (fake_conn *)vc;
    virt_dom_id *ids = calloc(FAKE_MAX_DOMS, sizeof(*ids));
    size_t n = 0;

    if (!ids)
        return -ENOMEM;
    pthread_mutex_lock(&fh.lock);
    fake_daemon_wait(c->daemon);
    if (!conn_alive(c)) {
        pthread_mutex_unlock(&fh.lock);
        free(ids);
        fake_set_error("fake: no connection to libvirtd");
        return -ENOTCONN;
    }
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++) {
        fake_dom *fd = &fh.doms[i];
        if (!fd->used || !fd->running || fd->daemon != c->daemon)
            continue;
        snprintf(ids[n].uuid, sizeof(ids[n].uuid), "%s", fd->uuid);
        snprintf(ids[n].name, sizeof(ids[n].name), "%s", fd->name);
        ids[n++].id = fd->id;
    }
    pthread_mutex_unlock(&fh.lock);
    *ret = ids;
    *ret_n = n;
    return 0;
}

int fake_conn_dom_open(virt_conn *vc, const char *uuid, virt_dom **ret)
{
    fake_conn *c = (fake_conn *)vc;
    fake_handle *h = NULL;
    fake_dom *found = NULL;

    pthread_mutex_lock(&fh.lock);
    fake_daemon_wait(c->daemon);
    for (unsigned i = 0; i < FAKE_MAX_DOMS && !found; i++) {
        fake_dom *fd = &fh.doms[i];
        if (fd->used && fd->daemon == c->daemon && strcmp(fd->uuid, uuid) == 0)
            found = fd;
    }
    if (found)
        found->calls[FAKE_LOOKUP]++;
    if (found && !conn_alive(c)) {
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: no connection to libvirtd");
        return -ENOTCONN;
    }
    if (found && (h = calloc(1, sizeof(*h)))) {
        h->fd = found;
        h->conn = c;
        h->gen = c->gen;
    }
    pthread_mutex_unlock(&fh.lock);
    if (!found) {
        fake_set_error("fake: no domain with uuid %s", uuid);
        return -ESRCH;
    }
    if (!h)
        return -ENOMEM;
    *ret = (virt_dom *)h;
    return 0;
}
