/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The answers to vnumactl's commands (status, decisions, explain, advise, pause, resume,
 * metrics, and the test holds: hold, release, holds), served by host/control.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "commands.h"
#include "conntab.h"
#include "control.h"
#include "core.h"
#include "decide.h"
#include "domains.h"
#include "heap.h"
#include "holds.h"
#include "live_snapshot.h"
#include "log.h"
#include "mover.h"
#include "place.h"
#include "publish.h"
#include "record.h"
#include "rules.h"
#include "sample.h"
#include "snapshot.h"
#include "util.h"
#include "workers.h"

static int no_domain(const char *name, char *errclass, size_t classlen, char *err, size_t errlen)
{
    snprintf(errclass, classlen, "NoSuchDomain");
    snprintf(err, errlen, "no opted-in domain named '%s'", name);
    return -ENOENT;
}

static struct json_object *nodes_obj(const topology *t, const uint64_t *mem, const uint16_t *vc,
                                     bool is_mem)
{
    struct json_object *o = json_object_new_object();
    char key[16];

    /* the nodes the cell has memory or vCPUs on: a host of 1024 nodes would otherwise list
     * 1024 zeros per cell */
    for (unsigned n = 0; o && n < t->nr_nodes; n++) {
        if (!mem[n] && !vc[n])
            continue;
        snprintf(key, sizeof(key), "%u", t->nodes[n].os_index);
        json_object_object_add(
            o, key, is_mem ? json_object_new_uint64(mem[n]) : json_object_new_int(vc[n]));
    }
    return o;
}

/* What the latest decision record says of guest cell `cell` (vnumactl top): its busy vCPUs,
 * the decision (reason), for a wide cell the nodes it spans, for a cell on two tiers why and
 * how much of its hot set is home. */
static void cell_last(const topology *t, struct json_object *c, const dom_state *st, unsigned cell,
                      const vn_nodeset *span)
{
    const record_decision *r = st->publish.last_record;

    if (!nodeset_empty(span))
        json_object_object_add(c, "span_nodes", record_node_list(t, span));
    for (unsigned k = 0; r && k < r->nr_cells; k++) {
        if (r->cells[k].cell != cell)
            continue;
        json_object_object_add(
            c, "busy_vcpus",
            r->cells[k].busy_vcpus >= 0 ? json_object_new_int(r->cells[k].busy_vcpus) : NULL);
        json_object_object_add(c, "reason",
                               json_object_new_string(reason_name(r->cells[k].reason)));
        const plan_tier *tr = &r->cells[k].tier;
        if (tr->why != TIER_WHY_NONE) {
            struct json_object *o = json_object_new_object();
            json_object_object_add(o, "why", json_object_new_string(tier_why_name(tr->why)));
            json_object_object_add(
                o, "lower_node",
                r->cells[k].lower_tier >= 0 && (unsigned)r->cells[k].lower_tier < t->nr_nodes
                    ? json_object_new_int((int)t->nodes[r->cells[k].lower_tier].os_index)
                    : NULL);
            json_object_object_add(o, "hot_bytes", json_object_new_uint64(tr->hot));
            json_object_object_add(o, "hot_home_bytes", json_object_new_uint64(tr->hot_home));
            json_object_object_add(c, "tier", o);
        }
        return;
    }
}

/* The latest decision record's gist: when, what and why (vnumactl top's last column). */
static struct json_object *last_decision(const dom_state *st)
{
    const record_decision *r = st->publish.last_record;
    struct json_object *o;

    if (!r)
        return NULL;
    o = json_object_new_object();
    json_object_object_add(o, "pass", json_object_new_uint64(r->pass));
    json_object_object_add(o, "time", json_object_new_string(r->time));
    json_object_object_add(o, "action", json_object_new_string(r->action));
    json_object_object_add(o, "reason", json_object_new_string(r->reason));
    json_object_object_add(o, "error", r->has_error ? json_object_new_string(r->error) : NULL);
    json_object_object_add(o, "bytes_moved", json_object_new_uint64(r->bytes_moved));
    return o;
}

/* Each libvirt connection: its URI, label, whether it is up and how many domains it has. */
static struct json_object *status_connections(vnumad *dm)
{
    struct json_object *a = json_object_new_array();

