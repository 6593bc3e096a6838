/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 2 of the pipeline: sample one running domain into a snap_domain
 * (model.h) for the decide stage. Reads libvirt (virt.h), QMP through libvirt
 * (cells, vCPU threads, guest RAM layout) for a domain vnumad acts on, the live XML and
 * /proc/PID/maps for one it only advises on, and the QEMU process's page
 * placement with windowed move_pages queries (numa_ops.h), never one long walk of
 * its address space (rules 4 and 5). QEMU's replies are parsed by qemu.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"
#include "virt.h"

/*
 * Whether a domain is sent monitor commands (which libvirt marks as a taint of the domain,
 * "custom monitor control commands"): only a domain vnumad acts on (mode auto), and only with
 * qmp = yes. A domain in advise mode, or one a snapshot of the live host reads, never is.
 */
static inline bool sample_monitor_ok(bool qmp, vn_mode mode)
{
    return qmp && mode == VN_MODE_AUTO;
}

/* The host the sample stage reads. */
typedef struct sample_host {
    const topology *t;
    const numa_ops *ops; /* page queries */
    const char *root;    /* where /proc and the cgroups are read: "/" (the fake host's tree) */
    /* false: no monitor command (sample_monitor_ok): the cells from the live XML, the RAM from
     * the process's maps (ramlayout_maps.h), the vCPUs from libvirt */
    bool use_qmp;
    /* a one-off read (vnumactl snapshot): what cannot be found goes in its reply, not the log */
    bool one_off;
    /* KVM's halt-polling time is asked for only when a vCPU ran above this fraction of a CPU
     * since the last sample (the decide stage's busy_threshold: below it a vCPU is idle with
     * or without its polling) or the last reading is SAMPLE_POLL_REFRESH_S old; 0: always */
    double poll_from;
} sample_host;

#define SAMPLE_POLL_REFRESH_S 60.0

/*
 * Count the resident pages per kernel node of [hva, hva+len) of process pid, with
 * windowed move_pages queries of at most LOCK_HOLD_MAX_PAGES pages and the stride of
 * rule_lock_hold_walk(). With a stride above 1, one page of each stride is sampled,
 * drawn by rule_lock_hold_page() from `seed` (the daemon changes it every pass), and
 * counts[node] = hits[node] * pages / samples.
 * counts[] is indexed by topology node index. *ret_queries gets the number of
 * move_pages calls made. Returns 0 or -errno (-ESRCH: the process is gone).
 */
int sample_count_pages(const numa_ops *ops, const topology *t, pid_t pid, uint64_t hva,
                       uint64_t len, uint64_t page_size, uint64_t seed,
                       uint64_t counts[VN_MAX_NODES], unsigned *ret_queries);

/* One stretch of a process's memory a count walks. */
typedef struct sample_piece {
    uint64_t hva, len;
} sample_piece;

/* sample_count_pages() over the pieces, in order, as one region of their pages put end to
 * end: the same bound on queries for the lot, however many pieces there are. */
int sample_count_pieces(const numa_ops *ops, const topology *t, pid_t pid,
                        const sample_piece *piece, unsigned nr_pieces, uint64_t page_size,
                        uint64_t seed, uint64_t counts[VN_MAX_NODES], unsigned *ret_queries);

/*
 * Memory placement changes slowly when nothing moves it, so a settled cell is not
 * counted every pass: after a count that differs from the previous one by at most
 * SAMPLE_SETTLED_PERMILLE of the cell on every node, the cell's next count waits twice
 * as many passes as the last wait, up to SAMPLE_MEM_MAX_WAIT passes (160 s at the
 * default 5 s interval); a different count, a move or pin by vnumad, a new QEMU or a
 * new RAM layout count again at the next pass, and so does a change of QEMU's resident
 * memory (VmRSS, read each pass with Mems_allowed) by more than SAMPLE_SETTLED_PERMILLE
 * of the guest's RAM since the last count: the guest touched or gave back memory, which
 * lands where the kernel puts it. Passes in between reuse the last counts.
 */
#define SAMPLE_SETTLED_PERMILLE 20
#define SAMPLE_MEM_MAX_WAIT     32

/* vnumad moved or pinned something of the domain: count its cells at the next pass. */
void sample_mem_changed(dom_sample_cache *sc);

/*
 * The domain's live XML (cached in st, owned by it): read again when sample_xml_stale() was
 * called since, or when it is SAMPLE_XML_REFRESH_S old. 0 or -errno with a reason in err.
 */
#define SAMPLE_XML_REFRESH_S 60.0
int sample_live_xml(virt_dom *d, dom_sample_cache *sc, double now_s, const char **ret, char *err,
                    size_t errlen);
/* An event (or vnumad's own change) says the live XML changed. */
void sample_xml_stale(dom_sample_cache *sc);

/*
 * Busy fractions need a window: two readings of each vCPU's CPU time. True when the next
 * sample_domain() would have none behind it (vnumad has not read this QEMU run's vCPUs yet;
 * a changed vCPU count shows only in that sample, which then says busy_unmeasured).
 */
bool sample_needs_window(const dom_sample_cache *sc);

/* The next sample of the domain sends QEMU monitor commands (it learns this QEMU run's vCPUs
 * or RAM layout, or asks KVM's halt polling): the pass checks first that libvirt runs no job
 * on it, since such a command would wait for the job. */
bool sample_uses_monitor(virt_dom *d, const dom_sample_cache *sc, bool use_qmp);

/*
 * Opens the window: reads every vCPU's CPU time (and KVM halt polling) as sample_domain()
 * would, so that a sample_domain() at least SAMPLE_MIN_WINDOW_S later has measured busy
 * fractions. With QMP it also finds the guest's RAM and counts where its pages are, while
 * the window runs: the sample_domain() that closes the window in this pass takes those
 * counts (sc->mem_fresh_pass) instead of counting again, so the first decision on a new
 * domain comes one count sooner. 0 or -errno with a reason in err (a failure to find the
 * memory is not one: sample_domain() finds out again and says it).
 */
#define SAMPLE_MIN_WINDOW_S 1.0
int sample_open_window(virt_dom *d, const sample_host *h, const sample_input *in,
                       dom_sample_cache *sc, dom_counters *count, double now_s, char *err,
                       size_t errlen);

/*
 * A copy of st to sample for a dry run (vnumactl advise): its own live XML and vCPU threads,
 * no handle, agent link, hints or records; sampling it leaves st as it was (the next pass's
 * busy window included). NULL when out of memory; sample_state_free() frees it.
 */
dom_state *sample_state_copy(const dom_state *st);
/* A sampling cache that has read nothing yet (a domain vnumad does not track: live_snapshot.c);
 * its xml and qv are freed by the caller. */
void sample_cache_init(dom_sample_cache *sc);
void sample_state_free(dom_state *copy);

/*
 * Sample a running domain into *out (cells with vCPUs, busy fractions, allowed CPUs,
 * current pins, memory binding, pages per node). Reads what `in` says of the domain,
 * uses and updates its cache sc (RAM layout, previous CPU times, vCPU threads, live XML) and
 * adds to its counters; nothing else. use_qmp=false: no monitor commands; the domain
 * is one cell and its memory is not sampled (out->cells[0].pages all zero).
 * Returns 0 or -errno with a reason in err.
 */
int sample_domain(virt_dom *d, const sample_host *h, const sample_input *in, dom_sample_cache *sc,
                  dom_counters *count, double now_s, snap_domain *out, char *err, size_t errlen);
