/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "cpuset.h"

#include <errno.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int cpuset_first(const vn_cpuset *s)
{
    return cpuset_next(s, -1);
}

int cpuset_next(const vn_cpuset *s, int prev)
{
    unsigned start = (unsigned)(prev + 1);
    for (unsigned wi = start / 64; wi < s->nw; wi++) {
        uint64_t w = s->w[wi];
        if (wi == start / 64)
            w &= ~0ULL << (start % 64);
        if (w)
            return (int)(wi * 64 + (unsigned)__builtin_ctzll(w));
    }
    return -1;
}

static void bitmap_freep(hwloc_bitmap_t *b)
{
    if (*b)
        hwloc_bitmap_free(*b);
}

/* 0 when s is a well-formed list of CPUs below VN_MAX_CPUS, -EINVAL when it is not a list,
 * -ERANGE when a number is too large (checked here: hwloc would allocate a bitmap as large as
 * the number, 512 MiB for "99999999999999999999"). */
static int cpulist_check(const char *s)
{
    if (*s == '\0')
        return 0;
    for (;;) {
        unsigned long a, b;
        char *end;
        if (*s < '0' || *s > '9')
            return -EINVAL;
        errno = 0;
        a = b = strtoul(s, &end, 10);
        if (errno)
            return -ERANGE;
        s = end;
        if (*s == '-') {
            s++;
            if (*s < '0' || *s > '9')
                return -EINVAL;
            errno = 0;
            b = strtoul(s, &end, 10);
            if (errno)
                return -ERANGE;
            s = end;
            if (b < a)
                return -EINVAL;
        }
        if (*s != '\0' && *s != ',')
            return -EINVAL;
        if (b >= VN_MAX_CPUS)
            return -ERANGE;
        if (*s == '\0')
            return 0;
        s++;
    }
}

int cpuset_parse(const char *str, vn_cpuset *out)
{
    _cleanup_(bitmap_freep) hwloc_bitmap_t b = NULL;
    vn_cpuset tmp;
    int r;

    if (!str)
        return -EINVAL;
    /* hwloc's list parser is lenient ("3-1,5", "1,,2", "1-2-3" pass): insist on the
     * grammar of a Linux cpu list, N or N-M with N <= M, joined by single commas,
     * before handing it over. */
    r = cpulist_check(str);
    if (r < 0)
        return r;
    if (str[0] == '\0') {
        cpuset_zero(out);
        return 0;
    }
    b = hwloc_bitmap_alloc();
    if (!b)
        return -ENOMEM;
    if (hwloc_bitmap_list_sscanf(b, str) < 0)
        return -EINVAL;
    /* hwloc_bitmap_last() is -1 for an infinite set ("3-" parses as one) */
    if (hwloc_bitmap_weight(b) < 0 || hwloc_bitmap_last(b) < 0)
        return -EINVAL;
    if (hwloc_bitmap_last(b) >= VN_MAX_CPUS)
        return -ERANGE;
    cpuset_zero(&tmp);
    for (int i = hwloc_bitmap_first(b); i >= 0; i = hwloc_bitmap_next(b, i))
        cpuset_set(&tmp, (unsigned)i);
    *out = tmp;
    return 0;
}

int cpuset_format(const vn_cpuset *s, char *buf, size_t len)
{
    _cleanup_(bitmap_freep) hwloc_bitmap_t b = hwloc_bitmap_alloc();
    int r;

    if (!b || len == 0)
        return -ENOMEM;
    CPUSET_FOREACH(cpu, s)
    hwloc_bitmap_set(b, (unsigned)cpu);
    if (hwloc_bitmap_iszero(b)) {
        buf[0] = '\0';
        return 0;
    }
    r = hwloc_bitmap_list_snprintf(buf, len, b);
    if (r < 0 || (size_t)r >= len)
        return -ENOSPC;
    return 0;
}

/* The kernel's CPU mask, as glibc's cpu_set_t lays it out (CPU i: bit i % 64 of word i / 64,
 * __cpu_mask words), sized for VN_MAX_CPUS: on the stack, read word by word. */
#define AFFINITY_BITS  (8 * sizeof(__cpu_mask))
#define AFFINITY_WORDS (VN_MAX_CPUS / AFFINITY_BITS)

int cpuset_get_affinity(pid_t tid, vn_cpuset *out)
{
    __cpu_mask mask[AFFINITY_WORDS];

    if (sched_getaffinity(tid, sizeof(mask), (cpu_set_t *)mask) < 0)
        return -errno;
    cpuset_zero(out);
    for (unsigned i = 0; i < AFFINITY_WORDS; i++)
        for (__cpu_mask w = mask[i]; w; w &= w - 1)
            cpuset_set(out, i * AFFINITY_BITS + (unsigned)__builtin_ctzl(w));
    return 0;
}

int cpuset_set_affinity(pid_t tid, const vn_cpuset *s)
{
    __cpu_mask mask[AFFINITY_WORDS] = {0};

    CPUSET_FOREACH(cpu, s)
    {
        mask[cpu / AFFINITY_BITS] |= (__cpu_mask)1 << (cpu % AFFINITY_BITS);
    }
    if (sched_setaffinity(tid, sizeof(mask), (cpu_set_t *)mask) < 0)
        return -errno;
    return 0;
}
