/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A snapshot of the live host for the dry run (live_snapshot.h). */
#include "live_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "conntab.h"
#include "core.h"
#include "domains.h"
#include "hostload.h"
#include "log.h"
#include "sample.h"
#include "snapshot.h"
#include "snapshot_write.h"
#include "util.h"
#include "virt.h"
#include "workers.h"

/* One domain being read: its sampling cache is its own, never a tracked domain's. */
typedef struct snap_one {
    virt_dom *d;
    char name[SNAP_NAME_MAX];
    char uuid[SNAP_UUID_MAX];
    vn_balancer cfg; /* a tracked domain's; else mode advise: what vnumad would do */
    unsigned age_passes;
    int preferred_node;
    int last_candidate[SNAP_MAX_CELLS_PER_DOMAIN];
    dom_sample_cache sc;
    dom_counters count;
    snap_domain sd;
    bool ok;
    char err[STATE_ERROR_MAX];
} snap_one;

typedef struct snap_work {
    work w;
    vnumad *dm;
    control_reply *reply; /* NULL once answered */
    snap_one *one;
    size_t n;
    snapshot s;      /* the nodes' free memory (the last pass's), then the domains */
    host_load *load; /* /proc/stat when the window opened and when it closed */
} snap_work;

static void one_clear(snap_one *o)
{
    virt_dom_free(o->d);
    free(o->sc.xml);
    free(o->sc.qv);
    snap_domain_clear(&o->sd);
}

static void work_free(snap_work *sw)
{
    for (size_t i = 0; i < sw->n; i++)
        one_clear(&sw->one[i]);
    free(sw->one);
    free(sw->load);
    snapshot_clear(&sw->s);
    free(sw);
}

static sample_input input_of(const snap_one *o)
{
    return (sample_input){.name = o->name,
                          .uuid = o->uuid,
                          .cfg = &o->cfg,
                          .age_passes = o->age_passes,
                          .preferred_node = o->preferred_node,
                          .last_candidate = o->last_candidate};
}

/* On a worker: the first reading of every domain, the window, the second. */
static void snap_run(work *w)
{
    snap_work *sw = (snap_work *)w;
    vnumad *dm = sw->dm;
    sample_host h = {.t = dm->topo,
                     .ops = dm->numa,
                     .root = dm->root,
                     .use_qmp = false, /* never a monitor command (sample_monitor_ok) */
                     .one_off = true,
                     .poll_from = dm->cfg.decide.busy_threshold};
    double opened = vn_mono_s(), left;

    if (hostload_read(dm->root, &sw->load[0]) < 0)
        sw->load[0].valid = false;
    for (size_t i = 0; i < sw->n; i++) {
        snap_one *o = &sw->one[i];
        sample_input in = input_of(o);
        o->ok = sample_open_window(o->d, &h, &in, &o->sc, &o->count, vn_mono_s(), o->err,
                                   sizeof(o->err)) == 0;
    }
    left = opened + SAMPLE_MIN_WINDOW_S - vn_mono_s();
    if (left > 0 && !vn_clock_skip(left)) {
        struct timespec ts = {.tv_sec = (time_t)left,
                              .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
            ;
    }
    if (hostload_read(dm->root, &sw->load[1]) < 0)
        sw->load[1].valid = false;
    for (size_t i = 0; i < sw->n; i++) {
        snap_one *o = &sw->one[i];
        sample_input in = input_of(o);
        if (o->ok)
            o->ok = sample_domain(o->d, &h, &in, &o->sc, &o->count, vn_mono_s(), &o->sd, o->err,
                                  sizeof(o->err)) == 0;
    }
}

/* The vCPUs of each cell per host node they last ran on, its busy vCPUs and memory per node:
 * the per-VM view (vnumactl snapshot --table). */
static struct json_object *view_of(const topology *t, const snap_one *o)
{
    struct json_object *d = json_object_new_object(), *cells = json_object_new_array();
    char key[16];

    json_object_object_add(d, "name", json_object_new_string(o->name));
    json_object_object_add(d, "mode", json_object_new_string(mode_name(o->cfg.mode)));
    json_object_object_add(d, "memory_error",
                           o->sc.ram_error[0] ? json_object_new_string(o->sc.ram_error) : NULL);
    for (unsigned c = 0; cells && c < o->sd.nr_cells; c++) {
        const snap_cell *cell = &o->sd.cells[c];
        struct json_object *x = json_object_new_object(), *vc = json_object_new_object(),
                           *mem = json_object_new_object();
        double busy = 0;

        for (unsigned n = 0; n < t->nr_nodes; n++) {
            unsigned on = 0;
            snprintf(key, sizeof(key), "%u", t->nodes[n].os_index);
            for (unsigned v = 0; v < cell->nr_vcpus; v++)
                on += cell->vcpus[v].cpu >= 0 &&
                      cpuset_isset(&t->nodes[n].cpus, (unsigned)cell->vcpus[v].cpu);
            if (on)
                json_object_object_add(vc, key, json_object_new_int((int)on));
            if (cell->pages[n])
                json_object_object_add(mem, key,
                                       json_object_new_uint64(cell->pages[n] * cell->page_size));
        }
        for (unsigned v = 0; v < cell->nr_vcpus; v++)
            busy += cell->vcpus[v].busy;
        json_object_object_add(x, "cell", json_object_new_int((int)cell->id));
        json_object_object_add(x, "nr_vcpus", json_object_new_int((int)cell->nr_vcpus));
        json_object_object_add(x, "busy", json_object_new_double(busy));
        json_object_object_add(x, "vcpus", vc);
        json_object_object_add(x, "memory", mem);
        json_object_array_add(cells, x);
    }
    json_object_object_add(d, "cells", cells);
    return d;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const snap_domain *)a)->name, ((const snap_domain *)b)->name);
}

