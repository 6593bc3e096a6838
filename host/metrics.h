/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's metrics in the Prometheus text exposition format (version 0.0.4):
 * what the daemon counts (metrics_host) plus what it remembers per domain
 * (dom_state), rendered as text for node-exporter's textfile collector
 * (metrics_write_file(): temp file + rename, so the collector never reads half
 * a file) and for `vnumactl metrics`. docs/operations.md's metrics table is
 * generated from what it writes (metrics_doc.c, `make metrics-doc`). Label values are escaped per
 * the format: backslash, double quote and line feed as \\, \" and \n; bytes that are not valid
 * UTF-8 and other control characters become U+FFFD, so any domain name gives a valid file (the uuid
 * label keeps such series apart). This module does not log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conflicts.h"
#include "model.h"
#include "state.h"
#include "topology.h"
#include "virt.h"
#include "virt_libvirt.h"

/* Why a domain got no sample in a pass (vnuma_domain_skips_total{reason}). */
typedef enum metrics_skip {
    METRICS_SKIP_PAUSED,
    METRICS_SKIP_INVALID_CONFIG,
    METRICS_SKIP_PERMANENT_ERROR,
    METRICS_SKIP_DOMAIN_GONE,
    METRICS_SKIP_SAMPLE_FAILED,
    METRICS_SKIP_NOT_ANSWERING, /* an earlier call to it has not returned (hung monitor) */
    METRICS_SKIP_JOB,           /* libvirt runs a job on it (migration, save, dump) */
    METRICS_SKIP_MAX,
} metrics_skip;

/* vnumad's own errors by kind (vnuma_errors_total{kind}). */
typedef enum metrics_error {
    METRICS_ERR_CONNECT, /* cannot connect to libvirtd (each attempt) */
    METRICS_ERR_CONNECTION_LOST,
    METRICS_ERR_LIST,   /* listing domains failed */
    METRICS_ERR_SAMPLE, /* sampling a domain failed */
    METRICS_ERR_DECIDE,
    METRICS_ERR_ACT_TRANSIENT,  /* act failed, retried next pass */
    METRICS_ERR_ACT_PERMANENT,  /* act failed, the domain is left alone */
    METRICS_ERR_RESTORE,        /* putting originals back failed */
    METRICS_ERR_RESTORE_BOUNDS, /* a saved original outside the domain's definition, not put back */
    METRICS_ERR_METADATA,       /* writing the live metadata failed */
    METRICS_ERR_ORIGINALS,      /* vnumad's record of a domain's originals not written or read */
    METRICS_ERR_JOURNAL,        /* journal.jsonl cannot be opened */
    METRICS_ERR_METRICS_FILE,   /* metrics_file cannot be written */
    METRICS_ERR_MAX,
} metrics_error;

/* The action of a decision record (vnuma_decisions_total{action}). */
typedef enum metrics_action {
    METRICS_ACTION_ACTED,
    METRICS_ACTION_ADVISED,
    METRICS_ACTION_NONE,
    METRICS_ACTION_SKIPPED,
    METRICS_ACTION_ERROR,
    METRICS_ACTION_RESTORED,
    METRICS_ACTION_MOVING,
    METRICS_ACTION_MAX,
} metrics_action;

#define METRICS_PASS_BUCKETS 11 /* finite upper bounds of vnuma_pass_duration_seconds */

typedef struct metrics_histogram {
    uint64_t bucket[METRICS_PASS_BUCKETS]; /* observations <= each bound (not cumulative) */
    uint64_t count;
    double sum;
} metrics_histogram;

typedef struct metrics_host {
    uint64_t passes;
    bool connected;               /* every libvirt connection is up */
    unsigned connections;         /* libvirt connections (uri lines, sockets their globs match) */
    unsigned connections_up;      /* ... up now */
    double last_pass_unix;        /* wall-clock time of the last pass, 0 none yet */
    uint64_t rules[RULE_MAX];     /* cell decisions each rule shaped */
    uint64_t reasons[REASON_MAX]; /* cell decisions by outcome ("act", "already-local", ...) */
    uint64_t actions[METRICS_ACTION_MAX];
    uint64_t skips[METRICS_SKIP_MAX];
    uint64_t errors[METRICS_ERR_MAX];
    metrics_histogram pass_seconds;
    unsigned conflicts; /* CONFLICT_* found at start (conflicts.h) */
    uint64_t log_suppressed;
    uint64_t libvirt_calls[VIRT_CALL_MAX]; /* virt_call_counts() */
    /* the mover (mover_get_stats) */
    double mover_busy_s;       /* its threads' time in windows */
    unsigned mover_orders;     /* cells with an order queued */
    uint64_t mover_left_bytes; /* what they still plan to move */
} metrics_host;

const char *metrics_skip_name(metrics_skip s);
const char *metrics_error_name(metrics_error e);
const char *metrics_action_name(metrics_action a);

/* Count one decision record's action by its name ("acted", ...); unknown names are ignored. */
void metrics_count_action(metrics_host *h, const char *action);

/* Count the cell decisions of one planned domain: outcome and every rule named. */
void metrics_count_plan(metrics_host *h, const plan_domain *pd);

/* Add one pass duration (seconds) to the histogram. */
void metrics_observe(metrics_histogram *hist, double seconds);

/*
 * Escape `in` as a label value (without the quotes) into out (always
 * NUL-terminated, truncated at a character boundary when out is too small).
 * Returns the length written.
 */
size_t metrics_escape_label(const char *in, char *out, size_t len);

/*
 * The whole exposition: host metrics, then per-domain and per-cell ones for the
 * `nr` tracked domains (node labels are the kernel's node numbers from t).
 * `now_mono` is the monotonic time that hint ages are measured against.
 * Returns 0 and a malloc()ed text in *ret_text, or -ENOMEM.
 */
int metrics_render(const metrics_host *h, const topology *t, dom_state *const *doms, size_t nr,
                   double now_mono, char **ret_text);

/*
 * Write `text` to `path` atomically: PATH.tmp (mode 0644, so node-exporter's
 * user can read it and nobody else can write it whatever the umask; created
 * afresh with O_EXCL, so a symlink or hard link planted there is replaced, not
 * written through), then rename over PATH. The temporary
 * name does not end in ".prom", so the textfile collector never reads it.
 * Returns 0 or -errno (the temporary file is removed on failure).
 */
int metrics_write_file(const char *path, const char *text);
