/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The mover (host/mover.h) against a fake kernel (a table of where each page of one process
 * is) and a fake clock: an order moves all it asks and nothing twice, a new order replaces the
 * old one (no page goes to the old target after it), the host's rate limit holds over the
 * clock, a forgotten domain moves no more, pinned pages make a range refused, a target without
 * room stops the order's spans to it at its reserve while its spans to a lower tier go on, the
 * higher priority goes first. Every wait is for the
 * mover to be idle (a timeout only says it never was).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "mover.h"
#include "tap.h"
#include "topology.h"
#include "util.h"

#define PAGES 16384 /* 64 MiB of 4 KiB pages */
#define PAGE  4096ULL
#define MIB   (1ULL << 20)
#define HVA   0x10000000ULL
#define PID   4242

static topology *topo;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int node_of[PAGES];
static bool pinned[PAGES];
static long long free_b[2];
static long long min_free[2];
static unsigned moves, queries, order_log[64], nr_log;
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_closed, gate_waiting;
static unsigned gate_held; /* moves waiting at the closed gate */

/* ---- the fake clock: it moves when the mover waits for tokens ---- */

static uint64_t clock_ns = 1000ULL * 1000000000ULL;

static uint64_t fake_mono(void)
{
    uint64_t ns;

    pthread_mutex_lock(&lock);
    ns = clock_ns;
    pthread_mutex_unlock(&lock);
    return ns;
}

static uint64_t fake_real(void)
{
    return fake_mono();
}

static void fake_skip(uint64_t ns)
{
    pthread_mutex_lock(&lock);
    clock_ns += ns;
    pthread_mutex_unlock(&lock);
}

static const vn_clock_ops fake_clock = {
    .mono_ns = fake_mono, .real_ns = fake_real, .skip = fake_skip};
/* the same clock, standing still: a mover out of tokens waits (for real) until woken */
static const vn_clock_ops frozen_clock = {.mono_ns = fake_mono, .real_ns = fake_real};

/* ---- the fake kernel ---- */

static int index_of(void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;

    return a >= HVA && a < HVA + PAGES * PAGE ? (int)((a - HVA) / PAGE) : -1;
}

static int fake_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    if (pid != PID)
        return -ESRCH;
    pthread_mutex_lock(&lock);
    queries++;
    for (unsigned long i = 0; i < count; i++) {
        int k = index_of(pages[i]);
        status[i] = k < 0 ? -EFAULT : node_of[k];
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

static int fake_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                     bool all)
{
    int left = 0;

    (void)all;
    if (pid != PID)
        return -ESRCH;
    /* a test may hold the first move until it has ordered something else */
    pthread_mutex_lock(&gate_lock);
    gate_waiting = gate_closed;
    gate_held += gate_closed;
    pthread_cond_broadcast(&gate_cond);
    while (gate_closed)
        pthread_cond_wait(&gate_cond, &gate_lock);
    gate_waiting = false;
    gate_held = 0;
    pthread_mutex_unlock(&gate_lock);
    pthread_mutex_lock(&lock);
    moves++;
    for (unsigned long i = 0; i < count; i++) {
        int k = index_of(pages[i]), to = nodes[i];
        if (k < 0 || pinned[k]) {
            left++;
            continue; /* a long-term pin: no status written */
        }
        if (node_of[k] != to) {
            free_b[node_of[k]] += (long long)PAGE;
            free_b[to] -= (long long)PAGE;
            if (free_b[to] < min_free[to])
                min_free[to] = free_b[to];
            node_of[k] = to;
            if (nr_log < 64 && (!nr_log || order_log[nr_log - 1] != (unsigned)(k / (PAGES / 2))))
                order_log[nr_log++] = (unsigned)(k / (PAGES / 2)); /* which half moved */
        }
        status[i] = to;
    }
    pthread_mutex_unlock(&lock);
    return left;
}

static long long fake_node_free(int node)
{
    long long b;

    pthread_mutex_lock(&lock);
    b = free_b[node];
    pthread_mutex_unlock(&lock);
    return b;
}

static const numa_ops fake_ops = {
    .query = fake_query, .move = fake_move, .node_free = fake_node_free, .thread_safe = true};

