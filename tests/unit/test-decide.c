/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the decide stage (host/decide.c): one scenario per rule that makes
 * it fire and one that does not (the seeds' situations among them). The
 * properties over random snapshots are test-decide-properties.c.
 */
#include <string.h>

#include "decide-fixture.h"
#include "decide.h"
#include "plan_apply.h"
#include "record.h"
#include "rules.h"
#include "tap.h"
#include "util.h"

/* ---------- scenarios ---------- */

/* Two nodes of 16 PUs (one L3 each): imb_numa_nr = 2. */
#define T2 "pack:2 numa:1 l3:1 core:8 pu:2"

static void test_prefer_vcpu_move(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 512);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 2 && pc->nr_moves == 0,
          "memory all on node 1, vCPUs on node 0: the vCPUs move, memory stays");
    CHECK(has_rule(pc, RULE_PREFER_VCPU_MOVE) && has_rule(pc, RULE_LOCALITY),
          "... and the record names prefer-vcpu-move");
    CHECK(pc && cpuset_equal(&pc->pins[0].cpus, &t->nodes[1].cpus),
          "... pinned to exactly node 1's CPUs");
    plan_clear(&p);
    /* a vcpupin limit of CPUs 0-3 and 20-23 (part of each node): never outside it */
    vn_cpuset lim;
    (void)cpuset_parse("0-3,18-23", &lim);
    c->vcpus[0].allowed = lim;
    c->vcpus[1].allowed = lim;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    vn_cpuset want;
    (void)cpuset_parse("18-23", &want);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 2 && cpuset_equal(&pc->pins[0].cpus, &want),
          "allowed CPUs 0-3,18-23: pinned to 18-23, the allowed part of node 1");
    CHECK(pc && pc->locality_before < 1 && pc->locality_after > 99,
          "... locality 0%% -> 100%% (%.0f -> %.0f)", pc ? pc->locality_before : -1,
          pc ? pc->locality_after : -1);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Rule 3: a new domain's memory follows at once, an old one's waits for a second sample. */
static void test_early_vs_old(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    /* vCPUs allowed on node 0 only: memory has to come to them */
    snap_domain *n = add_domain(&s, "new", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(n, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c, 0, 100);
    set_mem(c, 1, 300);
    snap_domain *o = add_domain(&s, "old", VN_MODE_AUTO, 50, 0);
    c = add_cell(o, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c, 0, 100);
    set_mem(c, 1, 300);
    run(t, &s, &p);
    const plan_cell *pn = find_cell(&p, "new", 0), *po = find_cell(&p, "old", 0);
    CHECK(pn && moved_bytes(pn) == 300 * MIB && has_rule(pn, RULE_EARLY_MIGRATION),
          "new domain: 300 MiB move on the first observation (early-migration)");
    CHECK(pn && pn->nr_moves && pn->moves[0].gain_points > 74 && pn->moves[0].gain_points < 76,
          "... expected gain 75 points");
    CHECK(po && po->nr_moves == 0 && po->reason == REASON_FILTER_PENDING && po->candidate_node == 0,
          "old domain: first observation only records the candidate (two-stage-filter)");
    plan_clear(&p);

    o->cells[0].last_candidate = 0;
    run(t, &s, &p);
    po = find_cell(&p, "old", 0);
    CHECK(po && moved_bytes(po) == 300 * MIB && has_rule(po, RULE_TWO_STAGE_FILTER),
          "old domain: second agreeing observation moves the memory");
    plan_clear(&p);

    o->cells[0].last_candidate = 1;
    run(t, &s, &p);
    po = find_cell(&p, "old", 0);
    CHECK(po && po->nr_moves == 0 && po->reason == REASON_FILTER_PENDING,
          "old domain: disagreeing observations move nothing");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

static void test_hysteresis(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 0, 970);
    set_mem(c, 1, 30);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->nr_pins == 0 && pc->reason == REASON_HYSTERESIS,
          "97%% local: a 3-point gain moves nothing (hysteresis)");
    plan_clear(&p);
    set_mem(c, 0, 800);
    set_mem(c, 1, 200);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && moved_bytes(pc) == 200 * MIB, "80%% local: the 20-point gain moves 200 MiB");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/*
 * The capacity band (CAPACITY_ENTER_MARGIN): two nodes of 2 CPUs, one busy vCPU of another
 * domain on each. A cell with one busy vCPU and its memory on node 0 stays at home on
 * node 0 (2 busy on 2 CPUs); once it runs on node 1 it stays there too and does not
 * re-enter node 0, which it would fill exactly: without the band it went back and forth
 * whenever a busy count moved by a fraction.
 */
