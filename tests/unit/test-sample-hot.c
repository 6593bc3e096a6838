/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a cell's hot memory is (host/sample_hot.h), against a fake kernel that places each
 * guest page by a rule: the hot ranges' pages are counted per node exactly when they are few,
 * within 2 points with the same bounded walk as a cell's memory when they are many; overlapping
 * ranges count once, a hot byte makes its huge page hot, a range outside the cell's RAM or one
 * that wraps around the address space counts nothing, and a cell without hot ranges is left
 * unknown.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "sample_hot.h"
#include "tap.h"
#include "util.h"

#define PAGE 4096ULL
#define MIB  (1ULL << 20)
#define HVA0 0x7f0000000000ULL /* cell 0's boot RAM (4 KiB pages) */
#define HVA1 0x7e0000000000ULL /* cell 1's boot RAM (2 MiB pages) */
#define GPA1 (64ULL << 30)

static topology *topo;
static unsigned calls, most;

/* cell 0: every 4th MiB on node 1, the rest on node 0; cell 1: huge pages alternate 2, 3 */
static int node_of(uint64_t a)
{
    if (a >= HVA0 && a < HVA0 + (64ULL << 30))
        return ((a - HVA0) / MIB) % 4 == 3 ? 1 : 0;
    if (a >= HVA1 && a < HVA1 + (1ULL << 30))
        return ((a - HVA1) / (2 * MIB)) % 2 ? 3 : 2;
    return -EFAULT;
}

static int fake_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    if (pid != 4242)
        return -ESRCH;
    calls++;
    most = VN_MAX(most, (unsigned)count);
    for (unsigned long i = 0; i < count; i++)
        status[i] = node_of((uintptr_t)pages[i]);
    return 0;
}

static const numa_ops fake_ops = {.query = fake_query};

static void cell_init(snap_cell *c, unsigned id, uint64_t page_size, const snap_hot_range *hot,
                      unsigned nr_hot)
{
    memset(c, 0, sizeof(*c));
    c->id = id;
    c->page_size = page_size;
    (void)snap_cell_nodes(c, topo->nr_nodes);
    c->hot = calloc(nr_hot ? nr_hot : 1, sizeof(*c->hot));
    if (nr_hot)
        memcpy(c->hot, hot, nr_hot * sizeof(*hot));
    c->nr_hot = nr_hot;
}

