/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's context: the one struct the daemon (daemon.c) owns and hands down to the floors
 * below it, the pass (pass.c), domain tracking (domains.c), publishing (publish.c) and the
 * answers to vnumactl (commands.c). Data only: each floor's functions are in its own header.
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
#include "stopkind.h"
#include "topology.h"
#include "virt.h"

#define MAX_DOMAINS SNAP_MAX_DOMAINS
/* libvirt connections at once (a KubeVirt node's pods: the kubelet's default is 110) */
#define CONNS_MAX 256

typedef struct vnumad {
    daemon_config cfg;
    const char *config_path;
    struct host_policy *policy; /* default_mode and policy_dir's rules (hostpolicy.h) */
    topology *topo;
    const numa_ops *numa;
    /* where the host's /proc/stat and /sys are read ("/"; a test's fake host: its tree) */
    const char *root;
    /* the libvirt connections, one per uri line or socket a glob in one matches (conns.h);
     * conns.c owns them */
    struct conn_slot *conns[CONNS_MAX];
    unsigned nr_conns;
    unsigned next_conn_id;
    int conns_timer;
    double conns_scanned_s; /* when the socket globs were last looked through */
    int pass_timer;
    int soon_timer;
    bool pass_due; /* an event asked for a pass soon (soon_timer runs) */
    uint64_t pass;
    dom_state *doms[MAX_DOMAINS];
    size_t nr_doms;
    /* guest memory moves: the host's queue, worked by its own threads (mover.h) */
    struct mover *movers;
    control_server *ctl;
    int sigfd, sig_watch;
    bool quit;
    /* the exit is a restart (systemd's restart job, `vnumactl stop --keep`): every domain keeps
     * its placement and its saved originals; nothing is restored (stopkind.h) */
    bool exit_keeps;
    /* `vnumactl pause --all`: no domain is sampled, pinned or moved until `resume --all`;
     * nothing is restored; kept across restarts as state_dir/paused (commands.c) */
    bool host_paused;
    stop_kind (*stop_kind)(char *why, size_t len); /* asked at SIGTERM; NULL: never */
    struct journal_file *journal;    /* state_dir/journal.jsonl (journal.h); NULL: not open */
    metrics_host stats;              /* counters for the metrics (host/metrics.h) */
    host_load load[2];               /* /proc/stat at the last two passes (hostload.h) */
    unsigned load_cur;               /* which of load[] is the newest */
    double other_busy[VN_MAX_NODES]; /* the last pass's other load per node, as logged */
    /* busy CPUs per node once the last pass's plan is carried out: the other load over every
     * CPU of the host (not only the balanced domains' CPUs) and every planned cell's busy
     * vCPUs on its node (pass.c), what an incoming domain meets (place.c) */
    double node_load[VN_MAX_NODES];
    double other_all[VN_MAX_NODES]; /* the last pass's other load over every CPU (hostload.h) */
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
    /* room promised to domains placed before they arrive (the qemu hook's `place`), counted
     * as used by every later placement and pass until they arrived (promise.h) */
    struct promise_table *promises;
    /* events' reads of domains out on the workers (domains.c consider_later); the
     * connection stays while any is out */
    struct consider_work *considering;
    unsigned nr_considering;
    /* What a floor below asks of one above, handed down at start, never called back by name
     * (docs/ARCHITECTURE.md "Floors"): a pass soon, after event_delay (daemon.c: domains.c
     * asks it when an event changed something), and a record's write into QEMU and the live
     * metadata on a worker, which the running pass waits for (pass.c: publish.c submits it). */
    void (*pass_soon)(struct vnumad *dm);
    void (*submit_write)(struct vnumad *dm, virt_dom *d, dom_state *st, const char *json,
                         uint64_t pass, const char *time);
} vnumad;
