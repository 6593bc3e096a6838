/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage. Pure: reads only its arguments, allocates only the plan.
 *
 * Domains are placed one cell at a time, in a fixed order (domains in auto
 * mode first, then by priority, busy vCPUs and name; advise domains are
 * decided last, against the result, and keep their load where it is). For
 * each cell:
 *
 *   1. rule 2 (cpuset skip): memory bound to one node -> bring the vCPUs there
 *      or leave the cell alone; its memory is never touched;
 *   2. every feasible node gets a cost (dplace_cost(), one screen), the cheapest
 *      wins, and the current home keeps the cell unless another node wins by
 *      more than the switch margin (hysteresis);
 *   3. vCPUs are pinned to their allowed CPUs on the target node;
 *   4. memory on other nodes moves to the target, hot ranges first, gated by
 *      rule 3 (early migration / two-stage filter), the free-memory reserve of
 *      the target, and the minimum gain.
 *
 * Loads and free memory consumed by earlier cells are accounted before later
 * cells are placed, so the result does not depend on the input order.
 */
#include "decide.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decide_priv.h"
#include "rules.h"
#include "util.h"

static bool node_allowed_for_cell(const topology *t, const snap_domain *d, const cell_view *cv,
                                  unsigned n)
{
    const snap_cell *cell = cv->cell;
    const vn_mem_binding *b = &cell->binding;

    if (t->nodes[n].cpuless && cell->nr_vcpus > 0)
        return false; /* never a home for vCPUs (a memory-only cell may live there) */
    if (!nodeset_allows(&d->allowed_nodes, n))
        return false;
    if ((b->mode == VN_MEM_STRICT || b->mode == VN_MEM_RESTRICTIVE) &&
        !nodeset_allows(&b->nodes, n))
        return false; /* memory could not follow */
    for (unsigned i = 0; i < cell->nr_vcpus; i++) {
        vn_cpuset u;
        dcell_vcpu_usable(t, &cell->vcpus[i], &u);
        if (!cpuset_intersects(&u, &t->nodes[n].cpus))
            return false; /* never a CPU outside the allowed set, never an isolated one */
    }
    return true;
}

/* Sharing weight between two cells of one domain: the larger of what either
 * side's hints say, or the sibling default. */
static double share_weight(const snap_cell *a, const snap_cell *b)
{
    double w = -1;

    for (unsigned i = 0; i < a->nr_shares; i++)
        if (a->shares[i].cell == b->id)
            w = VN_MAX(w, a->shares[i].weight);
    for (unsigned i = 0; i < b->nr_shares; i++)
        if (b->shares[i].cell == a->id)
            w = VN_MAX(w, b->shares[i].weight);
    return w < 0 ? SHARE_SIBLING_DEFAULT : w;
}

/* The two least loaded feasible nodes (-1: none), found once per cell: the lowest load among
 * feasible nodes other than n is then the first's, or the second's for the first itself. */
typedef struct least_loaded {
    int first, second;
} least_loaded;

static least_loaded least_loaded_of(const topology *t, const pass_state *ps,
                                    const node_cost costs[])
{
    least_loaded l = {-1, -1};

    for (unsigned i = 0; i < t->nr_nodes; i++) {
        if (!costs[i].feasible)
            continue;
        if (l.first < 0 || ps->load[i] < ps->load[l.first]) {
            l.second = l.first;
            l.first = (int)i;
        } else if (l.second < 0 || ps->load[i] < ps->load[l.second]) {
            l.second = (int)i;
        }
    }
    return l;
}

/* Lowest load among feasible nodes other than n, or the load of n when alone. */
static double min_other_load(const pass_state *ps, const least_loaded *l, unsigned n)
{
    int o = l->first == (int)n ? l->second : l->first;
    return o < 0 ? ps->load[n] : ps->load[o];
}

/*
 * The placement objective for one cell on node n (lower is better):
 *
 *   mem       = COST_MEM_MOVE  * share of the cell's memory not on n
 *   vcpu      = COST_VCPU_MOVE * share of the cell's vCPU weight not on n
 *   share     = COST_SHARE * sum over already placed cells it shares with of
 *               weight * (distance(n, their node) - local) / local
 *   imbalance = COST_IMBALANCE * min(1, 2 * excess / busy), where excess is
 *               what rule 1's adjust_numa_imbalance() leaves of the imbalance
 *               (half the difference between n's busy load after placing the
 *               cell and the least loaded other node, as the kernel's
 *               nr_diff >> 1), with n's own imb_numa_nr
 *
 * Moving memory costs twice moving vCPUs, so equal gains move vCPUs. Infeasible:
 * CPU-less nodes, nodes outside the domain's allowed nodes or memory binding,
 * nodes where a vCPU has no allowed CPU.
 */
