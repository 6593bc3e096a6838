/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The act stage's pins (act_pins.c): vCPUs through libvirt with their threads' affinity
 * checked, the emulator and IOThreads with the main node, a restrictive numatune's nodeset.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act.h"

/*
 * After libvirt pinned a thread, make sure the thread really has that affinity: on some
 * libvirt/cgroup v2 combinations a pin that widens the set is reported but the thread keeps
 * the narrower one. Thread tid is touched only while it is one of process pid's (the domain's
 * QEMU). Returns 1 when it had to set it itself, 0, or -errno (a thread that is gone, or no
 * longer QEMU's, counts as 0).
 */
int act_thread_affinity(pid_t pid, pid_t tid, const vn_cpuset *want);

/* The operator pins IOThread `id` (act_operator_pins), or its pins are not known yet. */
bool act_iothread_explicit(const act_target *tg, unsigned id);

/* Pin vCPU vcpu through libvirt, then check its thread's affinity (act_thread_affinity). */
int act_pin_vcpu(virt_dom *d, const act_target *tg, unsigned vcpu, const vn_cpuset *cpus);
/* The emulator thread (unless the operator pinned it) and the IOThreads (each unless the
 * operator pinned it) onto main_node's CPUs within the vCPUs' allowed CPUs. 0, or -errno with
 * *what naming the step that failed. */
int act_pin_emulator(virt_dom *d, const act_target *tg, const topology *t, const snap_domain *sd,
                     int main_node, act_result *res, const char **what);
/* Every cell has a restrictive numatune: memory is moved by changing its nodeset. */
bool act_all_restrictive(const snap_domain *sd);
/* The restrictive nodeset becomes the plan's target nodes (libvirt and cgroups move). */
int act_set_nodeset(virt_dom *d, const topology *t, const plan_domain *pd);
