/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One balancing pass: sample every tracked domain, decide for all of them at once, act on
 * each domain's plan and hand the outcome to publish.c.
 *
 * The loop never waits on one domain: everything that blocks on a domain (libvirt calls,
 * QEMU monitor commands, move_pages) runs as a work on the worker threads (workers.h), and
 * while works are out the pass runs the loop itself (control socket, libvirt events, agent
 * links). A domain whose work does not finish within the domain timeout is skipped for the
 * pass (recorded "not-answering", said once) and stays skipped until its work returns.
 * Who owns what: the loop owns the daemon's state; a domain held by the pass or by a work
 * (dom_state.busy) has its sampling and acting fields owned by the work while it runs, and
 * events that would change or free it are deferred until the hold is released.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "act_backend.h"
#include "act_move.h"
#include "act_originals.h"
#include "agentlink.h"
#include "clock.h"
#include "conntab.h"
#include "core.h"
#include "decide.h"
#include "domains.h"
#include "domains_agent.h"
#include "hints.h"
#include "holds.h"
#include "hostload.h"
#include "log.h"
#include "loop.h"
#include "metrics.h"
#include "mover.h"
#include "origfile.h"
#include "pass.h"
#include "pass_work.h"
#include "promise.h"
#include "publish.h"
#include "rules.h"
#include "sample.h"
#include "sample_hot.h"
#include "snapshot.h"
#include "util.h"
#include "virt.h"
#include "workers.h"

static void update_view(vnumad *dm, dom_state *st, const snap_domain *sd, const plan_domain *pd)
{
    const topology *t = dm->topo;

    st->view_pass = dm->pass;
    st->nr_view = VN_MIN(sd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN);
    for (unsigned k = 0; k < st->nr_view; k++) {
        const snap_cell *c = &sd->cells[k];
        memset(&st->view[k], 0, offsetof(__typeof__(st->view[k]), vcpus));
        st->view[k].cell = c->id;
        st->view[k].target = pd ? pd->cells[k].target_node : -1;
        st->view[k].cpu_overcommit = pd && pd->cells[k].cpu_overcommit;
        st->view[k].span = pd ? pd->cells[k].span : (vn_nodeset){.nw = 0};
        st->view[k].locality = pd ? pd->cells[k].locality_before : 0;
        st->view[k].page_size = c->page_size;
        st->view[k].mem_pinned = c->mem_pinned;
        st->view[k].nr_hot = VN_MIN(c->nr_hot, (unsigned)VN_ARRAY_SIZE(st->view[k].hot));
        for (unsigned h = 0; h < st->view[k].nr_hot; h++)
            st->view[k].hot[h] = c->hot[h];
        for (unsigned n = 0; n < t->nr_nodes; n++) {
            st->view[k].vcpus[n] = 0;
            st->view[k].mem[n] = c->pages[n] * c->page_size;
            for (unsigned v = 0; v < c->nr_vcpus; v++)
                st->view[k].vcpus[n] += cpuset_subset(&c->vcpus[v].pinned, &t->nodes[n].cpus);
        }
    }
}

static bool plan_domain_has_actions(const plan_domain *pd)
{
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].nr_pins || pd->cells[k].nr_moves)
            return true;
    return false;
}

/* A shared (memfd) backend whose preferred node is still to be set (act_policy_due). */
static bool memfd_needs_bind(const topology *t, dom_state *st, const snap_domain *sd,
                             const plan_domain *pd)
{
    act_target tg = act_target_of(st);

    for (unsigned k = 0; k < pd->nr_cells && k < sd->nr_cells; k++)
        if (act_policy_due(t, &tg, &sd->cells[k], &pd->cells[k]))
            return true;
    return false;
}

/* The record's action (docs/records.md); st->publish.last_record is still the previous pass's. */
static const char *pass_action(const dom_state *st, const plan_domain *pd, const act_result *res,
                               bool acted, int r)
{
    if (r < 0)
        return "error";
    if (st->cfg.mode == VN_MODE_ADVISE)
        return plan_domain_has_actions(pd) ? "advised" : "none";
    if (!acted) /* what the mover did since the last record of the same decision */
        return record_continues(st->publish.last_record, pd, res) ? "moving" : "none";
    return record_continues(st->publish.last_record, pd, res) ? "moving" : "acted";
}

/* ---- act ---- */

