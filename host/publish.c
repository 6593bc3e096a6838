/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a pass's record goes (docs/records.md): the in-memory history (vnumactl
 * decisions), the journal, an object inside QEMU, the domain's live metadata and the log
 * line; and the metrics file after each pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "conntab.h"
#include "core.h"
#include "journal.h"
#include "json.h"
#include "log.h"
#include "metadata.h"
#include "metrics.h"
#include "mover.h"
#include "publish.h"
#include "record.h"
#include "rules.h"
#include "sample.h"
#include "util.h"
#include "virt.h"
#include "virt_libvirt.h"

/* ---- history ---- */

/* A record that repeats the newest one (same gist, nothing done) takes its place, so the
 * ring holds the last STATE_HISTORY different decisions, the newest at its latest pass, and
 * an idle domain keeps one record, not STATE_HISTORY copies of it. */
static void history_push(dom_state *st, const char *json, bool repeats)
{
    char *copy = strdup(json);

    if (!copy)
        return;
    if (repeats && st->publish.nr_history) {
        unsigned newest = (st->publish.history_head + STATE_HISTORY - 1) % STATE_HISTORY;
        free(st->publish.history[newest]);
        st->publish.history[newest] = copy;
        return;
    }
    free(st->publish.history[st->publish.history_head]);
    st->publish.history[st->publish.history_head] = copy;
    st->publish.history_head = (st->publish.history_head + 1) % STATE_HISTORY;
    if (st->publish.nr_history < STATE_HISTORY)
        st->publish.nr_history++;
}

/* ---- the metrics file (docs/operations.md) ---- */

/* The exposition of host/metrics.c for the current state, or NULL (out of memory). */
char *publish_metrics_text(vnumad *dm)
{
    char *text = NULL;
    mover_stats ms;

    dm->stats.passes = dm->pass;
    dm->stats.connected = conns_connected(dm) == dm->nr_conns && (dm->nr_conns || conns_many(dm));
    dm->stats.connections = dm->nr_conns;
    dm->stats.connections_up = conns_connected(dm);
    dm->stats.log_suppressed = log_suppressed_total();
    virt_call_counts(dm->stats.libvirt_calls);
    mover_get_stats(dm->movers, &ms);
    dm->stats.mover_busy_s = ms.busy_s;
    dm->stats.mover_orders = ms.orders;
    dm->stats.mover_left_bytes = ms.bytes_left;
    if (metrics_render(&dm->stats, dm->topo, dm->doms, dm->nr_doms, vn_mono_s(), &text) < 0)
        return NULL;
    return text;
}

/* After every pass: the metrics file (if configured), atomically. */
void publish_metrics(vnumad *dm)
{
    _cleanup_free_ char *text = NULL;
    int r;

    log_flush_suppressed(false);
    if (!dm->cfg.metrics_file[0])
        return;
    text = publish_metrics_text(dm);
    r = text ? metrics_write_file(dm->cfg.metrics_file, text) : -ENOMEM;
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_METRICS_FILE]++;
        log_warn("Cannot write the metrics to %s: %s", dm->cfg.metrics_file, strerror(-r));
    }
}

/* ---- records ---- */

#define JOURNAL_KEY_MAX 160

/* A record's gist for the duplicate check: action, reason, whether it follows the hot ranges
 * the domain carried (what the next host reads in <state>: it must not take ranges this one
 * dropped as they aged), each cell's reason and target. */
static void journal_key(const topology *t, const record_decision *r, char *key, size_t len)
{
    char tgt[16];
    size_t used = (size_t)snprintf(key, len, "%s|%s%s", r->action, r->reason,
                                   r->hints_carried ? "|carried" : "");

    for (unsigned i = 0; i < r->nr_cells && used < len; i++)
        used += (size_t)snprintf(key + used, len - used, "|%s@%s", reason_name(r->cells[i].reason),
                                 record_node_str(t, r->cells[i].target, tgt, sizeof(tgt)));
}

/* The record repeats the domain's last one (st->last_record, still the previous one): same
 * gist, and nothing was carried out. */
