/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "act.h"
#include "agentlink.h"
#include "hints.h"
#include "config.h"
#include "conflicts.h"
#include "control.h"
#include "decide.h"
#include "log.h"
#include "metadata.h"
#include "metrics.h"
#include "notify.h"
#include "numa_ops.h"
#include "record.h"
#include "rules.h"
#include "sample.h"
#include "snapshot.h"
#include "topology.h"
#include "util.h"
#include "virt.h"
#include "clock.h"

#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 30.0
#define MAX_DOMAINS   SNAP_MAX_DOMAINS

typedef struct vnumad {
    daemon_config cfg;
    const char *config_path;
    topology *topo;
    const numa_ops *numa;
    virt_conn *conn;
    bool connected;
    double backoff_s;
    int reconnect_timer;
    int pass_timer;
    int soon_timer;
    uint64_t pass;
    dom_state *doms[MAX_DOMAINS];
    size_t nr_doms;
    act_budget budget;
    control_server *ctl;
    int sigfd, sig_watch;
    bool quit;
    FILE *journal;
    metrics_host stats; /* counters for the metrics (host/metrics.h) */
} vnumad;

/* ---- domain state ---- */

static dom_state *find_state(vnumad *dm, const char *uuid)
{
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (strcmp(dm->doms[i]->uuid, uuid) == 0)
            return dm->doms[i];
    return NULL;
}

static dom_state *find_state_by_name(vnumad *dm, const char *name)
{
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (strcmp(dm->doms[i]->name, name) == 0)
            return dm->doms[i];
    return NULL;
}

static void agent_drop(dom_state *st)
{
    agentlink_close(st->link);
    st->link = NULL;
    st->link_closed = false;
    st->agent_connected = false;
    if (st->hints) {
        proto_hints_free(st->hints);
        free(st->hints);
        st->hints = NULL;
    }
}

static void state_free(dom_state *st)
{
    if (!st)
        return;
    agent_drop(st);
    for (unsigned i = 0; i < STATE_HISTORY; i++)
        free(st->history[i]);
    free(st);
}

static void forget_state(vnumad *dm, dom_state *st)
{
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (dm->doms[i] == st) {
            dm->doms[i] = dm->doms[--dm->nr_doms];
            break;
        }
    state_free(st);
}

/* A domain seen for the first time, or again with a new libvirt id (restarted, or
 * arrived by migration): everything learnt about the old QEMU is void, and rule 3's
 * early phase starts over. */
static void state_reset_run(dom_state *st, int id)
{
    st->id = id;
    st->pid = 0;
    st->age_passes = 0;
    st->preferred_node = -1;
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        st->last_candidate[k] = -1;
    st->ram_for_id = -1;
    st->nr_ram = 0;
    sample_mem_changed(st);
    memset(st->move_resume, 0, sizeof(st->move_resume));
    st->nr_prev = 0;
    st->prev_sample_s = 0;
    st->permanent_error = false;
    st->error[0] = '\0';
    st->qom_created = false;
    agent_drop(st);
    st->nr_view = 0;
    memset(st->memfd_bound, 0, sizeof(st->memfd_bound));
}

static void history_push(dom_state *st, const char *json)
{
    char *copy = strdup(json);

    if (!copy)
        return;
    free(st->history[st->history_head]);
    st->history[st->history_head] = copy;
    st->history_head = (st->history_head + 1) % STATE_HISTORY;
    if (st->nr_history < STATE_HISTORY)
        st->nr_history++;
}

/* ---- metrics and conflicting balancers (docs/operations.md) ---- */

/* The exposition of host/metrics.c for the current state, or NULL (out of memory). */
static char *metrics_text(vnumad *dm)
{
    char *text = NULL;

    dm->stats.passes = dm->pass;
    dm->stats.connected = dm->connected;
    dm->stats.log_suppressed = log_suppressed_total();
    if (metrics_render(&dm->stats, dm->topo, dm->doms, dm->nr_doms, vn_mono_s(), &text) < 0)
        return NULL;
    return text;
}

/* After every pass: the metrics file (if configured), atomically. */
static void metrics_publish(vnumad *dm)
{
    _cleanup_free_ char *text = NULL;
    int r;

    log_flush_suppressed(false);
    if (!dm->cfg.metrics_file[0])
        return;
    text = metrics_text(dm);
    r = text ? metrics_write_file(dm->cfg.metrics_file, text) : -ENOMEM;
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_METRICS_FILE]++;
        log_warn("Cannot write the metrics to %s: %s", dm->cfg.metrics_file, strerror(-r));
    }
}

/* Other balancers fighting over the same guests: said once, at start. */
static void warn_host_conflicts(vnumad *dm)
{
    dm->stats.conflicts = conflicts_host("");
    if (dm->stats.conflicts & CONFLICT_NUMA_BALANCING)
        log_warn("Kernel automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing = 1): it "
                 "moves the same guest pages and threads as vnumad; turn it off with 'sysctl "
                 "kernel.numa_balancing=0' (docs/operations.md)");
    if (dm->stats.conflicts & CONFLICT_NUMAD)
        log_warn("numad is running: it re-pins and moves whole domains and fights vnumad over "
                 "opted-in domains; stop it or keep it away from them (docs/operations.md)");
}

/* libvirt placement='auto' asks numad for a placement at domain start: said once, when the
 * domain is first tracked. */
static void warn_placement_auto(virt_dom *d, dom_state *st, const char *name)
{
    _cleanup_free_ char *xml = NULL;

    if (virt_dom_xml(d, &xml) < 0)
        return;
    st->placement_auto = conflicts_placement_auto(xml);
    if (st->placement_auto)
        log_warn("Domain '%s' has placement='auto' (numad-driven placement at start); vnumad "
                 "moves it afterwards, so the two disagree: use placement='static' for "
                 "opted-in domains (docs/operations.md)",
                 name);
}

/* ---- records ---- */

