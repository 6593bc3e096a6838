/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the act stage's memory moves (host/act.c) against a simulated QEMU
 * address space behind a numa_ops table of our own: windows never larger than
 * the plan's batch, only pages of the source node move, the rate limit and
 * the target's free-memory reserve stop a move, errors are sorted. Pins and originals:
 * tests/unit/test-act-pins.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "act.h"
#include "act_move.h"
#include "clock.h"
#include "model.h"
#include "mover.h"
#include "tap.h"
#include "util.h"

#define FAKE_BASE  0x7f0000000000ULL
#define FAKE_PAGES 65536 /* 256 MiB */
#define PAGE       4096ULL

static int fake_node[FAKE_PAGES];

/* The mover act orders memory moves from: one with these ops, rate and threads, kept from one
 * act_apply to the next (its resume points and refused ranges with it). */
static mover *the_mover;
static const numa_ops *mv_ops;
static unsigned mv_rate, mv_threads;

/* act_apply() on a domain as the pass hands it over, then what the mover did once it is idle
 * (act_collect_moves), as the pass's record takes it. */
static int apply_st(virt_dom *d, dom_state *st, const topology *t, const snap_domain *sd,
                    const plan_domain *pd, const numa_ops *ops, unsigned rate_mib,
                    const vn_config *cfg, act_result *res)
{
    act_target tg = act_target_of(st);
    int r;

    if (!the_mover || ops != mv_ops || rate_mib != mv_rate || cfg->move_threads != mv_threads) {
        mover_stop(the_mover);
        the_mover = NULL;
        if (mover_start(&the_mover, t, ops, cfg->move_threads, cfg->move_threads, rate_mib) < 0)
            abort();
        mv_ops = ops;
        mv_rate = rate_mib;
        mv_threads = cfg->move_threads;
    }
    tg.movers = the_mover;
    r = act_apply(d, &tg, t, sd, pd, ops, cfg, res);
    if (!mover_wait_idle(the_mover, 120))
        abort(); /* never idle: only says it never happened */
    (void)act_collect_moves(&tg, pd, res);
    return r;
}

/* ---- the fake clock: it moves when the mover waits for tokens ---- */

static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t clock_ns = 1000ULL * 1000000000ULL;

static uint64_t fake_mono(void)
{
    uint64_t ns;

    pthread_mutex_lock(&clock_lock);
    ns = clock_ns;
    pthread_mutex_unlock(&clock_lock);
    return ns;
}

static void fake_skip(uint64_t ns)
{
    pthread_mutex_lock(&clock_lock);
    clock_ns += ns;
    pthread_mutex_unlock(&clock_lock);
}

static const vn_clock_ops fake_clock = {
    .mono_ns = fake_mono, .real_ns = fake_mono, .skip = fake_skip};

static bool fake_pinned[FAKE_PAGES]; /* a long-term pin: migration fails, no status written */
static long long fake_huge[2];       /* free 2 MiB pages of each node, -1: no pool */
static unsigned max_move;            /* most pages one move call got */
static long long fake_free[2];
static unsigned max_window, calls_query, calls_move;
static int fail_with;
static unsigned stop_after; /* the kernel stops after this many entries (0: never) */
static bool last_all;       /* MPOL_MF_MOVE_ALL asked for */

static int page_index(void *p)
{
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (a < FAKE_BASE || a >= FAKE_BASE + FAKE_PAGES * PAGE)
        return -1;
    return (int)((a - FAKE_BASE) / PAGE);
}

static int fake_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    (void)pid;
    calls_query++;
    max_window = VN_MAX(max_window, (unsigned)count);
    if (fail_with)
        return fail_with;
    for (unsigned long i = 0; i < count; i++) {
        int k = page_index(pages[i]);
        status[i] = k < 0 ? -EFAULT : fake_node[k];
    }
    return 0;
}

static int fake_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                     bool all)
{
    int left = 0;

    (void)pid;
    calls_move++;
    last_all = all;
    max_move = VN_MAX(max_move, (unsigned)count);
    max_window = VN_MAX(max_window, (unsigned)count);
    for (unsigned long i = 0; i < count; i++) {
        int k = page_index(pages[i]);
        if (stop_after && i >= stop_after) {
            left += (int)(count - i); /* as Linux: what follows a failure keeps its status */
            break;
        }
        if (k < 0) {
            status[i] = -EFAULT;
            continue;
        }
        if (fake_pinned[k]) {
            /* as Linux 6.1 for a page a long-term pin holds: isolated, then its migration
             * fails; the status is not written, the count of pages not moved is returned */
            left++;
            continue;
        }
        if (fake_huge[nodes[i]] >= 0) {
            /* a hugetlb backend: the page comes from the target's pool */
            fake_huge[nodes[i]]--;
            fake_huge[fake_node[k]] += fake_huge[fake_node[k]] >= 0;
        } else {
            fake_free[fake_node[k]] += PAGE;
            fake_free[nodes[i]] -= PAGE;
        }
        fake_node[k] = nodes[i];
        status[i] = nodes[i];
    }
    return left;
}