static bool record_repeats(const vnumad *dm, const dom_state *st, const record_decision *rec)
{
    char key[JOURNAL_KEY_MAX], last[JOURNAL_KEY_MAX];

    if (!st->publish.last_record || strcmp(rec->action, "acted") == 0 ||
        strcmp(rec->action, "moving") == 0 || strcmp(rec->action, "restored") == 0)
        return false;
    journal_key(dm->topo, rec, key, sizeof(key));
    journal_key(dm->topo, st->publish.last_record, last, sizeof(last));
    return strcmp(key, last) == 0;
}

/* Append the record to the journal: one line per change, identical "nothing to do" passes
 * are not repeated. */
static void journal_write(vnumad *dm, const char *json, bool repeats)
{
    int r;

    if (!dm->journal || repeats)
        return;
    r = journal_append(dm->journal, json, dm->cfg.journal_max_bytes, dm->cfg.journal_files);
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_JOURNAL]++;
        log_warn("Cannot write the journal in %s: %s", dm->cfg.state_dir, strerror(-r));
    }
}

/*
 * Whether the record goes into QEMU and the live metadata this pass: when its gist differs
 * from the last one written there, or something was carried out, or the originals changed
 * (an arrival takes this host's, a restore drops them: they are in <state>), or
 * record_heartbeat passed since (0: never), so a reader sees vnumad alive and its pass. Writing
 * every pass cost each domain a status-XML rewrite in libvirtd and an event to every client
 * every interval; a heartbeat each minute was still most of what an idle domain cost libvirtd
 * (docs/benchmarks.md, idle KVM domains).
 */
static bool record_due(const vnumad *dm, dom_state *st, const record_decision *rec, double now)
{
    char key[JOURNAL_KEY_MAX];
    bool carried = strcmp(rec->action, "acted") == 0 || strcmp(rec->action, "moving") == 0 ||
                   strcmp(rec->action, "restored") == 0;

    journal_key(dm->topo, rec, key, sizeof(key));
    if (!carried && !st->orig_unwritten && st->publish.pub_at_s > 0 &&
        now >= st->publish.pub_at_s &&
        (!(dm->cfg.heartbeat_s > 0) || now - st->publish.pub_at_s < dm->cfg.heartbeat_s) &&
        strcmp(key, st->publish.pub_key) == 0)
        return false;
    _Static_assert(sizeof(st->publish.pub_key) >= JOURNAL_KEY_MAX, "pub_key holds a journal key");
    memcpy(st->publish.pub_key, key, sizeof(key));
    st->publish.pub_at_s = now;
    st->orig_unwritten = false;
    return true;
}

/* Publish the record inside QEMU: an authz-simple object whose identity is the JSON. */
static void record_qom(bool use_qmp, virt_dom *d, dom_state *st, const char *json)
{
    struct json_object *cmd, *args;
    char *reply = NULL;
    int r;

    /* no monitor command for a domain whose opt-in element is broken (it is left alone), nor
     * for one vnumad only advises on (never tainted: sample_monitor_ok) */
    if (!sample_monitor_ok(use_qmp, st->cfg.mode) || !st->cfg.valid)
        return;
    for (int attempt = 0; attempt < 2; attempt++) {
        cmd = json_object_new_object();
        args = json_object_new_object();
        if (!cmd || !args) {
            json_object_put(cmd);
            json_object_put(args);
            return;
        }
        if (st->publish.qom_created) {
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
            st->publish.qom_created = true;
            return;
        }
        /* object-add fails when it exists already (a restarted vnumad), qom-set when
         * QEMU forgot it: switch and try once more */
        st->publish.qom_created = !st->publish.qom_created;
    }
    log_debug("Failed to publish the decision of '%s' in QEMU: %s", LOG_Q(st->name),
              virt_last_error());
}

/*
 * vnumad's <state> element (host/metadata.h), written whole: the originals and this record.
 * The operator's <balancer> element is never written, so an opt-out cannot be lost to a
 * write of ours. 0, or -1 when it could not be written (counted by the callers).
 */
