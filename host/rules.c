/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The balancing rules (../shared/RULES.md). Pure functions: no I/O, no clock,
 * no globals. Each says why it exists; the seeds are the kernel threads the
 * rule was learned from.
 */
#include "rules.h"

#include "util.h"

/*
 * Rule 1 (seed 004, mainline build_sched_domains()): how many busy tasks a
 * node may hold before the balancer spreads them to other nodes. With one LLC
 * per node, an eighth of the node's CPUs (tasks that talk to each other stay
 * together); with several LLCs (AMD Zen), one task per LLC, so independent
 * tasks do not share a cache while another node has idle ones (STREAM +300%
 * with the LLC-aware form; the earlier 25%-of-CPUs form cost tiobench 26%).
 */
unsigned rule_imb_numa_nr(unsigned node_cpus, unsigned nr_llc)
{
    unsigned imb;

    if (nr_llc <= 1)
        imb = node_cpus / IMB_CPUS_PER_TASK;
    else
        imb = nr_llc;
    return VN_MAX(1u, imb);
}

/*
 * Rule 1, the decision itself (mainline adjust_numa_imbalance()): a lightly
 * loaded destination (dst_running <= imb_numa_nr) keeps a small imbalance, so
 * a communicating pair is not pulled apart; past imb_numa_nr, balance for real.
 */
int rule_adjust_numa_imbalance(int imbalance, int dst_running, int imb_numa_nr)
{
    if (dst_running > imb_numa_nr)
        return imbalance;
    if (imbalance <= NUMA_IMBALANCE_MIN)
        return 0;
    return imbalance;
}

int rule_binding_single_node(const vn_mem_binding *b)
{
    return nodeset_single(&b->nodes);
}

/*
 * Rule 2 (seed 002, Libo Chen; Chen Yu's refinement): memory bound to exactly
 * one node cannot move, so sampling or migrating it is pure overhead (6x on a
 * pinned JVM, +20% on a 30-vCPU guest). Only strict and restrictive bindings
 * confine memory; preferred and interleave do not. The refinement: the vCPUs
 * may still be brought to that node when they are allowed there and run
 * elsewhere; otherwise the cell is skipped entirely.
 */
rule_cpuset_verdict rule_cpuset_skip(const vn_mem_binding *b, bool vcpus_can_follow,
                                     bool vcpus_elsewhere, int *bound_node)
{
    int node;

    if (b->mode != VN_MEM_STRICT && b->mode != VN_MEM_RESTRICTIVE)
        return CPUSET_NOT_BOUND;
    node = rule_binding_single_node(b);
    if (node < 0)
        return CPUSET_NOT_BOUND;
    *bound_node = node;
    if (vcpus_can_follow && vcpus_elsewhere)
        return CPUSET_MOVE_VCPUS;
    return CPUSET_SKIP_ALL;
}

/*
 * Rule 3 (seed 003, Mel Gorman): memory a new task touches should go local at
 * once; later a page moves only when two consecutive observations agree (the
 * kernel's last_cpupid filter) so it does not ping-pong. A domain counts as new
 * for its first `early_passes` passes or until it has a preferred node. Memory
 * that hints show shared between cells never takes the early path (Srikar's
 * counter-example: shared memory spread too early).
 */
rule_migrate_verdict rule_migrate_filter(unsigned age_passes, unsigned early_passes,
                                         int preferred_node, int last_candidate, int target,
                                         bool shared)
{
    bool early = age_passes < early_passes || preferred_node < 0;

    if (early && !shared)
        return MIGRATE_NOW_EARLY;
    if (last_candidate == target)
        return MIGRATE_NOW_FILTER;
    return MIGRATE_WAIT;
}

/*
 * Rule 5 (seed 001): walking numa_maps/smaps holds the target's mmap_lock for
 * the whole walk, and its page faults queue behind it. Query in windows of at
 * most LOCK_HOLD_MAX_PAGES pages, and on large regions sample one page every
 * stride so the number of windows per pass stays bounded.
 */
rule_walk rule_lock_hold_walk(uint64_t region_pages)
{
    const uint64_t max_sampled = (uint64_t)LOCK_HOLD_MAX_PAGES * LOCK_HOLD_MAX_QUERIES_PER_CELL;
    rule_walk w = {.window_pages = LOCK_HOLD_MAX_PAGES, .stride_pages = 1, .nr_windows = 0};
    uint64_t sampled;

    if (region_pages == 0)
        return w;
    if (region_pages > max_sampled)
        w.stride_pages = (region_pages + max_sampled - 1) / max_sampled;
    sampled = (region_pages + w.stride_pages - 1) / w.stride_pages;
    if (sampled < w.window_pages)
        w.window_pages = (uint32_t)sampled;
    w.nr_windows = (uint32_t)((sampled + w.window_pages - 1) / w.window_pages);
    return w;
}

uint64_t rule_lock_hold_page(const rule_walk *w, uint64_t region_pages, uint64_t seed, uint64_t k)
{
    uint64_t first = k * w->stride_pages, span, z;

    if (w->stride_pages <= 1)
        return k;
    span = VN_MIN(w->stride_pages, region_pages - first);
    /* splitmix64 of (seed, k) */
    z = seed + (k + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return first + z % span;
}
