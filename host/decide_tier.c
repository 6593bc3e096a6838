/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage: a cell's memory on two tiers (decide_priv.h). A cell with vCPUs placed on
 * a node that has a lower memory tier (a CPU-less node of CXL, HBM or PMem memory the kernel
 * counts lower: topology_tiers.c) keeps its hot memory, as the guest's hints say, on its home
 * node, and its cold memory on that tier, when the home node has no room for all of it
 * (tier="auto") or always (tier="cold-first"). Without hints a cell is uniformly warm: nothing
 * of it is demoted, unless the domain asks for its memory down (tier="cold-first"), which then
 * puts on the tier what does not fit at home.
 *
 * The plan, in the order the mover works it: cold memory from the home node down, to make room
 * for the hot memory that is not home yet; the hot ranges home; what is on other nodes home up
 * to the room that is left, the rest down. What is on the lower tier already stays there: it
 * comes home only as a hot range, or in bulk once the home node has room for all of the cell
 * again (then the cell is on one tier, decide.c) and none of it went down in the last
 * TIER_SETTLE_PASSES passes (room the same pass's moves freed at home must not send it straight
 * back up: "settling").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decide_priv.h"
#include "gparange.h"
#include "util.h"

int dtier_lower(const topology *t, const snap_domain *d, const snap_cell *cell, unsigned n)
{
    int l;

    if (d->tier == VN_TIER_OFF || cell->nr_vcpus == 0 || n >= t->nr_nodes)
        return -1;
    l = t->nodes[n].lower_tier;
    if (l < 0 || !nodeset_allows(&d->allowed_nodes, (unsigned)l))
        return -1;
    switch (cell->binding.mode) {
    case VN_MEM_NONE:
        return l;
    case VN_MEM_STRICT:
    case VN_MEM_RESTRICTIVE:
        return nodeset_allows(&cell->binding.nodes, (unsigned)l) ? l : -1;
    default:
        return -1; /* preferred: the operator's node; interleave: spread on purpose */
    }
}

/* The cell's hot set in bytes, and of it on node n: the counted hot pages (sample_hot.c), or
 * (a snapshot without them) the merged hot ranges, on node n as far as its pages hold them: a
 * guess that moves nothing twice, where one spread as the cell's memory would find the same hot
 * set away from home pass after pass. */
static uint64_t hot_set(const cell_view *cv, unsigned n, uint64_t *on_n)
{
    const snap_cell *cell = cv->cell;
    uint64_t ps = cell->page_size, h = 0;

    if (cell->hot_pages) {
        for (unsigned i = 0; i < cell->nr_nodes; i++)
            h += VN_MIN(cell->hot_pages[i], cell->pages[i]) * ps;
        *on_n = VN_MIN(cell->hot_pages[n], cell->pages[n]) * ps;
        return h;
    }
    gpa_iv iv[SNAP_MAX_HOT_RANGES];
    unsigned nr = 0;
    for (unsigned i = 0; i < cell->nr_hot && nr < SNAP_MAX_HOT_RANGES; i++)
        if (cell->hot[i].length <= UINT64_MAX - cell->hot[i].gpa)
            iv[nr++] = (gpa_iv){cell->hot[i].gpa, cell->hot[i].gpa + cell->hot[i].length};
    nr = gpa_merge(iv, nr);
    for (unsigned i = 0; i < nr; i++)
        h += iv[i].end - iv[i].start;
    h = VN_MIN(h, cv->bytes);
    *on_n = VN_MIN(h, cell->pages[n] * ps);
    return h;
}

uint64_t dtier_room(const topology *t, const vn_config *c, const pass_state *ps,
                    const snap_domain *d, const cell_view *cv, unsigned n)
{
    int l = dtier_lower(t, d, cv->cell, n);
    uint64_t hot_n, hot, room;

    if (l < 0 || !cv->mem_movable)
        return 0;
    room = dcell_room(t, c, ps, cv->cell, (unsigned)l);
    if (cv->cell->nr_hot == 0)
        return d->tier == VN_TIER_COLD_FIRST ? room : 0; /* uniformly warm: stays up */
    hot = hot_set(cv, n, &hot_n);
    return VN_MIN(room, cv->bytes > hot ? cv->bytes - hot : 0); /* the cold part */
}

