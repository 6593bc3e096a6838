/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of guest hints into the decide stage (host/hints.c), and that decide orders them first. */
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "hints.h"
#include "tap.h"

#define MIB (1024ULL * 1024)

/* Two cells of 128 MiB: cell 0 at gpa 0, cell 1 at 128 MiB; vCPU 0 in cell 0, vCPU 1 in cell 1. */
static void make_domain(snap_domain *d, const topology *t)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "vm");
    d->mode = VN_MODE_AUTO;
    d->preferred_node = -1;
    d->nr_cells = 2;
    d->cells = calloc(2, sizeof(*d->cells));
    for (unsigned k = 0; k < 2; k++) {
        snap_cell *c = &d->cells[k];
        c->id = k;
        c->nr_vcpus = 1;
        c->vcpus = calloc(1, sizeof(*c->vcpus));
        if (snap_cell_nodes(c, t->nr_nodes) < 0)
            abort();
        c->vcpus[0] = (snap_vcpu){.id = k,
                                  .busy = 0.9,
                                  .allowed = t->nodes[0].cpus,
                                  .pinned = t->nodes[0].cpus,
                                  .cpu = -1};
        c->page_size = 4096;
        c->pages[1] = 128 * MIB / 4096; /* all on node 1, vCPUs allowed on node 0 only */
        c->last_candidate = -1;
    }
}

static proto_process proc(int pid, uint32_t *vcpus, unsigned nv, proto_range *r, unsigned nr)
{
    proto_process p = {.pid = pid, .vcpus = vcpus, .nr_vcpus = nv, .ranges = r, .nr_ranges = nr};
    snprintf(p.comm, sizeof(p.comm), "p%d", pid);
    return p;
}

/* One hint set of process 100 (runs in cell 1) with these ranges, applied and followed. */
static void follow(const topology *t, const ram_range *ram, dom_sample_cache *sc, uint64_t seq,
                   proto_range *r, unsigned nr, snapshot *s)
{
    uint32_t v1[] = {1};
    proto_process pr = proc(100, v1, 1, r, nr);
    proto_hints h = {.seq = seq, .processes = &pr, .nr_processes = 1};

    snapshot_clear(s);
    s->nr_domains = 1;
    s->domains = calloc(1, sizeof(*s->domains));
    make_domain(&s->domains[0], t);
    if (hints_apply(&h, ram, 2, &s->domains[0]) < 0 || hints_follow(&s->domains[0], seq, sc) < 0)
        abort();
}

static const snap_hot_range *range_at(const snap_cell *c, uint64_t gpa)
{
    for (unsigned i = 0; i < c->nr_hot; i++)
        if (c->hot[i].gpa == gpa)
            return &c->hot[i];
    return NULL;
}

/* A hostile guest names its whole cell as hot 256 times, from 4 processes, and the same 2 MiB
 * twice more: the cell gets one range of its size (the hottest heat), the plan orders it once, and
 * its ranges never add up to more than the cell's RAM. Before, each range was planned, scanned and
 * counted with its whole length: 256 times the cell. */
