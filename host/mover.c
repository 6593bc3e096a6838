/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mover (mover.h): a queue of cells' orders, worked by `threads` threads one window at a
 * time. A thread takes the waiting cell with the highest priority (the least recently served
 * among equals), the tokens its window may use from the host's bucket (and the domain's), works
 * the window without the lock, and puts back what it did not use. Everything below is under
 * mover.lock; only move_window_run() runs without it.
 */
#include "mover.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "holds.h"
#include "log.h"
#include "rules.h"
#include "util.h"

#define MOVER_MAX_THREADS 16

typedef struct bucket {
    double rate; /* bytes/s; 0: no limit */
    double tokens;
    double last_s;
} bucket;

/* One guest cell's order and what was done of it. */
typedef struct mv_cell {
    move_span spans[MOVER_MAX_SPANS];
    unsigned nr_spans, next;          /* spans[next] is worked now; next == nr_spans: done */
    uint64_t done[MOVER_MAX_SPANS];   /* bytes moved for each plan move (bulk: over its spans) */
    uint64_t walked[MOVER_MAX_SPANS]; /* pages of each span walked since it began */
    uint64_t pos[MOVER_MAX_SPANS];    /* hot and cold spans: the page they go on from */
    vn_nodeset full;                  /* targets that had no room: their spans wait */
    unsigned cell_id;
    unsigned nr_moves;
    uint32_t batch;
    double priority, served_s;
    bool busy;                                     /* a thread works a window of it */
    unsigned gen;                                  /* bumped by every new order */
    mover_cell_progress took;                      /* since the last mover_take */
    uint64_t range_moved[64], range_unmovable[64]; /* of this order, per ram[] index */
} mv_cell;

typedef struct mv_dom {
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    pid_t pid;
    unsigned ram_gen;
    uint64_t resume[64]; /* the page of each ram[] range a bulk move goes on from */
    uint64_t refused;    /* ranges whose pages would not move at all (of ram_gen) */
    unsigned busy;       /* windows in flight */
    bucket own;
    mv_cell *cells[SNAP_MAX_CELLS_PER_DOMAIN];
} mv_dom;

struct mover {
    pthread_mutex_t lock;
    pthread_cond_t work; /* an order came, a cell's window ended, stop */
    pthread_cond_t idle; /* a window ended */
    const topology *t;
    const numa_ops *ops;
    bucket host;
    mv_dom **doms;
    size_t nr_doms, cap_doms;
    bool stopping;
    unsigned nr_threads, min_threads, active, working; /* working: threads in a window now */
    double fit_s, fit_busy_s; /* the last mover_fit_threads: when, and busy_s then */
    pthread_t threads[MOVER_MAX_THREADS];
    uint64_t bytes_moved;
    double busy_s;
    /* the rate: bytes moved since rate_t (at least MOVER_RATE_S ago, once it is), and the
     * rate over the span before it */
    double rate_t, rate, last_window_s;
    uint64_t rate_bytes;
};

#define MOVER_RATE_S 2.0 /* the span the rate is measured over */

/* ---- buckets ---- */

static void bucket_refill(bucket *b, double now)
{
    if (b->rate > 0 && now > b->last_s)
        b->tokens = VN_MIN(b->rate, b->tokens + (now - b->last_s) * b->rate); /* 1 s of burst */
    b->last_s = now;
}

static void bucket_set(bucket *b, unsigned rate_mib, double now)
{
    b->rate = (double)rate_mib * (double)VN_MIB;
    b->tokens = b->rate;
    b->last_s = now;
}

/* ---- the rate ---- */

/* After a window that began at t0 and moved `moved`: a new span begins when the mover was
 * idle longer than MOVER_RATE_S before it (idle time is not moving time); a span ends once it
 * is MOVER_RATE_S long, and its rate is the rate until the next one ends. */
static void note_rate(mover *m, double t0, double now, uint64_t moved)
{
    if (t0 - m->last_window_s > MOVER_RATE_S) {
        m->rate_t = t0;
        m->rate_bytes = m->bytes_moved - moved;
        m->rate = 0;
    } else if (now - m->rate_t >= MOVER_RATE_S) {
        m->rate = (double)(m->bytes_moved - m->rate_bytes) / (now - m->rate_t);
        m->rate_t = now;
        m->rate_bytes = m->bytes_moved;
    }
    m->last_window_s = VN_MAX(m->last_window_s, now);
}

