/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's libvirt connections (host/conns.h): made from the uri lines and their socket
 * globs, opened (on the workers but at start), reopened with backoff when lost, dropped when
 * their socket goes. One timer serves them all: the next open due, and the next scan of the
 * globs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "conns.h"
#include "domains_conns.h"
#include "log.h"
#include "loop.h"
#include "util.h"
#include "workers.h"

#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 30.0

static virt_callbacks conn_events; /* the daemon's handlers (opaque: each connection's slot) */

static void arm(vnumad *dm);

/* ---- opening ---- */

typedef struct open_work {
    work w;
    conn_slot *cs;
    char uri[CONN_URI_MAX];
    bool relist; /* a list of the open connection's domains only (conns_relist) */
    virt_conn *conn;
    int r;
    char err[256];
    virt_dom_id *ids;
    size_t n;
} open_work;

static void open_run(work *w)
{
    open_work *ow = (open_work *)w;
    virt_callbacks cb = conn_events;

    cb.opaque = ow->cs; /* (the slot stays while it opens: conns.h) */
    if (ow->relist) {
        if ((ow->r = virt_list_running(ow->conn, &ow->ids, &ow->n)) < 0)
            snprintf(ow->err, sizeof(ow->err), "%s", virt_last_error());
        return;
    }
    ow->r = virt_open(ow->uri, &cb, &ow->conn);
    if (ow->r == 0 && (ow->r = virt_list_running(ow->conn, &ow->ids, &ow->n)) < 0) {
        snprintf(ow->err, sizeof(ow->err), "cannot list its domains: %s", virt_last_error());
        virt_close(ow->conn);
        ow->conn = NULL;
    } else if (ow->r < 0) {
        snprintf(ow->err, sizeof(ow->err), "%s", virt_last_error());
    }
}

static void opened(vnumad *dm, conn_slot *cs, open_work *ow, bool now)
{
    if (ow->r < 0) {
        dm->stats.errors[METRICS_ERR_CONNECT]++;
        if (cs->failures++ == 0 || cs->backoff_s >= BACKOFF_MAX_S / 2)
            log_warn("Cannot connect to %s: %s; retrying in %.0f s", cs->m.uri, ow->err,
                     cs->backoff_s);
        cs->retry_at = vn_mono_s() + cs->backoff_s;
        cs->backoff_s = VN_MIN(BACKOFF_MAX_S, cs->backoff_s * 2);
        return;
    }
    cs->conn = ow->conn;
    cs->connected = true;
    cs->backoff_s = BACKOFF_MIN_S;
    cs->failures = 0;
    cs->retry_at = 0;
    log_info("Connected to %s", cs->m.uri);
    domains_conn_up(dm, cs, ow->ids, ow->n, now);
    /* every running domain was read (or is being read): the pass (and the CPU time window of
     * each domain new to vnumad) begins at once; event_delay batches a storm of later events,
     * and there is none to wait for here */
    dm->pass_due = true;
    loop_update_timer(dm->soon_timer, 0);
}

static void open_done(work *w, bool late)
{
    open_work *ow = (open_work *)w;
    conn_slot *cs = ow->cs;
    vnumad *dm = cs->dm;

    (void)late;
    if (ow->relist) {
        if (ow->r < 0)
            log_warn("Failed to list the domains of %s: %s", cs->m.uri, ow->err);
        else if (!dm->quit && cs->connected)
            domains_conn_up(dm, cs, ow->ids, ow->n, false);
        conns_unuse(cs);
        free(ow->ids);
        free(ow);
        return;
    }
    cs->opening = false;
    if (dm->quit || cs->gone) {
        virt_close(ow->conn);
    } else {
        opened(dm, cs, ow, false);
    }
    free(ow->ids);
    free(ow);
    arm(dm);
}

/* On a worker (or now, on the loop: at start, the plain uri lines). */
static void open_slot(vnumad *dm, conn_slot *cs, bool now)
{
    open_work *ow = calloc(1, sizeof(*ow));

    if (!ow)
        return;
    ow->w = (work){.run = open_run, .done = open_done};
    ow->cs = cs;
    snprintf(ow->uri, sizeof(ow->uri), "%s", cs->m.uri);
    cs->retry_at = 0;
    if (now) {
        open_run(&ow->w);
        opened(dm, cs, ow, true);
        free(ow->ids);
        free(ow);
        return;
    }
    cs->opening = true;
    workers_submit(dm->pool, &ow->w);
}