    for (unsigned i = 0; i < dm->nr_conns; i++) {
        const conn_slot *cs = dm->conns[i];
        struct json_object *c = json_object_new_object();
        unsigned n = 0;
        for (size_t k = 0; k < dm->nr_doms; k++)
            n += dm->doms[k]->conn_id == cs->id;
        json_object_object_add(c, "uri", json_object_new_string(cs->m.uri));
        json_object_object_add(c, "label", json_object_new_string(cs->m.label));
        json_object_object_add(c, "connected", json_object_new_boolean(cs->connected));
        json_object_object_add(c, "domains", json_object_new_int((int)n));
        json_object_array_add(a, c);
    }
    return a;
}

static struct json_object *status_domain(vnumad *dm, const dom_state *st)
{
    struct json_object *o = json_object_new_object(), *cells = json_object_new_array();
    struct json_object *agent = json_object_new_object(), *cnt = json_object_new_object();
    const char *state = !st->cfg.valid        ? "invalid-config"
                        : st->permanent_error ? "error"
                        : st->id < 0          ? "stopped"
                                              : "ok";

    json_object_object_add(o, "name", json_object_new_string(st->name));
    json_object_object_add(o, "uuid", json_object_new_string(st->uuid));
    json_object_object_add(o, "mode", json_object_new_string(mode_name(st->cfg.mode)));
    json_object_object_add(o, "opt_in", json_object_new_string(st->opt_in));
    json_object_object_add(o, "connection", json_object_new_string(conns_label(dm, st->conn_id)));
    json_object_object_add(o, "paused", json_object_new_boolean(st->paused));
    json_object_object_add(o, "state", json_object_new_string(state));
    json_object_object_add(o, "error",
                           !st->cfg.valid        ? json_object_new_string(st->cfg.error)
                           : st->permanent_error ? json_object_new_string(st->error)
                                                 : NULL);
    /* why the cells show no memory, while vnumad cannot find it (sample.c) */
    json_object_object_add(o, "memory_error",
                           st->sample.ram_error[0] ? json_object_new_string(st->sample.ram_error)
                                                   : NULL);
    json_object_object_add(agent, "connected", json_object_new_boolean(st->guest.connected));
    json_object_object_add(
        agent, "hint_age_s",
        st->guest.hints
            ? json_object_new_double(round((vn_mono_s() - st->guest.hints_at_s) * 10) / 10)
            : NULL);
    json_object_object_add(agent, "hint_sets", json_object_new_uint64(st->guest.stats.hint_sets));
    json_object_object_add(agent, "read_bytes", json_object_new_uint64(st->guest.stats.bytes));
    json_object_object_add(agent, "throttled", json_object_new_uint64(st->guest.stats.throttled));
    if (st->guest.hints) {
        struct json_object *procs = json_object_new_array();
        for (unsigned i = 0; i < st->guest.hints->nr_processes && i < 16; i++) {
            const proto_process *pr = &st->guest.hints->processes[i];
            struct json_object *o2 = json_object_new_object();
            json_object_object_add(o2, "pid", json_object_new_int(pr->pid));
            json_object_object_add(o2, "comm", json_object_new_string(pr->comm));
            json_object_object_add(o2, "vcpus", json_object_new_int((int)pr->nr_vcpus));
            json_object_object_add(o2, "ranges", json_object_new_int((int)pr->nr_ranges));
            json_object_array_add(procs, o2);
        }
        json_object_object_add(agent, "top", procs);
    }
    json_object_object_add(
        agent, "processes",
        json_object_new_int(st->guest.hints ? (int)st->guest.hints->nr_processes : 0));
    {
        struct json_object *errs = json_object_new_object();
        for (unsigned k = 1; k < PROTO_ERR_MAX; k++)
            if (st->guest.stats.errors[k])
                json_object_object_add(errs, proto_error_name((proto_error)k),
                                       json_object_new_uint64(st->guest.stats.errors[k]));
        if (st->guest.stats.dropped_entries)
            json_object_object_add(errs, "out-of-bounds",
                                   json_object_new_uint64(st->guest.stats.dropped_entries));
        json_object_object_add(agent, "errors", errs);
        json_object_object_add(agent, "last_error",
                               st->guest.stats.last_error[0]
                                   ? json_object_new_string(st->guest.stats.last_error)
                                   : NULL);
    }
    json_object_object_add(o, "agent", agent);
    json_object_object_add(o, "age_passes", json_object_new_int((int)st->age_passes));
    /* the migration budget this domain gets: its own rate when below the host's */
    json_object_object_add(
        o, "rate_mib",
        json_object_new_int((int)(st->cfg.rate_mib && st->cfg.rate_mib < dm->cfg.rate_limit_mib
                                      ? st->cfg.rate_mib
                                      : dm->cfg.rate_limit_mib)));
    json_object_object_add(o, "last_decision", last_decision(st));
    uint64_t left[SNAP_MAX_CELLS_PER_DOMAIN];
    mover_cells_left(dm->movers, st->uuid, left); /* the mover's queue, now */
    for (unsigned k = 0; k < st->nr_view; k++) {
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "cell", json_object_new_int((int)st->view[k].cell));
        json_object_object_add(c, "mover_left_bytes",
                               json_object_new_uint64(st->view[k].cell < SNAP_MAX_CELLS_PER_DOMAIN
                                                          ? left[st->view[k].cell]
                                                          : 0));
        json_object_object_add(
            c, "target_node",
            st->view[k].target >= 0
                ? json_object_new_int((int)dm->topo->nodes[st->view[k].target].os_index)
                : NULL);
        json_object_object_add(c, "locality",
                               json_object_new_double(round(st->view[k].locality * 10) / 10));
        json_object_object_add(c, "vcpus",
                               nodes_obj(dm->topo, st->view[k].mem, st->view[k].vcpus, false));
        json_object_object_add(c, "memory",
                               nodes_obj(dm->topo, st->view[k].mem, st->view[k].vcpus, true));
        json_object_object_add(c, "page_size", json_object_new_uint64(st->view[k].page_size));
        cell_last(dm->topo, c, st, st->view[k].cell, &st->view[k].span);
        json_object_object_add(c, "memory_pinned",
                               json_object_new_string(mem_pin_name(st->view[k].mem_pinned)));
        {
            struct json_object *hot = json_object_new_array();
            for (unsigned h = 0; h < st->view[k].nr_hot; h++) {
                struct json_object *r = json_object_new_object();
                json_object_object_add(r, "gpa", json_object_new_uint64(st->view[k].hot[h].gpa));
                json_object_object_add(r, "length",
                                       json_object_new_uint64(st->view[k].hot[h].length));
                json_object_object_add(r, "heat", json_object_new_double(st->view[k].hot[h].heat));
                json_object_object_add(r, "shared",
                                       json_object_new_boolean(st->view[k].hot[h].shared));
                json_object_array_add(hot, r);
            }
            json_object_object_add(c, "hot", hot);
        }
        json_object_array_add(cells, c);
    }
    json_object_object_add(o, "cells", cells);
    json_object_object_add(cnt, "passes", json_object_new_uint64(st->count.passes));
    json_object_object_add(cnt, "memory_scans", json_object_new_uint64(st->count.memory_scans));
    json_object_object_add(cnt, "memory_reuses", json_object_new_uint64(st->count.memory_reuses));
    json_object_object_add(cnt, "pins", json_object_new_uint64(st->count.pins));
    json_object_object_add(cnt, "pages_moved", json_object_new_uint64(st->count.pages_moved));
    json_object_object_add(cnt, "bytes_moved", json_object_new_uint64(st->count.bytes_moved));
    json_object_object_add(cnt, "errors", json_object_new_uint64(st->count.errors));
    json_object_object_add(cnt, "affinity_fixups",
                           json_object_new_uint64(st->count.affinity_fixups));
    json_object_object_add(cnt, "pages_unmovable",
                           json_object_new_uint64(st->count.pages_unmovable));
    json_object_object_add(cnt, "memory_discovery_failures",
                           json_object_new_uint64(st->count.memory_discovery_failures));
    json_object_object_add(o, "counters", cnt);
    return o;
}