static void act_run(work *w)
{
    dom_work *dw = (dom_work *)w;
    vnumad *dm = dw->dm;
    dom_state *st = dw->st;
    bool first = !st->orig.saved;
    bool job = false;
    const char *what = "save originals";
    char time[32];

    holds_point(HOLD_ACT, dw->pass, st->name); /* a test's: nothing changed yet */
    /* every pin and write waits for a running job (migration, save, dump): not now */
    if (virt_dom_job(dw->d, &job) == 0 && job) {
        dw->r = -EBUSY;
        dw->res.kind = ACT_TRANSIENT;
        dw->res.err = -EBUSY;
        snprintf(dw->res.error, sizeof(dw->res.error),
                 "libvirt runs a job on it (migration, save, dump)");
        return;
    }
    /* the originals go into vnumad's record (what a restore puts back) and the live metadata
     * before the first change: nothing is changed while they cannot be recorded */
    act_operator_pins(dw->d, st, dm->topo);
    dw->r = act_save_originals(dw->d, st, &dw->sd);
    if (dw->r == 0 && !st->orig_recorded) {
        dw->r = origfile_write(dm->cfg.state_dir, st->uuid, st->id, &st->orig);
        st->orig_recorded = dw->r == 0;
        what = "record originals";
    }
    if (dw->r == 0 && first) {
        vn_iso_time(time, sizeof(time));
        dw->meta_failed = publish_metadata(dw->d, st, dw->pass, time, NULL) < 0;
    }
    if (dw->r == 0) {
        act_target tg = act_target_of(st);
        uint64_t memfd = st->orig.memfd_cells;
        tg.movers = dm->movers;
        dw->r =
            act_apply(dw->d, &tg, dm->topo, &dw->sd, &dw->pd, dm->numa, &dm->cfg.decide, &dw->res);
        /* a shared backend's own policy, saved as it was first given one */
        if (st->orig.memfd_cells != memfd)
            st->orig_recorded = origfile_write(dm->cfg.state_dir, st->uuid, st->id, &st->orig) == 0;
    } else {
        /* a record that cannot be written is the host's to fix (state_dir): tried again */
        dw->res.kind = st->orig_recorded || !st->orig.saved ? act_classify(dw->r) : ACT_TRANSIENT;
        dw->res.err = dw->r;
        snprintf(dw->res.error, sizeof(dw->res.error), "%s: %s", what, strerror(-dw->r));
    }
    /* an error while the domain was being torn down is its going away, not a fault */
    if (dw->r < 0 && dw->res.kind == ACT_TRANSIENT && !virt_dom_active(dw->d))
        dw->res.kind = ACT_GONE;
}

/* What the mover did for the domain since its last record (act_collect_moves); its memory
 * is counted afresh next pass when some moved. */
static bool take_moves(vnumad *dm, dom_state *st, const plan_domain *pd, act_result *res)
{
    act_target tg = act_target_of(st);
    bool moved;

    tg.movers = dm->movers;
    moved = act_collect_moves(&tg, pd, res);
    if (moved)
        sample_mem_changed(&st->sample);
    return moved;
}

/* The domain's outcome of the pass, on the loop: counters, errors, the state for the next
 * pass and the record. */
static void pass_domain_finish(vnumad *dm, virt_dom *d, dom_state *st, const snap_domain *sd,
                               const plan_domain *pd, bool acted, int r, act_result *res)
{
    const char *reason = "ok";
    char time[32];
    record_ctx rc;
    bool moved = take_moves(dm, st, pd, res);

    metrics_count_plan(&dm->stats, pd);
    if (r < 0) {
        st->count.errors++;
        switch (res->kind) {
        case ACT_PERMANENT:
            dm->stats.errors[METRICS_ERR_ACT_PERMANENT]++;
            st->permanent_error = true;
            mover_drop(dm->movers, st->uuid);
            snprintf(st->error, sizeof(st->error), "%s", res->error);
            log_err("Stopped touching '%s': %s", LOG_Q(st->name), res->error);
            reason = "permanent-error";
            break;
        case ACT_GONE:
            reason = "domain-gone";
            log_info("Domain '%s' went away during the pass", LOG_Q(st->name));
            break;
        default:
            dm->stats.errors[METRICS_ERR_ACT_TRANSIENT]++;
            reason = "transient-error";
            log_warn("Failed to act on '%s', will retry: %s", LOG_Q(st->name), res->error);
            break;
        }
    }
    /* rule 3's state for the next pass, and when memory last went down a tier */
    for (unsigned k = 0; k < pd->nr_cells && k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        const plan_cell *pc = &pd->cells[k];
        st->last_candidate[k] = pc->candidate_node;
        if (acted && r == 0 && pc->cell_id < SNAP_MAX_CELLS_PER_DOMAIN &&
            pc->tier.demote + pc->tier.down > 0)
            st->down_at[pc->cell_id] = st->age_passes + 1;
    }
    if (acted && r == 0) {
        uint64_t best = 0;
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            uint64_t b = 0;
            for (unsigned n = 0; n < dm->topo->nr_nodes; n++)
                b += sd->cells[k].pages[n];
            if (pd->cells[k].target_node >= 0 && b >= best) {
                best = b;
                st->preferred_node = pd->cells[k].target_node;
            }
        }
    }
    st->age_passes++;
    update_view(dm, st, sd, pd);
    vn_iso_time(time, sizeof(time));
    rc = (record_ctx){.name = st->name,
                      .uuid = st->uuid,
                      .mode = st->cfg.mode,
                      .pass = dm->pass,
                      .time = time,
                      .action = pass_action(st, pd, res, acted, r),
                      .reason = reason,
                      .placed = &st->placed,
                      .sd = sd,
                      .hints_carried = st->carried_used,
                      .opt_in = st->opt_in};
    publish_record(dm, res->kind == ACT_GONE ? NULL : d, st, &rc, pd, acted || moved ? res : NULL);
}