/* ---- the slots ---- */

static conn_slot *slot_new(vnumad *dm, unsigned line, const conn_match *m)
{
    conn_slot *cs;

    if (dm->nr_conns >= CONNS_MAX) {
        log_warn("Not connecting to %s: %u connections already", m->uri, CONNS_MAX);
        return NULL;
    }
    cs = calloc(1, sizeof(*cs));
    if (!cs)
        return NULL;
    cs->id = ++dm->next_conn_id;
    cs->line = line;
    cs->m = *m;
    cs->backoff_s = BACKOFF_MIN_S;
    cs->retry_at = vn_mono_s(); /* its open is due (the timer's) */
    cs->dm = dm;
    dm->conns[dm->nr_conns++] = cs;
    return cs;
}

static void close_slot(vnumad *dm, conn_slot *cs)
{
    domains_conn_down(dm, cs);
    virt_close(cs->conn);
    cs->conn = NULL;
    cs->connected = false;
}

static void slot_free(vnumad *dm, unsigned i)
{
    conn_slot *cs = dm->conns[i];

    domains_conn_gone(dm, cs);
    close_slot(dm, cs);
    log_info("Dropped the connection to %s: its socket is gone", cs->m.uri);
    dm->conns[i] = dm->conns[--dm->nr_conns];
    free(cs);
}

/* Whether a glob's match is a connection already (the same socket file). */
static conn_slot *slot_of(vnumad *dm, const conn_match *m)
{
    for (unsigned i = 0; i < dm->nr_conns; i++) {
        conn_slot *cs = dm->conns[i];
        if (m->ino ? cs->m.dev == m->dev && cs->m.ino == m->ino : !strcmp(cs->m.uri, m->uri))
            return cs;
    }
    return NULL;
}

/* The globs looked through: a new socket is a new connection, one gone is dropped. */
static void scan(vnumad *dm)
{
    static conn_match found[CONNS_MAX];
    bool seen[CONNS_MAX] = {false};
    unsigned nf = 0;

    dm->conns_scanned_s = vn_mono_s();
    for (unsigned l = 0; l < dm->cfg.nr_uris; l++) {
        if (!conn_uri_is_pattern(dm->cfg.uris[l]))
            continue;
        int n = conn_uri_expand(dm->cfg.uris[l], found, CONNS_MAX);
        if (n < 0) {
            log_warn("Cannot look for the sockets of %s: %s", dm->cfg.uris[l], strerror(-n));
            for (unsigned i = 0; i < dm->nr_conns; i++) /* none is dropped for it */
                seen[i] |= dm->conns[i]->line == l;
            continue;
        }
        for (int k = 0; k < n; k++) {
            conn_slot *cs = slot_of(dm, &found[k]);
            if (!cs && (cs = slot_new(dm, l, &found[k])))
                log_info("Found libvirt socket %s (connection %s)", cs->m.socket, cs->m.label);
            for (unsigned i = 0; cs && i < dm->nr_conns; i++)
                seen[i] |= dm->conns[i] == cs;
        }
        nf += (unsigned)n;
    }
    for (unsigned i = 0; i < dm->nr_conns; i++)
        if (!seen[i] && conn_uri_is_pattern(dm->cfg.uris[dm->conns[i]->line]))
            dm->conns[i]->gone = true;
    (void)nf;
}

/* Whether a work still holds one of the connection's domains (its handle is in use). */
static bool domains_busy(const vnumad *dm, const conn_slot *cs)
{
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (dm->doms[i]->conn_id == cs->id && dm->doms[i]->busy)
            return true;
    return false;
}

/* The connections' work: drop what went, close what was lost, open what is due; then the
 * timer set for the next. */
