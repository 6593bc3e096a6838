/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * collect: one collection of the hint set (see collect.h).
 */
#include "collect.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int collector_init(collector *c, const char *root, const scan_ops *ops, scan_heat heat)
{
    int r;

    memset(c, 0, sizeof(*c));
    c->root = root;
    c->ops = ops;
    c->heat = heat;
    c->self = getpid();
    r = procfs_node_count(root, &c->nr_nodes);
    if (r < 0)
        return r;
    c->nr_nodes = VN_MIN(c->nr_nodes, (unsigned)AG_MAX_NODES);
    r = procfs_cpu_count(root, &c->nr_cpus);
    if (r < 0)
        return r;
    return 0;
}

void collector_free(collector *c)
{
    for (size_t i = 0; i < AG_MAX_TRACKED; i++) {
        scan_proc_free(c->tracked[i].scan);
        c->tracked[i].scan = NULL;
    }
    free(c->prev);
    c->prev = NULL;
    c->nr_prev = 0;
}

collect_cfg collect_cfg_clamp(collect_cfg in)
{
    collect_cfg out = in;

    if (out.interval_ms == 0)
        out.interval_ms = AG_DEFAULT_INTERVAL_MS;
    out.interval_ms = VN_MAX(out.interval_ms, (uint32_t)AG_MIN_INTERVAL_MS);
    out.interval_ms = VN_MIN(out.interval_ms, (uint32_t)AG_MAX_INTERVAL_MS);
    if (out.max_processes == 0)
        out.max_processes = AG_DEFAULT_MAX_PROCESSES;
    out.max_processes = VN_MIN(out.max_processes, (uint32_t)AG_HINT_MAX_PROCS);
    /* scan_budget_mib 0: the host wants no memory scan (protocol: "no range scan") */
    out.scan_budget_mib = VN_MIN(out.scan_budget_mib, 64u * 1024);
    return out;
}

typedef struct candidate {
    pid_t pid;
    procfs_stat st;
    uint64_t delta;
} candidate;