static void act_done(work *w, bool late)
{
    dom_work *dw = (dom_work *)w;
    vnumad *dm = dw->dm;
    dom_state *st = dw->st;

    pass_work_finished(dw, late);
    if (dw->meta_failed)
        dm->stats.errors[METRICS_ERR_METADATA]++;
    for (unsigned k = 0; k < dw->pd.nr_cells; k++)
        dm->pinned_in_window |= dw->r == 0 && dw->pd.cells[k].nr_pins > 0;
    if (dw->r == 0) {
        sample_mem_changed(&st->sample); /* it acted: count the memory afresh next pass */
        sample_xml_stale(&st->sample);   /* and read the pins and numatune it set */
    }
    if (dw->r == -EBUSY) {
        mover_drop(dm->movers, st->uuid); /* nothing moves while libvirt runs a job on it */
        /* a job runs on it: nothing was changed, nothing is written until it ends */
        dm->stats.skips[METRICS_SKIP_JOB]++;
        log_debug("Not acting on '%s': libvirt runs a job on it (migration, save, dump)",
                  LOG_Q(st->name));
        publish_record_simple(dm, NULL, st, "skipped", "job: libvirt runs a job on the domain");
    } else {
        /* an orphan (STOPPED came during its act) still gets its record: domain-gone */
        pass_domain_finish(dm, st->orphan ? NULL : dw->d, st, &dw->sd, &dw->pd, true, dw->r,
                           &dw->res);
    }
    pass_release(dm, st);
    pass_work_free(dw);
}

/* ---- the pass ---- */

/* The domains a pass decides for, with their samples (indexes match s->domains); the pass
 * holds each of them (busy) until it ends. */
typedef struct pass_set {
    snapshot s;
    dom_state *sts[MAX_DOMAINS];
    virt_dom *ds[MAX_DOMAINS];
    /* sampled, in the order their works came back: moved into s once all are in */
    unsigned nr_in;
    snap_domain *in;
    dom_state **in_st;
    virt_dom **in_d;
    /* waiting for their CPU time window */
    unsigned nr_wait;
    dom_state **wait_st;
    virt_dom **wait_d;
    double opened;
} pass_set;

/* The domain of st, open, when this pass samples it; else the skip is recorded and NULL. */
static virt_dom *pass_admit(vnumad *dm, dom_state *st)
{
    virt_dom *d = NULL;
    char why[STATE_ERROR_MAX + 32];

    if (st->busy) {
        /* a work on it has not returned (hung monitor): said once, when it went late */
        dm->stats.skips[METRICS_SKIP_NOT_ANSWERING]++;
        return NULL;
    }
    if (!conns_virt(dm, st->conn_id)) {
        /* its libvirt daemon does not answer, or is being reconnected (a handle it still has
         * is of the connection lost, closed once nothing uses it): tracked until it is back */
        dm->stats.skips[METRICS_SKIP_NOT_ANSWERING]++;
        return NULL;
    }
    /* the handle is looked up once per QEMU run (domains.c drops it on a new run) */
    if ((!st->dom && virt_dom_open(conns_virt(dm, st->conn_id), st->uuid, &st->dom) < 0) ||
        virt_dom_ref(st->dom, &d) < 0) {
        virt_dom_free(st->dom);
        st->dom = NULL;
        dm->stats.skips[METRICS_SKIP_DOMAIN_GONE]++;
        publish_record_simple(dm, NULL, st, "skipped", "domain-gone");
        return NULL;
    }
    if (!st->cfg.valid) {
        dm->stats.skips[METRICS_SKIP_INVALID_CONFIG]++;
        snprintf(why, sizeof(why), "invalid-config: %s", st->cfg.error);
        publish_record_simple(dm, d, st, "skipped", why);
        virt_dom_free(d);
        return NULL;
    }
    if (st->paused || dm->host_paused || st->permanent_error) {
        bool paused = st->paused || dm->host_paused;
        dm->stats.skips[paused ? METRICS_SKIP_PAUSED : METRICS_SKIP_PERMANENT_ERROR]++;
        snprintf(why, sizeof(why), "%s%s",
                 paused ? (st->paused ? "paused" : "paused: host-wide") : "permanent-error: ",
                 paused ? "" : st->error);
        publish_record_simple(dm, d, st, "skipped", why);
        virt_dom_free(d);
        return NULL;
    }
    return d;
}

