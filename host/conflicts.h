/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Other NUMA balancers that fight vnumad over the same guests
 * (docs/operations.md): the kernel's automatic NUMA balancing moves the same
 * pages and threads, numad re-pins whole domains, and libvirt
 * placement='auto' hands a domain's placement to numad at start. vnumad warns
 * about them at start (and about a domain when it is first tracked); it does
 * not switch them off. This module does not log.
 */
#pragma once

#include <stdbool.h>

#define CONFLICT_NUMA_BALANCING (1u << 0) /* kernel.numa_balancing has bit 0 (NORMAL) set */
#define CONFLICT_NUMAD          (1u << 1) /* a process named numad runs */

/*
 * The host-wide conflicts, as CONFLICT_* bits, read below `root` ("" for the
 * live host, a fixture tree in tests): ROOT/proc/sys/kernel/numa_balancing and
 * the comm of every ROOT/proc/PID. Unreadable files count as "not found".
 */
unsigned conflicts_host(const char *root);

/* true when a domain's XML hands placement to numad: <vcpu placement='auto'> or
 * <numatune><memory placement='auto'>. A document that does not parse is false. */
bool conflicts_placement_auto(const char *domxml);
