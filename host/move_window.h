/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One window of guest pages moved (move_window.c): what the mover's threads do each time they
 * take a cell's order, and the only place vnumad moves guest memory. Rule 5: no call covers
 * more than LOCK_HOLD_MAX_PAGES pages (a page of 1 GiB or more is a window of its own), so no
 * vCPU of the guest stalls on its mmap_lock for longer than one window.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "numa_ops.h"

/* Guest pages are 4 KiB unless the backend says otherwise (sample.c: page_size). */
#define ACT_PAGE_SIZE 4096ULL
/* A move_pages(2) status entry the kernel did not write. */
#define ACT_STATUS_UNSET INT32_MIN
/* Huge pages this large move one per move_pages(2) call: the guest's vCPUs that touch it
 * wait while it copies (about 0.1 s for 1 GiB), so each call stalls them for one page. */
#define ACT_ONE_PAGE_PER_CALL (1ULL << 30)

/* One stretch of guest memory a cell's plan moves: what the plan asks of one RAM range. */
typedef struct move_span {
    unsigned ri;   /* the range's index in the sample's ram[] (resume point, refused) */
    unsigned move; /* the plan_move it serves (plan_cell.moves[]) */
    bool hot;      /* a hot range: pages from every other node; else a bulk move */
    bool cold;     /* a piece of a bulk move of the cell's cold memory: the range between two
                    * hot ranges (walked from its own start, not the range's resume point) */
    uint64_t hva, len;
    int from, to;     /* topology node indexes (from: -1 for a hot range) */
    uint64_t bytes;   /* hot range: its length; bulk: the move's bytes over all the cell's ranges */
    uint64_t reserve; /* bytes of MemFree the target (to) keeps */
    uint64_t page_size;
    bool shared, hugetlb;
} move_span;

/* One window of a span as the mover works it (move_window_run). */
typedef struct move_window {
    pid_t pid;
    uint64_t hva, len;  /* the span */
    uint64_t page_size; /* 0: ACT_PAGE_SIZE */
    int from;           /* kernel node the pages are taken from; -1: any but `to` (hot range) */
    int to;             /* kernel node */
    bool shared;        /* MPOL_MF_MOVE_ALL */
    bool hugetlb;       /* room: the target's free huge pages of page_size, not MemFree */
    uint32_t batch;     /* pages a window covers at most (one for pages of 1 GiB or more) */
    uint64_t reserve;   /* bytes of MemFree the target keeps (not for hugetlb) */
} move_window;

typedef struct move_window_result {
    uint64_t pages_moved;
    uint64_t pages_unmovable; /* the kernel would not move them (pinned, shared) */
    uint64_t queries;         /* move_pages(2) status queries made */
    uint64_t pages_walked;    /* pages of the span the window covered */
    bool wanted_more;         /* pages to move were found beyond max_bytes */
    bool reserve_hit;         /* the target had no room for all it found */
    uint64_t target_free;     /* ... and its free bytes then (MemFree, or free huge pages') */
} move_window_result;

/*
 * One window of span w starting at page *pos (wrapping at its end): one status query of up to
 * w->batch pages (rule 5), then one move of those found on w->from (or not on w->to for a hot
 * range), at most max_bytes of them and what the target has room for (checked now, before the
 * move). *pos is advanced past the pages it is done with: a window cut short by max_bytes or
 * the target's room starts there again. Fills *res; 0 or -errno (-ESRCH: the process is gone).
 */
int move_window_run(const numa_ops *ops, const move_window *w, uint64_t *pos, uint64_t max_bytes,
                    move_window_result *res);
