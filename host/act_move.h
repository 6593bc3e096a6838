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
 * run (st->mover.mem_refused; a cell all of whose ranges are is sampled as MEM_PIN_REFUSED): never
 * tried again. Sets cr->refused then. A pass that moved some pages changes nothing.
 */
void act_mem_refused(dom_state *st, unsigned ri, uint64_t moved, uint64_t unmovable,
                     act_cell_result *cr);

/* The guest RAM range of cell `cell`, or NULL. */
const ram_range *act_find_ram(const dom_state *st, unsigned cell);
/* The plan's page moves, one mover per cell (up to ACT_MAX_MOVERS threads); 0 or -errno. */
int act_move_cells(dom_state *st, const topology *t, const plan_domain *pd, const numa_ops *ops,
                   act_budget *budget, const vn_config *cfg, act_result *res);
