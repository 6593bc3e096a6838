/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decide stage for a domain that does not run here yet (decide_incoming.c): the qemu
 * hook's placement of an incoming live migration (place.c). Pure, as decide.h.
 */
#pragma once

#include <stdint.h>

#include "model.h"
#include "topology.h"

/*
 * Where the cells of a domain that does not run here yet would live (an incoming live
 * migration: the qemu hook, docs/fleet.md). s holds this host's free memory (free_known,
 * free_bytes, free_huge) and every busy CPU per node now, vnumad's own domains included
 * (other_busy); its domains are not read. d is the incoming domain: its cells' vCPUs with the
 * CPUs they may use (allowed) and how busy they were (1 when nobody knows), pinned nowhere
 * yet; cell_bytes[k] is the memory of d->cells[k]. Each cell gets the node the placement
 * objective of a pass picks for it (cost, CPU capacity, room above the reserve, rule 1, the
 * cells it shares with), pins onto that node's CPUs, and one move of cell_bytes[k] to it (its
 * memory allocated there as it arrives) when the node has that room; without room the move
 * is left out (reason no-room). Room and load taken count for the next cell. Returns 0 and
 * fills *ret (release with plan_domain_clear), or -ENOMEM.
 */
int decide_incoming(const topology *t, const snapshot *s, const vn_config *c, const snap_domain *d,
                    const uint64_t cell_bytes[], plan_domain *ret);
