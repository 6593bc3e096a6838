/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page placement of another process's memory, behind a table of operations
 * filled at start-up (host/numa_ops.c: libnuma; tests may register their own).
 * host/numa_ops.c is the only file that calls libnuma.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"

/* A memory policy as mbind(2) and get_mempolicy(2) see it. */
typedef struct vn_mempolicy {
    int mode;        /* MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, ... of <numaif.h>, with its
                      * mode flags (MPOL_F_STATIC_NODES, ...) */
    vn_cpuset nodes; /* kernel node numbers (a 1024-bit set, the kernel's largest) */
} vn_mempolicy;

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
    /* Set the shared policy of `len` bytes at offset `off` of a file QEMU maps (a memfd or
     * tmpfs backend, through /proc/PID/map_files/A-B) to *want with mbind(2), moving nothing
     * (moves go through `move`, within the budget); when old is not NULL, first write the
     * policy that was there (get_mempolicy(2) MPOL_F_ADDR at `off`). Only a regular file on
     * tmpfs (shmem: a memfd, /dev/shm) is opened, checked before the open (the link is QEMU's
     * to change) and after it (the same file): -EOPNOTSUPP for a regular file elsewhere (it has
     * no shared policy), -EPERM for anything else (a device, an anonymous inode). Returns 0 or
     * -errno. */
    int (*file_policy)(const char *fd_path, size_t off, size_t len, const vn_mempolicy *want,
                       vn_mempolicy *old);
    /* bytes free on kernel node `node` (live), or -errno */
    long long (*node_free)(int node);
    /* free huge pages of `page_size` bytes on kernel node `node` (live), or -errno (-ENOENT:
     * no pool of that size). May be NULL: hugetlb moves are then not limited by it. */
    long long (*node_free_huge)(int node, uint64_t page_size);
    /* For every page whose status is -EFAULT, look up its frame in /proc/PID/pagemap and
     * write the kernel node that frame belongs to (or leave -EFAULT / -ENOENT when it
     * is not present). Needed because a move_pages(2) status query of Linux 6.1 answers
     * -EFAULT for present pages that automatic NUMA balancing has made PROT_NONE.
     * pages[] must be ascending. Returns 0 or -errno. May be NULL. */
    int (*resolve_faulted)(pid_t pid, unsigned long count, void **pages, int *status);
    /* The calls may be made from several threads at once (act.c moves cells in parallel);
     * false: one cell at a time. */
    bool thread_safe;
} numa_ops;

/* The libnuma implementation. */
extern const numa_ops numa_libnuma;
