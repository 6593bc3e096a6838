/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest memory moves (act_move.h): what a plan moves, as spans of the sample's RAM ranges
 * (act_move_plan), the order the act stage gives the mover for a cell (act_order_cell),
 * which the mover's threads work window by window (move_window.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "act_move.h"
#include "gparange.h"
#include "mover.h"
#include "rules.h"
#include "util.h"

#define ACT_RESERVE_SLACK RESERVE_SLACK_BYTES

const ram_range *act_find_ram(const dom_sample_cache *s, unsigned cell)
{
    for (unsigned i = 0; i < s->nr_ram; i++)
        if (s->ram[i].cell == cell)
            return &s->ram[i];
    return NULL;
}

/* The plan's hot ranges inside [lo, hi), moving (is_range) or not (the cell's hot list), sorted
 * and merged; returns how many. */
static unsigned hot_inside(const plan_cell *pc, uint64_t lo, uint64_t hi, gpa_iv *iv)
{
    unsigned n = 0;

    for (unsigned m = 0; m < pc->nr_moves && n < SNAP_MAX_HOT_RANGES; m++) {
        const plan_move *mv = &pc->moves[m];
        uint64_t s = VN_MAX(mv->gpa, lo), e = VN_MIN(mv->gpa + mv->length, hi);
        if (mv->is_range && s < e)
            iv[n++] = (gpa_iv){s, e};
    }
    for (unsigned h = 0; h < pc->nr_hot && n < 2 * SNAP_MAX_HOT_RANGES; h++) {
        uint64_t s = VN_MAX(pc->hot[h].gpa, lo), e = VN_MIN(pc->hot[h].gpa + pc->hot[h].length, hi);
        if (s < e)
            iv[n++] = (gpa_iv){s, e};
    }
    return gpa_merge(iv, n);
}

/* A cold bulk move over RAM range r: a span for each stretch between the plan's hot ranges,
 * page-aligned inward, and next to a hot range aligned inward to what the kernel migrates at
 * once (r->granule). Returns the spans added at out[0..max-1]. */
static unsigned cold_pieces(const plan_cell *pc, const ram_range *r, const move_span *proto,
                            move_span *out, unsigned max)
{
    gpa_iv iv[2 * SNAP_MAX_HOT_RANGES];
    uint64_t ps = proto->page_size, at = r->gpa, end = r->gpa + r->size;
    /* what moves at once (a transparent huge page): one a hot byte is in stays whole */
    uint64_t g = VN_MAX(ps, r->granule);
    unsigned nr = hot_inside(pc, r->gpa, end, iv), n = 0;

    for (unsigned i = 0; i <= nr && n < max; i++) {
        uint64_t stop = i < nr ? iv[i].start : end;
        uint64_t s = (at - r->gpa + ps - 1) / ps * ps, e = (stop - r->gpa) / ps * ps;
        if (i > 0) /* after a hot range: from the next granule on (in QEMU's addresses) */
            s = VN_MIN((r->hva + s + g - 1) / g * g - r->hva, r->size);
        if (i < nr) /* before one: up to the last granule that ends before it */
            e = (r->hva + e) / g * g > r->hva ? (r->hva + e) / g * g - r->hva : 0;
        if (e > s) {
            out[n] = *proto;
            out[n].hva = r->hva + s;
            out[n].len = e - s;
            n++;
        }
        if (i < nr)
            at = iv[i].end;
    }
    return n;
}

