/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the decide stage (host/decide.c): one scenario per rule that makes
 * it fire and one that does not (the seeds' situations among them), then
 * properties over hundreds of random snapshots on every bundled topology:
 * allowed sets, capacity, free-memory reserve, determinism, idempotence, and
 * that domains which did not opt in never appear.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <string.h>

#include "decide.h"
#include "record.h"
#include "rules.h"
#include "tap.h"
#include "util.h"

#define MIB      (1024ULL * 1024)
#define PAGE     4096ULL
#define MAX_DOMS 16

/* ---------- building snapshots by hand ---------- */

static topology *load_synth(const char *s)
{
    topology *t = calloc(1, sizeof(*t));
    char err[512];

    if (!t || topo_load(TOPO_SOURCE_SYNTHETIC, s, NULL, t, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot load synthetic topology %s: %s\n", s, err);
        exit(1);
    }
    return t;
}

static topology *load_xml(const char *path)
{
    topology *t = calloc(1, sizeof(*t));
    char err[512];

    if (!t || topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err)) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

static void snap_init(snapshot *s)
{
    memset(s, 0, sizeof(*s));
    s->domains = calloc(MAX_DOMS, sizeof(*s->domains));
}

static snap_domain *add_domain(snapshot *s, const char *name, vn_mode mode, unsigned age,
                               int preferred)
{
    snap_domain *d = &s->domains[s->nr_domains++];

    snprintf(d->name, sizeof(d->name), "%s", name);
    d->mode = mode;
    d->age_passes = age;
    d->preferred_node = preferred;
    d->cells = calloc(8, sizeof(*d->cells));
    return d;
}

/* A cell with nv vCPUs (ids from first_id), all `busy`, allowed on `allowed`,
 * pinned to `pinned` (running on its first CPU). */
static snap_cell *add_cell(snap_domain *d, unsigned nv, unsigned first_id, double busy,
                           const vn_cpuset *allowed, const vn_cpuset *pinned)
{
    snap_cell *c = &d->cells[d->nr_cells];

    c->id = d->nr_cells++;
    c->nr_vcpus = nv;
    c->vcpus = calloc(nv, sizeof(*c->vcpus));
    c->page_size = PAGE;
    c->last_candidate = -1;
    for (unsigned i = 0; i < nv; i++) {
        c->vcpus[i].id = first_id + i;
        c->vcpus[i].busy = busy;
        c->vcpus[i].allowed = *allowed;
        c->vcpus[i].pinned = *pinned;
        c->vcpus[i].cpu = -1;
    }
    return c;
}

static void set_mem(snap_cell *c, unsigned node, uint64_t mib)
{
    c->pages[node] = mib * MIB / PAGE;
}

static const plan_cell *find_cell(const plan *p, const char *dom, unsigned cell)
{
    for (unsigned i = 0; i < p->nr_domains; i++)
        if (strcmp(p->domains[i].name, dom) == 0 && cell < p->domains[i].nr_cells)
            return &p->domains[i].cells[cell];
    return NULL;
}

static bool has_rule(const plan_cell *pc, vn_rule r)
{
    return pc && (pc->rules & RULE_BIT(r));
}

static uint64_t moved_bytes(const plan_cell *pc)
{
    uint64_t b = 0;

    for (unsigned i = 0; pc && i < pc->nr_moves; i++)
        if (!pc->moves[i].is_range)
            b += pc->moves[i].bytes;
    return b;
}

static void run(const topology *t, const snapshot *s, plan *p)
{
    vn_config c;

    config_defaults(&c);
    if (decide(t, s, &c, p) < 0) {
        fprintf(stderr, "decide failed\n");
        exit(1);
    }
}

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
    (void)cpuset_parse("0-3,20-23", &lim);
    c->vcpus[0].allowed = lim;
    c->vcpus[1].allowed = lim;
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    vn_cpuset want;
    (void)cpuset_parse("20-23", &want);
    CHECK(pc && pc->target_node == 1 && pc->nr_pins == 2 && cpuset_equal(&pc->pins[0].cpus, &want),
          "allowed CPUs 0-3,20-23: pinned to 20-23, the allowed part of node 1");
    CHECK(pc && pc->locality_before < 1 && pc->locality_after > 99,
          "... locality 0%% -> 100%% (%.0f -> %.0f)", pc ? pc->locality_before : -1,
          pc ? pc->locality_after : -1);
    plan_clear(&p);
    snapshot_clear(&s);
    free(t);
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
    free(t);
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
    free(t);
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
    free(t);
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
    free(t);
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
        free(t);
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
    c->binding = (vn_mem_binding){VN_MEM_STRICT, 1u << 1};
    set_mem(c, 1, 512);
    d = add_domain(&s, "there", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[1].cpus);
    c->binding = (vn_mem_binding){VN_MEM_RESTRICTIVE, 1u << 1};
    set_mem(c, 1, 512);
    d = add_domain(&s, "cannot", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_STRICT, 1u << 1};
    set_mem(c, 1, 512);
    d = add_domain(&s, "two-nodes", VN_MODE_AUTO, 0, -1);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_STRICT, 3};
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
    free(t);
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
    free(t);
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
    d->allowed_nodes = 1u << 1;
    set_mem(add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[0].cpus), 0, 512);
    d = add_domain(&s, "interleaved", VN_MODE_AUTO, 0, -1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->nodes[0].cpus, &t->nodes[0].cpus);
    c->binding = (vn_mem_binding){VN_MEM_INTERLEAVE, 3};
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
    free(t);
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
    free(t);
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
    plan_clear(&p);
    snapshot_clear(&s);
    free(t);
}

