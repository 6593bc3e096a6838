/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pids across PID namespaces (host/nspid.c). A libvirt daemon in a PID namespace of its own (a
 * KubeVirt virt-launcher pod's) writes QEMU's pid as it sees it, and QEMU reports its vCPU
 * threads' ids as it sees them; vnumad reads /proc and moves threads and pages with its own.
 * The kernel says both in /proc/PID/status: "NSpid:" lists a task's pid in each namespace from
 * the one /proc belongs to (first) down to the task's own (last). A pid is mapped only to a
 * process of the namespace named: a daemon that writes another pid names at most another
 * process of its own namespace (its pod), never one outside it. Every path is under `root` ("/"
 * live, a fixture tree in tests); nothing is cached here.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* What /proc/PID/ns/pid's target looks like: "pid:[4026531836]". */
#define NSPID_NS_MAX 64
/* Fields of an NSpid line at most: the kernel nests PID namespaces 32 deep (MAX_PID_NS_LEVEL)
 * below the first. */
#define NSPID_LEVELS_MAX 33

/*
 * The PID namespace of process pid (the target of root/proc/PID/ns/pid) into ret; pid 0:
 * vnumad's own (root/proc/self). 0, or -errno (-ESRCH: no such process).
 */
int nspid_ns(const char *root, pid_t pid, char *ret, size_t len);

/* Whether process pid runs in a PID namespace other than vnumad's: 1 another, 0 the same, or
 * -errno (-ESRCH: no such process). */
int nspid_other(const char *root, pid_t pid);

/*
 * An "NSpid:" line's value ("1234\t5\n"): its first field (the task's pid in the namespace of
 * the /proc it was read from) and its last (its pid in its own namespace). 0, or -EINVAL when
 * it has no field, a field that is not a pid, or more than NSPID_LEVELS_MAX fields.
 */
int nspid_parse(const char *value, pid_t *ret_outer, pid_t *ret_inner);

/*
 * The pid under root's /proc of the process whose pid in PID namespace `ns` (as nspid_ns names
 * it) is `inner`: the process whose ns/pid is ns and whose NSpid's last field is inner (and its
 * first, its directory). A process whose namespace or NSpid cannot be read, or whose NSpid does
 * not parse, is passed over. 0, -ESRCH when there is none.
 */
int nspid_find(const char *root, const char *ns, pid_t inner, pid_t *ret);

/*
 * The id under root's /proc of process pid's thread whose id in the process's own PID namespace
 * is `inner` (root/proc/PID/task/TID/status: NSpid's last field inner, its first TID). A thread
 * whose NSpid cannot be read or does not parse is passed over. 0, -ESRCH when no thread of the
 * process has that id (or the process is gone).
 */
int nspid_task(const char *root, pid_t pid, pid_t inner, pid_t *ret);
