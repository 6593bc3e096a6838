/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 3 of the pipeline: decide. Pure: no I/O, no clock, no globals. Given
 * the host topology, a snapshot of the domains and the configuration, produce
 * a plan in which every action names the rule(s) behind it.
 */
#pragma once

#include "model.h"
#include "topology.h"

/* ---- the placement objective's weights (docs/ARCHITECTURE.md, "Objective") ---- */

/* Cost of having to move all of a cell's memory: twice that of moving all its vCPUs,
 * so when the gain is equal vCPUs move and memory stays. */
#define COST_MEM_MOVE  2.0
#define COST_VCPU_MOVE 1.0
/*
 * A band around a node's CPU count, in busy vCPUs: a cell leaves its home for capacity
 * when the home's load with it exceeds the CPUs, but enters another node only when that
 * node's load with it stays half a busy vCPU below them. Busy counts and the host's own
 * load move a little from pass to pass; without the band a cell on a node at its
 * capacity went away one pass and came back the next (seen in the proving ground).
 */
#define CAPACITY_ENTER_MARGIN 0.5
/* Cost per unit of (distance - local) / local between a cell and a cell it shares with. */
#define COST_SHARE 1.0
/* Sharing weight assumed between sibling cells of one domain when hints say nothing. */
#define SHARE_SIBLING_DEFAULT 0.3
/* Cost of placing a cell where the allowed imbalance (rule 1) is exceeded, at full excess. */
#define COST_IMBALANCE 4.0

/*
 * Decide where each cell of each opted-in domain (mode auto or advise) should
 * live and what to do to get it there. Domains with mode off never appear in
 * the plan. Returns 0 and fills *ret (release with plan_clear), or -ENOMEM.
 */
int decide(const topology *t, const snapshot *s, const vn_config *c, plan *ret);