int publish_metadata(virt_dom *d, dom_state *st, uint64_t pass, const char *time, const char *json)
{
    _cleanup_free_ char *out = NULL;
    int r;

    if (meta_format_state(&st->orig, &st->placed, pass, time, json, &out) < 0)
        return 0;
    r = virt_state_set(d, out);
    if (r == -ESRCH)
        return 0; /* stopped since it was sampled: no live metadata to write, not an error */
    if (r < 0) {
        log_warn("Failed to write the decision of '%s' to its metadata: %s", LOG_Q(st->name),
                 virt_last_error());
        return -1;
    }
    return 0;
}

int publish_write(virt_dom *d, dom_state *st, bool use_qmp, const char *json, uint64_t pass,
                  const char *time)
{
    record_qom(use_qmp, d, st, json);
    return publish_metadata(d, st, pass, time, json);
}

static void log_decision(vnumad *dm, const dom_state *st, const record_decision *rec, bool repeats)
{
    char line[1024], qname[2 * SNAP_NAME_MAX], qreason[1024], node[16], tgt[16];
    size_t used = 0;

    for (unsigned i = 0; i < rec->nr_cells && used < sizeof(line); i++) {
        const record_cell *c = &rec->cells[i];
        used +=
            (size_t)snprintf(line + used, sizeof(line) - used, " cell%u=%s->%s:%s:moved=%" PRIu64,
                             i, record_node_str(dm->topo, c->node, node, sizeof(node)),
                             record_node_str(dm->topo, c->target, tgt, sizeof(tgt)),
                             reason_name(c->reason), c->bytes_moved);
    }
    line[sizeof(line) - 1] = '\0';
    /* quoted fields escaped: a name or reason with ' cannot forge the fields after it */
    /* a repeated "nothing to do" is debug: 150 idle domains would log 30 lines a second */
    log_msg(repeats ? LOG_DEBUG : LOG_INFO,
            "decision domain='%s' pass=%llu action=%s reason='%s'%s",
            log_quote(st->name, qname, sizeof(qname)), (unsigned long long)st->count.passes,
            rec->action, log_quote(rec->reason, qreason, sizeof(qreason)), used ? line : "");
}

/* Keep rec as the domain's last record (the journal's duplicate check, vnumactl explain). */
static void keep_last(dom_state *st, const record_decision *rec)
{
    if (!st->publish.last_record)
        st->publish.last_record = malloc(sizeof(*st->publish.last_record));
    if (st->publish.last_record)
        *st->publish.last_record = *rec;
}

/* Every opted-in domain gets a record every pass, "no change" included. */
void publish_record(vnumad *dm, virt_dom *d, dom_state *st, const record_ctx *rc,
                    const plan_domain *pd, const act_result *res)
{
    record_decision rec;
    _cleanup_json_ struct json_object *obj = NULL;
    const char *json;
    bool repeats;

    record_decision_make(dm->topo, rc, pd, res, &rec);
    obj = record_decision_json(dm->topo, &rec);
    if (!obj)
        return;
    json = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
    repeats = record_repeats(dm, st, &rec);
    history_push(st, json, repeats);
    journal_write(dm, json, repeats);
    log_decision(dm, st, &rec, repeats);
    keep_last(st, &rec);
    metrics_count_action(&dm->stats, rc->action);
    if (d && record_due(dm, st, &rec, vn_mono_s()))
        dm->submit_write(dm, d, st, json, rc->pass, rc->time);
}

void publish_record_simple(vnumad *dm, virt_dom *d, dom_state *st, const char *action,
                           const char *reason)
{
    char time[32];
    record_ctx rc = {.name = st->name,
                     .uuid = st->uuid,
                     .mode = st->cfg.mode,
                     .pass = dm->pass,
                     .time = time,
                     .action = action,
                     .reason = reason,
                     .placed = &st->placed,
                     .opt_in = st->opt_in};

    vn_iso_time(time, sizeof(time));
    publish_record(dm, d, st, &rc, NULL, NULL);
}
