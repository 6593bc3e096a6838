/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's insides, shared by its modules and by no one else:
 *   daemon.c    the loop, the connection to libvirtd, timers, signals, reload, daemon_main
 *   domains.c   which domains are tracked (opt-in, opt-out, restore) and their agent link
 *   pass.c      one balancing pass: sample -> decide -> act, per domain
 *   publish.c   the record of a pass: history, journal, QEMU, metadata, log, metrics file
 *   commands.c  the answers to vnumactl
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "act.h"
#include "control.h"
#include "hostload.h"
#include "metrics.h"
#include "model.h"
#include "numa_ops.h"
#include "record.h"
#include "state.h"
#include "topology.h"
#include "virt.h"

#define MAX_DOMAINS SNAP_MAX_DOMAINS

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
    bool moves_pending; /* the last pass stopped moving at its deadline with moves left */
    control_server *ctl;
    int sigfd, sig_watch;
    bool quit;
    FILE *journal;
    metrics_host stats;              /* counters for the metrics (host/metrics.h) */
    host_load load[2];               /* /proc/stat at the last two passes (hostload.h) */
    unsigned load_cur;               /* which of load[] is the newest */
    double other_busy[VN_MAX_NODES]; /* the last pass's other load per node, as logged */
    /* this host's machine id (daemon.c read_host_id), stamped on the originals vnumad saves
     * so that another host recognises them ("" unknown) */
    char host_id[SNAP_UUID_MAX];
    /* the blocking per-domain work of a pass runs on these threads (pass.c, workers.h) */
    struct workers *pool;
    int pool_watch, tick_timer;
    bool in_pass;          /* a pass runs: the loop iterates inside it while works are out */
    bool pass_again;       /* a pass was asked for while one ran */
    unsigned waiting;      /* works the running pass waits for */
    bool reload_due;       /* SIGHUP came during a pass: reload after it */
    bool pinned_in_window; /* vnumad re-pinned vCPUs since the last other-load reading */
    /* events' reads of domains out on the workers (domains.c consider_later); the
     * connection stays while any is out */
    struct consider_work *considering;
    unsigned nr_considering;
} vnumad;

/* ---- daemon.c ---- */

/* A pass soon (event_delay): something that matters for balancing changed. */
void daemon_pass_soon(vnumad *dm);

/* ---- domains.c ---- */

/* The tracked domain with this uuid (or name), or NULL. */
dom_state *domains_find(vnumad *dm, const char *uuid);
dom_state *domains_find_by_name(vnumad *dm, const char *name);

/* Free a domain's state and close its agent link; NULL-safe. Does not untrack it. */
void domains_state_free(dom_state *st);

/* Stop tracking st and free it (nothing is restored). */
void domains_forget(vnumad *dm, dom_state *st);

/* Read a running domain's <balancer> element and track, update, restore or drop it; true
 * when something that matters for balancing changed. */
bool domains_consider(vnumad *dm, const char *uuid);
/* The same for an event, with the libvirt reads on a worker thread and the rest on the loop
 * when they are back (a pass soon if something changed). */
void domains_consider_later(vnumad *dm, const char *uuid);
/* Drop the cached XML / vCPU threads / RAM layout (DOM_STALE_*), or mark them while busy. */
void domains_stale(dom_state *st, unsigned what);
/* The domain's deferred read (st->reconsider, pass.c), as the arrival asked for. */
bool domains_reconsider(vnumad *dm, dom_state *st);
/* An event for the domain (it stopped): a read of it still out is stale, read again. */
void domains_consider_stale(vnumad *dm, const char *uuid);
/* Runs the loop until no read is out, or timeout_s (shutdown). */
void domains_consider_drain(vnumad *dm, double timeout_s);

/* domains_consider() of a domain that arrives by live migration: its live pins and the
 * originals in its metadata are the other host's, never put back here (domains.c). While
 * the migration runs (`finished` false: libvirt holds the domain) nothing is written; once
 * it finished, this host's originals are taken and written. */
