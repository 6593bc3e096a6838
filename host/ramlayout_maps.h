/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Each guest cell's RAM found without asking QEMU (ramlayout_maps.c): from the QEMU process's
 * /proc/PID/maps, which the kernel writes, and the cells' sizes in the live XML, which libvirt
 * writes. What the sample stage uses for a domain it sends no monitor command (mode advise,
 * qmp = no, a snapshot of the live host), so that the domain is never tainted.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "domxml.h"
#include "state.h"

/* ram_range.gpa of a range found in maps: the guest-physical address is QEMU's to tell */
#define RAM_GPA_UNKNOWN UINT64_MAX

/*
 * Where each cell of x (one cell 0 of <memory> less its memory devices without guest NUMA) has
 * its boot RAM in process pid (maps under root), told apart by what maps shows:
 *  - a file backend (hugetlbfs, <source type='file'>): QEMU names the file after the backend,
 *    "ram-nodeN" ("pc.ram" without guest NUMA); all of the cell's mappings of that name,
 *    contiguous, are its RAM;
 *  - an anonymous or memfd backend has no name of its own: a read-write mapping of exactly
 *    the cell's size, followed at once by QEMU's guard page (an inaccessible mapping), is the
 *    cell's RAM when it is the only such mapping of that size and the cell the only one of
 *    that size. Equal cells (the usual symmetric guest) cannot be told apart: which range is
 *    which cell only QEMU's monitor knows.
 * Memory devices (pc-dimm, virtio-mem) are not looked for. Writes ret[] (cell, hva, size,
 * shared; gpa RAM_GPA_UNKNOWN; page_size 0, to be read) for each cell found in cell order, and
 * *ret_nr; why[] says which cells were not found and why ("" when all were).
 * 0, or -errno reading maps (-ESRCH: the process is gone).
 */
int ramlayout_maps(const char *root, pid_t pid, const domxml_info *x,
                   ram_range ret[SNAP_MAX_CELLS_PER_DOMAIN], unsigned *ret_nr, char *why,
                   size_t whylen);
