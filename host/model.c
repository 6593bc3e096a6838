/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared values of model.h: releasing and copying snapshots and plans, counting a
 * plan's actions, the decide stage's default configuration, and the stable names of
 * rules, reasons and modes used in records, logs and JSON.
 */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rules.h"
#include "util.h"

/* ---- snapshots ---- */

int snap_cell_nodes(snap_cell *c, unsigned nr_nodes)
{
    uint64_t *p = calloc(nr_nodes ? nr_nodes : 1, sizeof(*p));

    if (!p)
        return -ENOMEM;
    free(c->pages);
    c->pages = p;
    c->nr_nodes = nr_nodes;
    return 0;
}

int snap_cell_hot_nodes(snap_cell *c)
{
    uint64_t *p = calloc(c->nr_nodes ? c->nr_nodes : 1, sizeof(*p));

    if (!p)
        return -ENOMEM;
    free(c->hot_pages);
    c->hot_pages = p;
    return 0;
}

void snap_domain_clear(snap_domain *d)
{
    if (!d)
        return;
    for (unsigned c = 0; c < d->nr_cells && d->cells; c++) {
        free(d->cells[c].vcpus);
        free(d->cells[c].hot);
        free(d->cells[c].shares);
        free(d->cells[c].pages);
        free(d->cells[c].hot_pages);
    }
    free(d->cells);
    memset(d, 0, sizeof(*d));
}

void snapshot_clear(snapshot *s)
{
    if (!s)
        return;
    for (unsigned d = 0; d < s->nr_domains && s->domains; d++)
        snap_domain_clear(&s->domains[d]);
    free(s->domains);
    memset(s, 0, sizeof(*s));
}

/* *ret = a copy of n elements of src (NULL when n is 0). Returns 0 or -ENOMEM. */
static int dup_array(void **ret, const void *src, size_t n, size_t size)
{
    *ret = NULL;
    if (n == 0)
        return 0;
    *ret = malloc(n * size);
    if (!*ret)
        return -ENOMEM;
    memcpy(*ret, src, n * size);
    return 0;
}

int snapshot_copy(const snapshot *s, snapshot *ret)
{
    snapshot c = *s;

    c.domains = calloc(s->nr_domains ? s->nr_domains : 1, sizeof(*c.domains));
    if (!c.domains)
        return -ENOMEM;
    c.nr_domains = 0;
    for (unsigned i = 0; i < s->nr_domains; i++) {
        const snap_domain *sd = &s->domains[i];
        snap_domain *dd = &c.domains[i];
        *dd = *sd;
        dd->cells = calloc(sd->nr_cells ? sd->nr_cells : 1, sizeof(*dd->cells));
        dd->nr_cells = 0;
        c.nr_domains = i + 1;
        if (!dd->cells)
            goto error;
        for (unsigned k = 0; k < sd->nr_cells; k++) {
            const snap_cell *sc = &sd->cells[k];
            snap_cell *dc = &dd->cells[k];
            *dc = *sc;
            dc->vcpus = NULL;
            dc->hot = NULL;
            dc->shares = NULL;
            dc->pages = NULL;
            dc->hot_pages = NULL;
            dd->nr_cells = k + 1;
            if (dup_array((void **)&dc->pages, sc->pages, sc->nr_nodes, sizeof(*dc->pages)) < 0 ||
                (sc->hot_pages && dup_array((void **)&dc->hot_pages, sc->hot_pages, sc->nr_nodes,
                                            sizeof(*dc->hot_pages)) < 0) ||
                dup_array((void **)&dc->vcpus, sc->vcpus, sc->nr_vcpus, sizeof(*dc->vcpus)) < 0 ||
                dup_array((void **)&dc->hot, sc->hot, sc->nr_hot, sizeof(*dc->hot)) < 0 ||
                dup_array((void **)&dc->shares, sc->shares, sc->nr_shares, sizeof(*dc->shares)) < 0)
                goto error;
        }
    }
    *ret = c;
    return 0;
error:
    snapshot_clear(&c);
    return -ENOMEM;
}