static void journal_write(vnumad *dm, dom_state *st, struct json_object *rec)
{
    char key[sizeof(st->journal_key)];
    struct json_object *a = NULL, *r = NULL, *cells = NULL;
    size_t used;

    if (!dm->journal)
        return;
    /* one line per change: identical "nothing to do" passes are not repeated */
    json_object_object_get_ex(rec, "action", &a);
    json_object_object_get_ex(rec, "reason", &r);
    json_object_object_get_ex(rec, "cells", &cells);
    used = (size_t)snprintf(key, sizeof(key), "%s|%s", a ? json_object_get_string(a) : "",
                            r ? json_object_get_string(r) : "");
    for (size_t i = 0; cells && i < json_object_array_length(cells) && used < sizeof(key); i++) {
        struct json_object *c = json_object_array_get_idx(cells, i), *cr = NULL, *tg = NULL;
        json_object_object_get_ex(c, "reason", &cr);
        json_object_object_get_ex(c, "target", &tg);
        used += (size_t)snprintf(key + used, sizeof(key) - used, "|%s@%s",
                                 cr ? json_object_get_string(cr) : "",
                                 tg ? json_object_get_string(tg) : "-");
    }
    if (strcmp(key, st->journal_key) == 0 && a && strcmp(json_object_get_string(a), "acted") != 0)
        return;
    snprintf(st->journal_key, sizeof(st->journal_key), "%s", key);
    fprintf(dm->journal, "%s\n", json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN));
    fflush(dm->journal);
}

/* Publish the record inside QEMU: an authz-simple object whose identity is the JSON. */
static void record_qom(vnumad *dm, virt_dom *d, dom_state *st, const char *json)
{
    struct json_object *cmd, *args;
    char *reply = NULL;
    int r;

    /* no monitor command for a domain whose opt-in element is broken: it is left alone */
    if (!dm->cfg.use_qmp || !st->cfg.valid)
        return;
    for (int attempt = 0; attempt < 2; attempt++) {
        cmd = json_object_new_object();
        args = json_object_new_object();
        if (!cmd || !args) {
            json_object_put(cmd);
            json_object_put(args);
            return;
        }
        if (st->qom_created) {
            json_object_object_add(cmd, "execute", json_object_new_string("qom-set"));
            json_object_object_add(args, "path", json_object_new_string("/objects/vnuma-decision"));
            json_object_object_add(args, "property", json_object_new_string("identity"));
            json_object_object_add(args, "value", json_object_new_string(json));
        } else {
            json_object_object_add(cmd, "execute", json_object_new_string("object-add"));
            json_object_object_add(args, "qom-type", json_object_new_string("authz-simple"));
            json_object_object_add(args, "id", json_object_new_string("vnuma-decision"));
            json_object_object_add(args, "identity", json_object_new_string(json));
        }
        json_object_object_add(cmd, "arguments", args);
        r = virt_qmp(d, json_object_to_json_string_ext(cmd, JSON_C_TO_STRING_PLAIN), &reply);
        json_object_put(cmd);
        free(reply);
        reply = NULL;
        if (r == 0) {
            st->qom_created = true;
            return;
        }
        /* object-add fails when it exists already (a restarted vnumad), qom-set when
         * QEMU forgot it: switch and try once more */
        st->qom_created = !st->qom_created;
    }
    log_debug("Failed to publish the decision of '%s' in QEMU: %s", st->name, virt_last_error());
}

/* 0, or -1 when the metadata could not be written (counted by the callers). */
static int record_metadata(virt_dom *d, dom_state *st, uint64_t pass, const char *time,
                           const char *json)
{
    _cleanup_free_ char *cur = NULL;
    _cleanup_free_ char *out = NULL;
    int r;

    if (virt_metadata_get(d, &cur) < 0)
        return 0;
    if (meta_format(cur, &st->orig, pass, time, json, &out) < 0)
        return 0;
    r = virt_metadata_set(d, out);
    if (r == -ESRCH)
        return 0; /* stopped since it was sampled: no live metadata to write, not an error */
    if (r < 0) {
        log_warn("Failed to write the decision of '%s' to its metadata: %s", st->name,
                 virt_last_error());
        return -1;
    }
    return 0;
}

static void log_decision(const dom_state *st, struct json_object *rec)
{
    struct json_object *a = NULL, *r = NULL, *cells = NULL;
    char line[1024], qname[2 * SNAP_NAME_MAX], qreason[1024];
    size_t used = 0;

    json_object_object_get_ex(rec, "action", &a);
    json_object_object_get_ex(rec, "reason", &r);
    json_object_object_get_ex(rec, "cells", &cells);
    for (size_t i = 0; cells && i < json_object_array_length(cells) && used < sizeof(line); i++) {
        struct json_object *c = json_object_array_get_idx(cells, i), *cr, *n, *tg, *mv;
        json_object_object_get_ex(c, "reason", &cr);
        json_object_object_get_ex(c, "node", &n);
        json_object_object_get_ex(c, "target", &tg);
        json_object_object_get_ex(c, "bytes_moved", &mv);
        used += (size_t)snprintf(line + used, sizeof(line) - used, " cell%zu=%s->%s:%s:moved=%s", i,
                                 n ? json_object_get_string(n) : "-",
                                 tg ? json_object_get_string(tg) : "-", json_object_get_string(cr),
                                 json_object_get_string(mv));
    }
    line[sizeof(line) - 1] = '\0';
    /* quoted fields escaped: a name or reason with ' cannot forge the fields after it */
    log_info("decision domain='%s' pass=%llu action=%s reason='%s'%s",
             log_quote(st->name, qname, sizeof(qname)), (unsigned long long)st->count.passes,
             a ? json_object_get_string(a) : "?",
             log_quote(r ? json_object_get_string(r) : "?", qreason, sizeof(qreason)),
             used ? line : "");
}

/* Every opted-in domain gets a record every pass, "no change" included. */
static void record_all(vnumad *dm, virt_dom *d, dom_state *st, const record_ctx *rc,
                       const plan_domain *pd, const act_result *res)
{
    struct json_object *rec = record_decision_json(dm->topo, rc, pd, res);
    const char *json;

    if (!rec)
        return;
    json = json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN);
    history_push(st, json);
    journal_write(dm, st, rec);
    log_decision(st, rec);
    metrics_count_action(&dm->stats, rc->action);
    if (d) {
        record_qom(dm, d, st, json);
        if (record_metadata(d, st, rc->pass, rc->time, json) < 0)
            dm->stats.errors[METRICS_ERR_METADATA]++;
    }
    json_object_put(rec);
}

static void record_simple(vnumad *dm, virt_dom *d, dom_state *st, const char *action,
                          const char *reason)
{
    char time[32];
    record_ctx rc = {.name = st->name,
                     .uuid = st->uuid,
                     .mode = st->cfg.mode,
                     .pass = dm->pass,
                     .time = time,
                     .action = action,
                     .reason = reason};

    vn_iso_time(time, sizeof(time));
    record_all(dm, d, st, &rc, NULL, NULL);
}

/* ---- the guest agent ---- */

