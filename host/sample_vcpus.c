/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sample stage's vCPUs (sample_vcpus.h): their threads and guest cells (query-cpus-fast,
 * once per QEMU run), their CPU time, CPU and affinity (/proc, sample_proc.c) and, under KVM,
 * their halt-polling time (libvirt's vCPU statistics) when it can change a decision.
 */
#include "sample_vcpus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nspid.h"
#include "qemu.h"
#include "sample_proc.h"
#include "util.h"

/*
 * Whether this sample asks for KVM's halt-polling time. It only ever lowers a vCPU's busy
 * fraction, and the decide stage tells a busy vCPU from an idle one at busy_threshold
 * (h->poll_from): when no vCPU ran more than that since the last sample, each is idle with or
 * without it, every decision is the same, and the call (libvirt's statistics: a monitor round
 * trip in libvirtd) is not made. An idle domain is asked only to keep its reading at most
 * SAMPLE_POLL_REFRESH_S old, the base sample_poll_in_window() measures the next busy sample from.
 */
static bool poll_needed(const sample_host *h, const dom_sample_cache *sc, const virt_vcpu *vcpus,
                        unsigned nr_vcpus, double now_s)
{
    double dt = now_s - sc->prev_sample_s;

    if (!(h->poll_from > 0) || sc->nr_prev != nr_vcpus || !(dt > 0) ||
        !(now_s - sc->poll_at_s < SAMPLE_POLL_REFRESH_S))
        return true;
    for (unsigned i = 0; i < nr_vcpus; i++) {
        uint64_t was = sc->prev_cpu_ns[vcpus[i].number];
        if (sc->prev_poll_ns[vcpus[i].number] == UINT64_MAX || vcpus[i].cpu_time_ns < was ||
            (double)(vcpus[i].cpu_time_ns - was) > h->poll_from * dt * 1e9)
            return true;
    }
    return false;
}

/* sample_vcpus.h */
uint64_t sample_poll_in_window(const dom_sample_cache *sc, unsigned number, uint64_t poll_now)
{
    uint64_t was = sc->prev_poll_ns[number], at = sc->poll_cpu_ns[number];
    uint64_t prev = sc->prev_cpu_ns[number], before;

    if (poll_now == UINT64_MAX || was == UINT64_MAX || poll_now < was || prev < at)
        return 0;
    before = prev - at;
    return poll_now - was > before ? poll_now - was - before : 0;
}

/*
 * Each vCPU's halt-polling time (poll_ns[i], UINT64_MAX unknown) from KVM's statistics: under
 * KVM a vCPU's run time includes the time it spins waiting for work after the guest halted
 * (halt_poll_ns, 200 us by default), so an idle vCPU that wakes often reads as busy. Asked
 * when poll_needed() says so, with one libvirt call that sends no monitor command of ours
 * (libvirt's vCPU statistics) and so needs no job check; a QEMU that had none three times in
 * a row (TCG, QEMU before 7.1) is not asked again in this run.
 */
static void vcpu_poll(virt_dom *d, const sample_input *in, dom_sample_cache *sc,
                      const virt_vcpu *vcpus, unsigned nr_vcpus, uint64_t *poll_ns)
{
    _cleanup_free_ uint64_t *by_number = NULL;
    unsigned found = 0;

    for (unsigned i = 0; i < nr_vcpus; i++)
        poll_ns[i] = UINT64_MAX;
    if (sc->kvm_poll <= -3 || !(by_number = malloc(STATE_MAX_VCPUS * sizeof(*by_number))))
        return;
    if (virt_dom_vcpu_poll(d, by_number, STATE_MAX_VCPUS, &found) < 0 || found == 0) {
        /* kvm_poll counts the misses down from 0 while KVM was never seen: -3 is "none" */
        if (sc->kvm_poll <= 0 && --sc->kvm_poll == -3)
            log_debug("No KVM halt-polling statistics for '%s' (TCG, or QEMU before 7.1): vCPU run "
                      "time is taken as it is",
                      LOG_Q(in->name));
        return;
    }
    sc->kvm_poll = 1;
    for (unsigned i = 0; i < nr_vcpus; i++)
        if (vcpus[i].number < STATE_MAX_VCPUS)
            poll_ns[i] = by_number[vcpus[i].number];
}

void sample_remember_cpu_times(dom_sample_cache *sc, const virt_vcpu *vcpus, unsigned nr_vcpus,
                               const uint64_t *poll_ns, double now_s)
{
    for (unsigned i = 0; i < nr_vcpus; i++) {
        sc->prev_cpu_ns[vcpus[i].number] = vcpus[i].cpu_time_ns;
        if (poll_ns[i] == UINT64_MAX)
            continue;
        sc->prev_poll_ns[vcpus[i].number] = poll_ns[i];
        sc->poll_cpu_ns[vcpus[i].number] = vcpus[i].cpu_time_ns;
        sc->poll_at_s = now_s;
    }
    sc->nr_prev = nr_vcpus;
    sc->prev_sample_s = now_s;
}

void sample_vcpus_stale(dom_sample_cache *sc)
{
    free(sc->qv);
    sc->qv = NULL;
    sc->nr_qv = 0;
    sc->vcpus_for_id = -1;
}

/*
 * QEMU's thread ids are its PID namespace's. In a namespace other than vnumad's (a KubeVirt pod:
 * told once per QEMU process, sc->ns_pid), each becomes the id here of the thread of sc->pid that
 * has it there (nspid.h): only ever one of this QEMU's threads. 0, -ESRCH when QEMU is gone, or
 * -EPERM when it reports an id none of its threads has.
 */
static int vcpus_here(const char *root, dom_sample_cache *sc, qmp_vcpu *qv, unsigned nr_qv,
                      char *err, size_t errlen)
{
    int r;

    if (sc->ns_pid != sc->pid) {
        r = nspid_other(root, sc->pid);
        if (r < 0)
            return vn_fail(err, errlen, -ESRCH, "its QEMU (pid %d) is gone", (int)sc->pid);
        sc->ns_other = r > 0;
        sc->ns_pid = sc->pid;
    }
    for (unsigned i = 0; sc->ns_other && i < nr_qv; i++) {
        pid_t tid;
        r = nspid_task(root, sc->pid, qv[i].thread_id, &tid);
        if (r == -ESRCH && sample_thread_of(root, sc->pid, sc->pid) < 0)
            return vn_fail(err, errlen, -ESRCH, "its QEMU (pid %d) is gone", (int)sc->pid);
        if (r < 0)
            return vn_fail(err, errlen, -EPERM,
                           "QEMU (pid %d, in a PID namespace of its own) reports thread %d for "
                           "vCPU %u, which none of its threads is there",
                           (int)sc->pid, (int)qv[i].thread_id, qv[i].cpu_index);
        qv[i].thread_id = tid;
    }
    return 0;
}

/* This QEMU run's vCPUs (number, cell, thread, QOM path) from one query-cpus-fast, each thread
 * checked to be one of the QEMU libvirt started for this run: its thread ids are what QEMU says
 * (in its PID namespace: vcpus_here), and they are pinned and sampled as root. */
static int vcpus_learn(virt_dom *d, const char *root, dom_sample_cache *sc,
                       const virt_dom_id *ident, char *err, size_t errlen)
{
    char why[STATE_ERROR_MAX] = "";
    _cleanup_free_ qmp_vcpu *qv = NULL;
    _cleanup_free_ char *reply = NULL;
    unsigned nr_qv = 0;
    int r;

    sample_vcpus_stale(sc);
    if ((r = sample_find_qemu(root, ident, sc, why, sizeof(why))) < 0)
        return vn_fail(err, errlen, r, "finding its QEMU failed: %s", why[0] ? why : strerror(-r));
    r = virt_qmp(d, "{\"execute\":\"query-cpus-fast\"}", &reply);
    if (r < 0)
        return vn_fail(err, errlen, r, "query-cpus-fast failed: %s", virt_last_error());
    r = qmp_parse_cpus_fast(reply, &qv, &nr_qv, err, errlen);
    if (r < 0)
        return r;
    if (nr_qv == 0)
        return vn_fail(err, errlen, -EINVAL, "the domain reports no vCPUs");
    if (nr_qv > STATE_MAX_VCPUS)
        return vn_fail(err, errlen, -E2BIG, "%u vCPUs, at most %u handled", nr_qv, STATE_MAX_VCPUS);
    r = vcpus_here(root, sc, qv, nr_qv, err, errlen);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < nr_qv; i++) {
        if (qv[i].cpu_index >= STATE_MAX_VCPUS)
            return vn_fail(err, errlen, -E2BIG, "vCPU number %u, at most %u handled",
                           qv[i].cpu_index, STATE_MAX_VCPUS - 1);
        r = sample_thread_of(root, sc->pid, qv[i].thread_id);
        if (r == -ESRCH && sample_thread_of(root, sc->pid, sc->pid) < 0)
            return vn_fail(err, errlen, -ESRCH, "its QEMU (pid %d) is gone", (int)sc->pid);
        if (r < 0)
            return vn_fail(err, errlen, r == -ESRCH ? -EPERM : r,
                           "QEMU (pid %d) reports thread %d for vCPU %u, which is not one of its "
                           "threads",
                           (int)sc->pid, (int)qv[i].thread_id, qv[i].cpu_index);
    }
    for (unsigned i = 0; i < nr_qv; i++)
        sc->vcpu_tid[qv[i].cpu_index] = qv[i].thread_id;
    sc->qv = VN_TAKE_PTR(qv);
    sc->nr_qv = nr_qv;
    sc->vcpus_for_id = ident->id;
    return 0;
}

