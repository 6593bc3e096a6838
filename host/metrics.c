/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"
#include "util.h"
#include "version.h"
#include "virt_libvirt.h"

#define METRICS_LABEL_MAX (SNAP_NAME_MAX * 6 + 1) /* every byte may become \" or U+FFFD */

static const double pass_bounds[METRICS_PASS_BUCKETS] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                         1,    2.5,   5,    10,  30};

const char *metrics_skip_name(metrics_skip s)
{
    static const char *const names[METRICS_SKIP_MAX] = {
        [METRICS_SKIP_PAUSED] = "paused",
        [METRICS_SKIP_INVALID_CONFIG] = "invalid-config",
        [METRICS_SKIP_PERMANENT_ERROR] = "permanent-error",
        [METRICS_SKIP_DOMAIN_GONE] = "domain-gone",
        [METRICS_SKIP_SAMPLE_FAILED] = "sample-failed",
        [METRICS_SKIP_NOT_ANSWERING] = "not-answering",
        [METRICS_SKIP_JOB] = "job",
    };
    return (unsigned)s < METRICS_SKIP_MAX ? names[s] : "unknown";
}

const char *metrics_error_name(metrics_error e)
{
    static const char *const names[METRICS_ERR_MAX] = {
        [METRICS_ERR_CONNECT] = "libvirt-connect",
        [METRICS_ERR_CONNECTION_LOST] = "libvirt-connection-lost",
        [METRICS_ERR_LIST] = "libvirt-list",
        [METRICS_ERR_SAMPLE] = "sample",
        [METRICS_ERR_DECIDE] = "decide",
        [METRICS_ERR_ACT_TRANSIENT] = "act-transient",
        [METRICS_ERR_ACT_PERMANENT] = "act-permanent",
        [METRICS_ERR_RESTORE] = "restore",
        [METRICS_ERR_RESTORE_BOUNDS] = "restore-out-of-bounds",
        [METRICS_ERR_METADATA] = "metadata",
        [METRICS_ERR_ORIGINALS] = "originals-record",
        [METRICS_ERR_JOURNAL] = "journal",
        [METRICS_ERR_METRICS_FILE] = "metrics-file",
    };
    return (unsigned)e < METRICS_ERR_MAX ? names[e] : "unknown";
}

const char *metrics_action_name(metrics_action a)
{
    static const char *const names[METRICS_ACTION_MAX] = {
        [METRICS_ACTION_ACTED] = "acted",   [METRICS_ACTION_ADVISED] = "advised",
        [METRICS_ACTION_NONE] = "none",     [METRICS_ACTION_SKIPPED] = "skipped",
        [METRICS_ACTION_ERROR] = "error",   [METRICS_ACTION_RESTORED] = "restored",
        [METRICS_ACTION_MOVING] = "moving",
    };
    return (unsigned)a < METRICS_ACTION_MAX ? names[a] : "unknown";
}

void metrics_count_action(metrics_host *h, const char *action)
{
    for (unsigned a = 0; action && a < METRICS_ACTION_MAX; a++)
        if (strcmp(action, metrics_action_name((metrics_action)a)) == 0) {
            h->actions[a]++;
            return;
        }
}

void metrics_count_plan(metrics_host *h, const plan_domain *pd)
{
    for (unsigned k = 0; pd && k < pd->nr_cells; k++) {
        const plan_cell *c = &pd->cells[k];
        if ((unsigned)c->reason < REASON_MAX)
            h->reasons[c->reason]++;
        for (unsigned r = 0; r < RULE_MAX; r++)
            if (c->rules & RULE_BIT(r))
                h->rules[r]++;
    }
}

void metrics_observe(metrics_histogram *hist, double seconds)
{
    unsigned i;

    if (!(seconds >= 0))
        seconds = 0;
    for (i = 0; i < METRICS_PASS_BUCKETS && seconds > pass_bounds[i]; i++)
        ;
    if (i < METRICS_PASS_BUCKETS)
        hist->bucket[i]++;
    hist->count++;
    hist->sum += seconds;
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    size_t n;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2, cp = s[0] & 0x1f;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3, cp = s[0] & 0x0f;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
        return 0;
    return n;
}

size_t metrics_escape_label(const char *in, char *out, size_t len)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t used = 0;

    if (!len)
        return 0;
    while (*s) {
        char tmp[4];
        const char *rep = tmp;
        size_t n = utf8_len(s), rlen;

        if (n == 1 && *s == '\\')
            rep = "\\\\", rlen = 2;
        else if (n == 1 && *s == '"')
            rep = "\\\"", rlen = 2;
        else if (n == 1 && *s == '\n')
            rep = "\\n", rlen = 2;
        else if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7f)))
            rep = "\xef\xbf\xbd", rlen = 3, n = n ? n : 1; /* U+FFFD */
        else
            memcpy(tmp, s, n), rlen = n;
        if (used + rlen >= len)
            break;
        memcpy(out + used, rep, rlen);
        used += rlen;
        s += n;
    }
    out[used] = '\0';
    return used;
}