static unsigned calls_policy;
static int fake_policy(const char *p, size_t off, size_t len, const vn_mempolicy *want,
                       vn_mempolicy *old)
{
    calls_policy++;
    (void)p;
    (void)off;
    (void)len;
    (void)want;
    (void)old;
    return 0;
}

static long long fake_node_free(int node)
{
    return fake_free[node];
}

static long long fake_node_free_huge(int node, uint64_t page_size)
{
    if (page_size != 2 * VN_MIB || fake_huge[node] < 0)
        return -ENOENT;
    return fake_huge[node];
}

static const numa_ops fake_ops = {
    .query = fake_query,
    .move = fake_move,
    .file_policy = fake_policy,
    .node_free = fake_node_free,
    .node_free_huge = fake_node_free_huge,
};

/* The fake kernel behind a lock: act.c may call it from several mover threads at once. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t fake_callers[8];
static unsigned nr_fake_callers;
static void note_caller(void)
{
    pthread_t self = pthread_self();
    for (unsigned i = 0; i < nr_fake_callers; i++)
        if (pthread_equal(fake_callers[i], self))
            return;
    if (nr_fake_callers < 8)
        fake_callers[nr_fake_callers++] = self;
}
/* rendezvous: a first caller waits (up to 120 s: only says "never came") until a second thread
 * calls too, so a test of parallel movers does not depend on how fast one thread finishes alone */
static bool rendezvous;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;
static int locked_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    pthread_mutex_lock(&fake_lock);
    note_caller();
    pthread_cond_broadcast(&fake_cond);
    if (rendezvous) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 120;
        while (nr_fake_callers < 2 && pthread_cond_timedwait(&fake_cond, &fake_lock, &until) == 0)
            ;
    }
    int r = fake_query(pid, count, pages, status);
    pthread_mutex_unlock(&fake_lock);
    return r;
}
static int locked_move(pid_t pid, unsigned long count, void **pages, const int *nodes, int *status,
                       bool all)
{
    pthread_mutex_lock(&fake_lock);
    int r = fake_move(pid, count, pages, nodes, status, all);
    pthread_mutex_unlock(&fake_lock);
    return r;
}
static long long locked_node_free(int node)
{
    pthread_mutex_lock(&fake_lock);
    long long r = fake_node_free(node);
    pthread_mutex_unlock(&fake_lock);
    return r;
}
static const numa_ops locked_ops = {
    .query = locked_query,
    .move = locked_move,
    .file_policy = fake_policy,
    .node_free = locked_node_free,
    .thread_safe = true,
};

static topology *topo;

/* 256 MiB cell 0 of a domain: `on1` pages on node 1, the rest on node 0. */
static void setup(dom_state *st, snap_domain *sd, snap_cell *cell, unsigned on1)
{
    mover_forget(the_mover, st->uuid); /* its resume points and refused ranges go */
    memset(st, 0, sizeof(*st));
    memset(sd, 0, sizeof(*sd));
    static uint64_t cell_pages[VN_MAX_NODES];
    memset(cell, 0, sizeof(*cell));
    memset(cell_pages, 0, sizeof(cell_pages));
    cell->pages = cell_pages;
    cell->nr_nodes = topo->nr_nodes;
    st->sample.pid = 12345;
    st->sample.nr_ram = 1;
    st->sample.ram[0] =
        (ram_range){.cell = 0, .gpa = 0, .hva = FAKE_BASE, .size = FAKE_PAGES * PAGE};
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = (i % 4 == 0 && on1) ? 1 : 0;
    /* every 4th page on node 1 until `on1` are there */
    unsigned n = 0;
    for (unsigned i = 0; i < FAKE_PAGES; i++) {
        if (fake_node[i] == 1 && n >= on1)
            fake_node[i] = 0;
        n += fake_node[i] == 1;
    }
    cell->page_size = PAGE;
    cell->pages[0] = FAKE_PAGES - on1;
    cell->pages[1] = on1;
    sd->nr_cells = 1;
    sd->cells = cell;
    fake_free[0] = 8LL << 30;
    fake_free[1] = 8LL << 30;
    max_window = calls_query = calls_move = max_move = 0;
    fake_huge[0] = fake_huge[1] = -1;
    fail_with = 0;
    stop_after = 0;
    memset(fake_pinned, 0, sizeof(fake_pinned));
}

