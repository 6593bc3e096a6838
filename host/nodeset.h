/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vn_nodeset: a set of topology node indexes (0 .. nr_nodes-1) with value semantics, sized for
 * the most nodes a Linux kernel is built for. Like vn_cpuset, only the first nw words hold the
 * set, so a host with a few nodes pays for one word.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Most NUMA nodes vnuma handles on one host: the kernel's MAX_NUMNODES for the largest
 * CONFIG_NODES_SHIFT (10, Debian's and Red Hat's x86-64 kernels). */
#define VN_MAX_NODES     1024
#define VN_NODESET_WORDS (VN_MAX_NODES / 64)

/* A zeroed struct is the empty set. */
typedef struct vn_nodeset {
    uint64_t w[VN_NODESET_WORDS];
    unsigned nw; /* words in use */
} vn_nodeset;

/* Index of the first set bit at or after `from` in words w[0..nw-1], or -1. */
static inline int vn_bits_next(const uint64_t *w, unsigned nw, unsigned from)
{
    for (unsigned wi = from / 64; wi < nw; wi++) {
        uint64_t x = w[wi];
        if (wi == from / 64)
            x &= ~0ULL << (from % 64);
        if (x)
            return (int)(wi * 64 + (unsigned)__builtin_ctzll(x));
    }
    return -1;
}

static inline void nodeset_zero(vn_nodeset *s)
{
    s->nw = 0;
}

static inline void nodeset_set(vn_nodeset *s, unsigned n)
{
    if (n >= VN_MAX_NODES)
        return;
    while (s->nw <= n / 64)
        s->w[s->nw++] = 0;
    s->w[n / 64] |= 1ULL << (n % 64);
}

static inline bool nodeset_isset(const vn_nodeset *s, unsigned n)
{
    return n / 64 < s->nw && (s->w[n / 64] >> (n % 64)) & 1;
}

static inline int nodeset_next(const vn_nodeset *s, int prev)
{
    return vn_bits_next(s->w, s->nw, (unsigned)(prev + 1));
}

static inline bool nodeset_empty(const vn_nodeset *s)
{
    return nodeset_next(s, -1) < 0;
}

static inline unsigned nodeset_weight(const vn_nodeset *s)
{
    unsigned k = 0;
    for (unsigned i = 0; i < s->nw; i++)
        k += (unsigned)__builtin_popcountll(s->w[i]);
    return k;
}

/* n is in s, or s is empty (a limit of no nodes: every node). */
static inline bool nodeset_allows(const vn_nodeset *s, unsigned n)
{
    return s->nw == 0 || nodeset_empty(s) || nodeset_isset(s, n);
}

/* The one node of a single-node set, else -1. */
static inline int nodeset_single(const vn_nodeset *s)
{
    int n = nodeset_next(s, -1);
    return n >= 0 && nodeset_next(s, n) < 0 ? n : -1;
}

/* out = a & b (out may alias either input) */
static inline void nodeset_and(vn_nodeset *out, const vn_nodeset *a, const vn_nodeset *b)
{
    unsigned n = a->nw < b->nw ? a->nw : b->nw;
    for (unsigned i = 0; i < n; i++)
        out->w[i] = a->w[i] & b->w[i];
    out->nw = n;
}

static inline bool nodeset_equal(const vn_nodeset *a, const vn_nodeset *b)
{
    unsigned n = a->nw > b->nw ? a->nw : b->nw;
    for (unsigned i = 0; i < n; i++)
        if ((i < a->nw ? a->w[i] : 0) != (i < b->nw ? b->w[i] : 0))
            return false;
    return true;
}

/* The set of nodes 0 .. n-1. */
static inline vn_nodeset nodeset_first_n(unsigned n)
{
    vn_nodeset s = {.nw = 0};
    for (unsigned i = 0; i < n && i < VN_MAX_NODES; i++)
        nodeset_set(&s, i);
    return s;
}

/* The set of node indexes 0..63 whose bits are set in m (tests and small literals). */
static inline vn_nodeset nodeset_from_u64(uint64_t m)
{
    vn_nodeset s = {.nw = 1};
    s.w[0] = m;
    return s;
}

/* s holds exactly the node indexes 0..63 whose bits are set in m. */
static inline bool nodeset_is_u64(const vn_nodeset *s, uint64_t m)
{
    vn_nodeset o = nodeset_from_u64(m);
    return nodeset_equal(s, &o);
}

#define NODESET_FOREACH(n, set)                                                                    \
    for (int n = nodeset_next(set, -1); n >= 0; n = nodeset_next(set, n))
