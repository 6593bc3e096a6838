/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The five balancing rules of ../shared/RULES.md, one small pure function
 * each, with their thresholds as named constants. The decide stage (and the
 * samplers, for rules 4 and 5) call these; nothing else re-implements them.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "scanrule.h"

/* ---- Rule 1: allowed NUMA imbalance (mainline adjust_numa_imbalance) ---- */

/* A node with one LLC tolerates node_cpus / IMB_CPUS_PER_TASK busy tasks. */
#define IMB_CPUS_PER_TASK 8
/* An imbalance this small is a communicating pair: leave it alone. */
#define NUMA_IMBALANCE_MIN 2

/*
 * imb_numa_nr of a node with `node_cpus` CPUs and `nr_llc` LLCs (0 or 1: one
 * LLC): max(1, node_cpus / 8) with one LLC, the LLC count with several.
 */
unsigned rule_imb_numa_nr(unsigned node_cpus, unsigned nr_llc);

/*
 * Mainline adjust_numa_imbalance(): returns the imbalance to act on. While the
 * destination runs at most imb_numa_nr busy tasks, an imbalance up to
 * NUMA_IMBALANCE_MIN is ignored (returns 0).
 */
int rule_adjust_numa_imbalance(int imbalance, int dst_running, int imb_numa_nr);

/* ---- Rule 2: cpuset skip ---- */

typedef enum rule_cpuset_verdict {
    CPUSET_NOT_BOUND,  /* memory not bound to one node: balance normally */
    CPUSET_MOVE_VCPUS, /* bound to one node: move vCPUs there, never sample/move memory */
    CPUSET_SKIP_ALL,   /* bound to one node and vCPUs cannot (or need not) follow: skip */
    CPUSET_MAX,
} rule_cpuset_verdict;

/*
 * Decide rule 2 for a cell whose memory binding is `b`. When b binds memory
 * to exactly one node (strict or restrictive with a one-node set), *bound_node
 * is set to that node index. `vcpus_can_follow`: every vCPU's allowed set
 * contains CPUs of that node; `vcpus_elsewhere`: some vCPU is pinned to or runs
 * on CPUs outside it.
 */
rule_cpuset_verdict rule_cpuset_skip(const vn_mem_binding *b, bool vcpus_can_follow,
                                     bool vcpus_elsewhere, int *bound_node);

/* Index of the only node in a binding's nodeset, or -1 when 0 or several. */
int rule_binding_single_node(const vn_mem_binding *b);

/* ---- Rule 3: early fast migration, later a two-stage filter ---- */

/* Passes during which a new domain's memory follows its vCPUs at once. */
#define EARLY_MIGRATION_PASSES 4

typedef enum rule_migrate_verdict {
    MIGRATE_NOW_EARLY,  /* early in the domain's life: move on first observation */
    MIGRATE_NOW_FILTER, /* two consecutive observations agree: move */
    MIGRATE_WAIT,       /* first observation of this destination: wait a pass */
    MIGRATE_MAX,
} rule_migrate_verdict;

/*
 * May memory of a cell move to `target` now? `age_passes` and
 * `preferred_node` describe the domain, `last_candidate` is the destination
 * proposed for this cell in the previous pass (-1 none), `shared` says the
 * memory is shared with other cells (guest hints): shared memory never takes
 * the early path (Mel Gorman's caveat).
 */
rule_migrate_verdict rule_migrate_filter(unsigned age_passes, unsigned early_passes,
                                         int preferred_node, int last_candidate, int target,
                                         bool shared);

/* ---- Rule 4: disjoint-region scan budget: lib/scanrule.h (the guest agent uses it too) ---- */

/* ---- Rule 5: keep the lock hold short ---- */

/* LOCK_HOLD_MAX_PAGES, the pages one call covers at most: lib/scanrule.h. */
/*
 * Status queries of one cell per pass at most; larger cells are sampled with a stride.
 * 4 x 4096 = 16384 sampled pages a cell: the per-node estimate's standard error is at
 * most 0.4 points (binomial, p = 0.5), so the 2-point bound of docs/benchmarks.md
 * ("Sampling cost") holds with margin, while a pass costs the same for a 64 MiB cell
 * and a 64 GiB one.
 */
#define LOCK_HOLD_MAX_QUERIES_PER_CELL 4

typedef struct rule_walk {
    uint32_t window_pages; /* pages per call, <= LOCK_HOLD_MAX_PAGES */
    uint64_t stride_pages; /* query one page every stride_pages (1: every page) */
    uint32_t nr_windows;   /* calls needed for the whole region */
} rule_walk;

/*
 * How to walk `region_pages` pages without holding the target's mmap_lock for
 * long: bounded windows, and a stride so no more than
 * LOCK_HOLD_MAX_QUERIES_PER_CELL windows are issued per region per pass.
 */
rule_walk rule_lock_hold_walk(uint64_t region_pages);

/*
 * The page sample k of a walk stands for: one page drawn from the stratum
 * [k * stride, (k + 1) * stride) by a hash of (seed, k). Evenly spaced samples would
 * alias with regular placements (an interleave policy puts page i on node i % nodes:
 * every sample of a stride-256 walk would land on one node); one random page per
 * stratum cannot, and its estimate is never worse than uniform random sampling.
 */
uint64_t rule_lock_hold_page(const rule_walk *w, uint64_t region_pages, uint64_t seed, uint64_t k);
