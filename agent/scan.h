/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scan: what one process's memory looks like, sampled in bounded windows.
 *
 * Per process the agent keeps its regions (VMAs), a cursor into them and, per
 * region, rule 4's unconditional-scan counter. A collection gives the process
 * a share of the host's scan budget (bytes of address space) and walks
 * windows of at most SCAN_SIZE_DEFAULT (256 MiB), sampling at most
 * LOCK_HOLD_MAX_PAGES pages per window (rule 5): one pagemap read in 2 MiB
 * chunks (the kernel takes the mmap_lock per chunk) and one move_pages(2)
 * status query (the kernel locks per 16 pages). Sampled pages give
 *   - resident pages per guest node (move_pages status, scaled by the stride),
 *   - guest-physical 2 MiB blocks (pagemap PFN * 4096: in a guest that is a
 *     guest-physical address), with per block present and accessed counts.
 *
 * "Accessed" depends on the heat method (scan_heat):
 *   SCAN_HEAT_IDLE      /sys/kernel/mm/page_idle/bitmap: a sampled PFN marked
 *                       idle at its previous scan and no longer idle was read
 *                       or written. No lock of the target is taken.
 *   SCAN_HEAT_SOFTDIRTY pagemap bit 55 after `echo 4 > /proc/PID/clear_refs`:
 *                       written since the last clear. The clear takes the
 *                       target's mmap write lock for a walk of all its page
 *                       tables and flushes its TLB, and each written page then
 *                       takes one extra minor fault, so it is bounded: only
 *                       processes up to SCAN_SOFTDIRTY_MAX_RSS, at most once
 *                       per SCAN_SOFTDIRTY_PERIOD_MS. Writes only.
 *   SCAN_HEAT_RESIDENCY no access bit at all: heat is the process's CPU share
 *                       times the density of its resident pages in the block.
 * Memory use is bounded: AG_MAX_REGIONS regions and SCAN_MAX_BINS blocks per
 * process.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs.h"

typedef enum scan_heat {
    SCAN_HEAT_RESIDENCY,
    SCAN_HEAT_SOFTDIRTY,
    SCAN_HEAT_IDLE,
    SCAN_HEAT_MAX,
} scan_heat;

/* Processes larger than this are never soft-dirty cleared (the clear walks all of them). */
#define SCAN_SOFTDIRTY_MAX_RSS (256ULL << 20)
/* One soft-dirty clear per process per this many milliseconds at most. */
#define SCAN_SOFTDIRTY_PERIOD_MS 4000
/* Guest-physical granularity of hot ranges. */
#define SCAN_BLOCK_SHIFT 21
/* Guest-physical blocks remembered per process. */
#define SCAN_MAX_BINS 1024
/* Windows per process per collection at most (many small VMAs). */
#define SCAN_MAX_WINDOWS 64
/* Smallest window worth a pagemap read and a move_pages call. */
#define SCAN_MIN_WINDOW (2ULL << 20)
/* An untouched region gets its unconditional scans again after this many sweeps. */
#define SCAN_RESET_SWEEPS 4

/* Memory access, a table so tests can register their own. */
typedef struct scan_ops {
    /* move_pages(pid, n, pages, NULL, status, 0): 0 or -errno. */
    int (*query_nodes)(pid_t pid, unsigned long n, void **pages, int *status);
    /* n pagemap entries from vaddr of ROOT/proc/PID/pagemap (fd from open_pagemap). */
    int (*read_pagemap)(int fd, uint64_t vaddr, size_t n, uint64_t *out);
    int (*open_pagemap)(const char *root, pid_t pid);
    /* echo 4 > ROOT/proc/PID/clear_refs */
    int (*clear_soft_dirty)(const char *root, pid_t pid);
    /* page_idle bitmap: read the idle bit of pfn, and mark pfn idle. */
    int (*idle_test)(uint64_t pfn, bool *ret_idle);
    int (*idle_mark)(uint64_t pfn);
} scan_ops;

extern const scan_ops scan_ops_linux;