/*
 * On a worker: the CPU time window or the sample. A sample that sends monitor commands asks
 * libvirt first whether it runs a job on the domain: during a migration, save or dump job a
 * monitor command through libvirt waits for the job (its job lock), so the domain is skipped
 * until the job ends. An idle pass sends none and makes no call at all.
 */
static void sample_hints(vnumad *dm, dom_work *dw);

static void sample_run(work *w)
{
    dom_work *dw = (dom_work *)w;
    vnumad *dm = dw->dm;
    dom_state *st = dw->st;
    sample_input in = sample_input_of(st);
    sample_host h = {.t = dm->topo,
                     .ops = dm->numa,
                     .root = dm->root,
                     .use_qmp = sample_monitor_ok(dm->cfg.use_qmp, st->cfg.mode),
                     .poll_from = dm->cfg.decide.busy_threshold};
    bool job = false;

    if (sample_uses_monitor(dw->d, &st->sample, h.use_qmp) && virt_dom_job(dw->d, &job) == 0 &&
        job) {
        dw->r = -EBUSY;
        return;
    }
    if (dw->kind == DW_WINDOW)
        dw->r = sample_open_window(dw->d, &h, &in, &st->sample, &st->count, vn_mono_s(), dw->err,
                                   sizeof(dw->err));
    else
        /* busy fractions over the time between two readings, taken now (a work may wait in
         * the queue: the pass's start would skew them) */
        dw->r = sample_domain(dw->d, &h, &in, &st->sample, &st->count, vn_mono_s(), &dw->sd,
                              dw->err, sizeof(dw->err));
    if (dw->kind == DW_SAMPLE && dw->r == 0 && (dw->hints || dw->carried))
        sample_hints(dm, dw);
    else if (dw->kind == DW_SAMPLE && dw->r == 0)
        st->sample.nr_hint_prev = 0, st->sample.hints_seq = 0; /* no hints: followed anew */
}

/*
 * On the worker, after the sample: the guest's hints into the cells (hot ranges, sharing) and
 * where their hot pages are now (sample_hot.c), which the tiers need. A failure leaves the
 * domain without hints this pass (the loop logs it).
 */
static void sample_hints(vnumad *dm, dom_work *dw)
{
    dom_state *st = dw->st;
    unsigned q = 0;
    int r = dw->hints
                ? hints_apply(dw->hints, st->sample.ram, st->sample.nr_ram, &dw->sd)
                : hints_apply_carried(dw->carried, st->sample.ram, st->sample.nr_ram, &dw->sd);

    if (r == 0)
        r = hints_follow(&dw->sd, dw->hints ? dw->hints->seq : HINTS_CARRIED_SEQ, &st->sample);
    if (r == 0)
        r = sample_hot_pages(dm->numa, dm->topo, &st->sample,
                             st->count.passes * 0x9e3779b97f4a7c15ULL, &dw->sd, &q);
    st->count.memory_scans += q;
    if (r == 0) { /* rule 3's early passes for hot ranges count from the run's first hint set */
        if (!st->sample.hints_first_pass)
            st->sample.hints_first_pass = dw->sd.age_passes + 1;
        dw->sd.hint_passes = dw->sd.age_passes + 2 - st->sample.hints_first_pass;
    }
    if (r < 0) {
        dw->hints_err = r;
        for (unsigned k = 0; k < dw->sd.nr_cells; k++) {
            snap_cell *c = &dw->sd.cells[k];
            free(c->hot);
            free(c->hot_pages);
            free(c->shares);
            c->hot = NULL;
            c->hot_pages = NULL;
            c->shares = NULL;
            c->nr_hot = c->nr_shares = 0;
        }
    }
}

static void sample_done(work *w, bool late);

static void pass_submit_sample(vnumad *dm, pass_set *ps, dom_state *st, virt_dom *d,
                               dom_work_kind kind, double now)
{
    dom_work *dw = pass_work_new(dm, st, d, kind, sample_run, sample_done);

    if (!dw) {
        virt_dom_free(d);
        return;
    }
    dw->now = now;
    dw->ps = ps;
    if (kind == DW_SAMPLE) {
        dw->hints = domains_hints_lend(st, HINT_MAX_AGE_INTERVALS * dm->cfg.interval_s, now);
        /* an arrival's first passes, before its agent's first hint set: the source's ranges */
        if (!dw->hints && !st->guest.hints && st->carried)
            dw->carried = st->carried;
        mover_cells_left(dm->movers, st->uuid, dw->order_left);
    }
    virt_dom_free(d);
    pass_work_submit(dm, dw, true);
}

/* The ranges a domain carried from its source host go once its agent's first hint set came,
 * or after the passes a young domain waits for one (hints.h): the source's view ages. */
