/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vn_cpuset: a fixed-size CPU (or node) bitmap with value semantics, so the
 * decide stage can copy and compare sets without allocating. Text conversion
 * uses the Linux list format ("0-3,8") through hwloc's bitmap parser.
 */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest host CPU index + 1 that vnuma handles: the most a Linux kernel is built for
 * (CONFIG_NR_CPUS, 8192 on Debian's and Red Hat's largest configurations); bigger hosts are
 * refused clearly. */
#define VN_MAX_CPUS     8192
#define VN_CPUSET_WORDS (VN_MAX_CPUS / 64)
/* The longest Linux list text of a set, its NUL included: "0-1,3-4,6-7,..." takes fewer than
 * 4 bytes per CPU number. */
#define VN_CPULIST_MAX (VN_MAX_CPUS * 4)

/* Only the first nw words hold the set (the words past them mean nothing and are never read):
 * a host's sets fill a few words, and every operation stops there instead of walking all
 * VN_MAX_CPUS bits. A zeroed struct is the empty set; an output is written, never read. */
typedef struct vn_cpuset {
    uint64_t w[VN_CPUSET_WORDS];
    unsigned nw; /* words in use */
} vn_cpuset;

/* word i of s: 0 past the words in use */
static inline uint64_t cpuset_word(const vn_cpuset *s, unsigned i)
{
    return i < s->nw ? s->w[i] : 0;
}

static inline void cpuset_zero(vn_cpuset *s)
{
    s->nw = 0;
}

static inline void cpuset_set(vn_cpuset *s, unsigned cpu)
{
    if (cpu >= VN_MAX_CPUS)
        return;
    while (s->nw <= cpu / 64)
        s->w[s->nw++] = 0;
    s->w[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline bool cpuset_isset(const vn_cpuset *s, unsigned cpu)
{
    return cpu < VN_MAX_CPUS && (cpuset_word(s, cpu / 64) >> (cpu % 64)) & 1;
}

static inline unsigned cpuset_weight(const vn_cpuset *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < s->nw; i++)
        n += (unsigned)__builtin_popcountll(s->w[i]);
    return n;
}

static inline bool cpuset_empty(const vn_cpuset *s)
{
    for (unsigned i = 0; i < s->nw; i++)
        if (s->w[i])
            return false;
    return true;
}

static inline bool cpuset_equal(const vn_cpuset *a, const vn_cpuset *b)
{
    unsigned n = a->nw > b->nw ? a->nw : b->nw;
    for (unsigned i = 0; i < n; i++)
        if (cpuset_word(a, i) != cpuset_word(b, i))
            return false;
    return true;
}

/* out = a & b (out may alias either input) */
static inline void cpuset_and(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    unsigned n = a->nw < b->nw ? a->nw : b->nw;
    for (unsigned i = 0; i < n; i++)
        out->w[i] = a->w[i] & b->w[i];
    out->nw = n;
}

/* out = a | b (out may alias either input) */
static inline void cpuset_or(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    unsigned n = a->nw > b->nw ? a->nw : b->nw;
    for (unsigned i = 0; i < n; i++)
        out->w[i] = cpuset_word(a, i) | cpuset_word(b, i);
    out->nw = n;
}

/* out = a & ~b (out may alias either input) */
static inline void cpuset_andnot(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    unsigned n = a->nw;
    for (unsigned i = 0; i < n; i++)
        out->w[i] = a->w[i] & ~cpuset_word(b, i);
    out->nw = n;
}

static inline bool cpuset_intersects(const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0, n = a->nw < b->nw ? a->nw : b->nw; i < n; i++)
        if (a->w[i] & b->w[i])
            return true;
    return false;
}

/* true when every bit of sub is in super */
static inline bool cpuset_subset(const vn_cpuset *sub, const vn_cpuset *super)
{
    for (unsigned i = 0; i < sub->nw; i++)
        if (sub->w[i] & ~cpuset_word(super, i))
            return false;
    return true;
}

/* Index of the first set bit, or -1 when empty. */
int cpuset_first(const vn_cpuset *s);

/* Index of the next set bit after prev, or -1. Iterate with cpuset_first/cpuset_next. */
int cpuset_next(const vn_cpuset *s, int prev);

#define CPUSET_FOREACH(cpu, set)                                                                   \
    for (int cpu = cpuset_first(set); cpu >= 0; cpu = cpuset_next(set, cpu))

/*
 * Parse a Linux list string ("0-3,8-11") into *out. Returns 0, -EINVAL for a
 * malformed string, -ERANGE when an index is >= VN_MAX_CPUS. *out is written
 * only on success. The empty string is the empty set.
 */
int cpuset_parse(const char *str, vn_cpuset *out);

/* The affinity of thread tid (0: the caller) from sched_getaffinity(2), sized for VN_MAX_CPUS
 * CPUs (glibc's cpu_set_t holds 1024). 0 or -errno (-ESRCH: no such thread). */
int cpuset_get_affinity(pid_t tid, vn_cpuset *out);

/* sched_setaffinity(2) of thread tid to s. 0 or -errno. */
int cpuset_set_affinity(pid_t tid, const vn_cpuset *s);

/* Format as a Linux list string into buf (always NUL-terminated). Returns 0 or -ENOSPC. */
int cpuset_format(const vn_cpuset *s, char *buf, size_t len);