static void test_overlaps(const topology *t, const ram_range *ram)
{
    static proto_range whole[64];
    uint32_t v1[] = {1};
    proto_range two[] = {{.gpa = 140 * MIB, .length = 2 * MIB, .heat = 1000},
                         {.gpa = 141 * MIB, .length = 2 * MIB, .heat = 200}};
    proto_process procs[5];
    proto_hints h = {.seq = 1, .processes = procs, .nr_processes = 5};
    snapshot s = {0};
    plan p = {0};
    vn_config cfg;
    uint64_t sum = 0, hot_moves = 0;

    for (unsigned i = 0; i < 64; i++)
        whole[i] = (proto_range){.gpa = 128 * MIB, .length = 128 * MIB, .heat = 100 + i};
    for (unsigned i = 0; i < 4; i++)
        procs[i] = proc(300 + (int)i, v1, 1, whole, 64);
    procs[4] = proc(400, v1, 1, two, 2);
    s.nr_domains = 1;
    s.domains = calloc(1, sizeof(*s.domains));
    make_domain(&s.domains[0], t);
    CHECK(hints_apply(&h, ram, 2, &s.domains[0]) == 0, "overlaps: 258 ranges in cell 1 applied");
    const snap_cell *c1 = &s.domains[0].cells[1];
    for (unsigned i = 0; i < c1->nr_hot; i++)
        sum += c1->hot[i].length;
    CHECK(c1->nr_hot == 1 && c1->hot[0].gpa == 128 * MIB && c1->hot[0].length == 128 * MIB &&
              c1->hot[0].heat == 1.0,
          "overlaps: one range of the cell's 128 MiB, the hottest heat (%u ranges, "
          "%llu MiB in all)",
          c1->nr_hot, (unsigned long long)(sum / MIB));
    config_defaults(&cfg);
    CHECK(decide(t, &s, &cfg, &p) == 0, "overlaps: decide");
    const plan_cell *pc = &p.domains[0].cells[1];
    for (unsigned m = 0; m < pc->nr_moves; m++)
        hot_moves += pc->moves[m].is_range ? pc->moves[m].bytes : 0;
    CHECK(hot_moves > 0 && hot_moves <= 128 * MIB,
          "overlaps: the plan orders the cell's hot memory, at most the cell (%llu MiB)",
          (unsigned long long)(hot_moves / MIB));
    plan_clear(&p);
    snapshot_clear(&s);
}

/* Rule 3 on hot ranges across hint sets (hints_follow). */
static void test_follow(const topology *t, const ram_range *ram)
{
    dom_sample_cache *sc = calloc(1, sizeof(*sc));
    snapshot s = {0};
    proto_range a[] = {{.gpa = 130 * MIB, .length = 2 * MIB, .heat = 1000},
                       {.gpa = 140 * MIB, .length = 2 * MIB, .heat = 600}};
    proto_range b[] = {{.gpa = 130 * MIB, .length = 4 * MIB, .heat = 200},
                       {.gpa = 160 * MIB, .length = 2 * MIB, .heat = 800}};
    const snap_hot_range *x, *y, *z;
    const snap_cell *c;

    follow(t, ram, sc, 5, a, 2, &s);
    c = &s.domains[0].cells[1];
    CHECK(c->nr_hot == 2 && !c->hot[0].agree && !c->hot[1].agree && !c->hot[0].fading,
          "the first hint set: two ranges, each hot in this set only");
    follow(t, ram, sc, 5, a, 2, &s);
    c = &s.domains[0].cells[1];
    CHECK(c->nr_hot == 2 && !c->hot[0].agree, "the same set again (no new one came): the same");
    follow(t, ram, sc, 6, b, 2, &s);
    c = &s.domains[0].cells[1];
    x = range_at(c, 130 * MIB);
    y = range_at(c, 160 * MIB);
    z = range_at(c, 140 * MIB);
    CHECK(x && x->agree == 1 && !x->fading && x->heat > 0.59 && x->heat < 0.61,
          "a new set: 130 MiB overlaps the last set's range, agree 1, heat smoothed to %.2f "
          "(0.2 and 1.0)",
          x ? x->heat : -1);
    CHECK(y && y->agree == 0 && z && z->fading && c->nr_hot == 3,
          "160 MiB is new (agree 0); 140 MiB, absent now, stays one more set, fading");
    follow(t, ram, sc, 7, b, 2, &s);
    c = &s.domains[0].cells[1];
    x = range_at(c, 130 * MIB);
    CHECK(c->nr_hot == 2 && !range_at(c, 140 * MIB) && x && x->agree == 2 &&
              range_at(c, 160 * MIB)->agree == 1,
          "a third set: 140 MiB absent twice is cold (gone); the others agree once more");
    snapshot_clear(&s);
    free(sc);
}

