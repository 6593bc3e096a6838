/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the memory benchmarks (sample-bench.c, migrate-bench.c): a
 * "target" child process that stands for QEMU (it owns an anonymous region, like a
 * memory-backend-ram guest RAM block), node CPU lists, raw mbind, a clock, a seeded
 * generator and a log-linear latency histogram. Benchmark code, not product code:
 * mbind is the raw system call (host/numa_ops.c stays the only libnuma user).
 */
#pragma once

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BT_PAGE 4096ULL

static inline uint64_t bt_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline double bt_now_s(void)
{
    return (double)bt_now_ns() / 1e9;
}

/* xorshift64: repeatable layouts and offsets */
static inline uint64_t bt_rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline int bt_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double bt_median(double *v, unsigned n)
{
    qsort(v, n, sizeof(*v), bt_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* CPUs of kernel node `node` from sysfs; 0 or -errno */
static inline int bt_node_cpus(int node, cpu_set_t *ret)
{
    char path[96], buf[1024], *p;
    FILE *f;

    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
    f = fopen(path, "re");
    if (!f)
        return -errno;
    if (!fgets(buf, sizeof(buf), f)) {
        fclose(f);
        return -EIO;
    }
    fclose(f);
    CPU_ZERO(ret);
    p = buf;
    while (*p && *p != '\n') {
        char *end;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtoul(end + 1, &end, 10);
        for (unsigned long c = a; c <= b && c < CPU_SETSIZE; c++)
            CPU_SET(c, ret);
        p = *end == ',' ? end + 1 : end;
    }
    return CPU_COUNT(ret) ? 0 : -ENOENT;
}

static inline int bt_nr_nodes(void)
{
    int n = 0;
    char path[96];

    for (;; n++) {
        snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
        if (access(path, F_OK) != 0)
            return n;
    }
}

/* Bind the calling thread to the CPUs of kernel node `node`. */
static inline int bt_bind_thread_to_node(int node)
{
    cpu_set_t s;
    int r = bt_node_cpus(node, &s);

    if (r < 0)
        return r;
    return sched_setaffinity(0, sizeof(s), &s) < 0 ? -errno : 0;
}

#define BT_MPOL_DEFAULT    0
#define BT_MPOL_BIND       2
#define BT_MPOL_INTERLEAVE 3

/* mbind(2) of [addr, addr+len) to the nodes of `mask` (bit n = kernel node n). */
static inline int bt_mbind(void *addr, size_t len, int mode, unsigned long mask)
{
    unsigned long m[16] = {mask};

    if (syscall(SYS_mbind, addr, len, mode, mode == BT_MPOL_DEFAULT ? NULL : m,
                mode == BT_MPOL_DEFAULT ? 0UL : (unsigned long)(sizeof(m) * 8 + 1), 0U) < 0)
        return -errno;
    return 0;
}

/* ---- latency histogram: exact below 64 ns, then 32 buckets per power of two (3%) ---- */

#define BT_HIST_BUCKETS 1400

typedef struct bt_hist {
    uint64_t n;
    uint64_t max;
    uint64_t sum;
    uint64_t b[BT_HIST_BUCKETS];
} bt_hist;

static inline unsigned bt_hist_index(uint64_t v)
{
    unsigned msb, shift, idx;

    if (v < 64)
        return (unsigned)v;
    msb = 63u - (unsigned)__builtin_clzll(v);
    shift = msb - 5;
    idx = shift * 32 + (unsigned)(v >> shift);
    return idx < BT_HIST_BUCKETS ? idx : BT_HIST_BUCKETS - 1;
}

static inline uint64_t bt_hist_value(unsigned idx)
{
    unsigned shift;

    if (idx < 64)
        return idx;
    shift = idx / 32 - 1;
    return (uint64_t)(idx - shift * 32) << shift;
}

static inline void bt_hist_add(bt_hist *h, uint64_t v)
{
    h->n++;
    h->sum += v;
    if (v > h->max)
        h->max = v;
    h->b[bt_hist_index(v)]++;
}

static inline void bt_hist_merge(bt_hist *into, const bt_hist *h)
{
    into->n += h->n;
    into->sum += h->sum;
    if (h->max > into->max)
        into->max = h->max;
    for (unsigned i = 0; i < BT_HIST_BUCKETS; i++)
        into->b[i] += h->b[i];
}

/* value at quantile q (0..1), lower edge of its bucket; the max is exact */
static inline uint64_t bt_hist_quantile(const bt_hist *h, double q)
{
    uint64_t want, seen = 0;

    if (h->n == 0)
        return 0;
    want = (uint64_t)(q * (double)h->n);
    if (want >= h->n)
        return h->max;
    for (unsigned i = 0; i < BT_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen > want)
            return bt_hist_value(i);
    }
    return h->max;
}

/* ---- the target process ---- */

typedef struct bt_target {
    pid_t pid;
    int cmd_fd;   /* parent -> child */
    int reply_fd; /* child -> parent */
    uint64_t hva; /* the region in the child */
    uint64_t len;
} bt_target;

/*
 * The child's life: it gets the read end of the command pipe and the write end of the
 * reply pipe. It must write the region's address (uint64_t) first, then serve until
 * the command pipe closes, then _exit().
 */
typedef void (*bt_child_fn)(void *arg, int cmd_fd, int reply_fd);

static inline int bt_read_full(int fd, void *buf, size_t len)
{
    char *p = buf;

    while (len) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPIPE;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static inline int bt_write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len) {
        ssize_t r = write(fd, p, len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPIPE;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static inline int bt_target_start(bt_target *t, uint64_t len, bt_child_fn fn, void *arg)
{
    int cmd[2], reply[2];

    if (pipe(cmd) < 0 || pipe(reply) < 0)
        return -errno;
    t->pid = fork();
    if (t->pid < 0)
        return -errno;
    if (t->pid == 0) {
        close(cmd[1]);
        close(reply[0]);
        fn(arg, cmd[0], reply[1]);
        _exit(0);
    }
    close(cmd[0]);
    close(reply[1]);
    t->cmd_fd = cmd[1];
    t->reply_fd = reply[0];
    t->len = len;
    return bt_read_full(t->reply_fd, &t->hva, sizeof(t->hva));
}

static inline void bt_target_stop(bt_target *t)
{
    if (t->pid <= 0)
        return;
    close(t->cmd_fd);
    close(t->reply_fd);
    (void)waitpid(t->pid, NULL, 0);
    t->pid = 0;
}

/* In the child: map `len` bytes of anonymous memory (4 KiB pages unless thp). */
static inline void *bt_map_region(uint64_t len, bool thp)
{
    void *p =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

    if (p == MAP_FAILED) {
        perror("mmap");
        _exit(1);
    }
    (void)madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

static inline void bt_touch(void *p, uint64_t len)
{
    for (uint64_t off = 0; off < len; off += BT_PAGE)
        ((volatile char *)p)[off] = 1;
}