/* ---------- properties over random snapshots ---------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static unsigned rndn(unsigned n)
{
    return n ? (unsigned)(rnd() % n) : 0;
}

static int random_cpu_node(const topology *t)
{
    unsigned cands[VN_MAX_NODES], nr = 0;

    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (!t->nodes[n].cpuless)
            cands[nr++] = n;
    return nr ? (int)cands[rndn(nr)] : -1;
}

static void random_snapshot(const topology *t, snapshot *s)
{
    unsigned nd = 1 + rndn(8), vid;
    double budget = t->nr_cpus * 0.4; /* total busy vCPUs stay below 40% of the CPUs */

    snap_init(s);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        s->other_busy[n] = t->nodes[n].cpuless ? 0 : rndn(2);
    for (unsigned i = 0; i < nd; i++) {
        char name[32];
        unsigned m = rndn(10);
        snprintf(name, sizeof(name), "dom%u", i);
        snap_domain *d = add_domain(s, name,
                                    m < 6   ? VN_MODE_AUTO
                                    : m < 8 ? VN_MODE_ADVISE
                                            : VN_MODE_OFF,
                                    rndn(10), rndn(2) ? random_cpu_node(t) : -1);
        d->priority = (int)rndn(3) - 1;
        if (rndn(5) == 0)
            d->allowed_nodes = (rnd() & ((1ULL << t->nr_nodes) - 1)) | (1ULL << random_cpu_node(t));
        vid = 0;
        for (unsigned k = 0, nc = 1 + rndn(4); k < nc; k++) {
            vn_cpuset allowed = t->cpus, pinned;
            unsigned nv = 1 + rndn(4);
            if (rndn(10) < 2) { /* a cgroup or vcpupin limit that cuts through nodes */
                cpuset_zero(&allowed);
                CPUSET_FOREACH(cpu, &t->cpus)
                if (rndn(10) < 7)
                    cpuset_set(&allowed, (unsigned)cpu);
                cpuset_set(&allowed, (unsigned)cpuset_first(&t->nodes[random_cpu_node(t)].cpus));
            } else if (rndn(10) < 3) {
                cpuset_zero(&allowed);
                for (unsigned n = 0; n < t->nr_nodes; n++)
                    if (rndn(2))
                        cpuset_or(&allowed, &allowed, &t->nodes[n].cpus);
                cpuset_or(&allowed, &allowed, &t->nodes[random_cpu_node(t)].cpus);
            }
            pinned = allowed;
            if (rndn(2)) {
                cpuset_and(&pinned, &allowed, &t->nodes[random_cpu_node(t)].cpus);
                if (cpuset_empty(&pinned))
                    pinned = allowed;
            }
            snap_cell *c = add_cell(d, nv, vid, 0, &allowed, &pinned);
            vid += nv;
            for (unsigned v = 0; v < nv; v++) {
                double b = (double)rndn(101) / 100.0;
                if (b > 0.25 && budget < 1)
                    b = 0.1;
                if (b > 0.25)
                    budget -= 1;
                c->vcpus[v].busy = b;
                c->vcpus[v].cpu = rndn(2) ? cpuset_first(&pinned) : -1;
            }
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                uint64_t cap = t->nodes[n].mem_total / 64 / PAGE;
                if (rndn(3) == 0 && cap)
                    c->pages[n] = rnd() % cap;
            }
            if (rndn(3) == 0) { /* all on one node */
                uint64_t tot = 0;
                int home = (int)rndn(t->nr_nodes);
                for (unsigned n = 0; n < t->nr_nodes; n++) {
                    tot += c->pages[n];
                    c->pages[n] = 0;
                }
                c->pages[home] = VN_MIN(tot, t->nodes[home].mem_total / 64 / PAGE);
            }
            m = rndn(20);
            if (m == 0)
                c->binding = (vn_mem_binding){VN_MEM_STRICT, 1ULL << random_cpu_node(t)};
            else if (m == 1)
                c->binding = (vn_mem_binding){VN_MEM_INTERLEAVE, (1ULL << t->nr_nodes) - 1};
            else if (m == 2)
                c->binding =
                    (vn_mem_binding){VN_MEM_RESTRICTIVE, (rnd() & ((1ULL << t->nr_nodes) - 1)) | 1};
            c->last_candidate = rndn(2) ? (int)rndn(t->nr_nodes) : -1;
            if (rndn(5) == 0) {
                c->nr_hot = 1 + rndn(3);
                c->hot = calloc(c->nr_hot, sizeof(*c->hot));
                for (unsigned h = 0; h < c->nr_hot; h++)
                    c->hot[h] = (snap_hot_range){.gpa = (uint64_t)h << 30,
                                                 .length = 2 * MIB,
                                                 .heat = 1.0 - h * 0.1,
                                                 .shared = rndn(3) == 0};
            }
        }
    }
}

