/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page placement of another process's memory, behind a table of operations
 * filled at start-up (host/numa_ops.c: libnuma; tests may register their own).
 * host/numa_ops.c is the only file that calls libnuma.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct numa_ops {
    /* move_pages(2) query: status[i] = kernel node of pages[i] or -errno (-ENOENT: not
     * present). Returns 0 or -errno (-ESRCH: process gone, -EPERM). */
    int (*query)(pid_t pid, unsigned long count, void **pages, int *status);
    /* move_pages(2): pages[i] to kernel node nodes[i]. all=false: MPOL_MF_MOVE, only pages
     * this process alone maps (an anonymous backend: KSM-merged pages, shared with other
     * guests, stay); all=true: MPOL_MF_MOVE_ALL (a shared backend, which a vhost-user or
     * virtiofs process maps too). status[i]: the node the page is on afterwards, or -errno;
     * an entry the kernel did not get to keeps what the caller put there. Returns 0, the
     * number of pages not moved (> 0), or -errno. */
    int (*move)(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                bool all);
    /* mbind(MPOL_BIND, MPOL_MF_MOVE_ALL) a file-backed (memfd) mapping of `len` bytes at
     * offset `off` of the QEMU process's file descriptor `fd_path` (/proc/PID/fd/N) to
     * kernel node `node`, so later faults land there. Returns 0 or -errno. */
    int (*bind_file)(const char *fd_path, size_t off, size_t len, int node);
    /* bytes free on kernel node `node` (live), or -errno */
    long long (*node_free)(int node);
    /* For every page whose status is -EFAULT, look up its frame in /proc/PID/pagemap and
     * write the kernel node that frame belongs to (or leave -EFAULT / -ENOENT when it
     * is not present). Needed because a move_pages(2) status query of Linux 6.1 answers
     * -EFAULT for present pages that automatic NUMA balancing has made PROT_NONE.
     * pages[] must be ascending. Returns 0 or -errno. May be NULL. */
    int (*resolve_faulted)(pid_t pid, unsigned long count, void **pages, int *status);
} numa_ops;

/* The libnuma implementation. */
extern const numa_ops numa_libnuma;
