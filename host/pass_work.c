/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The plumbing of a pass's per-domain work (pass_work.h): a work on a domain holds it (busy)
 * until its end on the loop releases it; a work that does not finish within the domain timeout
 * is late (the domain skipped as not answering, said once); the pass waits for its works by
 * running the loop; a record's write into QEMU and the metadata is such a work
 * (vnumad.submit_write, which publishing is handed). Below the pass; calls domain tracking
 * and publishing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "domains.h"
#include "domains_agent.h"
#include "holds.h"
#include "log.h"
#include "loop.h"
#include "pass_work.h"
#include "publish.h"
#include "util.h"
#include "virt.h"
#include "workers.h"

static const char *work_kind_name(dom_work_kind k)
{
    return k == DW_WINDOW   ? "opening its CPU time window"
           : k == DW_SAMPLE ? "sampling"
           : k == DW_ACT    ? "acting"
                            : "writing its record";
}

void pass_work_free(dom_work *dw)
{
    virt_dom_free(dw->d);
    snap_domain_clear(&dw->sd);
    plan_domain_clear(&dw->pd);
    free(dw->json);
    free(dw);
}

/* A hold on st (the pass's or a work's). */
void pass_hold(dom_state *st)
{
    st->busy++;
}

void pass_release(vnumad *dm, dom_state *st)
{
    if (st->busy && --st->busy)
        return;
    if (st->orphan) {
        domains_state_free(st);
        return;
    }
    if (st->stale_pending) {
        unsigned what = st->stale_pending;
        st->stale_pending = 0;
        domains_stale(st, what);
    }
    domains_hints_settle(st);
    if (st->reconsider && domains_reconsider(dm, st))
        dm->pass_again = true;
}

static void work_late(work *w)
{
    dom_work *dw = (dom_work *)w;
    vnumad *dm = dw->dm;
    dom_state *st = dw->st;
    char why[STATE_ERROR_MAX + 64];

    if (dw->waited) {
        dw->waited = false;
        dm->waiting--;
    }
    if (!st->hung_since_s) {
        st->hung_since_s = dw->w.started_s;
        log_warn("Domain '%s' does not answer (%s, %.0f s): skipped until it does", LOG_Q(st->name),
                 work_kind_name(dw->kind), vn_mono_s() - dw->w.started_s);
    }
    if (dw->kind == DW_WINDOW || dw->kind == DW_SAMPLE) {
        dm->stats.skips[METRICS_SKIP_NOT_ANSWERING]++;
        snprintf(why, sizeof(why), "not-answering: %s", work_kind_name(dw->kind));
        publish_record_simple(dm, NULL, st, "skipped", why);
    }
}

dom_work *pass_work_new(vnumad *dm, dom_state *st, virt_dom *d, dom_work_kind kind,
                        void (*run)(work *), void (*done)(work *, bool))
{
    dom_work *dw = calloc(1, sizeof(*dw));

    if (!dw)
        return NULL;
    if (d && virt_dom_ref(d, &dw->d) < 0) {
        free(dw);
        return NULL;
    }
    dw->w.run = run;
    dw->w.done = done;
    dw->w.on_late = work_late;
    dw->kind = kind;
    dw->dm = dm;
    dw->st = st;
    return dw;
}

/* Hands the work to the pool; the pass waits for it when `wait`. */
void pass_work_submit(vnumad *dm, dom_work *dw, bool wait)
{
    pass_hold(dw->st);
    dw->waited = wait;
    if (wait)
        dm->waiting++;
    workers_submit(dm->pool, &dw->w);
}

/* Common end of a work on the loop: the pass no longer waits for it; a late one answers. */
void pass_work_finished(dom_work *dw, bool late)
{
    vnumad *dm = dw->dm;

    if (dw->waited)
        dm->waiting--;
    if (late || dw->st->hung_since_s) {
        log_info("Domain '%s' answers again (%s took %.1f s)", LOG_Q(dw->st->name),
                 work_kind_name(dw->kind), vn_mono_s() - dw->w.started_s);
        dw->st->hung_since_s = 0;
    }
}

/* Runs the loop until the pass's works are in (or late). */
void pass_wait(vnumad *dm)
{
    if (!dm->waiting)
        return;
    loop_update_timer(dm->tick_timer, 100);
    while (dm->waiting > 0)
        if (loop_run_once() < 0)
            break;
    loop_update_timer(dm->tick_timer, -1);
}

void pass_drain(vnumad *dm, void (*fn)(vnumad *dm))
{
    dm->in_pass = true;
    fn(dm);
    pass_wait(dm);
    dm->in_pass = false;
}

static void on_tick(int timer, void *opaque)
{
    vnumad *dm = opaque;
    double timeout = VN_MAX(PASS_DOMAIN_TIMEOUT_MIN_S, dm->cfg.interval_s);

    (void)timer;
    if (holds_active()) { /* a test parked vnumad on purpose: nothing is hung */
        workers_restart_clocks(dm->pool, vn_mono_s());
        return;
    }
    (void)workers_expire(dm->pool, vn_mono_s(), timeout);
}

static void on_pool(int watch, int fd, int events, void *opaque)
{
    (void)watch;
    (void)fd;
    (void)events;
    workers_collect(((vnumad *)opaque)->pool);
}

static void pass_write_record(vnumad *dm, virt_dom *d, dom_state *st, const char *json,
                              uint64_t pass, const char *time);

int pass_init(vnumad *dm)
{
    int r = workers_start(PASS_WORKERS, PASS_WORKERS_EXTRA, &dm->pool);

    dm->submit_write = pass_write_record;

    if (r < 0)
        return r;
    dm->pool_watch = loop_add_fd(workers_fd(dm->pool), LOOP_READABLE, on_pool, dm);
    dm->tick_timer = loop_add_timer(-1, on_tick, dm);
    if (dm->pool_watch < 0 || dm->tick_timer < 0)
        return -EIO;
    return 0;
}

/* ---- the record of a pass ---- */

static void write_run(work *w)
{
    dom_work *dw = (dom_work *)w;
    bool job = false;

    /* the metadata write waits for a running job (libvirt's job lock): after it */
    if (virt_dom_job(dw->d, &job) == 0 && job) {
        dw->r = -EBUSY;
        return;
    }
    holds_point(HOLD_RECORD, dw->pass, dw->st->name); /* a test's */
    dw->r = publish_write(dw->d, dw->st, dw->dm->cfg.use_qmp, dw->json, dw->pass, dw->time);
}

static void write_done(work *w, bool late)
{
    dom_work *dw = (dom_work *)w;

    pass_work_finished(dw, late);
    if (dw->r < 0) {
        if (dw->r != -EBUSY)
            dw->dm->stats.errors[METRICS_ERR_METADATA]++;
        dw->st->publish.pub_key[0] = '\0'; /* written again next pass */
    }
    pass_release(dw->dm, dw->st);
    pass_work_free(dw);
}

/* vnumad.submit_write: the record (JSON, for pass and time) into QEMU and the live metadata,
 * on a worker (it blocks on the domain); during a pass, the pass waits for it */
static void pass_write_record(vnumad *dm, virt_dom *d, dom_state *st, const char *json,
                              uint64_t pass, const char *time)
{
    dom_work *dw = pass_work_new(dm, st, d, DW_WRITE, write_run, write_done);

    if (!dw || !(dw->json = strdup(json))) {
        if (dw)
            pass_work_free(dw);
        return;
    }
    dw->pass = pass;
    snprintf(dw->time, sizeof(dw->time), "%s", time);
    pass_work_submit(dm, dw, dm->in_pass);
}
