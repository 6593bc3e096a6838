/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where each guest cell's RAM is inside the QEMU process: ramlayout.c. Used by the sample
 * stage (sample.c), and what the daemon asks of it (ramlayout_stale, ramlayout_locate_backends).
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
 * and of every memory device is (sc->ram[], cached for the QEMU run; found again when the
 * cells change or a memory device came or went). 1 when sc->ram[] is valid, 0 when it could
 * not be found (said once, counted, retried with backoff), -ESRCH when the domain went away.
 */
int ramlayout_ensure(virt_dom *d, const sample_input *in, dom_sample_cache *sc, dom_counters *count,
                     const virt_dom_id *ident, const unsigned *cell_ids, unsigned nr_cells,
                     bool guest_numa, char *err, size_t errlen);

/*
 * As ramlayout_ensure, for a domain that is sent no monitor command: each cell's boot RAM from
 * the QEMU process's maps (sc->pid, known) and the live XML x (ramlayout_maps.h), looked at
 * again with each new read of the XML. Cells that cannot be told apart have no range; why is
 * kept in sc->ram_error (vnumactl status) and, with `say`, logged when it changes. 1 when some
 * cell's RAM was found, 0 none, -ESRCH when the process is gone.
 */
int ramlayout_ensure_maps(const char *root, dom_sample_cache *sc, const virt_dom_id *ident,
                          const domxml_info *x, bool say);

/* Page size of the backend mapped at hva in process pid (its maps under root; hugetlbfs: its
 * pool's, and *hugetlb set; anything else the base page size), and *granule, the bytes the
 * kernel migrates at once there: a transparent huge page for anonymous memory on a host with
 * THP (ramlayout_thp_size), else the page size. 0 or -errno. */
int ramlayout_page_size(const char *root, pid_t pid, uint64_t hva, uint64_t *ret, bool *hugetlb,
                        uint64_t *granule);
/* The host's transparent huge page size under root, 0 when THP is off ("[never]") or it
 * cannot be read. */
uint64_t ramlayout_thp_size(const char *root);

/* Passes at most between two tries to find a domain's guest memory after a failure. */
#define RAMLAYOUT_RETRY_MAX 32

/*
 * Passes to wait before the next try to find a domain's guest memory after `failures`
 * earlier failed tries of this QEMU run: 1, 2, 4 ... RAMLAYOUT_RETRY_MAX. Meanwhile its
 * cells have no page counts (decide: no-memory-info) and its vCPUs are still placed.
 */
unsigned ramlayout_backoff(unsigned failures);

/* Find the backends of the cells whose shared policy vnumad changed (memfd_cells: the originals')
 * and the QEMU pid, when no sample of this vnumad has yet (it restarted, and the domain opts
 * out before its first pass): the policies can then be put back. Nothing is asked when a
 * sample found them already. root: where /proc is ("/"). 0 or -errno. */
int ramlayout_locate_backends(const char *root, virt_dom *d, const sample_input *in,
                              dom_sample_cache *sc, dom_counters *count, uint64_t memfd_cells);

/* The domain's RAM layout changed (a memory device plugged or unplugged): find it again
 * at the next sample (query-memdev, info mtree, query-memory-devices). */
void ramlayout_stale(dom_sample_cache *sc);
