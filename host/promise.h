/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Room promised to domains that are on their way here (promise.c). The qemu hook's `place`
 * (place.c) puts each cell's memory on a node before that memory arrives: until it has, the
 * kernel's free memory of the node still shows the room as free, and a second arrival placed
 * meanwhile, or a pass moving another domain's memory there, would be given it again. vnumad
 * keeps what it promised to each such domain (keyed by UUID; a new `place` of the same UUID
 * replaces it) and counts it as used in every later `place` and in every pass's decision
 * (promise_apply) until the domain arrived and was sampled once (its memory is then in the
 * kernel's reading), it stopped, or PROMISE_EXPIRY_S passed.
 *
 * No I/O and no clock: the caller hands in the time (monotonic seconds), and logs what it
 * decides from a promise's going, except an expiry (promise_expire), which only this module
 * sees.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "topology.h"

/* At most this many promises are kept: a new one when the table is full drops the oldest
 * (far more than the migrations a host takes in at once). */
#define PROMISE_MAX 256
/* A promise never kept after this long (monotonic seconds): a long live migration (a large
 * guest over a slow link, or one that converges slowly) is over well within it; one that
 * failed before QEMU started here (no event says so) frees its room by then. */
#define PROMISE_EXPIRY_S (30 * 60.0)

/* The memory of one placed cell: bytes on node index `node`, of pages of page_size (a huge
 * page size of the node's pools: huge pages; else the node's free memory). */
typedef struct promise_cell {
    unsigned node;
    uint64_t page_size;
    uint64_t bytes;
} promise_cell;

typedef struct promise {
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    double made_s;         /* when place made it (monotonic seconds) */
    uint64_t seq;          /* the order promises were made in: the oldest goes first */
    bool arrived;          /* it runs here with all its memory (promise_arrived) */
    uint64_t arrived_pass; /* ... as of this pass number: a later pass's sample releases it */
    bool counted;          /* a pass counted it already (its log line is written once) */
    unsigned nr_cells;
    promise_cell cells[SNAP_MAX_CELLS_PER_DOMAIN];
} promise;

typedef struct promise_table promise_table;

/* An empty table, or NULL when out of memory. */
promise_table *promise_table_new(void);
/* NULL-safe. */
void promise_table_free(promise_table *pt);

/* How many promises the table holds. */
unsigned promise_count(const promise_table *pt);
/* The promise of uuid, or NULL. Valid until the table changes. */
const promise *promise_find(const promise_table *pt, const char *uuid);

/*
 * Keeps the room pd (decide_incoming's plan for the domain uuid, name, on topology t) gives
 * the cells whose memory it placed (a move to a node), made at now; it replaces the domain's
 * earlier promise, and a plan that placed no memory only drops that. When the table is full
 * the oldest promise goes: copied into *ret_dropped (when not NULL) and true returned, so that
 * the caller can say so; false otherwise.
 */
bool promise_make(promise_table *pt, const char *uuid, const char *name, const plan_domain *pd,
                  double now, promise *ret_dropped);

/* The domain uuid runs here with all its memory (its migration finished, its restore is done)
 * as of pass number `pass`: its promise goes at its first sample of a later pass
 * (promise_sampled). No promise: nothing. */
void promise_arrived(promise_table *pt, const char *uuid, uint64_t pass);
/* The domain uuid was sampled in pass number `pass`: its promise goes if it arrived before that
 * pass began; then it is copied into *ret (when not NULL) and true returned. */
bool promise_sampled(promise_table *pt, const char *uuid, uint64_t pass, promise *ret);
/* The promise of uuid goes (the domain stopped: its migration failed, or it was destroyed);
 * true and a copy in *ret (when not NULL) when there was one. */
bool promise_release(promise_table *pt, const char *uuid, promise *ret);
/* Every promise older than PROMISE_EXPIRY_S at now goes, each said in one line of the log;
 * returns how many went. */
unsigned promise_expire(promise_table *pt, double now);
/* One promise older than PROMISE_EXPIRY_S at now goes: true and a copy in *ret (when not NULL);
 * false when none is that old. Called until false. */
bool promise_take_expired(promise_table *pt, double now, promise *ret);

/*
 * Counts the room every promise but the one of `except` (a uuid; NULL: none) holds as used in
 * s, for decide (decide_incoming, decide): each node's free memory (s->free_bytes; the
 * topology's mem_free when s has none for it) less the bytes promised there, each huge page
 * pool (s->free_huge; the topology's pools when s lists none for the node) less the pages
 * promised in it, never below 0. held[n] (when not NULL; t->nr_nodes entries) gets the bytes
 * held on node index n, huge pages included. Returns how many promises were counted.
 */
unsigned promise_apply(const promise_table *pt, const topology *t, const char *except, snapshot *s,
                       uint64_t held[]);

/* The bytes promise p holds on node index n (huge pages included). */
uint64_t promise_node_bytes(const promise *p, unsigned n);
/* "node N M MiB, ..." (the kernel's node numbers) of what p holds, into buf. */
void promise_describe(const promise *p, const topology *t, char *buf, size_t len);

/* One promise no pass has counted yet, marked counted from now on: true and a copy in *ret
 * (when not NULL); false when every one was counted. Called until false (the pass logs each
 * promise once). */
bool promise_take_uncounted(promise_table *pt, promise *ret);