static int cmp_candidate(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->delta != y->delta)
        return x->delta < y->delta ? 1 : -1;
    if (x->st.rss_pages != y->st.rss_pages)
        return x->st.rss_pages < y->st.rss_pages ? 1 : -1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static const ag_pid_ticks *prev_find(const collector *c, pid_t pid)
{
    size_t lo = 0, hi = c->nr_prev;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->prev[mid].pid == pid)
            return &c->prev[mid];
        if (c->prev[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static ag_tracked *tracked_get(collector *c, pid_t pid, uint64_t starttime)
{
    ag_tracked *slot = NULL;

    for (size_t i = 0; i < AG_MAX_TRACKED; i++) {
        ag_tracked *t = &c->tracked[i];
        if (t->scan && t->scan->pid == pid && t->scan->starttime == starttime)
            return t;
    }
    /* a free slot, else the one picked longest ago */
    for (size_t i = 0; i < AG_MAX_TRACKED; i++) {
        ag_tracked *t = &c->tracked[i];
        if (!t->scan) {
            slot = t;
            break;
        }
        if (!slot || t->last_picked < slot->last_picked)
            slot = t;
    }
    scan_proc_free(slot->scan);
    memset(slot, 0, sizeof(*slot));
    slot->scan = scan_proc_new(pid, starttime, c->nr_nodes);
    return slot->scan ? slot : NULL;
}

static void tracked_expire(collector *c)
{
    for (size_t i = 0; i < AG_MAX_TRACKED; i++) {
        ag_tracked *t = &c->tracked[i];
        if (t->scan && c->seq - t->last_picked > AG_FORGET_AFTER) {
            scan_proc_free(t->scan);
            memset(t, 0, sizeof(*t));
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * The CPUs the process's threads ran on since the last collection: the
 * "processor" of each thread whose runtime grew (every thread the first time).
 */
static void collect_vcpus(collector *c, ag_tracked *t, pid_t pid, ag_proc_hint *h)
{
    pid_t tids[AG_MAX_THREADS];
    ag_task_seen seen[AG_MAX_THREADS];
    uint64_t cpus[AG_MAX_CPUS / 64] = {0};
    int n = procfs_list_tasks(c->root, pid, tids, AG_MAX_THREADS);
    uint32_t nr_seen = 0;
    bool first = t->nr_tasks == 0;

    h->nr_vcpus = 0;
    for (int i = 0; i < n; i++) {
        procfs_stat st;
        bool ran = first;

        if (procfs_read_task_stat(c->root, pid, tids[i], &st) < 0)
            continue;
        for (uint32_t k = 0; k < t->nr_tasks; k++)
            if (t->tasks[k].tid == tids[i]) {
                ran = st.ticks != t->tasks[k].ticks;
                break;
            }
        if (!first && !ran) {
            bool known = false;
            for (uint32_t k = 0; k < t->nr_tasks; k++)
                known |= t->tasks[k].tid == tids[i];
            ran = !known && st.ticks > 0; /* a new thread that already ran */
        }
        if (ran && st.processor >= 0 && st.processor < AG_MAX_CPUS)
            cpus[st.processor / 64] |= 1ULL << (st.processor % 64);
        seen[nr_seen++] = (ag_task_seen){.tid = tids[i], .ticks = st.ticks};
    }
    memcpy(t->tasks, seen, nr_seen * sizeof(*seen));
    t->nr_tasks = nr_seen;
    for (unsigned cpu = 0; cpu < AG_MAX_CPUS && h->nr_vcpus < AG_HINT_MAX_VCPUS; cpu++)
        if (cpus[cpu / 64] & (1ULL << (cpu % 64)))
            h->vcpus[h->nr_vcpus++] = cpu;
    qsort(h->vcpus, h->nr_vcpus, sizeof(uint32_t), cmp_u32);
}

/* Soft-dirty: clear after the scan, bounded by the process's size and a period. */
static bool softdirty_due(const collector *c, const scan_proc *sp, const procfs_stat *st,
                          uint64_t now_ms)
{
    if (c->heat != SCAN_HEAT_SOFTDIRTY)
        return false;
    if (st->rss_pages * 4096ULL > SCAN_SOFTDIRTY_MAX_RSS)
        return false;
    return sp->softdirty_clear_ms == 0 ||
           now_ms - sp->softdirty_clear_ms >= SCAN_SOFTDIRTY_PERIOD_MS;
}

static void collect_proc(collector *c, const candidate *cand, uint64_t share, double cpu_share,
                         uint64_t now_ms, ag_proc_hint *h, scan_stats *stats)
{
    _cleanup_free_ procfs_region *maps = malloc(sizeof(procfs_region) * AG_MAX_REGIONS);
    ag_tracked *t = tracked_get(c, cand->pid, cand->st.starttime);
    scan_ctx ctx = {
        .root = c->root,
        .ops = c->ops,
        .heat = c->heat,
        .nr_nodes = c->nr_nodes,
        .scan_size = 0,
        .now_ms = now_ms,
    };
    size_t dropped = 0;
    uint64_t total = 0;
    uint32_t expire;
    int n;

    memset(h, 0, sizeof(*h));
    h->pid = cand->pid;
    memcpy(h->comm, cand->st.comm, sizeof(h->comm));
    h->cpu_share = cpu_share;
    if (!t || !maps)
        return;
    t->last_picked = (uint32_t)c->seq;
    collect_vcpus(c, t, cand->pid, h);
    n = procfs_read_maps(c->root, cand->pid, maps, AG_MAX_REGIONS, &dropped);
    if (n < 0 || scan_proc_update_regions(t->scan, maps, (size_t)n) < 0)
        return;
    t->scan->regions_dropped = (uint32_t)dropped;
    if (share == 0)
        return; /* no memory scan asked for */
    /* A process that did not run since the last collection touched nothing: its last
     * estimate stands and its memory is not walked again (only once, when first picked). */
    if (cand->delta == 0 && t->scan->collection > 0 && !c->priming)
        goto report;
    if (c->priming)
        scan_proc_mark(t->scan);
    if (scan_proc_collect(t->scan, &ctx, share, stats) < 0)
        return;
    if (softdirty_due(c, t->scan, &cand->st, now_ms)) {
        if (c->ops->clear_soft_dirty(c->root, cand->pid) == 0) {
            t->scan->softdirty_clear_ms = VN_MAX(now_ms, 1);
            stats->softdirty_clears++;
        } else {
            stats->errors++;
        }
    }
    if (c->priming) {
        scan_proc_rewind(t->scan);
        return; /* nothing of a prime is reported */
    }
report:
    scan_proc_node_pages(t->scan, h->node_pages);
    /* a block is remembered for about one sweep over the whole process */
    for (size_t i = 0; i < t->scan->nr_regions; i++)
        total += t->scan->regions[i].end - t->scan->regions[i].start;
    expire = (uint32_t)VN_MIN(64ULL, 2 + total / VN_MAX(share, 1ULL));
    h->nr_ranges =
        (uint32_t)scan_proc_ranges(t->scan, cpu_share, expire, h->ranges, AG_HINT_MAX_RANGES);
}

int collector_run(collector *c, const collect_cfg *cfg_in, uint64_t now_ms, ag_hints *out)
{
    collect_cfg cfg = collect_cfg_clamp(*cfg_in);
    _cleanup_free_ pid_t *pids = malloc(sizeof(pid_t) * AG_MAX_PIDS);
    _cleanup_free_ candidate *cands = malloc(sizeof(candidate) * AG_MAX_PIDS);
    _cleanup_free_ ag_pid_ticks *next = malloc(sizeof(ag_pid_ticks) * AG_MAX_PIDS);
    long hz = sysconf(_SC_CLK_TCK);
    double elapsed_s;
    uint64_t budget, share;
    size_t nc = 0, picked;
    int n;

    if (!pids || !cands || !next)
        return -ENOMEM;
    n = procfs_list_pids(c->root, pids, AG_MAX_PIDS);
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++) {
        procfs_stat st;
        const ag_pid_ticks *p;

        if (pids[i] == c->self || procfs_read_stat(c->root, pids[i], &st) < 0)
            continue;
        if ((st.flags & PROCFS_PF_KTHREAD) || st.rss_pages == 0 || st.state == 'Z')
            continue;
        p = prev_find(c, pids[i]);
        cands[nc] = (candidate){.pid = pids[i], .st = st, .delta = 0};
        if (p && p->starttime == st.starttime && st.ticks >= p->ticks)
            cands[nc].delta = st.ticks - p->ticks;
        next[nc] = (ag_pid_ticks){.pid = pids[i], .starttime = st.starttime, .ticks = st.ticks};
        nc++;
    }
    free(c->prev);
    c->prev = next; /* pids were listed ascending: next is sorted */
    next = NULL;
    c->nr_prev = nc;

    qsort(cands, nc, sizeof(*cands), cmp_candidate);
    picked = VN_MIN(nc, (size_t)cfg.max_processes);
    elapsed_s =
        c->last_ms ? (double)(now_ms - c->last_ms) / 1000.0 : (double)cfg.interval_ms / 1000.0;
    if (elapsed_s <= 0)
        elapsed_s = 0.001;
    c->last_ms = now_ms;
    c->seq++;

    memset(out, 0, offsetof(ag_hints, procs));
    out->seq = c->seq;
    out->nr_nodes = c->nr_nodes;
    (void)procfs_uptime_ms(c->root, &out->uptime_ms);
    budget = (uint64_t)cfg.scan_budget_mib << 20;
    share = picked ? budget / picked : budget;
    memset(&c->last_stats, 0, sizeof(c->last_stats));
    for (size_t i = 0; i < picked; i++) {
        double cpu_share = hz > 0 ? (double)cands[i].delta / (double)hz / elapsed_s : 0;
        collect_proc(c, &cands[i], share, VN_MIN(cpu_share, 1.0), now_ms,
                     &out->procs[out->nr_procs], &c->last_stats);
        out->nr_procs++;
    }
    tracked_expire(c);
    return 0;
}

int collector_prime(collector *c, const collect_cfg *cfg, uint64_t now_ms)
{
    _cleanup_free_ ag_hints *scratch = malloc(sizeof(*scratch));
    int r;

    if (!scratch)
        return -ENOMEM;
    c->priming = true;
    r = collector_run(c, cfg, now_ms, scratch);
    c->priming = false;
    return r;
}