static char *plan_text(const topology *t, const plan *p)
{
    struct json_object *j = record_plan_json(t, p);
    char *s = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    return s;
}

static const snap_domain *snap_find(const snapshot *s, const char *name)
{
    for (unsigned i = 0; i < s->nr_domains; i++)
        if (strcmp(s->domains[i].name, name) == 0)
            return &s->domains[i];
    return NULL;
}

/* Returns a description of the first violated invariant, or NULL. */
static const char *check_invariants(const topology *t, const snapshot *s, const plan *p)
{
    static char why[256];
    vn_config cfg;
    uint64_t into[VN_MAX_NODES] = {0};

    config_defaults(&cfg);
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        const snap_domain *d = snap_find(s, pd->name);
        if (!d || d->mode == VN_MODE_OFF || d->mode != pd->mode)
            return "a planned domain is unknown, not opted in, or has the wrong mode";
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            const snap_cell *c = &d->cells[k];
            bool acts = pc->nr_pins + pc->nr_moves > 0;
            if (acts != (pc->reason == REASON_NONE))
                return "a cell with actions has a no-change reason, or one without has none";
            if (acts && !pc->rules)
                return "actions without a rule";
            if (pc->target_node >= 0 && pc->nr_pins && t->nodes[pc->target_node].cpuless)
                return "vCPUs pinned to a CPU-less node";
            if (pc->target_node >= 0 && pc->nr_pins && d->allowed_nodes &&
                !(d->allowed_nodes & (1ULL << pc->target_node)))
                return "placed outside the domain's allowed nodes";
            for (unsigned m = 0; m < pc->nr_pins; m++) {
                const plan_pin *pin = &pc->pins[m];
                const snap_vcpu *v = NULL;
                for (unsigned x = 0; x < c->nr_vcpus; x++)
                    if (c->vcpus[x].id == pin->vcpu)
                        v = &c->vcpus[x];
                if (!v || cpuset_empty(&pin->cpus) || !cpuset_subset(&pin->cpus, &v->allowed))
                    return "a pin outside the vCPU's allowed set (or empty)";
                if (!cpuset_subset(&pin->cpus, &t->nodes[pc->target_node].cpus))
                    return "a pin outside the target node";
                if (!pin->rules)
                    return "a pin without a rule";
            }
            if (rule_binding_single_node(&c->binding) >= 0 &&
                (c->binding.mode == VN_MEM_STRICT || c->binding.mode == VN_MEM_RESTRICTIVE) &&
                pc->nr_moves)
                return "memory moved although bound to one node (rule 2)";
            if (c->binding.mode == VN_MEM_INTERLEAVE && pc->nr_moves)
                return "interleaved memory moved";
            for (unsigned m = 0; m < pc->nr_moves; m++) {
                const plan_move *mv = &pc->moves[m];
                if (mv->to_node != pc->target_node || !mv->rules)
                    return "a move not to the target, or without a rule";
                if (mv->is_range)
                    continue;
                if (mv->from_node == mv->to_node ||
                    mv->bytes > c->pages[mv->from_node] * c->page_size || mv->bytes == 0)
                    return "a move of more bytes than the source has";
                into[mv->to_node] += mv->bytes;
            }
        }
    }
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        uint64_t free = s->free_known[n] ? s->free_bytes[n] : t->nodes[n].mem_free;
        uint64_t reserve = VN_MAX(cfg.reserve_bytes,
                                  (uint64_t)((double)t->nodes[n].mem_total * cfg.reserve_fraction));
        if (into[n] && (free < reserve || into[n] > free - reserve)) {
            snprintf(why, sizeof(why), "node %u would fall below its free-memory reserve", n);
            return why;
        }
    }
    return NULL;
}