void dplace_cost(const topology *t, const snap_domain *d, const vn_config *c, const cell_view *cv,
                 const pass_state *ps, const int placed_node[], node_cost costs[])
{
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        node_cost *nc = &costs[n];
        memset(nc, 0, sizeof(*nc));
        nc->feasible = node_allowed_for_cell(t, d, cv, n);
        if (!nc->feasible)
            continue;
        nc->mem = cv->mem_movable || cv->mem_pinned
                      ? COST_MEM_MOVE * (cv->bytes ? 1.0 - cv->mem_frac[n] : 0)
                      : 0;
        nc->vcpu = COST_VCPU_MOVE * (1.0 - cv->weight_on[n]);
        for (unsigned k = 0; k < d->nr_cells; k++) {
            int pn = placed_node[k];
            if (pn < 0 || &d->cells[k] == cv->cell)
                continue;
            nc->share += COST_SHARE * share_weight(cv->cell, &d->cells[k]) *
                         ((double)topo_distance(t, n, (unsigned)pn) - TOPO_DISTANCE_LOCAL) /
                         TOPO_DISTANCE_LOCAL;
        }
        double capacity = dcell_capacity(t, cv, n);
        /* The margin to enter is for a node the cell would come to. A cell whose vCPUs float
         * (no home: nothing pinned them to one node) is at home where most of its memory is:
         * its vCPUs pinned there fill the node exactly, no more (issue 56: with the margin, the
         * second of two busy cells whose memory shared a 2-CPU node moved its memory away, and
         * so did every busy cell that opted in after it). */
        bool at_home = (int)n == cv->home || (cv->home < 0 && cv->mem_frac[n] > 0.5);
        nc->over_cores = ps->load[n] + cv->busy > capacity;
        nc->over_capacity = ps->load[n] + cv->busy >
                            capacity - (at_home || cv->busy <= 0 ? 0 : CAPACITY_ENTER_MARGIN);
        /* room: free memory (or huge pages) not yet promised, above the reserve */
        uint64_t room = dcell_room(t, c, ps, cv->cell, n);
        /* (a node with a lower tier the cell's cold memory may go to has that room too) */
        if (cv->mem_movable && cv->bytes - cv->cell->pages[n] * cv->cell->page_size > room)
            room += dtier_room(t, c, ps, d, cv, n);
        nc->no_room =
            cv->mem_movable && cv->bytes - cv->cell->pages[n] * cv->cell->page_size > room;
    }
    /* Rule 1 needs the other nodes' feasibility, so it runs in a second sweep. */
    least_loaded least = least_loaded_of(t, ps, costs);
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        node_cost *nc = &costs[n];
        double after, diff, excess;
        if (!nc->feasible || cv->busy <= 0)
            continue;
        after = ps->load[n] + cv->busy;
        /* busy vCPUs that would have to move to even out, as the kernel's nr_diff >> 1 */
        diff = after - min_other_load(ps, &least, n);
        excess = rule_adjust_numa_imbalance(diff > 0 ? (int)(diff / 2) : 0, (int)lround(after),
                                            (int)t->nodes[n].imb_numa_nr);
        if (excess > 0)
            nc->imbalance = COST_IMBALANCE * VN_MIN(1.0, 2.0 * excess / cv->busy);
    }
}

typedef struct cost_mask {
    bool no_imbalance, no_share, no_capacity, no_room;
} cost_mask;

/* The cheapest feasible node in the first of `order`'s passes that has one, under a mask of
 * ignored terms. Ties: lower index. -1 when no node is feasible. */
static int pick_in_order(const topology *t, const node_cost costs[], cost_mask m,
                         const dpick_pass order[], unsigned nr)
{
    for (unsigned pass = 0; pass < nr; pass++) {
        const dpick_pass *p = &order[pass];
        int best = -1;
        double best_cost = 0;
        for (unsigned n = 0; n < t->nr_nodes; n++) {
            const node_cost *nc = &costs[n];
            double cost;
            if (!nc->feasible)
                continue;
            if (p->capacity && !m.no_capacity && nc->over_capacity)
                continue;
            if (p->cores && !m.no_capacity && nc->over_cores)
                continue;
            if (p->room && !m.no_room && nc->no_room)
                continue;
            cost = nc->mem + nc->vcpu + (m.no_share ? 0 : nc->share) +
                   (m.no_imbalance ? 0 : nc->imbalance);
            if (best < 0 || cost < best_cost - 1e-9) {
                best = (int)n;
                best_cost = cost;
            }
        }
        if (best >= 0)
            return best;
    }
    return -1;
}

int dplace_pick(const topology *t, const node_cost costs[], const dpick_pass order[], unsigned nr)
{
    return pick_in_order(t, costs, (cost_mask){0}, order, nr);
}

/* Cheapest node under a mask of ignored terms; capacity and room are hard constraints that only
 * give way when no node meets them: first both hold; then room is relaxed; then capacity without
 * the margin to enter (a node the cell would fill exactly beats one it would overload); then
 * all is relaxed. */