/*
 * Whether the domain, written alone as a snapshot, reads back: what vnumad reads of a host may
 * fall outside what a snapshot allows (a vCPU pinned to CPUs this vnumad may not use, a cgroup
 * that leaves a vCPU none of them), and one such domain would make the whole file refused by
 * vnumad --advise. Such a domain is left out with the parser's reason (in o->err).
 */
static bool readable(const topology *t, snap_one *o)
{
    snapshot one = {.nr_domains = 1, .domains = &o->sd};
    _cleanup_(snapshot_clear) snapshot back = {0};
    struct json_object *j = snapshot_write(t, &one);
    const char *text = j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : NULL;
    char err[STATE_ERROR_MAX] = "out of memory";
    int r = text ? snap_parse(text, strlen(text), "domain", t, &back, err, sizeof(err)) : -ENOMEM;

    json_object_put(j);
    if (r < 0)
        snprintf(o->err, sizeof(o->err), "not a valid snapshot entry: %.200s", err);
    return r == 0;
}

/* On the loop: the reply. */
static void snap_done(work *w, bool late)
{
    snap_work *sw = (snap_work *)w;
    const topology *t = sw->dm->topo;
    struct json_object *result = json_object_new_object(), *left_out = json_object_new_array(),
                       *view = json_object_new_array(), *snap = NULL;
    unsigned nr = 0;

    (void)late;
    if (!sw->reply || !result || !left_out || !view)
        goto out;
    sw->s.domains = calloc(sw->n ? sw->n : 1, sizeof(*sw->s.domains));
    if (!sw->s.domains)
        goto out;
    for (size_t i = 0; i < sw->n; i++) {
        snap_one *o = &sw->one[i];
        if (o->ok && !readable(t, o))
            o->ok = false;
        if (!o->ok) {
            struct json_object *x = json_object_new_object();
            json_object_object_add(x, "name", json_object_new_string(o->name));
            json_object_object_add(x, "reason", json_object_new_string(o->err));
            json_object_array_add(left_out, x);
            continue;
        }
        json_object_array_add(view, view_of(t, o));
        sw->s.domains[nr++] = o->sd;
        memset(&o->sd, 0, sizeof(o->sd)); /* the snapshot owns it now */
    }
    sw->s.nr_domains = nr;
    qsort(sw->s.domains, nr, sizeof(*sw->s.domains), by_name);
    hostload_other_busy(t, &sw->load[0], &sw->load[1], &sw->s);
    snap = snapshot_write(t, &sw->s);
    if (!snap)
        goto out;
    json_object_object_add(result, "snapshot", snap);
    json_object_object_add(result, "view", view);
    json_object_object_add(result, "left_out", left_out);
    log_info("Snapshot of the live host for vnumactl: %u domain(s), %zu left out", nr,
             json_object_array_length(left_out));
    control_reply_done(sw->reply, 0, result, "", "");
    work_free(sw);
    return;
out:
    json_object_put(result);
    json_object_put(left_out);
    json_object_put(view);
    if (sw->reply)
        control_reply_done(sw->reply, -ENOMEM, NULL, "Internal", "out of memory");
    work_free(sw);
}

