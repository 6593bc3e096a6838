/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The act stage (act.h): a domain's plan carried out in order, each cell's vCPU pins and
 * then its memory's order to the mover (the cells whose memory moves first), the emulator and
 * IOThreads, a restrictive numatune's nodeset, then the shared backends' preferred node. What each
 * step does is in its own file: act_pins.c, act_move.c, act_backend.c; the originals and putting
 * them back are act_originals.c.
 */
#include "act.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "act_backend.h"
#include "act_move.h"
#include "act_pins.h"
#include "mover.h"
#include "util.h"

/* irqbalance's activate.c sorts errors the same way: retry what may pass, stop on the rest. */
act_error_kind act_classify(int err)
{
    switch (-err) {
    case 0:
        return ACT_OK;
    case EAGAIN:
    case EBUSY:
    case ENOMEM:
    case EIO:
    case EINTR:
        return ACT_TRANSIENT;
    case ESRCH:
        return ACT_GONE;
    case ENOTCONN:
        return ACT_DISCONNECTED;
    default:
        return ACT_PERMANENT;
    }
}

static void fail(act_result *res, int err, const char *what)
{
    if (res->kind != ACT_OK)
        return; /* keep the first */
    res->kind = act_classify(err);
    res->err = err;
    snprintf(res->error, sizeof(res->error), "%s: %s", what, strerror(-err));
}

bool act_collect_moves(const act_target *tg, const plan_domain *pd, act_result *res)
{
    mover_progress mp;
    bool moved = false;

    mover_take(tg->movers, tg->uuid, &mp);
    tg->mover->mem_refused = mp.refused;
    tg->mover->ram_gen = mp.ram_gen;
    for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++) {
        const mover_cell_progress *cp = &mp.cells[c];
        tg->count->pages_moved += cp->pages_moved;
        tg->count->bytes_moved += cp->bytes_moved;
        tg->count->pages_unmovable += cp->pages_unmovable;
        tg->count->memory_scans += cp->queries;
        moved |= cp->bytes_moved > 0;
    }
    res->nr_cells =
        VN_MAX(res->nr_cells, VN_MIN(pd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN));
    for (unsigned k = 0; k < res->nr_cells; k++) {
        unsigned id = pd->cells[k].cell_id;
        const mover_cell_progress *cp;
        if (id >= SNAP_MAX_CELLS_PER_DOMAIN)
            continue;
        cp = &mp.cells[id];
        res->cells[k].bytes_moved = cp->bytes_moved;
        res->cells[k].pages_moved = cp->pages_moved;
        res->cells[k].pages_unmovable = cp->pages_unmovable;
        res->cells[k].bytes_left = cp->bytes_left;
        res->cells[k].reserve_hit = cp->reserve_hit;
        res->cells[k].refused = false;
        for (unsigned ri = 0; ri < tg->sample->nr_ram && ri < 64; ri++)
            res->cells[k].refused |=
                tg->sample->ram[ri].cell == id && (mp.refused & (1ULL << ri)) && !cp->pages_moved;
    }
    return moved;
}

int act_apply(virt_dom *d, const act_target *tg, const topology *t, const snap_domain *sd,
              const plan_domain *pd, const numa_ops *ops, const vn_config *cfg, act_result *res)
{
    int main_node = -1, r, order_err = 0;
    const char *step = NULL;
    uint64_t main_bytes = 0;
    bool any_pin = false, restrictive = act_all_restrictive(sd);

    memset(res, 0, sizeof(*res));
    res->nr_cells = VN_MIN(pd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN);
    for (unsigned k = 0; k < res->nr_cells; k++) {
        uint64_t bytes = 0;
        for (unsigned n = 0; n < t->nr_nodes; n++)
            bytes += sd->cells[k].pages[n] * sd->cells[k].page_size;
        if (pd->cells[k].target_node >= 0 && sd->cells[k].nr_vcpus > 0 &&
            (main_node < 0 || bytes > main_bytes)) {
            main_node = pd->cells[k].target_node;
            main_bytes = bytes;
        }
    }
    /* The cells whose memory moves first, each pinned and then its memory ordered, so the
     * mover starts while the other cells are pinned; then the cells that only get pins. A pin
     * that fails stops the domain there: no cell's memory moves to vCPUs that are not there. */
    for (int round = 0; round < 2; round++)
        for (unsigned k = 0; k < res->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            if ((pc->nr_moves > 0) != (round == 0))
                continue;
            for (unsigned i = 0; i < pc->nr_pins; i++) {
                r = act_pin_vcpu(d, tg, pc->pins[i].vcpu, &pc->pins[i].cpus);
                if (r < 0) {
                    char what[64];
                    snprintf(what, sizeof(what), "pin vCPU %u", pc->pins[i].vcpu);
                    fail(res, r, what);
                    return r;
                }
                res->cells[k].pins_done++;
                tg->count->pins++;
                any_pin = true;
            }
            /* a cell without moves drops what was queued for it */
            r = restrictive ? 0 : act_order_cell(tg, t, pd, k, cfg, res);
            if (r < 0 && !order_err)
                order_err = r;
        }
    /* The emulator thread and IOThreads go with the domain's main node (act_pins.c) */
    if (any_pin && main_node >= 0) {
        r = act_pin_emulator(d, tg, t, sd, main_node, res, &step);
        if (r < 0) {
            fail(res, r, step);
            return r;
        }
    }
    if (restrictive) {
        r = act_set_nodeset(d, t, pd);
        if (r < 0) {
            fail(res, r, "set restrictive numatune nodeset");
            return r;
        }
        return 0;
    }
    if (order_err < 0) {
        fail(res, order_err, "order guest memory moves");
        return order_err;
    }
    /* Shared (memfd, tmpfs) backends get the target as their preferred node (act_backend.c) */
    r = act_bind_backends(tg, t, sd, pd, ops, res);
    if (r < 0) {
        fail(res, r, "set the shared memory backend's preferred node");
        return r;
    }
    return 0;
}
