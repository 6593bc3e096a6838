/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plumbing of a pass's per-domain work (pass_work.c): works on the worker threads
 * (workers.h), each holding its domain, their timeouts, waiting for them, and a record's
 * write. Below the pass (pass.c), above domain tracking and publishing.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "act.h"
#include "core.h"
#include "workers.h"

/* Per-domain work of a pass is given up after this long (seconds; at least the interval):
 * the domain is skipped as not answering and the pass goes on. */
#define PASS_DOMAIN_TIMEOUT_MIN_S 5.0
/* Worker threads, and how many more stand in for works that do not return. Below libvirtd's
 * max_client_requests (5 per client): one connection, at most PASS_WORKERS calls at once
 * from works that answer. */
#define PASS_WORKERS       4
#define PASS_WORKERS_EXTRA 32

/* Start the worker threads and watch them from the loop. 0 or -errno. */
int pass_init(vnumad *dm);
/* Release a domain's hold (busy) taken by the pass or a work: a forgotten domain is freed,
 * one whose <balancer> changed meanwhile is considered again. */
void pass_release(vnumad *dm, dom_state *st);
/* fn(dm) as a pass would run it: the records it writes are waited for (each at most the
 * domain timeout). For the restore at exit. */
void pass_drain(vnumad *dm, void (*fn)(vnumad *dm));

struct pass_set;

typedef enum dom_work_kind { DW_WINDOW, DW_SAMPLE, DW_ACT, DW_WRITE } dom_work_kind;

struct pass_set;

/* One blocking job on one domain; owns what it points to but st (held: busy) and dm (read
 * only in run(): the topology, the numa ops and the configuration do not change during a
 * pass; a reload waits for the pass). */
typedef struct dom_work {
    work w;
    dom_work_kind kind;
    vnumad *dm;
    dom_state *st;
    virt_dom *d;
    bool waited; /* the running pass waits for it */
    double now;
    int r;
    char err[512];
    snap_domain sd; /* DW_SAMPLE out, DW_ACT in */
    /* DW_SAMPLE: the hint set it applies to sd (domains_hints_lend), NULL none; given back by
     * sample_done. hints_err: applying them failed (-errno), for the loop to log. */
    const proto_hints *hints;
    /* DW_SAMPLE, without hints: the hot ranges the domain carried from its source host
     * (st->carried, read only), NULL none */
    const carried_info *carried;
    int hints_err;
    /* DW_SAMPLE: the bytes of each cell's last order the mover had yet to move when the work
     * was handed out (by guest cell id; sample_done takes the most of that and its end) */
    uint64_t order_left[SNAP_MAX_CELLS_PER_DOMAIN];
    plan_domain pd; /* DW_ACT in */
    act_result res;
    bool acted;
    bool meta_failed;
    struct pass_set *ps; /* DW_WINDOW, DW_SAMPLE: the pass it reports to */
    char *json;          /* DW_WRITE */
    uint64_t pass;
    char time[32];
} dom_work;

/* A work of `kind` on st (and d, referenced); NULL when out of memory. */
dom_work *pass_work_new(vnumad *dm, dom_state *st, virt_dom *d, dom_work_kind kind,
                        void (*run)(work *), void (*done)(work *, bool));
void pass_work_free(dom_work *dw);
/* Hands the work to the pool, holding its domain; the pass waits for it when `wait`. */
void pass_work_submit(vnumad *dm, dom_work *dw, bool wait);
/* Common end of a work on the loop: the pass no longer waits for it; a late one answers. */
void pass_work_finished(dom_work *dw, bool late);
/* A hold on st (the pass's or a work's). */
void pass_hold(dom_state *st);
/* Runs the loop until the pass's works are in (or late). */
void pass_wait(vnumad *dm);