static void reset(int node)
{
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < PAGES; i++) {
        node_of[i] = node;
        pinned[i] = false;
    }
    free_b[0] = free_b[1] = min_free[0] = min_free[1] = 4LL << 30;
    moves = queries = nr_log = 0;
    pthread_mutex_unlock(&lock);
}

static unsigned on_node(int node, unsigned from, unsigned to)
{
    unsigned n = 0;

    pthread_mutex_lock(&lock);
    for (unsigned i = from; i < to; i++)
        n += node_of[i] == node;
    pthread_mutex_unlock(&lock);
    return n;
}

/* An order for cell `cell` of the domain: its half of the pages (cell 0: the first) in bulk from
 * `from` to `to`, bytes of it. */
static int order(mover *m, unsigned cell, int from, int to, uint64_t bytes, double prio)
{
    move_span sp = {.ri = cell,
                    .move = 0,
                    .hva = HVA + cell * (PAGES / 2) * PAGE,
                    .len = (PAGES / 2) * PAGE,
                    .from = from,
                    .to = to,
                    .bytes = bytes,
                    .reserve = 256 * MIB,
                    .page_size = PAGE};
    mover_order o = {.uuid = "00000000-0000-4000-8000-000000000001",
                     .name = "mover-test",
                     .cell = cell,
                     .pid = PID,
                     .ram_gen = 1,
                     .spans = &sp,
                     .nr_spans = bytes ? 1 : 0,
                     .nr_moves = 1,
                     .batch = 1024,
                     .priority = prio};
    return mover_order_cell(m, &o);
}

#define UUID "00000000-0000-4000-8000-000000000001"

#define TIER_FLOOR (256 * MIB + RESERVE_SLACK_BYTES) /* what the home keeps in 6b */

/* 6b's order, on a new mover: a hot range (pages 0-1023) home to node 0 and 4 MiB of cold pages
 * (the rest of cell 0's half) from node 0 down to node 1; cold_first: the demotion first */
static int tier_order(mover **m, bool cold_first)
{
    move_span hot = {.ri = 0,
                     .move = 0,
                     .hot = true,
                     .hva = HVA,
                     .len = 1024 * PAGE,
                     .from = -1,
                     .to = 0,
                     .bytes = 1024 * PAGE,
                     .reserve = 256 * MIB,
                     .page_size = PAGE};
    move_span cold = {.ri = 0,
                      .move = 1,
                      .cold = true,
                      .hva = HVA + 1024 * PAGE,
                      .len = (PAGES / 2 - 1024) * PAGE,
                      .from = 0,
                      .to = 1,
                      .bytes = 1024 * PAGE,
                      .reserve = 256 * MIB,
                      .page_size = PAGE};
    move_span spans[2] = {cold_first ? cold : hot, cold_first ? hot : cold};
    mover_order o = {.uuid = UUID,
                     .name = "mover-test",
                     .cell = 0,
                     .pid = PID,
                     .ram_gen = 1,
                     .spans = spans,
                     .nr_spans = 2,
                     .nr_moves = 2,
                     .batch = 256,
                     .priority = 10};
    int r;

    spans[0].move = 0;
    spans[1].move = 1;
    reset(0);
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < 1024; i++)
        node_of[i] = 1;
    free_b[0] = min_free[0] = (long long)TIER_FLOOR;
    pthread_mutex_unlock(&lock);
    r = mover_start(m, topo, &fake_ops, 1, 1, 256);
    return r < 0 ? r : mover_order_cell(*m, &o);
}

static unsigned forgot_at; /* pages on node 0 when mover_forget returned */

static void *forget_thread(void *arg)
{
    mover_forget(arg, UUID);
    forgot_at = on_node(0, 0, PAGES);
    return NULL;
}

/* The gate: closed, the next move waits at it (a window in flight) until it opens. */
static void gate_close(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_closed = true;
    pthread_mutex_unlock(&gate_lock);
}

