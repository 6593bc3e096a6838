/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pins (act_pins.h): a vCPU pinned through libvirt and its thread's affinity checked,
 * the emulator and IOThreads with the domain's main node, the operator's IOThread pins left
 * alone, and a restrictive numatune's nodeset.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "act_pins.h"
#include "sample_proc.h"
#include "util.h"

/*
 * After libvirt pinned a vCPU, the thread must really have that affinity: on some
 * libvirt/cgroup v2 combinations a pin that widens the set is reported but the thread
 * keeps the narrower one (seen in the proving ground). Check with sched_getaffinity()
 * and set it directly when they differ. Only a thread that is still one of the domain's QEMU
 * (pid) is touched: a vCPU unplugged since the sample may have left its id to another
 * process. Returns 1 when it had to fix, 0, or -errno.
 */
int act_thread_affinity(pid_t pid, pid_t tid, const vn_cpuset *want)
{
    vn_cpuset have;
    int r;

    if (tid <= 0 || sample_thread_of("/", pid, tid) < 0)
        return 0;
    r = cpuset_get_affinity(tid, &have);
    if (r < 0)
        return r == -ESRCH ? 0 : r;
    if (cpuset_equal(&have, want))
        return 0;
    r = cpuset_set_affinity(tid, want);
    if (r < 0)
        return r == -ESRCH ? 0 : r;
    return 1;
}

int act_pin_vcpu(virt_dom *d, const act_target *tg, unsigned vcpu, const vn_cpuset *cpus)
{
    int r = virt_pin_vcpu(d, vcpu, cpus);

    if (r < 0 || vcpu >= STATE_MAX_VCPUS)
        return r;
    r = act_thread_affinity(tg->sample->pid, tg->sample->vcpu_tid[vcpu], cpus);
    if (r > 0)
        tg->count->affinity_fixups++;
    return r < 0 ? r : 0;
}

bool act_iothread_explicit(const act_target *tg, unsigned id)
{
    if (!tg->cputune_known)
        return true; /* not known this pass: kept */
    for (unsigned i = 0; i < tg->nr_iothread_explicit; i++)
        if (tg->iothread_explicit[i] == id)
            return true;
    return false;
}

int act_pin_emulator(virt_dom *d, const act_target *tg, const topology *t, const snap_domain *sd,
                     int main_node, act_result *res, const char **what)
{
    int r;

    /* The emulator thread goes with the domain's main node (its largest cell), unless the
     * operator pinned it in the domain's XML (act_operator_pins): an emulator pinned away
     * from realtime vCPUs must stay there. */
    vn_cpuset want = t->nodes[main_node].cpus, cur, allowed;
    cpuset_zero(&allowed);
    for (unsigned k = 0; k < sd->nr_cells; k++)
        for (unsigned v = 0; v < sd->cells[k].nr_vcpus; v++)
            cpuset_or(&allowed, &allowed, &sd->cells[k].vcpus[v].allowed);
    cpuset_and(&want, &want, &allowed);
    if (!cpuset_empty(&want) && tg->cputune_known && !tg->emulator_explicit &&
        virt_emulator_pin(d, &cur) == 0 && !cpuset_equal(&cur, &want)) {
        r = virt_pin_emulator(d, &want);
        if (r < 0) {
            *what = "pin emulator";
            return r;
        }
        res->emulator_pinned = true;
    }
    /* IOThreads serve the guest's devices: they go with the emulator */
    if (!cpuset_empty(&want)) {
        _cleanup_free_ unsigned *ids = NULL;
        _cleanup_free_ vn_cpuset *pins = NULL;
        unsigned nio = 0;
        if (virt_iothreads(d, &ids, &pins, &nio) == 0)
            for (unsigned i = 0; i < nio; i++) {
                if (cpuset_equal(&pins[i], &want) || act_iothread_explicit(tg, ids[i]))
                    continue;
                r = virt_pin_iothread(d, ids[i], &want);
                if (r < 0) {
                    *what = "pin IOThread";
                    return r;
                }
            }
    }
    return 0;
}

/* A restrictive numatune is changed through libvirt (cgroups move the memory). */
bool act_all_restrictive(const snap_domain *sd)
{
    for (unsigned k = 0; k < sd->nr_cells; k++)
        if (sd->cells[k].binding.mode != VN_MEM_RESTRICTIVE)
            return false;
    return sd->nr_cells > 0;
}

int act_set_nodeset(virt_dom *d, const topology *t, const plan_domain *pd)
{
    char want[STATE_NODESET_MAX], cur[STATE_NODESET_MAX];
    vn_cpuset nodes;
    vn_mem_mode mode;
    int r;

    cpuset_zero(&nodes);
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].target_node >= 0)
            cpuset_set(&nodes, t->nodes[pd->cells[k].target_node].os_index);
    if (cpuset_empty(&nodes) || cpuset_format(&nodes, want, sizeof(want)) < 0)
        return 0;
    r = virt_numa_get(d, &mode, cur, sizeof(cur));
    if (r < 0)
        return r;
    if (mode != VN_MEM_RESTRICTIVE || strcmp(cur, want) == 0)
        return 0;
    return virt_numa_set_nodeset(d, want);
}
