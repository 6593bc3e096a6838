/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the sample stage reads of a QEMU process in /proc and its cgroup (sample_proc.c): whether
 * a thread is its own, its vCPU threads' CPU time, CPU and affinity, its cgroup's CPUs, its
 * memory nodes. Its pid is libvirt's (host/domstatus.h), in vnumad's PID namespace.
 */
#pragma once

#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "state.h"
#include "topology.h"
#include "virt.h"

/* <root><path> as one line into buf (newline cut). Returns 0 or -errno. */
int sample_read_line(const char *root, const char *path, char *buf, size_t len);

/*
 * The CPUs the cgroup of process pid may use (cpuset.cpus.effective on cgroup v2,
 * cpuset.effective_cpus on v1), one level above libvirt's per-thread groups: for a QEMU
 * process, the domain's machine scope (or its nearest ancestor with the cpuset controller),
 * whatever vnumad's or its emulator's pins are. root
 * is "/" (tests point it at a fixture tree). Returns 0, or -errno when there is no cpuset
 * controller or no such file (the caller then has no bound beyond the XML's).
 *
 * cached (cached_len bytes; NULL: none) keeps the file found, below root, for the next call on
 * the same process, which reads only that file; "" or a file that cannot be read any more
 * (its group gone) is looked up again. The caller forgets it when the process may have moved.
 */
int sample_cgroup_cpus(const char *root, pid_t pid, char *cached, size_t cached_len,
                       vn_cpuset *ret);

/*
 * The host nodes (mask of topology node indexes) process `pid` may have memory on, from its
 * Mems_allowed_list (under root: "/", a fixture tree in tests). 0 or -errno (-ESRCH: gone). The
 * sampled domain's allowed nodes are intersected with it. From the same read, its resident
 * memory (VmRSS) into *rss_kib when not NULL (0: not given).
 */
int sample_mems_allowed(const char *root, pid_t pid, const topology *t, vn_nodeset *ret,
                        uint64_t *rss_kib);

/*
 * sc->pid when it is not known yet: the QEMU of this run of the domain, from libvirt's status
 * file (host/domstatus.h: read in its daemon's root, its pid mapped from the daemon's PID
 * namespace); and sc->daemon_pid, the daemon the domain is reached through now. 0 or -errno
 * with the reason in err (sc->pid then 0).
 */
int sample_find_qemu(const char *root, const virt_dom_id *ident, dom_sample_cache *sc, char *err,
                     size_t errlen);

/* Whether thread tid is one of process pid's (under root: "/", a fixture tree in tests), as the
 * kernel lists them in /proc/PID/task: 0, or -ESRCH when it is not (or either is gone). A thread
 * id QEMU reports is pinned, sampled and put back only when it is one of its QEMU's. */
int sample_thread_of(const char *root, pid_t pid, pid_t tid);

/* A vCPU thread's CPU time (ns; /proc/TID/schedstat, else utime + stime of /proc/TID/stat),
 * the CPU it last ran on and its affinity; `proc` is "/proc" but in tests. 0 or -errno
 * (-ESRCH: no such thread). */
int sample_thread(const char *proc, pid_t tid, uint64_t *cpu_ns, int *cpu, vn_cpuset *affinity);