static void on_agent_ready(void *opaque, const proto_hello_reply *hello)
{
    dom_state *st = opaque;

    st->agent_connected = true;
    log_info("vnuma-agent %s of '%s' connected (protocol %u, %u guest nodes, %u vCPUs)",
             hello->agent, st->name, hello->version, hello->nodes, hello->vcpus);
}

static void on_agent_hints(void *opaque, proto_hints *h)
{
    dom_state *st = opaque;
    proto_gpa_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    char err[256] = "";
    int dropped;

    for (unsigned i = 0; i < st->nr_ram; i++)
        ram[i] = (proto_gpa_range){.gpa = st->ram[i].gpa, .length = st->ram[i].size};
    /* lies the codec cannot see: vCPUs, nodes and ranges the domain does not have */
    dropped = proto_hints_check_bounds(h, st->nr_prev, st->nr_ram ? st->nr_ram : 1, ram,
                                       st->nr_ram, err, sizeof(err));
    if (dropped > 0) {
        st->agent.dropped_entries += (uint64_t)dropped;
        snprintf(st->agent.last_error, sizeof(st->agent.last_error), "out of bounds: %.200s",
                 err);
        log_debug("Dropped %d hint entries of '%s' outside the domain: %s", dropped, st->name,
                  err);
    }
    if (st->hints) {
        proto_hints_free(st->hints);
        free(st->hints);
    }
    st->hints = h;
    st->hints_at_s = vn_mono_s();
}

static void on_agent_closed(void *opaque)
{
    dom_state *st = opaque;

    st->agent_connected = false;
    st->link_closed = true; /* closed from the pass, not from inside the link's callback */
}

/* Open the agent channel when the guest has the port open and none is open yet. */
static void agent_connect(vnumad *dm, virt_dom *d, dom_state *st)
{
    agentlink_callbacks cb = {.hints = on_agent_hints,
                              .ready = on_agent_ready,
                              .closed = on_agent_closed,
                              .opaque = st};
    _cleanup_free_ char *xml = NULL;
    char path[256];
    bool open = false;
    int r;

    if (st->link || !dm->cfg.use_qmp || !st->cfg.valid || virt_dom_xml(d, &xml) < 0 ||
        agentlink_find_channel(xml, path, sizeof(path), &open) < 0 || !open)
        return;
    r = agentlink_open(path, &cb, &st->agent, &st->link);
    if (r < 0)
        log_debug("Cannot open the agent channel of '%s': %s", st->name, strerror(-r));
}

/* ---- opt-in ---- */

static void restore_domain(vnumad *dm, virt_dom *d, dom_state *st, const char *why)
{
    int r;

    if (!st->orig.saved)
        return;
    r = act_restore(d, st);
    if (act_unbind_memfd(dm->numa, st) < 0)
        log_warn("Failed to give the shared memory backend of '%s' its default policy back",
                 st->name);
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_RESTORE]++;
        log_err("Failed to restore the original pinning of '%s': %s", st->name, virt_last_error());
        return;
    }
    log_info("Restored the original pinning and binding of '%s' (%s)", st->name, why);
    memset(&st->orig, 0, sizeof(st->orig));
    record_simple(dm, d, st, "restored", why);
}

static void schedule_pass_soon(vnumad *dm)
{
    loop_update_timer(dm->soon_timer, (int)(dm->cfg.event_delay_s * 1000));
}

/*
 * Look at a running domain's <balancer> element and track, update or drop it.
 * Returns true when something that matters for balancing changed.
 */
static bool consider_domain(vnumad *dm, const char *uuid)
{
    _cleanup_free_ char *xml = NULL;
    virt_dom *d = NULL;
    virt_dom_id id;
    vn_balancer cfg;
    dom_originals orig;
    dom_state *st = find_state(dm, uuid);
    bool changed = false;
    int r;

    if (!dm->connected || virt_dom_open(dm->conn, uuid, &d) < 0)
        return false;
    if (virt_dom_ident(d, &id) < 0) {
        virt_dom_free(d);
        if (st)
            forget_state(dm, st);
        return false;
    }
    r = virt_metadata_get(d, &xml);
    if (r == -ENOENT) {
        /* never opted in, or the element was removed: restore what we changed */
        if (st) {
            restore_domain(dm, d, st, "opted out: element removed");
            forget_state(dm, st);
            changed = true;
        }
        virt_dom_free(d);
        return changed;
    }
    if (r < 0) {
        virt_dom_free(d);
        return false;
    }
    meta_parse(xml, dm->topo, &cfg, &orig);
    if (!st && cfg.valid && cfg.mode == VN_MODE_OFF && !orig.saved) {
        virt_dom_free(d);
        return false; /* mode="off" and nothing of ours to undo */
    }
    if (!st) {
        if (dm->nr_doms >= MAX_DOMAINS) {
            log_warn("Too many domains; not tracking '%s'", id.name);
            virt_dom_free(d);
            return false;
        }
        st = calloc(1, sizeof(*st));
        if (!st) {
            virt_dom_free(d);
            return false;
        }
        snprintf(st->uuid, sizeof(st->uuid), "%s", id.uuid);
        state_reset_run(st, id.id);
        dm->doms[dm->nr_doms++] = st;
        changed = true;
        log_info("Tracking domain '%s' (%s)", id.name, uuid);
        warn_placement_auto(d, st, id.name);
    } else if (st->id != id.id) {
        state_reset_run(st, id.id);
        changed = true;
    }
    snprintf(st->name, sizeof(st->name), "%s", id.name);
    /* a restarted vnumad finds the originals in the live metadata */
    if (!st->orig.saved && orig.saved)
        st->orig = orig;
    if (memcmp(&cfg, &st->cfg, sizeof(cfg)) != 0) {
        if (!cfg.valid)
            log_warn("Leaving '%s' alone: invalid <balancer> element: %s", st->name, cfg.error);
        else
            log_info("Domain '%s' balancer mode %s", st->name, mode_name(cfg.mode));
        st->cfg = cfg;
        changed = true;
    }
    if (cfg.valid && cfg.mode == VN_MODE_OFF) {
        restore_domain(dm, d, st, "opted out: mode off");
        forget_state(dm, st);
    } else if (!cfg.valid && st->orig.saved) {
        restore_domain(dm, d, st, "invalid <balancer> element");
    }
    virt_dom_free(d);
    return changed;
}

