/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Room promised to domains on their way here (promise.h). */
#include "promise.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

struct promise_table {
    uint64_t next_seq;
    unsigned nr;
    promise p[PROMISE_MAX];
};

promise_table *promise_table_new(void)
{
    return calloc(1, sizeof(promise_table));
}

void promise_table_free(promise_table *pt)
{
    free(pt);
}

unsigned promise_count(const promise_table *pt)
{
    return pt ? pt->nr : 0;
}

static int find(const promise_table *pt, const char *uuid)
{
    for (unsigned i = 0; pt && uuid && i < pt->nr; i++)
        if (strcmp(pt->p[i].uuid, uuid) == 0)
            return (int)i;
    return -1;
}

const promise *promise_find(const promise_table *pt, const char *uuid)
{
    int i = find(pt, uuid);

    return i >= 0 ? &pt->p[i] : NULL;
}

/* Entry i goes (copied into *ret first, when not NULL); the last takes its place. */
static void drop(promise_table *pt, unsigned i, promise *ret)
{
    if (ret)
        *ret = pt->p[i];
    if (i != pt->nr - 1)
        pt->p[i] = pt->p[pt->nr - 1];
    pt->nr--;
}

bool promise_make(promise_table *pt, const char *uuid, const char *name, const plan_domain *pd,
                  double now, promise *ret_dropped)
{
    int i = find(pt, uuid);
    bool dropped = false;
    promise *p;

    if (i >= 0)
        drop(pt, (unsigned)i, NULL); /* replaced (or, placing no memory now, only dropped) */
    unsigned nr = 0;
    for (unsigned k = 0; k < pd->nr_cells; k++)
        nr += pd->cells[k].nr_moves > 0 && pd->cells[k].target_node >= 0;
    if (!nr)
        return false;
    if (pt->nr == PROMISE_MAX) {
        unsigned oldest = 0;
        for (unsigned j = 1; j < pt->nr; j++)
            if (pt->p[j].seq < pt->p[oldest].seq)
                oldest = j;
        drop(pt, oldest, ret_dropped);
        dropped = true;
    }
    p = &pt->p[pt->nr++];
    memset(p, 0, sizeof(*p));
    snprintf(p->uuid, sizeof(p->uuid), "%s", uuid);
    snprintf(p->name, sizeof(p->name), "%s", name);
    p->made_s = now;
    p->seq = pt->next_seq++;
    for (unsigned k = 0; k < pd->nr_cells && p->nr_cells < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        const plan_cell *pc = &pd->cells[k];
        uint64_t bytes = 0;
        if (!pc->nr_moves || pc->target_node < 0)
            continue;
        for (unsigned m = 0; m < pc->nr_moves; m++)
            bytes += pc->moves[m].bytes;
        p->cells[p->nr_cells++] = (promise_cell){
            .node = (unsigned)pc->target_node, .page_size = pc->page_size, .bytes = bytes};
    }
    return dropped;
}

void promise_arrived(promise_table *pt, const char *uuid, uint64_t pass)
{
    int i = find(pt, uuid);

    if (i < 0)
        return;
    pt->p[i].arrived = true;
    pt->p[i].arrived_pass = pass;
}

bool promise_sampled(promise_table *pt, const char *uuid, uint64_t pass, promise *ret)
{
    int i = find(pt, uuid);

    /* a sample of the pass the arrival came in may have been taken before it */
    if (i < 0 || !pt->p[i].arrived || pass <= pt->p[i].arrived_pass)
        return false;
    drop(pt, (unsigned)i, ret);
    return true;
}

bool promise_release(promise_table *pt, const char *uuid, promise *ret)
{
    int i = find(pt, uuid);

    if (i < 0)
        return false;
    drop(pt, (unsigned)i, ret);
    return true;
}

bool promise_take_expired(promise_table *pt, double now, promise *ret)
{
    for (unsigned i = 0; pt && i < pt->nr; i++)
        if (now - pt->p[i].made_s >= PROMISE_EXPIRY_S) {
            drop(pt, i, ret);
            return true;
        }
    return false;
}

unsigned promise_expire(promise_table *pt, double now)
{
    promise p;
    unsigned nr = 0;

    for (; promise_take_expired(pt, now, &p); nr++)
        log_info(
            "The room promised to incoming domain '%s' (%s) expired: it did not arrive and get sampled within %.0f s; it is free again",
            LOG_Q(p.name), LOG_Q(p.uuid), PROMISE_EXPIRY_S);
    return nr;
}

bool promise_take_uncounted(promise_table *pt, promise *ret)
{
    for (unsigned i = 0; pt && i < pt->nr; i++)
        if (!pt->p[i].counted) {
            pt->p[i].counted = true;
            if (ret)
                *ret = pt->p[i];
            return true;
        }
    return false;
}

uint64_t promise_node_bytes(const promise *p, unsigned n)
{
    uint64_t b = 0;

    for (unsigned k = 0; k < p->nr_cells; k++)
        if (p->cells[k].node == n)
            b += p->cells[k].bytes;
    return b;
}

void promise_describe(const promise *p, const topology *t, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned n = 0; n < t->nr_nodes && used < len; n++) {
        uint64_t b = promise_node_bytes(p, n);
        if (b)
            used += (size_t)snprintf(buf + used, len - used, "%snode %u %" PRIu64 " MiB",
                                     used ? ", " : "", t->nodes[n].os_index, b >> 20);
    }
}

/* The cell's memory off node n's free memory or off its huge page pool of the cell's size (as
 * decide takes room: dcell_take_room). */
static void take(const topology *t, snapshot *s, const promise_cell *c)
{
    unsigned n = c->node;
    const topo_huge *pools = snapshot_node_huge(t, s, n);
    int h = topo_huge_slot(pools, c->page_size);

    if (h >= 0) {
        if (pools != s->free_huge[n]) /* the snapshot lists the node's pools from here on */
            memcpy(s->free_huge[n], pools, sizeof(s->free_huge[n]));
        topo_huge *pool = &s->free_huge[n][h];
        pool->free_pages -= VN_MIN(pool->free_pages, c->bytes / c->page_size);
        return;
    }
    if (!s->free_known[n]) {
        s->free_known[n] = true;
        s->free_bytes[n] = t->nodes[n].mem_free;
    }
    s->free_bytes[n] -= VN_MIN(s->free_bytes[n], c->bytes);
}

unsigned promise_apply(const promise_table *pt, const topology *t, const char *except, snapshot *s,
                       uint64_t held[])
{
    unsigned counted = 0;

    if (held)
        memset(held, 0, t->nr_nodes * sizeof(held[0]));
    for (unsigned i = 0; pt && i < pt->nr; i++) {
        const promise *p = &pt->p[i];
        if (except && strcmp(p->uuid, except) == 0)
            continue;
        for (unsigned k = 0; k < p->nr_cells; k++) {
            if (p->cells[k].node >= t->nr_nodes)
                continue; /* (a topology reloaded since) */
            take(t, s, &p->cells[k]);
            if (held)
                held[p->cells[k].node] += p->cells[k].bytes;
        }
        counted++;
    }
    return counted;
}
