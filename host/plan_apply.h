/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A plan carried out on a snapshot, on paper (plan_apply.c): the advisor's "after" view. */
#pragma once

#include "model.h"
#include "topology.h"

/*
 * The state that carrying out plan p on snapshot s would produce, as a new
 * snapshot in *ret: pins applied, planned bytes moved (whole pages), free
 * memory adjusted, each domain one pass older, rule 3's candidates fed back.
 * Used by the advisor's "after" view and by the property tests. Returns 0 or
 * -ENOMEM.
 */
int plan_apply(const topology *t, const snapshot *s, const plan *p, snapshot *ret);