typedef struct scan_region {
    uint64_t start, end;
    uint64_t cursor;       /* offset of the next window */
    uint64_t mark;         /* cursor at scan_proc_mark() */
    uint32_t uncond_scans; /* rule 4: scans while untouched in this reset period */
    bool touched;          /* its last window saw accessed (or resident) pages */
    bool scanned;          /* scanned at least once (idle and soft-dirty need a first pass) */
    uint64_t *node_pages;  /* estimate per node, nr_nodes entries */
} scan_region;

typedef struct scan_bin {
    uint64_t block;    /* guest-physical address >> SCAN_BLOCK_SHIFT, plus 1 (0: empty) */
    uint32_t present;  /* sampled resident pages, scaled by the stride */
    uint32_t tracked;  /* of which the access state is known */
    uint32_t accessed; /* of which accessed */
    uint32_t stamp;    /* collection that last saw it */
} scan_bin;

typedef struct scan_proc {
    pid_t pid;
    uint64_t starttime;
    unsigned nr_nodes;
    size_t nr_regions;
    scan_region *regions;
    size_t next_region;          /* round-robin over regions */
    size_t mark_region;          /* next_region at scan_proc_mark() */
    uint32_t sweeps;             /* complete passes over the regions */
    uint32_t collection;         /* collections of this process */
    uint64_t softdirty_clear_ms; /* last clear (0: never) */
    scan_bin bins[SCAN_MAX_BINS];
    uint32_t bins_dropped; /* blocks not remembered: table full */
    uint32_t regions_dropped;
} scan_proc;

typedef struct scan_ctx {
    const char *root;
    const scan_ops *ops;
    scan_heat heat;
    unsigned nr_nodes;
    uint64_t scan_size; /* window size, SCAN_SIZE_DEFAULT */
    uint64_t now_ms;    /* monotonic clock of this collection */
} scan_ctx;

typedef struct scan_stats {
    uint32_t windows;
    uint64_t bytes; /* address space covered */
    uint64_t samples;
    uint32_t softdirty_clears;
    uint32_t errors; /* failed pagemap or move_pages calls */
} scan_stats;

/* This kernel sets pagemap bit 55 (CONFIG_MEM_SOFT_DIRTY): checked on a page of our own. */
bool scan_softdirty_supported(void);

/* The best heat method this kernel offers below root (page_idle > soft-dirty > residency). */
scan_heat scan_detect_heat(const char *root);
const char *scan_heat_name(scan_heat h);

/* A fresh state for pid (calloc); NULL on ENOMEM. scan_proc_free accepts NULL. */
scan_proc *scan_proc_new(pid_t pid, uint64_t starttime, unsigned nr_nodes);
void scan_proc_free(scan_proc *sp);

/*
 * Replace the regions by the current maps, keeping the state of regions that
 * start at the same address. 0 or -errno (-ENOMEM: the old regions stay).
 */
int scan_proc_update_regions(scan_proc *sp, const procfs_region *maps, size_t n);

/*
 * One collection of sp: windows within `budget` bytes of address space
 * (at least one window), rule 4 deciding which regions, rule 5 bounding each
 * window. Adds to *stats. 0, or -ESRCH when the process is gone.
 */
int scan_proc_collect(scan_proc *sp, const scan_ctx *ctx, uint64_t budget, scan_stats *stats);

/* Resident pages per node, the sum of the regions' estimates. */
void scan_proc_node_pages(const scan_proc *sp, uint64_t *node_pages);

typedef struct scan_range {
    uint64_t gpa, length;
    uint32_t heat; /* 0..1000 */
} scan_range;

/*
 * Coalesce the remembered blocks into guest-physical ranges (adjacent blocks
 * merge), heat 0..1000 (cpu_share 0..1 is used for blocks without access
 * information), hottest first, at most max. Blocks not seen for `expire`
 * collections are forgotten first. Returns the number of ranges.
 */
size_t scan_proc_ranges(scan_proc *sp, double cpu_share, uint32_t expire, scan_range *out,
                        size_t max);

/*
 * A priming collection (collect.c): scan_proc_mark() before it, scan_proc_rewind() after. The
 * rewind puts the cursors back, so the next collection walks the same windows again, now with
 * their access state known (pages marked idle, soft-dirty cleared by the prime), and forgets
 * the blocks the prime saw (their heat was residency only: everything resident looked hot).
 */
void scan_proc_mark(scan_proc *sp);
void scan_proc_rewind(scan_proc *sp);
