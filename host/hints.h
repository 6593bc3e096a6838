/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest hints into the decide stage's input: the hot guest-physical ranges a
 * vnuma-agent reported become each cell's hot ranges (moved first), and
 * processes whose threads ran on vCPUs of several cells make their memory
 * shared between those cells (rule 3's caveat: shared memory waits for the
 * two-stage filter) and pull the cells together (the objective's sharing term).
 * Pure: no I/O.
 */
#pragma once

#include "carried.h"
#include "model.h"
#include "proto.h"
#include "state.h"

/* Sharing weight between two cells that a process spans. */
#define HINT_SHARE_WEIGHT 0.6
/* Hints older than this many balancing intervals are ignored. */
#define HINT_MAX_AGE_INTERVALS 3.0
/* A domain whose live XML has the agent's channel waits at most this many of its first passes,
 * and at least HINT_AWAIT_S of them, for the agent's first hint set before its memory moves (a
 * cold start: the hot set goes home first); its vCPUs are placed meanwhile. The agent primes its
 * first set (agent/README.md): in a TCG guest its first reply took 20 s in the proving ground. */
#define HINT_AWAIT_PASSES 3
#define HINT_AWAIT_S      30.0

/* The passes a young domain waits for its agent's first hint set at this interval. */
static inline unsigned hints_await_passes(double interval_s)
{
    unsigned by_time = interval_s > 0 ? (unsigned)(HINT_AWAIT_S / interval_s + 0.999) : 0;

    return by_time > HINT_AWAIT_PASSES ? by_time : HINT_AWAIT_PASSES;
}

/*
 * Add the hint set's ranges and sharing to the cells of *sd (which must not
 * carry hints yet). Ranges go to the cell whose RAM (ram[], guest-physical)
 * holds their start; a range outside every cell is ignored. Returns 0 or -ENOMEM.
 */
int hints_apply(const proto_hints *h, const ram_range *ram, unsigned nr_ram, snap_domain *sd);

/* The seq hints_follow() gets for the ranges a domain carried from its source host: never an
 * agent's (its sets count from 1), the same every pass (no new set came). */
#define HINTS_CARRIED_SEQ UINT64_MAX

/*
 * The hot ranges a domain carried from its source host's last decision (carried.h) into the
 * cells of *sd (which must not carry hints yet), by cell id; a range whose start is not in
 * that cell's RAM (ram[], guest-physical) is ignored. No sharing between cells (the record
 * says only which ranges were shared). Returns 0 or -ENOMEM.
 */
int hints_apply_carried(const carried_info *ci, const ram_range *ram, unsigned nr_ram,
                        snap_domain *sd);

/*
 * Rule 3's two-stage filter on hot ranges (after hints_apply, with the hint set's seq): a range
 * of the hint set gets `agree`, the number of sets before it in a row that had it hot too
 * (overlapping a range of the last set followed), and its heat smoothed with theirs; a range of
 * the last set that nothing overlaps now stays one more set, `fading` (not hot enough to move,
 * not cold enough to demote); one absent twice is cold. The same hint set again (no new one came)
 * gives the same ranges. sc keeps the ranges followed (the hottest HINT_PREV_MAX of the domain). 0
 * or -ENOMEM.
 */
int hints_follow(snap_domain *sd, uint64_t seq, dom_sample_cache *sc);