static double current_rate(const mover *m, double now)
{
    if (now - m->last_window_s > MOVER_RATE_S)
        return 0; /* idle */
    if (m->rate > 0)
        return m->rate;
    /* the first span is not over yet: what it moved so far, over at least a second (a first
     * window that just ended is no rate) */
    return (double)(m->bytes_moved - m->rate_bytes) / VN_MAX(now - m->rate_t, 1.0);
}

/* ---- domains and cells ---- */

static mv_dom *dom_find(mover *m, const char *uuid)
{
    for (size_t i = 0; i < m->nr_doms; i++)
        if (strcmp(m->doms[i]->uuid, uuid) == 0)
            return m->doms[i];
    return NULL;
}

static mv_dom *dom_get(mover *m, const char *uuid)
{
    mv_dom *d = dom_find(m, uuid);

    if (d)
        return d;
    if (m->nr_doms == m->cap_doms) {
        size_t cap = m->cap_doms ? m->cap_doms * 2 : 16;
        mv_dom **n = realloc(m->doms, cap * sizeof(*n));
        if (!n)
            return NULL;
        m->doms = n;
        m->cap_doms = cap;
    }
    d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
    m->doms[m->nr_doms++] = d;
    return d;
}

static void dom_free(mv_dom *d)
{
    for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
        free(d->cells[c]);
    free(d);
}

static bool cell_waiting(const mv_cell *c)
{
    return c && c->next < c->nr_spans;
}

/* bytes the span is still to move */
static uint64_t span_want(const mv_cell *c, unsigned i)
{
    const move_span *sp = &c->spans[i];

    return sp->bytes > c->done[sp->move] ? sp->bytes - c->done[sp->move] : 0;
}

static uint64_t cell_left(const mv_cell *c)
{
    uint64_t left = 0;
    bool seen[MOVER_MAX_SPANS] = {false};

    for (unsigned i = c->next; i < c->nr_spans; i++)
        if (!seen[c->spans[i].move]) {
            seen[c->spans[i].move] = true;
            left += span_want(c, i);
        }
    return left;
}

int mover_order_cell(mover *m, const mover_order *o)
{
    mv_dom *d;
    mv_cell *c;
    int r = 0;

    if (o->cell >= SNAP_MAX_CELLS_PER_DOMAIN || o->nr_spans > MOVER_MAX_SPANS)
        return -EINVAL;
    pthread_mutex_lock(&m->lock);
    d = dom_get(m, o->uuid);
    if (!d) {
        r = -ENOMEM;
        goto out;
    }
    snprintf(d->name, sizeof(d->name), "%s", o->name ? o->name : "");
    if (d->ram_gen != o->ram_gen || d->pid != o->pid) {
        /* another QEMU or RAM layout: the resume points and refusals were of the old one */
        memset(d->resume, 0, sizeof(d->resume));
        d->refused = 0;
        d->ram_gen = o->ram_gen;
        d->pid = o->pid;
    }
    if (o->rate_mib && (unsigned)(d->own.rate / (double)VN_MIB) != o->rate_mib)
        bucket_set(&d->own, o->rate_mib, vn_mono_s());
    else if (!o->rate_mib)
        d->own.rate = 0;
    c = d->cells[o->cell];
    if (!c && o->nr_spans == 0)
        goto out;
    if (!c && !(c = d->cells[o->cell] = calloc(1, sizeof(*c)))) {
        r = -ENOMEM;
        goto out;
    }
    /* the new order replaces the old one; what was done and not yet taken stays counted */
    c->gen++;
    memcpy(c->spans, o->spans, o->nr_spans * sizeof(c->spans[0]));
    c->nr_spans = o->nr_spans;
    c->next = 0;
    c->nr_moves = VN_MIN(o->nr_moves, (unsigned)MOVER_MAX_SPANS);
    memset(c->done, 0, sizeof(c->done));
    memset(c->walked, 0, sizeof(c->walked));
    memset(c->pos, 0, sizeof(c->pos));
    nodeset_zero(&c->full);
    memset(c->range_moved, 0, sizeof(c->range_moved));
    memset(c->range_unmovable, 0, sizeof(c->range_unmovable));
    c->batch = o->batch ? o->batch : LOCK_HOLD_MAX_PAGES;
    c->priority = o->priority;
    c->cell_id = o->cell;
    c->took.reserve_hit = false;
    if (o->nr_spans)
        log_debug("Mover: cell %u of '%s' ordered, %llu bytes in %u span(s)", o->cell,
                  LOG_Q(d->name), (unsigned long long)cell_left(c), c->nr_spans);
    pthread_cond_broadcast(&m->work);
out:
    pthread_mutex_unlock(&m->lock);
    return r;
}