/* ---- the configuration ---- */

void config_defaults(vn_config *c)
{
    *c = (vn_config){
        .busy_threshold = 0.25,
        .reserve_bytes = 256 * VN_MIB,
        .reserve_fraction = 0.03,
        .min_gain_points = 5.0,
        .switch_margin = 0.25,
        .early_passes = EARLY_MIGRATION_PASSES,
        .move_threads = 2,
        .move_threads_max = 8,
    };
}

/* ---- plans ---- */

void plan_domain_clear(plan_domain *pd)
{
    if (!pd)
        return;
    for (unsigned k = 0; k < pd->nr_cells && pd->cells; k++) {
        free(pd->cells[k].pins);
        free(pd->cells[k].moves);
        free(pd->cells[k].hot);
    }
    free(pd->cells);
    pd->cells = NULL;
    pd->nr_cells = 0;
}

void plan_clear(plan *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->nr_domains; i++)
        plan_domain_clear(&p->domains[i]);
    free(p->domains);
    memset(p, 0, sizeof(*p));
}

unsigned plan_nr_auto_actions(const plan *p)
{
    unsigned n = 0;

    for (unsigned i = 0; i < p->nr_domains; i++)
        if (p->domains[i].mode == VN_MODE_AUTO)
            for (unsigned k = 0; k < p->domains[i].nr_cells; k++)
                n += p->domains[i].cells[k].nr_pins + p->domains[i].cells[k].nr_moves;
    return n;
}

unsigned plan_nr_actions(const plan *p)
{
    unsigned n = 0;

    for (unsigned i = 0; i < p->nr_domains; i++)
        for (unsigned k = 0; k < p->domains[i].nr_cells; k++)
            n += p->domains[i].cells[k].nr_pins + p->domains[i].cells[k].nr_moves;
    return n;
}

/* ---- names ---- */

const char *rule_name(vn_rule r)
{
    static const char *const names[RULE_MAX] = {
        [RULE_ALLOWED_IMBALANCE] = "allowed-imbalance",
        [RULE_CPUSET_SKIP] = "cpuset-skip",
        [RULE_EARLY_MIGRATION] = "early-migration",
        [RULE_TWO_STAGE_FILTER] = "two-stage-filter",
        [RULE_SCAN_BUDGET] = "scan-budget",
        [RULE_LOCK_HOLD] = "lock-hold",
        [RULE_LOCALITY] = "locality",
        [RULE_PREFER_VCPU_MOVE] = "prefer-vcpu-move",
        [RULE_SHARED_PROXIMITY] = "shared-proximity",
        [RULE_CPU_CAPACITY] = "cpu-capacity",
        [RULE_FREE_MEM_RESERVE] = "free-memory-reserve",
        [RULE_ALLOWED_CPUS] = "allowed-cpus",
        [RULE_HYSTERESIS] = "hysteresis",
        [RULE_HOT_FIRST] = "hot-first",
        [RULE_WIDE_CELL] = "wide-cell",
        [RULE_LOWER_TIER] = "lower-tier",
    };
    return (unsigned)r < RULE_MAX ? names[r] : "unknown";
}

const char *reason_name(vn_reason r)
{
    static const char *const names[REASON_MAX] = {
        [REASON_NONE] = "act",
        [REASON_ALREADY_LOCAL] = "already-local",
        [REASON_CPUSET_SKIP] = "cpuset-skip",
        [REASON_HYSTERESIS] = "hysteresis",
        [REASON_SINGLE_HOST_NODE] = "single-host-node",
        [REASON_FILTER_PENDING] = "two-stage-filter",
        [REASON_NO_ROOM] = "no-room",
        [REASON_NO_FEASIBLE_NODE] = "no-feasible-node",
        [REASON_NO_MEMORY_INFO] = "no-memory-info",
        [REASON_MEMORY_PINNED] = "memory-pinned",
        [REASON_NUMATUNE_PREFERRED] = "numatune-preferred",
        [REASON_UNMEASURED] = "unmeasured",
        [REASON_TIERED] = "tiered",
        [REASON_HINTS_PENDING] = "hints-pending",
        [REASON_ORDER_IN_FLIGHT] = "order-in-flight",
    };
    return (unsigned)r < REASON_MAX ? names[r] : "unknown";
}

