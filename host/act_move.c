/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest memory moves (act_move.h): the move budget, a range walked in windows of pages
 * (query, then move what is on the source node, within the budget, the target's room and the
 * pass's deadline), and one mover thread per cell.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "act_move.h"
#include "clock.h"
#include "holds.h"
#include "log.h"
#include "rules.h"
#include "util.h"

#define ACT_RESERVE_SLACK RESERVE_SLACK_BYTES

void act_budget_init(act_budget *b, unsigned rate_mib, double interval_s, double now_s)
{
    b->rate_bytes_s = (double)rate_mib * (double)VN_MIB;
    b->max_tokens = b->rate_bytes_s * VN_MAX(interval_s, 1.0);
    b->tokens = b->max_tokens;
    b->last_s = now_s;
    b->deadline_s = 0;
}

void act_budget_refill(act_budget *b, double now_s)
{
    if (now_s > b->last_s)
        b->tokens = VN_MIN(b->max_tokens, b->tokens + (now_s - b->last_s) * b->rate_bytes_s);
    b->last_s = now_s;
}

const ram_range *act_find_ram(const dom_sample_cache *s, unsigned cell)
{
    for (unsigned i = 0; i < s->nr_ram; i++)
        if (s->ram[i].cell == cell)
            return &s->ram[i];
    return NULL;
}

void act_mover_sync(dom_mover *m, const dom_sample_cache *s)
{
    if (m->ram_gen == s->ram_gen)
        return;
    memset(m->move_resume, 0, sizeof(m->move_resume));
    m->mem_refused = 0;
    m->ram_gen = s->ram_gen;
}

void act_mem_refused(const act_target *tg, unsigned ri, uint64_t moved, uint64_t unmovable,
                     act_cell_result *cr)
{
    if (!unmovable || moved || ri >= 64 || ri >= tg->sample->nr_ram)
        return;
    if (!(tg->mover->mem_refused & (1ULL << ri)))
        log_warn(
            "Guest memory of cell %u of '%s' would not move (%llu pages refused: held by the kernel, e.g. io_uring or RDMA buffers); it stays where it is and its vCPUs go to it until QEMU restarts",
            tg->sample->ram[ri].cell, tg->name, (unsigned long long)unmovable);
    tg->mover->mem_refused |= 1ULL << ri;
    cr->refused = true;
}

unsigned act_move_plan(const plan_cell *pc, const ram_range *ram, unsigned nr_ram, uint64_t refused,
                       move_span *out, unsigned max)
{
    unsigned n = 0;

    for (unsigned ri = 0; ri < nr_ram && ri < 64; ri++) {
        const ram_range *r = &ram[ri];
        if (r->cell != pc->cell_id || (refused & (1ULL << ri)))
            continue; /* another cell's, or its pages would not move: it stays */
        for (unsigned m = 0; m < pc->nr_moves && n < max; m++) {
            const plan_move *mv = &pc->moves[m];
            move_span sp = {.ri = ri,
                            .move = m,
                            .hot = mv->is_range,
                            .to = mv->to_node,
                            .page_size = r->page_size ? r->page_size : ACT_PAGE_SIZE,
                            .shared = r->shared,
                            .hugetlb = r->hugetlb};
            if (mv->is_range) {
                /* a hot range inside this range */
                if (mv->gpa < r->gpa || mv->gpa + mv->length > r->gpa + r->size)
                    continue;
                sp.hva = r->hva + (mv->gpa - r->gpa);
                sp.len = mv->length;
                sp.from = -1;
                sp.bytes = mv->length;
            } else {
                sp.hva = r->hva;
                sp.len = r->size;
                sp.from = mv->from_node;
                sp.bytes = mv->bytes;
            }
            out[n++] = sp;
        }
    }
    return n;
}

static uint64_t node_reserve(const topology *t, const vn_config *c, unsigned n)
{
    return VN_MAX(c->reserve_bytes,
                  (uint64_t)((double)t->nodes[n].mem_total * c->reserve_fraction));
}

/* One range to move and where its pages may go (move_range). */
typedef struct move_req {
    pid_t pid;
    uint64_t hva, len;
    uint64_t page_size; /* the backend's (sample.c): counted, moved and charged in it */
    bool shared;        /* MPOL_MF_MOVE_ALL */
    bool hugetlb;       /* room is the target's free huge pages of page_size, not MemFree */
    int from, to;       /* kernel nodes */
    uint64_t want;      /* bytes */
    uint32_t batch;     /* pages per window */
    uint64_t reserve;   /* bytes of MemFree the target keeps (not for hugetlb) */
    const char *domain; /* whose memory (a test hold says it) */
} move_req;

/* Pages of the window the target has room for: free huge pages of the size, or MemFree
 * above the reserve and its slack. Sets cr->reserve_hit when it is fewer than k. */
static unsigned room_pages(const numa_ops *ops, const move_req *m, unsigned k, act_cell_result *cr)
{
    if (m->hugetlb) {
        long long free_p = ops->node_free_huge ? ops->node_free_huge(m->to, m->page_size) : -1;
        if (free_p >= 0 && (uint64_t)free_p < k) {
            cr->reserve_hit = true;
            return (unsigned)free_p;
        }
        return k;
    }
    long long free_b = ops->node_free(m->to);
    uint64_t floor = m->reserve + ACT_RESERVE_SLACK;
    /* the kernel allocates too while pages migrate (and others use the node): keep a slack
     * above the reserve so the node never dips below it */
    if (free_b >= 0 && (uint64_t)free_b < floor + (uint64_t)k * m->page_size) {
        uint64_t room = (uint64_t)free_b > floor ? (uint64_t)free_b - floor : 0;
        cr->reserve_hit = true;
        return (unsigned)VN_MIN((uint64_t)k, room / m->page_size);
    }
    return k;
}

int act_move_window(const numa_ops *ops, const move_window *w, uint64_t *pos, uint64_t max_bytes,
                    move_window_result *res)
{
    uint64_t ps = w->page_size ? w->page_size : ACT_PAGE_SIZE, npages = w->len / ps, off;
    uint64_t limit = max_bytes / ps; /* pages max_bytes allows */
    uint32_t batch = ps >= ACT_ONE_PAGE_PER_CALL
                         ? 1
                         : VN_MIN(VN_MAX(w->batch, 1u), (uint32_t)LOCK_HOLD_MAX_PAGES);
    void *pages[LOCK_HOLD_MAX_PAGES], *sel[LOCK_HOLD_MAX_PAGES];
    int status[LOCK_HOLD_MAX_PAGES], nodes[LOCK_HOLD_MAX_PAGES];
    unsigned n, k = 0, fit, cut = 0, at[LOCK_HOLD_MAX_PAGES];
    move_req req = {.to = w->to, .page_size = ps, .hugetlb = w->hugetlb, .reserve = w->reserve};
    act_cell_result room = {0};
    int r;

    memset(res, 0, sizeof(*res));
    if (npages == 0)
        return 0;
    off = *pos < npages ? *pos : 0;
    n = (unsigned)VN_MIN((uint64_t)batch, npages - off);
    for (unsigned i = 0; i < n; i++)
        pages[i] = (void *)(uintptr_t)(w->hva + (off + i) * ps);
    r = ops->query(w->pid, n, pages, status);
    res->queries++;
    if (r < 0)
        return r;
    for (unsigned i = 0; i < n; i++) {
        bool take = w->from >= 0 ? status[i] == w->from : status[i] >= 0 && status[i] != w->to;
        if (!take)
            continue;
        if (k >= limit) {
            if (!res->wanted_more)
                cut = i; /* the next window starts at the first page left */
            res->wanted_more = true;
            continue;
        }
        at[k] = i;
        sel[k] = pages[i];
        nodes[k] = w->to;
        k++;
    }
    fit = k ? room_pages(ops, &req, k, &room) : 0;
    res->reserve_hit = room.reserve_hit;
    if (fit < k) {
        cut = at[fit];
        k = fit;
    }
    if (k) {
        /* a positive return is pages not moved, and the kernel may stop before the end: only
         * a status it wrote counts as moved (see move_range) */
        for (unsigned i = 0; i < k; i++)
            status[i] = ACT_STATUS_UNSET;
        r = ops->move(w->pid, k, sel, nodes, status, w->shared);
        if (r < 0)
            return r;
        if (r > 0) {
            int q = ops->query(w->pid, k, sel, status);
            res->queries++;
            if (q < 0)
                return q;
        }
        for (unsigned i = 0; i < k; i++) {
            if (status[i] == w->to)
                res->pages_moved++;
            else if (status[i] != ACT_STATUS_UNSET)
                res->pages_unmovable++;
        }
    }
    res->pages_walked = res->wanted_more || res->reserve_hit ? cut : n;
    *pos = (off + res->pages_walked) % npages;
    return 0;
}

/*
 * Move up to m->want bytes of the range that sit on kernel node m->from to m->to. Walks the
 * range in windows of m->batch pages of the backend's page size: one status query, then one
 * move of the pages found on `from` (rule 5: no call covers more than a window; a page of
 * 1 GiB or more is a window of its own). The walk starts at page *resume and wraps around;
 * when the budget, the reserve (for hugetlb: the target's free huge pages) or the pass's
 * deadline stops it, *resume is where the next pass goes on, so a move spread over many
 * passes does not query the part it finished again every pass.
 */
static int move_range(const numa_ops *ops, const move_req *m, act_budget *budget, uint64_t *resume,
                      act_cell_result *cr, dom_counters *count)
{
    uint64_t ps = m->page_size ? m->page_size : ACT_PAGE_SIZE;
    uint32_t batch = ps >= ACT_ONE_PAGE_PER_CALL ? 1 : VN_MAX(m->batch, 1u);
    _cleanup_free_ void **pages = calloc(batch, sizeof(void *));
    _cleanup_free_ void **sel = calloc(batch, sizeof(void *));
    _cleanup_free_ int *status = calloc(batch, sizeof(int));
    _cleanup_free_ int *nodes = calloc(batch, sizeof(int));
    uint64_t npages = m->len / ps, moved = 0, start, done;
    move_req req = *m;
    int r;

    req.page_size = ps;
    if (!pages || !sel || !status || !nodes)
        return -ENOMEM;
    start = *resume < npages ? *resume : 0;
    for (done = 0; done < npages && moved < m->want;) {
        uint64_t off = (start + done) % npages;
        unsigned n = (unsigned)VN_MIN((uint64_t)batch, npages - off), k = 0, now = 0, told = 0;

        if (budget->deadline_s > 0 && vn_mono_s() > budget->deadline_s) {
            cr->budget_exhausted = true; /* out of time this pass: the rest follows */
            cr->deadline_hit = true;
            break;
        }
        done += n;
        for (unsigned i = 0; i < n; i++)
            pages[i] = (void *)(uintptr_t)(m->hva + (off + i) * ps);
        r = ops->query(m->pid, n, pages, status);
        count->memory_scans++;
        if (r < 0)
            return r;
        for (unsigned i = 0; i < n && (moved + (uint64_t)(k + 1) * ps) <= VN_MAX(m->want, ps); i++)
            if (status[i] == m->from) {
                sel[k] = pages[i];
                nodes[k] = m->to;
                k++;
            }
        if (k == 0)
            continue;
        if (budget->tokens < (double)k * (double)ps) {
            k = (unsigned)(budget->tokens / (double)ps);
            cr->budget_exhausted = true;
            /* a page larger than the whole bucket moves when the bucket is full, and the
             * debt is paid off before anything else moves */
            if (k == 0 && budget->tokens >= budget->max_tokens && (double)ps > budget->max_tokens)
                k = 1;
            if (k == 0) {
                done -= n; /* this window is where the next pass starts */
                break;
            }
        }
        unsigned fit = room_pages(ops, &req, k, cr);
        if (fit == 0) {
            done -= n;
            break;
        }
        k = fit;
        /* a positive return is pages not moved, and the kernel may stop before the end: only
         * a status it wrote counts as moved */
        for (unsigned i = 0; i < k; i++)
            status[i] = ACT_STATUS_UNSET;
        r = ops->move(m->pid, k, sel, nodes, status, m->shared);
        if (r < 0)
            return r;
        if (r > 0) {
            /* Linux stores no status for a batch whose migration failed in part (a
             * long-term pin holds some pages: io_uring, RDMA), moved pages included, and
             * returns how many did not move: ask where the pages are now */
            int q = ops->query(m->pid, k, sel, status);
            count->memory_scans++;
            if (q < 0)
                return q;
        }
        for (unsigned i = 0; i < k; i++) {
            if (status[i] == m->to)
                now++;
            else if (status[i] != ACT_STATUS_UNSET)
                told++; /* refused (-errno), or still on its node */
        }
        cr->pages_unmovable += told;
        count->pages_unmovable += told;
        moved += (uint64_t)now * ps;
        cr->pages_moved += now;
        budget->tokens -= (double)now * (double)ps; /* charged for what moved */
        if (now)
            holds_point(HOLD_MOVE, 0, m->domain); /* a test's, between two batches */
        if (cr->budget_exhausted || cr->reserve_hit) {
            done -= n; /* part of this window may be left */
            break;
        }
    }
    *resume = (start + done) % (npages ? npages : 1);
    cr->bytes_moved += moved;
    count->bytes_moved += moved;
    count->pages_moved += moved / ps;
    return 0;
}

/* One cell's moves as one mover runs them (move_cells): what it reads, and what it writes
 * only for itself until the movers are joined. */
typedef struct cell_mover {
    const move_span *spans; /* what the cell's plan moves (act_move_plan) */
    unsigned nr_spans;
    unsigned nr_moves;  /* the plan's moves the spans serve */
    pid_t pid;          /* the QEMU process */
    const char *domain; /* whose memory (a test hold says it) */
    uint64_t *resume;   /* the mover's resume points: only the entries of this cell's ranges */
    const topology *t;
    const numa_ops *ops;
    const vn_config *cfg;
    uint32_t batch; /* pages per window */
    act_cell_result *cr;
    act_budget budget;        /* this mover's share of the pass's tokens */
    double share;             /* the tokens it was given */
    dom_counters count;       /* added to the domain's once joined */
    uint64_t range_moved[64]; /* per range index: pages moved, pages refused (act_mem_refused) */
    uint64_t range_refused[64];
    int r;
} cell_mover;

/* The cell's spans in turn; a bulk move's bytes are taken from its ranges in that order. */
static void cell_mover_run(cell_mover *cm)
{
    act_cell_result *cr = cm->cr;
    _cleanup_free_ uint64_t *done = calloc(VN_MAX(cm->nr_moves, 1u), sizeof(*done));
    int r = 0;

    if (!done) {
        cm->r = -ENOMEM;
        return;
    }
    for (unsigned i = 0; i < cm->nr_spans; i++) {
        const move_span *sp = &cm->spans[i];
        uint64_t moved0 = cr->pages_moved, unmovable0 = cr->pages_unmovable,
                 before = cr->bytes_moved;
        move_req req = {
            .pid = cm->pid,
            .domain = cm->domain,
            .hva = sp->hva,
            .len = sp->len,
            .page_size = sp->page_size,
            .shared = sp->shared,
            .hugetlb = sp->hugetlb,
            .to = (int)cm->t->nodes[sp->to].os_index,
            .batch = cm->batch,
            .reserve = node_reserve(cm->t, cm->cfg, (unsigned)sp->to),
        };
        r = 0;
        if (sp->hot) {
            /* hot ranges go first, from wherever their pages are */
            for (unsigned n = 0; n < cm->t->nr_nodes && r == 0; n++) {
                uint64_t from_start = 0;
                if ((int)n == sp->to)
                    continue;
                req.from = (int)cm->t->nodes[n].os_index;
                req.want = sp->bytes;
                r = move_range(cm->ops, &req, &cm->budget, &from_start, cr, &cm->count);
            }
        } else if (done[sp->move] < sp->bytes) {
            req.from = (int)cm->t->nodes[sp->from].os_index;
            req.want = sp->bytes - done[sp->move];
            r = move_range(cm->ops, &req, &cm->budget, &cm->resume[sp->ri], cr, &cm->count);
        }
        done[sp->move] += cr->bytes_moved - before;
        cm->range_moved[sp->ri] += cr->pages_moved - moved0;
        cm->range_refused[sp->ri] += cr->pages_unmovable - unmovable0;
        if (r < 0) {
            cm->r = r;
            return;
        }
        if (cr->budget_exhausted || cr->reserve_hit)
            break;
    }
}

/* The movers of one act stage: each thread takes the next cell not yet taken. */
typedef struct mover_pool {
    cell_mover *movers;
    unsigned nr;
    atomic_uint next;
} mover_pool;

static void *mover_thread(void *arg)
{
    mover_pool *p = arg;
    unsigned k;

    while ((k = atomic_fetch_add(&p->next, 1)) < p->nr)
        cell_mover_run(&p->movers[k]);
    return NULL;
}

/* Bytes a cell's plan moves: its bulk moves and hot ranges. */
static uint64_t cell_planned_bytes(const plan_cell *pc)
{
    uint64_t b = 0;
    for (unsigned m = 0; m < pc->nr_moves; m++)
        b += pc->moves[m].is_range ? pc->moves[m].length : pc->moves[m].bytes;
    return b;
}

/*
 * The memory moves of a plan. Cells move in parallel, up to ACT_MAX_MOVERS at once (a
 * thread each; the calling thread is one of them): move_pages(2) of one process runs in
 * parallel in the kernel (the pages of different ranges are looked up and copied
 * independently), and one thread moved at 0.31-0.32 of memcpy (docs/benchmarks.md). The
 * pass's tokens are split among the cells in proportion to what each plans to move, and
 * the deadline is the pass's; what moved is charged to the budget once all are joined. Two
 * cells moving into one node each check its free memory before every window: together they
 * may take one window more each than a single mover would, within the reserve's slack.
 */
int act_move_cells(const act_target *tg, const topology *t, const plan_domain *pd,
                   const numa_ops *ops, act_budget *budget, const vn_config *cfg, act_result *res)
{
    const dom_sample_cache *smp = tg->sample;
    _cleanup_free_ cell_mover *movers = calloc(SNAP_MAX_CELLS_PER_DOMAIN, sizeof(*movers));
    _cleanup_free_ move_span *spans = NULL;
    pthread_t threads[ACT_MAX_MOVERS];
    mover_pool pool = {.movers = movers};
    uint64_t planned[SNAP_MAX_CELLS_PER_DOMAIN], total = 0;
    unsigned nr_threads = 0, want, max_spans = 0, used = 0;
    double spent = 0;
    int r = 0;

    if (smp->pid <= 0)
        return 0;
    if (!movers)
        return -ENOMEM;
    act_mover_sync(tg->mover, smp);
    for (unsigned k = 0; k < res->nr_cells; k++)
        max_spans += VN_MIN(smp->nr_ram, 64u) * pd->cells[k].nr_moves;
    if (!max_spans)
        return 0;
    spans = calloc(max_spans, sizeof(*spans));
    if (!spans)
        return -ENOMEM;
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        unsigned n;
        if (!pc->nr_moves)
            continue;
        n = act_move_plan(pc, smp->ram, smp->nr_ram, tg->mover->mem_refused, spans + used,
                          max_spans - used);
        planned[pool.nr] = VN_MAX(cell_planned_bytes(pc), 1);
        total += planned[pool.nr];
        movers[pool.nr] =
            (cell_mover){.spans = spans + used,
                         .nr_spans = n,
                         .nr_moves = pc->nr_moves,
                         .pid = smp->pid,
                         .domain = tg->name,
                         .resume = tg->mover->move_resume,
                         .t = t,
                         .ops = ops,
                         .cfg = cfg,
                         .batch = pc->batch_pages ? pc->batch_pages : LOCK_HOLD_MAX_PAGES,
                         .cr = &res->cells[k],
                         .budget = *budget};
        used += n;
        pool.nr++;
    }
    if (!pool.nr)
        return 0;
    /* each its share; a share is "full" exactly when the bucket is (a page larger than the
     * bucket moves only then: move_range) */
    for (unsigned i = 0; i < pool.nr; i++) {
        double f = (double)planned[i] / (double)total;
        movers[i].share = budget->tokens * f;
        movers[i].budget.tokens = movers[i].share;
        movers[i].budget.max_tokens = budget->max_tokens * f;
    }
    atomic_init(&pool.next, 0);
    want = ops->thread_safe
               ? VN_MIN(pool.nr, VN_MIN(VN_MAX(cfg->move_threads, 1u), (unsigned)ACT_MAX_MOVERS))
               : 1;
    while (nr_threads + 1 < want &&
           pthread_create(&threads[nr_threads], NULL, mover_thread, &pool) == 0)
        nr_threads++;
    mover_thread(&pool);
    for (unsigned i = 0; i < nr_threads; i++)
        pthread_join(threads[i], NULL);
    for (unsigned i = 0; i < pool.nr; i++) {
        cell_mover *cm = &movers[i];
        spent += cm->share - cm->budget.tokens;
        tg->count->memory_scans += cm->count.memory_scans;
        tg->count->pages_moved += cm->count.pages_moved;
        tg->count->bytes_moved += cm->count.bytes_moved;
        tg->count->pages_unmovable += cm->count.pages_unmovable;
        for (unsigned ri = 0; ri < smp->nr_ram && ri < 64; ri++)
            if (cm->range_refused[ri])
                act_mem_refused(tg, ri, cm->range_moved[ri], cm->range_refused[ri], cm->cr);
        if (cm->r < 0 && r == 0)
            r = cm->r;
    }
    budget->tokens -= spent;
    return r;
}