void mover_forget(mover *m, const char *uuid)
{
    mv_dom *d;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        d = dom_find(m, uuid);
        if (!d)
            break;
        for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
            if (d->cells[c])
                d->cells[c]->nr_spans = d->cells[c]->next = 0;
        if (!d->busy) {
            for (size_t i = 0; i < m->nr_doms; i++)
                if (m->doms[i] == d) {
                    m->doms[i] = m->doms[--m->nr_doms];
                    break;
                }
            dom_free(d);
            break;
        }
        pthread_cond_wait(&m->idle, &m->lock); /* a window of it is in flight */
    }
    pthread_mutex_unlock(&m->lock);
}

void mover_drop(mover *m, const char *uuid)
{
    mv_dom *d;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    d = dom_find(m, uuid);
    for (unsigned c = 0; d && c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
        if (d->cells[c]) {
            d->cells[c]->nr_spans = d->cells[c]->next = 0;
            d->cells[c]->gen++; /* a window in flight does not carry on with it */
        }
    pthread_mutex_unlock(&m->lock);
}

void mover_keep_to(mover *m, const char *uuid,
                   const vn_nodeset *const nodes[SNAP_MAX_CELLS_PER_DOMAIN])
{
    mv_dom *d;

    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    d = dom_find(m, uuid);
    for (unsigned k = 0; d && k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        mv_cell *c = d->cells[k];
        for (unsigned i = c ? c->next : 0; nodes[k] && cell_waiting(c) && i < c->nr_spans; i++) {
            int to = c->spans[i].to;
            if (to >= 0 && nodeset_isset(nodes[k], (unsigned)to))
                continue;
            log_debug("Mover: cell %u of '%s' no longer goes to node index %d: its order goes", k,
                      LOG_Q(d->name), to);
            c->nr_spans = c->next = 0;
            c->gen++; /* a window in flight does not carry on with it */
        }
    }
    pthread_mutex_unlock(&m->lock);
}

void mover_take(mover *m, const char *uuid, mover_progress *ret)
{
    mv_dom *d;

    memset(ret, 0, sizeof(*ret));
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    d = dom_find(m, uuid);
    if (d) {
        ret->refused = d->refused;
        ret->ram_gen = d->ram_gen;
        for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
            mv_cell *c = d->cells[k];
            if (!c)
                continue;
            ret->cells[k] = c->took;
            ret->cells[k].queued = cell_waiting(c);
            ret->cells[k].bytes_left = cell_waiting(c) ? cell_left(c) : 0;
            memset(&c->took, 0, sizeof(c->took));
            c->took.reserve_hit = ret->cells[k].reserve_hit && cell_waiting(c);
        }
    }
    pthread_mutex_unlock(&m->lock);
}

void mover_cells_left(mover *m, const char *uuid, uint64_t left[SNAP_MAX_CELLS_PER_DOMAIN])
{
    mv_dom *d;

    memset(left, 0, SNAP_MAX_CELLS_PER_DOMAIN * sizeof(left[0]));
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    d = dom_find(m, uuid);
    for (unsigned k = 0; d && k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        if (cell_waiting(d->cells[k]))
            left[k] = cell_left(d->cells[k]);
    pthread_mutex_unlock(&m->lock);
}

uint64_t mover_refused(mover *m, const char *uuid, unsigned ram_gen)
{
    uint64_t r = 0;
    mv_dom *d;

    pthread_mutex_lock(&m->lock);
    d = dom_find(m, uuid);
    if (d && d->ram_gen == ram_gen)
        r = d->refused;
    pthread_mutex_unlock(&m->lock);
    return r;
}

void mover_get_stats(mover *m, mover_stats *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nr_doms; i++) {
        ret->in_flight += m->doms[i]->busy;
        for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
            if (cell_waiting(m->doms[i]->cells[k])) {
                ret->orders++;
                ret->bytes_left += cell_left(m->doms[i]->cells[k]);
            }
    }
    ret->bytes_moved = m->bytes_moved;
    ret->busy_s = m->busy_s;
    ret->threads = m->active;
    ret->rate = current_rate(m, vn_mono_s());
    pthread_mutex_unlock(&m->lock);
}