static int pick_node(const topology *t, const node_cost costs[], cost_mask m)
{
    static const dpick_pass order[] = {
        {.capacity = true, .room = true}, {.capacity = true}, {.cores = true}, {0}};

    return pick_in_order(t, costs, m, order, VN_ARRAY_SIZE(order));
}

static double total_cost(const node_cost *nc)
{
    return nc->mem + nc->vcpu + nc->share + nc->imbalance;
}

/* Append pins moving every vCPU of the cell onto its allowed CPUs of node n. */
int dplace_pins(const topology *t, const snap_cell *cell, unsigned n, vn_rules rules, plan_cell *pc)
{
    pc->pins = calloc(cell->nr_vcpus, sizeof(*pc->pins));
    if (!pc->pins)
        return -ENOMEM;
    for (unsigned i = 0; i < cell->nr_vcpus; i++) {
        vn_cpuset want;
        if (cell->vcpus[i].fixed)
            continue; /* realtime: stays where the operator put it */
        dcell_vcpu_usable(t, &cell->vcpus[i], &want);
        cpuset_and(&want, &want, &t->nodes[n].cpus);
        if (cpuset_empty(&want) || cpuset_equal(&want, &cell->vcpus[i].pinned))
            continue;
        pc->pins[pc->nr_pins++] =
            (plan_pin){.vcpu = cell->vcpus[i].id, .cpus = want, .rules = rules};
    }
    if (pc->nr_pins == 0) {
        free(pc->pins);
        pc->pins = NULL;
    }
    return 0;
}

/*
 * Memory moves of a cell to node `to`: hot ranges from guest hints first
 * (ordering directives for the act stage; their bytes are part of the bulk
 * moves that follow), then each other node's pages, largest first, cut at the
 * target's room above its reserve. Returns 0 or -ENOMEM; *moved gets the bulk
 * bytes planned.
 */