int main(void)
{
    topology *t = topo_new();
    char err[256];
    ram_range ram[2] = {{.cell = 0, .gpa = 0, .size = 128 * MIB},
                        {.cell = 1, .gpa = 128 * MIB, .size = 128 * MIB}};
    uint32_t v1[] = {1}, v01[] = {0, 1};
    proto_range r1[] = {{.gpa = 130 * MIB, .length = 2 * MIB, .heat = 300},
                        {.gpa = 200 * MIB, .length = 4 * MIB, .heat = 900}};
    proto_range r2[] = {{.gpa = 10 * MIB, .length = 2 * MIB, .heat = 500},
                        {.gpa = 600 * MIB, .length = 2 * MIB, .heat = 1000}};
    proto_process procs[2];
    proto_hints h = {.seq = 1, .processes = procs, .nr_processes = 2};
    snapshot s = {0};
    plan p = {0};
    vn_config cfg;

    if (topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, t, err, sizeof(err)) <
        0)
        return 1;
    procs[0] = proc(100, v1, 1, r1, 2);  /* runs in cell 1, hot in cell 1 */
    procs[1] = proc(200, v01, 2, r2, 2); /* runs in both cells: shared */
    s.nr_domains = 1;
    s.domains = calloc(1, sizeof(*s.domains));
    make_domain(&s.domains[0], t);
    CHECK(hints_apply(&h, ram, 2, &s.domains[0]) == 0, "hints apply");
    snap_cell *c0 = &s.domains[0].cells[0], *c1 = &s.domains[0].cells[1];
    CHECK(c1->nr_hot == 2 && c1->hot[0].gpa == 200 * MIB && c1->hot[0].heat == 0.9 &&
              c1->hot[1].gpa == 130 * MIB && !c1->hot[0].shared,
          "cell 1 gets its two ranges, hottest first, private");
    CHECK(c0->nr_hot == 1 && c0->hot[0].gpa == 10 * MIB && c0->hot[0].shared,
          "cell 0 gets the range of the process that runs in both cells, marked shared");
    CHECK(c0->nr_shares == 1 && c0->shares[0].cell == 1 && c1->nr_shares == 1 &&
              c1->shares[0].cell == 0 && c0->shares[0].weight == HINT_SHARE_WEIGHT,
          "the cells a process spans share (weight %.1f)", HINT_SHARE_WEIGHT);
    /* a range outside guest RAM (600 MiB) is nowhere */
    config_defaults(&cfg);
    CHECK(decide(t, &s, &cfg, &p) == 0, "decide");
    const plan_cell *pc1 = &p.domains[0].cells[1], *pc0 = &p.domains[0].cells[0];
    CHECK(pc1->nr_moves >= 3 && pc1->moves[0].is_range && pc1->moves[0].gpa == 200 * MIB &&
              pc1->moves[1].is_range && pc1->moves[1].gpa == 130 * MIB && !pc1->moves[2].is_range,
          "decide moves cell 1's hot ranges first, hottest first, then the bulk");
    bool shared_range = false;
    for (unsigned m = 0; m < pc0->nr_moves; m++)
        shared_range |= pc0->moves[m].is_range;
    CHECK(!shared_range, "a new domain's shared range waits for the two-stage filter (rule 3)");

    /* A cell that no range falls in keeps hot == NULL: it must not reach qsort() (UBSan stopped
     * vnumad there in tests/e2e/agent-host.sh, the hostile guest's ranges being all dropped). */
    snapshot s2 = {0};
    proto_hints h2 = {.seq = 2, .processes = procs, .nr_processes = 1}; /* all in cell 1 */
    s2.nr_domains = 1;
    s2.domains = calloc(1, sizeof(*s2.domains));
    make_domain(&s2.domains[0], t);
    CHECK(hints_apply(&h2, ram, 2, &s2.domains[0]) == 0 && s2.domains[0].cells[0].nr_hot == 0 &&
              !s2.domains[0].cells[0].hot && s2.domains[0].cells[1].nr_hot == 2,
          "a cell without hot ranges stays without (hot NULL, nothing sorted)");
    snapshot_clear(&s2);
    test_overlaps(t, ram);
    test_follow(t, ram);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
    return tap_done();
}
