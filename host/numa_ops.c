/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_libnuma: the page placement operations of numa_ops.h on top of libnuma.
 * This is the only file that calls libnuma: its system call wrappers of
 * <numaif.h> (move_pages, mbind) and numa_node_size64(). Every operation
 * returns 0 or -errno and prints nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numa.h>
#include <numaif.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "numa_ops.h"
#include "util.h"

/* Highest node number + 1 a nodemask passed to mbind() covers (the kernel's largest
 * MAX_NUMNODES). */
#define NUMA_MASK_NODES 1024
#define NUMA_MASK_WORDS (NUMA_MASK_NODES / (sizeof(unsigned long) * CHAR_BIT))

static int errno_or(int fallback)
{
    return errno > 0 ? -errno : -fallback;
}

/* move_pages(2) in query mode. Flags 0: a status query needs no CAP_SYS_NICE (MOVE_ALL
 * only matters when pages move). */
static int libnuma_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    long r;

    if (count == 0)
        return 0;
    if (!pages || !status)
        return -EINVAL;
    errno = 0;
    r = move_pages(pid, count, pages, NULL, status, 0);
    if (r < 0)
        return errno_or(EIO);
    return 0;
}

static int libnuma_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status)
{
    long r;

    if (count == 0)
        return 0;
    if (!pages || !nodes || !status)
        return -EINVAL;
    errno = 0;
    r = move_pages(pid, count, pages, nodes, status, MPOL_MF_MOVE_ALL);
    if (r < 0)
        return errno_or(EIO);
    return r > INT32_MAX ? INT32_MAX : (int)r;
}

static void munmap_region(void *addr, size_t len)
{
    if (addr != MAP_FAILED)
        (void)munmap(addr, len);
}

static int libnuma_bind_file(const char *fd_path, size_t off, size_t len, int node)
{
    _cleanup_close_ int fd = -1;
    unsigned long mask[NUMA_MASK_WORDS];
    long page = sysconf(_SC_PAGESIZE);
    size_t aligned_off, map_len;
    void *addr;
    int r = 0;

    if (!fd_path || len == 0 || node < -1 || page <= 0)
        return -EINVAL;
    if (node >= NUMA_MASK_NODES)
        return -EINVAL;

    /* mmap wants a page-aligned offset: start at the page holding `off`. */
    aligned_off = off & ~((size_t)page - 1);
    if (len > SIZE_MAX - (off - aligned_off))
        return -EINVAL;
    map_len = len + (off - aligned_off);

    fd = open(fd_path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return errno_or(EIO);

    addr = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)aligned_off);
    if (addr == MAP_FAILED)
        return errno_or(EIO);

    memset(mask, 0, sizeof(mask));
    errno = 0;
    if (node < 0) {
        /* Back to the default policy (what the backend had before vnumad bound it). The
         * kernel skips a VMA whose own policy already equals the new one, and this fresh
         * mapping's is the default: set "preferred local" first (moves nothing), so the
         * default that follows reaches the shared object's policy. */
        if (mbind(addr, map_len, MPOL_PREFERRED, NULL, 0, 0) < 0 ||
            mbind(addr, map_len, MPOL_DEFAULT, NULL, 0, 0) < 0)
            r = errno_or(EIO);
    } else {
        mask[(unsigned)node / (sizeof(mask[0]) * CHAR_BIT)] |=
            1UL << ((unsigned)node % (sizeof(mask[0]) * CHAR_BIT));
        /* maxnode counts one more than the bits the kernel reads (see mbind(2)). */
        if (mbind(addr, map_len, MPOL_BIND, mask, NUMA_MASK_NODES + 1,
                  MPOL_MF_MOVE | MPOL_MF_MOVE_ALL) < 0)
            r = errno_or(EIO);
    }
    munmap_region(addr, map_len);
    return r;
}

static long long libnuma_node_free(int node)
{
    long long free_bytes = -1;

    if (node < 0)
        return -EINVAL;
    errno = 0;
    if (numa_node_size64(node, &free_bytes) < 0 || free_bytes < 0)
        return errno_or(ENOENT);
    return free_bytes;
}

const numa_ops numa_libnuma = {
    .query = libnuma_query,
    .move = libnuma_move,
    .bind_file = libnuma_bind_file,
    .node_free = libnuma_node_free,
};