static void test_capacity_band(void)
{
    topology *t = load_synth("pack:2 numa:1 l3:1 core:2 pu:1");
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *o = add_domain(&s, "a-other", VN_MODE_AUTO, 10, 0);
    snap_cell *oc = add_cell(o, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(oc, 0, 64);
    snap_domain *o1 = add_domain(&s, "b-other", VN_MODE_AUTO, 10, 1);
    snap_cell *oc1 = add_cell(o1, 1, 0, 0.9, &t->cpus, &t->nodes[1].cpus);
    set_mem(oc1, 1, 64);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 0);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 0, 64);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 0 && pc->nr_pins == 0 && pc->nr_moves == 0,
          "capacity band: at home on a node it fills exactly (2 busy, 2 CPUs) the cell stays "
          "(target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    c->vcpus[0].pinned = t->nodes[1].cpus;
    c->last_candidate = 1;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 0 && has_rule(pc, RULE_CPU_CAPACITY),
          "capacity band: moved away to node 1, it does not re-enter node 0 that it would fill "
          "exactly; cpu-capacity named (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/*
 * The band is for entering a node: a cell whose vCPUs float (pinned nowhere, as before a
 * domain's first pass) is at home where its memory is. Two nodes of 2 CPUs and 2 LLCs (the
 * proving ground's). Two busy 1-vCPU cells with their memory on one node both stay there, their
 * vCPUs pinned to it, and a third one moves (issue 56: with the band, the second one's memory moved
 * too, and every busy cell that opted in after it).
 */
static void test_capacity_floating(void)
{
    topology *t = load_synth("pack:2 numa:1 l3:2 core:1 pu:1"); /* imb_numa_nr 2 */
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *a = add_domain(&s, "f-a", VN_MODE_AUTO, 10, 0);
    snap_cell *ac = add_cell(a, 1, 0, 0.9, &t->cpus, &t->cpus);
    set_mem(ac, 0, 64);
    snap_domain *b = add_domain(&s, "f-b", VN_MODE_AUTO, 10, 0);
    snap_cell *bc = add_cell(b, 1, 0, 0.9, &t->cpus, &t->cpus);
    set_mem(bc, 0, 64);
    run(t, &s, &p);
    const plan_cell *pa = find_cell(&p, "f-a", 0), *pb = find_cell(&p, "f-b", 0);
    CHECK(pa && pb && pa->target_node == 0 && pb->target_node == 0 && pa->nr_moves == 0 &&
              pb->nr_moves == 0 && pa->nr_pins == 1 && pb->nr_pins == 1,
          "two floating busy cells, memory on a 2-CPU node: both pinned there, no memory moves "
          "(targets %d %d)",
          pa ? pa->target_node : -9, pb ? pb->target_node : -9);
    plan_clear(&p);
    snap_domain *c = add_domain(&s, "f-c", VN_MODE_AUTO, 10, 0);
    snap_cell *cc = add_cell(c, 1, 0, 0.9, &t->cpus, &t->cpus);
    set_mem(cc, 0, 64);
    run(t, &s, &p);
    unsigned on0 = 0, on1 = 0;
    for (unsigned i = 0; i < p.nr_domains; i++) {
        on0 += p.domains[i].cells[0].target_node == 0;
        on1 += p.domains[i].cells[0].target_node == 1;
    }
    CHECK(on0 == 2 && on1 == 1, "a third one: two stay on the node, one goes to the other (%u, %u)",
          on0, on1);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/*
 * Rule 3's two-stage filter for vCPUs: a cell at home with its memory leaves for another node
 * (here: its home is over capacity) only when two consecutive passes agree; a new domain
 * moves at once. One noisy pass must not send it away and back.
 */
static void test_vcpu_two_stage(void)
{
    topology *t = load_synth("pack:2 numa:1 l3:1 core:2 pu:1");
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *o = add_domain(&s, "a-other", VN_MODE_AUTO, 10, 0);
    snap_cell *oc = add_cell(o, 2, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(oc, 0, 64);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 0);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 0, 64);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 0 && pc->candidate_node == 1 && pc->nr_pins == 0 &&
              pc->reason == REASON_FILTER_PENDING && has_rule(pc, RULE_TWO_STAGE_FILTER),
          "vCPU two-stage: home over capacity, first pass: stays with its memory, node 1 the "
          "candidate (target %d, candidate %d)",
          pc ? pc->target_node : -9, pc ? pc->candidate_node : -9);
    plan_clear(&p);
    c->last_candidate = 1;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 1,
          "vCPU two-stage: the second agreeing pass moves its vCPU to node 1 (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    c->last_candidate = -1;
    d->age_passes = 0;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 1,
          "vCPU two-stage: a new domain (early passes) moves at once (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Rule 1, seed 004: a communicating pair stays; past imb_numa_nr cells spread. */
static void test_imbalance_pair_and_spread(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "pair", VN_MODE_AUTO, 0, -1);
    add_cell(d, 1, 0, 0.9, &t->cpus, &t->cpus);
    add_cell(d, 1, 1, 0.9, &t->cpus, &t->cpus);
    set_mem(&d->cells[0], 0, 256);
    set_mem(&d->cells[1], 0, 256);
    run(t, &s, &p);
    const plan_cell *a = find_cell(&p, "pair", 0), *b = find_cell(&p, "pair", 1);
    CHECK(a && b && a->target_node == 0 && b->target_node == 0 &&
              !has_rule(b, RULE_ALLOWED_IMBALANCE),
          "two cells with one busy vCPU each stay together on node 0 (2 <= imb_numa_nr 2)");
    plan_clear(&p);
    snapshot_clear(&s);

    snap_init(&s);
    d = add_domain(&s, "big", VN_MODE_AUTO, 0, -1);
    add_cell(d, 3, 0, 0.9, &t->cpus, &t->cpus);
    add_cell(d, 3, 3, 0.9, &t->cpus, &t->cpus);
    set_mem(&d->cells[0], 0, 256);
    set_mem(&d->cells[1], 0, 256);
    run(t, &s, &p);
    a = find_cell(&p, "big", 0);
    b = find_cell(&p, "big", 1);
    CHECK(a && b && a->target_node == 0 && b->target_node == 1 &&
              has_rule(b, RULE_ALLOWED_IMBALANCE),
          "two cells with three busy vCPUs each spread (6 > imb_numa_nr 2), rule named");
    CHECK(b && moved_bytes(b) == 256 * MIB, "... and the spread cell's memory follows it");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Rule 1 is LLC-aware: the same load stays on a one-LLC node and spreads from an 8-LLC one. */
static void test_imbalance_multi_llc(void)
{
    static const struct {
        const char *synth;
        int want;
        const char *why;
    } cases[] = {
        {"pack:2 numa:1 l3:1 core:64 pu:2", 0, "128 PUs, 1 LLC: imb_numa_nr 16, stays near memory"},
        {"pack:2 numa:1 l3:8 core:8 pu:2", 1, "128 PUs, 8 LLCs: imb_numa_nr 8, spreads"},
    };
    for (unsigned i = 0; i < 2; i++) {
        topology *t = load_synth(cases[i].synth);
        snapshot s;
        plan p;
        snap_init(&s);
        s.other_busy[0] = 8;
        s.other_busy[1] = 7;
        snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 0, -1);
        add_cell(d, 2, 0, 0.9, &t->cpus, &t->cpus);
        set_mem(&d->cells[0], 0, 256);
        run(t, &s, &p);
        const plan_cell *pc = find_cell(&p, "vm", 0);
        CHECK(pc && pc->target_node == cases[i].want &&
                  has_rule(pc, RULE_ALLOWED_IMBALANCE) == (cases[i].want == 1),
              "multi-LLC: %s (imb_numa_nr %u)", cases[i].why, t->nodes[0].imb_numa_nr);
        plan_clear(&p);
        snapshot_clear(&s);
        topo_free(t);
    }
}

