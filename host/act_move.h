/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest memory moves (act_move.c): what a plan moves as spans of RAM ranges, the orders the act
 * stage gives the mover (mover.h), and one window of a span, which the mover's threads work.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act.h"
#include "move_window.h"

/* The boot RAM range of cell `cell` in the sample, or NULL. */
const ram_range *act_find_ram(const dom_sample_cache *s, unsigned cell);

/*
 * What the plan of one cell moves, as spans of the sample's RAM ranges, in the order they
 * are walked: the cell's boot RAM, then its memory devices, each with its moves in plan order;
 * a cold bulk move (plan_move.cold) is a span for each stretch of the range between the plan's
 * hot ranges. Ranges whose pages would not move (`refused`, bit per ram[] index) are left out.
 * Fills out[0..max-1] and stops there; returns how many there are. Pure: no call, no state.
 */
unsigned act_move_plan(const plan_cell *pc, const ram_range *ram, unsigned nr_ram, uint64_t refused,
                       move_span *out, unsigned max);

/*
 * The memory moves of cell k of a plan, given to the mover (tg->movers): the cell's spans
 * (act_move_plan, without the ranges the mover found refused) as its order, which replaces
 * what was queued for the cell; a cell without moves drops its queued order. act_apply gives
 * it right after the cell's own vCPUs are pinned. Returns at once (res->cells[k].bytes_ordered
 * says what was ordered); 0 or -ENOMEM.
 */
int act_order_cell(const act_target *tg, const topology *t, const plan_domain *pd, unsigned k,
                   const vn_config *cfg, act_result *res);

/*
 * A pass that decided the domain's cells again without acting on them: what the mover still
 * has queued for a cell stays only while it goes where the plan now puts the cell (its target
 * node and the target's lower tier, or a wide cell's nodes); a cell with no target keeps its
 * order.
 */
void act_keep_targets(const act_target *tg, const plan_domain *pd);