static void carried_done(vnumad *dm, dom_state *st)
{
    if (!st->carried ||
        (!st->guest.hints && st->age_passes + 1 < hints_await_passes(dm->cfg.interval_s)))
        return;
    log_debug("'%s' no longer follows the hot ranges it brought from its source host: %s",
              LOG_Q(st->name), st->guest.hints ? "its agent's hints came" : "they aged");
    free(st->carried);
    st->carried = NULL;
}

static void sample_done(work *w, bool late)
{
    dom_work *dw = (dom_work *)w;
    vnumad *dm = dw->dm;
    dom_state *st = dw->st;
    pass_set *ps = dw->ps;
    bool waited = dw->waited;
    int r = dw->r;

    bool had_hints = (dw->hints || dw->carried) && !dw->hints_err;

    pass_work_finished(dw, late);
    st->carried_used = dw->carried && !dw->hints_err;
    dw->carried = NULL;
    carried_done(dm, st);
    if (dw->hints) {
        domains_hints_return(st);
        dw->hints = NULL;
        if (dw->hints_err)
            log_warn("Could not apply the guest hints of '%s' (%s); it goes without them this "
                     "pass",
                     LOG_Q(st->name), strerror(-dw->hints_err));
    }
    if (late || !waited) {
        /* the pass went on without it: what it read is stale */
        pass_release(dm, st);
        pass_work_free(dw);
        return;
    }
    if (r == -EBUSY) {
        mover_drop(dm->movers, st->uuid); /* nothing moves while libvirt runs a job on it */
        dm->stats.skips[METRICS_SKIP_JOB]++;
        log_debug("Skipping '%s': libvirt runs a job on it (migration, save, dump)",
                  LOG_Q(st->name));
        publish_record_simple(dm, NULL, st, "skipped", "job: libvirt runs a job on the domain");
    } else if (dw->kind == DW_WINDOW && r == 0) {
        /* sampled once the window is long enough: the pass holds the domain meanwhile */
        pass_hold(st);
        ps->wait_st[ps->nr_wait] = st;
        ps->wait_d[ps->nr_wait++] = VN_TAKE_PTR(dw->d);
        /* the window runs from its CPU time reading, not from the work's end (which also
         * counted the domain's pages: sample_open_window) */
        ps->opened = VN_MAX(ps->opened, st->sample.prev_sample_s);
    } else if (dw->kind == DW_WINDOW) {
        /* sample_domain finds out again and records it; the cell stays unmeasured */
        log_debug("No CPU time window for '%s' yet: %s", LOG_Q(st->name), dw->err);
        pass_submit_sample(dm, ps, st, VN_TAKE_PTR(dw->d), DW_SAMPLE, dw->now);
    } else if (r < 0) {
        st->count.errors++;
        dm->stats.skips[r == -ESRCH ? METRICS_SKIP_DOMAIN_GONE : METRICS_SKIP_SAMPLE_FAILED]++;
        if (r != -ESRCH)
            dm->stats.errors[METRICS_ERR_SAMPLE]++;
        if (r == -ESRCH) /* stopped during the pass (not an error): STOPPED follows */
            log_info("Domain '%s' went away during the pass: %s", LOG_Q(st->name), dw->err);
        else
            log_warn("Failed to sample '%s': %s", LOG_Q(st->name), dw->err);
        publish_record_simple(dm, r == -ESRCH ? NULL : dw->d, st, "error",
                              r == -ESRCH ? "domain-gone" : "sample-failed");
    } else if (!st->orphan) { /* (an orphan stopped meanwhile: STOPPED came first) */
        /* no hint set this pass: pass_collect says whether one is awaited */
        dw->sd.hints_pending = !had_hints;
        /* an order that was being worked while the sample counted its pages */
        uint64_t left[SNAP_MAX_CELLS_PER_DOMAIN];
        mover_cells_left(dm->movers, st->uuid, left);
        for (unsigned k = 0; k < dw->sd.nr_cells; k++) {
            unsigned id = dw->sd.cells[k].id;
            if (id < SNAP_MAX_CELLS_PER_DOMAIN)
                dw->sd.cells[k].order_left = VN_MAX(dw->order_left[id], left[id]);
        }
        /* in: the pass holds it from here to its end */
        pass_hold(st);
        st->count.passes++;
        ps->in[ps->nr_in] = dw->sd;
        memset(&dw->sd, 0, sizeof(dw->sd));
        ps->in_st[ps->nr_in] = st;
        ps->in_d[ps->nr_in++] = VN_TAKE_PTR(dw->d);
    }
    pass_release(dm, st);
    pass_work_free(dw);
}

/* What the loop does for a sampled domain (its hints are in: sample_hints): the agent asked for
 * the next ones. */
