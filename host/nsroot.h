/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file as another process sees it (host/nsroot.c): the libvirt daemon of a KubeVirt pod keeps
 * its files in the pod's mount namespace, under paths that mean something else on the host. They
 * are opened from the process's root (/proc/PID/root), every symbolic link and ".." resolved
 * inside that root (openat2 RESOLVE_IN_ROOT, no magic links), so that a path the daemon names,
 * or a link planted by whoever may write there, leads to nothing outside it.
 */
#pragma once

#include <sys/types.h>

/*
 * Open `path` (absolute as process pid sees it, or relative to its root) as process pid sees it,
 * from root/proc/PID/root (root: "/" live, a fixture tree in tests; there root/proc/PID/root is a
 * plain directory). flags as open(2)'s (O_CLOEXEC is added); O_NOFOLLOW applies to the last
 * component as open(2)'s. An fd, or -errno: -ESRCH when the process is gone, -ENAMETOOLONG, or
 * the open's. Without openat2 (a kernel before 5.6; valgrind 3.19 has none) nsroot_walk does the
 * same.
 */
int nsroot_open(const char *root, pid_t pid, const char *path, int flags);

/*
 * `path` opened under directory rfd as its root, without openat2: one component at a time
 * (openat O_NOFOLLOW), each symbolic link read and its target resolved from rfd (absolute) or
 * from where it is (relative), ".." never above rfd, at most 40 links (-ELOOP) and 64
 * directories deep (-ENAMETOOLONG). A magic link (/proc/PID/fd/N) is resolved by its text,
 * inside rfd, never followed. What nsroot_open falls back to; tests call it directly. An fd or
 * -errno.
 */
int nsroot_walk(int rfd, const char *path, int flags);
