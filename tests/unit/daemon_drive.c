/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Driving vnumad's daemon on the fake host, for the whole-pass tests (daemon_drive.h). */
#include "daemon_drive.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "domains.h"
#include "loop.h"
#include "metadata.h"
#include "mover.h"

#define WAIT_S 120.0 /* real seconds: only says "it never happened" */

daemon_host host;
vnumad dm;
char config_path[256];

/* ---- driving the loop ---- */

static double real_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_wake(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

/* Runs vnumad's loop until cond(arg); false when it never came. */
bool run_until(bool (*cond)(void *), void *arg)
{
    double end = real_now() + WAIT_S;
    int t = loop_add_timer(5, on_wake, NULL);

    while (!cond(arg) && real_now() < end)
        if (loop_run_once() < 0)
            break;
    loop_remove_timer(t);
    return cond(arg);
}

/* nothing out: no event's read, no pass running or due, no work of a pass, no domain held
 * (a record's write is out with its domain held) */
bool settled(void *arg)
{
    (void)arg;
    mover_stats ms;

    if (dm.nr_considering || dm.in_pass || dm.waiting || dm.pass_again || dm.pass_due)
        return false;
    mover_get_stats(dm.movers, &ms);
    if (ms.orders || ms.in_flight) /* memory still moving */
        return false;
    for (size_t i = 0; i < dm.nr_doms; i++)
        if (dm.doms[i]->busy && !dm.doms[i]->hung_since_s) /* (one not answering stays held) */
            return false;
    return true;
}

bool events_read(void *arg)
{
    (void)arg;
    return fake_events_queued() == 0;
}

bool first_pass_done(void *arg)
{
    (void)arg;
    return dm.pass >= 1 && settled(NULL);
}

/* One pass as the timer runs it, an interval after the last (the busy fractions are measured
 * over it), and the loop until everything it started is in. */
void pass_after(double s)
{
    fake_clock_advance(s);
    daemon_pass_now(&dm);
    (void)run_until(settled, NULL);
}

void pass(void)
{
    pass_after(5.0);
}

void arrive_migrated(fake_dom *a)
{
    fake_dom_set_job(a, true); /* the incoming migration: libvirt's job on the domain */
    fake_event_lifecycle(a, VIRT_EVENT_STARTED, true);
    (void)run_until(settled, NULL);
    fake_dom_set_job(a, false);
    fake_event_lifecycle(a, VIRT_EVENT_RESUMED, true);
    (void)run_until(settled, NULL);
}

void start(const daemon_config *cfg)
{
    if (daemon_start(&dm, cfg, config_path[0] ? config_path : NULL, &host) < 0)
        abort();
}

void stop_vnumad(void)
{
    daemon_stop(&dm);
}

void stop(void)
{
    stop_vnumad();
    fake_host_reset();
    config_path[0] = '\0';
}

/* ---- what vnumad did ---- */

bool is_tracked(void *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) && domains_find(&dm, uuid);
}

bool not_tracked(void *fd)
{
    return !is_tracked(fd);
}

/* every vCPU pinned inside one node of the fake host (0-1 or 2-3), all on the same one */
bool pinned_to_one_node(void *arg)
{
    fake_dom *fd = arg;
    char first[32], buf[32];

    fake_dom_pin(fd, 0, first, sizeof(first));
    if (strcmp(first, "0-1") != 0 && strcmp(first, "2-3") != 0)
        return false;
    for (unsigned v = 1; v < fake_dom_nr_vcpus(fd); v++)
        if (strcmp(fake_dom_pin(fd, v, buf, sizeof(buf)), first) != 0)
            return false;
    return true;
}

bool all_pins_are(fake_dom *fd, const char *cpus)
{
    char buf[32];

    for (unsigned v = 0; v < fake_dom_nr_vcpus(fd); v++)
        if (strcmp(fake_dom_pin(fd, v, buf, sizeof(buf)), cpus) != 0)
            return false;
    return true;
}

