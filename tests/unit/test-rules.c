/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the five rules (host/rules.c): each fires and does not fire. */
#include <string.h>

#include "rules.h"
#include "tap.h"

static void test_imb_numa_nr(void)
{
    static const struct {
        unsigned cpus, llc, want;
        const char *why;
    } cases[] = {
        {16, 1, 2, "16 CPUs, 1 LLC: max(1, 16/8) = 2"},
        {32, 1, 4, "32 CPUs, 1 LLC: max(1, 32/8) = 4"},
        {4, 1, 1, "4 CPUs, 1 LLC: max(1, 4/8 = 0) = 1"},
        {2, 0, 1, "2 CPUs, no L3 (counts as 1 LLC): max(1, 0) = 1"},
        {128, 8, 8, "128 CPUs, 8 LLCs (Zen3 NPS1): LLC count = 8"},
        {48, 3, 3, "48 CPUs, 3 LLCs (Zen4 NPS4): LLC count = 3"},
        {56, 1, 7, "56 CPUs, 1 LLC (SPR SNC2): 56/8 = 7"},
        {24, 4, 4, "24 CPUs, 4 LLCs: 4"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(rule_imb_numa_nr(cases[i].cpus, cases[i].llc) == cases[i].want, "imb_numa_nr: %s",
              cases[i].why);
}

static void test_adjust_imbalance(void)
{
    static const struct {
        int imbalance, dst_running, imb_numa_nr, want;
        const char *why;
    } cases[] = {
        {1, 2, 2, 0, "communicating pair on a lightly loaded node stays (fires)"},
        {2, 2, 4, 0, "imbalance == NUMA_IMBALANCE_MIN tolerated (fires)"},
        {3, 3, 4, 3, "imbalance above the minimum is balanced even when light"},
        {1, 5, 4, 1, "destination busier than imb_numa_nr: balance for real"},
        {2, 9, 8, 2, "multi-LLC node past its LLC count: spread"},
        {2, 8, 8, 0, "at exactly imb_numa_nr the pair still stays"},
        {0, 0, 1, 0, "nothing to balance"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(rule_adjust_numa_imbalance(cases[i].imbalance, cases[i].dst_running,
                                         cases[i].imb_numa_nr) == cases[i].want,
              "adjust_numa_imbalance(%d, %d, %d): %s", cases[i].imbalance, cases[i].dst_running,
              cases[i].imb_numa_nr, cases[i].why);
}

static void test_cpuset_skip(void)
{
    static const struct {
        vn_mem_binding b;
        bool follow, elsewhere;
        rule_cpuset_verdict want;
        int want_node;
        const char *why;
    } cases[] = {
        {{VN_MEM_STRICT, {{1u << 2}, 1}},
         true,
         true,
         CPUSET_MOVE_VCPUS,
         2,
         "strict to node 2, vCPUs allowed there and elsewhere now: move vCPUs"},
        {{VN_MEM_RESTRICTIVE, {{1u << 1}, 1}},
         true,
         false,
         CPUSET_SKIP_ALL,
         1,
         "restrictive to one node, vCPUs already there: skip"},
        {{VN_MEM_STRICT, {{1u << 0}, 1}},
         false,
         true,
         CPUSET_SKIP_ALL,
         0,
         "bound to one node, vCPUs not allowed there (refinement): skip"},
        {{VN_MEM_STRICT, {{0x3}, 1}},
         true,
         true,
         CPUSET_NOT_BOUND,
         -1,
         "two-node set: not skipped"},
        {{VN_MEM_PREFERRED, {{1u << 1}, 1}},
         true,
         true,
         CPUSET_NOT_BOUND,
         -1,
         "preferred does not confine memory"},
        {{VN_MEM_INTERLEAVE, {{1u << 1}, 1}},
         true,
         true,
         CPUSET_NOT_BOUND,
         -1,
         "interleave of one node"},
        {{VN_MEM_NONE, {{0}, 1}}, true, true, CPUSET_NOT_BOUND, -1, "no binding"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int node = -1;
        rule_cpuset_verdict v =
            rule_cpuset_skip(&cases[i].b, cases[i].follow, cases[i].elsewhere, &node);
        CHECK(v == cases[i].want && node == cases[i].want_node, "cpuset skip: %s", cases[i].why);
    }
}

static void test_migrate_filter(void)
{
    static const struct {
        unsigned age;
        int preferred, last, target;
        bool shared;
        rule_migrate_verdict want;
        const char *why;
    } cases[] = {
        {0, -1, -1, 1, false, MIGRATE_NOW_EARLY, "new domain: memory follows at once"},
        {3, 0, -1, 1, false, MIGRATE_NOW_EARLY, "pass 3 of 4 is still early"},
        {4, 0, -1, 1, false, MIGRATE_WAIT, "old domain, first observation: wait"},
        {4, 0, 1, 1, false, MIGRATE_NOW_FILTER, "old domain, second agreeing observation: move"},
        {9, 0, 2, 1, false, MIGRATE_WAIT, "observations disagree: wait (no ping-pong)"},
        {9, -1, -1, 1, false, MIGRATE_NOW_EARLY, "no preferred node yet: still early"},
        {0, -1, -1, 1, true, MIGRATE_WAIT, "shared memory never takes the early path"},
        {0, -1, 1, 1, true, MIGRATE_NOW_FILTER, "shared memory moves once the filter agrees"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(rule_migrate_filter(cases[i].age, EARLY_MIGRATION_PASSES, cases[i].preferred,
                                  cases[i].last, cases[i].target, cases[i].shared) == cases[i].want,
              "migrate filter: %s", cases[i].why);
}

static void test_scan_budget(void)
{
    const uint64_t M = 1024 * 1024;

    CHECK(rule_scan_budget(4096 * M, 256 * M) == 8, "4 GiB region / 256 MiB: 1/2 * 16 = 8");
    CHECK(rule_scan_budget(24 * M, 256 * M) == 1, "24 MiB chunk (numa01_THREAD_ALLOC): 1");
    CHECK(rule_scan_budget(1024 * M, 0) == 2, "scan size 0 means the default 256 MiB: 2");
    CHECK(rule_scan_region(false, 0, 24 * M, 256 * M),
          "untouched region within budget is scanned (no starvation)");
    CHECK(!rule_scan_region(false, 1, 24 * M, 256 * M), "untouched region past budget is not");
    CHECK(rule_scan_region(true, 100, 24 * M, 256 * M), "a touched region is always scanned");
    CHECK(rule_scan_region(false, 7, 4096 * M, 256 * M) &&
              !rule_scan_region(false, 8, 4096 * M, 256 * M),
          "4 GiB region: scans 0..7 unconditional, the 9th is not");
}

/*
 * Seed 000's numa01_THREAD_ALLOC: the main thread allocates 8 chunks of 24 MiB, worker
 * threads each use one. A scanner that only scans what the scanning thread touched
 * would never look at chunks 1..7; with the per-region budget every chunk is scanned
 * within the first pass, and untouched chunks stop being scanned once their budget
 * is spent.
 */
static void test_scan_disjoint_regions(void)
{
    const uint64_t M = 1024 * 1024, chunk = 24 * M;
    uint64_t scans[8] = {0};
    unsigned never = 0;

    for (unsigned pass = 0; pass < 5; pass++)
        for (unsigned r = 0; r < 8; r++)
            if (rule_scan_region(r == 0, scans[r], chunk, SCAN_SIZE_DEFAULT))
                scans[r]++;
    for (unsigned r = 1; r < 8; r++)
        never += scans[r] == 0;
    CHECK(never == 0, "regions used only by other threads are all scanned (%u starved)", never);
    CHECK(scans[0] == 5 && scans[1] == rule_scan_budget(chunk, SCAN_SIZE_DEFAULT),
          "the touched region every pass (%llu), the others within budget (%llu)",
          (unsigned long long)scans[0], (unsigned long long)scans[1]);
}

static void test_lock_hold(void)
{
    rule_walk w;

    w = rule_lock_hold_walk(100);
    CHECK(w.window_pages == 100 && w.stride_pages == 1 && w.nr_windows == 1,
          "small region: one window of all pages");
    w = rule_lock_hold_walk(16384); /* 64 MiB of 4 KiB pages */
    CHECK(w.window_pages == LOCK_HOLD_MAX_PAGES && w.stride_pages == 1 && w.nr_windows == 4,
          "64 MiB: 4 windows of 4096 pages, every page (got stride %llu, %u windows)",
          (unsigned long long)w.stride_pages, w.nr_windows);
    w = rule_lock_hold_walk(65536); /* 256 MiB */
    CHECK(w.window_pages == LOCK_HOLD_MAX_PAGES && w.stride_pages == 4 && w.nr_windows == 4,
          "256 MiB: stride 4 in 4 windows of 4096 pages (got stride %llu, %u windows)",
          (unsigned long long)w.stride_pages, w.nr_windows);
    w = rule_lock_hold_walk(4ULL * 1024 * 1024); /* 16 GiB */
    CHECK(w.window_pages <= LOCK_HOLD_MAX_PAGES && w.nr_windows <= LOCK_HOLD_MAX_QUERIES_PER_CELL &&
              w.stride_pages == 256,
          "16 GiB: sampled with stride 256 in <= 4 windows (got stride %llu, %u windows)",
          (unsigned long long)w.stride_pages, w.nr_windows);
    w = rule_lock_hold_walk(16385); /* one page over: stride 2 */
    CHECK(w.stride_pages == 2 && w.nr_windows <= LOCK_HOLD_MAX_QUERIES_PER_CELL,
          "64 MiB + 1 page: stride 2 (got %llu)", (unsigned long long)w.stride_pages);
    w = rule_lock_hold_walk(0);
    CHECK(w.nr_windows == 0, "empty region: no walk");
}

static void test_names(void)
{
    bool ok = true;

    for (unsigned r = 0; r < RULE_MAX; r++)
        ok = ok && rule_name((vn_rule)r) && strcmp(rule_name((vn_rule)r), "unknown") != 0;
    CHECK(ok, "every rule has a name");
    ok = true;
    for (unsigned r = 0; r < REASON_MAX; r++)
        ok = ok && reason_name((vn_reason)r) && strcmp(reason_name((vn_reason)r), "unknown") != 0;
    CHECK(ok, "every reason has a name");
    CHECK(strcmp(rule_name(RULE_CPUSET_SKIP), "cpuset-skip") == 0, "cpuset-skip is named so");
    CHECK(strcmp(rule_name(RULE_MAX), "unknown") == 0, "out of range is 'unknown'");
}

int main(void)
{
    test_imb_numa_nr();
    test_adjust_imbalance();
    test_cpuset_skip();
    test_migrate_filter();
    test_scan_budget();
    test_scan_disjoint_regions();
    test_lock_hold();
    test_names();
    return tap_done();
}
