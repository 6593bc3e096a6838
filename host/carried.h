/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a domain carries from the host it was balanced on before: the source vnumad's last
 * decision record, in vnumad's <state> in the live XML (docs/records.md), read on the way in
 * (the qemu hook's placement: hookxml.c) and on arrival (domains.c): how many vCPUs of each
 * cell were busy, and each cell's hottest guest-physical ranges as the source's guest agent
 * reported them. Tenant-reachable text: bounded and validated here, any field that does not
 * parse says nothing. Pure: no I/O.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

/* Hot ranges a record keeps per cell (the hottest; record.c writes at most this many). */
#define CARRIED_HOT_PER_CELL 4

typedef struct carried_range {
    uint64_t gpa;    /* guest-physical start: page aligned */
    uint64_t length; /* bytes: > 0, a page multiple, ends below the guest-physical limit */
    double heat;     /* 0..1 */
    bool shared;     /* touched by processes running in several cells */
} carried_range;

typedef struct carried_cell {
    int busy_vcpus; /* -1: the record says nothing */
    unsigned nr_hot;
    carried_range hot[CARRIED_HOT_PER_CELL];
} carried_cell;

/* Indexed by guest cell id. */
typedef struct carried {
    bool busy_known; /* some cell's busy_vcpus */
    unsigned nr_hot; /* hot ranges over all cells */
    carried_cell cells[SNAP_MAX_CELLS_PER_DOMAIN];
} carried_info;

/*
 * The record's JSON text (the content of <state>'s <decision>) into *ret: each cell's
 * busy_vcpus and hot ranges. A record that does not parse, a cell id out of range or twice,
 * a range not page aligned, empty, past the guest-physical limit or with a heat outside 0..1
 * says nothing (of that cell, of that range); the first CARRIED_HOT_PER_CELL valid ranges of
 * a cell are kept. Never fails: *ret says what could be read.
 */
void carried_parse(const char *json, carried_info *ret);
