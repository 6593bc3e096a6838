/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared memory backends (act_backend.h): a memfd or tmpfs backend's preferred node is set
 * on the shared object itself (mbind through /proc/PID/map_files), saved before the first
 * change and put back at an opt-out.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "act_backend.h"
#include "act_move.h"
#include "procmaps.h"
#include "util.h"

/* MPOL_PREFERRED of <numaif.h> (not included here: numa_ops.c is the only libnuma user) */
#define MPOL_PREFERRED_MODE 1

/*
 * Set the policy of the shared backend mapped at [hva, hva+len) in QEMU: each VMA of
 * /proc/PID/maps that overlaps it is opened through /proc/PID/map_files and mbind()ed, which
 * sets the policy of the shared object itself, so the pages QEMU (or vhost-user, virtiofsd)
 * faults in later follow it. When old is not NULL it gets the policy the backend had (of its
 * first piece).
 */
typedef struct policy_walk {
    const numa_ops *ops;
    uint64_t hva, len;
    const vn_mempolicy *want;
    vn_mempolicy *old; /* the first piece's policy, when asked */
    unsigned pieces;
} policy_walk;

static int policy_piece(const proc_map *m, void *opaque)
{
    policy_walk *w = opaque;
    uint64_t a = VN_MAX(m->start, w->hva), b = VN_MIN(m->end, w->hva + w->len);
    int r;

    /* the range is QEMU's word: a piece that QEMU does not map shared and writable is not guest
     * RAM, and is not opened (file_policy checks the file itself: a regular file on tmpfs) */
    if (m->perms[0] != 'r' || m->perms[1] != 'w' || m->perms[3] != 's' || m->inode == 0)
        return -EPERM;
    r = w->ops->file_policy(m->map_file, (size_t)(m->offset + (a - m->start)), (size_t)(b - a),
                            w->want, w->pieces == 0 ? w->old : NULL);
    if (r == -EOPNOTSUPP)
        return 0; /* a file with no shared policy (not on tmpfs): nothing to set */
    w->pieces++;
    return r;
}

static int backend_policy(const numa_ops *ops, pid_t pid, uint64_t hva, uint64_t len,
                          const vn_mempolicy *want, vn_mempolicy *old)
{
    policy_walk w = {.ops = ops, .hva = hva, .len = len, .want = want, .old = old};

    /* the real /proc: a shared backend's policy is set through its file (the fake host has none) */
    return procmaps_walk("/", pid, hva, len, policy_piece, &w);
}

bool act_policy_due(const topology *t, const act_target *tg, const snap_cell *sc,
                    const plan_cell *pc)
{
    const ram_range *ram = act_find_ram(tg->sample, pc->cell_id);

    if (!ram || !ram->shared || ram->hugetlb || pc->target_node < 0 ||
        pc->cell_id >= SNAP_MAX_CELLS_PER_DOMAIN || (pc->rules & RULE_BIT(RULE_CPUSET_SKIP)) ||
        sc->mem_pinned != MEM_PIN_NONE || sc->binding.mode != VN_MEM_NONE)
        return false;
    return tg->mover->memfd_bound[pc->cell_id] != (int)t->nodes[pc->target_node].os_index + 1;
}

int act_unbind_memfd(const numa_ops *ops, const act_target *tg)
{
    int first = 0;

    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        const ram_range *ram;
        int r;
        if (!(tg->orig->memfd_cells & (1ULL << k)) || !(ram = act_find_ram(tg->sample, k)) ||
            tg->sample->pid <= 0)
            continue;
        r = backend_policy(ops, tg->sample->pid, ram->hva, ram->size, &tg->orig->memfd_policy[k],
                           NULL);
        if (r < 0 && !first)
            first = r;
        tg->mover->memfd_bound[k] = 0;
    }
    return first;
}

int act_bind_backends(const act_target *tg, const topology *t, const snap_domain *sd,
                      const plan_domain *pd, const numa_ops *ops, act_result *res)
{
    int r;

    /* Shared (memfd, tmpfs) backends: the target becomes the backend's preferred node, so
     * the pages QEMU or a vhost-user process faults in later land there too (an anonymous
     * backend follows the vCPUs that fault it in). Preferred, not bind: a full node must not
     * OOM the guest. The backend's own policy is saved before the first change and put
     * back on opt-out. hugetlbfs has no shared policy (mbind would set this one mapping's
     * only): nothing is set, and nothing recorded. A cell with a numatune (strict,
     * preferred, interleave) has the operator's policy: it is never replaced. */
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        const ram_range *ram = act_find_ram(tg->sample, pc->cell_id);
        vn_mempolicy want = {.mode = MPOL_PREFERRED_MODE}, old = {0};
        bool first;
        int node;
        if (tg->sample->pid <= 0 || !act_policy_due(t, tg, &sd->cells[k], pc))
            continue;
        node = (int)t->nodes[pc->target_node].os_index;
        cpuset_set(&want.nodes, (unsigned)node);
        first = !(tg->orig->memfd_cells & (1ULL << pc->cell_id));
        r = backend_policy(ops, tg->sample->pid, ram->hva, ram->size, &want, first ? &old : NULL);
        if (r < 0)
            return r;
        if (first) {
            tg->orig->memfd_policy[pc->cell_id] = old;
            tg->orig->memfd_cells |= 1ULL << pc->cell_id;
        }
        tg->mover->memfd_bound[pc->cell_id] = node + 1;
        res->memfd_bound++;
    }
    return 0;
}
