/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage for a domain that is not running here yet: where each of its cells should
 * live when it arrives (decide.h, decide_incoming). Pure, as decide.c: the same objective on
 * the host as it is now, every cell's memory taken as all away (none of it is here) and its
 * vCPUs as running nowhere, so that only the node's load, room and the cells' sharing choose.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "decide_incoming.h"
#include "decide_priv.h"
#include "util.h"

/*
 * The order of a pick for an incoming cell: its memory's room before CPU capacity (vCPUs move
 * later at little cost; the memory is what a placement before its arrival saves moving): room
 * and capacity with the margin to enter, room and cores for its busy vCPUs, room, cores, any.
 */
static const dpick_pass INCOMING_ORDER[] = {{.room = true, .capacity = true},
                                            {.room = true, .cores = true},
                                            {.room = true},
                                            {.cores = true},
                                            {0}};

static int place_cell(const topology *t, const snap_domain *d, const vn_config *c, pass_state *ps,
                      int placed[], unsigned k, uint64_t bytes, plan_cell *pc)
{
    const snap_cell *cell = &d->cells[k];
    node_cost costs[VN_MAX_NODES];
    vn_rules why = RULE_BIT(RULE_LOCALITY) | RULE_BIT(RULE_ALLOWED_CPUS);
    cell_view cv;
    int best, r;

    dcell_view_init(t, cell, c, &cv);
    /* nothing of it is here: no node is its home, none holds its memory or runs its vCPUs */
    cv.bytes = bytes;
    cv.home = -1;
    cv.mem_pinned = false; /* pinned memory (VFIO, locked) is placed as it is allocated */
    cv.mem_movable = cell->binding.mode != VN_MEM_INTERLEAVE;
    memset(cv.weight_on, 0, t->nr_nodes * sizeof(cv.weight_on[0]));
    memset(cv.mem_frac, 0, t->nr_nodes * sizeof(cv.mem_frac[0]));

    pc->cell_id = cell->id;
    pc->page_size = cell->page_size;
    pc->current_node = -1;
    pc->candidate_node = -1;
    pc->lower_tier = -1;
    pc->busy_vcpus = (int)cv.busy;
    pc->target_node = -1;

    dplace_cost(t, d, c, &cv, ps, placed, costs);
    best = dplace_pick(t, costs, INCOMING_ORDER, VN_ARRAY_SIZE(INCOMING_ORDER));
    if (best < 0) {
        pc->reason = REASON_NO_FEASIBLE_NODE;
        return 0;
    }
    if (costs[best].over_capacity)
        why |= RULE_BIT(RULE_CPU_CAPACITY);
    if (costs[best].imbalance > 0)
        why |= RULE_BIT(RULE_ALLOWED_IMBALANCE);
    if (costs[best].share > 0)
        why |= RULE_BIT(RULE_SHARED_PROXIMITY);
    pc->target_node = best;
    pc->candidate_node = best;
    pc->cpu_overcommit = costs[best].over_cores;
    placed[k] = best;

    r = dplace_pins(t, cell, (unsigned)best, why, pc);
    if (r < 0)
        return r;
    if (cv.mem_movable && bytes) {
        if (costs[best].no_room) {
            why |= RULE_BIT(RULE_FREE_MEM_RESERVE);
            pc->reason = REASON_NO_ROOM;
        } else {
            pc->moves = calloc(1, sizeof(*pc->moves));
            if (!pc->moves)
                return -ENOMEM;
            pc->moves[pc->nr_moves++] = (plan_move){.from_node = -1,
                                                    .to_node = best,
                                                    .bytes = bytes,
                                                    .gain_points = 100.0,
                                                    .rules = why};
            dcell_take_room(ps, cell, (unsigned)best, bytes);
            pc->locality_after = 100.0;
        }
    }
    pc->rules = why;
    dplace_account_load(t, &cv, best, ps);
    return 0;
}

int decide_incoming(const topology *t, const snapshot *s, const vn_config *c, const snap_domain *d,
                    const uint64_t cell_bytes[], plan_domain *ret)
{
    _cleanup_free_ int *placed = NULL;
    plan_domain pd = {.mode = d->mode};
    pass_state ps;

    memset(&ps, 0, sizeof(ps));
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        ps.load[n] = s->other_busy[n];
        ps.free_left[n] = dcell_node_free(t, s, n);
        memcpy(ps.huge[n], snapshot_node_huge(t, s, n), sizeof(ps.huge[n]));
    }
    snprintf(pd.name, sizeof(pd.name), "%s", d->name);
    pd.cells = calloc(d->nr_cells ? d->nr_cells : 1, sizeof(*pd.cells));
    placed = malloc((d->nr_cells ? d->nr_cells : 1) * sizeof(*placed));
    if (!pd.cells || !placed) {
        free(pd.cells);
        return -ENOMEM;
    }
    pd.nr_cells = d->nr_cells;
    for (unsigned k = 0; k < d->nr_cells; k++)
        placed[k] = -1;
    /* cells with vCPUs first, then memory-only cells near the cells that use them */
    for (unsigned i = 0; i < 2 * d->nr_cells; i++) {
        unsigned k = i % d->nr_cells;
        int r;
        if ((i < d->nr_cells) != (d->cells[k].nr_vcpus > 0))
            continue;
        r = place_cell(t, d, c, &ps, placed, k, cell_bytes[k], &pd.cells[k]);
        if (r < 0) {
            plan_domain_clear(&pd);
            return r;
        }
    }
    *ret = pd;
    return 0;
}