static void pass_sampled(vnumad *dm, dom_state *st, double now)
{
    if (st->guest.link) {
        proto_get_hints g = {.interval_ms = (uint32_t)(dm->cfg.interval_s * 1000),
                             .max_processes = 16,
                             .scan_budget_mib = 256};
        (void)agentlink_request_hints(st->guest.link, &g, now);
    }
}

/* Sleeps through what is left of the CPU time window, with the loop running. */
static void on_window(int timer, void *opaque)
{
    vnumad *dm = opaque;

    loop_update_timer(timer, -1);
    dm->waiting--;
}

/*
 * Samples every tracked domain on the workers. A domain vnumad has not read in this QEMU run
 * (new, started, or vnumad restarted) has no busy fractions yet: its window opens first, the
 * others are sampled meanwhile, and it is sampled once the window is long enough (the pass
 * waits for what is left of it, at most SAMPLE_MIN_WINDOW_S or half the interval). Its first
 * decision is then made on measured input, in this same pass.
 */
static void pass_sample_all(vnumad *dm, pass_set *ps, double now)
{
    double window = VN_MIN(SAMPLE_MIN_WINDOW_S, dm->cfg.interval_s / 2);

    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        virt_dom *d = pass_admit(dm, st);

        if (!d)
            continue;
        pass_submit_sample(dm, ps, st, d,
                           sample_needs_window(&st->sample) && window > 0 ? DW_WINDOW : DW_SAMPLE,
                           now);
    }
    pass_wait(dm);
    if (!ps->nr_wait)
        return;
    double left = ps->opened + window - vn_mono_s();
    if (left > 0 && !vn_clock_skip(left)) { /* (a fake clock jumps over it at once) */
        int t = loop_add_timer((int)(left * 1000) + 1, on_window, dm);
        if (t >= 0) {
            dm->waiting++;
            pass_wait(dm);
            loop_remove_timer(t);
        }
    }
    now = vn_mono_s();
    for (unsigned i = 0; i < ps->nr_wait; i++) {
        pass_submit_sample(dm, ps, ps->wait_st[i], ps->wait_d[i], DW_SAMPLE, now);
        pass_release(dm, ps->wait_st[i]); /* the sample work holds it now */
    }
    ps->nr_wait = 0;
    pass_wait(dm);
}

static void pass_set_free(pass_set *ps)
{
    if (!ps)
        return;
    snapshot_clear(&ps->s);
    free(ps->in);
    free(ps->in_st);
    free(ps->in_d);
    free(ps->wait_st);
    free(ps->wait_d);
    free(ps);
}

/* A pass's working set for up to n domains; NULL when out of memory. */
static pass_set *pass_set_new(size_t n)
{
    pass_set *ps = calloc(1, sizeof(*ps));

    n = n ? n : 1;
    if (!ps)
        return NULL;
    ps->s.domains = calloc(n, sizeof(*ps->s.domains));
    ps->in = calloc(n, sizeof(*ps->in));
    ps->in_st = calloc(n, sizeof(*ps->in_st));
    ps->in_d = calloc(n, sizeof(*ps->in_d));
    ps->wait_st = calloc(n, sizeof(*ps->wait_st));
    ps->wait_d = calloc(n, sizeof(*ps->wait_d));
    if (!ps->s.domains || !ps->in || !ps->in_st || !ps->in_d || !ps->wait_st || !ps->wait_d) {
        pass_set_free(ps);
        return NULL;
    }
    return ps;
}

/* The sampled domains into the snapshot decide reads. */
static void pass_collect(vnumad *dm, pass_set *ps, double now)
{
    snapshot *s = &ps->s;

    for (unsigned i = 0; i < ps->nr_in; i++) {
        if (ps->in_st[i]->orphan) { /* stopped during the pass */
            snap_domain_clear(&ps->in[i]);
            virt_dom_free(ps->in_d[i]);
            pass_release(dm, ps->in_st[i]);
            continue;
        }
        /* the agent channel: after the sample, which read the live XML (the loop must not
         * wait for libvirt) */
        if (ps->in_st[i]->guest.link_closed)
            domains_agent_drop(ps->in_st[i]);
        domains_check_placement(ps->in_st[i]);
        domains_agent_connect(dm, ps->in_st[i]);
        /* a cold start: the agent's first hint set is awaited while it can still come (the
         * domain has the channel, it is young) */
        ps->in[i].hints_pending =
            ps->in[i].hints_pending &&
            (ps->in_st[i]->guest.channel_defined || ps->in_st[i]->guest.link) &&
            ps->in_st[i]->age_passes < hints_await_passes(dm->cfg.interval_s);
        pass_sampled(dm, ps->in_st[i], now);
        if (promise_sampled(dm->promises, ps->in_st[i]->uuid, dm->pass, NULL))
            log_info(
                "Domain '%s' arrived and was sampled: the room promised to it is no longer held (its memory is in the free memory read now)",
                LOG_Q(ps->in_st[i]->name));
        s->domains[s->nr_domains] = ps->in[i];
        ps->sts[s->nr_domains] = ps->in_st[i];
        ps->ds[s->nr_domains++] = ps->in_d[i];
    }
    ps->nr_in = 0;
}