static int ctl_status(void *opaque, const control_request *req, struct json_object **ret,
                      char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    const char *domain = req->domain;
    struct json_object *o = json_object_new_object(), *doms = json_object_new_array();

    if (domain && !domains_find_by_name(dm, domain)) {
        json_object_put(o);
        json_object_put(doms);
        return no_domain(domain, errclass, classlen, err, errlen);
    }
    json_object_object_add(o, "pass", json_object_new_uint64(dm->pass));
    json_object_object_add(o, "connected",
                           json_object_new_boolean(conns_connected(dm) == dm->nr_conns &&
                                                   (dm->nr_conns || conns_many(dm))));
    json_object_object_add(o, "connections", status_connections(dm));
    json_object_object_add(o, "paused", json_object_new_boolean(dm->host_paused));
    json_object_object_add(o, "interval_s", json_object_new_double(dm->cfg.interval_s));
    json_object_object_add(o, "rate_limit_mib", json_object_new_int((int)dm->cfg.rate_limit_mib));
    {
        uint64_t heap;
        json_object_object_add(o, "heap_bytes",
                               vn_heap_bytes(&heap) == 0 ? json_object_new_uint64(heap) : NULL);
    }
    {
        mover_stats ms;
        struct json_object *mv = json_object_new_object();
        mover_get_stats(dm->movers, &ms);
        json_object_object_add(mv, "orders", json_object_new_int((int)ms.orders));
        json_object_object_add(mv, "left_bytes", json_object_new_uint64(ms.bytes_left));
        json_object_object_add(mv, "moved_bytes", json_object_new_uint64(ms.bytes_moved));
        json_object_object_add(mv, "busy_s", json_object_new_double(ms.busy_s));
        json_object_object_add(mv, "threads", json_object_new_int((int)ms.threads));
        json_object_object_add(mv, "rate_bytes_s", json_object_new_uint64((uint64_t)ms.rate));
        /* when what is queued is moved at the recent rate (or the limit), null: idle */
        double rate = ms.rate > 0 ? ms.rate : (double)dm->cfg.rate_limit_mib * VN_MIB;
        json_object_object_add(
            mv, "eta_s",
            ms.bytes_left && rate > 0
                ? json_object_new_double(round((double)ms.bytes_left / rate * 10) / 10)
                : NULL);
        json_object_object_add(o, "mover", mv);
    }
    {
        char journal[sizeof(dm->cfg.state_dir) + 16];
        snprintf(journal, sizeof(journal), "%s/journal.jsonl", dm->cfg.state_dir);
        json_object_object_add(o, "journal", json_object_new_string(journal));
    }
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (!domain || strcmp(dm->doms[i]->name, domain) == 0)
            json_object_array_add(doms, status_domain(dm, dm->doms[i]));
    json_object_object_add(o, "domains", doms);
    *ret = o;
    return 0;
}