/* Each known vCPU thread's CPU time, CPU and affinity from /proc; -ESRCH when one is gone. */
static int vcpus_from_proc(const char *root, const dom_sample_cache *sc, virt_vcpu *out)
{
    char proc[PATH_MAX];

    (void)snprintf(proc, sizeof(proc), "%s/proc", strcmp(root, "/") == 0 ? "" : root);
    for (unsigned i = 0; i < sc->nr_qv; i++) {
        int r = sample_thread(proc, sc->qv[i].thread_id, &out[i].cpu_time_ns, &out[i].cpu,
                              &out[i].affinity);
        if (r < 0)
            return r;
        out[i].number = sc->qv[i].cpu_index;
    }
    return 0;
}

int sample_read_vcpus(virt_dom *d, const sample_host *h, const sample_input *in,
                      dom_sample_cache *sc, const virt_dom_id *ident, double now_s,
                      virt_vcpu **vcpus, unsigned *nr_vcpus, int **cell_of, bool *guest_numa,
                      uint64_t **poll_ns, char *err, size_t errlen)
{
    bool use_qmp = h->use_qmp;
    unsigned n = 0;
    int r;

    if (use_qmp) {
        for (int attempt = 0;; attempt++) {
            if (sc->vcpus_for_id != ident->id || !sc->qv) {
                r = vcpus_learn(d, h->root, sc, ident, err, errlen);
                if (r < 0)
                    return r;
            }
            free(*vcpus);
            *vcpus = calloc(sc->nr_qv, sizeof(**vcpus));
            if (!*vcpus)
                return vn_fail(err, errlen, -ENOMEM, "out of memory");
            r = vcpus_from_proc(h->root, sc, *vcpus);
            if (r == 0)
                break;
            sample_vcpus_stale(sc);
            if (r != -ESRCH || attempt > 0)
                return vn_fail(err, errlen, r, "reading the vCPU threads failed: %s", strerror(-r));
            /* a vCPU thread is gone: unplugged, or QEMU stopped (the next query says) */
        }
        n = sc->nr_qv;
    } else {
        r = virt_vcpus(d, vcpus, &n);
        if (r < 0)
            return vn_fail(err, errlen, r, "reading the vCPUs failed: %s", virt_last_error());
        if (n == 0)
            return vn_fail(err, errlen, -EINVAL, "the domain reports no vCPUs");
        if (n > STATE_MAX_VCPUS)
            return vn_fail(err, errlen, -E2BIG, "%u vCPUs, at most %u handled", n, STATE_MAX_VCPUS);
        for (unsigned i = 0; i < n; i++)
            if ((*vcpus)[i].number >= STATE_MAX_VCPUS)
                return vn_fail(err, errlen, -E2BIG, "vCPU number %u, at most %u handled",
                               (*vcpus)[i].number, STATE_MAX_VCPUS - 1);
    }
    *nr_vcpus = n;
    *cell_of = calloc(n, sizeof(**cell_of));
    *poll_ns = malloc(n * sizeof(**poll_ns));
    if (!*cell_of || !*poll_ns)
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
    memset(*poll_ns, 0xff, n * sizeof(**poll_ns));
    *guest_numa = false;
    for (unsigned i = 0; use_qmp && i < n; i++) {
        (*cell_of)[i] = sc->qv[i].node_id < 0 ? 0 : sc->qv[i].node_id;
        *guest_numa |= sc->qv[i].node_id >= 0;
    }
    if (poll_needed(h, sc, *vcpus, n, now_s))
        vcpu_poll(d, in, sc, *vcpus, n, *poll_ns);
    return 0;
}