static unsigned count_on(int node)
{
    unsigned n = 0;
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        n += fake_node[i] == node;
    return n;
}

static void one_move_plan(plan_domain *pd, plan_cell *pc, plan_move *mv, uint64_t bytes)
{
    memset(pd, 0, sizeof(*pd));
    memset(pc, 0, sizeof(*pc));
    *mv = (plan_move){.from_node = 1, .to_node = 0, .bytes = bytes};
    pc->cell_id = 0;
    pc->target_node = 0;
    pc->nr_moves = 1;
    pc->moves = mv;
    pc->batch_pages = 1024;
    pd->mode = VN_MODE_AUTO;
    pd->nr_cells = 1;
    pd->cells = pc;
}

static void test_move_plan(void)
{
    const ram_range ram[] = {
        {.cell = 0, .gpa = 0, .hva = 0x10000000, .size = 64 << 20, .page_size = 4096},
        {.cell = 1, .gpa = 64 << 20, .hva = 0x20000000, .size = 64 << 20},
        {.cell = 0, .gpa = 1ULL << 32, .hva = 0x30000000, .size = 32 << 20, .shared = true},
        {.cell = 0,
         .gpa = 2ULL << 32,
         .hva = 0x40000000,
         .size = 2 << 20,
         .page_size = 2 << 20,
         .hugetlb = true},
    };
    plan_move mv[2] = {
        {.from_node = -1, .to_node = 0, .is_range = true, .gpa = 1 << 20, .length = 1 << 20},
        {.from_node = 1, .to_node = 0, .bytes = 40 << 20},
    };
    plan_cell pc = {.cell_id = 0, .target_node = 0, .moves = mv, .nr_moves = 2};
    move_span sp[16];
    unsigned n;

    n = act_move_plan(&pc, ram, 4, 0, sp, 16);
    CHECK(n == 4,
          "cell 0: a hot range and a bulk span in its boot RAM, a bulk span in each "
          "device (%u spans)",
          n);
    CHECK(n == 4 && sp[0].hot && sp[0].ri == 0 && sp[0].hva == 0x10000000 + (1 << 20) &&
              sp[0].len == 1 << 20 && sp[0].from == -1 && sp[0].to == 0 && sp[0].bytes == 1 << 20,
          "the hot range first, at its address inside the boot RAM");
    CHECK(n == 4 && !sp[1].hot && sp[1].ri == 0 && sp[1].move == 1 && sp[1].hva == 0x10000000 &&
              sp[1].len == 64 << 20 && sp[1].from == 1 && sp[1].bytes == 40 << 20 &&
              sp[1].page_size == 4096,
          "then the bulk move over the whole boot RAM");
    CHECK(n == 4 && sp[2].ri == 2 && sp[2].shared && sp[2].page_size == ACT_PAGE_SIZE &&
              sp[3].ri == 3 && sp[3].hugetlb && sp[3].page_size == 2 << 20,
          "then the cell's devices, in ram[] order, with their backends' page size and sharing; "
          "cell 1's range is not among them");
    n = act_move_plan(&pc, ram, 4, 1u << 0 | 1u << 3, sp, 16);
    CHECK(n == 1 && sp[0].ri == 2 && !sp[0].hot,
          "ranges whose pages would not move are left out, the hot range with them (%u spans)", n);
    n = act_move_plan(&pc, ram, 4, 0, sp, 3);
    CHECK(n == 3, "never more spans than room for (%u)", n);
    pc.cell_id = 2;
    CHECK(act_move_plan(&pc, ram, 4, 0, sp, 16) == 0, "a cell without RAM ranges moves nothing");

    /* a cold bulk move (tiers): the stretches of each range between the hot ranges, which
     * overlap and come in any order; a 2 MiB huge page range is cut to whole pages */
    plan_move tm[4] = {
        {.from_node = 0, .to_node = 1, .bytes = 8 << 20, .cold = true},
        {.from_node = -1, .to_node = 0, .is_range = true, .gpa = 8 << 20, .length = 4 << 20},
        {.from_node = -1, .to_node = 0, .is_range = true, .gpa = 1 << 20, .length = 2 << 20},
        {.from_node = -1, .to_node = 0, .is_range = true, .gpa = 10 << 20, .length = 6 << 20},
    };
    plan_cell tc = {.cell_id = 0, .target_node = 0, .lower_tier = 1, .moves = tm, .nr_moves = 4};
    n = act_move_plan(&tc, ram, 4, 0, sp, 16);
    CHECK(n == 8 && sp[0].cold && sp[0].hva == 0x10000000 && sp[0].len == 1 << 20 &&
              sp[1].hva == 0x10000000 + (3 << 20) && sp[1].len == 5 << 20 &&
              sp[2].hva == 0x10000000 + (16 << 20) && sp[2].len == 48 << 20 && sp[0].from == 0 &&
              sp[2].to == 1 && sp[2].bytes == 8 << 20 && sp[2].move == 0,
          "cold: the boot RAM less the hot ranges 1-3 MiB and 8-16 MiB (merged) is three "
          "spans down to the lower tier, each with the move's bytes (%u spans)",
          n);
    CHECK(n == 8 && sp[3].hot && sp[4].hot && sp[5].hot && sp[6].cold && sp[6].ri == 2 &&
              sp[6].len == 32 << 20 && sp[7].cold && sp[7].ri == 3 && sp[7].len == 2 << 20,
          "cold: then the hot ranges; the devices without hot ranges are a span each, whole");
    tm[2].gpa = 2ULL << 32;
    tm[2].length = 4096;
    n = act_move_plan(&tc, ram, 4, 0, sp, 16);
    CHECK(n == 6 && sp[0].len == 8 << 20 && sp[1].len == 48 << 20 && sp[4].cold && sp[4].ri == 2 &&
              sp[5].hot && sp[5].ri == 3 && sp[5].hva == 0x40000000 && sp[5].len == 2 << 20 &&
              sp[5].bytes == 2 << 20,
          "cold: a hot 4 KiB inside the 2 MiB huge page makes the whole page hot: no cold span "
          "of that range, and its hot span is the whole page (%u spans)",
          n);
    n = act_move_plan(&tc, ram, 4, 0, sp, 2);
    CHECK(n == 2, "cold: never more spans than room for (%u)", n);
    /* the cell's hot list (ranges that do not move this pass, fading ones) counts as hot too */
    plan_range keep[] = {{.gpa = 32 << 20, .length = 16 << 20}};
    plan_cell kc = {.cell_id = 0,
                    .target_node = 0,
                    .lower_tier = 1,
                    .moves = tm,
                    .nr_moves = 1,
                    .hot = keep,
                    .nr_hot = 1};
    n = act_move_plan(&kc, ram, 4, 0, sp, 16);
    CHECK(n == 4 && sp[0].cold && sp[0].hva == 0x10000000 && sp[0].len == 32 << 20 &&
              sp[1].hva == 0x10000000 + (48 << 20) && sp[1].len == 16 << 20,
          "cold: the hot list's 32-48 MiB is left out of the boot RAM's cold spans (%u spans)", n);
    /* anonymous RAM the kernel migrates in 2 MiB transparent huge pages: a cold stretch next
     * to a hot range leaves the huge page the hot bytes are in alone (moving one base page of
     * it would take the hot bytes down too) */
    ram_range thp[4];
    memcpy(thp, ram, sizeof(thp));
    thp[0].granule = 2 << 20;
    tm[2].gpa = 1 << 20;
    tm[2].length = 2 << 20;
    tm[1].gpa = 9 << 20;
    tm[1].length = 3 << 20;
    n = act_move_plan(&tc, thp, 4, 0, sp, 16);
    CHECK(n == 7 && sp[0].cold && sp[0].hva == 0x10000000 + (4 << 20) && sp[0].len == 4 << 20 &&
              sp[1].cold && sp[1].hva == 0x10000000 + (16 << 20) && sp[1].len == 48 << 20 &&
              sp[2].hot,
          "cold, THP: hot 1-3 MiB and 9-16 MiB leave 4-8 MiB and 16-64 MiB, none of 0-1 or "
          "3-4 MiB (%u spans; %llx +%llu)",
          n, n ? (unsigned long long)sp[0].hva : 0ULL, n ? (unsigned long long)sp[0].len : 0ULL);
}

