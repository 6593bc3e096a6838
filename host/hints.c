/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hints.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static int cell_of_vcpu(const snap_domain *sd, uint32_t vcpu)
{
    for (unsigned k = 0; k < sd->nr_cells; k++)
        for (unsigned v = 0; v < sd->cells[k].nr_vcpus; v++)
            if (sd->cells[k].vcpus[v].id == vcpu)
                return (int)k;
    return -1;
}

static int cell_of_gpa(const snap_domain *sd, const ram_range *ram, unsigned nr_ram, uint64_t gpa)
{
    for (unsigned i = 0; i < nr_ram; i++)
        if (gpa >= ram[i].gpa && gpa - ram[i].gpa < ram[i].size)
            for (unsigned k = 0; k < sd->nr_cells; k++)
                if (sd->cells[k].id == ram[i].cell)
                    return (int)k;
    return -1;
}

static int cmp_heat(const void *a, const void *b)
{
    const snap_hot_range *x = a, *y = b;

    if (x->heat != y->heat)
        return x->heat > y->heat ? -1 : 1;
    return x->gpa < y->gpa ? -1 : x->gpa > y->gpa;
}

static int add_share(snap_cell *c, unsigned other, double w)
{
    snap_share *s;

    for (unsigned i = 0; i < c->nr_shares; i++)
        if (c->shares[i].cell == other) {
            c->shares[i].weight = VN_MAX(c->shares[i].weight, w);
            return 0;
        }
    if (c->nr_shares >= SNAP_MAX_SHARES)
        return 0;
    s = realloc(c->shares, (c->nr_shares + 1) * sizeof(*s));
    if (!s)
        return -ENOMEM;
    c->shares = s;
    c->shares[c->nr_shares++] = (snap_share){.cell = other, .weight = w};
    return 0;
}

int hints_apply(const proto_hints *h, const ram_range *ram, unsigned nr_ram, snap_domain *sd)
{
    unsigned counts[SNAP_MAX_CELLS_PER_DOMAIN] = {0};

    /* first the sizes, so each cell's array is allocated once */
    for (unsigned p = 0; p < h->nr_processes; p++)
        for (unsigned r = 0; r < h->processes[p].nr_ranges; r++) {
            int k = cell_of_gpa(sd, ram, nr_ram, h->processes[p].ranges[r].gpa);
            if (k >= 0 && k < SNAP_MAX_CELLS_PER_DOMAIN)
                counts[k]++;
        }
    for (unsigned k = 0; k < sd->nr_cells && k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        if (!counts[k])
            continue;
        sd->cells[k].hot = calloc(counts[k], sizeof(*sd->cells[k].hot));
        if (!sd->cells[k].hot)
            return -ENOMEM;
    }
    for (unsigned p = 0; p < h->nr_processes; p++) {
        const proto_process *pr = &h->processes[p];
        uint64_t cells = 0;
        for (unsigned v = 0; v < pr->nr_vcpus; v++) {
            int k = cell_of_vcpu(sd, pr->vcpus[v]);
            if (k >= 0 && k < 64)
                cells |= 1ULL << k;
        }
        /* a process whose threads run in several cells shares its memory between them */
        bool shared = cells && (cells & (cells - 1));
        for (unsigned r = 0; r < pr->nr_ranges; r++) {
            int k = cell_of_gpa(sd, ram, nr_ram, pr->ranges[r].gpa);
            snap_cell *c;
            if (k < 0 || k >= SNAP_MAX_CELLS_PER_DOMAIN)
                continue;
            c = &sd->cells[k];
            c->hot[c->nr_hot++] = (snap_hot_range){
                .gpa = pr->ranges[r].gpa,
                .length = pr->ranges[r].length,
                .heat = (double)pr->ranges[r].heat / PROTO_MAX_HEAT,
                .shared = shared,
            };
        }
        for (unsigned a = 0; shared && a < sd->nr_cells && a < 64; a++)
            for (unsigned b = 0; b < sd->nr_cells && b < 64; b++)
                if (a != b && (cells & (1ULL << a)) && (cells & (1ULL << b)) &&
                    add_share(&sd->cells[a], sd->cells[b].id, HINT_SHARE_WEIGHT) < 0)
                    return -ENOMEM;
    }
    for (unsigned k = 0; k < sd->nr_cells; k++) {
        snap_cell *c = &sd->cells[k];
        /* a cell without hot ranges has hot == NULL, which qsort() must not get */
        if (c->nr_hot > 1)
            qsort(c->hot, c->nr_hot, sizeof(*c->hot), cmp_heat);
        if (c->nr_hot > SNAP_MAX_HOT_RANGES)
            c->nr_hot = SNAP_MAX_HOT_RANGES;
    }
    return 0;
}