/* ---- rendering ---- */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {domain="...",uuid="..."} without the closing brace, for more labels to follow */
static void dom_labels(FILE *f, const dom_state *st)
{
    char esc[METRICS_LABEL_MAX], uuid[METRICS_LABEL_MAX];

    metrics_escape_label(st->name, esc, sizeof(esc));
    metrics_escape_label(st->uuid, uuid, sizeof(uuid));
    fprintf(f, "{domain=\"%s\",uuid=\"%s\"", esc, uuid);
}

static const char *dom_state_name(const dom_state *st)
{
    return !st->cfg.valid        ? "invalid-config"
           : st->permanent_error ? "error"
           : st->paused          ? "paused"
           : st->id < 0          ? "stopped"
                                 : "ok";
}

static void render_host(FILE *f, const metrics_host *h, size_t nr_doms)
{
    uint64_t cum = 0;

    family(f, "vnuma_build_info", "gauge", "vnumad's version (always 1).");
    fprintf(f, "vnuma_build_info{version=\"%s\"} 1\n", VNUMA_VERSION);
    family(f, "vnuma_libvirt_connected", "gauge",
           "1 when every libvirt connection of vnumad (libvirtd or virtqemud) is up.");
    fprintf(f, "vnuma_libvirt_connected %d\n", h->connected ? 1 : 0);
    family(f, "vnuma_libvirt_connections", "gauge",
           "libvirt connections, by state (one per uri line and per socket a glob matches).");
    fprintf(f, "vnuma_libvirt_connections{state=\"up\"} %u\n", h->connections_up);
    fprintf(f, "vnuma_libvirt_connections{state=\"down\"} %u\n",
            h->connections - VN_MIN(h->connections, h->connections_up));
    family(f, "vnuma_passes_total", "counter", "Balancing passes run.");
    fprintf(f, "vnuma_passes_total %llu\n", (unsigned long long)h->passes);
    family(f, "vnuma_last_pass_timestamp_seconds", "gauge",
           "Unix time of the last balancing pass (0: none yet).");
    fprintf(f, "vnuma_last_pass_timestamp_seconds %.3f\n", h->last_pass_unix);
    family(f, "vnuma_domains", "gauge", "Opted-in domains vnumad tracks.");
    fprintf(f, "vnuma_domains %zu\n", nr_doms);

    family(f, "vnuma_pass_duration_seconds", "histogram",
           "Wall-clock time of one balancing pass (sample, decide, act, record).");
    for (unsigned i = 0; i < METRICS_PASS_BUCKETS; i++) {
        cum += h->pass_seconds.bucket[i];
        fprintf(f, "vnuma_pass_duration_seconds_bucket{le=\"%g\"} %llu\n", pass_bounds[i],
                (unsigned long long)cum);
    }
    fprintf(f, "vnuma_pass_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
            (unsigned long long)h->pass_seconds.count);
    fprintf(f, "vnuma_pass_duration_seconds_sum %.6f\n", h->pass_seconds.sum);
    fprintf(f, "vnuma_pass_duration_seconds_count %llu\n",
            (unsigned long long)h->pass_seconds.count);

    family(f, "vnuma_decisions_total", "counter", "Decision records written, by action.");
    for (unsigned a = 0; a < METRICS_ACTION_MAX; a++)
        fprintf(f, "vnuma_decisions_total{action=\"%s\"} %llu\n",
                metrics_action_name((metrics_action)a), (unsigned long long)h->actions[a]);
    family(f, "vnuma_cell_decisions_total", "counter",
           "Cell decisions by outcome (act, or why nothing was done).");
    for (unsigned r = 0; r < REASON_MAX; r++)
        fprintf(f, "vnuma_cell_decisions_total{reason=\"%s\"} %llu\n", reason_name((vn_reason)r),
                (unsigned long long)h->reasons[r]);
    family(f, "vnuma_rule_decisions_total", "counter",
           "Cell decisions each rule shaped (a decision usually names several rules).");
    for (unsigned r = 0; r < RULE_MAX; r++)
        fprintf(f, "vnuma_rule_decisions_total{rule=\"%s\"} %llu\n", rule_name((vn_rule)r),
                (unsigned long long)h->rules[r]);
    family(f, "vnuma_libvirt_calls_total", "counter",
           "libvirt calls vnumad made, by call (qmp and hmp are QEMU monitor commands); an idle "
           "pass makes none.");
    for (unsigned c = 0; c < VIRT_CALL_MAX; c++)
        fprintf(f, "vnuma_libvirt_calls_total{call=\"%s\"} %llu\n", virt_call_name((virt_call)c),
                (unsigned long long)h->libvirt_calls[c]);
    family(f, "vnuma_domain_skips_total", "counter",
           "Passes in which an opted-in domain was not sampled, by reason (not-answering: a call "
           "to it has not returned, a hung QEMU monitor, said once in the log; job: libvirt runs "
           "a migration, save or dump job on it, and nothing is changed until it ends).");
    for (unsigned s = 0; s < METRICS_SKIP_MAX; s++)
        fprintf(f, "vnuma_domain_skips_total{reason=\"%s\"} %llu\n",
                metrics_skip_name((metrics_skip)s), (unsigned long long)h->skips[s]);
    family(f, "vnuma_errors_total", "counter", "vnumad's own errors, by kind.");
    for (unsigned e = 0; e < METRICS_ERR_MAX; e++)
        fprintf(f, "vnuma_errors_total{kind=\"%s\"} %llu\n", metrics_error_name((metrics_error)e),
                (unsigned long long)h->errors[e]);
    family(f, "vnuma_log_suppressed_total", "counter",
           "Repeated error and warning lines held back by the log's rate limit.");
    fprintf(f, "vnuma_log_suppressed_total %llu\n", (unsigned long long)h->log_suppressed);
    family(f, "vnuma_conflict", "gauge",
           "1 when another balancer that fights vnumad was found at start (numa_balancing: "
           "the kernel's automatic NUMA balancing; numad: the numad daemon).");
    fprintf(f, "vnuma_conflict{kind=\"numa_balancing\"} %d\n",
            h->conflicts & CONFLICT_NUMA_BALANCING ? 1 : 0);
    fprintf(f, "vnuma_conflict{kind=\"numad\"} %d\n", h->conflicts & CONFLICT_NUMAD ? 1 : 0);
    family(f, "vnuma_mover_busy_seconds_total", "counter",
           "Time the mover's threads spent moving guest memory (query and move of a window).");
    fprintf(f, "vnuma_mover_busy_seconds_total %.6f\n", h->mover_busy_s);
    family(f, "vnuma_mover_orders", "gauge", "Guest cells whose memory the mover is moving.");
    fprintf(f, "vnuma_mover_orders %u\n", h->mover_orders);
    family(f, "vnuma_mover_left_bytes", "gauge",
           "Guest memory the mover's orders still plan to move (an estimate: the plans' bytes).");
    fprintf(f, "vnuma_mover_left_bytes %llu\n", (unsigned long long)h->mover_left_bytes);
}

