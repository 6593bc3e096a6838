/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the agent's memory scan (agent/scan.c): rule 4's unconditional
 * scans and the budget, rule 5's window bounds, block coalescing and heat, with
 * a table of fake operations; then the Linux operations on this test process
 * itself (move_pages status, pagemap PFNs, soft-dirty).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procfs.h"
#include "scan-fixture.h"
#include "scan.h"
#include "scanrule.h"
#include "tap.h"

/* ---- fake operations: every page on node `fake_node`, PFN = vaddr / 4096 + fake_pfn_base ---- */

static int fake_node = 1;
static uint64_t fake_pfn_base = 0x10000; /* 256 MiB guest-physical */
static uint64_t fake_flags = 1ULL << 63;

static int node_all(pid_t pid)
{
    (void)pid;
    return fake_node;
}

static uint64_t pagemap_entry(pid_t pid, uint64_t vaddr)
{
    (void)pid;
    return fake_flags | ((vaddr / 4096) % 0x8000 + fake_pfn_base);
}

static bool odd_idle(uint64_t pfn)
{
    return pfn % 2; /* odd PFNs idle: half the pages accessed */
}

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static void test_rule4_budget(void)
{
    /* one big region (2 GiB) and 20 small ones (4 MiB): with 256 MiB per collection and no
     * region ever "touched" (heat tracked, nothing accessed), every small region is still
     * scanned (its unconditional scan), and so is every window of the big one */
    procfs_region maps[21];
    scan_proc *sp = scan_proc_new(1, 1, 2);
    scan_ctx ctx = {.root = "", .ops = &fake_scan_ops, .heat = SCAN_HEAT_SOFTDIRTY, .nr_nodes = 2};
    scan_stats st = {0};
    bool ok_budget = true;
    unsigned collections = 0;

    maps[0] = (procfs_region){.start = 1 * GiB, .end = 3 * GiB, .readable = true, .writable = true};
    for (int i = 1; i < 21; i++)
        maps[i] = (procfs_region){.start = 4 * GiB + (uint64_t)i * 16 * MiB,
                                  .end = 4 * GiB + (uint64_t)i * 16 * MiB + 4 * MiB,
                                  .readable = true,
                                  .writable = true};
    fake_flags = 1ULL << 63; /* present, never soft-dirty */
    CHECK(sp && scan_proc_update_regions(sp, maps, 21) == 0 && sp->nr_regions == 21,
          "21 regions tracked");
    sp->softdirty_clear_ms = 1; /* heat is tracked: "touched" means accessed */
    fake_scan.max_query = 0;
    for (; collections < 12; collections++) {
        scan_stats one = {0};
        if (scan_proc_collect(sp, &ctx, 256 * MiB, &one) < 0)
            ok_budget = false;
        if (one.bytes > 256 * MiB + SCAN_SIZE_DEFAULT || one.windows > SCAN_MAX_WINDOWS)
            ok_budget = false;
        st.windows += one.windows;
        st.bytes += one.bytes;
    }
    CHECK(ok_budget, "every collection stays within its budget and SCAN_MAX_WINDOWS windows");
    {
        bool all = true;
        for (size_t i = 0; i < sp->nr_regions; i++)
            all &= sp->regions[i].scanned;
        CHECK(all, "rule 4: every region, touched or not, was scanned within 12 collections");
    }
    CHECK(fake_scan.max_query <= LOCK_HOLD_MAX_PAGES && fake_scan.max_query > 0,
          "rule 5: no move_pages call covers more than %d pages (max %lu)", LOCK_HOLD_MAX_PAGES,
          fake_scan.max_query);
    {
        uint64_t np[2];
        scan_proc_node_pages(sp, np);
        CHECK(np[0] == 0 && np[1] > 0 && np[1] <= (2 * GiB + 20 * 4 * MiB) / 4096,
              "node pages: all on node 1, at most the regions' pages (%lu)", (unsigned long)np[1]);
    }
    scan_proc_free(sp);
}

