/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage: wide cells (rule `wide-cell`), more busy vCPUs than any node they may
 * use has cores for (decide_priv.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "decide_priv.h"
#include "rules.h"
#include "util.h"

/* The most busy vCPUs node n may still take for a cell (cores it may use less the load
 * already placed there), never below zero. */
static double node_room_busy(const topology *t, const cell_view *cv, const pass_state *ps,
                             unsigned n)
{
    return VN_MAX(0.0, dcell_capacity(t, cv, n) - ps->load[n]);
}

/* Whether the cell's vCPUs are spread over several nodes, each pinned within one (what
 * dwide_decide() leaves). */
static bool cell_spread(const topology *t, const snap_cell *cell)
{
    int first = -1;
    bool several = false;

    for (unsigned i = 0; i < cell->nr_vcpus; i++) {
        int n = -1;
        for (unsigned k = 0; k < t->nr_nodes && n < 0; k++)
            if (cpuset_subset(&cell->vcpus[i].pinned, &t->nodes[k].cpus))
                n = (int)k;
        if (n < 0)
            return false;
        if (first < 0)
            first = n;
        else if (n != first)
            several = true;
    }
    return several;
}

/*
 * A wide cell: more busy vCPUs than any node it may use has cores for, load aside. One
 * already spread stays wide while it is within CAPACITY_ENTER_MARGIN of that: a vCPU that
 * reads idle for a pass does not cram the cell onto one node (and its memory back).
 */
bool dwide_is_wide(const topology *t, const cell_view *cv, const node_cost costs[])
{
    double most = 0;

    if (cv->busy <= 0 || cv->cell->nr_vcpus == 0)
        return false;
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (costs[n].feasible)
            most = VN_MAX(most, dcell_capacity(t, cv, n));
    if (most > 0 && cell_spread(t, cv->cell))
        most -= CAPACITY_ENTER_MARGIN;
    return most > 0 && cv->busy > most;
}

/* Node index of the span a vCPU's current pin lies in, or -1. */
static int vcpu_span_node(const topology *t, const snap_vcpu *v, const unsigned span[],
                          unsigned nr_span)
{
    for (unsigned i = 0; i < nr_span; i++)
        if (cpuset_subset(&v->pinned, &t->nodes[span[i]].cpus))
            return (int)span[i];
    return -1;
}

/*
 * A wide cell (dwide_is_wide()) spans the fewest, nearest nodes that hold its busy vCPUs, as
 * ESXi splits a wide VM into NUMA clients: from the cheapest node `seed`, nodes are added
 * by distance (then by room) until their spare cores hold the busy vCPUs. Each vCPU is
 * pinned to one node of the span (one already there stays), busy ones within each node's
 * spare cores; memory follows the vCPUs: each span node should hold the share of the cell's
 * memory that its share of the cell's vCPUs asks for, and what is above that share elsewhere
 * moves there (the guest sees one node: its memory is used by all its vCPUs alike).
 */
int dwide_decide(const topology *t, const snap_domain *d, const vn_config *c, const cell_view *cv,
                 pass_state *ps, const node_cost costs[], int seed, vn_rules why, plan_cell *pc)
{
    const snap_cell *cell = cv->cell;
    unsigned span[VN_MAX_NODES], nr_span = 0;
    double quota[VN_MAX_NODES] = {0}, held = 0, on[VN_MAX_NODES] = {0}, total_w = 0;
    int assigned_stack[SNAP_MAX_VCPUS_PER_CELL];
    vn_nodeset span_mask = {.nw = 0};

    span[nr_span++] = (unsigned)seed;
    nodeset_set(&span_mask, (unsigned)seed);
    held = node_room_busy(t, cv, ps, (unsigned)seed);
    /* a cell spread already keeps the nodes its vCPUs are on while it stays wide */
    bool spread = cell_spread(t, cell);
    for (unsigned i = 0; spread && i < cell->nr_vcpus; i++)
        for (unsigned n = 0; n < t->nr_nodes; n++)
            if (!nodeset_isset(&span_mask, n) && costs[n].feasible &&
                cpuset_subset(&cell->vcpus[i].pinned, &t->nodes[n].cpus)) {
                span[nr_span++] = n;
                nodeset_set(&span_mask, n);
                held += node_room_busy(t, cv, ps, n);
            }
    while (held < cv->busy) {
        int next = -1;
        for (unsigned n = 0; n < t->nr_nodes; n++) {
            /* a node without a spare core holds none of the busy vCPUs: not in the span */
            if (!costs[n].feasible || nodeset_isset(&span_mask, n) ||
                node_room_busy(t, cv, ps, n) < 1)
                continue;
            if (next < 0 ||
                topo_distance(t, (unsigned)seed, n) <
                    topo_distance(t, (unsigned)seed, (unsigned)next) ||
                (topo_distance(t, (unsigned)seed, n) ==
                     topo_distance(t, (unsigned)seed, (unsigned)next) &&
                 node_room_busy(t, cv, ps, n) > node_room_busy(t, cv, ps, (unsigned)next)))
                next = (int)n;
        }
        if (next < 0)
            break;
        span[nr_span++] = (unsigned)next;
        nodeset_set(&span_mask, (unsigned)next);
        held += node_room_busy(t, cv, ps, (unsigned)next);
    }
    for (unsigned i = 0; i < nr_span; i++)
        quota[span[i]] = VN_MAX(1.0, floor(node_room_busy(t, cv, ps, span[i]) + 1e-9));

    /* vCPUs to nodes: fixed ones where they are; busy ones already on a span node stay
     * while it has room; then the other busy ones, then the idle ones, fill in span order */
    for (unsigned i = 0; i < cell->nr_vcpus && i < SNAP_MAX_VCPUS_PER_CELL; i++)
        assigned_stack[i] = -1;
    for (int round = 0; round < 4; round++) {
        unsigned rr = 0;
        for (unsigned i = 0; i < cell->nr_vcpus && i < SNAP_MAX_VCPUS_PER_CELL; i++) {
            const snap_vcpu *v = &cell->vcpus[i];
            bool busy = dcell_vcpu_busy(v, c);
            int cur = vcpu_span_node(t, v, span, nr_span);
            if (assigned_stack[i] >= 0)
                continue;
            if (round == 0 && v->fixed) {
                assigned_stack[i] = cur >= 0 ? cur : seed;
            } else if (round == 1 && busy && cur >= 0 && quota[cur] >= 1) {
                assigned_stack[i] = cur;
            } else if (round == 2 && busy) {
                /* the first span node with a spare core, else the one least over */
                int best_n = -1;
                for (unsigned k = 0; k < nr_span && best_n < 0; k++)
                    if (quota[span[k]] >= 1)
                        best_n = (int)span[k];
                for (unsigned k = 0; k < nr_span && best_n < 0; k++)
                    if (k == 0 || quota[span[k]] > quota[assigned_stack[i]] + 1e-9)
                        assigned_stack[i] = (int)span[k];
                if (best_n >= 0)
                    assigned_stack[i] = best_n;
            } else if (round == 3) {
                /* idle vCPUs: where they are when that is a span node, else round robin */
                assigned_stack[i] = cur >= 0 ? cur : (int)span[rr++ % nr_span];
            } else {
                continue;
            }
            if (busy)
                quota[assigned_stack[i]] -= 1;
        }
    }

    /* pins */
    pc->pins = calloc(cell->nr_vcpus ? cell->nr_vcpus : 1, sizeof(*pc->pins));
    if (!pc->pins)
        return -ENOMEM;
    for (unsigned i = 0; i < cell->nr_vcpus && i < SNAP_MAX_VCPUS_PER_CELL; i++) {
        const snap_vcpu *v = &cell->vcpus[i];
        vn_cpuset want;
        /* memory shares by vCPUs, busy or not: the guest spreads its work over them, and a
         * vCPU that reads idle for a pass does not move memory back */
        double w = 1.0;
        unsigned n = (unsigned)assigned_stack[i];

        on[n] += w;
        total_w += w;
        if (dcell_vcpu_busy(v, c))
            ps->load[n] += 1;
        if (v->fixed)
            continue;
        dcell_vcpu_usable(t, v, &want);
        cpuset_and(&want, &want, &t->nodes[n].cpus);
        if (cpuset_empty(&want) || cpuset_equal(&want, &v->pinned))
            continue;
        pc->pins[pc->nr_pins++] =
            (plan_pin){.vcpu = v->id, .cpus = want, .rules = why | RULE_BIT(RULE_WIDE_CELL)};
    }
    if (pc->nr_pins == 0) {
        free(pc->pins);
        pc->pins = NULL;
    }
    pc->target_node = seed;
    pc->candidate_node = seed;
    pc->span = span_mask;
    pc->cpu_overcommit = held < cv->busy;
    pc->rules |= why | RULE_BIT(RULE_WIDE_CELL) | RULE_BIT(RULE_CPU_CAPACITY);

    /* memory: each span node's share of it, from where there is more than that */
    double after[VN_MAX_NODES];
    for (unsigned n = 0; n < t->nr_nodes; n++)
        after[n] = (double)(cell->pages[n] * cell->page_size);
    if (cv->mem_movable && cv->bytes && total_w > 0) {
        double want_b[VN_MAX_NODES], deficit = 0;
        for (unsigned n = 0; n < t->nr_nodes; n++) {
            want_b[n] = (double)cv->bytes * on[n] / total_w;
            if (after[n] < want_b[n])
                deficit += want_b[n] - after[n];
        }
        vn_rules mr = 0;
        if (dcell_memory_gate(d, c, cell, seed, 100.0 * deficit / (double)cv->bytes,
                              why | RULE_BIT(RULE_WIDE_CELL), pc, &mr)) {
            pc->moves = calloc((size_t)t->nr_nodes * t->nr_nodes, sizeof(*pc->moves));
            if (!pc->moves)
                return -ENOMEM;
            for (unsigned src = 0; src < t->nr_nodes; src++) {
                for (unsigned k = 0; k < nr_span; k++) {
                    unsigned dst = span[k];
                    double surplus = after[src] - want_b[src], need = want_b[dst] - after[dst];
                    uint64_t room = dcell_room(t, c, ps, cell, dst), bytes;
                    if (src == dst || surplus <= 0 || need <= 0)
                        continue;
                    bytes = (uint64_t)VN_MIN(surplus, need);
                    bytes = VN_MIN(bytes, room) / cell->page_size * cell->page_size;
                    if (bytes == 0) {
                        pc->rules |= RULE_BIT(RULE_FREE_MEM_RESERVE);
                        continue;
                    }
                    pc->moves[pc->nr_moves++] =
                        (plan_move){.from_node = (int)src,
                                    .to_node = (int)dst,
                                    .bytes = bytes,
                                    .gain_points = 100.0 * (double)bytes / (double)cv->bytes,
                                    .rules = mr};
                    dcell_take_room(ps, cell, dst, bytes);
                    after[src] -= (double)bytes;
                    after[dst] += (double)bytes;
                }
            }
            if (!pc->nr_moves) {
                free(pc->moves);
                pc->moves = NULL;
                if (!pc->nr_pins)
                    pc->reason = REASON_NO_ROOM;
            }
            pc->batch_pages = rule_lock_hold_walk(cv->bytes / cell->page_size).window_pages;
        }
    }
    double loc = 0;
    for (unsigned n = 0; n < t->nr_nodes && cv->bytes && total_w > 0; n++)
        loc += on[n] / total_w * after[n] / (double)cv->bytes;
    pc->locality_after = 100.0 * loc;
    if (pc->nr_pins == 0 && pc->nr_moves == 0 && pc->reason == REASON_NONE)
        pc->reason = cv->bytes ? REASON_ALREADY_LOCAL : REASON_NO_MEMORY_INFO;
    return 0;
}