void dtier_view(const topology *t, const vn_config *c, const pass_state *ps, const snap_domain *d,
                const cell_view *cv, unsigned target, tier_view *tv)
{
    const snap_cell *cell = cv->cell;
    uint64_t psz = cell->page_size, need, cold_t, hot_off;
    bool short_of_room;

    memset(tv, 0, sizeof(*tv));
    tv->lower = dtier_lower(t, d, cell, target);
    if (tv->lower < 0 || !cv->mem_movable || !cv->bytes)
        return;
    tv->home = cell->pages[target] * psz;
    tv->on_lower = cell->pages[tv->lower] * psz;
    need = cv->bytes - VN_MIN(cv->bytes, tv->home);
    short_of_room = need > dcell_room(t, c, ps, cell, target);
    if (d->tier == VN_TIER_COLD_FIRST && (cell->nr_hot || short_of_room))
        tv->why = TIER_WHY_COLD_FIRST;
    else if (short_of_room && cell->nr_hot)
        tv->why = TIER_WHY_HOME_SHORT;
    else if (tv->on_lower && cell->down_ago && cell->down_ago <= TIER_SETTLE_PASSES)
        tv->why = TIER_WHY_SETTLING; /* the home has room now, but it went down just now */
    else
        return;
    /* a uniformly warm cell (no hints) goes down only when the domain asks for it */
    tv->may_down = cell->nr_hot || d->tier == VN_TIER_COLD_FIRST;
    if (cell->nr_hot)
        tv->hot = hot_set(cv, target, &tv->hot_home);
    tv->stray = cv->bytes - VN_MIN(cv->bytes, tv->home + tv->on_lower);
    cold_t = tv->home > tv->hot_home ? tv->home - tv->hot_home : 0;
    hot_off = tv->hot > tv->hot_home ? tv->hot - tv->hot_home : 0;
    /* what the plan would change: memory on other nodes, hot memory not home, and for
     * cold-first cold memory at home; the hot memory counts as its share of the hot set (the
     * guest's working set: 10 MiB of it away matters, however large the cell) */
    tv->gain = 100.0 *
               (double)(tv->stray + hot_off + (tv->why == TIER_WHY_COLD_FIRST ? cold_t : 0)) /
               (double)cv->bytes;
    if (tv->hot)
        tv->gain = VN_MAX(tv->gain, 100.0 * (double)hot_off / (double)tv->hot);
}

static void add_move(plan_cell *pc, plan_move m)
{
    pc->moves[pc->nr_moves++] = m;
    pc->rules |= m.rules;
}

/* What of a cell's pages per page, rounded down to whole pages. */
static uint64_t whole(uint64_t bytes, uint64_t ps)
{
    return bytes / ps * ps;
}

/*
 * What `bytes` of the cell's hot ranges take when they move: with a granule above the page
 * size (THP), each range rounded out to whole granules, in the share of the whole hot set.
 */
static uint64_t granule_need(const snap_cell *cell, uint64_t bytes)
{
    uint64_t g = cell->granule, len = 0, wide = 0;

    if (g <= cell->page_size || !bytes)
        return bytes;
    for (unsigned i = 0; i < cell->nr_hot; i++) {
        const snap_hot_range *h = &cell->hot[i];
        if (h->gpa + h->length > UINT64_MAX - g) /* (a snapshot's: gpa + length fits) */
            continue;
        len += h->length;
        wide += (h->gpa + h->length + g - 1) / g * g - h->gpa / g * g;
    }
    if (!len)
        return bytes;
    unsigned __int128 need = (unsigned __int128)bytes * wide / len;
    return need > UINT64_MAX ? UINT64_MAX : (uint64_t)need;
}