/* Rule 2, seed 002: memory bound to one node is never moved. */
static void test_cpuset_skip(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "elsewhere", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_STRICT, nodeset_from_u64(1u << 1)};
    set_mem(c, 1, 512);
    d = add_domain(&s, "there", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[1].cpus);
    c->binding = (vn_mem_binding){VN_MEM_RESTRICTIVE, nodeset_from_u64(1u << 1)};
    set_mem(c, 1, 512);
    d = add_domain(&s, "cannot", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_STRICT, nodeset_from_u64(1u << 1)};
    set_mem(c, 1, 512);
    d = add_domain(&s, "two-nodes", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_STRICT, nodeset_from_u64(3)};
    set_mem(c, 1, 512);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "elsewhere", 0);
    CHECK(pc && pc->nr_pins == 2 && pc->nr_moves == 0 && pc->target_node == 1 &&
              has_rule(pc, RULE_CPUSET_SKIP),
          "bound to node 1, vCPUs on node 0 and allowed on 1: vCPUs follow, memory untouched");
    pc = find_cell(&p, "there", 0);
    CHECK(pc && pc->nr_pins == 0 && pc->nr_moves == 0 && pc->reason == REASON_CPUSET_SKIP,
          "bound to node 1, vCPUs already there: skipped, reason cpuset-skip");
    pc = find_cell(&p, "cannot", 0);
    CHECK(pc && pc->nr_pins == 0 && pc->nr_moves == 0 && pc->reason == REASON_CPUSET_SKIP,
          "bound to node 1, vCPUs not allowed there (refinement): skipped entirely");
    pc = find_cell(&p, "two-nodes", 0);
    CHECK(pc && !has_rule(pc, RULE_CPUSET_SKIP) && pc->reason != REASON_CPUSET_SKIP,
          "bound to two nodes: rule 2 does not fire");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Never a destination below its free-memory reserve. */
