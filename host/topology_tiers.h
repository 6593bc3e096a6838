/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory tiers of a topology: which CPU-less nodes hold slower memory (CXL expanders, persistent
 * memory onlined as RAM) than a node with CPUs, and each such node's nearest one.
 */
#pragma once

#include "topology.h"

/* Each node's kernel memory tier from <root>/sys/devices/virtual/memory_tiering/memory_tierN/
 * nodelist (nodes no tier names keep -1; a kernel before 6.1 has none). */
void topo_read_tiers(const char *root, topology *t);

/* Whether node index n holds a lower memory tier than node index home: n has no CPUs and the
 * kernel's tiers say so; else hwloc's latency, else its bandwidth; else any CPU-less node does
 * (HBM, the faster kind, comes with HMAT attributes that say so). */
bool topo_is_lower_tier(const topology *t, unsigned n, unsigned home);

/* Sets each node's lower_tier: for a node with CPUs, the nearest (SLIT distance, then index)
 * node of a lower tier, else -1. */
void topo_link_tiers(topology *t);