static void test_rule4_untouched_skipped(void)
{
    /* after their unconditional scans, untouched regions give way to touched ones */
    procfs_region maps[2] = {
        {.start = 1 * GiB, .end = 1 * GiB + 64 * MiB, .readable = true, .writable = true},
        {.start = 2 * GiB, .end = 2 * GiB + 64 * MiB, .readable = true, .writable = true},
    };
    scan_proc *sp = scan_proc_new(1, 1, 2);
    scan_ctx ctx = {.root = "", .ops = &fake_scan_ops, .heat = SCAN_HEAT_SOFTDIRTY, .nr_nodes = 2};
    scan_stats st = {0};

    (void)scan_proc_update_regions(sp, maps, 2);
    sp->softdirty_clear_ms = 1;
    fake_flags = 1ULL << 63;
    (void)scan_proc_collect(sp, &ctx, 128 * MiB, &st);
    CHECK(sp->regions[0].scanned && sp->regions[1].scanned && !sp->regions[0].touched,
          "first collection scans both regions (unconditional scans)");
    CHECK(rule_scan_budget(64 * MiB, SCAN_SIZE_DEFAULT) == 1 && sp->regions[0].uncond_scans == 1,
          "a 64 MiB region has one unconditional scan, and used it");
    sp->regions[1].touched = true;
    memset(&st, 0, sizeof(st));
    (void)scan_proc_collect(sp, &ctx, 128 * MiB, &st);
    CHECK(st.windows == 1 && sp->regions[0].uncond_scans == 1,
          "second collection: only the touched region is scanned");
    scan_proc_free(sp);
}

static void test_ranges(void)
{
    /* 8 MiB region, contiguous PFNs from 256 MiB: one 8 MiB range at 256 MiB */
    procfs_region map = {
        .start = 1 * GiB, .end = 1 * GiB + 8 * MiB, .readable = true, .writable = true};
    scan_proc *sp = scan_proc_new(1, 1, 2);
    scan_ctx ctx = {.root = "", .ops = &fake_scan_ops, .heat = SCAN_HEAT_RESIDENCY, .nr_nodes = 2};
    scan_stats st = {0};
    scan_range r[8];
    size_t n;

    fake_flags = 1ULL << 63;
    fake_pfn_base = 0x10000 - (1 * GiB / 4096) % 0x8000;
    (void)scan_proc_update_regions(sp, &map, 1);
    (void)scan_proc_collect(sp, &ctx, 256 * MiB, &st);
    n = scan_proc_ranges(sp, 0.5, 4, r, 8);
    CHECK(n == 1 && r[0].gpa == 256 * MiB && r[0].length == 8 * MiB,
          "residency: adjacent blocks coalesce into one 8 MiB range at 256 MiB (n=%zu)", n);
    CHECK(n == 1 && r[0].heat == 500, "residency heat: CPU share 0.5 x full density = 500 (%u)",
          n ? r[0].heat : 0);
    n = scan_proc_ranges(sp, 0.5, 4, r, 0);
    CHECK(n == 0, "max 0 ranges: none");
    /* expiry: blocks not seen for `expire` collections are forgotten */
    sp->collection += 5;
    n = scan_proc_ranges(sp, 0.5, 4, r, 8);
    CHECK(n == 0, "blocks unseen for 5 collections expire with expire=4");
    scan_proc_free(sp);

    /* page-idle (fake: odd PFNs idle): second scan is tracked, heat about 500 */
    sp = scan_proc_new(1, 1, 2);
    ctx.heat = SCAN_HEAT_IDLE;
    (void)scan_proc_update_regions(sp, &map, 1);
    (void)scan_proc_collect(sp, &ctx, 256 * MiB, &st);
    n = scan_proc_ranges(sp, 0.0, 4, r, 8);
    CHECK(n == 1 && r[0].heat == 0, "page-idle: first scan is not tracked (no idle marks yet)");
    (void)scan_proc_collect(sp, &ctx, 256 * MiB, &st);
    n = scan_proc_ranges(sp, 0.0, 4, r, 8);
    CHECK(n == 1 && r[0].heat == 500, "page-idle: half the sampled PFNs accessed: heat 500 (%u)",
          n ? r[0].heat : 0);
    scan_proc_free(sp);

    /* bounded: 40 separate blocks (every other 2 MiB), at most 5 reported, hottest first */
    sp = scan_proc_new(1, 1, 2);
    for (int i = 0; i < 40; i++) {
        scan_bin *b = &sp->bins[i];
        b->block = (uint64_t)(2 * i) + 1;
        b->present = b->tracked = 512;
        b->accessed = (uint32_t)(i * 10);
        b->stamp = 0;
    }
    n = scan_proc_ranges(sp, 0.0, 4, r, 5);
    CHECK(n == 5 && r[0].heat >= r[1].heat && r[1].heat >= r[4].heat && r[0].gpa == 78ULL << 21,
          "ranges bounded to 5, hottest first");
    scan_proc_free(sp);
}