int main(void)
{
    dom_sample_cache *sc = calloc(1, sizeof(*sc));
    snap_cell *cells = calloc(3, sizeof(*cells));
    snap_domain sd = {.nr_cells = 3, .cells = cells};
    char err[256];
    unsigned q = 0;
    int r;

    topo = topo_new();
    if (!sc || !cells ||
        topo_load(TOPO_SOURCE_SYNTHETIC, "numa:4 core:1 pu:1", NULL, topo, err, sizeof(err)) < 0)
        return 1;
    sc->pid = 4242;
    sc->nr_ram = sc->nr_ram_boot = 2;
    sc->ram[0] =
        (ram_range){.cell = 0, .gpa = 0, .hva = HVA0, .size = 64ULL << 30, .page_size = PAGE};
    sc->ram[1] = (ram_range){.cell = 1,
                             .gpa = GPA1,
                             .hva = HVA1,
                             .size = 1ULL << 30,
                             .page_size = 2 * MIB,
                             .hugetlb = true};

    /* 1. few pages: exact. MiB 0-3 (3 on node 1), overlapping 2-5 (5 on node 0 again: MiB 4),
     * a range past the cell's RAM, one that wraps; cell 1: a 4 KiB hot byte run in its 3rd huge
     * page (node 2) and 1 MiB spanning its 4th and 5th (nodes 3 and 2); cell 2: no hot range */
    const snap_hot_range h0[] = {{.gpa = 0, .length = 4 * MIB},
                                 {.gpa = 2 * MIB, .length = 4 * MIB},
                                 {.gpa = 80ULL << 30, .length = MIB},
                                 {.gpa = UINT64_MAX - PAGE + 1, .length = 2 * PAGE}};
    const snap_hot_range h1[] = {{.gpa = GPA1 + 4 * MIB + PAGE, .length = PAGE},
                                 {.gpa = GPA1 + 7 * MIB + MIB / 2, .length = MIB}};
    cell_init(&cells[0], 0, PAGE, h0, 4);
    cell_init(&cells[1], 1, 2 * MIB, h1, 2);
    cell_init(&cells[2], 2, PAGE, NULL, 0);
    r = sample_hot_pages(&fake_ops, topo, sc, 1, &sd, &q);
    CHECK(r == 0 && cells[0].hot_pages && cells[0].hot_pages[0] == 5 * MIB / PAGE &&
              cells[0].hot_pages[1] == MIB / PAGE && cells[0].hot_pages[2] == 0,
          "cell 0: MiB 0-5 hot once (overlap merged), 5 MiB on node 0 and 1 MiB on node 1, "
          "nothing for the ranges outside its RAM (%llu, %llu pages)",
          cells[0].hot_pages ? (unsigned long long)cells[0].hot_pages[0] : 0ULL,
          cells[0].hot_pages ? (unsigned long long)cells[0].hot_pages[1] : 0ULL);
    CHECK(r == 0 && cells[1].hot_pages && cells[1].hot_pages[2] == 2 &&
              cells[1].hot_pages[3] == 1 && cells[1].hot_pages[0] == 0,
          "cell 1: whole huge pages, the 3rd and 5th on node 2, the 4th on node 3");
    CHECK(r == 0 && !cells[2].hot_pages, "cell 2: no hot range, its hot pages stay unknown");
    CHECK(q == calls && q == 2, "one status query for each cell's RAM range (%u)", q);

    /* 2. many pages: 200 hot ranges of 64 MiB spread over 64 GiB, 12.5 GiB in all; node 1
     * holds a quarter of each. The same bound as a cell's memory: 4 queries of <= 4096 */
    snap_hot_range many[200];
    for (unsigned i = 0; i < 200; i++)
        many[i] = (snap_hot_range){.gpa = (uint64_t)i * 320 * MIB, .length = 64 * MIB};
    snap_domain_clear(&sd);
    cells = calloc(1, sizeof(*cells));
    cell_init(&cells[0], 0, PAGE, many, 200);
    sd = (snap_domain){.nr_cells = 1, .cells = cells};
    calls = most = 0;
    q = 0;
    r = sample_hot_pages(&fake_ops, topo, sc, 7, &sd, &q);
    double total = 200.0 * 64 * MIB / PAGE, e0 = 0, e1 = 0;
    if (r == 0 && cells[0].hot_pages) {
        e0 = fabs((double)cells[0].hot_pages[0] - total * 0.75) / total * 100;
        e1 = fabs((double)cells[0].hot_pages[1] - total * 0.25) / total * 100;
    }
    CHECK(r == 0 && cells[0].hot_pages && e0 <= 2 && e1 <= 2,
          "12.5 GiB hot in 200 ranges: 3/4 on node 0, 1/4 on node 1 within 2 points (%.2f, %.2f)",
          e0, e1);
    CHECK(calls <= LOCK_HOLD_MAX_QUERIES_PER_CELL && most <= LOCK_HOLD_MAX_PAGES,
          "... in %u queries of at most %u pages (rule 5: <= %d of <= %d)", calls, most,
          LOCK_HOLD_MAX_QUERIES_PER_CELL, LOCK_HOLD_MAX_PAGES);

    /* 3. QEMU gone */
    sc->pid = 1;
    r = sample_hot_pages(&fake_ops, topo, sc, 7, &sd, &q);
    CHECK(r == -ESRCH, "QEMU gone: -ESRCH (%d)", r);

    snap_domain_clear(&sd);
    free(sc);
    topo_free(topo);
    return tap_done();
}