int main(void)
{
    dom_state *st = calloc(1, sizeof(*st));
    snap_domain sd;
    snap_cell cell;
    plan_domain pd;
    plan_cell pc;
    plan_move mv;
    unsigned b = 1024; /* MiB/s: the mover's rate limit */
    act_result res;
    vn_config cfg;
    char err[256];
    int r;

    topo = topo_new();
    if (topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, topo, err,
                  sizeof(err)) < 0)
        return 1;
    config_defaults(&cfg);
    vn_clock_use(&fake_clock);
    test_move_plan();

    /* 1. all 8192 pages on node 1 (32 MiB) move to node 0, in windows of <= 1024 */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && count_on(1) == 0 && res.cells[0].bytes_moved == 8192 * PAGE &&
              st->count.pages_moved == 8192,
          "32 MiB on node 1 all moved to node 0 (r=%d, left %u, moved %llu)", r, count_on(1),
          (unsigned long long)res.cells[0].bytes_moved);
    /* node 1's pages are every 4th of the first 32768: the walk stops after 32 windows */
    CHECK(max_window <= 1024 && calls_query == 32 && calls_move == 32,
          "every call covers <= batch_pages (max %u); the walk stops once the bytes moved "
          "(%u queries, %u moves)",
          max_window, calls_query, calls_move);
    CHECK(count_on(0) == FAKE_PAGES, "pages already on node 0 were not touched");

    /* 2. only part of the planned bytes: stops at the byte count */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 1000 * PAGE);
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && count_on(1) == 8192 - 1000, "a move of 1000 pages moves exactly 1000 (%u left)",
          count_on(1));

    /* 3. the rate limit: at 4 MiB/s (a second's burst first) 32 MiB take 7 s of the clock */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    b = 4;
    uint64_t t0 = fake_mono();
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    double took = (double)(fake_mono() - t0) / 1e9;
    CHECK(r == 0 && count_on(1) == 0 && res.cells[0].bytes_moved == 8192 * PAGE && took >= 6.99 &&
              took < 8.5,
          "4 MiB/s: all 32 MiB moved in %.2f s of the clock (7: 4 MiB at once, 28 at the rate)",
          took);

    /* 4. the free-memory reserve of the target */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    b = 1024;
    cfg.reserve_bytes = 100 * VN_MIB;
    cfg.reserve_fraction = 0;
    /* room for 512 pages above the reserve and act's 16 MiB slack */
    fake_free[0] = (long long)(100 * VN_MIB + 16 * VN_MIB + 2 * VN_MIB);
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.cells[0].reserve_hit && count_on(1) == 8192 - 512 &&
              fake_free[0] == (long long)(116 * VN_MIB),
          "the target stops at its reserve plus act's slack (moved %llu pages, free left %lld MiB)",
          (unsigned long long)res.cells[0].pages_moved, fake_free[0] >> 20);
    fake_free[0] = (long long)(50 * VN_MIB);
    setup(st, &sd, &cell, 8192);
    fake_free[0] = (long long)(50 * VN_MIB);
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && count_on(1) == 8192 && calls_move == 0,
          "a target already below its reserve receives nothing");
    config_defaults(&cfg);

    /* 5. errors are sorted */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    fail_with = -ESRCH;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.kind == ACT_OK && count_on(1) == 8192 && !res.cells[0].bytes_left,
          "QEMU gone during a move: the mover drops the order, nothing moved; the pass finds "
          "the domain gone (r=%d)",
          r);
    CHECK(act_classify(-EAGAIN) == ACT_TRANSIENT && act_classify(-EBUSY) == ACT_TRANSIENT &&
              act_classify(-ENOMEM) == ACT_TRANSIENT && act_classify(-EPERM) == ACT_PERMANENT &&
              act_classify(-EINVAL) == ACT_PERMANENT && act_classify(-ESRCH) == ACT_GONE &&
              act_classify(-ENOTCONN) == ACT_DISCONNECTED && act_classify(0) == ACT_OK,
          "transient: EAGAIN EBUSY ENOMEM; permanent: EPERM EINVAL; ESRCH gone");

    /* 6. no RAM layout (QMP off): nothing moves, no error */
    setup(st, &sd, &cell, 8192);
    st->sample.nr_ram = 0;
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && calls_query == 0 && count_on(1) == 8192,
          "without a RAM layout no memory is touched");

    /* 7. orders that replace each other resume where the last one stopped: over all of them
     * the walk queries each window about once, not from page 0 every order */
    setup(st, &sd, &cell, 8192);
    unsigned passes = 0, queries = 0;
    while (count_on(1) > 0 && passes < 40) {
        one_move_plan(&pd, &pc, &mv, VN_MIN(count_on(1), 1024u) * PAGE); /* 1024 an order */
        calls_query = 0;
        r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
        if (r < 0)
            break;
        queries += calls_query;
        passes++;
    }
    CHECK(r == 0 && count_on(1) == 0 && passes == 8 && queries <= 32 + 8,
          "8192 pages ordered 1024 at a time: 8 orders and %u window queries in all (<= 32 "
          "windows + one re-query an order, not a walk from page 0 every order)",
          queries);

    /* 9. move_pages(2) returning a positive count is a result: an anonymous backend moves
     * with MPOL_MF_MOVE; pages the kernel holds (a long-term pin: no status written, the
     * count returned) are counted, never as moved, and not charged; a cell none of whose
     * pages moved is not tried again (its memory is pinned for this QEMU run) */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_pinned[i] = fake_node[i] == 1;
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && !last_all && count_on(1) == 8192 && res.cells[0].pages_moved == 0 &&
              res.cells[0].bytes_moved == 0 && res.cells[0].pages_unmovable == 8192 &&
              st->count.pages_unmovable == 8192,
          "pinned pages: MPOL_MF_MOVE, 8192 unmovable counted (%llu), none moved",
          (unsigned long long)res.cells[0].pages_unmovable);
    CHECK(res.cells[0].refused && (st->mover.mem_refused & 1),
          "none moved: the cell's memory counts as pinned from now on");
    calls_query = calls_move = 0;
    for (int i = 0; i < 3; i++)
        r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && calls_query == 0 && calls_move == 0,
          "later passes never query or move it again (%u queries, %u moves)", calls_query,
          calls_move);
    setup(st, &sd, &cell, 8192);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_pinned[i] = fake_node[i] == 1 && i % 8 == 0;
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.cells[0].pages_moved == 4096 && res.cells[0].pages_unmovable == 4096 &&
              !res.cells[0].refused && st->mover.mem_refused == 0,
          "half pinned: 4096 move, 4096 counted unmovable, the cell stays movable (%llu moved, "
          "%llu unmovable)",
          (unsigned long long)res.cells[0].pages_moved,
          (unsigned long long)res.cells[0].pages_unmovable);

    /* 10. the kernel stops part-way (a positive return, the rest of status untouched): what
     * it wrote as moved counts as moved, the rest as not moved */
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    stop_after = 100;
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.cells[0].pages_moved == 8192 - count_on(1) &&
              res.cells[0].bytes_moved == (8192 - count_on(1)) * PAGE &&
              res.cells[0].pages_unmovable > 0 && !res.cells[0].refused,
          "a move the kernel stopped early counts exactly the pages it moved (%llu, %u left, "
          "%llu not moved)",
          (unsigned long long)res.cells[0].pages_moved, count_on(1),
          (unsigned long long)res.cells[0].pages_unmovable);

    /* 12. a hugetlbfs backend (2 MiB pages): walked, moved and charged in 2 MiB pages;
     * room is the target's free huge pages, not MemFree */
    setup(st, &sd, &cell, 0);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = 1;
    st->sample.ram[0].page_size = 2 * VN_MIB;
    st->sample.ram[0].hugetlb = true;
    cell.page_size = 2 * VN_MIB;
    one_move_plan(&pd, &pc, &mv, 128 * 2 * VN_MIB);
    pc.batch_pages = 16;
    fake_huge[0] = 40;
    fake_free[0] = 1; /* MemFree is not what a huge page needs */
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.cells[0].pages_moved == 40 && res.cells[0].bytes_moved == 80 * VN_MIB &&
              res.cells[0].reserve_hit && max_window <= 16,
          "2 MiB pages: 40 move (the target's 40 free huge pages), 80 MiB moved, "
          "windows of <= 16 pages (moved %llu, bytes %llu)",
          (unsigned long long)res.cells[0].pages_moved,
          (unsigned long long)res.cells[0].bytes_moved);
    setup(st, &sd, &cell, 0);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = 1;
    st->sample.ram[0].page_size = 2 * VN_MIB;
    st->sample.ram[0].hugetlb = true;
    fake_huge[0] = 0;
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && calls_move == 0 && res.cells[0].reserve_hit,
          "no free huge page on the target: nothing moves, whatever MemFree says");

    /* 13. 1 GiB pages: one page per move_pages(2) call, moved with a full 100 MiB bucket */
    setup(st, &sd, &cell, 0);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = 1;
    st->sample.ram[0].page_size = 1ULL << 30;
    st->sample.ram[0].size = 1ULL << 30; /* (the fake kernel knows the first 256 MiB) */
    cell.page_size = 1ULL << 30;
    one_move_plan(&pd, &pc, &mv, 1ULL << 30);
    b = 100; /* 100 MiB a second, a bucket of 100 MiB */
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(r == 0 && res.cells[0].pages_moved == 1 && max_move == 1,
          "1 GiB pages: one moves with a full 100 MiB bucket, one per call (%llu moved)",
          (unsigned long long)res.cells[0].pages_moved);
    /* ... and a page larger than the bucket leaves a debt, paid off before the next moves:
     * 2 MiB pages at 1 MiB/s, a page every 2 s */
    setup(st, &sd, &cell, 0);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = 1;
    st->sample.ram[0].page_size = 2 * VN_MIB;
    st->sample.ram[0].hugetlb = true;
    cell.page_size = 2 * VN_MIB;
    fake_huge[0] = 100;
    one_move_plan(&pd, &pc, &mv, 4 * 2 * VN_MIB);
    b = 1;
    t0 = fake_mono();
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    took = (double)(fake_mono() - t0) / 1e9;
    CHECK(r == 0 && res.cells[0].pages_moved == 4 && took >= 5.99 && took < 8,
          "2 MiB pages at 1 MiB/s: each moves once the bucket is full, the next after the debt "
          "(%llu moved in %.1f s of the clock, 6 expected)",
          (unsigned long long)res.cells[0].pages_moved, took);

    /* 14. a cell with a memory device (pc-dimm): its boot RAM and the device are two ranges;
     * a bulk move takes its bytes from the boot RAM first, then from the device */
    setup(st, &sd, &cell, 0);
    for (unsigned i = 0; i < FAKE_PAGES; i++)
        fake_node[i] = 1;
    st->sample.nr_ram = 2;
    st->sample.ram[0].size = FAKE_PAGES / 2 * PAGE;
    st->sample.ram[1] = (ram_range){.cell = 0,
                                    .gpa = 1ULL << 32,
                                    .hva = FAKE_BASE + FAKE_PAGES / 2 * PAGE,
                                    .size = FAKE_PAGES / 2 * PAGE};
    one_move_plan(&pd, &pc, &mv, (FAKE_PAGES / 2 + 1000) * PAGE);
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    unsigned dev_on0 = 0;
    for (unsigned i = FAKE_PAGES / 2; i < FAKE_PAGES; i++)
        dev_on0 += fake_node[i] == 0;
    CHECK(r == 0 && res.cells[0].pages_moved == FAKE_PAGES / 2 + 1000 && dev_on0 == 1000,
          "boot RAM and a pc-dimm: all %u boot pages, then 1000 of the device's move (%u)",
          FAKE_PAGES / 2, dev_on0);
    st->mover.mem_refused = 1; /* the boot RAM would not move: the device still does */
    for (unsigned i = 0; i < FAKE_PAGES / 2; i++)
        fake_node[i] = 1;
    one_move_plan(&pd, &pc, &mv, 2000 * PAGE);
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    dev_on0 = 0;
    for (unsigned i = FAKE_PAGES / 2; i < FAKE_PAGES; i++)
        dev_on0 += fake_node[i] == 0;
    CHECK(r == 0 && res.cells[0].pages_moved == 2000 && dev_on0 == 3000 &&
              count_on(1) == FAKE_PAGES - 3000,
          "the boot RAM refused: it is not touched, the next move takes its 2000 pages from the "
          "device (%u there)",
          dev_on0);

    /* 11. a shared (memfd) backend moves with MPOL_MF_MOVE_ALL: vhost-user maps it too */
    setup(st, &sd, &cell, 8192);
    st->sample.ram[0].shared = true;
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, b, &cfg, &res);
    CHECK(calls_move > 0 && last_all, "a shared backend's pages move with MPOL_MF_MOVE_ALL");

    /* 11b. a shared backend's policy is set through the mappings at the cell's RAM, which QEMU
     * says where they are: only a mapping that is shared and writable is opened, never a private
     * or read-only one (a file QEMU may only read, opened read-write by root). Our own process
     * plays QEMU, with a memfd mapped three ways. Before the check each was opened and set. */
    {
        int mfd = memfd_create("vnuma-test-backend", MFD_CLOEXEC);
        size_t sz = 2 * VN_MIB;
        if (CHECK(mfd >= 0 && ftruncate(mfd, (off_t)sz) == 0, "a memfd of 2 MiB")) {
            static const struct {
                int prot, flags;
                bool ok;
                const char *what;
            } maps[] = {
                {PROT_READ | PROT_WRITE, MAP_SHARED, true, "shared and writable (rw-s)"},
                {PROT_READ | PROT_WRITE, MAP_PRIVATE, false, "private (rw-p)"},
                {PROT_READ, MAP_SHARED, false, "read-only (r--s)"},
            };
            for (unsigned i = 0; i < VN_ARRAY_SIZE(maps); i++) {
                void *m = mmap(NULL, sz, maps[i].prot, maps[i].flags, mfd, 0);
                if (!CHECK(m != MAP_FAILED, "mapped %s", maps[i].what))
                    continue;
                setup(st, &sd, &cell, 0);
                st->sample.pid = getpid();
                st->sample.ram[0] = (ram_range){
                    .cell = 0, .hva = (uint64_t)(uintptr_t)m, .size = sz, .shared = true};
                one_move_plan(&pd, &pc, &mv, 0);
                pc.nr_moves = 0;
                calls_policy = 0;
                r = apply_st(NULL, st, topo, &sd, &pd, &fake_ops, 1024, &cfg, &res);
                CHECK(maps[i].ok ? r == 0 && calls_policy == 1 && res.memfd_bound == 1
                                 : r == -EPERM && calls_policy == 0 && res.kind == ACT_PERMANENT,
                      "a backend mapped %s: %s (r=%d, %u policy calls, %s)", maps[i].what,
                      maps[i].ok ? "its policy is set" : "refused, not opened", r, calls_policy,
                      res.error);
                (void)munmap(m, sz);
            }
            (void)close(mfd);
        }
    }

    /* 12. cells move in parallel (move_threads), sharing the host's tokens: two cells of
     * 128 MiB, 24 MiB and 8 MiB on node 1; everything moves, from two threads, counted once */
    for (int round = 0; round < 1; round++) {
        snap_cell cells[2];
        plan_cell pcs[2];
        plan_move mvs[2];
        setup(st, &sd, &cell, 0);
        static uint64_t cells_pages[2][VN_MAX_NODES];
        memset(cells, 0, sizeof(cells));
        memset(cells_pages, 0, sizeof(cells_pages));
        for (unsigned k = 0; k < 2; k++) {
            cells[k].pages = cells_pages[k];
            cells[k].nr_nodes = topo->nr_nodes;
        }
        memset(pcs, 0, sizeof(pcs));
        st->sample.nr_ram = 2;
        for (unsigned k = 0; k < 2; k++) {
            st->sample.ram[k] = (ram_range){.cell = k,
                                            .gpa = k * (FAKE_PAGES / 2) * PAGE,
                                            .hva = FAKE_BASE + k * (FAKE_PAGES / 2) * PAGE,
                                            .size = (FAKE_PAGES / 2) * PAGE};
            unsigned on1 = k == 0 ? 6144 : 2048;
            for (unsigned i = 0; i < on1; i++)
                fake_node[k * (FAKE_PAGES / 2) + i * 4] = 1;
            cells[k].id = k;
            cells[k].page_size = PAGE;
            cells[k].pages[0] = FAKE_PAGES / 2 - on1;
            cells[k].pages[1] = on1;
            mvs[k] = (plan_move){.from_node = 1, .to_node = 0, .bytes = on1 * PAGE};
            pcs[k] = (plan_cell){.cell_id = k,
                                 .target_node = 0,
                                 .nr_moves = 1,
                                 .moves = &mvs[k],
                                 .batch_pages = 256};
        }
        sd.nr_cells = 2;
        sd.cells = cells;
        pd = (plan_domain){.mode = VN_MODE_AUTO, .nr_cells = 2, .cells = pcs};
        cfg.move_threads = 2;
        nr_fake_callers = 0;
        rendezvous = round == 0;
        b = 1024;
        r = apply_st(NULL, st, topo, &sd, &pd, &locked_ops, b, &cfg, &res);
        rendezvous = false;
        uint64_t m0 = res.cells[0].bytes_moved, m1 = res.cells[1].bytes_moved;
        CHECK(r == 0 && count_on(1) == 0 && m0 == 6144 * PAGE && m1 == 2048 * PAGE &&
                  st->count.pages_moved == 8192 && nr_fake_callers == 2,
              "two cells moved by two threads (%u): 24 + 8 MiB, counted once (r=%d, %llu + %llu "
              "bytes)",
              nr_fake_callers, r, (unsigned long long)m0, (unsigned long long)m1);
    }
    cfg.move_threads = 1;
    setup(st, &sd, &cell, 8192);
    one_move_plan(&pd, &pc, &mv, 8192 * PAGE);
    nr_fake_callers = 0;
    b = 1024;
    r = apply_st(NULL, st, topo, &sd, &pd, &locked_ops, b, &cfg, &res);
    CHECK(r == 0 && count_on(1) == 0 && nr_fake_callers == 1 &&
              !pthread_equal(fake_callers[0], pthread_self()),
          "move_threads = 1: one mover thread moves it, not the thread that acted");
    config_defaults(&cfg);

    mover_stop(the_mover);
    free(st);
    topo_free(topo);
    return tap_done();
}
