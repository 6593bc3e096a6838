/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * numa_libnuma: the page placement operations of numa_ops.h on top of libnuma.
 * This is the only file that calls libnuma: its system call wrappers of
 * <numaif.h> (move_pages, mbind) and numa_node_size64(). Every operation
 * returns 0 or -errno and prints nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <numa.h>
#include <numaif.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "numa_ops.h"
#include "util.h"

/* Highest node number + 1 a nodemask passed to mbind() covers (the kernel's largest
 * MAX_NUMNODES). */
#define NUMA_MASK_NODES 1024
#define NUMA_MASK_WORDS (NUMA_MASK_NODES / (sizeof(unsigned long) * CHAR_BIT))
/* The mode flags get_mempolicy(2) may return with a mode (<linux/mempolicy.h>'s
 * MPOL_MODE_FLAGS: static nodes, relative nodes, NUMA balancing). */
#define NUMA_MODE_FLAGS ((1 << 15) | (1 << 14) | (1 << 13))

static int errno_or(int fallback)
{
    return errno > 0 ? -errno : -fallback;
}

/* move_pages(2) in query mode. Flags 0: a status query needs no CAP_SYS_NICE (MOVE_ALL
 * only matters when pages move). With valid flags, EINVAL means the process has no memory
 * any more (QEMU exiting, a zombie): the domain is gone, -ESRCH, as for a pid that is gone
 * (libnuma_move likewise). */
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
        return errno == EINVAL ? -ESRCH : errno_or(EIO);
    return 0;
}

static int libnuma_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                        bool all)
{
    long r;

    if (count == 0)
        return 0;
    if (!pages || !nodes || !status)
        return -EINVAL;
    errno = 0;
    r = move_pages(pid, count, pages, nodes, status, all ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE);
    if (r < 0)
        return errno == EINVAL ? -ESRCH : errno_or(EIO);
    return r > INT32_MAX ? INT32_MAX : (int)r;
}

static void munmap_region(void *addr, size_t len)
{
    if (addr != MAP_FAILED)
        (void)munmap(addr, len);
}

static int libnuma_file_policy(const char *fd_path, size_t off, size_t len,
                               const vn_mempolicy *want, vn_mempolicy *old)
{
    _cleanup_close_ int fd = -1;
    unsigned long mask[NUMA_MASK_WORDS];
    long page = sysconf(_SC_PAGESIZE);
    struct stat st, fst;
    struct statfs sf;
    size_t aligned_off, map_len;
    int mode, r = 0;
    void *addr;

    if (!fd_path || len == 0 || !want || page <= 0)
        return -EINVAL;
    for (int n = cpuset_first(&want->nodes); n >= 0; n = cpuset_next(&want->nodes, n))
        if (n >= NUMA_MASK_NODES)
            return -EINVAL;

    /* mmap wants a page-aligned offset: start at the page holding `off`. */
    aligned_off = off & ~((size_t)page - 1);
    if (len > SIZE_MAX - (off - aligned_off))
        return -EINVAL;
    map_len = len + (off - aligned_off);

    /* what the link names, before opening it read-write as root: a regular file on tmpfs */
    if (stat(fd_path, &st) < 0 || statfs(fd_path, &sf) < 0)
        return errno_or(EIO);
    if (!S_ISREG(st.st_mode))
        return -EPERM;
    if ((unsigned long)sf.f_type != (unsigned long)TMPFS_MAGIC)
        return -EOPNOTSUPP;
    fd = open(fd_path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return errno_or(EIO);
    if (fstat(fd, &fst) < 0)
        return errno_or(EIO);
    if (fst.st_dev != st.st_dev || fst.st_ino != st.st_ino)
        return -EPERM; /* the mapping changed between the two: not the file checked */
    addr = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)aligned_off);
    if (addr == MAP_FAILED)
        return errno_or(EIO);

    if (old) {
        /* on a shared mapping this is the file's own (shared) policy at that offset */
        memset(mask, 0, sizeof(mask));
        memset(old, 0, sizeof(*old));
        errno = 0;
        if (get_mempolicy(&mode, mask, NUMA_MASK_NODES, (char *)addr + (off - aligned_off),
                          MPOL_F_ADDR) < 0) {
            r = errno_or(EIO);
            goto out;
        }
        old->mode = mode;
        for (unsigned n = 0; n < NUMA_MASK_NODES && n < VN_MAX_CPUS; n++)
            if (mask[n / (sizeof(mask[0]) * CHAR_BIT)] &
                (1UL << (n % (sizeof(mask[0]) * CHAR_BIT))))
                cpuset_set(&old->nodes, n);
    }

    memset(mask, 0, sizeof(mask));
    CPUSET_FOREACH(n, &want->nodes)
    {
        mask[(unsigned)n / (sizeof(mask[0]) * CHAR_BIT)] |=
            1UL << ((unsigned)n % (sizeof(mask[0]) * CHAR_BIT));
    }
    errno = 0;
    if ((want->mode & ~NUMA_MODE_FLAGS) == MPOL_DEFAULT) {
        /* The kernel skips a VMA whose own policy already equals the new one, and this
         * fresh mapping's is the default: set "preferred local" first (moves nothing), so
         * the default that follows reaches the shared object's policy. */
        if (mbind(addr, map_len, MPOL_PREFERRED, NULL, 0, 0) < 0 ||
            mbind(addr, map_len, MPOL_DEFAULT, NULL, 0, 0) < 0)
            r = errno_or(EIO);
    } else if (mbind(addr, map_len, want->mode, cpuset_empty(&want->nodes) ? NULL : mask,
                     cpuset_empty(&want->nodes) ? 0 : NUMA_MASK_NODES + 1, 0) < 0) {
        /* maxnode counts one more than the bits the kernel reads (see mbind(2)); no
         * MPOL_MF_MOVE: the pages move through move_pages(2), within the budget */
        r = errno_or(EIO);
    }