/* The last <decision> vnumad wrote into the domain's <state>: its "action" (and "reason"). */
bool last_decision(fake_dom *fd, char *action, size_t alen, char *reason, size_t rlen)
{
    char *state = fake_dom_state(fd), *start, *end;
    json_object *o, *v;
    bool ok = false;

    action[0] = reason[0] = '\0';
    if (!state || !(start = strstr(state, "<decision")) || !(start = strchr(start, '>')) ||
        !(end = strstr(++start, "</decision>"))) {
        free(state);
        return false;
    }
    *end = '\0';
    o = json_tokener_parse(start);
    if (o && json_object_object_get_ex(o, "action", &v)) {
        snprintf(action, alen, "%s", json_object_get_string(v));
        if (json_object_object_get_ex(o, "reason", &v))
            snprintf(reason, rlen, "%s", json_object_get_string(v));
        ok = true;
    }
    json_object_put(o);
    free(state);
    return ok;
}

/* The originals in the domain's <state> into *out (saved false: none). */
void state_originals(fake_dom *fd, dom_originals *out)
{
    char *state = fake_dom_state(fd);

    memset(out, 0, sizeof(*out));
    if (state)
        (void)meta_parse_state(state, out);
    free(state);
}

/* The domain's <state> holds originals (1 MiB: read off the stack). */
bool state_has_originals(fake_dom *fd)
{
    dom_originals *o = malloc(sizeof(*o));
    bool saved;

    if (!o)
        return false;
    state_originals(fd, o);
    saved = o->saved;
    free(o);
    return saved;
}

bool decision_restored(void *fd)
{
    char action[32], reason[64];

    return last_decision(fd, action, sizeof(action), reason, sizeof(reason)) &&
           strcmp(action, "restored") == 0;
}

const char *const AUTO = "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"auto\"/>";

/* ---- vnumactl ---- */

static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ctl_sent = PTHREAD_COND_INITIALIZER;

static void ctl_mark_sent(ctl_call *c)
{
    pthread_mutex_lock(&ctl_lock);
    c->sent = true;
    pthread_cond_broadcast(&ctl_sent);
    pthread_mutex_unlock(&ctl_lock);
}

/* vnumactl's side: one request line, the reply until the server closes */
static void *ctl_thread(void *arg)
{
    ctl_call *c = arg;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    size_t len = 0;
    ssize_t n;
    bool sent;

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", dm.cfg.socket_path);
    sent = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
           write(fd, c->request, strlen(c->request)) == (ssize_t)strlen(c->request);
    ctl_mark_sent(c);
    while (sent && len + 1 < sizeof(c->reply) &&
           (n = read(fd, c->reply + len, sizeof(c->reply) - len - 1)) > 0)
        len += (size_t)n;
    c->reply[len] = '\0';
    if (fd >= 0)
        close(fd);
    atomic_store(&c->done, true);
    return NULL;
}

void ctl_begin(ctl_call *c, pthread_t *t)
{
    struct timespec end;

    c->sent = false;
    atomic_store(&c->done, false);
    if (pthread_create(t, NULL, ctl_thread, c) != 0)
        abort();
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += (time_t)WAIT_S;
    pthread_mutex_lock(&ctl_lock);
    while (!c->sent && pthread_cond_timedwait(&ctl_sent, &ctl_lock, &end) == 0)
        ;
    pthread_mutex_unlock(&ctl_lock);
}

bool ctl_done(void *arg)
{
    return atomic_load(&((ctl_call *)arg)->done);
}

bool ctl(const char *request, char *reply, size_t len)
{
    ctl_call c = {0};
    pthread_t t;
    bool ok;

    snprintf(c.request, sizeof(c.request), "%s\n", request);
    ctl_begin(&c, &t);
    ok = run_until(ctl_done, &c);
    pthread_join(t, NULL);
    snprintf(reply, len, "%s", c.reply);
    return ok;
}
