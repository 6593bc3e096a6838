/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 4 of the pipeline: act. The only stage that changes the world: vCPU
 * and emulator pins through libvirt (virt.h), guest memory through move_pages
 * (numa_ops.h), within a host-wide migration rate limit and never into a node
 * below its free-memory reserve. Errors are sorted: transient ones are retried
 * next pass, permanent ones stop vnumad touching the domain.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "domxml.h"
#include "model.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"
#include "virt.h"

/* Host-wide token bucket for memory migration (MiB/s). */
typedef struct act_budget {
    double rate_bytes_s;
    double tokens;     /* bytes that may move now */
    double max_tokens; /* burst: one interval's worth */
    double last_s;
    double deadline_s; /* monotonic time moves stop at (the rest follows next pass); 0 none */
} act_budget;

void act_budget_init(act_budget *b, unsigned rate_mib, double interval_s, double now_s);
/* Add what accrued since the last call. */
void act_budget_refill(act_budget *b, double now_s);

typedef enum act_error_kind {
    ACT_OK,
    ACT_TRANSIENT, /* EAGAIN, EBUSY, ENOMEM, EIO...: retry next pass */
    ACT_GONE,      /* ESRCH: the domain or its QEMU is gone */
    ACT_PERMANENT, /* EPERM, EINVAL...: stop touching the domain, say why */
    ACT_DISCONNECTED,
    ACT_MAX,
} act_error_kind;

/* Sort an -errno from virt/numa calls. */
act_error_kind act_classify(int err);

typedef struct act_cell_result {
    unsigned pins_done;
    uint64_t bytes_moved;
    uint64_t pages_moved;
    uint64_t pages_unmovable; /* pages the kernel would not move (pinned, shared, zero page) */
    bool refused;             /* none moved and some would not: the memory stays from now on */
    bool budget_exhausted;    /* stopped by the rate limit; the rest follows next passes */
    bool deadline_hit;        /* ... by the act stage's deadline (budget_exhausted set too) */
    bool reserve_hit;         /* stopped because the target reached its reserve */
} act_cell_result;

/* A move_pages(2) status entry the kernel did not write. */
#define ACT_STATUS_UNSET INT32_MIN
/* Huge pages this large move one per move_pages(2) call: the guest's vCPUs that touch it
 * wait while it copies (about 0.1 s for 1 GiB), so each call stalls them for one page. */
#define ACT_ONE_PAGE_PER_CALL (1ULL << 30)

typedef struct act_result {
    act_error_kind kind;
    int err;
    char error[STATE_ERROR_MAX];
    unsigned nr_cells;
    act_cell_result cells[SNAP_MAX_CELLS_PER_DOMAIN];
    bool emulator_pinned;
    unsigned memfd_bound; /* shared backends given their cell's node as preferred this pass */
} act_result;

/*
 * After libvirt pinned a thread, make sure the thread really has that affinity: on some
 * libvirt/cgroup v2 combinations a pin that widens the set is reported but the thread keeps
 * the narrower one. Returns 1 when it had to set it itself, 0, or -errno (a thread that is
 * gone counts as 0).
 */
int act_thread_affinity(pid_t tid, const vn_cpuset *want);

/* The operator pins IOThread `id` (act_operator_pins), or its pins are not known yet. */
bool act_iothread_explicit(const dom_state *st, unsigned id);

/* act_originals.c: the originals, the operator's pins, restore. */
/*
 * Record what vnumad is about to change (vCPU pins, emulator pin, restrictive
 * nodeset) in st->orig, once per domain lifetime. Returns 0 or -errno.
 */
int act_save_originals(virt_dom *d, dom_state *st, const snap_domain *sd);

/*
 * Which emulator and IOThread pins of a domain's <cputune> (x, parsed from its persistent XML
 * when `persistent`, else from its live XML) are the operator's, into st->emulator_explicit
 * and st->iothread_explicit: vnumad never changes, saves or restores those. A persistent XML
 * is the operator's whatever vnumad did live (it pins live only). A transient domain has only
 * its live XML: its pins count as the operator's unless vnumad saved them as originals (a
 * vnumad restart: it may have changed them); act_operator_pins also drops an emulator pin
 * that differs from the saved one. A transient domain that arrived from another host
 * (st->arrived) has none: its live pins are the other host's, possibly its vnumad's, and it
 * is taken as unpinned within its <vcpu cpuset> (docs/fleet.md). No I/O.
 */
void act_explicit_pins(dom_state *st, const domxml_info *x, bool persistent);

/* Learn which emulator and IOThread pins are the operator's (act_explicit_pins, from the
 * domain's persistent XML, else its live XML), once per QEMU run: those are
 * never changed, saved or restored. For a domain that arrived from another host
 * (st->arrived) without originals yet, it also takes them, from this host's definition of
 * the domain (act.c arrival_originals). Until it succeeds, act_save_originals() refuses with
 * -EAGAIN and act_apply() pins neither. */
void act_operator_pins(virt_dom *d, dom_state *st, const topology *t);

/*
 * Carry out the plan of one domain (mode auto). pd->cells[k] belongs to
 * sd->cells[k]. Memory moves walk st->ram[] in windows of the plan's
 * batch_pages, moving the pages found on the source node, while the budget
 * lasts and the target's free memory stays above `reserve` bytes (checked with
 * ops->node_free before every batch). Fills *res; returns 0 or the -errno of
 * the first error that stopped it (res->kind says what to do about it).
 */
int act_apply(virt_dom *d, dom_state *st, const topology *t, const snap_domain *sd,
              const plan_domain *pd, const numa_ops *ops, act_budget *budget, const vn_config *cfg,
              act_result *res);

/*
 * After a pass tried to move range ram[ri] of the domain (`moved` pages moved, `unmovable`
 * refused): when none moved and some would not (a long-term pin the XML does not show:
 * io_uring registered buffers, RDMA), the range is taken as pinned for the rest of this QEMU
 * run (st->mem_refused; a cell all of whose ranges are is sampled as MEM_PIN_REFUSED): never
 * tried again. Sets cr->refused then. A pass that moved some pages changes nothing.
 */
void act_mem_refused(dom_state *st, unsigned ri, uint64_t moved, uint64_t unmovable,
                     act_cell_result *cr);

/*
 * Whether the shared backend of plan cell pc (snapshot cell sc) is to get its target as
 * preferred node now: a shared, non-hugetlbfs backend whose memory may move, without the
 * operator's numatune, not preferring that node yet. act_apply() sets it; the pass acts for it
 * even when the plan has no pin or move.
 */
bool act_policy_due(const topology *t, const dom_state *st, const snap_cell *sc,
                    const plan_cell *pc);

/* Give the shared backends vnumad set a policy on the policy they had before (saved in
 * st->orig.memfd_policy[]). Returns 0 or -errno. */
int act_unbind_memfd(const numa_ops *ops, dom_state *st);

/* Put back what st->orig saved. Returns 0 or the first -errno (it tries everything). */
int act_restore(virt_dom *d, dom_state *st);