static void resync(vnumad *dm)
{
    _cleanup_free_ virt_dom_id *ids = NULL;
    size_t n = 0;

    if (virt_list_running(dm->conn, &ids, &n) < 0) {
        dm->stats.errors[METRICS_ERR_LIST]++;
        log_warn("Failed to list domains: %s", virt_last_error());
        return;
    }
    /* drop what is no longer running */
    for (size_t i = 0; i < dm->nr_doms;) {
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(ids[k].uuid, dm->doms[i]->uuid) == 0;
        if (!found)
            forget_state(dm, dm->doms[i]);
        else
            i++;
    }
    for (size_t k = 0; k < n; k++)
        (void)consider_domain(dm, ids[k].uuid);
}

/* ---- the pass ---- */

static void update_view(vnumad *dm, dom_state *st, const snap_domain *sd, const plan_domain *pd)
{
    const topology *t = dm->topo;

    st->view_pass = dm->pass;
    st->nr_view = VN_MIN(sd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN);
    for (unsigned k = 0; k < st->nr_view; k++) {
        const snap_cell *c = &sd->cells[k];
        memset(&st->view[k], 0, sizeof(st->view[k]));
        st->view[k].cell = c->id;
        st->view[k].target = pd ? pd->cells[k].target_node : -1;
        st->view[k].locality = pd ? pd->cells[k].locality_before : 0;
        st->view[k].nr_hot = VN_MIN(c->nr_hot, (unsigned)VN_ARRAY_SIZE(st->view[k].hot));
        for (unsigned h = 0; h < st->view[k].nr_hot; h++)
            st->view[k].hot[h] = c->hot[h];
        for (unsigned n = 0; n < t->nr_nodes; n++) {
            st->view[k].mem[n] = c->pages[n] * c->page_size;
            for (unsigned v = 0; v < c->nr_vcpus; v++)
                st->view[k].vcpus[n] += cpuset_subset(&c->vcpus[v].pinned, &t->nodes[n].cpus);
        }
    }
}

static bool plan_domain_has_actions(const plan_domain *pd)
{
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].nr_pins || pd->cells[k].nr_moves)
            return true;
    return false;
}

/* A shared (memfd) backend not yet bound to its cell's target node. */
static bool memfd_needs_bind(const topology *t, const dom_state *st, const plan_domain *pd)
{
    for (unsigned k = 0; k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        if (pc->target_node < 0 || pc->cell_id >= SNAP_MAX_CELLS_PER_DOMAIN ||
            (pc->rules & RULE_BIT(RULE_CPUSET_SKIP)))
            continue;
        for (unsigned i = 0; i < st->nr_ram; i++)
            if (st->ram[i].cell == pc->cell_id && st->ram[i].shared &&
                st->memfd_bound[pc->cell_id] != (int)t->nodes[pc->target_node].os_index + 1)
                return true;
    }
    return false;
}

static void pass_domain_result(vnumad *dm, virt_dom *d, dom_state *st, snap_domain *sd,
                               const plan_domain *pd)
{
    act_result res;
    bool acted = false;
    char time[32];
    const char *reason = "ok";
    record_ctx rc;
    int r = 0;

    memset(&res, 0, sizeof(res));
    if (st->cfg.mode == VN_MODE_AUTO &&
        (plan_domain_has_actions(pd) || memfd_needs_bind(dm->topo, st, pd))) {
        /* the originals go into the live metadata before the first change */
        bool first = !st->orig.saved;
        r = act_save_originals(d, st, sd);
        if (r == 0 && first) {
            vn_iso_time(time, sizeof(time));
            if (record_metadata(d, st, dm->pass, time, NULL) < 0)
                dm->stats.errors[METRICS_ERR_METADATA]++;
        }
        if (r == 0) {
            vn_balancer *b = &st->cfg;
            act_budget dom_budget = dm->budget, *use = &dm->budget;
            if (b->rate_mib && b->rate_mib < dm->cfg.rate_limit_mib) {
                /* the domain's own limit, drawn from the host-wide bucket */
                dom_budget.tokens =
                    VN_MIN(dm->budget.tokens, (double)b->rate_mib * VN_MIB * dm->cfg.interval_s);
                use = &dom_budget;
            }
            double before = use->tokens;
            r = act_apply(d, st, dm->topo, sd, pd, dm->numa, use, &dm->cfg.decide, &res);
            if (use == &dom_budget)
                dm->budget.tokens -= before - dom_budget.tokens;
            sample_mem_changed(st); /* it acted: count the memory afresh next pass */
        } else {
            res.kind = act_classify(r);
            res.err = r;
            snprintf(res.error, sizeof(res.error), "save originals: %s", strerror(-r));
        }
        acted = true;
    }
    metrics_count_plan(&dm->stats, pd);
    if (r < 0) {
        st->count.errors++;
        /* an error while the domain was being torn down is its going away, not a fault */
        if (res.kind == ACT_TRANSIENT && !virt_dom_active(d))
            res.kind = ACT_GONE;
        switch (res.kind) {
        case ACT_PERMANENT:
            dm->stats.errors[METRICS_ERR_ACT_PERMANENT]++;
            st->permanent_error = true;
            snprintf(st->error, sizeof(st->error), "%s", res.error);
            log_err("Stopped touching '%s': %s (%s)", st->name, res.error, virt_last_error());
            reason = "permanent-error";
            break;
        case ACT_GONE:
            reason = "domain-gone";
            log_info("Domain '%s' went away during the pass", st->name);
            break;
        default:
            dm->stats.errors[METRICS_ERR_ACT_TRANSIENT]++;
            reason = "transient-error";
            log_warn("Failed to act on '%s', will retry: %s (%s)", st->name, res.error,
                     virt_last_error());
            break;
        }
    }
    /* rule 3's state for the next pass */
    for (unsigned k = 0; k < pd->nr_cells && k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        st->last_candidate[k] = pd->cells[k].candidate_node;
    if (acted && r == 0) {
        uint64_t best = 0;
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            uint64_t b = 0;
            for (unsigned n = 0; n < dm->topo->nr_nodes; n++)
                b += sd->cells[k].pages[n];
            if (pd->cells[k].target_node >= 0 && b >= best) {
                best = b;
                st->preferred_node = pd->cells[k].target_node;
            }
        }
    }
    st->age_passes++;
    update_view(dm, st, sd, pd);
    vn_iso_time(time, sizeof(time));
    rc = (record_ctx){.name = st->name,
                      .uuid = st->uuid,
                      .mode = st->cfg.mode,
                      .pass = dm->pass,
                      .time = time,
                      .action = r < 0 ? "error"
                                : st->cfg.mode == VN_MODE_ADVISE
                                    ? (plan_domain_has_actions(pd) ? "advised" : "none")
                                    : (acted ? "acted" : "none"),
                      .reason = reason};
    record_all(dm, res.kind == ACT_GONE ? NULL : d, st, &rc, pd, acted ? &res : NULL);
}

