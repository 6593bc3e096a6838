/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tiered memory in the decide stage (host/decide_tier.c), on a host whose nodes 1-3 have CPUs
 * and 4-5 none (node 1's lower tier is 4): a cell whose home node is short of room keeps its
 * hot set home and puts cold memory on the lower tier (demoting as much cold memory from home
 * as the hot memory that is not home needs), and once it is so, it stays (no page planned to
 * move twice); without hints, with tier="off", with the tier outside the domain's nodes or its
 * binding, or while a shared hot range waits, nothing goes down; tier="cold-first" puts the
 * cold memory down even when the home has room; no node ever goes below its reserve.
 */
#include <json-c/json.h>

#include "decide-fixture.h"
#include "plan_apply.h"
#include "record.h"
#include "rules.h"
#include "tap.h"
#include "util.h"

#define TOPO "tests/data/topologies/16amd64-8n2c-cpusets.xml"

static topology *t;
static int n1, n2, n4; /* node indexes of kernel nodes 1, 2, 4 */
static vn_cpuset all_cpus;

static uint64_t floor_of(int n)
{
    vn_config c;

    config_defaults(&c);
    return VN_MAX(c.reserve_bytes, (uint64_t)((double)t->nodes[n].mem_total * c.reserve_fraction)) +
           RESERVE_SLACK_BYTES;
}

/* node n has `room` MiB above its reserve and slack */
static void set_room(snapshot *s, int n, uint64_t room_mib)
{
    s->free_known[n] = true;
    s->free_bytes[n] = floor_of(n) + room_mib * MIB;
}

/*
 * One domain "vm", one cell of 2 busy vCPUs on node 1 (allowed everywhere), `home`, `low` and
 * `other` MiB on nodes 1, 4 and 2; with `hot` MiB of hot ranges (hot_home of them on node 1,
 * the rest on node 4); node 1 has `room` MiB of room, the others plenty.
 */
static snap_cell *one_cell(snapshot *s, uint64_t home, uint64_t low, uint64_t other, uint64_t hot,
                           uint64_t hot_home, uint64_t room)
{
    snap_domain *d;
    snap_cell *c;

    snap_init(s);
    d = add_domain(s, "vm", VN_MODE_AUTO, 1, n1);
    c = add_cell(d, 2, 0, 0.9, &all_cpus, &t->nodes[n1].cpus);
    set_mem(c, (unsigned)n1, home);
    set_mem(c, (unsigned)n4, low);
    set_mem(c, (unsigned)n2, other);
    c->last_candidate = n1;
    if (hot) {
        c->nr_hot = 1;
        c->hot = calloc(1, sizeof(*c->hot));
        /* a second hint set that agrees: what is not hot is known cold */
        c->hot[0] = (snap_hot_range){.gpa = 1ULL << 30, .length = hot * MIB, .heat = 1, .agree = 1};
        if (snap_cell_hot_nodes(c) < 0)
            abort();
        c->hot_pages[n1] = hot_home * MIB / PAGE;
        c->hot_pages[n4] = (hot - hot_home) * MIB / PAGE;
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        set_room(s, (int)n, 64 * 1024);
    set_room(s, n1, room);
    return c;
}

/* Every move goes to the target or its lower tier, with a rule; the bytes into a node stay
 * within its room (hot ranges: what the plan counted on). */
static const char *moves_ok(const snapshot *s, const plan_cell *pc)
{
    uint64_t into[VN_MAX_NODES] = {0}, out[VN_MAX_NODES] = {0};

    for (unsigned m = 0; m < pc->nr_moves; m++) {
        const plan_move *mv = &pc->moves[m];
        if ((mv->to_node != pc->target_node && mv->to_node != pc->lower_tier) || !mv->rules)
            return "a move not to the target or its lower tier, or without a rule";
        if (mv->to_node == pc->lower_tier && !(mv->rules & RULE_BIT(RULE_LOWER_TIER)))
            return "a move down without the rule lower-tier";
        if (!mv->is_range) {
            into[mv->to_node] += mv->bytes;
            out[mv->from_node] += mv->bytes;
        }
    }
    into[pc->target_node] += pc->tier.hot - pc->tier.hot_home; /* the hot set not home */
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (into[n] > out[n] && into[n] - out[n] > s->free_bytes[n] - floor_of((int)n))
            return "more into a node than its room above the reserve";
    return NULL;
}

static const plan_move *find_move(const plan_cell *pc, int from, int to, bool range)
{
    for (unsigned m = 0; pc && m < pc->nr_moves; m++)
        if (pc->moves[m].is_range == range && pc->moves[m].to_node == to &&
            (range || pc->moves[m].from_node == from))
            return &pc->moves[m];
    return NULL;
}

static bool moves_down(const plan_cell *pc)
{
    for (unsigned m = 0; pc && m < pc->nr_moves; m++)
        if (pc->moves[m].to_node == n4)
            return true;
    return false;
}

int main(void)
{
    snapshot s, s1;
    plan p, p2;
    const plan_cell *pc;
    const plan_move *mv;
    const char *why;
    snap_cell *c;

    t = load_xml(TOPO);
    if (!t)
        return 1;
    n1 = topo_node_index(t, 1);
    n2 = topo_node_index(t, 2);
    n4 = topo_node_index(t, 4);
    cpuset_zero(&all_cpus);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        cpuset_or(&all_cpus, &all_cpus, &t->nodes[n].cpus);
    CHECK(t->nodes[n1].lower_tier == n4, "node 1's lower tier is node 4");

    /* 1. home short: 1000 MiB home, 500 down, 400 MiB hot of which 200 home; 50 MiB of room */
    one_cell(&s, 1000, 500, 0, 400, 200, 50);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(pc && pc->target_node == n1 && pc->tier.why == TIER_WHY_HOME_SHORT &&
              has_rule(pc, RULE_LOWER_TIER) && pc->reason == REASON_NONE,
          "home short: the cell stays on node 1, its memory on two tiers (%s, %s)",
          pc ? tier_why_name(pc->tier.why) : "-", pc ? reason_name(pc->reason) : "-");
    CHECK(mv && mv->cold && mv->bytes == 166 * MIB && pc->moves[0].cold,
          "home short: first 166 MiB of cold memory down from home (the 200 hot MiB not home, "
          "less the 50 of room, and a margin of the 16 MiB slack) (%llu MiB)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL);
    CHECK(find_move(pc, -1, n1, true) && pc->tier.demote == 166 * MIB && pc->tier.down == 0,
          "home short: then the hot range home");
    why = pc ? moves_ok(&s, pc) : "no cell";
    CHECK(!why, "home short: %s", why ? why : "every move goes home or down, within room");
    CHECK(pc && pc->locality_after > 68.9 && pc->locality_after < 69.0,
          "home short: home holds 1034 of 1500 MiB after it (%.2f%%)", pc ? pc->locality_after : 0);

    /* 1c. the last 10% of a hot set, a sliver of the cell (0.7%), still goes home: the hot set's
     * share counts, not the cell's */
    one_cell(&s1, 1000, 500, 0, 100, 90, 0);
    run(t, &s1, &p2);
    pc = find_cell(&p2, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(pc && find_move(pc, -1, n1, true) && mv && mv->bytes == 20 * MIB &&
              pc->reason == REASON_NONE,
          "10 MiB of a 100 MiB hot set away: 10 MiB of cold memory down and as much margin, the "
          "hot range home (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p2);
    snapshot_clear(&s1);

    /* 1d. 3% of the hot set away, under the minimum gain (5 points) but more than 1%: it acts
     * too (the ground's hugetlb guest kept one 2 MiB page of 70 on the tier, "hysteresis") */
    one_cell(&s1, 1000, 500, 0, 100, 97, 0);
    run(t, &s1, &p2);
    pc = find_cell(&p2, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(pc && mv && mv->bytes == 6 * MIB && pc->reason == REASON_NONE,
          "3 MiB of a 100 MiB hot set away: the hot range home, 3 MiB down and as much margin (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p2);
    snapshot_clear(&s1);

    /* 1e. the same while the last order is still being worked (the sample counted pages on
     * their way): no new order, the mover goes on with the last one */
    c = one_cell(&s1, 1000, 500, 0, 100, 90, 0);
    c->order_left = 8 * MIB;
    run(t, &s1, &p2);
    pc = find_cell(&p2, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->keep_order && pc->reason == REASON_ORDER_IN_FLIGHT &&
              pc->target_node == n1 && pc->lower_tier == n4,
          "an order in flight: no new moves, the last order kept, %s (%u moves)",
          pc ? reason_name(pc->reason) : "-", pc ? pc->nr_moves : 0);
    plan_clear(&p2);
    snapshot_clear(&s1);

    /* 1b. the first hint set: what it does not call hot is not known cold yet (the agent may not
     * have looked at it): nothing goes down, the hot range comes home as far as there is room */
    c = one_cell(&s1, 1000, 500, 300, 400, 200, 50);
    c->hot[0].agree = 0;
    run(t, &s1, &p2);
    pc = find_cell(&p2, "vm", 0);
    CHECK(pc && !moves_down(pc) && pc->tier.demote == 0 && pc->tier.down == 0 &&
              find_move(pc, -1, n1, true),
          "the first hint set: nothing goes down, neither from home nor from node 2; the hot range "
          "comes home within the room");
    plan_clear(&p2);
    snapshot_clear(&s1);

    /* 2. carried out: the next pass plans nothing (no page moves twice) */
    CHECK(plan_apply(t, &s, &p, &s1) == 0, "the plan applies");
    set_room(&s1, n1, 0);
    c = &s1.domains[0].cells[0];
    CHECK(c->pages[n1] * PAGE == 1034 * MIB && c->hot_pages[n1] * PAGE == 400 * MIB &&
              c->pages[n4] * PAGE == 466 * MIB,
          "applied: 1034 MiB home with all 400 hot, 466 MiB down (%llu, %llu, %llu)",
          (unsigned long long)(c->pages[n1] * PAGE / MIB),
          (unsigned long long)(c->hot_pages[n1] * PAGE / MIB),
          (unsigned long long)(c->pages[n4] * PAGE / MIB));
    run(t, &s1, &p2);
    pc = find_cell(&p2, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->reason == REASON_TIERED && pc->tier.hot_home == 400 * MIB,
          "settled: hot home, cold down, nothing to move (%s, %u moves)",
          pc ? reason_name(pc->reason) : "-", pc ? pc->nr_moves : 0);
    plan_clear(&p2);
    snapshot_clear(&s1);
    plan_clear(&p);
    snapshot_clear(&s);

    /* 3. no hints: uniformly warm, nothing down (the home has no room: it stays) */
    one_cell(&s, 1000, 500, 0, 0, 0, 50);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->tier.why == TIER_WHY_NONE && !moves_down(pc) && moved_bytes(pc) <= 50 * MIB,
          "no hints: not tiered, nothing down, at most the room comes home (%llu MiB)",
          (unsigned long long)(moved_bytes(pc) / MIB));
    plan_clear(&p);
    snapshot_clear(&s);

    /* 4. tier="off" */
    one_cell(&s, 1000, 500, 0, 400, 200, 50);
    s.domains[0].tier = VN_TIER_OFF;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->tier.why == TIER_WHY_NONE && !moves_down(pc) && pc->lower_tier == n4,
          "tier=off: not tiered, nothing down");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 5. the lower tier outside the domain's nodes, or outside a restrictive binding */
    one_cell(&s, 1000, 500, 0, 400, 200, 50);
    nodeset_set(&s.domains[0].allowed_nodes, (unsigned)n1);
    nodeset_set(&s.domains[0].allowed_nodes, (unsigned)n2);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->tier.why == TIER_WHY_NONE && !moves_down(pc),
          "nodes=\"1-2\": node 4 is not the domain's, nothing goes there");
    plan_clear(&p);
    snapshot_clear(&s);
    c = one_cell(&s, 1000, 500, 0, 400, 200, 50);
    c->binding.mode = VN_MEM_RESTRICTIVE;
    nodeset_set(&c->binding.nodes, (unsigned)n1);
    nodeset_set(&c->binding.nodes, (unsigned)n2);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->tier.why == TIER_WHY_NONE && !moves_down(pc),
          "numatune restrictive 1-2: nothing goes to node 4");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 6. a shared hot range waits (rule 3, early passes): nothing is known cold, none goes down */
    c = one_cell(&s, 1000, 500, 0, 400, 200, 50);
    c->hot[0].shared = true;
    c->last_candidate = -1; /* the first sample of the target: shared memory waits for a second */
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && !moves_down(pc) && !find_move(pc, -1, n1, true),
          "a shared hot range waiting: no demotion, no hot range");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 7. memory on another DRAM node: the hot set home first, then home up to the room left,
     * the rest down as cold memory. 800 home (300 hot), 300 down (100 hot), 600 on node 2;
     * 300 MiB of room: 100 hot come home, 200 of node 2's, 400 go down */
    one_cell(&s, 800, 300, 600, 400, 300, 300);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n2, n1, false);
    const plan_move *dn = find_move(pc, n2, n4, false);
    CHECK(pc && pc->tier.why == TIER_WHY_HOME_SHORT && !find_move(pc, n1, n4, false) &&
              find_move(pc, -1, n1, true) && mv && mv->bytes == 200 * MIB && dn && dn->cold &&
              dn->bytes == 400 * MIB && pc->tier.down == 400 * MIB,
          "node 2's memory: 200 MiB home after the hot range, 400 down as cold (%llu, %llu)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL,
          dn ? (unsigned long long)(dn->bytes / MIB) : 0ULL);
    why = pc ? moves_ok(&s, pc) : "no cell";
    CHECK(!why, "node 2's memory: %s", why ? why : "every move within room");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 8. the lower tier without room: nothing goes down, and the no-room rule holds */
    one_cell(&s, 1000, 500, 0, 400, 200, 50);
    set_room(&s, n4, 0);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && !moves_down(pc), "the lower tier full: nothing goes down");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 9. cold-first: with room at home, the cold memory at home goes down all the same */
    one_cell(&s, 1000, 0, 0, 400, 400, 4096);
    s.domains[0].tier = VN_TIER_COLD_FIRST;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(pc && pc->tier.why == TIER_WHY_COLD_FIRST && mv && mv->cold && mv->bytes == 600 * MIB &&
              !find_move(pc, -1, n1, true),
          "cold-first: the 600 cold MiB go down although home has room, the hot set is home "
          "already (%llu MiB)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL);
    plan_clear(&p);
    snapshot_clear(&s);

    /* 10. cold-first without hints: what does not fit at home goes down, not to stay remote */
    one_cell(&s, 500, 0, 600, 0, 0, 200);
    s.domains[0].tier = VN_TIER_COLD_FIRST;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n2, n1, false);
    dn = find_move(pc, n2, n4, false);
    CHECK(pc && pc->tier.why == TIER_WHY_COLD_FIRST && !pc->tier.hints && mv &&
              mv->bytes == 200 * MIB && dn && !dn->cold && dn->bytes == 400 * MIB,
          "cold-first, no hints: 200 MiB of node 2's home, 400 down (%llu, %llu)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL,
          dn ? (unsigned long long)(dn->bytes / MIB) : 0ULL);
    plan_clear(&p);
    snapshot_clear(&s);

    /* 12. a cold start: the agent's first hint set is awaited; the vCPUs go home, memory waits */
    one_cell(&s, 200, 0, 800, 0, 0, 4096);
    s.domains[0].hints_pending = true;
    s.domains[0].cells[0].vcpus[0].pinned = all_cpus;
    s.domains[0].cells[0].vcpus[1].pinned = all_cpus;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->nr_pins == 2,
          "hints pending: the vCPUs are pinned, no memory moves (%u pins, %u moves)",
          pc ? pc->nr_pins : 0, pc ? pc->nr_moves : 0);
    plan_clear(&p);
    snapshot_clear(&s);
    one_cell(&s, 200, 0, 800, 0, 0, 4096);
    s.domains[0].hints_pending = true;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->reason == REASON_HINTS_PENDING,
          "hints pending, vCPUs already placed: nothing moves, reason hints-pending (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 13. past the early passes a hot range goes up only when two hint sets agree; the cold
     * moves leave every hot range alone, one that is fading too */
    c = one_cell(&s, 1000, 500, 0, 400, 200, 50);
    s.domains[0].age_passes = 10;
    c->hot[0].agree = 0;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && !find_move(pc, -1, n1, true) && pc->nr_hot == 1,
          "a hot range one hint set old: not moved up yet, but in the cell's hot list (%u)",
          pc ? pc->nr_hot : 0);
    plan_clear(&p);
    /* the early passes of hot ranges count from the run's first hint set: a cold start's wait
     * for the agent used up the domain's own (the tier start took 3 acting passes) */
    s.domains[0].hint_passes = 2;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && find_move(pc, -1, n1, true),
          "a hot range one hint set old, the second pass with hints: it moves up at once");
    plan_clear(&p);
    s.domains[0].hint_passes = 5;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && !find_move(pc, -1, n1, true),
          "the fifth pass with hints: a range one hint set old waits for a second");
    plan_clear(&p);
    s.domains[0].hint_passes = 0;
    c->hot[0].agree = 1;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && find_move(pc, -1, n1, true), "two hint sets agree: it moves up");
    plan_clear(&p);
    c->hot = realloc(c->hot, 2 * sizeof(*c->hot));
    c->hot[1] = (snap_hot_range){.gpa = 4ULL << 30, .length = 64 * MIB, .fading = true};
    c->nr_hot = 2;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    bool fading_kept = false, fading_moved = false;
    for (unsigned i = 0; pc && i < pc->nr_hot; i++)
        fading_kept |= pc->hot[i].gpa == 4ULL << 30;
    for (unsigned m = 0; pc && m < pc->nr_moves; m++)
        fading_moved |= pc->moves[m].is_range && pc->moves[m].gpa == 4ULL << 30;
    CHECK(fading_kept && !fading_moved,
          "a fading range: in the hot list the cold moves leave alone, not moved up");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 13b. home below its reserve (other memory grew there, or the last order filled it to the
     * mover's floor): the cold memory that goes down covers that too, else the mover stops the
     * hot ranges at the floor and they wait for another pass; nothing else comes home */
    c = one_cell(&s, 1000, 500, 300, 400, 200, 0);
    s.free_bytes[n1] = floor_of(n1) - 20 * MIB;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(mv && mv->bytes == 236 * MIB && find_move(pc, -1, n1, true) &&
              !find_move(pc, n2, n1, false),
          "home 20 MiB below its reserve, 200 MiB of the hot set away: 236 MiB down (with the "
          "margin), the hot ranges up, nothing from node 2 home (%llu MiB down)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL);
    plan_clear(&p);
    snapshot_clear(&s);

    /* 13c. anonymous RAM moved in 2 MiB transparent huge pages: 4 hot ranges of 1 MiB, each
     * astride two huge pages, all on the tier, take 16 MiB at home when they come: that much
     * cold memory leaves first (4 MiB, were they counted in base pages) */
    c = one_cell(&s, 1000, 500, 0, 4, 0, 0);
    c->granule = 2 * MIB;
    c->hot = realloc(c->hot, 4 * sizeof(*c->hot));
    for (unsigned i = 0; i < 4; i++)
        c->hot[i] = (snap_hot_range){
            .gpa = (1ULL << 30) + i * 8 * MIB + 3 * MIB / 2, .length = MIB, .heat = 1, .agree = 1};
    c->nr_hot = 4;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(mv && mv->bytes == 32 * MIB,
          "THP: 4 MiB of hot ranges away take 16 MiB, and as much margin (%llu MiB down)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL);
    plan_clear(&p);
    snapshot_clear(&s);

    /* 14. hugetlb (2 MiB pages): room is each node's free huge pages, moves are whole pages.
     * 500 MiB home, 300 down, 100 MiB hot (60 home); home has 9 free huge pages, the tier 200 */
    c = one_cell(&s, 500, 300, 0, 100, 60, 0);
    c->page_size = 2 * MIB;
    for (unsigned n = 0; n < t->nr_nodes; n++)
        c->pages[n] = c->pages[n] * PAGE / (2 * MIB);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        c->hot_pages[n] = c->hot_pages[n] * PAGE / (2 * MIB);
    s.free_huge[n1][0] = (topo_huge){.page_size = 2 * MIB, .free_pages = 9};
    s.free_huge[n4][0] = (topo_huge){.page_size = 2 * MIB, .free_pages = 200};
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    mv = find_move(pc, n1, n4, false);
    CHECK(pc && pc->tier.why == TIER_WHY_HOME_SHORT && mv && mv->cold && mv->bytes == 22 * MIB &&
              find_move(pc, -1, n1, true),
          "hugetlb: 11 cold huge pages down (the 40 hot MiB away less 9 free pages: 22 MiB, "
          "whole pages), then the hot range home (%llu MiB)",
          mv ? (unsigned long long)(mv->bytes / MIB) : 0ULL);
    plan_clear(&p);
    s.free_huge[n4][0].free_pages = 0;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && !moves_down(pc), "hugetlb: no free huge page on the tier, nothing goes down");
    plan_clear(&p);
    snapshot_clear(&s);

    /* 11. the record says it */
    one_cell(&s, 1000, 500, 0, 400, 200, 50);
    run(t, &s, &p);
    struct json_object *j = record_plan_json(t, &p);
    const char *txt = j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : "";
    CHECK(strstr(txt, "\"why\":\"home-short\"") && strstr(txt, "\"hot_bytes\":419430400") &&
              strstr(txt, "\"demote_bytes\":174063616") && strstr(txt, "\"cold\":true"),
          "the plan JSON names the tier, its bytes and the cold move");
    json_object_put(j);
    plan_clear(&p);
    snapshot_clear(&s);

    topo_free(t);
    return tap_done();
}