static int plan_memory(const topology *t, const cell_view *cv, unsigned to, bool shared_ok,
                       vn_rules base, uint64_t room, plan_cell *pc, uint64_t *moved)
{
    const snap_cell *cell = cv->cell;
    unsigned order[VN_MAX_NODES], nr_src = 0;
    uint64_t left = room / cell->page_size * cell->page_size;

    *moved = 0;
    pc->moves = calloc(cell->nr_hot + t->nr_nodes, sizeof(*pc->moves));
    if (!pc->moves)
        return -ENOMEM;
    for (unsigned i = 0; i < cell->nr_hot; i++) {
        const snap_hot_range *h = &cell->hot[i];
        if ((h->shared && !shared_ok) || h->fading)
            continue; /* rule 3's caveat: shared memory waits for the filter; a fading range is
                       * no longer hot */
        pc->moves[pc->nr_moves++] = (plan_move){.from_node = -1,
                                                .to_node = (int)to,
                                                .bytes = h->length,
                                                .gpa = h->gpa,
                                                .length = h->length,
                                                .is_range = true,
                                                .gain_points = 0,
                                                .rules = base | RULE_BIT(RULE_HOT_FIRST)};
        pc->rules |= RULE_BIT(RULE_HOT_FIRST); /* the record names it on the cell too */
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (n != to && cell->pages[n])
            order[nr_src++] = n;
    qsort_r(order, nr_src, sizeof(order[0]), dcell_cmp_source, (void *)cell);
    for (unsigned i = 0; i < nr_src; i++) {
        unsigned n = order[i];
        uint64_t bytes = cell->pages[n] * cell->page_size;
        vn_rules r = base;
        if (bytes > left) {
            bytes = left;
            r |= RULE_BIT(RULE_FREE_MEM_RESERVE);
            pc->rules |= RULE_BIT(RULE_FREE_MEM_RESERVE);
        }
        if (bytes == 0)
            break;
        left -= bytes;
        *moved += bytes;
        pc->moves[pc->nr_moves++] =
            (plan_move){.from_node = (int)n,
                        .to_node = (int)to,
                        .bytes = bytes,
                        .gain_points = 100.0 * (double)bytes / (double)cv->bytes,
                        .rules = r};
    }
    if (*moved == 0) {
        /* without bulk moves, range directives have nothing to order */
        free(pc->moves);
        pc->moves = NULL;
        pc->nr_moves = 0;
    }
    return 0;
}

/* Does any vCPU of the cell run (or may run) outside node n? */
static bool vcpus_outside(const topology *t, const snap_cell *cell, unsigned n)
{
    for (unsigned i = 0; i < cell->nr_vcpus; i++)
        if (!cpuset_subset(&cell->vcpus[i].pinned, &t->nodes[n].cpus))
            return true;
    return false;
}

/* Chen Yu's refinement: vCPUs can follow when the node's CPUs are all allowed (its
 * isolated CPUs aside: they are never pinned to). */
static bool vcpus_can_follow(const topology *t, const snap_cell *cell, unsigned n)
{
    vn_cpuset node_cpus;

    if (t->nodes[n].cpuless)
        return false;
    cpuset_andnot(&node_cpus, &t->nodes[n].cpus, &t->isolated);
    if (cpuset_empty(&node_cpus))
        return false;
    for (unsigned i = 0; i < cell->nr_vcpus; i++)
        if (!cell->vcpus[i].fixed && !cpuset_subset(&node_cpus, &cell->vcpus[i].allowed))
            return false;
    return true;
}

void dplace_account_load(const topology *t, const cell_view *cv, int target, pass_state *ps)
{
    if (target >= 0) {
        ps->load[target] += cv->busy;
        return;
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        ps->load[n] += cv->busy * cv->weight_on[n];
}

/*
 * Rule 2 for one cell. Sets *handled when the rule decided the cell (pins may
 * have been planned). Returns 0 or -ENOMEM.
 */
static int decide_cpuset_skip(const topology *t, const snap_domain *d, const cell_view *cv,
                              pass_state *ps, plan_cell *pc, bool *handled)
{
    const snap_cell *cell = cv->cell;
    int bound = -1;
    rule_cpuset_verdict v;

    int n = rule_binding_single_node(&cell->binding);

    *handled = false;
    if (n < 0)
        return 0;
    v = rule_cpuset_skip(&cell->binding,
                         vcpus_can_follow(t, cell, (unsigned)n) &&
                             nodeset_allows(&d->allowed_nodes, (unsigned)n) &&
                             ps->load[n] + cv->busy <= dcell_capacity(t, cv, (unsigned)n),
                         vcpus_outside(t, cell, (unsigned)n), &bound);
    if (v == CPUSET_NOT_BOUND)
        return 0;
    *handled = true;
    pc->rules |= RULE_BIT(RULE_CPUSET_SKIP);
    pc->target_node = bound;
    pc->candidate_node = bound;
    pc->locality_after = pc->locality_before;
    if (v == CPUSET_MOVE_VCPUS) {
        int r = dplace_pins(t, cell, (unsigned)bound,
                            RULE_BIT(RULE_CPUSET_SKIP) | RULE_BIT(RULE_ALLOWED_CPUS), pc);
        if (r < 0)
            return r;
        pc->locality_after = 100.0 * cv->mem_frac[bound];
        dplace_account_load(t, cv, bound, ps);
    } else {
        dplace_account_load(t, cv, vcpus_outside(t, cell, (unsigned)bound) ? -1 : bound, ps);
    }
    pc->reason = pc->nr_pins ? REASON_NONE : REASON_CPUSET_SKIP;
    return 0;
}

/* Which rules changed the choice of `best`: compare with the choice made without them. */
static vn_rules rules_that_changed(const topology *t, const node_cost costs[], const cell_view *cv,
                                   int best)
{
    vn_rules why = 0;

    if (pick_node(t, costs, (cost_mask){.no_imbalance = true}) != best)
        why |= RULE_BIT(RULE_ALLOWED_IMBALANCE);
    if (pick_node(t, costs, (cost_mask){.no_share = true}) != best)
        why |= RULE_BIT(RULE_SHARED_PROXIMITY);
    if (pick_node(t, costs, (cost_mask){.no_capacity = true}) != best)
        why |= RULE_BIT(RULE_CPU_CAPACITY);
    if (pick_node(t, costs, (cost_mask){.no_room = true}) != best)
        why |= RULE_BIT(RULE_FREE_MEM_RESERVE);
    if (cv->mem_frac[best] >= 0.5 && cv->weight_on[best] < 1.0)
        why |= RULE_BIT(RULE_PREFER_VCPU_MOVE);
    return why;
}

/*
 * A memory-only cell (no vCPUs: guest memory exposed as a node of its own) has no users but
 * the domain's other cells: its node is the feasible one with room nearest to where they were
 * placed, each weighted by what it shares with it (hints, else the sibling default); ties go
 * to the node that has most of its memory already. -1 when no other cell is placed.
 */
static int memory_only_node(const topology *t, const snap_domain *d, const cell_view *cv,
                            const node_cost costs[], const int placed_node[])
{
    double best_dist = 0;
    int best = -1;

    for (unsigned n = 0; n < t->nr_nodes; n++) {
        double dist = 0;
        bool any = false;
        if (!costs[n].feasible || (costs[n].no_room && cv->mem_frac[n] < 1.0))
            continue;
        for (unsigned k = 0; k < d->nr_cells; k++) {
            int pn = placed_node[k];
            if (pn < 0 || &d->cells[k] == cv->cell || d->cells[k].nr_vcpus == 0)
                continue;
            dist += share_weight(cv->cell, &d->cells[k]) * topo_distance(t, n, (unsigned)pn);
            any = true;
        }
        if (!any)
            return -1;
        if (best < 0 || dist < best_dist - 1e-9 ||
            (dist < best_dist + 1e-9 && cv->mem_frac[n] > cv->mem_frac[best])) {
            best = (int)n;
            best_dist = dist;
        }
    }
    return best;
}

/*
 * A cell whose memory goes on two tiers: the gain is what the tier plan would change (memory on
 * other nodes, hot memory not home, cold-first's cold memory at home); below the minimum the
 * cell is where it should be ("tiered"); else the memory gate (rule 3) and the plan. *home_after
 * gets the bytes of the cell on the target once the plan is done. 0 or -ENOMEM.
 */
static int decide_tiered(const topology *t, const snap_domain *d, const vn_config *c,
                         const cell_view *cv, pass_state *ps, unsigned target, const tier_view *tv,
                         vn_rules why, plan_cell *pc, uint64_t *home_after)
{
    vn_rules mr = 0;

    *home_after = tv->home;
    pc->tier = (plan_tier){.why = tv->why,
                           .hints = cv->cell->nr_hot > 0,
                           .hot = tv->hot,
                           .hot_home = tv->hot_home,
                           .home = tv->home,
                           .lower = tv->on_lower};
    /* (a hot set more than 1% away always counts: the working set goes home to 99%) */
    bool hot_due = tv->hot && (tv->hot - VN_MIN(tv->hot, tv->hot_home)) * 100 > tv->hot;
    if (tv->gain < c->min_gain_points && !hot_due) {
        pc->rules |= RULE_BIT(RULE_LOWER_TIER);
        if (!pc->nr_pins)
            pc->reason = REASON_TIERED;
        return 0;
    }
    /* The last order is still being worked: the sample counted pages on their way (hot ranges
     * half home, cold memory half down), and a plan from it would order more of both than the
     * cell needs. The order goes on; the first pass after it plans from where it ended. */
    if (cv->cell->order_left) {
        pc->keep_order = true;
        pc->rules |= RULE_BIT(RULE_LOWER_TIER);
        if (!pc->nr_pins)
            pc->reason = REASON_ORDER_IN_FLIGHT;
        return 0;
    }
    /* (and passes the gate's minimum gain too: between 1% and the minimum it stopped there) */
    double gain = hot_due ? VN_MAX(tv->gain, c->min_gain_points) : tv->gain;
    if (!dcell_memory_gate(d, c, cv->cell, (int)target, gain, why, pc, &mr))
        return 0;
    rule_migrate_verdict shared =
        rule_migrate_filter(d->age_passes, c->early_passes, d->preferred_node,
                            cv->cell->last_candidate, (int)target, true);
    /* Rule 3's first observations of heat are the first hint sets: a cold start waits for
     * the agent (hints-pending), and a hot range the second set reports first must not wait
     * for a third because the wait used up the domain's early passes. */
    bool early =
        d->age_passes < c->early_passes || (d->hint_passes && d->hint_passes <= c->early_passes);
    int r = dtier_plan(t, c, ps, cv, target, tv, shared != MIGRATE_WAIT, early, mr, pc, home_after);
    if (r < 0)
        return r;
    pc->batch_pages = rule_lock_hold_walk(cv->bytes / cv->cell->page_size).window_pages;
    if (!pc->nr_moves && !pc->nr_pins)
        pc->reason = REASON_TIERED;
    return 0;
}

static int decide_cell(const topology *t, const snap_domain *d, const vn_config *c,
                       const cell_view *cv, pass_state *ps, int placed_node[], unsigned cell_idx,
                       plan_cell *pc)
{
    const snap_cell *cell = cv->cell;
    node_cost costs[VN_MAX_NODES];
    unsigned nr_feasible = 0;
    int best, target, r;
    uint64_t moved_total = 0;
    bool handled;
    vn_rules why = RULE_BIT(RULE_LOCALITY) | RULE_BIT(RULE_ALLOWED_CPUS);

    pc->cell_id = cell->id;
    pc->mem_pinned = cell->mem_pinned;
    pc->page_size = cell->page_size;
    pc->current_node = cv->home;
    pc->target_node = -1;
    pc->candidate_node = -1;
    pc->locality_before = dcell_locality(t, cv->weight_on, cv->mem_frac);
    pc->locality_after = pc->locality_before;
    pc->busy_vcpus = (int)cv->busy;

    r = decide_cpuset_skip(t, d, cv, ps, pc, &handled);
    if (r < 0 || handled) {
        placed_node[cell_idx] = pc->target_node;
        return r;
    }

    dplace_cost(t, d, c, cv, ps, placed_node, costs);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        nr_feasible += costs[n].feasible;
    best = pick_node(t, costs, (cost_mask){0});
    if (best < 0) {
        pc->reason = REASON_NO_FEASIBLE_NODE;
        dplace_account_load(t, cv, -1, ps);
        return 0;
    }

    if (cell->nr_vcpus == 0) {
        /* memory-only: near the cells that use it, whatever the objective's vCPU terms say */
        int m = memory_only_node(t, d, cv, costs, placed_node);
        if (m >= 0) {
            best = m;
            why |= RULE_BIT(RULE_SHARED_PROXIMITY);
        }
    } else {
        why |= rules_that_changed(t, costs, cv, best);
    }

    if (dwide_is_wide(t, cv, costs)) {
        /* the span grows from the node it grew from last pass while vCPUs still run there */
        int seed = best, lc = cell->last_candidate;
        if (lc >= 0 && (unsigned)lc < t->nr_nodes && costs[lc].feasible && cv->weight_on[lc] > 0)
            seed = lc;
        r = dwide_decide(t, d, c, cv, ps, costs, seed, why, pc);
        placed_node[cell_idx] = pc->target_node;
        return r;
    }

    /* Hysteresis: the current home keeps the cell unless another node wins clearly. */
    target = best;
    if (cv->home >= 0 && cv->home != best && costs[cv->home].feasible &&
        !costs[cv->home].over_capacity &&
        total_cost(&costs[cv->home]) - total_cost(&costs[best]) <= c->switch_margin) {
        target = cv->home;
        why = (why & ~RULE_BIT(RULE_PREFER_VCPU_MOVE)) | RULE_BIT(RULE_HYSTERESIS);
    }
    /* Rule 3's two-stage filter for the vCPUs as for memory, once the domain is past its early
     * passes: a cell that its home's CPU capacity pushes off the node its memory is on (its
     * locality drops) leaves only when two consecutive passes agree on where to. Capacity is
     * measured busy time: one noisy sample (a busy spike, other load read on a starved host)
     * otherwise sent the vCPUs away and, a pass later, back (issue 28: the proving ground
     * under load flapped s5 between nodes 1 and 2 for cpu-capacity). */
    int candidate = target;
    bool vcpus_wait = false;
    if (target != cv->home && cv->home >= 0 && costs[cv->home].feasible &&
        costs[cv->home].over_capacity && cv->bytes &&
        cv->mem_frac[target] < cv->mem_frac[cv->home] &&
        rule_migrate_filter(d->age_passes, c->early_passes, d->preferred_node, cell->last_candidate,
                            target, false) == MIGRATE_WAIT) {
        target = cv->home;
        why = (why & ~RULE_BIT(RULE_PREFER_VCPU_MOVE)) | RULE_BIT(RULE_TWO_STAGE_FILTER);
        vcpus_wait = true;
    }
    pc->target_node = target;
    pc->candidate_node = candidate;
    pc->cpu_overcommit = costs[target].over_cores;
    pc->rules |= why;
    placed_node[cell_idx] = target;

    r = dplace_pins(t, cell, (unsigned)target, why, pc);
    if (r < 0)
        return r;

    /* numatune mode='preferred' is the operator's wish: memory never moves off the
     * preferred nodes (QEMU's policy would fault it back, pass after pass); onto them it may */
    bool off_preferred = cell->binding.mode == VN_MEM_PREFERRED &&
                         !nodeset_allows(&cell->binding.nodes, (unsigned)target);
    if (off_preferred && cv->mem_movable && cv->bytes && cv->mem_frac[target] < 1.0 && !pc->nr_pins)
        pc->reason = REASON_NUMATUNE_PREFERRED;

    /* Memory: on two tiers when the target has a lower one and the cell's memory is to be split
     * (decide_tier.c), else what is not on the target yet, if the rules let it move now. */
    tier_view tv;
    dtier_view(t, c, ps, d, cv, (unsigned)target, &tv);
    if (tv.why != TIER_WHY_NONE) {
        r = decide_tiered(t, d, c, cv, ps, (unsigned)target, &tv, why, pc, &moved_total);
        if (r < 0)
            return r;
    } else if (cv->mem_movable && !off_preferred && cv->bytes && cv->mem_frac[target] < 1.0) {
        double gain = 100.0 * (1.0 - cv->mem_frac[target]);
        rule_migrate_verdict shared = rule_migrate_filter(
            d->age_passes, c->early_passes, d->preferred_node, cell->last_candidate, target, true);
        vn_rules mr = 0;

        if (dcell_memory_gate(d, c, cell, target, gain, why, pc, &mr)) {
            uint64_t room = dcell_room(t, c, ps, cell, (unsigned)target), moved = 0;
            uint64_t total_pages = cv->bytes / cell->page_size;

            r = plan_memory(t, cv, (unsigned)target, shared != MIGRATE_WAIT, mr, room, pc, &moved);
            if (r < 0)
                return r;
            pc->batch_pages = rule_lock_hold_walk(total_pages).window_pages;
            dcell_take_room(ps, cell, (unsigned)target, moved);
            if (!pc->nr_moves) {
                pc->rules |= RULE_BIT(RULE_FREE_MEM_RESERVE);
                if (!pc->nr_pins)
                    pc->reason = REASON_NO_ROOM;
            }
            moved_total = moved;
        }
    }
    if (cv->mem_pinned) {
        /* the memory stays: placing the cell means moving its vCPUs to it */
        pc->rules |= RULE_BIT(RULE_PREFER_VCPU_MOVE);
        if (!pc->nr_pins && pc->reason == REASON_NONE && cv->bytes)
            pc->reason = REASON_MEMORY_PINNED;
    }
    if (vcpus_wait && !pc->nr_pins && !pc->nr_moves && pc->reason == REASON_NONE)
        pc->reason = REASON_FILTER_PENDING;
    /* After the plan every vCPU runs on the target (a tiered cell: moved_total is what is home
     * then, decide_tiered). */
    pc->locality_after =
        !cv->bytes ? 0
        : tv.why != TIER_WHY_NONE
            ? 100.0 * (double)moved_total / (double)cv->bytes
            : 100.0 * (cv->mem_frac[target] + (double)moved_total / (double)cv->bytes);
    dplace_account_load(t, cv, target, ps);

    if (pc->nr_pins == 0 && pc->nr_moves == 0 && pc->reason == REASON_NONE) {
        if (!cv->bytes)
            pc->reason = REASON_NO_MEMORY_INFO;
        else if (nr_feasible == 1 && dcell_cpu_nodes(t) == 1)
            pc->reason = REASON_SINGLE_HOST_NODE;
        else
            pc->reason = REASON_ALREADY_LOCAL;
    }
    return 0;
}

typedef struct dom_order {
    const snap_domain *d;
    double busy;
    unsigned input_idx;
} dom_order;

static int cmp_domain(const void *a, const void *b)
{
    const dom_order *x = a, *y = b;

    if (x->d->mode != y->d->mode) /* domains that act first, advice on the result */
        return x->d->mode == VN_MODE_AUTO ? -1 : 1;
    if (x->d->priority != y->d->priority)
        return x->d->priority > y->d->priority ? -1 : 1;
    if (x->busy != y->busy)
        return x->busy > y->busy ? -1 : 1;
    int r = strcmp(x->d->name, y->d->name);
    return r ? r : strcmp(x->d->uuid, y->d->uuid); /* (two daemons' domains of one name) */
}

static bool domain_planned(const snap_domain *d)
{
    return d->mode == VN_MODE_AUTO || d->mode == VN_MODE_ADVISE;
}

/*
 * A domain whose vCPUs' busy fractions were not measured (no CPU time window behind them:
 * vnumad has not seen this QEMU run twice) is left where it is, every cell with reason
 * "unmeasured": an idle reading that is only an absence of data would place busy vCPUs as
 * idle ones, and the next, measured pass would undo it (memory moved twice). Its vCPUs'
 * load stays where they run. The pass measures such a domain before it decides
 * (pass.c), so this is what is left when that failed.
 */
static void decide_unmeasured(const topology *t, const snap_domain *d, const vn_config *c,
                              pass_state *ps, plan_domain *pd)
{
    for (unsigned k = 0; k < d->nr_cells; k++) {
        plan_cell *pc = &pd->cells[k];
        cell_view cv;
        dcell_view_init(t, &d->cells[k], c, &cv);
        pc->cell_id = d->cells[k].id;
        pc->mem_pinned = d->cells[k].mem_pinned;
        pc->page_size = d->cells[k].page_size;
        pc->current_node = cv.home;
        pc->target_node = -1;
        pc->candidate_node = d->cells[k].last_candidate;
        pc->locality_before = dcell_locality(t, cv.weight_on, cv.mem_frac);
        pc->locality_after = pc->locality_before;
        pc->reason = REASON_UNMEASURED;
        pc->busy_vcpus = -1;
        if (d->mode == VN_MODE_AUTO) /* an advised domain's load is in already (decide()) */
            dplace_account_load(t, &cv, -1, ps);
    }
}

/* A cell with vCPUs placed on a node: the node's nearest lower memory tier beside it (where the
 * host has one), the home of the cell's cold memory. */
static void link_lower_tiers(const topology *t, const snap_domain *d, plan_domain *pd)
{
    for (unsigned k = 0; k < pd->nr_cells; k++) {
        plan_cell *pc = &pd->cells[k];
        pc->lower_tier = d->cells[k].nr_vcpus > 0 && pc->target_node >= 0
                             ? t->nodes[pc->target_node].lower_tier
                             : -1;
    }
}

static int decide_domain(const topology *t, const snap_domain *d, const vn_config *c,
                         pass_state *ps, plan_domain *pd)
{
    _cleanup_free_ int *placed = NULL;
    cell_view cv;

    snprintf(pd->name, sizeof(pd->name), "%s", d->name);
    pd->mode = d->mode;
    pd->cells = calloc(d->nr_cells ? d->nr_cells : 1, sizeof(*pd->cells));
    placed = malloc((d->nr_cells ? d->nr_cells : 1) * sizeof(*placed));
    if (!pd->cells || !placed)
        return -ENOMEM;
    pd->nr_cells = d->nr_cells;
    for (unsigned k = 0; k < d->nr_cells; k++)
        placed[k] = -1;
    if (d->busy_unmeasured) {
        decide_unmeasured(t, d, c, ps, pd);
        link_lower_tiers(t, d, pd);
        return 0;
    }
    /* cells with vCPUs first, then memory-only cells (no vCPUs: guest memory, CXL or HBM
     * exposed as a node of its own), which go near the cells that use them (the share term) */
    for (unsigned i = 0; i < 2 * d->nr_cells; i++) {
        unsigned k = i % d->nr_cells;
        int r;
        if ((i < d->nr_cells) != (d->cells[k].nr_vcpus > 0))
            continue;
        dcell_view_init(t, &d->cells[k], c, &cv);
        if (d->mode == VN_MODE_AUTO) {
            r = decide_cell(t, d, c, &cv, ps, placed, k, &pd->cells[k]);
        } else {
            /* Advice is never carried out: decide on a scratch copy without the cell's
             * own load, so the pass keeps the cell where it is. */
            pass_state scratch;
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                scratch.load[n] = ps->load[n] - cv.busy * cv.weight_on[n];
                scratch.free_left[n] = ps->free_left[n];
                memcpy(scratch.huge[n], ps->huge[n], sizeof(scratch.huge[n]));
            }
            r = decide_cell(t, d, c, &cv, &scratch, placed, k, &pd->cells[k]);
        }
        if (r < 0)
            return r;
    }
    link_lower_tiers(t, d, pd);
    return 0;
}

int decide(const topology *t, const snapshot *s, const vn_config *c, plan *ret)
{
    _cleanup_free_ dom_order *order = NULL;
    _cleanup_free_ int *slot = NULL;
    plan p = {.pass = s->pass};
    pass_state ps;
    unsigned nr = 0;
    int r = 0;

    /* every cell counts its pages on this topology's nodes (snap_cell_nodes) */
    for (unsigned i = 0; i < s->nr_domains; i++)
        for (unsigned k = 0; k < s->domains[i].nr_cells; k++)
            if (s->domains[i].cells[k].nr_nodes != t->nr_nodes || !s->domains[i].cells[k].pages)
                return -EINVAL;
    memset(&ps, 0, sizeof(ps));
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        ps.load[n] = s->other_busy[n];
        ps.free_left[n] = dcell_node_free(t, s, n);
        memcpy(ps.huge[n], snapshot_node_huge(t, s, n), sizeof(ps.huge[n]));
    }
    order = calloc(s->nr_domains ? s->nr_domains : 1, sizeof(*order));
    slot = calloc(s->nr_domains ? s->nr_domains : 1, sizeof(*slot));
    if (!order || !slot)
        return -ENOMEM;
    for (unsigned i = 0; i < s->nr_domains; i++) {
        const snap_domain *d = &s->domains[i];
        if (!domain_planned(d))
            continue; /* not opted in: never planned, never touched */
        order[nr] = (dom_order){.d = d, .input_idx = i};
        for (unsigned k = 0; k < d->nr_cells; k++)
            for (unsigned v = 0; v < d->cells[k].nr_vcpus; v++)
                order[nr].busy += d->cells[k].vcpus[v].busy > c->busy_threshold;
        slot[i] = (int)nr;
        nr++;
        if (d->mode != VN_MODE_AUTO) {
            /* an advised domain stays where it is: its load is there for the whole pass */
            for (unsigned k = 0; k < d->nr_cells; k++) {
                cell_view cv;
                dcell_view_init(t, &d->cells[k], c, &cv);
                dplace_account_load(t, &cv, -1, &ps);
            }
        }
    }
    /* The plan lists domains in input order; they are placed in priority order. */
    p.domains = calloc(nr ? nr : 1, sizeof(*p.domains));
    if (!p.domains)
        return -ENOMEM;
    p.nr_domains = nr;
    qsort(order, nr, sizeof(*order), cmp_domain);
    for (unsigned i = 0; i < nr && r == 0; i++) {
        p.domains[slot[order[i].input_idx]].input = order[i].input_idx;
        r = decide_domain(t, order[i].d, c, &ps, &p.domains[slot[order[i].input_idx]]);
    }
    if (r < 0) {
        plan_clear(&p);
        return r;
    }
    *ret = p;
    return 0;
}