static void add_history(struct json_object *arr, const dom_state *st)
{
    for (unsigned i = 0; i < st->publish.nr_history; i++) {
        unsigned idx = (st->publish.history_head + STATE_HISTORY - 1 - i) % STATE_HISTORY;
        struct json_object *r =
            st->publish.history[idx] ? json_tokener_parse(st->publish.history[idx]) : NULL;
        if (r)
            json_object_array_add(arr, r);
    }
}

static int cmp_pass_desc(const void *a, const void *b)
{
    struct json_object *x = *(struct json_object *const *)a, *y = *(struct json_object *const *)b;
    struct json_object *px = NULL, *py = NULL;
    uint64_t vx, vy;

    json_object_object_get_ex(x, "pass", &px);
    json_object_object_get_ex(y, "pass", &py);
    vx = json_object_get_uint64(px);
    vy = json_object_get_uint64(py);
    return vx > vy ? -1 : vx < vy ? 1 : 0;
}

static int ctl_decisions(void *opaque, const control_request *req, struct json_object **ret,
                         char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    const char *domain = req->domain;
    struct json_object *o, *arr;

    if (domain && !domains_find_by_name(dm, domain))
        return no_domain(domain, errclass, classlen, err, errlen);
    o = json_object_new_object();
    arr = json_object_new_array();
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (!domain || strcmp(dm->doms[i]->name, domain) == 0)
            add_history(arr, dm->doms[i]);
    json_object_array_sort(arr, cmp_pass_desc);
    json_object_object_add(o, "decisions", arr);
    *ret = o;
    return 0;
}

