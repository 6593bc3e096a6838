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

struct mover;

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
    uint64_t bytes_ordered; /* given to the mover this pass (its order for the cell) */
    /* what the mover did for the cell since the domain's last record (mover_take) */
    uint64_t bytes_moved;
    uint64_t pages_moved;
    uint64_t pages_unmovable; /* pages the kernel would not move (pinned, shared, zero page) */
    uint64_t bytes_left;      /* of its order still queued */
    bool refused;             /* none moved and some would not: the memory stays from now on */
    bool reserve_hit;         /* stopped because the target reached its reserve */
} act_cell_result;

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
    const char *uuid;
    unsigned rate_mib;              /* the domain's own migration limit (0: the host's only) */
    struct mover *movers;           /* the host's mover: memory moves are ordered from it */
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
                        .uuid = st->uuid,
                        .rate_mib = st->cfg.rate_mib,
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
 * What the mover did for the domain since the last call (mover_take), into its counters, its
 * refused ranges (tg->mover) and res's cells of plan pd (bytes and pages moved, pages the
 * kernel would not move, what is left, a full target, refused memory). True when it moved
 * something.
 */
bool act_collect_moves(const act_target *tg, const plan_domain *pd, act_result *res);

/*
 * Carry out the plan of one domain (mode auto). pd->cells[k] belongs to
 * sd->cells[k]. Pins are set here; each cell's memory moves are ordered from the mover
 * (tg->movers) right after that cell's vCPUs are pinned (a failed pin orders nothing more); the
 * mover takes what it moves from the plan (act_move_plan: spans of the sample's RAM ranges) and
 * moves them window by window after this returns, within the host's rate limit and the target's
 * reserve (mover.h). Fills *res; returns 0 or the -errno of the first error that stopped it
 * (res->kind says what to do about it).
 */
int act_apply(virt_dom *d, const act_target *tg, const topology *t, const snap_domain *sd,
              const plan_domain *pd, const numa_ops *ops, const vn_config *cfg, act_result *res);