static void run_pass_stages(vnumad *dm)
{
    snapshot s;
    plan p = {0};
    dom_state *sts[MAX_DOMAINS];
    virt_dom *ds[MAX_DOMAINS];
    double now = vn_mono_s();
    char err[512];
    int r;

    if (!dm->connected)
        return;
    dm->pass++;
    memset(&s, 0, sizeof(s));
    s.pass = dm->pass;
    (void)topo_refresh_free(dm->topo, NULL);
    act_budget_refill(&dm->budget, now);
    /* moves stop one interval after the pass began; what is left follows next pass */
    dm->budget.deadline_s = now + dm->cfg.interval_s;
    s.domains = calloc(dm->nr_doms ? dm->nr_doms : 1, sizeof(*s.domains));
    if (!s.domains)
        return;
    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        virt_dom *d = NULL;

        if (virt_dom_open(dm->conn, st->uuid, &d) < 0) {
            dm->stats.skips[METRICS_SKIP_DOMAIN_GONE]++;
            record_simple(dm, NULL, st, "skipped", "domain-gone");
            continue;
        }
        if (!st->cfg.valid) {
            char why[STATE_ERROR_MAX + 32];
            dm->stats.skips[METRICS_SKIP_INVALID_CONFIG]++;
            snprintf(why, sizeof(why), "invalid-config: %s", st->cfg.error);
            record_simple(dm, d, st, "skipped", why);
            virt_dom_free(d);
            continue;
        }
        if (st->paused || st->permanent_error) {
            char why[STATE_ERROR_MAX + 32];
            dm->stats.skips[st->paused ? METRICS_SKIP_PAUSED : METRICS_SKIP_PERMANENT_ERROR]++;
            snprintf(why, sizeof(why), "%s%s",
                     st->paused ? "paused" : "permanent-error: ", st->paused ? "" : st->error);
            record_simple(dm, d, st, "skipped", why);
            virt_dom_free(d);
            continue;
        }
        if (st->link_closed)
            agent_drop(st);
        agent_connect(dm, d, st);
        r = sample_domain(d, st, dm->topo, dm->numa, dm->cfg.use_qmp, now, &s.domains[s.nr_domains],
                          err, sizeof(err));
        if (r == 0 && st->hints &&
            now - st->hints_at_s <= HINT_MAX_AGE_INTERVALS * dm->cfg.interval_s &&
            hints_apply(st->hints, st->ram, st->nr_ram, &s.domains[s.nr_domains]) < 0)
            log_warn("Out of memory applying the hints of '%s'", st->name);
        if (st->link) {
            proto_get_hints g = {.interval_ms = (uint32_t)(dm->cfg.interval_s * 1000),
                                 .max_processes = 16,
                                 .scan_budget_mib = 256};
            (void)agentlink_request_hints(st->link, &g, now);
        }
        if (r < 0) {
            st->count.errors++;
            dm->stats.skips[r == -ESRCH ? METRICS_SKIP_DOMAIN_GONE : METRICS_SKIP_SAMPLE_FAILED]++;
            if (r != -ESRCH)
                dm->stats.errors[METRICS_ERR_SAMPLE]++;
            if (r == -ESRCH) /* stopped during the pass (not an error): STOPPED follows */
                log_info("Domain '%s' went away during the pass: %s", st->name, err);
            else
                log_warn("Failed to sample '%s': %s", st->name, err);
            record_simple(dm, r == -ESRCH ? NULL : d, st, "error",
                          r == -ESRCH ? "domain-gone" : "sample-failed");
            virt_dom_free(d);
            if (r == -ESRCH)
                memset(&s.domains[s.nr_domains], 0, sizeof(s.domains[0]));
            continue;
        }
        st->count.passes++;
        sts[s.nr_domains] = st;
        ds[s.nr_domains] = d;
        s.nr_domains++;
    }
    r = decide(dm->topo, &s, &dm->cfg.decide, &p);
    if (dm->cfg.act_delay_ms && s.nr_domains) {
        /* fault-injection tests stop a domain here, between sample and act */
        struct timespec ts = {.tv_sec = dm->cfg.act_delay_ms / 1000,
                              .tv_nsec = (long)(dm->cfg.act_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_DECIDE]++;
        log_err("Failed to decide: %s", strerror(-r));
    } else {
        for (unsigned i = 0; i < s.nr_domains; i++) {
            const plan_domain *pd = NULL;
            for (unsigned k = 0; k < p.nr_domains; k++)
                if (strcmp(p.domains[k].name, s.domains[i].name) == 0)
                    pd = &p.domains[k];
            if (pd)
                pass_domain_result(dm, ds[i], sts[i], &s.domains[i], pd);
        }
    }
    for (unsigned i = 0; i < s.nr_domains; i++)
        virt_dom_free(ds[i]);
    plan_clear(&p);
    snapshot_clear(&s);
}

/* A pass with its metrics: timed, then published (metrics_file). */
static void run_pass(vnumad *dm)
{
    double start = vn_mono_s();
    bool ran = dm->connected;

    run_pass_stages(dm);
    if (ran) {
        metrics_observe(&dm->stats.pass_seconds, vn_mono_s() - start);
        dm->stats.last_pass_unix = vn_real_s();
    }
    metrics_publish(dm);
}

/* ---- connection ---- */

static void connect_now(vnumad *dm);

static void on_reconnect_timer(int timer, void *opaque)
{
    vnumad *dm = opaque;

    loop_update_timer(timer, -1);
    connect_now(dm);
}

static void on_lifecycle(void *opaque, const char *uuid, const char *name, virt_lifecycle ev,
                         bool migrated)
{
    vnumad *dm = opaque;
    dom_state *st = find_state(dm, uuid);

    if (ev == VIRT_EVENT_STARTED) {
        log_debug("Domain '%s' started%s", name, migrated ? " (arrived by migration)" : "");
        if (consider_domain(dm, uuid))
            schedule_pass_soon(dm);
    } else if (ev == VIRT_EVENT_STOPPED && st) {
        log_info("Domain '%s' stopped%s; no longer tracked", name,
                 migrated ? " (migrated away)" : "");
        forget_state(dm, st);
    }
}

static void on_metadata(void *opaque, const char *uuid, const char *name)
{
    vnumad *dm = opaque;

    (void)name;
    if (consider_domain(dm, uuid))
        schedule_pass_soon(dm);
}