/* ---- the threads ---- */

/* The cell to work next: waiting, not busy, highest priority, least recently served. */
static bool pick(mover *m, mv_dom **ret_d, mv_cell **ret_c)
{
    mv_dom *bd = NULL;
    mv_cell *bc = NULL;

    for (size_t i = 0; i < m->nr_doms; i++) {
        mv_dom *d = m->doms[i];
        for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
            mv_cell *c = d->cells[k];
            if (!cell_waiting(c) || c->busy)
                continue;
            if (!bc || c->priority > bc->priority ||
                (c->priority == bc->priority && c->served_s < bc->served_s)) {
                bd = d;
                bc = c;
            }
        }
    }
    *ret_d = bd;
    *ret_c = bc;
    return bc != NULL;
}

/* Wait s seconds of the clock (a fake clock jumps over them at once), or until woken. */
static void wait_for(mover *m, double s)
{
    struct timespec ts;

    if (s <= 0 || vn_clock_skip(s))
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)s;
    ts.tv_nsec += (long)((s - (double)(time_t)s) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    (void)pthread_cond_timedwait(&m->work, &m->lock, &ts);
}

/* The span of the cell to work now, skipping what is done, refused or goes to a full target;
 * false: none left. */
static bool current_span(const mv_dom *d, mv_cell *c)
{
    while (c->next < c->nr_spans) {
        const move_span *sp = &c->spans[c->next];
        uint64_t npages = sp->len / (sp->page_size ? sp->page_size : ACT_PAGE_SIZE);
        bool refused = sp->ri < 64 && (d->refused & (1ULL << sp->ri));
        if (!refused && !nodeset_isset(&c->full, (unsigned)sp->to) && span_want(c, c->next) > 0 &&
            c->walked[c->next] < npages)
            return true;
        c->next++;
    }
    return false;
}

/* A range none of whose pages moved in this order and some would not: it stays (a long-term
 * pin the XML does not show: io_uring, RDMA), never tried again in this QEMU run. */
static void check_refused(mv_dom *d, mv_cell *c, unsigned ri)
{
    if (ri >= 64 || c->range_moved[ri] || !c->range_unmovable[ri] || (d->refused & (1ULL << ri)))
        return;
    log_warn("Guest memory of cell %u of '%s' would not move (%llu pages refused: held by the "
             "kernel, e.g. io_uring or RDMA buffers); it stays where it is and its vCPUs go to "
             "it until QEMU restarts",
             c->cell_id, LOG_Q(d->name), (unsigned long long)c->range_unmovable[ri]);
    d->refused |= 1ULL << ri;
}