int dtier_plan(const topology *t, const vn_config *c, pass_state *ps, const cell_view *cv,
               unsigned target, const tier_view *tv, bool shared_ok, bool early, vn_rules base,
               plan_cell *pc, uint64_t *home_after)
{
    const snap_cell *cell = cv->cell;
    uint64_t psz = cell->page_size, b = cv->bytes, demote = 0, to_home = 0, down = 0, short_t = 0;
    uint64_t room_t = whole(dcell_room(t, c, ps, cell, target), psz), left_t, left_l;
    uint64_t cold_t = tv->home > tv->hot_home ? tv->home - tv->hot_home : 0;
    uint64_t hot_off = tv->hot > tv->hot_home ? tv->hot - tv->hot_home : 0;
    unsigned l = (unsigned)tv->lower, order[VN_MAX_NODES], nr_src = 0;
    uint64_t room_l = whole(dcell_room(t, c, ps, cell, l), psz);
    /* memory is cold when two hint sets agree (rule 3): a range of the first set hot, the rest
     * of the cell may still be memory the guest's agent did not look at yet */
    bool hints = cell->nr_hot > 0, hot_wait = false, cold_known = false;
    vn_tier_why why = tv->why;
    vn_rules tier_rules = base | RULE_BIT(RULE_LOWER_TIER);

    for (unsigned i = 0; i < cell->nr_hot; i++) {
        hot_wait |= cell->hot[i].shared && !shared_ok;
        cold_known |= cell->hot[i].agree > 0 || cell->hot[i].fading;
    }
    /* the room the hot memory away takes at home: whole transparent huge pages */
    uint64_t hot_need = granule_need(cell, hot_off);
    /* every hot range, moving or not, fading too: what the cold moves leave alone */
    if (cell->nr_hot && !(pc->hot = calloc(cell->nr_hot, sizeof(*pc->hot))))
        return -ENOMEM;
    for (unsigned i = 0; i < cell->nr_hot; i++)
        pc->hot[pc->nr_hot++] = (plan_range){cell->hot[i].gpa, cell->hot[i].length};

    pc->moves = calloc(cell->nr_hot + 2 * t->nr_nodes + 1, sizeof(*pc->moves));
    if (!pc->moves)
        return -ENOMEM;
    pc->rules |= RULE_BIT(RULE_LOWER_TIER);

    /* 1. cold memory down from home: what the hot memory that is not home needs (all of it
     * for cold-first), what home is below its reserve, and a margin of the reserve's slack
     * for what others allocate there until the hot ranges have come (the mover stops moving
     * into home at the same floor: they would wait for another pass). Never while a shared
     * hot range waits (rule 3): its pages would count as cold; nor on the first hint set
     * (cold_known). */
    if (hints && !hot_wait && cold_known && why != TIER_WHY_SETTLING) {
        if (hot_need > room_t && topo_huge_slot(ps->huge[target], psz) < 0) /* (not a pool) */
            short_t = dcell_deficit(t, c, ps, cell, target) +
                      VN_MIN((uint64_t)RESERVE_SLACK_BYTES, hot_need);
        demote = why == TIER_WHY_COLD_FIRST ? cold_t
                 : hot_need > room_t        ? hot_need - room_t + short_t
                                            : 0;
        demote = whole(VN_MIN(VN_MIN(demote, cold_t), room_l), psz);
    }
    if (demote)
        add_move(pc, (plan_move){.from_node = (int)target,
                                 .to_node = (int)l,
                                 .bytes = demote,
                                 .cold = true,
                                 .gain_points = 100.0 * (double)demote / (double)b,
                                 .rules = tier_rules});
    /* 2. the hot ranges home, when more than one percent of the hot set is not (what a sampled
     * count cannot tell from all of it) */
    /* (what home was short of and the margin stay free) */
    left_t = room_t + demote - VN_MIN(demote, short_t);
    if (hints && hot_off * 100 > tv->hot) {
        for (unsigned i = 0; i < cell->nr_hot; i++) {
            const snap_hot_range *h = &cell->hot[i];
            /* up a tier only on two agreeing hint sets (rule 3; one in the early passes) */
            if ((h->shared && !shared_ok) || h->fading || (!h->agree && !early))
                continue;
            add_move(pc, (plan_move){.from_node = -1,
                                     .to_node = (int)target,
                                     .bytes = h->length,
                                     .gpa = h->gpa,
                                     .length = h->length,
                                     .is_range = true,
                                     .gain_points = 100.0 * (double)h->length / (double)b,
                                     .rules = base | RULE_BIT(RULE_HOT_FIRST)});
        }
        to_home = VN_MIN(hot_need, left_t);
        left_t -= to_home;
    }
    /* 3. what is on other nodes: home up to the room left (cold-first: down, as cold memory,
     * the hot part of it went home as hot ranges), the rest down */
    left_l = room_l - demote;
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (n != target && n != l && cell->pages[n])
            order[nr_src++] = n;
    qsort_r(order, nr_src, sizeof(order[0]), dcell_cmp_source, (void *)cell);
    for (unsigned i = 0; i < nr_src; i++) {
        unsigned n = order[i];
        uint64_t bytes = cell->pages[n] * psz, up = 0, dn;
        if (why != TIER_WHY_COLD_FIRST || !hints) {
            up = VN_MIN(bytes, left_t);
            left_t -= up;
        }
        /* (while a shared hot range waits, what is cold is not known: nothing goes down) */
        dn = !tv->may_down || (hints && (hot_wait || !cold_known)) ? 0 : VN_MIN(bytes - up, left_l);
        if (hints && cell->hot_pages) /* its hot pages stay up: they go home as hot ranges */
            dn =
                VN_MIN(dn, bytes - VN_MIN(bytes, VN_MIN(cell->hot_pages[n], cell->pages[n]) * psz));
        left_l -= dn;
        if (up)
            add_move(pc, (plan_move){.from_node = (int)n,
                                     .to_node = (int)target,
                                     .bytes = up,
                                     .gain_points = 100.0 * (double)up / (double)b,
                                     .rules = base});
        if (dn)
            add_move(pc, (plan_move){.from_node = (int)n,
                                     .to_node = (int)l,
                                     .bytes = dn,
                                     .cold = hints,
                                     .gain_points = 100.0 * (double)dn / (double)b / 2,
                                     .rules = tier_rules});
        to_home += up;
        down += dn;
    }
    if (!pc->nr_moves) {
        free(pc->moves);
        pc->moves = NULL;
    }
    dcell_take_room(ps, cell, target, to_home > demote ? to_home - demote : 0);
    dcell_take_room(ps, cell, l, demote + down);
    pc->tier = (plan_tier){.why = why,
                           .hints = hints,
                           .hot = tv->hot,
                           .hot_home = tv->hot_home,
                           .home = tv->home,
                           .lower = tv->on_lower,
                           .demote = demote,
                           .down = down};
    *home_after = tv->home - demote + to_home;
    return 0;
}