static void explain_cell(vnumad *dm, const record_cell *c, struct json_object *lines)
{
    const topology *t = dm->topo;
    char buf[512], rl[256] = "", node[16], tgt[16];
    size_t used = 0;
    unsigned nr = 0;

    for (unsigned r = 0; r < RULE_MAX && used < sizeof(rl); r++)
        if (c->rules & RULE_BIT(r))
            used += (size_t)snprintf(rl + used, sizeof(rl) - used, "%s%s", nr++ ? ", " : "",
                                     rule_name((vn_rule)r));
    snprintf(buf, sizeof(buf), "cell %u: runs on node %s, target node %s: %s (rules: %s)", c->cell,
             record_node_str(t, c->node, node, sizeof(node)),
             record_node_str(t, c->target, tgt, sizeof(tgt)), reason_name(c->reason),
             used ? rl : "none");
    json_object_array_add(lines, json_object_new_string(buf));
    if (c->target >= 0) {
        const topo_node *n = &t->nodes[c->target];
        snprintf(buf, sizeof(buf),
                 "  rule 1 (allowed imbalance): node %s has %u CPUs in %u LLC group(s), "
                 "imb_numa_nr %u",
                 tgt, n->nr_cpus, n->nr_llc, n->imb_numa_nr);
        json_object_array_add(lines, json_object_new_string(buf));
    }
}

static int ctl_explain(void *opaque, const control_request *req, struct json_object **ret,
                       char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    const char *domain = req->domain;
    dom_state *st = domains_find_by_name(dm, domain);
    struct json_object *o, *lines, *rec = NULL;
    char buf[1024];

    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    o = json_object_new_object();
    lines = json_object_new_array();
    if (st->publish.last_record)
        rec = record_decision_json(dm->topo, st->publish.last_record);
    snprintf(buf, sizeof(buf),
             "domain %s: mode %s (%s)%s, %u passes old (rule 3: early migration "
             "for the first %u passes, then a two-stage filter)",
             st->name, mode_name(st->cfg.mode), st->opt_in, st->paused ? " (paused)" : "",
             st->age_passes, dm->cfg.decide.early_passes);
    json_object_array_add(lines, json_object_new_string(buf));
    if (!st->cfg.valid) {
        snprintf(buf, sizeof(buf), "left alone: invalid <balancer> element: %s", st->cfg.error);
        json_object_array_add(lines, json_object_new_string(buf));
    }
    if (st->permanent_error) {
        snprintf(buf, sizeof(buf), "left alone after a permanent error: %s", st->error);
        json_object_array_add(lines, json_object_new_string(buf));
    }
    for (unsigned i = 0; st->publish.last_record && i < st->publish.last_record->nr_cells; i++)
        explain_cell(dm, &st->publish.last_record->cells[i], lines);
    snprintf(buf, sizeof(buf),
             "rules 4 and 5 (scan budget, short lock holds): memory sampled with %llu windowed "
             "move_pages queries of at most %d pages so far%s",
             (unsigned long long)st->count.memory_scans, LOCK_HOLD_MAX_PAGES,
             st->count.memory_scans ? "" : " (none: cpuset-skip, QMP off, or not sampled yet)");
    json_object_array_add(lines, json_object_new_string(buf));
    json_object_object_add(o, "domain", json_object_new_string(st->name));
    json_object_object_add(o, "lines", lines);
    json_object_object_add(o, "record", rec);
    *ret = o;
    return 0;
}

/*
 * vnumactl advise: what decide would do for the domain now, a dry run on a fresh sample. The
 * sample blocks on the domain (libvirt, QEMU), so it runs on a worker, into a copy of the
 * domain's sampling state (sample_state_copy): the loop goes on meanwhile, and the next
 * pass's busy window and caches are as if nobody had asked. The reply is sent when the work
 * is back (control_defer).
 */
typedef struct advise_work {
    work w;
    vnumad *dm;
    control_reply *reply; /* NULL once answered (a late work answers at once) */
    virt_dom *d;
    dom_state *copy;
    bool use_qmp;
    snap_domain sd;
    int r;
    char err[CONTROL_ERR_MAX];
} advise_work;

