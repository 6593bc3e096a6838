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

static void apply_cell(const topology *t, snapshot *n, snap_cell *cell, const plan_cell *pc)
{
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
        uint64_t pages;
        if (m->is_range || m->from_node < 0)
            continue; /* ordering directives: their bytes are in the bulk moves */
        pages = VN_MIN(m->bytes / cell->page_size, cell->pages[m->from_node]);
        cell->pages[m->from_node] -= pages;
        cell->pages[m->to_node] += pages;
        for (int side = 0; side < 2; side++) {
            unsigned node = (unsigned)(side ? m->to_node : m->from_node);
            if (!n->free_known[node]) {
                n->free_known[node] = true;
                n->free_bytes[node] = t->nodes[node].mem_free;
            }
        }
        if (topo_huge_slot(snapshot_node_huge(t, n, (unsigned)m->to_node), cell->page_size) >= 0) {
            /* hugetlb: the pages come from the pools, MemFree does not change */
            for (int side = 0; side < 2; side++) {
                unsigned node = (unsigned)(side ? m->to_node : m->from_node);
                int h;
                const topo_huge *from = snapshot_node_huge(t, n, node);
                if (topo_huge_slot(n->free_huge[node], cell->page_size) < 0 &&
                    from != n->free_huge[node])
                    memcpy(n->free_huge[node], from, sizeof(n->free_huge[node]));
                h = topo_huge_slot(n->free_huge[node], cell->page_size);
                if (h >= 0 && side)
                    n->free_huge[node][h].free_pages -=
                        VN_MIN(n->free_huge[node][h].free_pages, pages);
                else if (h >= 0)
                    n->free_huge[node][h].free_pages += pages;
            }
            continue;
        }
        n->free_bytes[m->from_node] += pages * cell->page_size;
        n->free_bytes[m->to_node] -= VN_MIN(n->free_bytes[m->to_node], pages * cell->page_size);
    }
    cell->last_candidate = pc->candidate_node;
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
