/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest-physical intervals (gparange.c): the hot ranges of a cell, clipped to one RAM range,
 * sorted and merged, for what walks them (act_move.c cuts cold spans between them,
 * sample_hot.c counts their pages). Pure.
 */
#pragma once

#include <stdint.h>

/* [start, end) */
typedef struct gpa_iv {
    uint64_t start, end;
} gpa_iv;

/* Sort iv[0..n-1] by start and merge the ones that overlap or touch, in place; returns how
 * many are left. */
unsigned gpa_merge(gpa_iv *iv, unsigned n);