static void advise_run(work *w)
{
    advise_work *aw = (advise_work *)w;
    sample_input in = sample_input_of(aw->copy);
    sample_host h = {.t = aw->dm->topo,
                     .ops = aw->dm->numa,
                     .root = aw->dm->root,
                     .use_qmp = aw->use_qmp,
                     .poll_from = aw->dm->cfg.decide.busy_threshold};

    bool job = false;

    /* as a pass: no monitor command while libvirt runs a job on the domain (a migration's
     * monitor is libvirt's; a command then may fail it or wait behind it) */
    if (sample_uses_monitor(aw->d, &aw->copy->sample, h.use_qmp) &&
        virt_dom_job(aw->d, &job) == 0 && job) {
        aw->r = -EBUSY;
        snprintf(aw->err, sizeof(aw->err),
                 "libvirt runs a job on the domain (migration, save, dump); try again");
        return;
    }
    aw->r = sample_domain(aw->d, &h, &in, &aw->copy->sample, &aw->copy->count, vn_mono_s(), &aw->sd,
                          aw->err, sizeof(aw->err));
}

/* A pass found the sample running past the domain timeout (the domain does not answer): the
 * client hears so now; the work is freed when its call returns. */
static void advise_late(work *w)
{
    advise_work *aw = (advise_work *)w;
    char err[CONTROL_ERR_MAX];

    snprintf(err, sizeof(err), "domain '%s' does not answer", aw->copy->name);
    control_reply_done(aw->reply, -EBUSY, NULL, "Busy", err);
    aw->reply = NULL;
}

static void advise_done(work *w, bool late)
{
    advise_work *aw = (advise_work *)w;
    vnumad *dm = aw->dm;
    struct json_object *result = NULL;
    snapshot s = {.pass = dm->pass, .nr_domains = 1};
    plan p = {0};
    int r = aw->r;

    (void)late;
    if (!aw->reply) /* answered when it went late */
        r = -ECANCELED;
    if (r == 0) {
        s.domains = calloc(1, sizeof(*s.domains));
        if (!s.domains) {
            r = -ENOMEM;
        } else {
            s.domains[0] = aw->sd;
            memset(&aw->sd, 0, sizeof(aw->sd));
            s.domains[0].mode = VN_MODE_ADVISE; /* what auto would do, whatever the mode */
            r = decide(dm->topo, &s, &dm->cfg.decide, &p);
            if (r == 0 && !(result = record_plan_json(dm->topo, &p)))
                r = -ENOMEM;
            plan_clear(&p);
            snapshot_clear(&s);
        }
    }
    if (aw->reply)
        control_reply_done(aw->reply, r, result,
                           aw->r == -EBUSY      ? "Busy"
                           : r < 0 && aw->r < 0 ? "Internal"
                                                : "",
                           aw->r < 0 ? aw->err : "");
    snap_domain_clear(&aw->sd);
    sample_state_free(aw->copy);
    virt_dom_free(aw->d);
    free(aw);
}

static int ctl_advise(void *opaque, const control_request *req, struct json_object **ret,
                      char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    const char *domain = req->domain;
    dom_state *st = domains_find_by_name(dm, domain);
    advise_work *aw;

    (void)ret;
    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    if (st->busy) { /* a work owns its sampling state now: no copy of it */
        snprintf(errclass, classlen, "Busy");
        snprintf(err, errlen, "domain '%s' is being sampled or does not answer; try again", domain);
        return -EBUSY;
    }
    aw = calloc(1, sizeof(*aw));
    if (!aw)
        return -ENOMEM;
    if (!conns_virt(dm, st->conn_id) ||
        virt_dom_open(conns_virt(dm, st->conn_id), st->uuid, &aw->d) < 0) {
        free(aw);
        snprintf(errclass, classlen, "Internal");
        snprintf(err, errlen, "cannot reach domain '%s' through libvirt", domain);
        return -EIO;
    }
    aw->copy = sample_state_copy(st);
    if (!aw->copy) {
        virt_dom_free(aw->d);
        free(aw);
        return -ENOMEM;
    }
    aw->w = (work){.run = advise_run, .done = advise_done, .on_late = advise_late};
    aw->dm = dm;
    aw->use_qmp = sample_monitor_ok(dm->cfg.use_qmp, st->cfg.mode);
    aw->reply = control_defer(req);
    workers_submit(dm->pool, &aw->w);
    return CONTROL_DEFERRED;
}

