/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where each guest cell's RAM is inside the QEMU process: ramlayout.c. Used by the sample
 * stage (sample.c); sample.h declares what the daemon calls (sample_ram_stale,
 * sample_locate_backends, sample_ram_backoff).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "state.h"
#include "virt.h"

/* Base page size: what anonymous and tmpfs backends are counted and moved in (THP included:
 * move_pages(2) takes base pages). */
#define RAM_BASE_PAGE_SIZE 4096u

/*
 * Where the RAM of each cell with vCPUs (cell_ids[0..nr_cells-1]), of every memory-only cell
 * and of every memory device is (st->ram[], cached for the QEMU run; found again when the
 * cells change or a memory device came or went). 1 when st->ram[] is valid, 0 when it could
 * not be found (said once, counted, retried with backoff), -ESRCH when the domain went away.
 */
int ramlayout_ensure(virt_dom *d, dom_state *st, const virt_dom_id *ident, const unsigned *cell_ids,
                     unsigned nr_cells, bool guest_numa, char *err, size_t errlen);

/* Page size of the backend mapped at hva in process pid (hugetlbfs: its pool's, and
 * *hugetlb set; anything else the base page size). 0 or -errno. */
int ramlayout_page_size(pid_t pid, uint64_t hva, uint64_t *ret, bool *hugetlb);