static void test_free_memory_reserve(void)
{
    topology *t = load_synth(T2);
    vn_config cfg;
    snapshot s;
    plan p;
    uint64_t reserve;

    config_defaults(&cfg);
    reserve = VN_MAX(cfg.reserve_bytes, (uint64_t)(t->nodes[0].mem_total * cfg.reserve_fraction));
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 512);
    s.free_known[0] = true;
    s.free_bytes[0] = reserve + RESERVE_SLACK_BYTES + 100 * MIB;
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && moved_bytes(pc) == 100 * MIB && has_rule(pc, RULE_FREE_MEM_RESERVE),
          "room for 100 MiB above the reserve and its slack: exactly 100 MiB of 512 move");
    plan_clear(&p);
    s.free_bytes[0] = reserve - 1;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->reason == REASON_NO_ROOM,
          "target below its reserve: nothing moves, reason no-room");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Pinned memory (VFIO, locked, SEV, refused moves): never moved, the vCPUs go to it. */
static void test_memory_pinned(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    /* the vCPUs may run anywhere; most memory on node 1, vCPUs on node 0 */
    snap_domain *d = add_domain(&s, "vfio", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 500);
    c->mem_pinned = MEM_PIN_VFIO;
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vfio", 0);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 2 && pc->nr_moves == 0 &&
              pc->mem_pinned == MEM_PIN_VFIO && has_rule(pc, RULE_PREFER_VCPU_MOVE),
          "VFIO memory 500 MiB on node 1: the vCPUs move there, no memory moves");
    plan_clear(&p);
    /* vCPUs allowed on node 0 only: memory would have to move, it cannot */
    c->vcpus[0].allowed = c->vcpus[1].allowed = t->nodes[0].cpus;
    run(t, &s, &p);
    pc = find_cell(&p, "vfio", 0);
    CHECK(pc && pc->target_node == 0 && pc->nr_moves == 0 && pc->reason == REASON_MEMORY_PINNED,
          "vCPUs confined to node 0, memory pinned: nothing moves, reason memory-pinned (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    c->mem_pinned = MEM_PIN_NONE;
    run(t, &s, &p);
    pc = find_cell(&p, "vfio", 0);
    CHECK(pc && pc->nr_moves > 0, "the same cell with movable memory: its memory moves");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* hugetlb: room on a node is its free huge pages of the cell's size, not MemFree. */
static void test_hugetlb_room(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "huge", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    c->page_size = 2 * MIB;
    c->pages[1] = 256; /* 512 MiB of 2 MiB pages on node 1 */
    s.free_known[0] = true;
    s.free_bytes[0] = 0; /* MemFree says nothing of the pool */
    s.free_huge[0][0] = (topo_huge){.page_size = 2 * MIB, .free_pages = 100};
    s.free_huge[1][0] = (topo_huge){.page_size = 2 * MIB, .free_pages = 0};
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "huge", 0);
    CHECK(pc && moved_bytes(pc) == 200 * MIB,
          "2 MiB pages, 100 free huge pages on the target, no MemFree: 200 MiB move (%llu)",
          pc ? (unsigned long long)moved_bytes(pc) : 0ULL);
    plan_clear(&p);
    s.free_huge[0][0].free_pages = 0;
    run(t, &s, &p);
    pc = find_cell(&p, "huge", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->reason == REASON_NO_ROOM,
          "no free huge page on the target: nothing moves, reason no-room (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    /* the same cell with 4 KiB pages (no pool of that size): MemFree decides */
    c->page_size = PAGE;
    c->pages[1] = 512 * MIB / PAGE;
    s.free_bytes[0] = 8192 * MIB;
    run(t, &s, &p);
    pc = find_cell(&p, "huge", 0);
    CHECK(pc && moved_bytes(pc) == 512 * MIB, "4 KiB pages: MemFree decides, all 512 MiB move");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* numatune mode='preferred': memory never moves off the preferred node. */
static void test_numatune_preferred(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "pref", VN_MODE_AUTO, 0, -1);
    /* vCPUs confined to node 0, memory preferred (and placed) on node 1 */
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 400);
    c->binding = (vn_mem_binding){.mode = VN_MEM_PREFERRED, .nodes = nodeset_from_u64(1ULL << 1)};
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "pref", 0);
    CHECK(pc && pc->target_node == 0 && pc->nr_moves == 0 &&
              pc->reason == REASON_NUMATUNE_PREFERRED,
          "preferred node 1, vCPUs confined to node 0: memory stays, reason numatune-preferred "
          "(%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    /* memory that spilled off the preferred node may move onto it */
    c->vcpus[0].allowed = t->nodes[1].cpus;
    c->vcpus[0].pinned = t->nodes[1].cpus;
    set_mem(c, 0, 100);
    set_mem(c, 1, 300);
    run(t, &s, &p);
    pc = find_cell(&p, "pref", 0);
    CHECK(pc && pc->target_node == 1 && moved_bytes(pc) == 100 * MIB,
          "spilled to node 0, vCPUs on the preferred node 1: the 100 MiB come back");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* A memory-only cell (no vCPUs) goes near the cells that use it, CPU-less nodes included. */
static void test_memory_only_cell(void)
{
    topology *t = load_synth("pack:2 numa:1 l3:1 core:4 pu:1");
    snapshot s;
    plan p;

    /* a cell without vCPUs on node 1 whose sibling runs on node 0 */
    snap_init(&s);
    snap_domain *d = add_domain(&s, "mo", VN_MODE_AUTO, 0, -1);
    snap_cell *c0 = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c0, 0, 256);
    snap_cell *m = add_cell(d, 0, 0, 0, &t->cpus, &t->cpus);
    set_mem(m, 1, 256);
    /* input order: the memory-only cell first; it is decided after the one with vCPUs */
    snap_cell tmp = d->cells[0];
    d->cells[0] = d->cells[1];
    d->cells[1] = tmp;
    run(t, &s, &p);
    const plan_cell *pm = find_cell(&p, "mo", 0), *pv = find_cell(&p, "mo", 1);
    CHECK(pv && pv->target_node == 0 && pm && pm->target_node == 0 && pm->nr_pins == 0 &&
              moved_bytes(pm) == 256 * MIB && has_rule(pm, RULE_SHARED_PROXIMITY),
          "memory-only cell on node 1, its sibling on node 0: it moves to node 0 (target %d, "
          "%llu MiB)",
          pm ? pm->target_node : -9, pm ? (unsigned long long)(moved_bytes(pm) >> 20) : 0ULL);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

static void test_opt_in_and_modes(void)
{
    topology *t = load_synth(T2);
    snapshot s, after;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "off", VN_MODE_OFF, 0, -1);
    set_mem(add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus), 1, 512);
    d = add_domain(&s, "advise", VN_MODE_ADVISE, 0, -1);
    set_mem(add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus), 1, 512);
    d = add_domain(&s, "limited", VN_MODE_AUTO, 0, -1);
    d->allowed_nodes = nodeset_from_u64(1u << 1);
    set_mem(add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus), 0, 512);
    d = add_domain(&s, "interleaved", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_INTERLEAVE, nodeset_from_u64(3)};
    set_mem(c, 0, 256);
    set_mem(c, 1, 256);
    run(t, &s, &p);
    CHECK(!find_cell(&p, "off", 0) && p.nr_domains == 3, "a domain that did not opt in is absent");
    const plan_cell *pc = find_cell(&p, "advise", 0);
    CHECK(pc && moved_bytes(pc) == 512 * MIB && p.domains[0].mode == VN_MODE_ADVISE,
          "an advise domain is planned (and marked advise)");
    pc = find_cell(&p, "limited", 0);
    CHECK(pc && pc->target_node == 1, "allowed host nodes = {1}: placed on node 1");
    pc = find_cell(&p, "interleaved", 0);
    CHECK(pc && pc->nr_moves == 0, "interleaved memory is never moved");
    (void)plan_apply(t, &s, &p, &after);
    CHECK(after.domains[1].cells[0].pages[1] == s.domains[1].cells[0].pages[1] &&
              cpuset_equal(&after.domains[1].cells[0].vcpus[0].pinned,
                           &s.domains[1].cells[0].vcpus[0].pinned),
          "applying the plan leaves the advise domain as it was");
    CHECK(after.domains[0].cells[0].pages[1] == s.domains[0].cells[0].pages[1],
          "applying the plan leaves the domain that did not opt in as it was");
    snapshot_clear(&after);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* A cell that shares with another goes near it (two distance levels, as a
 * 2-socket host with two nodes per socket: 10 local, 12 same socket, 32 remote). */
