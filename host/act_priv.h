/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The act stage's files and what they give each other (act.c calls them in order; none calls
 * act.c). Not for the rest of the daemon: act.h is.
 */
#pragma once

#include "act.h"

/* Guest pages are 4 KiB unless the backend says otherwise (sample.c: page_size). */
#define ACT_PAGE_SIZE 4096ULL

/* ---- act_pins.c ---- */

/* Pin vCPU vcpu through libvirt, then check its thread's affinity (act_thread_affinity). */
int act_pin_vcpu(virt_dom *d, dom_state *st, unsigned vcpu, const vn_cpuset *cpus);
/* The emulator thread (unless the operator pinned it) and the IOThreads (each unless the
 * operator pinned it) onto main_node's CPUs within the vCPUs' allowed CPUs. 0, or -errno with
 * *what naming the step that failed. */
int act_pin_emulator(virt_dom *d, dom_state *st, const topology *t, const snap_domain *sd,
                     int main_node, act_result *res, const char **what);
/* Every cell has a restrictive numatune: memory is moved by changing its nodeset. */
bool act_all_restrictive(const snap_domain *sd);
/* The restrictive nodeset becomes the plan's target nodes (libvirt and cgroups move). */
int act_set_nodeset(virt_dom *d, const topology *t, const plan_domain *pd);

/* ---- act_move.c ---- */

/* The guest RAM range of cell `cell`, or NULL. */
const ram_range *act_find_ram(const dom_state *st, unsigned cell);
/* The plan's page moves, one mover per cell (up to ACT_MAX_MOVERS threads); 0 or -errno. */
int act_move_cells(dom_state *st, const topology *t, const plan_domain *pd, const numa_ops *ops,
                   act_budget *budget, const vn_config *cfg, act_result *res);

/* ---- act_backend.c ---- */

/* Each shared backend due (act_policy_due) gets its cell's target as preferred node; 0 or
 * -errno. */
int act_bind_backends(dom_state *st, const topology *t, const snap_domain *sd,
                      const plan_domain *pd, const numa_ops *ops, act_result *res);