static void service(vnumad *dm)
{
    double now = vn_mono_s();

    if (dm->quit)
        return;
    if (conns_many(dm) && now >= dm->conns_scanned_s + dm->cfg.scan_interval_s)
        scan(dm);
    for (unsigned i = 0; i < dm->nr_conns;) {
        conn_slot *cs = dm->conns[i];
        bool idle = !cs->users && !cs->opening && !dm->in_pass;
        if (cs->gone && idle && !domains_busy(dm, cs)) {
            slot_free(dm, i);
            continue;
        }
        if (!cs->connected && cs->conn && idle) { /* lost: closed, then opened again */
            close_slot(dm, cs);
            cs->retry_at = now;
        }
        if (!cs->gone && !cs->conn && !cs->opening && cs->retry_at && now >= cs->retry_at)
            open_slot(dm, cs, false);
        i++;
    }
}

static void on_timer(int timer, void *opaque)
{
    (void)timer;
    service(opaque);
    arm(opaque);
}

static void arm(vnumad *dm)
{
    double now = vn_mono_s(), next = -1;

    if (dm->conns_timer < 0)
        return;
    if (conns_many(dm))
        next = dm->conns_scanned_s + dm->cfg.scan_interval_s;
    for (unsigned i = 0; i < dm->nr_conns; i++) {
        const conn_slot *cs = dm->conns[i];
        double at = -1;
        if (cs->opening)
            continue;
        bool waits = cs->users || dm->in_pass || domains_busy(dm, cs);
        if (cs->gone || (!cs->connected && cs->conn))
            at = now + (waits ? 0.2 : 0); /* once nothing uses it */
        else if (!cs->conn && cs->retry_at)
            at = cs->retry_at;
        if (at >= 0 && (next < 0 || at < next))
            next = at;
    }
    loop_update_timer(dm->conns_timer, next < 0 ? -1 : (int)(VN_MAX(0, next - now) * 1000));
}

void conns_lost(conn_slot *cs)
{
    vnumad *dm = cs->dm;

    if (!cs->connected)
        return;
    dm->stats.errors[METRICS_ERR_CONNECTION_LOST]++;
    log_warn("Lost the connection to libvirt (%s); reconnecting", cs->m.uri);
    cs->connected = false;
    cs->backoff_s = BACKOFF_MIN_S;
    /* closing from inside libvirt's callback is not allowed: the timer does it */
    loop_update_timer(dm->conns_timer, 0);
}

void conns_relist(vnumad *dm)
{
    for (unsigned i = 0; i < dm->nr_conns; i++) {
        conn_slot *cs = dm->conns[i];
        open_work *ow;
        if (!cs->connected || !(ow = calloc(1, sizeof(*ow))))
            continue;
        ow->w = (work){.run = open_run, .done = open_done};
        ow->cs = cs;
        ow->relist = true;
        ow->conn = cs->conn;
        conns_use(cs);
        workers_submit(dm->pool, &ow->w);
    }
}

void conns_scan_now(vnumad *dm)
{
    if (conns_many(dm))
        dm->conns_scanned_s = vn_mono_s() - dm->cfg.scan_interval_s;
    loop_update_timer(dm->conns_timer, 0);
}

int conns_start(vnumad *dm, const virt_callbacks *events)
{
    conn_match m;

    conn_events = *events;
    dm->conns_timer = loop_add_timer(-1, on_timer, dm);
    if (dm->conns_timer < 0)
        return -EIO;
    for (unsigned l = 0; l < dm->cfg.nr_uris; l++) {
        if (conn_uri_is_pattern(dm->cfg.uris[l]))
            continue;
        if (conn_uri_expand(dm->cfg.uris[l], &m, 1) == 1) {
            conn_slot *cs = slot_new(dm, l, &m);
            /* one connection: opened before the first pass; of several, each on a worker (one
             * whose daemon does not answer would hold the loop and every line after it) */
            if (cs)
                open_slot(dm, cs, !conns_many(dm));
        }
    }
    if (conns_many(dm))
        scan(dm); /* (the globs' sockets: opened on the workers, when the timer runs) */
    arm(dm);
    return 0;
}

void conns_stop(vnumad *dm)
{
    for (unsigned i = 0; i < dm->nr_conns; i++) {
        conn_slot *cs = dm->conns[i];
        if (cs->users || cs->opening) /* a worker still waits in a call on it */
            continue;
        close_slot(dm, cs);
        free(cs);
    }
    dm->nr_conns = 0;
    if (dm->conns_timer >= 0)
        loop_remove_timer(dm->conns_timer);
    dm->conns_timer = -1;
}
