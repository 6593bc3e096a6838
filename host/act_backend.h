/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared memory backends (act_backend.c): a memfd or tmpfs backend's preferred node, set on
 * the shared object, saved before the first change, put back at an opt-out.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act.h"

/*
 * Whether the shared backend of plan cell pc (snapshot cell sc) is to get its target as
 * preferred node now: a shared, non-hugetlbfs backend whose memory may move, without the
 * operator's numatune, not preferring that node yet. act_apply() sets it; the pass acts for it
 * even when the plan has no pin or move.
 */
bool act_policy_due(const topology *t, const act_target *tg, const snap_cell *sc,
                    const plan_cell *pc);

/* Give the shared backends vnumad set a policy on the policy they had before (saved in
 * orig.memfd_policy[]). Returns 0 or -errno. */
int act_unbind_memfd(const numa_ops *ops, const act_target *tg);

/* Each shared backend due (act_policy_due) gets its cell's target as preferred node; 0 or
 * -errno. */
int act_bind_backends(const act_target *tg, const topology *t, const snap_domain *sd,
                      const plan_domain *pd, const numa_ops *ops, act_result *res);
