/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The room promised to arriving domains (host/promise.c): made from a placement's plan,
 * replaced by the same domain's next placement, counted as used in a snapshot (free memory and
 * huge page pools, never below 0, one domain's own aside), released once the domain arrived
 * and a later pass sampled it, or when it stopped, expired after PROMISE_EXPIRY_S of a clock
 * the test hands in (no sleeping), and the oldest dropped when the table is full.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "model.h"
#include "promise.h"
#include "tap.h"
#include "topology.h"

#define MIB  (1024ULL * 1024)
#define GIB  (1024 * MIB)
#define HUGE (2 * MIB)

static topology topo;

/* A plan of nr cells: cell k's memory (bytes[k], pages of page_size[k]) placed on node[k]
 * (-1: its vCPUs only, no memory placed). */
static plan_domain *plan_of(unsigned nr, const int node[], const uint64_t bytes[],
                            const uint64_t page_size[])
{
    static plan_domain pd;
    static plan_cell cells[4];
    static plan_move moves[4];

    memset(&pd, 0, sizeof(pd));
    memset(cells, 0, sizeof(cells));
    pd.nr_cells = nr;
    pd.cells = cells;
    for (unsigned k = 0; k < nr; k++) {
        cells[k].cell_id = k;
        cells[k].target_node = node[k];
        cells[k].page_size = page_size ? page_size[k] : 4096;
        if (node[k] < 0)
            continue;
        moves[k] = (plan_move){.from_node = -1, .to_node = node[k], .bytes = bytes[k]};
        cells[k].moves = &moves[k];
        cells[k].nr_moves = 1;
    }
    return &pd;
}

static void snap_empty(snapshot *s)
{
    memset(s, 0, sizeof(*s));
}

static void test_make_apply_replace(void)
{
    promise_table *pt = promise_table_new();
    static snapshot s;
    uint64_t held[2];
    promise dropped;

    snap_empty(&s);
    CHECK(promise_apply(pt, &topo, NULL, &s, held) == 0 && !s.free_known[0] && !held[0],
          "an empty table counts nothing and leaves the snapshot alone");

    /* a: cell 0 on node 0 (2 GiB), cell 1 on node 1 (1 GiB), cell 2 its vCPUs only */
    CHECK(!promise_make(pt, "a", "dom-a",
                        plan_of(3, (int[]){0, 1, -1}, (uint64_t[]){2 * GIB, GIB, GIB}, NULL), 10.0,
                        &dropped),
          "a promise is made (nothing dropped)");
    const promise *p = promise_find(pt, "a");
    CHECK(promise_count(pt) == 1 && p && p->nr_cells == 2 && promise_node_bytes(p, 0) == 2 * GIB &&
              promise_node_bytes(p, 1) == GIB,
          "it holds each placed cell's memory on its node, none for a cell without memory placed");
    snap_empty(&s);
    unsigned nr = promise_apply(pt, &topo, NULL, &s, held);
    CHECK(
        nr == 1 && s.free_known[0] && s.free_known[1] && s.free_bytes[0] == 6 * GIB &&
            s.free_bytes[1] == 3 * GIB && held[0] == 2 * GIB && held[1] == GIB,
        "counted as used: the topology's free memory (8, 4 GiB) less the promise (%llu, %llu MiB)",
        (unsigned long long)(s.free_bytes[0] / MIB), (unsigned long long)(s.free_bytes[1] / MIB));
    snap_empty(&s);
    s.free_known[0] = true;
    s.free_bytes[0] = GIB;
    (void)promise_apply(pt, &topo, NULL, &s, NULL);
    CHECK(s.free_bytes[0] == 0, "a snapshot's own free memory is used, never below 0");
    snap_empty(&s);
    CHECK(promise_apply(pt, &topo, "a", &s, held) == 0 && !s.free_known[0] && !held[0],
          "the placing domain's own earlier promise is not counted against it");

    /* a's next placement replaces its promise */
    (void)promise_make(pt, "a", "dom-a", plan_of(1, (int[]){1}, (uint64_t[]){GIB}, NULL), 20.0,
                       NULL);
    p = promise_find(pt, "a");
    CHECK(promise_count(pt) == 1 && p && promise_node_bytes(p, 0) == 0 &&
              promise_node_bytes(p, 1) == GIB && p->made_s == 20.0,
          "a new place of the same domain replaces its promise");
    (void)promise_make(pt, "a", "dom-a", plan_of(1, (int[]){-1}, (uint64_t[]){GIB}, NULL), 30.0,
                       NULL);
    CHECK(promise_count(pt) == 0 && !promise_find(pt, "a"),
          "a new place that placed no memory drops the earlier promise");
    promise_table_free(pt);
}