static void test_shared_proximity(void)
{
    topology *t = load_synth("pack:2 numa:2 l3:1 core:4 pu:2");
    snapshot s;
    plan p;

    for (unsigned a = 0; a < 4; a++)
        for (unsigned b = 0; b < 4; b++)
            t->distance[a * 4 + b] = a == b ? 10 : a / 2 == b / 2 ? 12 : 32;
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 0, -1);
    /* cell 0 lives on node 0; cell 1's memory leans slightly to node 3 (other socket) */
    snap_cell *c0 = add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c0, 0, 256);
    snap_cell *c1 = add_cell(d, 1, 1, 0.9, &t->cpus, &t->cpus);
    set_mem(c1, 1, 32);
    set_mem(c1, 2, 32);
    set_mem(c1, 3, 48);
    c1->nr_shares = 1;
    c1->shares = calloc(1, sizeof(*c1->shares));
    c1->shares[0] = (snap_share){.cell = 0, .weight = 1.0};
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 1);
    CHECK(pc && pc->target_node == 1 && has_rule(pc, RULE_SHARED_PROXIMITY),
          "the sharing cell goes to node 1 beside its peer, not node 3 where a little more of "
          "its memory is (got %d), and the record names shared-proximity",
          pc ? pc->target_node : -1);
    plan_clear(&p);
    c1->shares[0].weight = 0;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 1);
    CHECK(pc && pc->target_node == 3 && !has_rule(pc, RULE_SHARED_PROXIMITY),
          "with no sharing, it follows its memory to node 3 (got %d)", pc ? pc->target_node : -1);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Hot ranges from guest hints come first; shared ones wait for the filter. */