static void snap_late(work *w)
{
    snap_work *sw = (snap_work *)w;

    control_reply_done(sw->reply, -EBUSY, NULL, "Busy",
                       "reading the domains took longer than domain_timeout (a domain does not "
                       "answer)");
    sw->reply = NULL;
}

/* The running domains of every connection up, each with its connection (*ret_on[i]): 0, or
 * -ENOTCONN (none up), -EIO (one refused), -ENOMEM. */
static int list_all(vnumad *dm, virt_dom_id **ret, virt_conn ***ret_on, size_t *ret_n)
{
    virt_dom_id *all = NULL;
    virt_conn **on = NULL;
    size_t n = 0;
    bool any = false;

    for (unsigned c = 0; c < dm->nr_conns; c++) {
        virt_dom_id *ids = NULL, *a;
        virt_conn **o;
        size_t k = 0;
        if (!dm->conns[c]->connected)
            continue;
        any = true;
        if (virt_list_running(dm->conns[c]->conn, &ids, &k) < 0) {
            free(all);
            free(on);
            return -EIO;
        }
        a = realloc(all, (n + k + 1) * sizeof(*all));
        if (a)
            all = a;
        o = a ? realloc(on, (n + k + 1) * sizeof(*on)) : NULL;
        if (o)
            on = o;
        if (!a || !o) {
            free(ids);
            free(all);
            free(on);
            return -ENOMEM;
        }
        for (size_t i = 0; i < k; i++) {
            all[n] = ids[i];
            on[n++] = dm->conns[c]->conn;
        }
        free(ids);
    }
    if (!any) {
        free(all);
        free(on);
        return -ENOTCONN;
    }
    *ret = all;
    *ret_on = on;
    *ret_n = n;
    return 0;
}

/* What vnumad knows of a tracked domain: its balancer and rule 3's history; a domain it does
 * not track is written in mode advise (what vnumad would do were it opted in). */
static void one_init(vnumad *dm, snap_one *o, const virt_dom_id *id)
{
    dom_state *st = domains_find(dm, id->uuid);

    snprintf(o->name, sizeof(o->name), "%s", id->name);
    snprintf(o->uuid, sizeof(o->uuid), "%s", id->uuid);
    o->cfg = (vn_balancer){.mode = VN_MODE_ADVISE, .valid = true};
    o->preferred_node = -1;
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        o->last_candidate[k] = -1;
    if (st && st->cfg.valid) {
        o->cfg = st->cfg;
        o->age_passes = st->age_passes;
        o->preferred_node = st->preferred_node;
        memcpy(o->last_candidate, st->last_candidate, sizeof(o->last_candidate));
    }
    sample_cache_init(&o->sc);
}

int live_snapshot_command(void *opaque, const control_request *req, struct json_object **ret,
                          char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    virt_dom_id *ids = NULL;
    virt_conn **on = NULL;
    size_t n = 0;
    snap_work *sw;
    int r = list_all(dm, &ids, &on, &n);

    (void)ret;
    if (r < 0) {
        snprintf(errclass, classlen, "Internal");
        snprintf(err, errlen, "cannot list the running domains: libvirt %s",
                 r == -ENOTCONN ? "is not connected" : "refused");
        return -EIO;
    }
    n = VN_MIN(n, (size_t)SNAP_MAX_DOMAINS);
    sw = calloc(1, sizeof(*sw));
    if (!sw || !(sw->one = calloc(n ? n : 1, sizeof(*sw->one))) ||
        !(sw->load = calloc(2, sizeof(*sw->load)))) {
        if (sw)
            work_free(sw);
        free(ids);
        free(on);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        snap_one *o = &sw->one[sw->n];
        one_init(dm, o, &ids[i]);
        if (virt_dom_open(on[i], ids[i].uuid, &o->d) < 0)
            continue; /* gone since the list */
        sw->n++;
    }
    free(ids);
    free(on);
    for (unsigned k = 0; k < dm->topo->nr_nodes; k++) {
        const topo_node *tn = &dm->topo->nodes[k];
        sw->s.free_known[k] = tn->mem_free_known;
        /* never above what hwloc said the node has (memory onlined since: the format's bound) */
        sw->s.free_bytes[k] = tn->mem_free_known ? VN_MIN(tn->mem_free, tn->mem_total) : 0;
        memcpy(sw->s.free_huge[k], tn->huge, sizeof(tn->huge));
    }
    sw->s.pass = dm->pass;
    sw->dm = dm;
    sw->w = (work){.run = snap_run, .done = snap_done, .on_late = snap_late};
    sw->reply = control_defer(req);
    workers_submit(dm->pool, &sw->w);
    return CONTROL_DEFERRED;
}
