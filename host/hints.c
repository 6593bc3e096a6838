/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hints.h"

#include <errno.h>
#include <stdint.h>
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

static int cmp_gpa(const void *a, const void *b)
{
    const snap_hot_range *x = a, *y = b;

    return x->gpa < y->gpa ? -1 : x->gpa > y->gpa;
}

/* A cell's ranges with the overlapping ones merged into one (the hottest heat, shared when any
 * is): the guest says where its hot memory is, not how often, and no byte of it is planned,
 * scanned or counted twice, so a cell's ranges never add up to more than its RAM however many
 * times a hostile guest names it. Sorted by address; returns how many are left. */
static unsigned merge_overlaps(snap_hot_range *h, unsigned n)
{
    unsigned out = 0;

    if (n > 1)
        qsort(h, n, sizeof(*h), cmp_gpa);
    for (unsigned i = 0; i < n; i++) {
        snap_hot_range *m = out ? &h[out - 1] : NULL;
        uint64_t end = h[i].length > UINT64_MAX - h[i].gpa ? UINT64_MAX : h[i].gpa + h[i].length;
        if (m && h[i].gpa < m->gpa + m->length) {
            m->length = VN_MAX(m->gpa + m->length, end) - m->gpa;
            m->heat = VN_MAX(m->heat, h[i].heat);
            m->shared |= h[i].shared;
            continue;
        }
        h[out] = h[i];
        h[out].length = end - h[i].gpa;
        out++;
    }
    return out;
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
        c->nr_hot = merge_overlaps(c->hot, c->nr_hot);
        if (c->nr_hot > 1)
            qsort(c->hot, c->nr_hot, sizeof(*c->hot), cmp_heat);
        if (c->nr_hot > SNAP_MAX_HOT_RANGES)
            c->nr_hot = SNAP_MAX_HOT_RANGES;
    }
    return 0;
}

int hints_apply_carried(const carried_info *ci, const ram_range *ram, unsigned nr_ram,
                        snap_domain *sd)
{
    for (unsigned k = 0; k < sd->nr_cells; k++) {
        snap_cell *c = &sd->cells[k];
        const carried_cell *cc = c->id < SNAP_MAX_CELLS_PER_DOMAIN ? &ci->cells[c->id] : NULL;
        if (!cc || !cc->nr_hot)
            continue;
        c->hot = calloc(cc->nr_hot, sizeof(*c->hot));
        if (!c->hot)
            return -ENOMEM;
        for (unsigned h = 0; h < cc->nr_hot; h++)
            if (cell_of_gpa(sd, ram, nr_ram, cc->hot[h].gpa) == (int)k)
                c->hot[c->nr_hot++] = (snap_hot_range){.gpa = cc->hot[h].gpa,
                                                       .length = cc->hot[h].length,
                                                       .heat = cc->hot[h].heat,
                                                       .shared = cc->hot[h].shared};
        c->nr_hot = merge_overlaps(c->hot, c->nr_hot);
        if (c->nr_hot > 1)
            qsort(c->hot, c->nr_hot, sizeof(*c->hot), cmp_heat);
    }
    return 0;
}

static bool overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/* A range of the last set, kept one more set as fading (at `heat`); at most
 * SNAP_MAX_HOT_RANGES ranges a cell. 0 or -ENOMEM. */
static int add_fading(snap_cell *c, const hint_prev *hp, double heat)
{
    snap_hot_range *h;

    if (c->nr_hot >= SNAP_MAX_HOT_RANGES)
        return 0;
    h = realloc(c->hot, (c->nr_hot + 1) * sizeof(*h));
    if (!h)
        return -ENOMEM;
    c->hot = h;
    c->hot[c->nr_hot++] =
        (snap_hot_range){.gpa = hp->gpa, .length = hp->length, .heat = heat, .fading = true};
    return 0;
}

/* The cell's ranges as the last follow left them (the same hint set again). */
static int follow_again(snap_cell *c, const dom_sample_cache *sc)
{
    for (unsigned i = 0; i < c->nr_hot; i++)
        for (unsigned p = 0; p < sc->nr_hint_prev; p++) {
            const hint_prev *hp = &sc->hint_prev[p];
            if (hp->cell == c->id && hp->seen && hp->gpa == c->hot[i].gpa &&
                hp->length == c->hot[i].length) {
                c->hot[i].agree = hp->seen - 1;
                c->hot[i].heat = hp->heat;
            }
        }
    for (unsigned p = 0; p < sc->nr_hint_prev; p++) {
        const hint_prev *hp = &sc->hint_prev[p];
        if (hp->cell == c->id && !hp->seen && add_fading(c, hp, hp->heat) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* A new hint set: each range's run of sets and smoothed heat from the last one's ranges it
 * overlaps; the last one's ranges no range overlaps now stay one more set, fading. */
static int follow_new(snap_cell *c, const dom_sample_cache *sc)
{
    for (unsigned i = 0; i < c->nr_hot; i++) {
        snap_hot_range *h = &c->hot[i];
        double heat = 0;
        unsigned runs = 0, n = 0;
        for (unsigned p = 0; p < sc->nr_hint_prev; p++) {
            const hint_prev *hp = &sc->hint_prev[p];
            if (hp->cell != c->id || !hp->seen || !overlaps(h->gpa, h->length, hp->gpa, hp->length))
                continue;
            runs = VN_MAX(runs, hp->seen);
            heat += hp->heat;
            n++;
        }
        h->agree = VN_MIN(runs, 1000u);
        if (n)
            h->heat = (h->heat + heat / n) / 2;
    }
    for (unsigned p = 0; p < sc->nr_hint_prev; p++) {
        const hint_prev *hp = &sc->hint_prev[p];
        bool still = false;
        if (hp->cell != c->id || !hp->seen)
            continue; /* a fading range absent again: cold now */
        for (unsigned i = 0; i < c->nr_hot && !still; i++)
            still =
                !c->hot[i].fading && overlaps(c->hot[i].gpa, c->hot[i].length, hp->gpa, hp->length);
        if (!still && add_fading(c, hp, hp->heat / 2) < 0)
            return -ENOMEM;
    }
    return 0;
}

int hints_follow(snap_domain *sd, uint64_t seq, dom_sample_cache *sc)
{
    bool again = seq == sc->hints_seq;
    unsigned n = 0;

    for (unsigned k = 0; k < sd->nr_cells; k++) {
        int r = again ? follow_again(&sd->cells[k], sc) : follow_new(&sd->cells[k], sc);
        if (r < 0)
            return r;
        if (sd->cells[k].nr_hot > 1)
            qsort(sd->cells[k].hot, sd->cells[k].nr_hot, sizeof(*sd->cells[k].hot), cmp_heat);
    }
    if (again)
        return 0;
    /* what the next hint set is followed from: the hottest first, as many as fit */
    sc->hints_seq = seq;
    for (unsigned k = 0; k < sd->nr_cells; k++)
        for (unsigned i = 0; i < sd->cells[k].nr_hot && n < HINT_PREV_MAX; i++) {
            const snap_hot_range *h = &sd->cells[k].hot[i];
            sc->hint_prev[n++] = (hint_prev){.cell = sd->cells[k].id,
                                             .seen = h->fading ? 0 : h->agree + 1,
                                             .gpa = h->gpa,
                                             .length = h->length,
                                             .heat = h->heat};
        }
    sc->nr_hint_prev = n;
    return 0;
}