/* Acts on every domain with something to do, each on a worker (memory moves are ordered
 * from the mover); the others' outcome is recorded at once. */
static void pass_act_all(vnumad *dm, pass_set *ps, plan *p)
{
    snapshot *s = &ps->s;
    plan_domain *pds[MAX_DOMAINS];

    for (unsigned i = 0; i < s->nr_domains; i++)
        pds[i] = NULL;
    for (unsigned k = 0; k < p->nr_domains; k++) /* by index: two domains may share a name */
        if (p->domains[k].input < s->nr_domains)
            pds[p->domains[k].input] = &p->domains[k];
    for (unsigned i = 0; i < s->nr_domains; i++) {
        dom_state *st = ps->sts[i];
        plan_domain *pd = pds[i];
        act_result none;

        if (!pd)
            continue;
        if (st->cfg.mode == VN_MODE_AUTO && !st->orphan &&
            (plan_domain_has_actions(pd) || memfd_needs_bind(dm->topo, st, &s->domains[i], pd))) {
            dom_work *dw = pass_work_new(dm, st, ps->ds[i], DW_ACT, act_run, act_done);
            if (dw) {
                dw->pass = dm->pass;
                /* the work owns its sample and plan from here */
                dw->sd = s->domains[i];
                memset(&s->domains[i], 0, sizeof(s->domains[i]));
                dw->pd = *pd;
                memset(pd, 0, sizeof(*pd));
                pass_work_submit(dm, dw, true);
                continue;
            }
        }
        if (st->cfg.mode == VN_MODE_AUTO && !st->orphan) {
            act_target tg = act_target_of(st);
            tg.movers = dm->movers;
            act_keep_targets(&tg, pd);
        }
        memset(&none, 0, sizeof(none));
        if (!st->orphan)
            pass_domain_finish(dm, ps->ds[i], st, &s->domains[i], pd, false, 0, &none);
    }
    pass_wait(dm);
}

/* The pass's number, this pass's free memory per node, and the first
 * reading of the other load (the first pass measures it over its own sampling). */
static void pass_begin(vnumad *dm, pass_set *set)
{
    dm->pass++;
    set->s.pass = dm->pass;
    (void)topo_refresh_free(dm->topo, dm->root);
    if (!dm->load[dm->load_cur].valid && hostload_read(dm->root, &dm->load[dm->load_cur]) < 0)
        dm->load[dm->load_cur].valid = false;
}

/* The mover's threads at once for the CPUs idle since the last pass among those vnumad may run
 * on (its threads' own; never the isolated ones): more on a host with idle cores. */
static void mover_fit(vnumad *dm)
{
    vn_cpuset mine;

    if (cpuset_get_affinity(0, &mine) < 0)
        return;
    cpuset_andnot(&mine, &mine, &dm->topo->isolated);
    (void)mover_fit_threads(dm->movers, hostload_idle_cpus(&dm->load[dm->load_cur ^ 1],
                                                           &dm->load[dm->load_cur], &mine));
}

/* The other load (VMs that did not opt in, host work) per node since the last pass, into the
 * snapshot (hostload.c). */
static void pass_other_load(vnumad *dm, snapshot *s)
{
    dm->load_cur ^= 1;
    if (hostload_read(dm->root, &dm->load[dm->load_cur]) < 0)
        dm->load[dm->load_cur].valid = false;
    hostload_other_busy(dm->topo, &dm->load[dm->load_cur ^ 1], &dm->load[dm->load_cur], s);
    (void)hostload_other_busy_all(dm->topo, &dm->load[dm->load_cur ^ 1], &dm->load[dm->load_cur], s,
                                  dm->other_all);
    mover_fit(dm);
    if (dm->pinned_in_window) {
        /* vnumad re-pinned vCPUs inside this window: their busy time is counted where they
         * ran last, so the node they left would show it as other load (a phantom that made
         * a wide cell grow and a neighbour move back and forth in the proving ground): the
         * last clean reading stands for this pass */
        memcpy(s->other_busy, dm->other_busy, sizeof(dm->other_busy));
        dm->pinned_in_window = false;
    }
    if (memcmp(dm->other_busy, s->other_busy, sizeof(dm->other_busy)) != 0) {
        char b[VN_MAX_NODES * 16] = "";
        size_t used = 0;
        for (unsigned i = 0; i < dm->topo->nr_nodes && used < sizeof(b); i++)
            used += (size_t)snprintf(b + used, sizeof(b) - used, " %u:%g",
                                     dm->topo->nodes[i].os_index, s->other_busy[i]);
        log_debug("Other load (busy CPUs of everything vnumad does not balance) per node:%s", b);
        memcpy(dm->other_busy, s->other_busy, sizeof(dm->other_busy));
    }
}