out:
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

/* ---- pagemap: frame -> node ---- */

#define PAGEMAP_PRESENT  (1ULL << 63)
#define PAGEMAP_PFN_MASK ((1ULL << 55) - 1)
#define PFN_MAP_MAX      65536 /* memory blocks remembered (a 64 TiB host with 1 GiB blocks) */

typedef struct pfn_block {
    uint64_t first_pfn;
    uint64_t nr_pfns;
    int node;
} pfn_block;

static pfn_block *pfn_map;
static unsigned nr_pfn_map;
static pthread_once_t pfn_map_once = PTHREAD_ONCE_INIT; /* samples run on several threads */

static long long libnuma_node_free_huge(int node, uint64_t page_size)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[128];
    unsigned long long pages;

    if (node < 0 || page_size < 1024)
        return -EINVAL;
    (void)snprintf(path, sizeof(path),
                   "/sys/devices/system/node/node%d/hugepages/hugepages-%llukB/free_hugepages",
                   node, (unsigned long long)(page_size / 1024));
    f = fopen(path, "re");
    if (!f)
        return errno_or(EIO);
    if (fscanf(f, "%llu", &pages) != 1)
        return -EIO;
    return pages > LLONG_MAX ? LLONG_MAX : (long long)pages;
}

static int cmp_block(const void *a, const void *b)
{
    const pfn_block *x = a, *y = b;
    return x->first_pfn < y->first_pfn ? -1 : x->first_pfn > y->first_pfn;
}

/* Memory block -> node, from /sys/devices/system/node/nodeN/memoryM (built once). */
static void load_pfn_map(void)
{
    char path[128], buf[64];
    uint64_t block_bytes = 0;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f;

    f = fopen("/sys/devices/system/memory/block_size_bytes", "re");
    if (!f)
        return;
    if (fgets(buf, sizeof(buf), f))
        block_bytes = strtoull(buf, NULL, 16);
    fclose(f);
    if (!block_bytes || page <= 0)
        return;
    pfn_map = calloc(PFN_MAP_MAX, sizeof(*pfn_map));
    if (!pfn_map)
        return;
    for (int node = 0; node < NUMA_MASK_NODES; node++) {
        DIR *d;
        struct dirent *de;
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", node);
        d = opendir(path);
        if (!d)
            continue;
        while ((de = readdir(d)) && nr_pfn_map < PFN_MAP_MAX) {
            char *end;
            unsigned long long m;
            if (strncmp(de->d_name, "memory", 6) != 0)
                continue;
            m = strtoull(de->d_name + 6, &end, 10);
            if (end == de->d_name + 6 || *end)
                continue;
            pfn_map[nr_pfn_map++] = (pfn_block){.first_pfn = m * block_bytes / (uint64_t)page,
                                                .nr_pfns = block_bytes / (uint64_t)page,
                                                .node = node};
        }
        closedir(d);
    }
    qsort(pfn_map, nr_pfn_map, sizeof(*pfn_map), cmp_block);
}

static int pfn_node(uint64_t pfn)
{
    unsigned lo = 0, hi = nr_pfn_map;

    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (pfn < pfn_map[mid].first_pfn)
            hi = mid;
        else if (pfn >= pfn_map[mid].first_pfn + pfn_map[mid].nr_pfns)
            lo = mid + 1;
        else
            return pfn_map[mid].node;
    }
    return -1;
}

static int libnuma_resolve_faulted(pid_t pid, unsigned long count, void **pages, int *status)
{
    char path[64];
    _cleanup_close_ int fd = -1;
    long page = sysconf(_SC_PAGESIZE);

    (void)pthread_once(&pfn_map_once, load_pfn_map);
    if (!nr_pfn_map || page <= 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    for (unsigned long i = 0; i < count; i++) {
        uint64_t entry;
        off_t off;
        if (status[i] != -EFAULT)
            continue;
        off = (off_t)((uintptr_t)pages[i] / (uint64_t)page * sizeof(entry));
        if (pread(fd, &entry, sizeof(entry), off) != (ssize_t)sizeof(entry))
            continue;
        if (!(entry & PAGEMAP_PRESENT) || !(entry & PAGEMAP_PFN_MASK))
            continue; /* not present, or the PFN is hidden (no CAP_SYS_ADMIN) */
        int node = pfn_node(entry & PAGEMAP_PFN_MASK);
        if (node >= 0)
            status[i] = node;
    }
    return 0;
}

const numa_ops numa_libnuma = {
    .query = libnuma_query,
    .move = libnuma_move,
    .file_policy = libnuma_file_policy,
    .node_free = libnuma_node_free,
    .node_free_huge = libnuma_node_free_huge,
    .resolve_faulted = libnuma_resolve_faulted,
    .thread_safe = true,
};