/* CPU capacity: the busy vCPUs a plan puts on a node never exceed its CPUs, unless a cell
 * placed there is flagged cpu_overcommit (none of its allowed nodes had room). */
static const char *check_capacity(const topology *t, const snapshot *s, const plan *p)
{
    static char why[128];
    double load[VN_MAX_NODES] = {0};
    bool flagged[VN_MAX_NODES] = {0};

    for (unsigned n = 0; n < t->nr_nodes; n++)
        load[n] = s->other_busy[n];
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        const snap_domain *d = snap_find(s, pd->name);
        if (pd->mode != VN_MODE_AUTO)
            continue;
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            if (pc->target_node < 0 || pc->reason == REASON_CPUSET_SKIP)
                continue;
            for (unsigned v = 0; v < d->cells[k].nr_vcpus; v++)
                load[pc->target_node] += d->cells[k].vcpus[v].busy > 0.25;
            flagged[pc->target_node] |= pc->cpu_overcommit;
        }
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (load[n] > t->nodes[n].nr_cpus && !flagged[n]) {
            snprintf(why, sizeof(why), "node %u gets %.1f busy vCPUs on %u CPUs, not flagged", n,
                     load[n], t->nodes[n].nr_cpus);
            return why;
        }
    return NULL;
}

/* Advise domains are never acted on, so they plan the same actions every pass:
 * idempotence and convergence are about the domains vnumad changes. */
static bool plan_has_pins(const plan *p)
{
    for (unsigned i = 0; i < p->nr_domains; i++)
        for (unsigned k = 0; k < p->domains[i].nr_cells; k++)
            if (p->domains[i].mode == VN_MODE_AUTO && p->domains[i].cells[k].nr_pins)
                return true;
    return false;
}

static void debug_dump(const topology *t, const char *what, const snapshot *s, const plan *p)
{
    if (!getenv("VN_TEST_DEBUG"))
        return;
    printf("# ---- %s\n", what);
    record_snapshot_table(t, s, stdout);
    record_plan_table(t, p, stdout);
}

static bool same_targets(const plan *a, const plan *b)
{
    if (a->nr_domains != b->nr_domains)
        return false;
    for (unsigned i = 0; i < a->nr_domains; i++)
        for (unsigned k = 0; k < a->domains[i].nr_cells; k++)
            if (a->domains[i].cells[k].target_node != b->domains[i].cells[k].target_node)
                return false;
    return true;
}