bool domains_arrived(vnumad *dm, const char *uuid, bool finished);

/* After (re)connecting: forget what no longer runs, consider every running domain. */
void domains_resync(vnumad *dm);

/* Give the domain its original pinning and binding back (if vnumad changed them) and
 * record "restored" with reason `why`. */
void domains_restore(vnumad *dm, virt_dom *d, dom_state *st, const char *why);

/* Open the guest agent channel when the guest has the port open and none is open yet. */
void domains_agent_connect(vnumad *dm, dom_state *st);
/* placement='auto' warned once, from the live XML a sample read (no read of its own). */
void domains_check_placement(dom_state *st);

/* Close the agent channel and forget its hints; NULL-safe on a state without one. */
void domains_agent_drop(dom_state *st);

/* ---- pass.c ---- */

/* Per-domain work of a pass is given up after this long (seconds; at least the interval):
 * the domain is skipped as not answering and the pass goes on. */
#define PASS_DOMAIN_TIMEOUT_MIN_S 5.0
/* Worker threads, and how many more stand in for works that do not return. Below libvirtd's
 * max_client_requests (5 per client): one connection, at most PASS_WORKERS calls at once
 * from works that answer. */
#define PASS_WORKERS       4
#define PASS_WORKERS_EXTRA 32

/* Start the worker threads and watch them from the loop. 0 or -errno. */
int pass_init(vnumad *dm);
/* Release a domain's hold (busy) taken by the pass or a work: a forgotten domain is freed,
 * one whose <balancer> changed meanwhile is considered again. */
void pass_release(vnumad *dm, dom_state *st);
/* fn(dm) as a pass would run it: the records it writes are waited for (each at most the
 * domain timeout). For the restore at exit. */
void pass_drain(vnumad *dm, void (*fn)(vnumad *dm));
/* The record (JSON, for pass and time) into QEMU and the live metadata, on a worker (it
 * blocks on the domain); during a pass, the pass waits for it. */
void pass_write_record(vnumad *dm, virt_dom *d, dom_state *st, const char *json, uint64_t pass,
                       const char *time);

/* One balancing pass over the tracked domains (nothing while disconnected), timed, then
 * the metrics file published. */
void pass_run(vnumad *dm);

/* ---- publish.c ---- */

/* The record of one domain in one pass, everywhere it goes: history, journal, log line,
 * action counters, and (d not NULL) the QEMU object and the live metadata. */
void publish_record(vnumad *dm, virt_dom *d, dom_state *st, const record_ctx *rc,
                    const plan_domain *pd, const act_result *res);

/* publish_record() of a record with no plan: this pass, now, `action` for `reason`. */
void publish_record_simple(vnumad *dm, virt_dom *d, dom_state *st, const char *action,
                           const char *reason);

/* Write the originals and (json not NULL) the record into the live metadata; 0, or -1 when
 * it could not be written (logged; the callers count it). */
int publish_metadata(virt_dom *d, dom_state *st, uint64_t pass, const char *time, const char *json);

/* The record into QEMU (use_qmp) and the live metadata, on a worker (pass_write_record);
 * 0, or -1 when the metadata could not be written. */
int publish_write(virt_dom *d, dom_state *st, bool use_qmp, const char *json, uint64_t pass,
                  const char *time);

/* Open (create) state_dir/journal.jsonl for appending into dm->journal; 0 or -errno. */
int publish_open_journal(vnumad *dm);

/* The metrics exposition (host/metrics.c) of the current state, or NULL (out of memory);
 * the caller frees it. */
char *publish_metrics_text(vnumad *dm);

/* After every pass: flush suppressed log lines, write the metrics file (if configured). */
void publish_metrics(vnumad *dm);

/* ---- commands.c ---- */

/* The vnumactl commands, for control_open() with the vnumad as opaque. */
extern const control_command commands_table[];
