/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the kernel tells of a domain's QEMU (part of the sample stage, host/sample.h): whether a
 * thread is one of its own, the cgroup cpuset that bounds it, the nodes it may have memory on, and
 * each vCPU thread's CPU time, current CPU and affinity. Plain file reads under /proc and /sys, no
 * libvirt call: this is what an idle pass costs per domain.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domstatus.h"
#include "model.h"
#include "sample_proc.h"
#include "util.h"

/* ---- the QEMU process ---- */

int sample_find_qemu(const char *root, const virt_dom_id *ident, dom_sample_cache *sc, char *err,
                     size_t errlen)
{
    int r;

    sc->daemon_pid = ident->daemon_pid; /* (a restarted daemon has another) */
    if (sc->pid > 0)
        return 0;
    r = domstatus_qemu_pid(root, ident, &sc->pid, err, errlen);
    if (r < 0)
        sc->pid = 0;
    return r;
}

int sample_thread_of(const char *root, pid_t pid, pid_t tid)
{
    char path[PATH_MAX];
    struct stat st;

    if (pid <= 0 || tid <= 0)
        return -ESRCH;
    (void)snprintf(path, sizeof(path), "%s/proc/%d/task/%d", root, (int)pid, (int)tid);
    if (stat(path, &st) < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ESRCH;
}

/*
 * The host nodes (topology index mask) process `pid` may have memory on: its
 * Mems_allowed_list (its cpuset: libvirt's emulator cgroup, numatune). move_pages(2) refuses a
 * whole call with EACCES when a target is outside it. -errno when it cannot be read.
 */
int sample_mems_allowed(const char *root, pid_t pid, const topology *t, vn_nodeset *ret,
                        uint64_t *rss_kib)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[PATH_MAX], line[4200];

    if (rss_kib)
        *rss_kib = 0;
    (void)snprintf(path, sizeof(path), "%s/proc/%d/status", root, (int)pid);
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f)) {
        char *v = line + strlen("Mems_allowed_list:");
        unsigned long long kib;
        /* "VmRSS:\t  1234 kB", before Mems_allowed_list */
        if (rss_kib && sscanf(line, "VmRSS: %llu kB", &kib) == 1) {
            *rss_kib = kib;
            continue;
        }
        if (strncmp(line, "Mems_allowed_list:", strlen("Mems_allowed_list:")) != 0)
            continue;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = '\0';
        return topo_nodelist_parse(t, v, ret) < 0 ? -EINVAL : 0;
    }
    return -ENOENT;
}