/* The room promised to domains on their way here (the qemu hook's placements) counted as used
 * in the snapshot's free memory, once for the pass: decide moves nothing into it. Each promise
 * is said once, at the first pass that counts it; the expired ones go first. */
static void pass_promised(vnumad *dm, snapshot *s)
{
    promise p;
    char line[512];

    (void)promise_expire(dm->promises, vn_mono_s());
    (void)promise_apply(dm->promises, dm->topo, NULL, s, NULL);
    while (promise_take_uncounted(dm->promises, &p)) {
        promise_describe(&p, dm->topo, line, sizeof(line));
        log_info(
            "The room promised to incoming domain '%s' (%s) counts as used until it has arrived: %s",
            LOG_Q(p.name), LOG_Q(p.uuid), line);
    }
}

/* decide() on every sampled domain together (pure); 0 or -errno, counted and logged. */
static int pass_decide(vnumad *dm, const snapshot *s, plan *p)
{
    int r = decide(dm->topo, s, &dm->cfg.decide, p);

    if (r < 0) {
        dm->stats.errors[METRICS_ERR_DECIDE]++;
        log_err("Failed to decide: %s", strerror(-r));
    }
    return r;
}

/* The busy CPUs of each node once the plan is carried out (vnumad.node_load): the other load
 * over every CPU, and each cell's busy vCPUs on its target (or where it is; a wide cell's over
 * its span). */
static void pass_node_load(vnumad *dm, const plan *p)
{
    memcpy(dm->node_load, dm->other_all, sizeof(dm->node_load));
    for (unsigned i = 0; i < p->nr_domains; i++)
        for (unsigned k = 0; k < p->domains[i].nr_cells; k++) {
            const plan_cell *pc = &p->domains[i].cells[k];
            int n = pc->target_node >= 0 ? pc->target_node : pc->current_node;
            unsigned span = nodeset_weight(&pc->span);
            if (pc->busy_vcpus <= 0)
                continue;
            if (span > 1) {
                for (int m = nodeset_next(&pc->span, -1); m >= 0; m = nodeset_next(&pc->span, m))
                    if ((unsigned)m < dm->topo->nr_nodes)
                        dm->node_load[m] += (double)pc->busy_vcpus / span;
            } else if (n >= 0 && (unsigned)n < dm->topo->nr_nodes) {
                dm->node_load[n] += pc->busy_vcpus;
            }
        }
}

/* The pass's holds on its domains released, its handles dropped. */
static void pass_end(vnumad *dm, pass_set *set)
{
    for (unsigned i = 0; i < set->s.nr_domains; i++) {
        virt_dom_free(set->ds[i]);
        pass_release(dm, set->sts[i]);
    }
}

/* One pass, stage by stage. */
static void run_pass_stages(vnumad *dm)
{
    pass_set *set;
    plan p = {0};
    double now = vn_mono_s();

    if (!conns_connected(dm) || !(set = pass_set_new(dm->nr_doms)))
        return;
    pass_begin(dm, set);
    pass_sample_all(dm, set, now);      /* sample: every admitted domain, on the workers */
    pass_collect(dm, set, vn_mono_s()); /* the samples into one snapshot */
    pass_other_load(dm, &set->s);
    pass_promised(dm, &set->s);       /* room promised to arrivals: used */
    holds_pass(HOLD_SAMPLE, &set->s); /* a test's: sampled, nothing decided yet */
    double sampled = vn_mono_s(), decided = sampled;
    if (pass_decide(dm, &set->s, &p) == 0) {
        decided = vn_mono_s();
        pass_node_load(dm, &p);
        pass_act_all(dm, set, &p); /* act, then record: each domain's plan, on the workers */
    }
    /* where a pass's time goes (the first move's delay is the sum of these) */
    log_debug("Pass %" PRIu64
              ": %u domain(s) sampled in %.3f s, decided in %.3f s, acted in %.3f s",
              dm->pass, set->s.nr_domains, sampled - now, decided - sampled, vn_mono_s() - decided);
    pass_end(dm, set);
    plan_clear(&p);
    pass_set_free(set);
}

/* A pass with its metrics: timed, then published (metrics_file). The loop runs inside it
 * while its works are out; a pass asked for meanwhile comes after it (pass_again). */
void pass_run(vnumad *dm)
{
    double start = vn_mono_s();
    bool ran = conns_connected(dm) > 0;

    if (dm->in_pass) {
        dm->pass_again = true;
        return;
    }
    dm->in_pass = true;
    run_pass_stages(dm);
    dm->in_pass = false;
    if (ran) {
        metrics_observe(&dm->stats.pass_seconds, vn_mono_s() - start);
        dm->stats.last_pass_unix = vn_real_s();
    }
    publish_metrics(dm);
}
