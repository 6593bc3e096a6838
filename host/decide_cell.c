/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage: a cell's facts (where its vCPUs run and may run, its memory per node,
 * how many busy vCPUs a node holds for it), the room a node has for its memory, and the
 * gates on moving it (decide_priv.h).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "decide.h"
#include "decide_priv.h"
#include "rules.h"
#include "util.h"

uint64_t dcell_node_reserve(const topology *t, const vn_config *c, unsigned n)
{
    uint64_t frac = (uint64_t)((double)t->nodes[n].mem_total * c->reserve_fraction);

    return VN_MAX(c->reserve_bytes, frac);
}

uint64_t dcell_node_free(const topology *t, const snapshot *s, unsigned n)
{
    return s->free_known[n] ? s->free_bytes[n] : t->nodes[n].mem_free;
}

/* Bytes of the cell's memory node n can take now: for a hugetlb cell, its free huge pages
 * of the cell's size (the pool is set aside, the reserve is of MemFree); else free memory
 * not yet promised above the node's reserve and its slack. */
uint64_t dcell_room(const topology *t, const vn_config *c, const pass_state *ps,
                    const snap_cell *cell, unsigned n)
{
    int h = topo_huge_slot(ps->huge[n], cell->page_size);
    uint64_t floor = dcell_node_reserve(t, c, n) + RESERVE_SLACK_BYTES;

    if (h >= 0) {
        const topo_huge *pool = &ps->huge[n][h];
        return pool->free_pages > UINT64_MAX / pool->page_size ? UINT64_MAX
                                                               : pool->free_pages * pool->page_size;
    }
    return ps->free_left[n] > floor ? ps->free_left[n] - floor : 0;
}

/* How far node n's free memory is below its reserve and slack (0 for a hugetlb cell: its pool
 * has no reserve). */
uint64_t dcell_deficit(const topology *t, const vn_config *c, const pass_state *ps,
                       const snap_cell *cell, unsigned n)
{
    uint64_t floor = dcell_node_reserve(t, c, n) + RESERVE_SLACK_BYTES;

    if (topo_huge_slot(ps->huge[n], cell->page_size) >= 0)
        return 0;
    return ps->free_left[n] < floor ? floor - ps->free_left[n] : 0;
}

/* Promise `bytes` of node n to the cell's move. */
void dcell_take_room(pass_state *ps, const snap_cell *cell, unsigned n, uint64_t bytes)
{
    int h = topo_huge_slot(ps->huge[n], cell->page_size);

    if (h >= 0)
        ps->huge[n][h].free_pages -= VN_MIN(ps->huge[n][h].free_pages, bytes / cell->page_size);
    else
        ps->free_left[n] -= VN_MIN(ps->free_left[n], bytes);
}

/*
 * The CPUs decide may pin a vCPU to: its allowed set less the host's isolated CPUs (the
 * scheduler does not balance across those: vCPUs given a set of them would stack on one);
 * a fixed vCPU (realtime) is never re-pinned, so only where it is pinned now.
 */
void dcell_vcpu_usable(const topology *t, const snap_vcpu *v, vn_cpuset *out)
{
    if (v->fixed)
        *out = v->pinned;
    else
        cpuset_andnot(out, &v->allowed, &t->isolated);
}

/*
 * How many busy vCPUs node n holds for a cell: the cores of the node its vCPUs may use.
 * SMT siblings count once: two busy vCPUs on the two threads of one core each get about
 * half of it (ESXi sizes its NUMA clients by cores for the same reason).
 */
double dcell_capacity(const topology *t, const cell_view *cv, unsigned n)
{
    vn_cpuset in;

    cpuset_and(&in, &cv->usable, &t->nodes[n].cpus);
    return (double)topo_count_cores(t, &in);
}

bool dcell_vcpu_busy(const snap_vcpu *v, const vn_config *c)
{
    return v->busy > c->busy_threshold;
}

unsigned dcell_cpu_nodes(const topology *t)
{
    unsigned n = 0;

    for (unsigned i = 0; i < t->nr_nodes; i++)
        n += !t->nodes[i].cpuless;
    return n;
}

/* Node index whose CPUs contain cpu, or -1. */
int dcell_cpu_node(const topology *t, int cpu)
{
    if (cpu < 0)
        return -1;
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (cpuset_isset(&t->nodes[n].cpus, (unsigned)cpu))
            return (int)n;
    return -1;
}

/*
 * Where a vCPU runs, as a share per node: the node of the CPU it last ran on
 * when that CPU is inside its affinity, else spread over its affinity.
 */
static void vcpu_node_share(const topology *t, const snap_vcpu *v, double out[VN_MAX_NODES])
{
    unsigned total = cpuset_weight(&v->pinned);
    int n =
        v->cpu >= 0 && cpuset_isset(&v->pinned, (unsigned)v->cpu) ? dcell_cpu_node(t, v->cpu) : -1;

    for (unsigned i = 0; i < t->nr_nodes; i++)
        out[i] = 0;
    if (n >= 0) {
        out[n] = 1;
        return;
    }
    for (unsigned i = 0; i < t->nr_nodes && total; i++) {
        vn_cpuset in;
        cpuset_and(&in, &v->pinned, &t->nodes[i].cpus);
        out[i] = (double)cpuset_weight(&in) / total;
    }
}