int sample_read_line(const char *root, const char *path, char *buf, size_t len)
{
    _cleanup_fclose_ FILE *f = NULL;
    char full[4096];
    int n = snprintf(full, sizeof(full), "%s%s", root, path);

    if (n < 0 || (size_t)n >= sizeof(full))
        return -ENAMETOOLONG;
    f = fopen(full, "re");
    if (!f)
        return -errno;
    if (!fgets(buf, (int)len, f))
        return ferror(f) ? -EIO : -ENODATA;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Whether the comma-separated controller list of a /proc/PID/cgroup line names `name`
 * (the list is cut up). */
static bool has_controller(char *list, const char *name)
{
    for (char *tok; (tok = strsep(&list, ","));)
        if (!strcmp(tok, name))
            return true;
    return false;
}

int sample_cgroup_cpus(const char *root, pid_t pid, char *cached, size_t cached_len, vn_cpuset *ret)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[4096], line[4096], v1[4096] = "", v2[4096] = "", cpus[4096];
    const char *rel, *file;
    int n, r;

    if (!root || pid <= 0 || !ret)
        return -EINVAL;
    /* the file found last time for this process: an idle pass reads only it */
    if (cached && cached[0] && sample_read_line(root, cached, cpus, sizeof(cpus)) == 0 &&
        cpuset_parse(cpus, ret) == 0 && !cpuset_empty(ret))
        return 0;
    if (cached && cached_len)
        cached[0] = '\0';
    n = snprintf(path, sizeof(path), "%s/proc/%d/cgroup", root, (int)pid);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    /* "N:cpuset:/path" (v1, also on a hybrid host) or "0::/path" (v2) */
    while (fgets(line, sizeof(line), f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        c2[strcspn(c2, "\n")] = '\0';
        *c2 = '\0';
        if (!strcmp(c1 + 1, ""))
            (void)snprintf(v2, sizeof(v2), "%s", c2 + 1);
        else if (has_controller(c1 + 1, "cpuset"))
            (void)snprintf(v1, sizeof(v1), "%s", c2 + 1);
    }
    rel = v1[0] ? v1 : v2;
    if (!rel[0])
        return -ENOENT;
    /* the domain's group: above libvirt's emulator, vcpuN and iothreadN groups */
    (void)snprintf(path, sizeof(path), "%s", rel);
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(path, '/');
        const char *last = slash ? slash + 1 : path;
        if (!slash || !(strcmp(last, "emulator") == 0 || strncmp(last, "vcpu", 4) == 0 ||
                        strncmp(last, "iothread", 8) == 0 || strcmp(last, "libvirt") == 0))
            break;
        *slash = '\0';
    }
    file = v1[0] ? "/sys/fs/cgroup/cpuset%s/cpuset.effective_cpus"
                 : "/sys/fs/cgroup%s/cpuset.cpus.effective";
    /* a group without the cpuset controller (cgroup v2: its parent does not delegate it, as
     * libvirt's machine groups without systemd) is bounded by its nearest ancestor that has it */
    for (;;) {
        char *slash;
        n = snprintf(line, sizeof(line), file, path);
        if (n < 0 || (size_t)n >= sizeof(line))
            return -ENAMETOOLONG;
        r = sample_read_line(root, line, cpus, sizeof(cpus));
        if (r != -ENOENT || !path[0])
            break;
        slash = strrchr(path, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    if (r < 0)
        return r;
    if (cpuset_parse(cpus, ret) < 0 || cpuset_empty(ret))
        return -EINVAL;
    if (cached && strlen(line) < cached_len)
        memcpy(cached, line, strlen(line) + 1);
    return 0;
}

/* ---- vCPU threads ---- */

int sample_thread(const char *proc, pid_t tid, uint64_t *cpu_ns, int *cpu, vn_cpuset *affinity)
{
    char path[PATH_MAX], line[1024], *p, *tok, *save = NULL;
    unsigned long long utime = 0, stime = 0;
    long processor = -1;
    bool have_ns = false;
    unsigned field = 3;
    int r;

    if (tid <= 0)
        return -ESRCH;
    /* run time in ns (CONFIG_SCHED_INFO): finer than stat's clock ticks */
    snprintf(path, sizeof(path), "/%d/schedstat", (int)tid);
    if (sample_read_line(proc, path, line, sizeof(line)) == 0) {
        line[strcspn(line, " ")] = '\0';
        have_ns = vn_parse_u64(line, 0, UINT64_MAX, cpu_ns) == 0;
    }
    snprintf(path, sizeof(path), "/%d/stat", (int)tid);
    r = sample_read_line(proc, path, line, sizeof(line));
    if (r < 0)
        return r == -ENOENT ? -ESRCH : r;
    /* fields after the command, which may hold spaces and parentheses: the last ')' ends it */
    p = strrchr(line, ')');
    if (!p)
        return -EIO;
    save = NULL;
    for (tok = strtok_r(p + 1, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), field++) {
        if (field == 14)
            utime = strtoull(tok, NULL, 10);
        else if (field == 15)
            stime = strtoull(tok, NULL, 10);
        else if (field == 39) {
            processor = strtol(tok, NULL, 10);
            break;
        }
    }
    if (processor < 0 || processor >= VN_MAX_CPUS)
        return -EIO;
    *cpu = (int)processor;
    if (!have_ns) {
        long hz = sysconf(_SC_CLK_TCK);
        *cpu_ns = (utime + stime) * (uint64_t)(1000000000L / (hz > 0 ? hz : 100));
    }
    /* the affinity from the kernel, not formatted into /proc/TID/status and parsed back (the
     * most costly read of an idle pass); fixture trees in tests have the file */
    if (!strcmp(proc, "/proc")) {
        return cpuset_get_affinity(tid, affinity);
    }
    snprintf(path, sizeof(path), "%s/%d/status", proc, (int)tid);
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            line[strcspn(line, "\n")] = '\0';
            return cpuset_parse(line + 18 + strspn(line + 18, " \t"), affinity) < 0 ? -EIO : 0;
        }
    return -EIO;
}