static int set_paused(vnumad *dm, const char *domain, bool paused, struct json_object **ret,
                      char *errclass, size_t classlen, char *err, size_t errlen)
{
    dom_state *st = domains_find_by_name(dm, domain);
    struct json_object *o;

    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    st->paused = paused;
    if (paused)
        mover_drop(dm->movers, st->uuid); /* nothing of it moves while it is paused */
    log_info("Domain '%s' %s by vnumactl", LOG_Q(st->name), paused ? "paused" : "resumed");
    o = json_object_new_object();
    json_object_object_add(o, "domain", json_object_new_string(st->name));
    json_object_object_add(o, "paused", json_object_new_boolean(paused));
    *ret = o;
    return 0;
}

/* The host-wide pause's mark in state_dir: a restarted vnumad stays paused. */
static int paused_mark(const vnumad *dm, bool paused)
{
    char path[sizeof(dm->cfg.state_dir) + 16];
    int fd;

    snprintf(path, sizeof(path), "%s/paused", dm->cfg.state_dir);
    if (!paused)
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
    fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

bool commands_host_paused_at_start(const vnumad *dm)
{
    char path[sizeof(dm->cfg.state_dir) + 16];
    struct stat sb;

    snprintf(path, sizeof(path), "%s/paused", dm->cfg.state_dir);
    return lstat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* `vnumactl pause --all`, `resume --all`: {"paused": bool, "domains": N} */
static int set_host_paused(vnumad *dm, bool paused, struct json_object **ret, char *errclass,
                           size_t classlen, char *err, size_t errlen)
{
    struct json_object *o;
    int r = paused_mark(dm, paused);

    if (r < 0) {
        snprintf(errclass, classlen, "Internal");
        snprintf(err, errlen, "cannot %s %s/paused: %s", paused ? "write" : "remove",
                 dm->cfg.state_dir, strerror(-r));
        return r;
    }
    dm->host_paused = paused;
    if (paused)
        for (size_t i = 0; i < dm->nr_doms; i++)
            mover_drop(dm->movers, dm->doms[i]->uuid); /* nothing moves from now on */
    log_info("Balancing %s host-wide by vnumactl (%zu domain(s) tracked)%s",
             paused ? "paused" : "resumed", dm->nr_doms,
             paused ? ": nothing is pinned, moved or restored until resumed" : "");
    o = json_object_new_object();
    json_object_object_add(o, "paused", json_object_new_boolean(paused));
    json_object_object_add(o, "domains", json_object_new_int((int)dm->nr_doms));
    *ret = o;
    return 0;
}

static int ctl_pause_all(void *opaque, const control_request *req, struct json_object **ret,
                         char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)req;
    return set_host_paused(opaque, true, ret, errclass, classlen, err, errlen);
}

static int ctl_resume_all(void *opaque, const control_request *req, struct json_object **ret,
                          char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)req;
    return set_host_paused(opaque, false, ret, errclass, classlen, err, errlen);
}

static int ctl_pause(void *opaque, const control_request *req, struct json_object **ret,
                     char *errclass, size_t classlen, char *err, size_t errlen)
{
    return set_paused(opaque, req->domain, true, ret, errclass, classlen, err, errlen);
}

static int ctl_resume(void *opaque, const control_request *req, struct json_object **ret,
                      char *errclass, size_t classlen, char *err, size_t errlen)
{
    return set_paused(opaque, req->domain, false, ret, errclass, classlen, err, errlen);
}

/* `vnumactl metrics`: the same text as metrics_file, as {"text": "..."}. */
static int ctl_metrics(void *opaque, const control_request *req, struct json_object **ret,
                       char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    const char *domain = req->domain;
    _cleanup_free_ char *text = publish_metrics_text(dm);
    struct json_object *o;

    (void)domain;
    (void)errclass;
    (void)classlen;
    (void)err;
    (void)errlen;
    if (!text)
        return -ENOMEM;
    o = json_object_new_object();
    json_object_object_add(o, "text", json_object_new_string(text));
    *ret = o;
    return 0;
}