unsigned act_move_plan(const plan_cell *pc, const ram_range *ram, unsigned nr_ram, uint64_t refused,
                       move_span *out, unsigned max)
{
    unsigned n = 0;

    for (unsigned ri = 0; ri < nr_ram && ri < 64; ri++) {
        const ram_range *r = &ram[ri];
        if (r->cell != pc->cell_id || (refused & (1ULL << ri)))
            continue; /* another cell's, or its pages would not move: it stays */
        for (unsigned m = 0; m < pc->nr_moves && n < max; m++) {
            const plan_move *mv = &pc->moves[m];
            move_span sp = {.ri = ri,
                            .move = m,
                            .hot = mv->is_range,
                            .cold = mv->cold && !mv->is_range,
                            .to = mv->to_node,
                            .page_size = r->page_size ? r->page_size : ACT_PAGE_SIZE,
                            .shared = r->shared,
                            .hugetlb = r->hugetlb};
            if (mv->is_range) {
                /* a hot range inside this range, widened to its whole pages (a huge page
                 * any hot byte is in is hot, and moves whole) */
                if (mv->gpa < r->gpa || mv->gpa + mv->length > r->gpa + r->size)
                    continue;
                uint64_t s = (mv->gpa - r->gpa) / sp.page_size * sp.page_size;
                uint64_t e = VN_MIN((mv->gpa - r->gpa + mv->length + sp.page_size - 1) /
                                        sp.page_size * sp.page_size,
                                    r->size);
                sp.hva = r->hva + s;
                sp.len = e - s;
                sp.from = -1;
                sp.bytes = sp.len;
            } else if (sp.cold) {
                sp.from = mv->from_node;
                sp.bytes = mv->bytes;
                n += cold_pieces(pc, r, &sp, out + n, max - n);
                continue;
            } else {
                sp.hva = r->hva;
                sp.len = r->size;
                sp.from = mv->from_node;
                sp.bytes = mv->bytes;
            }
            out[n++] = sp;
        }
    }
    return n;
}

static uint64_t node_reserve(const topology *t, const vn_config *c, unsigned n)
{
    return VN_MAX(c->reserve_bytes,
                  (uint64_t)((double)t->nodes[n].mem_total * c->reserve_fraction));
}

/* The plan's gain for a cell: its moves' expected locality gain (points), its priority. */
static double cell_priority(const plan_cell *pc)
{
    double g = 0;

    for (unsigned m = 0; m < pc->nr_moves; m++)
        g += pc->moves[m].gain_points;
    return g;
}

int act_order_cell(const act_target *tg, const topology *t, const plan_domain *pd, unsigned k,
                   const vn_config *cfg, act_result *res)
{
    const dom_sample_cache *smp = tg->sample;
    uint64_t refused = tg->mover->ram_gen == smp->ram_gen ? tg->mover->mem_refused : 0;
    const plan_cell *pc = &pd->cells[k];
    move_span spans[MOVER_MAX_SPANS];
    unsigned n;
    int r;

    if (smp->pid <= 0 || !smp->nr_ram || !tg->movers || k >= res->nr_cells || pc->keep_order)
        return 0;
    n = pc->nr_moves ? act_move_plan(pc, smp->ram, smp->nr_ram, refused, spans, MOVER_MAX_SPANS)
                     : 0;
    mover_order o = {.uuid = tg->uuid,
                     .name = tg->name,
                     .cell = pc->cell_id,
                     .pid = smp->pid,
                     .ram_gen = smp->ram_gen,
                     .spans = spans,
                     .nr_spans = n,
                     .nr_moves = pc->nr_moves,
                     .batch = pc->batch_pages ? pc->batch_pages : LOCK_HOLD_MAX_PAGES,
                     .priority = cell_priority(pc),
                     .rate_mib = tg->rate_mib};
    for (unsigned i = 0; i < n; i++) /* each span keeps its own target's reserve */
        spans[i].reserve = node_reserve(t, cfg, (unsigned)spans[i].to);
    /* a cell the plan moves nothing of any more drops what was queued for it */
    r = mover_order_cell(tg->movers, &o);
    for (unsigned i = 0; i < n; i++)
        res->cells[k].bytes_ordered += spans[i].hot ? spans[i].bytes : 0;
    for (unsigned m = 0; m < pc->nr_moves && n; m++)
        res->cells[k].bytes_ordered += pc->moves[m].is_range ? 0 : pc->moves[m].bytes;
    return r < 0 ? r : 0;
}

void act_keep_targets(const act_target *tg, const plan_domain *pd)
{
    vn_nodeset sets[SNAP_MAX_CELLS_PER_DOMAIN];
    const vn_nodeset *nodes[SNAP_MAX_CELLS_PER_DOMAIN] = {0}; /* NULL: no target in the plan */

    for (unsigned k = 0; k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        if (pc->cell_id < SNAP_MAX_CELLS_PER_DOMAIN && pc->target_node >= 0) {
            vn_nodeset *s = &sets[pc->cell_id];
            *s = pc->span;
            nodeset_set(s, (unsigned)pc->target_node);
            if (pc->lower_tier >= 0) /* its cold memory's place */
                nodeset_set(s, (unsigned)pc->lower_tier);
            nodes[pc->cell_id] = s;
        }
    }
    mover_keep_to(tg->movers, tg->uuid, nodes);
}
