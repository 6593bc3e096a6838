/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sample stage's vCPUs (sample_vcpus.c): each vCPU's thread, guest cell and CPU time,
 * and under KVM the halt-polling time that is not guest work. The threads and cells are
 * learnt once per QEMU run with query-cpus-fast; each sample then reads the threads in /proc.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "state.h"
#include "virt.h"

/* Forget the vCPU threads and cells of this QEMU run (a vCPU was plugged or unplugged). */
void sample_vcpus_stale(dom_sample_cache *sc);

/*
 * The domain's vCPUs with their CPU times (*vcpus), each one's guest cell (*cell_of, 0
 * without guest NUMA or QMP: the caller then takes the live XML's) and KVM halt-polling time
 * (*poll_ns, UINT64_MAX when not read: read only when it can change a decision, poll_needed() in
 * sample_vcpus.c); *guest_numa when the guest has NUMA cells. With QMP the vCPU threads and cells
 * are learnt once per QEMU run (query-cpus-fast) and each sample reads the threads in /proc: no
 * libvirt call (a thread that is gone makes it learn them again, once). Without QMP, libvirt's vCPU
 * information (which sends QEMU no command of ours). The caller frees the arrays. 0 or -errno with
 * the reason in err.
 */
int sample_read_vcpus(virt_dom *d, const sample_host *h, const sample_input *in,
                      dom_sample_cache *sc, const virt_dom_id *ident, double now_s,
                      virt_vcpu **vcpus, unsigned *nr_vcpus, int **cell_of, bool *guest_numa,
                      uint64_t **poll_ns, char *err, size_t errlen);

/*
 * The part of vCPU `number`'s run time since the last sample that was KVM's halt polling, not
 * guest work, from its reading now (poll_now, UINT64_MAX none: 0). With a reading at the last
 * sample too, exact. With an older one (samples in between did not ask), the polling since
 * that reading less all the run time up to the last sample: the least of it that can have
 * fallen in this window, so busy is never read low.
 */
uint64_t sample_poll_in_window(const dom_sample_cache *sc, unsigned number, uint64_t poll_now);

/* The CPU time readings the next sample's busy fractions are measured against; a vCPU's
 * halt-polling reading is kept until a newer one comes (a new QEMU run forgets it). */
void sample_remember_cpu_times(dom_sample_cache *sc, const virt_vcpu *vcpus, unsigned nr_vcpus,
                               const uint64_t *poll_ns, double now_s);