/* until a move waits at the closed gate */
static void gate_wait(void)
{
    pthread_mutex_lock(&gate_lock);
    while (!gate_waiting)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

/* until n moves wait at the closed gate at once; false when they never did in 60 s of real
 * time (the timeout only says it never happened) */
static bool gate_wait_n(unsigned n)
{
    struct timespec end;
    int r = 0;

    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += 60;
    pthread_mutex_lock(&gate_lock);
    while (gate_held < n && r == 0)
        r = pthread_cond_timedwait(&gate_cond, &gate_lock, &end);
    r = gate_held >= n;
    pthread_mutex_unlock(&gate_lock);
    return r;
}

static void gate_open(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_closed = false;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

int main(void)
{
    char err[256];
    mover *m = NULL;
    mover_progress p;
    mover_stats st;

    topo = topo_new();
    if (topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, topo, err, sizeof(err)) < 0)
        return 1;
    vn_clock_use(&fake_clock);

    /* 1. one order: all of it moves, each page once, in windows */
    reset(1);
    CHECK(mover_start(&m, topo, &fake_ops, 2, 2, 256) == 0, "mover started");
    CHECK(order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10) == 0, "an order for cell 0 (32 MiB)");
    CHECK(mover_wait_idle(m, 60), "the mover goes idle");
    mover_take(m, UUID, &p);
    CHECK(on_node(0, 0, PAGES / 2) == PAGES / 2 && on_node(1, PAGES / 2, PAGES) == PAGES / 2,
          "cell 0's half all on node 0, cell 1's untouched");
    CHECK(p.cells[0].bytes_moved == (PAGES / 2) * PAGE && p.cells[0].pages_moved == PAGES / 2 &&
              !p.cells[0].queued && p.cells[0].bytes_left == 0,
          "its progress: 32 MiB moved, nothing left (%llu)",
          (unsigned long long)p.cells[0].bytes_moved);
    CHECK(moves == 8, "in 8 windows of 1024 pages (%u moves)", moves);
    mover_take(m, UUID, &p);
    CHECK(p.cells[0].bytes_moved == 0, "a second take: nothing new");

    /* 2. a new order replaces the old one: once it is in, no page goes to the old target */
    reset(1);
    gate_close();
    (void)order(m, 1, 1, 0, (PAGES / 2) * PAGE, 10);
    gate_wait();
    (void)order(m, 1, 0, 1, 0, 10); /* the plan changed: cell 1 stays on node 1 */
    gate_open();
    CHECK(mover_wait_idle(m, 60), "replaced: the mover goes idle");
    CHECK(on_node(0, PAGES / 2, PAGES) <= 1024,
          "replaced: only the window in flight went to the old target (%u pages)",
          on_node(0, PAGES / 2, PAGES));
    mover_take(m, UUID, &p);
    CHECK(!p.cells[1].queued, "replaced: nothing queued for the cell");

    /* 2b. a pass that decided again without acting: the order stays while it goes where the
     * plan puts the cell, and goes once the plan puts the cell elsewhere */
    reset(1);
    gate_close();
    (void)order(m, 1, 1, 0, (PAGES / 2) * PAGE, 10);
    gate_wait();
    vn_nodeset to0 = nodeset_from_u64(1ULL << 0), to1 = nodeset_from_u64(1ULL << 1);
    const vn_nodeset *keep[SNAP_MAX_CELLS_PER_DOMAIN] = {0};
    keep[1] = &to0;
    mover_keep_to(m, UUID, keep); /* the plan: node 0, as ordered */
    mover_get_stats(m, &st);
    CHECK(st.orders == 1, "kept: an order that goes where the plan puts the cell stays");
    keep[1] = &to1;
    mover_keep_to(m, UUID, keep); /* the plan now: node 1 */
    mover_get_stats(m, &st);
    CHECK(st.orders == 0, "retargeted: an order to where the plan no longer puts the cell goes");
    gate_open();
    CHECK(mover_wait_idle(m, 60), "retargeted: the mover goes idle");
    CHECK(on_node(0, PAGES / 2, PAGES) <= 1024,
          "retargeted: only the window in flight went to the old target (%u pages)",
          on_node(0, PAGES / 2, PAGES));

    /* 3. the host's rate: 32 MiB at 8 MiB/s (8 MiB of burst) take 3 s of the clock */
    mover_stop(m);
    reset(1);
    CHECK(mover_start(&m, topo, &fake_ops, 1, 1, 8) == 0, "a mover limited to 8 MiB/s");
    uint64_t t0 = fake_mono();
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10);
    CHECK(mover_wait_idle(m, 60), "rate: the mover goes idle");
    double took = (double)(fake_mono() - t0) / 1e9;
    CHECK(on_node(0, 0, PAGES / 2) == PAGES / 2 && took >= 2.99 && took < 4.5,
          "rate: 32 MiB moved in %.2f s of the clock (3 s: 8 MiB of burst, then 8 MiB/s)", took);
    mover_get_stats(m, &st);
    CHECK(st.rate >= 11.9 * MIB && st.rate <= 12.1 * MIB,
          "rate: the mover measured itself at %.1f MiB/s (12: its first 2 s span moved the 8 MiB "
          "of burst and 2 s at 8 MiB/s)",
          st.rate / MIB);
    fake_skip(3000000000ULL); /* 3 s of the clock with nothing to move */
    mover_get_stats(m, &st);
    CHECK(st.rate == 0, "rate: idle, it says 0 (%.1f MiB/s)", st.rate / MIB);

    /* 4. forgotten: a domain that opts out moves no more; forgetting it waits for the window
     * in flight. The clock stands still: after its first window (1 MiB, the whole bucket) the
     * mover has no tokens for another. */
    mover_stop(m);
    reset(1);
    vn_clock_use(&frozen_clock);
    CHECK(mover_start(&m, topo, &fake_ops, 1, 1, 1) == 0, "a mover limited to 1 MiB/s");
    gate_close();
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10);
    gate_wait();
    pthread_t forgetter;
    (void)pthread_create(&forgetter, NULL, forget_thread, m);
    gate_open();
    pthread_join(forgetter, NULL);
    unsigned moved = on_node(0, 0, PAGES);
    CHECK(mover_wait_idle(m, 60) && moved == 256 && forgot_at == 256,
          "forgotten: mover_forget returned after the window in flight (1 MiB) ended, and "
          "nothing moved after it (%u pages, %u when it returned)",
          moved, forgot_at);
    vn_clock_use(&fake_clock);
    mover_take(m, UUID, &p);
    CHECK(!p.cells[0].queued && p.cells[0].bytes_moved == 0,
          "forgotten: the mover knows it no more");

    /* 5. pinned pages: a range none of which moves is refused, and never tried again */
    mover_stop(m);
    reset(1);
    for (unsigned i = 0; i < PAGES / 2; i++)
        pinned[i] = true;
    CHECK(mover_start(&m, topo, &fake_ops, 1, 1, 256) == 0, "mover started");
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10);
    CHECK(mover_wait_idle(m, 60), "pinned: the mover goes idle");
    mover_take(m, UUID, &p);
    CHECK(p.cells[0].pages_moved == 0 && p.cells[0].pages_unmovable == PAGES / 2 &&
              (p.refused & 1) && mover_refused(m, UUID, 1) == 1 && mover_refused(m, UUID, 2) == 0,
          "pinned: none moved, all counted unmovable, the range refused (of its layout only)");
    unsigned before = moves;
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10);
    CHECK(mover_wait_idle(m, 60) && moves == before, "pinned: a new order does not try it again");

    /* 6. room: the target keeps its reserve; the order stops there */
    mover_stop(m);
    reset(1);
    free_b[0] = min_free[0] = (long long)(256 * MIB + 24 * MIB);
    CHECK(mover_start(&m, topo, &fake_ops, 1, 1, 256) == 0, "mover started");
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 10);
    CHECK(mover_wait_idle(m, 60), "room: the mover goes idle");
    mover_take(m, UUID, &p);
    CHECK(p.cells[0].reserve_hit && !p.cells[0].queued && on_node(0, 0, PAGES) > 0 &&
              on_node(0, 0, PAGES) < PAGES / 2 && min_free[0] >= (long long)(256 * MIB),
          "room: part moved, the order stopped at the reserve (lowest %lld MiB free)",
          min_free[0] / (long long)MIB);

    /* 6b. tiers: a cell's order to its home node (no room) and to its lower tier. Cell 0's
     * first 1024 pages (its hot range, 4 MiB) sit on node 1, the lower tier; the rest is on
     * node 0, the home, which is full to its reserve and slack. */
    mover_stop(m);
    CHECK(tier_order(&m, false) == 0, "tiers: mover started, hot range first");
    CHECK(mover_wait_idle(m, 60), "tiers, hot first: the mover goes idle");
    mover_take(m, UUID, &p);
    CHECK(on_node(1, 0, 1024) == 1024 && on_node(1, 1024, PAGES / 2) == 1024 &&
              p.cells[0].reserve_hit && !p.cells[0].queued,
          "tiers, hot first: the home had no room for the hot range (it waits), the span to the "
          "lower tier went on: 1024 cold pages demoted (%u), the hot pages still down (%u)",
          on_node(1, 1024, PAGES / 2), on_node(1, 0, 1024));
    mover_stop(m);
    CHECK(tier_order(&m, true) == 0, "tiers: mover started, cold first");
    CHECK(mover_wait_idle(m, 60), "tiers, cold first: the mover goes idle");
    mover_take(m, UUID, &p);
    CHECK(on_node(0, 0, 1024) == 1024 && on_node(1, 1024, PAGES / 2) == 1024 &&
              on_node(1, PAGES / 2, PAGES) == 0 && min_free[0] >= (long long)TIER_FLOOR,
          "tiers, cold first: 1024 cold pages demoted (%u) made room for the hot range, all "
          "home now (%u of 1024); the home never below its reserve (%lld MiB lowest)",
          on_node(1, 1024, PAGES / 2), on_node(0, 0, 1024), min_free[0] / (long long)MIB);

    /* 7. priority: with one thread the higher order goes first */
    mover_stop(m);
    reset(1);
    CHECK(mover_start(&m, topo, &fake_ops, 1, 1, 256) == 0, "mover started");
    gate_close();
    (void)order(m, 0, 1, 0, PAGE * 1024, 1); /* one window of cell 0 holds the thread */
    gate_wait();
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 1);
    (void)order(m, 1, 1, 0, (PAGES / 2) * PAGE, 50);
    gate_open();
    CHECK(mover_wait_idle(m, 60), "priority: the mover goes idle");
    CHECK(nr_log >= 3 && order_log[0] == 0 && order_log[1] == 1 && order_log[2] == 0,
          "priority: after the window in flight, cell 1 (50 points) all moved before cell 0 went "
          "on (%u switches)",
          nr_log);
    mover_get_stats(m, &st);
    CHECK(st.orders == 0 && st.bytes_moved > 0, "stats: nothing queued, bytes moved counted");

    /* 8. threads at once: 1 of 3 until CPUs are idle (a busy host), then as many as they are */
    mover_stop(m);
    reset(1);
    CHECK(mover_start(&m, topo, &fake_ops, 1, 3, 256) == 0, "mover started, 1 to 3 threads");
    mover_get_stats(m, &st);
    CHECK(st.threads == 1, "threads: 1 at once at first (%u)", st.threads);
    gate_close();
    (void)order(m, 0, 1, 0, PAGE * 1024, 1); /* one window of cell 0 holds a thread */
    gate_wait();
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 1);
    (void)order(m, 1, 1, 0, (PAGES / 2) * PAGE, 50);
    gate_open();
    CHECK(mover_wait_idle(m, 60), "threads: the mover goes idle");
    CHECK(nr_log >= 3 && order_log[0] == 0 && order_log[1] == 1 && order_log[2] == 0,
          "threads: with one at once, cell 1 (50 points) all moved before cell 0 went on, as with "
          "one thread (%u switches)",
          nr_log);
    CHECK(mover_fit_threads(m, 0.4) == 1 && mover_fit_threads(m, 2.6) == 2 &&
              mover_fit_threads(m, 12) == 3,
          "threads: 0.4 idle CPUs 1 (the least), 2.6 2, 12 3 (the most)");
    reset(1);
    gate_close();
    (void)order(m, 0, 1, 0, (PAGES / 2) * PAGE, 1);
    (void)order(m, 1, 1, 0, (PAGES / 2) * PAGE, 1);
    CHECK(gate_wait_n(2), "threads: two cells' windows at once, once 2 CPUs are idle");
    gate_open();
    CHECK(mover_wait_idle(m, 60), "threads: the mover goes idle again");
    mover_stop(m);
    topo_free(topo);
    return tap_done();
}