static void on_vserport(void *opaque, const char *uuid, const char *name, const char *port,
                        bool open)
{
    vnumad *dm = opaque;
    dom_state *st = find_state(dm, uuid);

    log_debug("Domain '%s' port %s %s", name, port, open ? "opened" : "closed");
    if (!st)
        return;
    if (!open) {
        agent_drop(st);
    } else if (dm->connected) {
        virt_dom *d = NULL;
        if (virt_dom_open(dm->conn, uuid, &d) == 0) {
            agent_connect(dm, d, st);
            virt_dom_free(d);
        }
    }
}

static void drop_connection(vnumad *dm)
{
    virt_close(dm->conn);
    dm->conn = NULL;
    dm->connected = false;
}

static void on_closed(void *opaque)
{
    vnumad *dm = opaque;

    if (!dm->connected)
        return;
    dm->stats.errors[METRICS_ERR_CONNECTION_LOST]++;
    log_warn("Lost the connection to libvirtd; reconnecting");
    dm->connected = false;
    dm->backoff_s = BACKOFF_MIN_S;
    /* closing from inside libvirt's callback is not allowed: do it from a timer */
    loop_update_timer(dm->reconnect_timer, 0);
}

static void connect_now(vnumad *dm)
{
    virt_callbacks cb = {.lifecycle = on_lifecycle,
                         .metadata = on_metadata,
                         .vserport = on_vserport,
                         .closed = on_closed,
                         .opaque = dm};
    int r;

    if (dm->conn)
        drop_connection(dm);
    r = virt_open(dm->cfg.uri, &cb, &dm->conn);
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_CONNECT]++;
        log_warn("Cannot connect to %s: %s; retrying in %.0f s", dm->cfg.uri, virt_last_error(),
                 dm->backoff_s);
        dm->conn = NULL;
        loop_update_timer(dm->reconnect_timer, (int)(dm->backoff_s * 1000));
        dm->backoff_s = VN_MIN(BACKOFF_MAX_S, dm->backoff_s * 2);
        return;
    }
    dm->connected = true;
    dm->backoff_s = BACKOFF_MIN_S;
    log_info("Connected to %s", dm->cfg.uri);
    resync(dm);
    schedule_pass_soon(dm);
}

static void on_pass_timer(int timer, void *opaque)
{
    vnumad *dm = opaque;

    (void)timer;
    run_pass(dm);
}

static void on_soon_timer(int timer, void *opaque)
{
    vnumad *dm = opaque;

    loop_update_timer(timer, -1);
    run_pass(dm);
    /* the periodic pass counts from here */
    loop_update_timer(dm->pass_timer, (int)(dm->cfg.interval_s * 1000));
}

/* ---- signals ---- */

static void reload_config(vnumad *dm)
{
    daemon_config c = dm->cfg;
    char err[512];

    if (!dm->config_path)
        return;
    if (daemon_config_load(dm->config_path, false, &c, err, sizeof(err)) < 0) {
        log_err("Not reloading: %s", err);
        return;
    }
    /* where vnumad listens and what it connects to stay as started */
    memcpy(c.socket_path, dm->cfg.socket_path, sizeof(c.socket_path));
    memcpy(c.state_dir, dm->cfg.state_dir, sizeof(c.state_dir));
    memcpy(c.uri, dm->cfg.uri, sizeof(c.uri));
    (void)notify_send("RELOADING=1");
    dm->cfg = c;
    log_set_level(c.log_level);
    act_budget_init(&dm->budget, c.rate_limit_mib, c.interval_s, vn_mono_s());
    loop_update_timer(dm->pass_timer, (int)(c.interval_s * 1000));
    log_info("Reloaded %s", dm->config_path);
    (void)notify_send("READY=1");
}

static void on_signal(int watch, int fd, int events, void *opaque)
{
    vnumad *dm = opaque;
    struct signalfd_siginfo si;

    (void)watch;
    (void)events;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
            reload_config(dm);
        } else {
            log_info("Received %s; finishing", si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
            dm->quit = true;
        }
    }
}

/* ---- control socket ---- */

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

    for (unsigned n = 0; o && n < t->nr_nodes; n++) {
        snprintf(key, sizeof(key), "%u", t->nodes[n].os_index);
        json_object_object_add(
            o, key, is_mem ? json_object_new_uint64(mem[n]) : json_object_new_int(vc[n]));
    }
    return o;
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
    json_object_object_add(o, "paused", json_object_new_boolean(st->paused));
    json_object_object_add(o, "state", json_object_new_string(state));
    json_object_object_add(o, "error",
                           !st->cfg.valid        ? json_object_new_string(st->cfg.error)
                           : st->permanent_error ? json_object_new_string(st->error)
                                                 : NULL);
    json_object_object_add(agent, "connected", json_object_new_boolean(st->agent_connected));
    json_object_object_add(agent, "hint_age_s",
                           st->hints ? json_object_new_double(
                                           round((vn_mono_s() - st->hints_at_s) * 10) / 10)
                                     : NULL);
    json_object_object_add(agent, "hint_sets", json_object_new_uint64(st->agent.hint_sets));
    if (st->hints) {
        struct json_object *procs = json_object_new_array();
        for (unsigned i = 0; i < st->hints->nr_processes && i < 16; i++) {
            const proto_process *pr = &st->hints->processes[i];
            struct json_object *o2 = json_object_new_object();
            json_object_object_add(o2, "pid", json_object_new_int(pr->pid));
            json_object_object_add(o2, "comm", json_object_new_string(pr->comm));
            json_object_object_add(o2, "vcpus", json_object_new_int((int)pr->nr_vcpus));
            json_object_object_add(o2, "ranges", json_object_new_int((int)pr->nr_ranges));
            json_object_array_add(procs, o2);
        }
        json_object_object_add(agent, "top", procs);
    }
    json_object_object_add(agent, "processes",
                           json_object_new_int(st->hints ? (int)st->hints->nr_processes : 0));
    {
        struct json_object *errs = json_object_new_object();
        for (unsigned k = 1; k < PROTO_ERR_MAX; k++)
            if (st->agent.errors[k])
                json_object_object_add(errs, proto_error_name((proto_error)k),
                                       json_object_new_uint64(st->agent.errors[k]));
        if (st->agent.dropped_entries)
            json_object_object_add(errs, "out-of-bounds",
                                   json_object_new_uint64(st->agent.dropped_entries));
        json_object_object_add(agent, "errors", errs);
        json_object_object_add(agent, "last_error",
                               st->agent.last_error[0]
                                   ? json_object_new_string(st->agent.last_error)
                                   : NULL);
    }
    json_object_object_add(o, "agent", agent);
    json_object_object_add(o, "age_passes", json_object_new_int((int)st->age_passes));
    for (unsigned k = 0; k < st->nr_view; k++) {
        struct json_object *c = json_object_new_object();
        json_object_object_add(c, "cell", json_object_new_int((int)st->view[k].cell));
        json_object_object_add(
            c, "target_node",
            st->view[k].target >= 0
                ? json_object_new_int((int)dm->topo->nodes[st->view[k].target].os_index)
                : NULL);
        json_object_object_add(c, "locality",
                               json_object_new_double(round(st->view[k].locality * 10) / 10));
        json_object_object_add(c, "vcpus", nodes_obj(dm->topo, NULL, st->view[k].vcpus, false));
        json_object_object_add(c, "memory", nodes_obj(dm->topo, st->view[k].mem, NULL, true));
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
    json_object_object_add(cnt, "affinity_fixups", json_object_new_uint64(st->count.affinity_fixups));
    json_object_object_add(o, "counters", cnt);
    return o;
}