static void *mover_thread(void *arg)
{
    mover *m = arg;

    pthread_mutex_lock(&m->lock);
    while (!m->stopping) {
        double now = vn_mono_s(), t0;
        mv_dom *d;
        mv_cell *c;

        bucket_refill(&m->host, now);
        if (m->working >= m->active || !pick(m, &d, &c)) {
            pthread_cond_wait(&m->work, &m->lock);
            continue;
        }
        if (!current_span(d, c)) {
            pthread_cond_broadcast(&m->idle);
            continue;
        }
        unsigned i = c->next, gen = c->gen, ram_gen = d->ram_gen;
        move_span sp = c->spans[i];
        uint64_t ps = sp.page_size ? sp.page_size : ACT_PAGE_SIZE;
        /* a window's worth of tokens (at least a page), taken when the buckets have it: a page
         * larger than a full bucket moves when the bucket is full, and the debt is paid off
         * before anything else moves */
        double grant = VN_MAX((double)VN_MIN(span_want(c, i), (uint64_t)c->batch * ps), (double)ps);
        double rate = 0, have = grant, need;
        bucket_refill(&d->own, now);
        if (m->host.rate > 0) {
            rate = m->host.rate;
            have = VN_MIN(have, m->host.tokens);
        }
        if (d->own.rate > 0) {
            rate = rate > 0 ? VN_MIN(rate, d->own.rate) : d->own.rate;
            have = VN_MIN(have, d->own.tokens);
        }
        if (rate > 0) /* no window above a second of tokens (unless a page is) */
            grant = VN_MIN(grant, VN_MAX((double)((uint64_t)rate / ps * ps), (double)ps));
        need = rate > 0 ? VN_MIN(grant, rate) : grant;
        if (have < need) {
            c->served_s = now;
            wait_for(m, (need - have) / rate);
            continue;
        }
        m->host.tokens -= grant;
        d->own.tokens -= grant;
        c->busy = true;
        c->served_s = now;
        d->busy++;
        m->working++;
        bool own_pos = sp.hot || sp.cold;
        uint64_t pos = own_pos ? c->pos[i] : d->resume[sp.ri < 64 ? sp.ri : 0];
        move_window w = {.pid = d->pid,
                         .hva = sp.hva,
                         .len = sp.len,
                         .page_size = ps,
                         .from = sp.hot ? -1 : (int)m->t->nodes[sp.from].os_index,
                         .to = (int)m->t->nodes[sp.to].os_index,
                         .shared = sp.shared,
                         .hugetlb = sp.hugetlb,
                         .batch = c->batch,
                         .reserve = sp.reserve};
        char name[SNAP_NAME_MAX];
        snprintf(name, sizeof(name), "%s", d->name);
        move_window_result res;
        pthread_mutex_unlock(&m->lock);

        t0 = vn_mono_s();
        int r = move_window_run(m->ops, &w, &pos, (uint64_t)grant, &res);
        double spent = vn_mono_s() - t0;

        pthread_mutex_lock(&m->lock);
        uint64_t moved = res.pages_moved * ps;
        m->host.tokens += grant - (double)moved; /* charged for what moved */
        d->own.tokens += grant - (double)moved;
        m->busy_s += spent;
        m->bytes_moved += moved;
        note_rate(m, t0, t0 + spent, moved);
        c->took.bytes_moved += moved;
        c->took.pages_moved += res.pages_moved;
        c->took.pages_unmovable += res.pages_unmovable;
        c->took.queries += res.queries;
        c->busy = false;
        d->busy--;
        if (m->working-- >= m->active)
            pthread_cond_signal(&m->work); /* a thread held back by the limit may go on */
        if (r < 0) {
            if (r != -ESRCH)
                log_warn("Moving guest memory of '%s' failed: %s", LOG_Q(d->name), strerror(-r));
            c->nr_spans = c->next = 0; /* dropped; the next pass orders again */
        } else if (c->gen == gen && d->ram_gen == ram_gen) {
            c->done[sp.move] += moved;
            c->walked[i] += res.pages_walked;
            if (own_pos)
                c->pos[i] = pos;
            else if (sp.ri < 64)
                d->resume[sp.ri] = pos;
            if (sp.ri < 64) {
                c->range_moved[sp.ri] += res.pages_moved;
                c->range_unmovable[sp.ri] += res.pages_unmovable;
            }
            if (res.reserve_hit) {
                /* the target has no room: what goes there waits for the next pass's order;
                 * spans to another node (a lower tier) go on */
                if (!nodeset_isset(&c->full, (unsigned)sp.to))
                    log_debug("Mover: node %u has no room left for cell %u of '%s' (%llu MiB "
                              "free, the floor %llu MiB): its spans there wait for the next "
                              "order",
                              m->t->nodes[sp.to].os_index, c->cell_id, LOG_Q(name),
                              (unsigned long long)(res.target_free >> 20),
                              (unsigned long long)(sp.hugetlb
                                                       ? 0
                                                       : (sp.reserve + RESERVE_SLACK_BYTES) >> 20));
                c->took.reserve_hit = true;
                nodeset_set(&c->full, (unsigned)sp.to);
            }
            if (!current_span(d, c) || c->next != i)
                check_refused(d, c, sp.ri);
            if (!cell_waiting(c))
                log_debug("Mover: cell %u of '%s' done", c->cell_id, LOG_Q(d->name));
        }
        pthread_mutex_unlock(&m->lock);
        if (moved)
            holds_point(HOLD_MOVE, 0, name); /* a test's, between two windows */
        pthread_mutex_lock(&m->lock);
        pthread_cond_broadcast(&m->idle);
    }
    pthread_mutex_unlock(&m->lock);
    return NULL;
}