const char *mode_name(vn_mode m)
{
    static const char *const names[VN_MODE_MAX] = {
        [VN_MODE_OFF] = "off", [VN_MODE_ADVISE] = "advise", [VN_MODE_AUTO] = "auto"};
    return (unsigned)m < VN_MODE_MAX ? names[m] : "unknown";
}

const char *mem_mode_name(vn_mem_mode m)
{
    static const char *const names[VN_MEM_MAX] = {
        [VN_MEM_NONE] = "none",
        [VN_MEM_STRICT] = "strict",
        [VN_MEM_RESTRICTIVE] = "restrictive",
        [VN_MEM_PREFERRED] = "preferred",
        [VN_MEM_INTERLEAVE] = "interleave",
    };
    return (unsigned)m < VN_MEM_MAX ? names[m] : "unknown";
}

const char *mem_pin_name(vn_mem_pin p)
{
    static const char *const names[MEM_PIN_MAX] = {
        [MEM_PIN_NONE] = "none",       [MEM_PIN_VFIO] = "vfio",
        [MEM_PIN_LOCKED] = "locked",   [MEM_PIN_LAUNCH_SECURITY] = "launch-security",
        [MEM_PIN_REFUSED] = "refused",
    };
    return (unsigned)p < MEM_PIN_MAX ? names[p] : "unknown";
}

const char *tier_name(vn_tier t)
{
    static const char *const names[VN_TIER_MAX] = {
        [VN_TIER_AUTO] = "auto", [VN_TIER_OFF] = "off", [VN_TIER_COLD_FIRST] = "cold-first"};
    return (unsigned)t < VN_TIER_MAX ? names[t] : "unknown";
}

const char *tier_why_name(vn_tier_why w)
{
    static const char *const names[TIER_WHY_MAX] = {[TIER_WHY_NONE] = "one-tier",
                                                    [TIER_WHY_HOME_SHORT] = "home-short",
                                                    [TIER_WHY_COLD_FIRST] = "cold-first",
                                                    [TIER_WHY_SETTLING] = "settling"};
    return (unsigned)w < TIER_WHY_MAX ? names[w] : "unknown";
}

/* Whether the len bytes at s are `name`. */
static bool name_is(const char *name, const char *s, size_t len)
{
    return strlen(name) == len && memcmp(name, s, len) == 0;
}

int mode_from_name(const char *s, size_t len)
{
    for (unsigned m = 0; m < VN_MODE_MAX; m++)
        if (name_is(mode_name((vn_mode)m), s, len))
            return (int)m;
    return -1;
}

int mem_mode_from_name(const char *s, size_t len)
{
    for (unsigned m = 0; m < VN_MEM_MAX; m++)
        if (name_is(mem_mode_name((vn_mem_mode)m), s, len))
            return (int)m;
    return -1;
}

int mem_pin_from_name(const char *s, size_t len)
{
    for (unsigned p = 0; p < MEM_PIN_MAX; p++)
        if (name_is(mem_pin_name((vn_mem_pin)p), s, len))
            return (int)p;
    return -1;
}

int tier_from_name(const char *s, size_t len)
{
    for (unsigned m = 0; m < VN_TIER_MAX; m++)
        if (name_is(tier_name((vn_tier)m), s, len))
            return (int)m;
    return -1;
}

const topo_huge *snapshot_node_huge(const topology *t, const snapshot *s, unsigned n)
{
    for (unsigned i = 0; i < TOPO_HUGE_SIZES; i++)
        if (s->free_huge[n][i].page_size)
            return s->free_huge[n];
    return t->nodes[n].huge;
}
