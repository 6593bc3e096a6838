/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "hostload.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

int hostload_read(const char *root, host_load *ret)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[4096], line[512];
    int n = snprintf(path, sizeof(path), "%s/proc/stat", root ? root : "");

    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    memset(ret, 0, sizeof(*ret));
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (fgets(line, sizeof(line), f)) {
        unsigned cpu;
        uint64_t v[8] = {0};
        /* "cpuN user nice system idle iowait irq softirq steal guest guest_nice"; guest
         * time is already inside user and nice */
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line + 3,
                   "%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
                   " %" SCNu64 " %" SCNu64,
                   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 5 ||
            cpu >= VN_MAX_CPUS)
            continue;
        ret->busy[cpu] = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        ret->total[cpu] = ret->busy[cpu] + v[3] + v[4];
    }
    if (ferror(f))
        return -EIO;
    ret->valid = true;
    return 0;
}

/* Node index holding cpu, or -1. */
static int node_of_cpu(const topology *t, int cpu)
{
    for (unsigned n = 0; cpu >= 0 && n < t->nr_nodes; n++)
        if (cpuset_isset(&t->nodes[n].cpus, (unsigned)cpu))
            return (int)n;
    return -1;
}

/* The other load per node over the CPUs of `cpus` (isolated ones left out), into out[]. */
static void other_busy_over(const topology *t, const host_load *prev, const host_load *now,
                            const snapshot *s, vn_cpuset guest, double out[VN_MAX_NODES])
{
    double busy[VN_MAX_NODES] = {0};

    cpuset_andnot(&guest, &guest, &t->isolated);
    CPUSET_FOREACH(cpu, &guest)
    {
        int n = node_of_cpu(t, cpu);
        uint64_t db = now->busy[cpu] - prev->busy[cpu], dt = now->total[cpu] - prev->total[cpu];
        if (n < 0 || dt == 0 || now->total[cpu] < prev->total[cpu] ||
            now->busy[cpu] < prev->busy[cpu])
            continue;
        busy[n] += (double)db / (double)dt;
    }
    /* the sampled vCPUs' own time, where they last ran */
    for (unsigned i = 0; i < s->nr_domains; i++)
        for (unsigned k = 0; k < s->domains[i].nr_cells; k++)
            for (unsigned v = 0; v < s->domains[i].cells[k].nr_vcpus; v++) {
                const snap_vcpu *sv = &s->domains[i].cells[k].vcpus[v];
                int n = node_of_cpu(t, sv->cpu);
                if (n >= 0)
                    busy[n] -= sv->busy;
            }
    /* whole busy CPUs: a CPU counts from HOSTLOAD_COUNT_FROM of one (a busy vCPU of a VM
     * that did not opt in is about 1), below that it is the noise of QEMU's other threads and
     * of the windows not lining up exactly */
    for (unsigned n = 0; n < t->nr_nodes; n++)
        out[n] = VN_MAX(0.0, floor(busy[n] + 1.0 - HOSTLOAD_COUNT_FROM));
}

void hostload_other_busy(const topology *t, const host_load *prev, const host_load *now,
                         snapshot *s)
{
    vn_cpuset guest;

    if (!prev || !now || !prev->valid || !now->valid)
        return;
    cpuset_zero(&guest);
    for (unsigned i = 0; i < s->nr_domains; i++)
        for (unsigned k = 0; k < s->domains[i].nr_cells; k++)
            for (unsigned v = 0; v < s->domains[i].cells[k].nr_vcpus; v++) {
                const snap_vcpu *sv = &s->domains[i].cells[k].vcpus[v];
                cpuset_or(&guest, &guest, &sv->allowed);
                cpuset_or(&guest, &guest, &sv->pinned);
            }
    other_busy_over(t, prev, now, s, guest, s->other_busy);
}

int hostload_other_busy_all(const topology *t, const host_load *prev, const host_load *now,
                            const snapshot *s, double out[VN_MAX_NODES])
{
    vn_cpuset all;

    if (!prev || !now || !prev->valid || !now->valid)
        return -ENODATA;
    cpuset_zero(&all);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        cpuset_or(&all, &all, &t->nodes[n].cpus);
    other_busy_over(t, prev, now, s, all, out);
    return 0;
}

double hostload_idle_cpus(const host_load *prev, const host_load *now, const vn_cpuset *cpus)
{
    double idle = 0;

    if (!prev || !now || !prev->valid || !now->valid)
        return 0;
    CPUSET_FOREACH(cpu, cpus)
    {
        uint64_t db = now->busy[cpu] - prev->busy[cpu], dt = now->total[cpu] - prev->total[cpu];
        if (dt == 0 || now->total[cpu] < prev->total[cpu] || now->busy[cpu] < prev->busy[cpu] ||
            db > dt)
            continue;
        idle += (double)(dt - db) / (double)dt;
    }
    return idle;
}
