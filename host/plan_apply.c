/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plan_apply (decide.h): the snapshot the host would show once a plan is carried out, for
 * `vnumad --advise --passes N` and the convergence properties of the tests.
 */
#include <string.h>

#include "decide.h"
#include "plan_apply.h"
#include "util.h"

static snap_domain *find_domain(snapshot *s, const char *name)
{
    for (unsigned i = 0; i < s->nr_domains; i++)
        if (strcmp(s->domains[i].name, name) == 0)
            return &s->domains[i];
    return NULL;
}

static snap_vcpu *find_vcpu(snap_cell *cell, unsigned id)
{
    for (unsigned i = 0; i < cell->nr_vcpus; i++)
        if (cell->vcpus[i].id == id)
            return &cell->vcpus[i];
    return NULL;
}

/* Account pages moving from node `from` to `to` in the snapshot's free memory (or pools). */
static void account_move(const topology *t, snapshot *n, const snap_cell *cell, unsigned from,
                         unsigned to, uint64_t pages)
{
    for (int side = 0; side < 2; side++) {
        unsigned node = side ? to : from;
        if (!n->free_known[node]) {
            n->free_known[node] = true;
            n->free_bytes[node] = t->nodes[node].mem_free;
        }
    }
    if (topo_huge_slot(snapshot_node_huge(t, n, to), cell->page_size) >= 0) {
        /* hugetlb: the pages come from the pools, MemFree does not change */
        for (int side = 0; side < 2; side++) {
            unsigned node = side ? to : from;
            int h;
            const topo_huge *src = snapshot_node_huge(t, n, node);
            if (topo_huge_slot(n->free_huge[node], cell->page_size) < 0 &&
                src != n->free_huge[node])
                memcpy(n->free_huge[node], src, sizeof(n->free_huge[node]));
            h = topo_huge_slot(n->free_huge[node], cell->page_size);
            if (h >= 0 && side)
                n->free_huge[node][h].free_pages -= VN_MIN(n->free_huge[node][h].free_pages, pages);
            else if (h >= 0)
                n->free_huge[node][h].free_pages += pages;
        }
        return;
    }
    n->free_bytes[from] += pages * cell->page_size;
    n->free_bytes[to] -= VN_MIN(n->free_bytes[to], pages * cell->page_size);
}

/* A tiered cell's hot ranges carried out: its hot pages elsewhere come to `to`, as many as
 * the plan counted on (pc->tier: the hot set not home, within what the plan made room for). */
static void apply_hot(const topology *t, snapshot *n, snap_cell *cell, const plan_cell *pc,
                      unsigned to)
{
    uint64_t want = (pc->tier.hot - VN_MIN(pc->tier.hot, pc->tier.hot_home)) / cell->page_size;

    for (unsigned f = 0; f < t->nr_nodes && want; f++) {
        uint64_t hot_f =
            cell->hot_pages ? VN_MIN(cell->hot_pages[f], cell->pages[f]) : cell->pages[f];
        uint64_t k = f == to ? 0 : VN_MIN(want, hot_f);
        if (!k)
            continue;
        cell->pages[f] -= k;
        cell->pages[to] += k;
        if (cell->hot_pages) {
            cell->hot_pages[f] -= k;
            cell->hot_pages[to] += k;
        }
        account_move(t, n, cell, f, to, k);
        want -= k;
    }
}

static void apply_cell(const topology *t, snapshot *n, snap_cell *cell, const plan_cell *pc)
{
    bool hot_done = false;

    for (unsigned i = 0; i < pc->nr_pins; i++) {
        snap_vcpu *v = find_vcpu(cell, pc->pins[i].vcpu);
        if (!v)
            continue;
        v->pinned = pc->pins[i].cpus;
        if (v->cpu < 0 || !cpuset_isset(&v->pinned, (unsigned)v->cpu))
            v->cpu = cpuset_first(&v->pinned);
    }
    for (unsigned i = 0; i < pc->nr_moves; i++) {
        const plan_move *m = &pc->moves[i];
        uint64_t pages, cold_from;
        if (m->is_range && pc->tier.why != TIER_WHY_NONE && !hot_done) {
            /* a tiered cell's hot ranges are moves of their own */
            apply_hot(t, n, cell, pc, (unsigned)m->to_node);
            hot_done = true;
        }
        if (m->is_range || m->from_node < 0)
            continue; /* ordering directives: their bytes are in the bulk moves */
        /* a cold move leaves the hot pages where they are */
        cold_from = m->cold && cell->hot_pages
                        ? cell->pages[m->from_node] -
                              VN_MIN(cell->hot_pages[m->from_node], cell->pages[m->from_node])
                        : cell->pages[m->from_node];
        pages = VN_MIN(m->bytes / cell->page_size, cold_from);
        cell->pages[m->from_node] -= pages;
        cell->pages[m->to_node] += pages;
        account_move(t, n, cell, (unsigned)m->from_node, (unsigned)m->to_node, pages);
    }
    cell->last_candidate = pc->candidate_node;
    if (pc->tier.demote + pc->tier.down > 0)
        cell->down_ago = 1;
    else if (cell->down_ago)
        cell->down_ago++;
}

int plan_apply(const topology *t, const snapshot *s, const plan *p, snapshot *ret)
{
    snapshot n;
    int r = snapshot_copy(s, &n);

    if (r < 0)
        return r;
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        snap_domain *d = find_domain(&n, pd->name);
        int main_node = -1;
        uint64_t main_bytes = 0;
        if (!d)
            continue;
        for (unsigned k = 0; k < pd->nr_cells && k < d->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            snap_cell *cell = &d->cells[k];
            uint64_t bytes = 0;
            if (pd->mode == VN_MODE_AUTO)
                apply_cell(t, &n, cell, pc);
            else
                cell->last_candidate = pc->candidate_node;
            for (unsigned m = 0; m < t->nr_nodes; m++)
                bytes += cell->pages[m] * cell->page_size;
            if (pc->target_node >= 0 && (main_node < 0 || bytes > main_bytes)) {
                main_node = pc->target_node;
                main_bytes = bytes;
            }
        }
        if (pd->mode == VN_MODE_AUTO && main_node >= 0)
            d->preferred_node = main_node;
    }
    for (unsigned i = 0; i < n.nr_domains; i++)
        n.domains[i].age_passes++;
    n.pass++;
    *ret = n;
    return 0;
}