static void test_huge(void)
{
    promise_table *pt = promise_table_new();
    static snapshot s;
    uint64_t held[2];

    /* 80 MiB of 2 MiB pages on node 0, whose pool has 100 free */
    (void)promise_make(pt, "h", "dom-h",
                       plan_of(1, (int[]){0}, (uint64_t[]){40 * HUGE}, (uint64_t[]){HUGE}), 1.0,
                       NULL);
    snap_empty(&s);
    (void)promise_apply(pt, &topo, NULL, &s, held);
    const topo_huge *pools = snapshot_node_huge(&topo, &s, 0);
    int h = topo_huge_slot(pools, HUGE);
    CHECK(h >= 0 && pools[h].free_pages == 60 && !s.free_known[0] && held[0] == 40 * HUGE,
          "a hugetlb cell's promise comes off the node's pool of its page size, not its free "
          "memory (%llu pages left)",
          h >= 0 ? (unsigned long long)pools[h].free_pages : 0ULL);
    (void)promise_make(pt, "h2", "dom-h2",
                       plan_of(1, (int[]){0}, (uint64_t[]){200 * HUGE}, (uint64_t[]){HUGE}), 1.0,
                       NULL);
    snap_empty(&s);
    (void)promise_apply(pt, &topo, NULL, &s, NULL);
    pools = snapshot_node_huge(&topo, &s, 0);
    CHECK(pools[topo_huge_slot(pools, HUGE)].free_pages == 0, "a pool never goes below 0");
    promise_table_free(pt);
}

static void test_release(void)
{
    promise_table *pt = promise_table_new();
    promise got;

    (void)promise_make(pt, "a", "dom-a", plan_of(1, (int[]){0}, (uint64_t[]){GIB}, NULL), 1.0,
                       NULL);
    (void)promise_make(pt, "b", "dom-b", plan_of(1, (int[]){1}, (uint64_t[]){GIB}, NULL), 1.0,
                       NULL);
    CHECK(!promise_sampled(pt, "a", 7, NULL),
          "a sample of a domain whose migration has not finished releases nothing");
    promise_arrived(pt, "a", 7);
    CHECK(!promise_sampled(pt, "a", 7, NULL) && promise_find(pt, "a"),
          "a sample of the pass its arrival came in releases nothing (it may predate it)");
    CHECK(promise_sampled(pt, "a", 8, &got) && !promise_find(pt, "a") && !strcmp(got.name, "dom-a"),
          "arrived, then sampled in a later pass: released");
    promise_arrived(pt, "nobody", 8); /* no promise: nothing */
    CHECK(promise_release(pt, "b", &got) && !strcmp(got.uuid, "b") && promise_count(pt) == 0,
          "a domain that stopped (a failed migration) releases its promise");
    CHECK(!promise_release(pt, "b", NULL), "... once");
    promise_table_free(pt);
}

