/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One balancing pass: sample every tracked domain, decide for all of them at once, act on
 * each domain's plan and hand the outcome to publish.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "act.h"
#include "agentlink.h"
#include "clock.h"
#include "daemon_priv.h"
#include "decide.h"
#include "hints.h"
#include "hostload.h"
#include "log.h"
#include "metrics.h"
#include "rules.h"
#include "sample.h"
#include "snapshot.h"
#include "util.h"
#include "virt.h"

static void update_view(vnumad *dm, dom_state *st, const snap_domain *sd, const plan_domain *pd)
{
    const topology *t = dm->topo;

    st->view_pass = dm->pass;
    st->nr_view = VN_MIN(sd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN);
    for (unsigned k = 0; k < st->nr_view; k++) {
        const snap_cell *c = &sd->cells[k];
        memset(&st->view[k], 0, sizeof(st->view[k]));
        st->view[k].cell = c->id;
        st->view[k].target = pd ? pd->cells[k].target_node : -1;
        st->view[k].cpu_overcommit = pd && pd->cells[k].cpu_overcommit;
        st->view[k].span = pd ? pd->cells[k].span : 0;
        st->view[k].locality = pd ? pd->cells[k].locality_before : 0;
        st->view[k].page_size = c->page_size;
        st->view[k].mem_pinned = c->mem_pinned;
        st->view[k].nr_hot = VN_MIN(c->nr_hot, (unsigned)VN_ARRAY_SIZE(st->view[k].hot));
        for (unsigned h = 0; h < st->view[k].nr_hot; h++)
            st->view[k].hot[h] = c->hot[h];
        for (unsigned n = 0; n < t->nr_nodes; n++) {
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
static bool memfd_needs_bind(const topology *t, const dom_state *st, const snap_domain *sd,
                             const plan_domain *pd)
{
    for (unsigned k = 0; k < pd->nr_cells && k < sd->nr_cells; k++)
        if (act_policy_due(t, st, &sd->cells[k], &pd->cells[k]))
            return true;
    return false;
}

/* The record's action (docs/records.md); st->last_record is still the previous pass's. */
static const char *pass_action(const dom_state *st, const plan_domain *pd, const act_result *res,
                               bool acted, int r)
{
    if (r < 0)
        return "error";
    if (st->cfg.mode == VN_MODE_ADVISE)
        return plan_domain_has_actions(pd) ? "advised" : "none";
    if (!acted)
        return "none";
    return record_continues(st->last_record, pd, res) ? "moving" : "acted";
}

static void pass_domain_result(vnumad *dm, virt_dom *d, dom_state *st, snap_domain *sd,
                               const plan_domain *pd)
{
    act_result res;
    bool acted = false;
    char time[32];
    const char *reason = "ok";
    record_ctx rc;
    int r = 0;

    memset(&res, 0, sizeof(res));
    if (st->cfg.mode == VN_MODE_AUTO &&
        (plan_domain_has_actions(pd) || memfd_needs_bind(dm->topo, st, sd, pd))) {
        /* the originals go into the live metadata before the first change */
        bool first = !st->orig.saved;
        act_operator_pins(d, st, dm->topo);
        r = act_save_originals(d, st, sd);
        if (r == 0 && first) {
            vn_iso_time(time, sizeof(time));
            if (publish_metadata(d, st, dm->pass, time, NULL) < 0)
                dm->stats.errors[METRICS_ERR_METADATA]++;
        }
        if (r == 0) {
            vn_balancer *b = &st->cfg;
            act_budget dom_budget = dm->budget, *use = &dm->budget;
            if (b->rate_mib && b->rate_mib < dm->cfg.rate_limit_mib) {
                /* the domain's own limit, drawn from the host-wide bucket */
                dom_budget.tokens =
                    VN_MIN(dm->budget.tokens, (double)b->rate_mib * VN_MIB * dm->cfg.interval_s);
                use = &dom_budget;
            }
            double before = use->tokens;
            r = act_apply(d, st, dm->topo, sd, pd, dm->numa, use, &dm->cfg.decide, &res);
            for (unsigned k = 0; k < res.nr_cells; k++)
                dm->moves_pending |= res.cells[k].deadline_hit;
            if (use == &dom_budget)
                dm->budget.tokens -= before - dom_budget.tokens;
            sample_mem_changed(st); /* it acted: count the memory afresh next pass */
            sample_xml_stale(st);   /* and read the pins and numatune it set */
        } else {
            res.kind = act_classify(r);
            res.err = r;
            snprintf(res.error, sizeof(res.error), "save originals: %s", strerror(-r));
        }
        acted = true;
    }
    metrics_count_plan(&dm->stats, pd);
    if (r < 0) {
        st->count.errors++;
        /* an error while the domain was being torn down is its going away, not a fault */
        if (res.kind == ACT_TRANSIENT && !virt_dom_active(d))
            res.kind = ACT_GONE;
        switch (res.kind) {
        case ACT_PERMANENT:
            dm->stats.errors[METRICS_ERR_ACT_PERMANENT]++;
            st->permanent_error = true;
            snprintf(st->error, sizeof(st->error), "%s", res.error);
            log_err("Stopped touching '%s': %s (%s)", st->name, res.error, virt_last_error());
            reason = "permanent-error";
            break;
        case ACT_GONE:
            reason = "domain-gone";
            log_info("Domain '%s' went away during the pass", st->name);
            break;
        default:
            dm->stats.errors[METRICS_ERR_ACT_TRANSIENT]++;
            reason = "transient-error";
            log_warn("Failed to act on '%s', will retry: %s (%s)", st->name, res.error,
                     virt_last_error());
            break;
        }
    }
    /* rule 3's state for the next pass */
    for (unsigned k = 0; k < pd->nr_cells && k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        st->last_candidate[k] = pd->cells[k].candidate_node;
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
                      .action = pass_action(st, pd, &res, acted, r),
                      .reason = reason};
    publish_record(dm, res.kind == ACT_GONE ? NULL : d, st, &rc, pd, acted ? &res : NULL);
}

/* The domains a pass decides for, with their samples (indexes match s->domains). */
typedef struct pass_set {
    snapshot s;
    dom_state *sts[MAX_DOMAINS];
    virt_dom *ds[MAX_DOMAINS];
} pass_set;

/* The domain of st, open, when this pass samples it; else the skip is recorded and NULL. */
static virt_dom *pass_admit(vnumad *dm, dom_state *st)
{
    virt_dom *d = NULL;
    char why[STATE_ERROR_MAX + 32];

    /* the handle is looked up once per QEMU run (domains.c drops it on a new run) */
    if ((!st->dom && virt_dom_open(dm->conn, st->uuid, &st->dom) < 0) ||
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
    if (st->paused || st->permanent_error) {
        dm->stats.skips[st->paused ? METRICS_SKIP_PAUSED : METRICS_SKIP_PERMANENT_ERROR]++;
        snprintf(why, sizeof(why), "%s%s",
                 st->paused ? "paused" : "permanent-error: ", st->paused ? "" : st->error);
        publish_record_simple(dm, d, st, "skipped", why);
        virt_dom_free(d);
        return NULL;
    }
    return d;
}

/* Samples an admitted domain into the set (takes d), or records why not (frees d). */
static void pass_sample(vnumad *dm, dom_state *st, virt_dom *d, pass_set *ps, double now)
{
    snapshot *s = &ps->s;
    char err[512];
    int r;

    if (st->link_closed)
        domains_agent_drop(st);
    domains_agent_connect(dm, d, st);
    r = sample_domain(d, st, dm->topo, dm->numa, dm->cfg.use_qmp, now, &s->domains[s->nr_domains],
                      err, sizeof(err));
    if (r == 0 && st->hints &&
        now - st->hints_at_s <= HINT_MAX_AGE_INTERVALS * dm->cfg.interval_s &&
        hints_apply(st->hints, st->ram, st->nr_ram, &s->domains[s->nr_domains]) < 0)
        log_warn("Out of memory applying the hints of '%s'", st->name);
    if (st->link) {
        proto_get_hints g = {.interval_ms = (uint32_t)(dm->cfg.interval_s * 1000),
                             .max_processes = 16,
                             .scan_budget_mib = 256};
        (void)agentlink_request_hints(st->link, &g, now);
    }
    if (r < 0) {
        st->count.errors++;
        dm->stats.skips[r == -ESRCH ? METRICS_SKIP_DOMAIN_GONE : METRICS_SKIP_SAMPLE_FAILED]++;
        if (r != -ESRCH)
            dm->stats.errors[METRICS_ERR_SAMPLE]++;
        if (r == -ESRCH) /* stopped during the pass (not an error): STOPPED follows */
            log_info("Domain '%s' went away during the pass: %s", st->name, err);
        else
            log_warn("Failed to sample '%s': %s", st->name, err);
        publish_record_simple(dm, r == -ESRCH ? NULL : d, st, "error",
                              r == -ESRCH ? "domain-gone" : "sample-failed");
        virt_dom_free(d);
        if (r == -ESRCH)
            memset(&s->domains[s->nr_domains], 0, sizeof(s->domains[0]));
        return;
    }
    st->count.passes++;
    ps->sts[s->nr_domains] = st;
    ps->ds[s->nr_domains] = d;
    s->nr_domains++;
}

/*
 * Samples every tracked domain. A domain vnumad has not read in this QEMU run (new, started,
 * or vnumad restarted) has no busy fractions yet: its window opens first, the others are
 * sampled meanwhile, and it is sampled once the window is long enough (the pass waits for
 * what is left of it, at most SAMPLE_MIN_WINDOW_S or half the interval). Its first decision
 * is then made on measured input, in this same pass.
 */
static void pass_sample_all(vnumad *dm, pass_set *ps, double now)
{
    dom_state *wait_st[MAX_DOMAINS];
    virt_dom *wait_d[MAX_DOMAINS];
    unsigned nr_wait = 0;
    double window = VN_MIN(SAMPLE_MIN_WINDOW_S, dm->cfg.interval_s / 2), opened = 0;
    char err[512];

    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        virt_dom *d = pass_admit(dm, st);

        if (!d)
            continue;
        if (sample_needs_window(st) && window > 0) {
            double at = vn_mono_s();
            if (sample_open_window(d, st, dm->cfg.use_qmp, at, err, sizeof(err)) == 0) {
                wait_st[nr_wait] = st;
                wait_d[nr_wait++] = d;
                opened = at;
                continue;
            }
            /* sample_domain finds out again and records it; the cell stays unmeasured */
            log_debug("No CPU time window for '%s' yet: %s", st->name, err);
        }
        pass_sample(dm, st, d, ps, now);
    }
    if (!nr_wait)
        return;
    double left = opened + window - vn_mono_s();
    if (left > 0) {
        struct timespec ts = {.tv_sec = (time_t)left,
                              .tv_nsec = (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&ts, NULL);
    }
    now = vn_mono_s();
    for (unsigned i = 0; i < nr_wait; i++)
        pass_sample(dm, wait_st[i], wait_d[i], ps, now);
}

static void run_pass_stages(vnumad *dm)
{
    _cleanup_free_ pass_set *set = calloc(1, sizeof(*set));
    plan p = {0};
    double now = vn_mono_s();
    int r;

    if (!dm->connected || !set)
        return;
    snapshot *s = &set->s;
    dm->pass++;
    dm->moves_pending = false;
    set->s.pass = dm->pass;
    (void)topo_refresh_free(dm->topo, NULL);
    act_budget_refill(&dm->budget, now);
    set->s.domains = calloc(dm->nr_doms ? dm->nr_doms : 1, sizeof(*set->s.domains));
    if (!set->s.domains)
        return;
    /* the other load (VMs that did not opt in, host work) per node since the last pass; the
     * first pass measures it over its own sampling (which waits for the vCPUs' window) */
    if (!dm->load[dm->load_cur].valid && hostload_read("/", &dm->load[dm->load_cur]) < 0)
        dm->load[dm->load_cur].valid = false;
    pass_sample_all(dm, set, now);
    dm->load_cur ^= 1;
    if (hostload_read("/", &dm->load[dm->load_cur]) < 0)
        dm->load[dm->load_cur].valid = false;
    hostload_other_busy(dm->topo, &dm->load[dm->load_cur ^ 1], &dm->load[dm->load_cur], s);
    if (memcmp(dm->other_busy, s->other_busy, sizeof(dm->other_busy)) != 0) {
        char b[VN_MAX_NODES * 16] = "";
        size_t used = 0;
        for (unsigned n = 0; n < dm->topo->nr_nodes && used < sizeof(b); n++)
            used += (size_t)snprintf(b + used, sizeof(b) - used, " %u:%g",
                                     dm->topo->nodes[n].os_index, s->other_busy[n]);
        log_debug("Other load (busy CPUs of everything vnumad does not balance) per node:%s", b);
        memcpy(dm->other_busy, s->other_busy, sizeof(dm->other_busy));
    }
    r = decide(dm->topo, s, &dm->cfg.decide, &p);
    if (dm->cfg.act_delay_ms && s->nr_domains) {
        /* fault-injection tests stop a domain here, between sample and act; they wait for
         * this line rather than guess when the pause begins */
        log_debug("Pass %llu sampled %u domain(s); acting in %u ms (act_delay_ms)",
                  (unsigned long long)dm->pass, s->nr_domains, dm->cfg.act_delay_ms);
        struct timespec ts = {.tv_sec = dm->cfg.act_delay_ms / 1000,
                              .tv_nsec = (long)(dm->cfg.act_delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_DECIDE]++;
        log_err("Failed to decide: %s", strerror(-r));
    } else {
        /* moves stop one interval after the act stage began (what is left follows next
         * pass), not after the pass began: when sampling takes the interval (a loaded host,
         * many domains) a deadline from the pass's start let nothing move at all (seen in
         * the proving ground under a CPU hog: 60 passes of 'acted' and 0 bytes moved) */
        dm->budget.deadline_s = vn_mono_s() + dm->cfg.interval_s;
        for (unsigned i = 0; i < s->nr_domains; i++) {
            const plan_domain *pd = NULL;
            for (unsigned k = 0; k < p.nr_domains; k++)
                if (strcmp(p.domains[k].name, s->domains[i].name) == 0)
                    pd = &p.domains[k];
            if (pd)
                pass_domain_result(dm, set->ds[i], set->sts[i], &s->domains[i], pd);
        }
    }
    for (unsigned i = 0; i < s->nr_domains; i++)
        virt_dom_free(set->ds[i]);
    plan_clear(&p);
    snapshot_clear(s);
}

/* A pass with its metrics: timed, then published (metrics_file). */
void pass_run(vnumad *dm)
{
    double start = vn_mono_s();
    bool ran = dm->connected;

    run_pass_stages(dm);
    if (ran) {
        metrics_observe(&dm->stats.pass_seconds, vn_mono_s() - start);
        dm->stats.last_pass_unix = vn_real_s();
    }
    publish_metrics(dm);
}