static int ctl_status(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                      size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    struct json_object *o = json_object_new_object(), *doms = json_object_new_array();

    if (domain && !find_state_by_name(dm, domain)) {
        json_object_put(o);
        json_object_put(doms);
        return no_domain(domain, errclass, classlen, err, errlen);
    }
    json_object_object_add(o, "pass", json_object_new_uint64(dm->pass));
    json_object_object_add(o, "connected", json_object_new_boolean(dm->connected));
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (!domain || strcmp(dm->doms[i]->name, domain) == 0)
            json_object_array_add(doms, status_domain(dm, dm->doms[i]));
    json_object_object_add(o, "domains", doms);
    *ret = o;
    return 0;
}

static void add_history(struct json_object *arr, const dom_state *st)
{
    for (unsigned i = 0; i < st->nr_history; i++) {
        unsigned idx = (st->history_head + STATE_HISTORY - 1 - i) % STATE_HISTORY;
        struct json_object *r = st->history[idx] ? json_tokener_parse(st->history[idx]) : NULL;
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

static int ctl_decisions(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                         size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    struct json_object *o, *arr;

    if (domain && !find_state_by_name(dm, domain))
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

static void explain_cell(vnumad *dm, const dom_state *st, struct json_object *cell,
                         struct json_object *lines)
{
    struct json_object *id = NULL, *node = NULL, *tgt = NULL, *reason = NULL, *rules = NULL;
    char buf[512], rl[256] = "";
    size_t used = 0;

    json_object_object_get_ex(cell, "cell", &id);
    json_object_object_get_ex(cell, "node", &node);
    json_object_object_get_ex(cell, "target", &tgt);
    json_object_object_get_ex(cell, "reason", &reason);
    json_object_object_get_ex(cell, "rules", &rules);
    for (size_t i = 0; rules && i < json_object_array_length(rules) && used < sizeof(rl); i++)
        used += (size_t)snprintf(rl + used, sizeof(rl) - used, "%s%s", i ? ", " : "",
                                 json_object_get_string(json_object_array_get_idx(rules, i)));
    snprintf(buf, sizeof(buf), "cell %s: runs on node %s, target node %s: %s (rules: %s)",
             json_object_get_string(id), node ? json_object_get_string(node) : "-",
             tgt ? json_object_get_string(tgt) : "-", json_object_get_string(reason),
             used ? rl : "none");
    json_object_array_add(lines, json_object_new_string(buf));
    if (tgt) {
        int idx = topo_node_index(dm->topo, (unsigned)json_object_get_int(tgt));
        if (idx >= 0) {
            snprintf(buf, sizeof(buf),
                     "  rule 1 (allowed imbalance): node %s has %u CPUs in %u LLC group(s), "
                     "imb_numa_nr %u",
                     json_object_get_string(tgt), dm->topo->nodes[idx].nr_cpus,
                     dm->topo->nodes[idx].nr_llc, dm->topo->nodes[idx].imb_numa_nr);
            json_object_array_add(lines, json_object_new_string(buf));
        }
    }
    (void)st;
}

static int ctl_explain(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                       size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    dom_state *st = find_state_by_name(dm, domain);
    struct json_object *o, *lines, *rec = NULL, *cells = NULL;
    char buf[512];

    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    o = json_object_new_object();
    lines = json_object_new_array();
    if (st->nr_history)
        rec =
            json_tokener_parse(st->history[(st->history_head + STATE_HISTORY - 1) % STATE_HISTORY]);
    snprintf(buf, sizeof(buf),
             "domain %s: mode %s%s, %u passes old (rule 3: early migration "
             "for the first %u passes, then a two-stage filter)",
             st->name, mode_name(st->cfg.mode), st->paused ? " (paused)" : "", st->age_passes,
             dm->cfg.decide.early_passes);
    json_object_array_add(lines, json_object_new_string(buf));
    if (!st->cfg.valid) {
        snprintf(buf, sizeof(buf), "left alone: invalid <balancer> element: %s", st->cfg.error);
        json_object_array_add(lines, json_object_new_string(buf));
    }
    if (st->permanent_error) {
        snprintf(buf, sizeof(buf), "left alone after a permanent error: %s", st->error);
        json_object_array_add(lines, json_object_new_string(buf));
    }
    if (rec && json_object_object_get_ex(rec, "cells", &cells))
        for (size_t i = 0; i < json_object_array_length(cells); i++)
            explain_cell(dm, st, json_object_array_get_idx(cells, i), lines);
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

static int ctl_advise(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                      size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    dom_state *st = find_state_by_name(dm, domain);
    snapshot s;
    plan p = {0};
    virt_dom *d = NULL;
    int r;

    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    if (!dm->connected || virt_dom_open(dm->conn, st->uuid, &d) < 0) {
        snprintf(errclass, classlen, "Internal");
        snprintf(err, errlen, "cannot reach domain '%s' through libvirt", domain);
        return -EIO;
    }
    memset(&s, 0, sizeof(s));
    s.pass = dm->pass;
    s.domains = calloc(1, sizeof(*s.domains));
    if (!s.domains) {
        virt_dom_free(d);
        return -ENOMEM;
    }
    r = sample_domain(d, st, dm->topo, dm->numa, dm->cfg.use_qmp, vn_mono_s(), &s.domains[0], err,
                      errlen);
    virt_dom_free(d);
    if (r < 0) {
        snapshot_clear(&s);
        snprintf(errclass, classlen, "Internal");
        return r;
    }
    s.nr_domains = 1;
    /* a dry run: advise what auto would do, whatever the mode */
    s.domains[0].mode = VN_MODE_ADVISE;
    r = decide(dm->topo, &s, &dm->cfg.decide, &p);
    snapshot_clear(&s);
    if (r < 0)
        return r;
    *ret = record_plan_json(dm->topo, &p);
    plan_clear(&p);
    return *ret ? 0 : -ENOMEM;
}

static int set_paused(vnumad *dm, const char *domain, bool paused, struct json_object **ret,
                      char *errclass, size_t classlen, char *err, size_t errlen)
{
    dom_state *st = find_state_by_name(dm, domain);
    struct json_object *o;

    if (!st)
        return no_domain(domain, errclass, classlen, err, errlen);
    st->paused = paused;
    log_info("Domain '%s' %s by vnumactl", st->name, paused ? "paused" : "resumed");
    o = json_object_new_object();
    json_object_object_add(o, "domain", json_object_new_string(st->name));
    json_object_object_add(o, "paused", json_object_new_boolean(paused));
    *ret = o;
    return 0;
}

static int ctl_pause(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                     size_t classlen, char *err, size_t errlen)
{
    return set_paused(opaque, domain, true, ret, errclass, classlen, err, errlen);
}

static int ctl_resume(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                      size_t classlen, char *err, size_t errlen)
{
    return set_paused(opaque, domain, false, ret, errclass, classlen, err, errlen);
}

/* `vnumactl metrics`: the same text as metrics_file, as {"text": "..."}. */
static int ctl_metrics(void *opaque, const char *domain, struct json_object **ret, char *errclass,
                       size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    _cleanup_free_ char *text = metrics_text(dm);
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

static const control_command ctl_commands[] = {
    {"status", ctl_status, false},
    {"decisions", ctl_decisions, false},
    {"explain", ctl_explain, true},
    {"advise", ctl_advise, true},
    {"pause", ctl_pause, true},
    {"resume", ctl_resume, true},
    {"metrics", ctl_metrics, false},
    {NULL, NULL, false},
};

/* ---- main ---- */

static int open_journal(vnumad *dm)
{
    char path[512];
    int fd;

    if (mkdir(dm->cfg.state_dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    snprintf(path, sizeof(path), "%s/journal.jsonl", dm->cfg.state_dir);
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    dm->journal = fdopen(fd, "a");
    if (!dm->journal) {
        close(fd);
        return -errno;
    }
    return 0;
}

static void shutdown_restore(vnumad *dm)
{
    if (!dm->cfg.restore_on_exit || !dm->connected)
        return;
    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        virt_dom *d = NULL;
        if (!st->orig.saved || virt_dom_open(dm->conn, st->uuid, &d) < 0)
            continue;
        restore_domain(dm, d, st, "vnumad stopped");
        virt_dom_free(d);
    }
}

int daemon_main(const daemon_config *cfg, const char *config_path)
{
    vnumad dm;
    sigset_t mask;
    char err[512];
    int r;

    memset(&dm, 0, sizeof(dm));
    dm.cfg = *cfg;
    dm.config_path = config_path;
    dm.numa = &numa_libnuma;
    dm.backoff_s = BACKOFF_MIN_S;
    dm.sigfd = -1;
    dm.topo = calloc(1, sizeof(*dm.topo));
    if (!dm.topo)
        return 1;
    r = topo_load(TOPO_SOURCE_LIVE, NULL, NULL, dm.topo, err, sizeof(err));
    if (r < 0) {
        log_err("Cannot read the host topology: %s", err);
        return 1;
    }
    log_info("Host topology: %u NUMA node(s), %u CPUs", dm.topo->nr_nodes, dm.topo->nr_cpus);
    r = loop_init();
    if (r < 0) {
        log_err("Cannot start the event loop: %s", virt_last_error());
        return 1;
    }
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    dm.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (dm.sigfd < 0 || (dm.sig_watch = loop_add_fd(dm.sigfd, LOOP_READABLE, on_signal, &dm)) < 0) {
        log_err("Cannot watch signals: %s", strerror(errno));
        return 1;
    }
    r = open_journal(&dm);
    if (r < 0) {
        dm.stats.errors[METRICS_ERR_JOURNAL]++;
        log_warn("Cannot open the journal in %s: %s; decisions are kept in memory only",
                 dm.cfg.state_dir, strerror(-r));
    }
    r = control_open(dm.cfg.socket_path, ctl_commands, &dm, &dm.ctl);
    if (r < 0) {
        log_err("Cannot listen on %s: %s", dm.cfg.socket_path, strerror(-r));
        return 1;
    }
    act_budget_init(&dm.budget, dm.cfg.rate_limit_mib, dm.cfg.interval_s, vn_mono_s());
    dm.reconnect_timer = loop_add_timer(-1, on_reconnect_timer, &dm);
    dm.pass_timer = loop_add_timer((int)(dm.cfg.interval_s * 1000), on_pass_timer, &dm);
    dm.soon_timer = loop_add_timer(-1, on_soon_timer, &dm);
    if (dm.reconnect_timer < 0 || dm.pass_timer < 0 || dm.soon_timer < 0) {
        log_err("Cannot create timers");
        return 1;
    }
    log_info("vnumad started: interval %.1f s, migration limit %u MiB/s, QMP %s, socket %s",
             dm.cfg.interval_s, dm.cfg.rate_limit_mib, dm.cfg.use_qmp ? "on" : "off",
             dm.cfg.socket_path);
    if (!dm.cfg.use_qmp)
        log_warn("QMP is off: cells, guest RAM layout and memory placement are unknown; vnumad "
                 "pins vCPUs only and moves no memory");
    warn_host_conflicts(&dm);
    /* systemd (Type=notify): ready once vnumactl can reach us; libvirtd may come later */
    r = notify_send("READY=1");
    if (r < 0)
        log_warn("Cannot tell systemd that vnumad is ready: %s", strerror(-r));
    connect_now(&dm);
    while (!dm.quit) {
        r = loop_run_once();
        if (r < 0) {
            log_err("Event loop failed: %s", virt_last_error());
            break;
        }
    }
    (void)notify_send("STOPPING=1");
    shutdown_restore(&dm);
    control_close(dm.ctl);
    if (dm.conn)
        drop_connection(&dm);
    for (size_t i = 0; i < dm.nr_doms; i++)
        state_free(dm.doms[i]);
    if (dm.journal)
        fclose(dm.journal);
    free(dm.topo);
    log_flush_suppressed(true);
    log_info("vnumad stopped");
    return r < 0 ? 1 : 0;
}