/* One per-domain counter family from a field of dom_counters. */
#define DOM_COUNTER(name, help, field)                                                             \
    do {                                                                                           \
        family(f, name, "counter", help);                                                          \
        for (size_t i = 0; i < nr; i++) {                                                          \
            fputs(name, f);                                                                        \
            dom_labels(f, doms[i]);                                                                \
            fprintf(f, "} %llu\n", (unsigned long long)doms[i]->count.field);                      \
        }                                                                                          \
    } while (0)

/* A gauge per guest cell of the last pass: `value` of its view `c`, printed with `fmt`. */
#define CELL_GAUGE(name, help, fmt, value)                                                         \
    do {                                                                                           \
        family(f, name, "gauge", help);                                                            \
        for (size_t i = 0; i < nr; i++)                                                            \
            for (unsigned k = 0; k < doms[i]->nr_view; k++) {                                      \
                const __typeof__(doms[i]->view[0]) *c = &doms[i]->view[k];                         \
                fputs(name, f);                                                                    \
                dom_labels(f, doms[i]);                                                            \
                fprintf(f, ",cell=\"%u\"} " fmt "\n", c->cell, value);                             \
            }                                                                                      \
    } while (0)

/* A per-domain counter of the agent link's statistics (the uint64_t at `off` in them). */
static void agent_counter(FILE *f, dom_state *const *doms, size_t nr, const char *name,
                          const char *help, size_t off)
{
    family(f, name, "counter", help);
    for (size_t i = 0; i < nr; i++) {
        uint64_t v;
        memcpy(&v, (const char *)&doms[i]->guest.stats + off, sizeof(v));
        fputs(name, f);
        dom_labels(f, doms[i]);
        fprintf(f, "} %llu\n", (unsigned long long)v);
    }
}