static void test_hot_first(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 512);
    c->nr_hot = 2;
    c->hot = calloc(2, sizeof(*c->hot));
    c->hot[0] = (snap_hot_range){.gpa = 0x100000, .length = 2 * MIB, .heat = 0.9};
    c->hot[1] = (snap_hot_range){.gpa = 0x800000, .length = 4 * MIB, .heat = 0.5, .shared = true};
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->nr_moves == 2 && pc->moves[0].is_range && pc->moves[0].gpa == 0x100000 &&
              (pc->moves[0].rules & RULE_BIT(RULE_HOT_FIRST)) && !pc->moves[1].is_range,
          "hot private range first, then the bulk; the shared range waits (early path)");
    CHECK(pc && (pc->rules & RULE_BIT(RULE_HOT_FIRST)), "the cell's record names hot-first");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* No decision on unmeasured input: a domain without a CPU time window stays as it is, and its
 * vCPUs' load stays where they run for the domains placed after it. */
static void test_unmeasured(void)
{
    topology *t = load_synth(T2);
    snapshot s;
    plan p;

    snap_init(&s);
    /* vCPUs on node 1, memory on node 0: measured, it would move (early-migration) */
    snap_domain *d = add_domain(&s, "new", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->nodes[1].cpus, &t->nodes[1].cpus);
    set_mem(c, 0, 400);
    d->busy_unmeasured = true;
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "new", 0);
    CHECK(pc && pc->nr_moves == 0 && pc->nr_pins == 0 && pc->reason == REASON_UNMEASURED &&
              pc->target_node == -1 && pc->candidate_node == -1,
          "busy not measured: no pin, no move, reason unmeasured, no candidate (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    d->busy_unmeasured = false;
    run(t, &s, &p);
    pc = find_cell(&p, "new", 0);
    CHECK(pc && pc->nr_moves > 0 && pc->reason == REASON_NONE,
          "the same domain measured: it acts on the first measured observation (%s)",
          pc ? reason_name(pc->reason) : "-");
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* The operator's layout (issue 13): isolated CPUs, SMT cores, realtime vCPUs, wide cells. */
static void test_operator_layout(void)
{
    topology *t = load_synth(T2); /* 2 nodes x 8 cores x 2 threads: node 0 CPUs 0-15 */
    snapshot s;
    plan p;
    vn_cpuset iso, lim, want;

    /* isolated CPUs never in a pin mask: node 1's CPUs 16-19 isolated */
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 1);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 1, 512);
    (void)cpuset_parse("16-19", &iso);
    t->isolated = iso;
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    (void)cpuset_parse("20-31", &want);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 2 &&
              cpuset_equal(&pc->pins[0].cpus, &want) && cpuset_equal(&pc->pins[1].cpus, &want),
          "isolated CPUs 16-19: the vCPUs go to node 1's other CPUs, 20-31");
    plan_clear(&p);
    /* a domain allowed only isolated CPUs on node 1 never goes there */
    (void)cpuset_parse("0-15,16-19", &lim);
    c->vcpus[0].allowed = lim;
    c->vcpus[1].allowed = lim;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 0 && pc->nr_pins == 0,
          "allowed 0-19 with 16-19 isolated: node 1 is no home, the cell stays on node 0 "
          "(target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    cpuset_zero(&t->isolated);
    snapshot_clear(&s);

    /* capacity in cores: 4 busy vCPUs allowed 4 CPUs (2 cores) of node 0, 4 cores of node 1 */
    snap_init(&s);
    d = add_domain(&s, "smt", VN_MODE_AUTO, 10, 0);
    (void)cpuset_parse("0-3,16-25", &lim);
    vn_cpuset n0;
    (void)cpuset_parse("0-3", &n0);
    c = add_cell(d, 4, 0, 0.9, &lim, &n0);
    set_mem(c, 0, 256);
    c->last_candidate = 1; /* the pass before agreed (rule 3's filter, test_vcpu_two_stage) */
    run(t, &s, &p);
    pc = find_cell(&p, "smt", 0);
    CHECK(pc && pc->target_node == 1 && has_rule(pc, RULE_CPU_CAPACITY),
          "4 busy vCPUs, 4 allowed threads = 2 cores on node 0: they go to node 1's 5 allowed "
          "cores, cpu-capacity named (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    /* ... foreign load on node 1 (other_busy 3 of its cores): back to the least bad */
    s.other_busy[1] = 3;
    run(t, &s, &p);
    pc = find_cell(&p, "smt", 0);
    CHECK(pc && pc->target_node == 0 && pc->cpu_overcommit,
          "... with 3 busy CPUs of other work on node 1 it does not fit there either: stays on "
          "node 0, overcommitted (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    snapshot_clear(&s);

    /* a realtime (fixed) vCPU is never re-pinned; its cell follows it */
    snap_init(&s);
    d = add_domain(&s, "rt", VN_MODE_AUTO, 10, 0);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    (void)cpuset_parse("17", &c->vcpus[1].pinned);
    c->vcpus[1].fixed = true;
    set_mem(c, 0, 256);
    run(t, &s, &p);
    pc = find_cell(&p, "rt", 0);
    bool rt_kept = pc != NULL;
    for (unsigned i = 0; pc && i < pc->nr_pins; i++)
        rt_kept = rt_kept && pc->pins[i].vcpu != 1;
    CHECK(rt_kept && pc->target_node == 1,
          "a realtime vCPU pinned to CPU 17 is never re-pinned, the cell goes to its node 1 "
          "(target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);

    /* a wide cell: 6 busy vCPUs, nodes of 4 cores: spans the two nearest nodes */
    t = load_synth("pack:4 numa:1 l3:1 core:4 pu:1");
    snap_init(&s);
    d = add_domain(&s, "wide", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 6, 0, 0.9, &t->cpus, &t->cpus);
    set_mem(c, 3, 600);
    run(t, &s, &p);
    pc = find_cell(&p, "wide", 0);
    unsigned per[VN_MAX_NODES] = {0};
    bool inside = pc != NULL;
    for (unsigned i = 0; pc && i < pc->nr_pins; i++) {
        int n = -1;
        for (unsigned k = 0; k < t->nr_nodes; k++)
            if (cpuset_subset(&pc->pins[i].cpus, &t->nodes[k].cpus))
                n = (int)k;
        inside = inside && n >= 0 && nodeset_isset(&pc->span, (unsigned)n);
        if (n >= 0)
            per[n]++;
    }
    unsigned nr_span = 0;
    for (unsigned k = 0; pc && k < t->nr_nodes; k++)
        nr_span += nodeset_isset(&pc->span, k);
    uint64_t in_span = 0;
    for (unsigned i = 0; pc && i < pc->nr_moves; i++)
        if (nodeset_isset(&pc->span, (unsigned)pc->moves[i].to_node))
            in_span += pc->moves[i].bytes;
    CHECK(pc && has_rule(pc, RULE_WIDE_CELL) && nr_span == 2 && pc->nr_pins == 6 && inside &&
              !pc->cpu_overcommit,
          "6 busy vCPUs, 4 cores a node: wide-cell, the vCPUs pinned over 2 nodes (span of %u, "
          "%u pins)",
          nr_span, pc ? pc->nr_pins : 0);
    CHECK(pc && pc->target_node == 3 && per[3] == 4 && in_span == moved_bytes(pc) &&
              moved_bytes(pc) == 200 * MIB,
          "... from node 3 (its memory): 4 vCPUs there, 2 on the nearest node, and the memory "
          "follows: a third of it moves there (%llu MiB)",
          pc ? (unsigned long long)(moved_bytes(pc) / MIB) : 0ULL);
    /* once spread, a vCPU that reads idle does not cram it back onto one node */
    snapshot s1;
    plan p1;
    if (CHECK(plan_apply(t, &s, &p, &s1) == 0, "the wide plan applies")) {
        s1.domains[0].cells[0].vcpus[0].busy = 0; /* 5 busy now */
        s1.domains[0].cells[0].vcpus[1].busy = 0; /* 4 busy: what one node holds */
        s1.domains[0].age_passes = 10;
        run(t, &s1, &p1);
        pc = find_cell(&p1, "wide", 0);
        if (getenv("VN_TEST_DEBUG")) {
            record_snapshot_table(t, &s1, stdout);
            record_plan_table(t, &p1, stdout);
        }
        CHECK(pc && has_rule(pc, RULE_WIDE_CELL) && pc->nr_pins == 0 && pc->nr_moves == 0,
              "... spread, with 4 busy of 6 (a node's cores) it stays as it is: no pin, no move "
              "(%u pins, %u moves)",
              pc ? pc->nr_pins : 0, pc ? pc->nr_moves : 0);
        plan_clear(&p1);
        snapshot_clear(&s1);
    }
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);

    /* no node with a core to spare by the margin: one the cell fills exactly beats one it
     * would overload, even where its memory is */
    /* 16-CPU nodes (imb_numa_nr 2: rule 1 does not push the cell off node 0), of which the
     * domains may use one each */
    t = load_synth("pack:3 numa:1 core:16 pu:1");
    vn_cpuset one_each;
    (void)cpuset_parse("0,16,32", &one_each);
    snap_init(&s);
    d = add_domain(&s, "hog", VN_MODE_AUTO, 10, 0);
    set_mem(add_cell(d, 1, 0, 0.9, &one_each, &t->nodes[0].cpus), 0, 64);
    d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 0);
    set_mem(add_cell(d, 1, 0, 0.9, &one_each, &t->nodes[0].cpus), 0, 64);
    d->cells[0].last_candidate = 1; /* the pass before agreed (rule 3's filter) */
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 1 && !pc->cpu_overcommit,
          "1-core nodes: the second busy cell on node 0 goes to node 1, which it fills exactly, "
          "not overcommitted (target %d)",
          pc ? pc->target_node : -9);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

int main(void)
{
    test_prefer_vcpu_move();
    test_early_vs_old();
    test_unmeasured();
    test_hysteresis();
    test_capacity_band();
    test_capacity_floating();
    test_vcpu_two_stage();
    test_imbalance_pair_and_spread();
    test_imbalance_multi_llc();
    test_cpuset_skip();
    test_free_memory_reserve();
    test_memory_pinned();
    test_hugetlb_room();
    test_numatune_preferred();
    test_memory_only_cell();
    test_opt_in_and_modes();
    test_shared_proximity();
    test_hot_first();
    test_operator_layout();
    return tap_done();
}
