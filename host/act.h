/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 4 of the pipeline: act. The only stage that changes the world: vCPU
 * and emulator pins through libvirt (virt.h), guest memory through move_pages
 * (numa_ops.h), within a host-wide migration rate limit and never into a node
 * below its free-memory reserve. Errors are sorted: transient ones are retried
 * next pass, permanent ones stop vnumad touching the domain.
 *
 * This header: the stage's results and act_apply(), which carries out a plan in order.
 * Each step is its own file and header: act_pins (vCPU, emulator and IOThread pins, a
 * restrictive nodeset), act_move (the move budget and the page moves), act_backend (shared
 * backends' preferred node), act_originals (what was there before, the operator's pins,
 * restore). act.c calls them; none of them calls act.c.
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
 * A domain as the act stage sees it (act_target_of), never the whole dom_state: what act reads
 * (the sample of this QEMU run: process, vCPU threads, RAM ranges; the operator's cputune)
 * and what it writes (the mover's part, the shared backends' originals, the counters).
 */
typedef struct act_target {
    const char *name;
    const dom_sample_cache *sample; /* read */
    bool cputune_known;             /* read: the operator's <cputune> (act_operator_pins) */
    bool emulator_explicit;
    unsigned nr_iothread_explicit;
    const unsigned *iothread_explicit;
    dom_mover *mover;    /* written: resume points, refused ranges, backend bindings */
    dom_originals *orig; /* written: shared backends' policies before the first change */
    dom_counters *count; /* written */
} act_target;

static inline act_target act_target_of(dom_state *st)
{
    return (act_target){.name = st->name,
                        .sample = &st->sample,
                        .cputune_known = st->cputune_known,
                        .emulator_explicit = st->emulator_explicit,
                        .nr_iothread_explicit = st->nr_iothread_explicit,
                        .iothread_explicit = st->iothread_explicit,
                        .mover = &st->mover,
                        .orig = &st->orig,
                        .count = &st->count};
}

/*
 * Carry out the plan of one domain (mode auto). pd->cells[k] belongs to
 * sd->cells[k]. Memory moves take what they move from the plan: act_move_plan() turns each
 * cell's plan into spans of the sample's RAM ranges, walked in windows of the plan's
 * batch_pages, moving the pages found on the source node, while the budget
 * lasts and the target's free memory stays above `reserve` bytes (checked with
 * ops->node_free before every batch). Fills *res; returns 0 or the -errno of
 * the first error that stopped it (res->kind says what to do about it).
 */
int act_apply(virt_dom *d, const act_target *tg, const topology *t, const snap_domain *sd,
              const plan_domain *pd, const numa_ops *ops, act_budget *budget, const vn_config *cfg,
              act_result *res);