void dcell_view_init(const topology *t, const snap_cell *cell, const vn_config *c, cell_view *cv)
{
    double wsum = 0;
    bool all_idle = true;

    memset(cv, 0, offsetof(cell_view, usable));
    cpuset_zero(&cv->usable);
    memset(cv->weight_on, 0, t->nr_nodes * sizeof(cv->weight_on[0]));
    memset(cv->mem_frac, 0, t->nr_nodes * sizeof(cv->mem_frac[0]));
    cv->cell = cell;
    cv->home = -1;
    for (unsigned i = 0; i < cell->nr_vcpus; i++)
        if (dcell_vcpu_busy(&cell->vcpus[i], c))
            all_idle = false;
    /* Busy vCPUs weigh by how busy they are; a cell with none weighs all equally. */
    for (unsigned i = 0; i < cell->nr_vcpus; i++) {
        const snap_vcpu *v = &cell->vcpus[i];
        double w = all_idle ? 1.0 : (dcell_vcpu_busy(v, c) ? v->busy : 0.0);
        double share[VN_MAX_NODES];
        vn_cpuset u;

        dcell_vcpu_usable(t, v, &u);
        cpuset_or(&cv->usable, &cv->usable, &u);
        if (dcell_vcpu_busy(v, c))
            cv->busy += 1;
        vcpu_node_share(t, v, share);
        for (unsigned n = 0; n < t->nr_nodes; n++)
            cv->weight_on[n] += w * share[n];
        wsum += w;
    }
    for (unsigned n = 0; n < t->nr_nodes && wsum > 0; n++)
        cv->weight_on[n] /= wsum;

    for (unsigned n = 0; n < t->nr_nodes; n++)
        cv->bytes += cell->pages[n] * cell->page_size;
    for (unsigned n = 0; n < t->nr_nodes && cv->bytes; n++)
        cv->mem_frac[n] = (double)(cell->pages[n] * cell->page_size) / (double)cv->bytes;

    /* Home: every vCPU's affinity inside one node (what vnumad's own pins produce). */
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        bool inside = cell->nr_vcpus > 0;
        for (unsigned i = 0; i < cell->nr_vcpus && inside; i++)
            inside = cpuset_subset(&cell->vcpus[i].pinned, &t->nodes[n].cpus);
        if (inside) {
            cv->home = (int)n;
            break;
        }
    }
    /* Interleaving is an explicit choice to spread memory: respect it. Pinned memory stays
     * where it is, and weighs as much as movable memory: its vCPUs go to it. */
    cv->mem_pinned = cell->mem_pinned != MEM_PIN_NONE;
    cv->mem_movable = cell->binding.mode != VN_MEM_INTERLEAVE && !cv->mem_pinned;
}

/* Locality in percent: the busy-weighted share of memory on the node its vCPU runs on. */
double dcell_locality(const topology *t, const double weight_on[], const double mem_frac[])
{
    double l = 0;

    for (unsigned n = 0; n < t->nr_nodes; n++)
        l += weight_on[n] * mem_frac[n];
    return 100.0 * l;
}

/*
 * The gates on a cell's memory moves toward `target`: the minimum gain (`gain` points of
 * locality) and rule 3 (early migration, then the two-stage filter). True when memory may
 * move now, with the rules of the moves in *mr; otherwise the cell's rules (and, without
 * pins, its reason) say why not.
 */
bool dcell_memory_gate(const snap_domain *d, const vn_config *c, const snap_cell *cell, int target,
                       double gain, vn_rules why, plan_cell *pc, vn_rules *mr)
{
    rule_migrate_verdict priv = rule_migrate_filter(
        d->age_passes, c->early_passes, d->preferred_node, cell->last_candidate, target, false);

    if (d->hints_pending) { /* the guest will say what is hot: that goes first */
        if (!pc->nr_pins)
            pc->reason = REASON_HINTS_PENDING;
        return false;
    }
    if (gain < c->min_gain_points) {
        pc->rules |= RULE_BIT(RULE_HYSTERESIS);
        if (!pc->nr_pins)
            pc->reason = REASON_HYSTERESIS;
        return false;
    }
    if (priv == MIGRATE_WAIT) {
        pc->rules |= RULE_BIT(RULE_TWO_STAGE_FILTER);
        if (!pc->nr_pins)
            pc->reason = REASON_FILTER_PENDING;
        return false;
    }
    *mr = why | RULE_BIT(RULE_LOCK_HOLD) |
          RULE_BIT(priv == MIGRATE_NOW_EARLY ? RULE_EARLY_MIGRATION : RULE_TWO_STAGE_FILTER);
    pc->rules |= *mr;
    return true;
}

int dcell_cmp_source(const void *a, const void *b, void *arg)
{
    const snap_cell *cell = arg;
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

    if (cell->pages[x] != cell->pages[y])
        return cell->pages[x] > cell->pages[y] ? -1 : 1;
    return x < y ? -1 : 1;
}
