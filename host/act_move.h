/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest memory moves (act_move.c): the host-wide move budget, ranges walked in windows of
 * pages within the budget, the target's room and the pass's deadline, a mover per cell.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act.h"

/* Guest pages are 4 KiB unless the backend says otherwise (sample.c: page_size). */
#define ACT_PAGE_SIZE 4096ULL

void act_budget_init(act_budget *b, unsigned rate_mib, double interval_s, double now_s);
/* Add what accrued since the last call. */
void act_budget_refill(act_budget *b, double now_s);

/*
 * After a pass tried to move range ram[ri] of the domain (`moved` pages moved, `unmovable`
 * refused): when none moved and some would not (a long-term pin the XML does not show:
 * io_uring registered buffers, RDMA), the range is taken as pinned for the rest of this QEMU
 * run (mover.mem_refused; a cell all of whose ranges are is sampled as MEM_PIN_REFUSED): never
 * tried again. Sets cr->refused then. A pass that moved some pages changes nothing.
 */
void act_mem_refused(const act_target *tg, unsigned ri, uint64_t moved, uint64_t unmovable,
                     act_cell_result *cr);

/* The boot RAM range of cell `cell` in the sample, or NULL. */
const ram_range *act_find_ram(const dom_sample_cache *s, unsigned cell);

/* The sample found a new RAM layout (dom_sample_cache.ram_gen): the mover's resume points and
 * refused ranges are of the old one and are forgotten. */
void act_mover_sync(dom_mover *m, const dom_sample_cache *s);

/* One stretch of guest memory a cell's plan moves: what the plan asks of one RAM range. */
typedef struct move_span {
    unsigned ri;   /* the range's index in the sample's ram[] (resume point, refused) */
    unsigned move; /* the plan_move it serves (plan_cell.moves[]) */
    bool hot;      /* a hot range: pages from every other node; else a bulk move */
    uint64_t hva, len;
    int from, to;   /* topology node indexes (from: -1 for a hot range) */
    uint64_t bytes; /* hot range: its length; bulk: the move's bytes over all the cell's ranges */
    uint64_t page_size;
    bool shared, hugetlb;
} move_span;

/*
 * What the plan of one cell moves, as spans of the sample's RAM ranges, in the order they
 * are walked: the cell's boot RAM, then its memory devices, each with its hot ranges before
 * its bulk moves in plan order; ranges whose pages would not move (`refused`, bit per ram[]
 * index) are left out. Fills out[0..max-1]; returns how many there are (max is enough for
 * nr_ram * pc->nr_moves). Pure: no call, no state.
 */
unsigned act_move_plan(const plan_cell *pc, const ram_range *ram, unsigned nr_ram, uint64_t refused,
                       move_span *out, unsigned max);

/* One window of a span as the mover works it (act_move_window). */
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
} move_window_result;

/*
 * One window of span w starting at page *pos (wrapping at its end): one status query of up to
 * w->batch pages (rule 5), then one move of those found on w->from (or not on w->to for a hot
 * range), at most max_bytes of them and what the target has room for (checked now, before the
 * move). *pos is advanced past the pages it is done with: a window cut short by max_bytes or
 * the target's room starts there again. Fills *res; 0 or -errno (-ESRCH: the process is gone).
 */
int act_move_window(const numa_ops *ops, const move_window *w, uint64_t *pos, uint64_t max_bytes,
                    move_window_result *res);

/* The plan's page moves, one mover per cell (up to ACT_MAX_MOVERS threads); 0 or -errno. */
int act_move_cells(const act_target *tg, const topology *t, const plan_domain *pd,
                   const numa_ops *ops, act_budget *budget, const vn_config *cfg, act_result *res);