static void render_domains(FILE *f, const topology *t, dom_state *const *doms, size_t nr,
                           double now_mono)
{
    family(f, "vnuma_domain_info", "gauge",
           "One series per tracked domain (always 1): its mode and state as labels.");
    for (size_t i = 0; i < nr; i++) {
        fputs("vnuma_domain_info", f);
        dom_labels(f, doms[i]);
        fprintf(f, ",mode=\"%s\",state=\"%s\"} 1\n", mode_name(doms[i]->cfg.mode),
                dom_state_name(doms[i]));
    }
    DOM_COUNTER("vnuma_domain_passes_total", "Passes that sampled the domain.", passes);
    DOM_COUNTER("vnuma_domain_pins_total", "vCPU pins vnumad applied to the domain.", pins);
    DOM_COUNTER("vnuma_domain_moved_pages_total", "Guest pages vnumad moved between host nodes.",
                pages_moved);
    DOM_COUNTER("vnuma_domain_moved_bytes_total", "Guest memory vnumad moved between host nodes.",
                bytes_moved);
    DOM_COUNTER("vnuma_domain_memory_scans_total",
                "move_pages status queries issued to sample the domain's memory.", memory_scans);
    DOM_COUNTER("vnuma_domain_errors_total", "Errors while sampling or acting on the domain.",
                errors);
    DOM_COUNTER("vnuma_domain_unmovable_pages_total",
                "Guest pages move_pages(2) would not move (pinned, mapped by another process, the "
                "zero page); their cell's moves are held back for a while.",
                pages_unmovable);
    DOM_COUNTER(
        "vnuma_domain_memory_discovery_failures_total",
        "Passes in which the domain's guest memory could not be found (retried with backoff; "
        "vnumactl status says why).",
        memory_discovery_failures);
    family(f, "vnuma_domain_placement_auto", "gauge",
           "1 when the domain has libvirt placement='auto' (numad-driven), which fights vnumad.");
    for (size_t i = 0; i < nr; i++) {
        fputs("vnuma_domain_placement_auto", f);
        dom_labels(f, doms[i]);
        fprintf(f, "} %d\n", doms[i]->placement_auto ? 1 : 0);
    }

    CELL_GAUGE("vnuma_cell_locality_ratio",
               "Busy-weighted share of a guest cell's memory on the host node its vCPUs run on "
               "(last pass).",
               "%.4f", c->locality / 100.0);
    CELL_GAUGE("vnuma_cell_cpu_overcommit",
               "1 when the cell's busy vCPUs were placed with fewer cores to spare than they need "
               "(no node it may use had room), else 0.",
               "%d", c->cpu_overcommit ? 1 : 0);
    CELL_GAUGE("vnuma_cell_span_nodes",
               "Host nodes a wide cell spans (more busy vCPUs than one node has cores); 1 "
               "otherwise.",
               "%u", nodeset_empty(&c->span) ? 1u : nodeset_weight(&c->span));
    family(f, "vnuma_cell_target_node", "gauge",
           "Host node (kernel number) vnumad chose for the cell; -1 none.");
    for (size_t i = 0; i < nr; i++)
        for (unsigned k = 0; k < doms[i]->nr_view; k++) {
            int tg = doms[i]->view[k].target;
            fputs("vnuma_cell_target_node", f);
            dom_labels(f, doms[i]);
            fprintf(f, ",cell=\"%u\"} %d\n", doms[i]->view[k].cell,
                    tg >= 0 && (unsigned)tg < t->nr_nodes ? (int)t->nodes[tg].os_index : -1);
        }
    /* per node: only the nodes the cell has memory or vCPUs on (a host of 1024 nodes would
     * otherwise give 2048 series a cell) */
    family(f, "vnuma_cell_memory_bytes", "gauge",
           "Resident guest memory of the cell on each host node it has memory or vCPUs on (last "
           "pass).");
    for (size_t i = 0; i < nr; i++)
        for (unsigned k = 0; k < doms[i]->nr_view; k++)
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                if (!doms[i]->view[k].mem[n] && !doms[i]->view[k].vcpus[n])
                    continue;
                fputs("vnuma_cell_memory_bytes", f);
                dom_labels(f, doms[i]);
                fprintf(f, ",cell=\"%u\",node=\"%u\"} %llu\n", doms[i]->view[k].cell,
                        t->nodes[n].os_index, (unsigned long long)doms[i]->view[k].mem[n]);
            }
    family(f, "vnuma_cell_vcpus", "gauge",
           "vCPUs of the cell pinned within each host node it has memory or vCPUs on.");
    for (size_t i = 0; i < nr; i++)
        for (unsigned k = 0; k < doms[i]->nr_view; k++)
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                if (!doms[i]->view[k].mem[n] && !doms[i]->view[k].vcpus[n])
                    continue;
                fputs("vnuma_cell_vcpus", f);
                dom_labels(f, doms[i]);
                fprintf(f, ",cell=\"%u\",node=\"%u\"} %u\n", doms[i]->view[k].cell,
                        t->nodes[n].os_index, (unsigned)doms[i]->view[k].vcpus[n]);
            }

    family(f, "vnuma_agent_connected", "gauge",
           "1 when the domain's vnuma-agent answered the hello on org.vnuma.agent.0.");
    for (size_t i = 0; i < nr; i++) {
        fputs("vnuma_agent_connected", f);
        dom_labels(f, doms[i]);
        fprintf(f, "} %d\n", doms[i]->guest.connected ? 1 : 0);
    }
    family(f, "vnuma_agent_hint_age_seconds", "gauge",
           "Age of the latest valid hint set from the guest agent (absent: none yet); hints "
           "older than 3 intervals are not used.");
    for (size_t i = 0; i < nr; i++) {
        double age;
        if (!doms[i]->guest.hints)
            continue;
        age = now_mono - doms[i]->guest.hints_at_s;
        fputs("vnuma_agent_hint_age_seconds", f);
        dom_labels(f, doms[i]);
        fprintf(f, "} %.3f\n", age > 0 ? age : 0);
    }
    agent_counter(f, doms, nr, "vnuma_agent_hint_sets_total",
                  "Valid hint sets received from the guest agent.",
                  offsetof(agentlink_stats, hint_sets));
    agent_counter(f, doms, nr, "vnuma_agent_read_bytes_total",
                  "Bytes read from the guest agent's channel.", offsetof(agentlink_stats, bytes));
    agent_counter(f, doms, nr, "vnuma_agent_throttled_total",
                  "Times vnumad stopped reading the guest agent's channel for a second: the guest "
                  "wrote more than 256 KiB a second (past a 256 KiB burst; a hint set is at most "
                  "64 KiB).",
                  offsetof(agentlink_stats, throttled));
    family(f, "vnuma_agent_errors_total", "counter",
           "Input refused from the guest agent, by kind (docs/PROTOCOL.md), entries outside "
           "the domain (out-of-bounds) and error replies (agent-error).");
    for (size_t i = 0; i < nr; i++) {
        const agentlink_stats *a = &doms[i]->guest.stats;
        for (unsigned e = 1; e < PROTO_ERR_MAX; e++) {
            fputs("vnuma_agent_errors_total", f);
            dom_labels(f, doms[i]);
            fprintf(f, ",kind=\"%s\"} %llu\n", proto_error_name((proto_error)e),
                    (unsigned long long)a->errors[e]);
        }
        fputs("vnuma_agent_errors_total", f);
        dom_labels(f, doms[i]);
        fprintf(f, ",kind=\"out-of-bounds\"} %llu\n", (unsigned long long)a->dropped_entries);
        fputs("vnuma_agent_errors_total", f);
        dom_labels(f, doms[i]);
        fprintf(f, ",kind=\"agent-error\"} %llu\n", (unsigned long long)a->agent_errors);
    }
}

