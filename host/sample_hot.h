/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where a cell's hot memory is (sample_hot.c): the pages of its guest-hint hot ranges on each
 * host node, counted by the same bounded walk as the cell's memory (rule 5: at most
 * LOCK_HOLD_MAX_QUERIES_PER_CELL status queries of a RAM range per pass, sampled with a stride
 * beyond). The decide stage needs it to keep a cell's hot memory on its home node and its cold
 * memory on a lower tier: how much of the hot set is home already, how much of the home is cold.
 */
#pragma once

#include <stdint.h>

#include "model.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"

/*
 * For each cell of sd with hot ranges (hints_apply), their pages on each node index into the
 * cell's hot_pages (allocated here, in the cell's page_size units): per RAM range of the cell
 * in sc, the hot ranges inside it, widened to whole pages of the range (a huge page touched by
 * a hot range is hot) and merged, in one walk. Cells without hot ranges keep hot_pages NULL.
 * *queries adds the move_pages(2) calls. 0 or -errno (-ESRCH: QEMU is gone).
 */
int sample_hot_pages(const numa_ops *ops, const topology *t, const dom_sample_cache *sc,
                     uint64_t seed, snap_domain *sd, unsigned *queries);
