/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mover (mover.c): one host-wide queue of guest memory moves, worked continuously by its
 * own threads, window by window (move_window_run), across every domain at once. The act stage
 * of a pass gives it each cell's order (the spans of act_move_plan) and returns: the loop,
 * sampling and the control socket never wait for it. A new order for a cell replaces what was
 * queued for it, so no stale target is ever moved to. One token bucket for the host (and one
 * per domain with its own rate_mib) charges what moved; every window checks the target's room
 * first (above the span's reserve), and a cell's spans to a target without room stop there
 * until the next order, while its spans to another node (a lower tier) go on. What it did is taken
 * by the pass (mover_take) for the records, the counters and the refused ranges the sample needs.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "move_window.h"
#include "numa_ops.h"
#include "topology.h"

typedef struct mover mover;

#define MOVER_MAX_SPANS 64 /* spans of one cell's order at most (act_move_plan) */

/* What the mover is to do for one guest cell: the plan's spans and where they go. */
typedef struct mover_order {
    const char *uuid; /* the domain */
    const char *name; /* for its log lines and test holds */
    unsigned cell;    /* guest cell id */
    pid_t pid;        /* its QEMU */
    unsigned ram_gen; /* the sample's RAM layout the spans are of (dom_sample_cache) */
    const move_span *spans;
    unsigned nr_spans; /* 0: nothing to move any more (what was queued goes) */
    unsigned nr_moves; /* the plan's moves the spans serve */
    uint32_t batch;    /* pages a window covers at most */
    double priority;   /* the plan's gain (points): higher goes first */
    unsigned rate_mib; /* the domain's own limit (rate_mib); 0: the host's only */
} mover_order;

/* What the mover did for a domain's cells since the last mover_take(). */
typedef struct mover_cell_progress {
    uint64_t bytes_moved, pages_moved, pages_unmovable, queries;
    uint64_t bytes_left; /* of the cell's order still queued (an estimate: the plan's bytes) */
    bool queued;         /* an order of the cell is still queued */
    bool reserve_hit;    /* the target had no room: the rest waits for the next order */
} mover_cell_progress;

typedef struct mover_progress {
    mover_cell_progress cells[SNAP_MAX_CELLS_PER_DOMAIN];
    uint64_t refused; /* ranges (bit per ram[] index) whose pages would not move at all */
    unsigned ram_gen; /* ... of this RAM layout */
} mover_progress;

/* Start the mover: threads_min to threads_max threads working windows at once (at least 1;
 * threads_min until mover_fit_threads says more CPUs are idle), the host's rate limit in MiB/s.
 * 0 or -errno. */
int mover_start(mover **ret, const topology *t, const numa_ops *ops, unsigned threads_min,
                unsigned threads_max, unsigned rate_mib);
/*
 * How many threads work windows at once from now: as many as idle_cpus (the idle CPUs vnumad
 * may run on, over the last pass) and the CPUs the mover itself kept busy since the last call
 * add up to, whole, within threads_min..threads_max. A host with idle cores moves with more;
 * a busy one never with fewer than threads_min. Returns the number.
 */
unsigned mover_fit_threads(mover *m, double idle_cpus);
/* Stop it: every order dropped, the threads joined (a window in flight ends first). */
void mover_stop(mover *m);
void mover_set_rate(mover *m, unsigned rate_mib);

/* Replace what is queued for the order's cell with it. 0 or -ENOMEM. */
int mover_order_cell(mover *m, const mover_order *o);
/* Drop every order of the domain and forget it (opt-out, stopped, gone); returns once no
 * window of it is in flight. A NULL mover (stopped) has nothing. */
void mover_forget(mover *m, const char *uuid);
/* Drop the domain's orders (paused, a libvirt job on it, a permanent error), keeping what it
 * knows of it; a window in flight ends on its own. Never waits. */
void mover_drop(mover *m, const char *uuid);

/* Drop the order of each of the domain's cells (by guest cell id) that has a span still to
 * move to a node (index) outside nodes[cell] (NULL: keep the cell's order): a
 * pass that decided the cells' places again without acting (nothing new to pin) must not leave
 * them moving to where it decided against. One lookup of the domain for all its cells. */
void mover_keep_to(mover *m, const char *uuid,
                   const vn_nodeset *const nodes[SNAP_MAX_CELLS_PER_DOMAIN]);

/* What it did for the domain since the last take (zeros for a domain it does not know). */
void mover_take(mover *m, const char *uuid, mover_progress *ret);
/* The refused ranges of the domain's RAM layout ram_gen (0 when it is another layout's). */
uint64_t mover_refused(mover *m, const char *uuid, unsigned ram_gen);

/* The mover as status and the metrics show it. */
typedef struct mover_stats {
    unsigned orders;      /* cells with an order queued */
    unsigned in_flight;   /* windows being worked now */
    uint64_t bytes_left;  /* what they still plan to move */
    uint64_t bytes_moved; /* since the start */
    double busy_s;        /* thread time spent in windows since the start */
    unsigned threads;     /* working windows at once at most (mover_fit_threads) */
    double rate;          /* bytes/s over the last seconds of moving; 0 while idle */
} mover_stats;
void mover_get_stats(mover *m, mover_stats *ret);

/* Bytes still queued for each of the domain's cells (by guest cell id), 0 for none. */
void mover_cells_left(mover *m, const char *uuid, uint64_t left[SNAP_MAX_CELLS_PER_DOMAIN]);

/* Wait until nothing is queued or in flight (tests); false after timeout_s of real time. */
bool mover_wait_idle(mover *m, double timeout_s);
