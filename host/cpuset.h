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

/* Largest host CPU index + 1 that vnuma handles; bigger hosts are refused clearly. */
#define VN_MAX_CPUS     1024
#define VN_CPUSET_WORDS (VN_MAX_CPUS / 64)

typedef struct vn_cpuset {
    uint64_t w[VN_CPUSET_WORDS];
} vn_cpuset;

static inline void cpuset_zero(vn_cpuset *s)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        s->w[i] = 0;
}

static inline void cpuset_set(vn_cpuset *s, unsigned cpu)
{
    if (cpu < VN_MAX_CPUS)
        s->w[cpu / 64] |= 1ULL << (cpu % 64);
}

static inline bool cpuset_isset(const vn_cpuset *s, unsigned cpu)
{
    return cpu < VN_MAX_CPUS && (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

static inline unsigned cpuset_weight(const vn_cpuset *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        n += (unsigned)__builtin_popcountll(s->w[i]);
    return n;
}

static inline bool cpuset_empty(const vn_cpuset *s)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        if (s->w[i])
            return false;
    return true;
}

static inline bool cpuset_equal(const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        if (a->w[i] != b->w[i])
            return false;
    return true;
}

/* out = a & b (out may alias either input) */
static inline void cpuset_and(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        out->w[i] = a->w[i] & b->w[i];
}

/* out = a | b (out may alias either input) */
static inline void cpuset_or(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        out->w[i] = a->w[i] | b->w[i];
}

/* out = a & ~b (out may alias either input) */
static inline void cpuset_andnot(vn_cpuset *out, const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        out->w[i] = a->w[i] & ~b->w[i];
}

static inline bool cpuset_intersects(const vn_cpuset *a, const vn_cpuset *b)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        if (a->w[i] & b->w[i])
            return true;
    return false;
}

/* true when every bit of sub is in super */
static inline bool cpuset_subset(const vn_cpuset *sub, const vn_cpuset *super)
{
    for (unsigned i = 0; i < VN_CPUSET_WORDS; i++)
        if (sub->w[i] & ~super->w[i])
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

/* The kernel's CPU mask (sched_getaffinity(2)) as a set; CPUs past VN_MAX_CPUS are dropped. */
void cpuset_from_sched(const cpu_set_t *in, vn_cpuset *out);

/* Format as a Linux list string into buf (always NUL-terminated). Returns 0 or -ENOSPC. */
int cpuset_format(const vn_cpuset *s, char *buf, size_t len);