static void test_properties_on(const char *name, const topology *t, unsigned cases)
{
    unsigned bad_inv = 0, bad_det = 0, bad_idem = 0, bad_cap = 0, bad_conv = 0;
    const char *first_inv = NULL, *first_cap = NULL;
    uint64_t first_seed = 0;

    for (unsigned i = 0; i < cases; i++) {
        snapshot s, s1, s2;
        plan p1, p1b, p2, p3;
        char *a, *b;
        const char *why;
        vn_config cfg;

        config_defaults(&cfg);
        rng_state = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(i + 1) * 0x2545F4914F6CDD1DULL);
        random_snapshot(t, &s);
        run(t, &s, &p1);
        run(t, &s, &p1b);
        a = plan_text(t, &p1);
        b = plan_text(t, &p1b);
        bad_det += strcmp(a, b) != 0;
        free(a);
        free(b);
        why = check_invariants(t, &s, &p1);
        if (why) {
            if (!bad_inv++) {
                first_inv = why;
                first_seed = i;
            }
        }
        /* idempotence: the state the plan produces gets no new pins and keeps its targets;
         * memory deferred by rule 3's filter may follow one pass later, then nothing. */
        (void)plan_apply(t, &s, &p1, &s1);
        why = check_capacity(t, &s, &p1);
        if (why && !bad_cap++)
            first_cap = why;
        run(t, &s1, &p2);
        if (plan_has_pins(&p2) || !same_targets(&p1, &p2)) {
            if (!bad_idem++) {
                printf("# idempotence broken: %s case %u\n", name, i);
                debug_dump(t, "pass 1", &s, &p1);
                debug_dump(t, "pass 2", &s1, &p2);
            }
        }
        (void)plan_apply(t, &s1, &p2, &s2);
        run(t, &s2, &p3);
        if (plan_nr_auto_actions(&p3) != 0)
            bad_conv++;
        plan_clear(&p1);
        plan_clear(&p1b);
        plan_clear(&p2);
        plan_clear(&p3);
        snapshot_clear(&s);
        snapshot_clear(&s1);
        snapshot_clear(&s2);
    }
    CHECK(bad_inv == 0,
          "%s: %u random snapshots: allowed sets, CPU-less nodes, allowed nodes, "
          "rule 2, reserve hold (%u bad; first: case %llu: %s)",
          name, cases, bad_inv, (unsigned long long)first_seed, first_inv ? first_inv : "-");
    CHECK(bad_det == 0, "%s: deterministic (%u differ)", name, bad_det);
    CHECK(bad_cap == 0, "%s: CPU capacity holds (%u bad; first: %s)", name, bad_cap,
          first_cap ? first_cap : "-");
    CHECK(bad_idem == 0,
          "%s: idempotent: deciding on the planned state adds no pins and keeps "
          "every target (%u bad)",
          name, bad_idem);
    CHECK(bad_conv == 0, "%s: converged: the pass after that plans nothing (%u bad)", name,
          bad_conv);
}

static void test_properties(void)
{
    const char *dir = "tests/data/topologies";
    struct dirent **ents = NULL;
    int n = scandir(dir, &ents, NULL, alphasort);
    unsigned files = 0;

    for (int i = 0; i < n; i++) {
        char path[1024];
        size_t len = strlen(ents[i]->d_name);
        if (len > 4 && strcmp(ents[i]->d_name + len - 4, ".xml") == 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
            topology *t = load_xml(path);
            if (CHECK(t != NULL, "load %s", path))
                test_properties_on(ents[i]->d_name, t, 60);
            free(t);
            files++;
        }
        free(ents[i]);
    }
    free(ents);
    CHECK(files >= 10, "properties ran on every bundled topology (%u files)", files);
    {
        topology *t = load_synth("pack:2 numa:4 l3:3 core:8 pu:2");
        test_properties_on("synthetic zen4 nps4", t, 100);
        free(t);
    }
}

static void test_order_independence(void)
{
    topology *t = load_synth("pack:2 numa:2 l3:1 core:4 pu:2");
    snapshot s;
    plan p1, p2;

    rng_state = 42;
    random_snapshot(t, &s);
    run(t, &s, &p1);
    /* reverse the domains */
    for (unsigned i = 0; i < s.nr_domains / 2; i++) {
        snap_domain tmp = s.domains[i];
        s.domains[i] = s.domains[s.nr_domains - 1 - i];
        s.domains[s.nr_domains - 1 - i] = tmp;
    }
    run(t, &s, &p2);
    bool same = p1.nr_domains == p2.nr_domains;
    for (unsigned i = 0; same && i < p1.nr_domains; i++) {
        const plan_domain *a = &p1.domains[i], *b = NULL;
        for (unsigned j = 0; j < p2.nr_domains; j++)
            if (strcmp(p2.domains[j].name, a->name) == 0)
                b = &p2.domains[j];
        same = b && b->nr_cells == a->nr_cells;
        for (unsigned k = 0; same && k < a->nr_cells; k++)
            same = a->cells[k].target_node == b->cells[k].target_node &&
                   a->cells[k].nr_pins == b->cells[k].nr_pins &&
                   a->cells[k].nr_moves == b->cells[k].nr_moves;
    }
    CHECK(same, "the decisions do not depend on the order of domains in the snapshot");
    plan_clear(&p1);
    plan_clear(&p2);
    snapshot_clear(&s);
    free(t);
}

int main(void)
{
    test_prefer_vcpu_move();
    test_early_vs_old();
    test_hysteresis();
    test_capacity_band();
    test_imbalance_pair_and_spread();
    test_imbalance_multi_llc();
    test_cpuset_skip();
    test_free_memory_reserve();
    test_opt_in_and_modes();
    test_shared_proximity();
    test_hot_first();
    test_order_independence();
    test_properties();
    return tap_done();
}