/* `vnumactl hold STAGE`, `release`, `holds`: the test holds (host/holds.h), answered with
 * holds_json(). Refused unless vnumad.conf says test_holds = yes. */
static int holds_reply(struct json_object **ret)
{
    *ret = holds_json();
    return *ret ? 0 : -ENOMEM;
}

static int ctl_hold(void *opaque, const control_request *req, struct json_object **ret,
                    char *errclass, size_t classlen, char *err, size_t errlen)
{
    int s = holds_stage_from_name(req->stage);

    (void)opaque;
    if (s < 0) {
        snprintf(errclass, classlen, "BadRequest");
        snprintf(err, errlen, "hold needs a stage: sample, act, move or record");
        return -EINVAL;
    }
    if (holds_arm((hold_stage)s, req->domain) < 0) {
        snprintf(errclass, classlen, "HoldsOff");
        snprintf(err, errlen, "test holds are off (test_holds = yes in vnumad.conf turns them on)");
        return -EPERM;
    }
    return holds_reply(ret);
}

static int ctl_holds(void *opaque, const control_request *req, struct json_object **ret,
                     char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)opaque;
    (void)req;
    (void)errclass;
    (void)classlen;
    (void)err;
    (void)errlen;
    return holds_reply(ret);
}

static int ctl_release(void *opaque, const control_request *req, struct json_object **ret,
                       char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)holds_release();
    return ctl_holds(opaque, req, ret, errclass, classlen, err, errlen);
}

/* `vnumactl stop [--keep]`: vnumad exits after this reply, as on SIGTERM; with --keep (a
 * restart or an upgrade without systemd) every domain keeps its placement and its originals,
 * and nothing is restored. {"stopping": true, "keep": bool}. */
static int stop(vnumad *dm, bool keep, struct json_object **ret)
{
    struct json_object *o = json_object_new_object();

    if (!o)
        return -ENOMEM;
    if (keep)
        dm->exit_keeps = true;
    log_info("Asked to stop by vnumactl%s", dm->exit_keeps ? " for a restart: every domain keeps "
                                                             "its placement and its saved originals"
                                                           : "; finishing");
    dm->quit = true;
    (void)holds_release(); /* a pass a test parked finishes, then vnumad stops */
    json_object_object_add(o, "stopping", json_object_new_boolean(true));
    json_object_object_add(o, "keep", json_object_new_boolean(dm->exit_keeps));
    *ret = o;
    return 0;
}

static int ctl_stop(void *opaque, const control_request *req, struct json_object **ret,
                    char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)req;
    (void)errclass;
    (void)classlen;
    (void)err;
    (void)errlen;
    return stop(opaque, false, ret);
}

static int ctl_stop_keep(void *opaque, const control_request *req, struct json_object **ret,
                         char *errclass, size_t classlen, char *err, size_t errlen)
{
    (void)req;
    (void)errclass;
    (void)classlen;
    (void)err;
    (void)errlen;
    return stop(opaque, true, ret);
}

const control_command commands_table[] = {
    {.name = "status", .fn = ctl_status},
    {.name = "decisions", .fn = ctl_decisions},
    {.name = "explain", .fn = ctl_explain, .needs_domain = true},
    {.name = "advise", .fn = ctl_advise, .needs_domain = true},
    {.name = "pause", .fn = ctl_pause, .needs_domain = true},
    {.name = "resume", .fn = ctl_resume, .needs_domain = true},
    {.name = "metrics", .fn = ctl_metrics},
    {.name = "hold", .fn = ctl_hold, .takes_stage = true},
    {.name = "release", .fn = ctl_release},
    {.name = "holds", .fn = ctl_holds},
    {.name = "pause-all", .fn = ctl_pause_all},
    {.name = "resume-all", .fn = ctl_resume_all},
    {.name = "stop", .fn = ctl_stop},
    {.name = "stop-keep", .fn = ctl_stop_keep},
    {.name = "snapshot", .fn = live_snapshot_command},
    {.name = "place", .fn = place_command, .takes_xml = true},
    {.name = NULL},
};