/* ---- the Linux operations on this process ---- */

static void test_self(void)
{
    size_t len = 16 * MiB;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    procfs_region map = {.start = (uint64_t)(uintptr_t)p,
                         .end = (uint64_t)(uintptr_t)p + len,
                         .readable = true,
                         .writable = true};
    scan_ctx ctx = {.root = "", .ops = &scan_ops_linux, .heat = SCAN_HEAT_SOFTDIRTY};
    unsigned nodes = 1;
    scan_proc *sp;
    scan_stats st = {0};
    scan_range r[16];
    uint64_t np[AG_MAX_NODES], total = 0;
    size_t n;

    if (p == MAP_FAILED) {
        CHECK(0, "mmap 16 MiB");
        return;
    }
    (void)procfs_node_count("", &nodes);
    ctx.nr_nodes = nodes;
    memset(p, 1, len);
    sp = scan_proc_new(getpid(), 1, nodes);
    (void)scan_proc_update_regions(sp, &map, 1);
    CHECK(scan_proc_collect(sp, &ctx, 64 * MiB, &st) == 0 && st.errors == 0,
          "self: one collection with move_pages and pagemap, no errors");
    scan_proc_node_pages(sp, np);
    for (unsigned k = 0; k < nodes; k++)
        total += np[k];
    CHECK(total == len / 4096, "self: node pages add up to the 4096 touched pages (%lu)",
          (unsigned long)total);
    if (geteuid() != 0) {
        printf("# not root: pagemap PFNs read as 0, no ranges and no soft-dirty checks\n");
    } else {
        n = scan_proc_ranges(sp, 1.0, 4, r, 16);
        CHECK(n > 0, "self: pagemap PFNs give guest-physical ranges (%zu)", n);
        /* soft-dirty: clear, write the first half, scan: the hot blocks are the first half's */
        if (!scan_softdirty_supported()) {
            printf("# this kernel has no CONFIG_MEM_SOFT_DIRTY: soft-dirty checks not run "
                   "(the guest's Debian 6.1 has it; tests/e2e/agent-guest.sh covers it)\n");
            goto out;
        }
        CHECK(scan_ops_linux.clear_soft_dirty("", getpid()) == 0, "self: clear_refs 4");
        sp->softdirty_clear_ms = 1;
        memset(p, 2, len / 2);
        memset(&st, 0, sizeof(st));
        (void)scan_proc_collect(sp, &ctx, 64 * MiB, &st);
        {
            uint64_t acc = 0, tr = 0;
            for (size_t i = 0; i < SCAN_MAX_BINS; i++) {
                acc += sp->bins[i].accessed;
                tr += sp->bins[i].tracked;
            }
            CHECK(tr == len / 4096 && acc >= len / 4096 / 2 - 16 && acc <= len / 4096 / 2 + 16,
                  "self: soft-dirty sees the written half (%lu of %lu pages)", (unsigned long)acc,
                  (unsigned long)tr);
        }
    }
out:
    CHECK(scan_proc_update_regions(sp, NULL, 0) == 0 && sp->nr_regions == 0,
          "regions can all go away");
    scan_proc_free(sp);
    munmap(p, len);
    CHECK(scan_detect_heat("") != SCAN_HEAT_MAX, "heat method detected: %s",
          scan_heat_name(scan_detect_heat("")));
}

int main(void)
{
    fake_scan.node = node_all;
    fake_scan.pagemap = pagemap_entry;
    fake_scan.idle = odd_idle;
    test_rule4_budget();
    test_rule4_untouched_skipped();
    test_ranges();
    test_self();
    return tap_done();
}