static void test_expire(void)
{
    promise_table *pt = promise_table_new();
    promise got;
    const double t0 = 1000.0;

    (void)promise_make(pt, "old", "dom-old", plan_of(1, (int[]){0}, (uint64_t[]){GIB}, NULL), t0,
                       NULL);
    (void)promise_make(pt, "new", "dom-new", plan_of(1, (int[]){0}, (uint64_t[]){GIB}, NULL),
                       t0 + 60, NULL);
    CHECK(!promise_take_expired(pt, t0 + PROMISE_EXPIRY_S - 1, NULL) && promise_count(pt) == 2,
          "nothing expires before PROMISE_EXPIRY_S");
    CHECK(promise_take_expired(pt, t0 + PROMISE_EXPIRY_S, &got) && !strcmp(got.uuid, "old") &&
              !promise_take_expired(pt, t0 + PROMISE_EXPIRY_S, NULL) && promise_find(pt, "new"),
          "the one made PROMISE_EXPIRY_S ago expires, the younger stays");
    CHECK(promise_expire(pt, t0 + 60 + PROMISE_EXPIRY_S) == 1 && promise_count(pt) == 0,
          "promise_expire takes every expired one");
    promise_table_free(pt);
}

static void test_full(void)
{
    promise_table *pt = promise_table_new();
    promise dropped;
    char uuid[32];
    bool any = false;

    for (unsigned i = 0; i < PROMISE_MAX; i++) {
        snprintf(uuid, sizeof(uuid), "d%u", i);
        /* the same time for all: the order they were made in says which is oldest */
        any |= promise_make(pt, uuid, uuid, plan_of(1, (int[]){0}, (uint64_t[]){MIB}, NULL), 5.0,
                            NULL);
    }
    CHECK(!any && promise_count(pt) == PROMISE_MAX, "the table holds PROMISE_MAX promises");
    (void)promise_make(pt, "d3", "d3", plan_of(1, (int[]){1}, (uint64_t[]){MIB}, NULL), 5.0,
                       &dropped);
    CHECK(promise_count(pt) == PROMISE_MAX && promise_find(pt, "d0"),
          "full: replacing a domain's own promise drops no other");
    CHECK(promise_make(pt, "x", "x", plan_of(1, (int[]){0}, (uint64_t[]){MIB}, NULL), 5.0,
                       &dropped) &&
              !strcmp(dropped.uuid, "d0") && !promise_find(pt, "d0") && promise_find(pt, "x") &&
              promise_find(pt, "d1") && promise_count(pt) == PROMISE_MAX,
          "full: a new one drops the oldest, and says which (%s)", dropped.uuid);
    promise_table_free(pt);
}

static void test_counted_once(void)
{
    promise_table *pt = promise_table_new();
    promise got;
    char line[128];

    (void)promise_make(pt, "a", "dom-a",
                       plan_of(2, (int[]){0, 1}, (uint64_t[]){GIB, 2 * GIB}, NULL), 1.0, NULL);
    CHECK(promise_take_uncounted(pt, &got) && !strcmp(got.uuid, "a") &&
              !promise_take_uncounted(pt, NULL),
          "a pass says each promise once");
    promise_describe(&got, &topo, line, sizeof(line));
    CHECK(!strcmp(line, "node 0 1024 MiB, node 1 2048 MiB"), "described per node (%s)", line);
    (void)promise_make(pt, "a", "dom-a", plan_of(1, (int[]){0}, (uint64_t[]){GIB}, NULL), 2.0,
                       NULL);
    CHECK(promise_take_uncounted(pt, NULL), "a replaced promise is said again");
    promise_table_free(pt);
}

int main(void)
{
    char err[256];

    if (topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, &topo, err, sizeof(err)) < 0) {
        fprintf(stderr, "topology: %s\n", err);
        return 1;
    }
    log_set_level(3); /* (the expiry's info line) */
    topo.nodes[0].mem_free = 8 * GIB;
    topo.nodes[1].mem_free = 4 * GIB;
    topo.nodes[0].mem_free_known = topo.nodes[1].mem_free_known = true;
    topo.nodes[0].huge[0] = (topo_huge){.page_size = HUGE, .free_pages = 100};
    test_make_apply_replace();
    test_huge();
    test_release();
    test_expire();
    test_full();
    test_counted_once();
    topo_release(&topo);
    return tap_done();
}