int metrics_render(const metrics_host *h, const topology *t, dom_state *const *doms, size_t nr,
                   double now_mono, char **ret_text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return -ENOMEM;
    render_host(f, h, nr);
    render_domains(f, t, doms, nr, now_mono);
    if (ferror(f)) {
        fclose(f);
        free(buf);
        return -ENOMEM;
    }
    if (fclose(f) != 0) {
        free(buf);
        return -ENOMEM;
    }
    *ret_text = buf;
    return 0;
}

int metrics_write_file(const char *path, const char *text)
{
    char tmp[PATH_MAX];
    size_t len = strlen(text), off = 0;
    int fd, r = 0;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
        return -ENAMETOOLONG;
    /* a fresh file: whatever sits at PATH.tmp (a symlink or a hard link another user made
     * in a shared textfile directory) is replaced, never written through */
    if (unlink(tmp) < 0 && errno != ENOENT)
        return -errno;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0)
        return -errno;
    while (off < len) {
        ssize_t n = write(fd, text + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = n < 0 ? -errno : -EIO;
            break;
        }
        off += (size_t)n;
    }
    if (r == 0 && fchmod(fd, 0644) < 0)
        r = -errno;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(tmp, path) < 0)
        r = -errno;
    if (r < 0)
        (void)unlink(tmp);
    return r;
}
