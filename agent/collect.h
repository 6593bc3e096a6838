/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect: one collection of the guest's hint set. Picks the top processes
 * by runtime delta (/proc/PID/stat utime+stime), finds the vCPUs their
 * threads ran on recently (/proc/PID/task/TID/stat "processor"), and scans
 * their memory within the host's budget (scan.c). The result is the agent's
 * own hint set; serve.c turns it into the protocol's.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"
#include "scan.h"

/* Limits of one hint set (the protocol's limits are checked again by its encoder). */
#define AG_HINT_MAX_PROCS  32
#define AG_HINT_MAX_VCPUS  64
#define AG_HINT_MAX_RANGES 32
/* Processes whose scan state is remembered (beyond the ones reported). */
#define AG_MAX_TRACKED 64
/* Processes looked at per collection at most (their stat files). */
#define AG_MAX_PIDS 8192
/* A remembered process not picked for this many collections is forgotten. */
#define AG_FORGET_AFTER 16

/* Defaults when the host asks for nothing else. */
#define AG_DEFAULT_INTERVAL_MS   2000
#define AG_DEFAULT_MAX_PROCESSES 8
#define AG_DEFAULT_BUDGET_MIB    256
#define AG_MIN_INTERVAL_MS       100
/* The first request of a session: the window between the priming collection and the one
 * reported (collector_prime). */
#define AG_PRIME_MS        1000
#define AG_MAX_INTERVAL_MS 600000

typedef struct collect_cfg {
    uint32_t interval_ms;
    uint32_t max_processes;
    uint32_t scan_budget_mib;
} collect_cfg;

typedef struct ag_proc_hint {
    pid_t pid;
    char comm[17];
    double cpu_share; /* of one CPU over the last window */
    uint32_t nr_vcpus;
    uint32_t vcpus[AG_HINT_MAX_VCPUS]; /* ascending */
    uint64_t node_pages[AG_MAX_NODES]; /* nr_nodes entries used */
    uint32_t nr_ranges;
    scan_range ranges[AG_HINT_MAX_RANGES];
} ag_proc_hint;

typedef struct ag_hints {
    uint64_t seq;
    uint64_t uptime_ms;
    unsigned nr_nodes;
    uint32_t nr_procs;
    ag_proc_hint procs[AG_HINT_MAX_PROCS];
} ag_hints;

typedef struct ag_task_seen {
    pid_t tid;
    uint64_t ticks;
} ag_task_seen;

typedef struct ag_tracked {
    scan_proc *scan;
    uint32_t last_picked; /* collector seq */
    uint32_t nr_tasks;
    ag_task_seen tasks[AG_MAX_THREADS];
} ag_tracked;

typedef struct ag_pid_ticks {
    pid_t pid;
    uint64_t starttime, ticks;
} ag_pid_ticks;

typedef struct collector {
    const char *root;
    const scan_ops *ops;
    scan_heat heat;
    unsigned nr_nodes, nr_cpus;
    pid_t self;
    uint64_t seq;
    uint64_t last_ms; /* monotonic ms of the previous collection, 0 before the first */
    size_t nr_prev;
    ag_pid_ticks *prev; /* sorted by pid */
    ag_tracked tracked[AG_MAX_TRACKED];
    scan_stats last_stats;
    bool priming; /* collector_prime() runs: the collection only primes the heat */
} collector;

/* Set up for root ("" for /), with heat method `heat`. 0 or -errno. */
int collector_init(collector *c, const char *root, const scan_ops *ops, scan_heat heat);
void collector_free(collector *c);

/* Clamp a host request into the agent's limits (interval and process count 0 take the
 * defaults; a budget of 0 means no memory scan). */
collect_cfg collect_cfg_clamp(collect_cfg in);

/*
 * One collection at monotonic time now_ms: writes the hint set into *out
 * (seq increases by one per call). 0 or -errno (only when /proc is unreadable).
 */
int collector_run(collector *c, const collect_cfg *cfg, uint64_t now_ms, ag_hints *out);

/*
 * The first collection of a session: it primes the heat (soft-dirty cleared, sampled pages
 * marked idle) and reports nothing of it, so that the next collector_run(), a short window later,
 * tells hot from cold (without it the first hint set calls every page written since the process
 * began hot). Each process's windows are walked again by that next collection. 0 or -errno.
 */
int collector_prime(collector *c, const collect_cfg *cfg, uint64_t now_ms);