/* ---- start, stop ---- */

int mover_start(mover **ret, const topology *t, const numa_ops *ops, unsigned threads_min,
                unsigned threads_max, unsigned rate_mib)
{
    unsigned threads;
    mover *m = calloc(1, sizeof(*m));

    if (!m)
        return -ENOMEM;
    pthread_mutex_init(&m->lock, NULL);
    pthread_cond_init(&m->work, NULL);
    pthread_cond_init(&m->idle, NULL);
    m->t = t;
    m->ops = ops;
    bucket_set(&m->host, rate_mib, vn_mono_s());
    threads = VN_MAX(threads_min, threads_max);
    threads = ops->thread_safe ? VN_MIN(VN_MAX(threads, 1u), (unsigned)MOVER_MAX_THREADS) : 1;
    m->min_threads = VN_MIN(VN_MAX(threads_min, 1u), threads);
    m->active = m->min_threads;
    m->fit_s = vn_mono_s();
    while (m->nr_threads < threads &&
           pthread_create(&m->threads[m->nr_threads], NULL, mover_thread, m) == 0)
        m->nr_threads++;
    if (!m->nr_threads) {
        mover_stop(m);
        return -EAGAIN;
    }
    m->min_threads = VN_MIN(m->min_threads, m->nr_threads);
    m->active = m->min_threads;
    *ret = m;
    return 0;
}

unsigned mover_fit_threads(mover *m, double idle_cpus)
{
    double now = vn_mono_s(), own = 0, cpus;
    unsigned n;

    if (!m)
        return 0;
    pthread_mutex_lock(&m->lock);
    /* the CPUs the mover kept busy itself count as free for it: else more threads would make
     * the host look busy and the next fit take them back */
    if (now > m->fit_s)
        own = (m->busy_s - m->fit_busy_s) / (now - m->fit_s);
    m->fit_s = now;
    m->fit_busy_s = m->busy_s;
    cpus = idle_cpus > 0 ? idle_cpus + own : own;
    n = cpus >= (double)m->nr_threads ? m->nr_threads : (unsigned)cpus;
    n = VN_MAX(n, m->min_threads);
    if (n != m->active)
        log_debug("Mover: %u thread(s) at once (%.1f CPU(s) idle, %.1f its own)", n, idle_cpus,
                  own);
    if (n > m->active)
        pthread_cond_broadcast(&m->work);
    m->active = n;
    pthread_mutex_unlock(&m->lock);
    return n;
}

void mover_set_rate(mover *m, unsigned rate_mib)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    bucket_set(&m->host, rate_mib, vn_mono_s());
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->lock);
}

void mover_stop(mover *m)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->stopping = true;
    pthread_cond_broadcast(&m->work);
    pthread_mutex_unlock(&m->lock);
    for (unsigned i = 0; i < m->nr_threads; i++)
        pthread_join(m->threads[i], NULL);
    for (size_t i = 0; i < m->nr_doms; i++)
        dom_free(m->doms[i]);
    free(m->doms);
    pthread_cond_destroy(&m->work);
    pthread_cond_destroy(&m->idle);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

bool mover_wait_idle(mover *m, double timeout_s)
{
    struct timespec end;
    bool idle = false;

    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += (time_t)timeout_s;
    pthread_mutex_lock(&m->lock);
    for (;;) {
        mv_dom *d;
        mv_cell *c;
        bool busy = false;
        for (size_t i = 0; i < m->nr_doms; i++)
            busy |= m->doms[i]->busy > 0;
        if (!busy && !pick(m, &d, &c)) {
            idle = true;
            break;
        }
        if (pthread_cond_timedwait(&m->idle, &m->lock, &end) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&m->lock);
    return idle;
}
