/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate-bench: how fast vnumad moves guest memory between two host nodes, and how well
 * its rate limit holds. Needs two NUMA nodes (the proving ground). A child process stands
 * for QEMU: one anonymous region first-touched by a thread bound to node FROM. Moves go
 * as the daemon makes them: act_apply() (host/act.c) orders them from the mover
 * (host/mover.c), whose threads work them window by window (host/move_window.c: one
 * move_pages status query, then one move_pages of the pages found on the source node, the
 * free-memory check before every window, the token bucket) with numa_libnuma
 * (host/numa_ops.c); the bench waits for the mover to be idle. For comparison, bare
 * move_pages calls. Prints Markdown table rows.
 *
 *   migrate-bench batch --size-mib 512 --from 0 --to 1 [--batches 64,256,1024,4096,16384]
 *       memcpy bandwidth node FROM -> node TO (the physical limit), then per batch size the
 *       MiB/s of act_apply() and of bare move_pages, FROM -> TO and back
 *   migrate-bench rate --size-mib 512 --from 0 --to 1 [--rates 16,64,128,256,1024] [--passes 2]
 *       the region moved there and back PASSES times by a mover limited to each rate; the
 *       achieved MiB/s (after the bucket's first second) against the configured rate
 *   migrate-bench parallel --size-mib 512 --from 0 --to 1 [--cells 4] [--threads 1,2,4]
 *                          [--thp | --hugetlb]
 *       the region as CELLS cells of a domain, all ordered by one act_apply() from a mover
 *       with move_threads = each of THREADS threads: MiB/s there and back against memcpy, and
 *       (--thp: the region is madvise(MADV_HUGEPAGE)d) its AnonHugePages before and after;
 *       --hugetlb: the region is of 2 MiB hugetlb pages (MAP_HUGETLB: the nodes need free huge
 *       pages), moved in windows of 16 MiB as the 4 KiB region is
 */
#include <getopt.h>
#include <linux/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "act.h"
#include "act_move.h"
#include "bench-target.h"
#include "model.h"
#include "mover.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"
#include "util.h"

static const numa_ops *ops = &numa_libnuma;
static uint64_t opt_size = 512ULL << 20;
static int opt_from = 0, opt_to = 1;
static unsigned opt_passes = 2;
static char opt_batches[128] = "64,256,1024,4096,16384";
static char opt_rates[128] = "16,64,128,256,1024";
static char opt_threads[128] = "1,2,4";
static unsigned opt_cells = 4;
static bool opt_thp, opt_hugetlb;

#define HUGE_2M (2ULL << 20)

static void child_region(void *arg, int cmd_fd, int reply_fd)
{
    void *p;
    uint64_t hva;
    char c;

    (void)arg;
    /* first touch by a thread of node FROM, default policy: like a vCPU thread faulting in
     * guest RAM (numa_maps shows such a backend "default") */
    if (bt_bind_thread_to_node(opt_from) < 0)
        fprintf(stderr, "migrate-bench: cannot bind to node %d\n", opt_from);
    if (opt_hugetlb) {
        p = mmap(NULL, opt_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0);
        if (p == MAP_FAILED) {
            perror("migrate-bench: mmap of 2 MiB hugetlb pages (nr_hugepages on the node?)");
            _exit(1);
        }
        for (uint64_t off = 0; off < opt_size; off += HUGE_2M)
            ((volatile char *)p)[off] = 1;
    } else {
        p = bt_map_region(opt_size, opt_thp);
        bt_touch(p, opt_size);
    }
    hva = (uintptr_t)p;
    if (bt_write_full(reply_fd, &hva, sizeof(hva)) < 0)
        _exit(1);
    while (read(cmd_fd, &c, 1) > 0)
        ;
}

/* pages of the region on each kernel node (exact: every page, windows of 4096) */
static int count_nodes(const bt_target *tg, uint64_t counts[64])
{
    uint64_t np = tg->len / BT_PAGE;
    _cleanup_free_ void **pages = calloc(4096, sizeof(void *));
    _cleanup_free_ int *status = calloc(4096, sizeof(int));

    if (!pages || !status)
        return -ENOMEM;
    memset(counts, 0, 64 * sizeof(*counts));
    for (uint64_t first = 0; first < np; first += 4096) {
        unsigned long n = (unsigned long)VN_MIN(4096, np - first);
        int r;
        for (unsigned long i = 0; i < n; i++)
            pages[i] = (void *)(uintptr_t)(tg->hva + (first + i) * BT_PAGE);
        if ((r = ops->query(tg->pid, n, pages, status)) < 0)
            return r;
        for (unsigned long i = 0; i < n; i++)
            if (status[i] >= 0 && status[i] < 64)
                counts[status[i]]++;
    }
    return 0;
}

/* ---- act_apply() set-up: one domain, one cell, one bulk move ---- */

typedef struct act_ctx {
    topology *t;
    dom_state *st;
    snap_domain sd;
    snap_cell cell;
    plan_domain pd;
    plan_cell pc;
    plan_move mv;
    vn_config cfg;
} act_ctx;

static void act_ctx_init(act_ctx *a, const bt_target *tg)
{
    char err[256];

    memset(a, 0, sizeof(*a));
    a->t = topo_new();
    a->st = calloc(1, sizeof(*a->st));
    if (!a->t || !a->st || topo_load(TOPO_SOURCE_LIVE, NULL, NULL, a->t, err, sizeof(err)) < 0) {
        fprintf(stderr, "migrate-bench: topology: %s\n", a->t ? err : "out of memory");
        exit(1);
    }
    if (topo_node_index(a->t, (unsigned)opt_from) < 0 ||
        topo_node_index(a->t, (unsigned)opt_to) < 0) {
        fprintf(stderr, "migrate-bench: nodes %d and %d are not both in the topology\n", opt_from,
                opt_to);
        exit(77);
    }
    config_defaults(&a->cfg);
    a->cfg.reserve_bytes = 0; /* only act.c's 16 MiB slack stays */
    a->cfg.reserve_fraction = 0;
    a->st->sample.pid = tg->pid;
    a->st->sample.nr_ram = 1;
    a->st->sample.ram[0] = (ram_range){.cell = 0, .gpa = 0, .hva = tg->hva, .size = tg->len};
    static uint64_t cell_pages[VN_MAX_NODES];
    a->cell.pages = cell_pages;
    a->cell.nr_nodes = a->t->nr_nodes;
    a->cell.id = 0;
    a->cell.page_size = BT_PAGE;
    a->cell.binding.mode = VN_MEM_NONE;
    a->sd.nr_cells = 1;
    a->sd.cells = &a->cell;
    a->sd.mode = VN_MODE_AUTO;
    a->pd.mode = VN_MODE_AUTO;
    a->pd.nr_cells = 1;
    a->pd.cells = &a->pc;
    a->pc.cell_id = 0;
    a->pc.nr_moves = 1;
    a->pc.moves = &a->mv;
}

/* The plan carried out as the daemon does: act_apply() orders its moves from a mover of
 * `threads` threads limited to rate_mib; then the mover until it is idle, and what it did. */
static int act_run(act_ctx *a, unsigned threads, unsigned rate_mib, act_result *res)
{
    mover *m = NULL;
    act_target tg = act_target_of(a->st);
    int r = mover_start(&m, a->t, ops, threads, threads, rate_mib);

    if (r < 0)
        return r;
    tg.movers = m;
    r = act_apply(NULL, &tg, a->t, &a->sd, &a->pd, ops, &a->cfg, res);
    if (!mover_wait_idle(m, 3600))
        r = r < 0 ? r : -ETIMEDOUT;
    (void)act_collect_moves(&tg, &a->pd, res);
    mover_stop(m);
    return r;
}

/* One act_apply() moving the whole region from kernel node `from` to `to`. */
static int act_move(act_ctx *a, int from, int to, uint32_t batch, unsigned rate_mib,
                    act_result *res)
{
    int fi = topo_node_index(a->t, (unsigned)from), ti = topo_node_index(a->t, (unsigned)to);

    a->pc.target_node = ti;
    a->pc.current_node = fi;
    a->pc.batch_pages = batch;
    a->mv = (plan_move){.from_node = fi, .to_node = ti, .bytes = a->st->sample.ram[0].size};
    return act_run(a, 1, rate_mib, res);
}

/* Bare move_pages of every page to `to`, `batch` pages per call (no status query). */
static int raw_move(const bt_target *tg, int to, uint32_t batch)
{
    uint64_t np = tg->len / BT_PAGE;
    _cleanup_free_ void **pages = calloc(batch, sizeof(void *));
    _cleanup_free_ int *nodes = calloc(batch, sizeof(int));
    _cleanup_free_ int *status = calloc(batch, sizeof(int));

    if (!pages || !nodes || !status)
        return -ENOMEM;
    for (uint64_t first = 0; first < np; first += batch) {
        unsigned long n = (unsigned long)VN_MIN(batch, np - first);
        int r;
        for (unsigned long i = 0; i < n; i++) {
            pages[i] = (void *)(uintptr_t)(tg->hva + (first + i) * BT_PAGE);
            nodes[i] = to;
        }
        if ((r = ops->move(tg->pid, n, pages, nodes, status, true)) < 0)
            return r;
    }
    return 0;
}

static void *node_buffer(uint64_t len, int node)
{
    void *p = bt_map_region(len, false);

    if (bt_mbind(p, len, BT_MPOL_BIND, 1UL << node) < 0) {
        fprintf(stderr, "migrate-bench: mbind to node %d failed\n", node);
        exit(1);
    }
    bt_touch(p, len);
    return p;
}

/* median MiB/s of 5 memcpy of len bytes from a buffer on `src` to one on `dst` */
static double memcpy_mibs(uint64_t len, int src, int dst)
{
    char *s = node_buffer(len, src), *d = node_buffer(len, dst);
    double v[5];

    memset(s, 0x5a, len);
    for (unsigned i = 0; i < 5; i++) {
        uint64_t t0 = bt_now_ns();
        memcpy(d, s, len);
        v[i] = (double)len / (1 << 20) / ((double)(bt_now_ns() - t0) / 1e9);
    }
    munmap(s, len);
    munmap(d, len);
    return bt_median(v, 5);
}

static unsigned parse_list(const char *s, unsigned *out, unsigned max)
{
    unsigned n = 0;
    char *end;

    while (*s && n < max) {
        out[n++] = (unsigned)strtoul(s, &end, 10);
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s)
            break;
    }
    return n;
}

static void mode_batch(void)
{
    unsigned batches[16], nb = parse_list(opt_batches, batches, 16);
    uint64_t counts[64];
    double mib = (double)opt_size / (1 << 20);
    double local = memcpy_mibs(VN_MIN(opt_size, 256ULL << 20), opt_from, opt_from);
    double remote = memcpy_mibs(VN_MIN(opt_size, 256ULL << 20), opt_from, opt_to);
    bt_target tg = {0};
    act_ctx a;
    int r;

    printf("# memcpy %llu MiB, median of 5: node %d -> node %d %.0f MiB/s; node %d -> node %d "
           "%.0f MiB/s\n",
           (unsigned long long)(VN_MIN(opt_size, 256ULL << 20) >> 20), opt_from, opt_from, local,
           opt_from, opt_to, remote);
    if ((r = bt_target_start(&tg, opt_size, child_region, NULL)) < 0) {
        fprintf(stderr, "migrate-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    act_ctx_init(&a, &tg);
    if (count_nodes(&tg, counts) == 0)
        printf("# region %.0f MiB: %llu of %llu pages on node %d after the first touch\n", mib,
               (unsigned long long)counts[opt_from], (unsigned long long)(opt_size / BT_PAGE),
               opt_from);
    /* | batch pages | act_apply() MiB/s (there, back) | bare move_pages MiB/s (there, back) |
     * act / memcpy | bare / memcpy | */
    for (unsigned i = 0; i < nb; i++) {
        double act_s[2] = {0}, raw_s[2] = {0};
        uint64_t moved[2] = {0};
        for (int rep = 0; rep < 2; rep++) {
            for (int dir = 0; dir < 2; dir++) {
                int from = dir ? opt_to : opt_from, to = dir ? opt_from : opt_to;
                act_result res;
                uint64_t t0 = bt_now_ns();
                r = act_move(&a, from, to, batches[i], 1u << 20, &res);
                act_s[dir] += (double)(bt_now_ns() - t0) / 1e9 / 2;
                if (r < 0) {
                    fprintf(stderr, "migrate-bench: act_apply: %s (%s)\n", strerror(-r), res.error);
                    exit(1);
                }
                moved[dir] = res.cells[0].bytes_moved;
            }
            for (int dir = 0; dir < 2; dir++) {
                uint64_t t0 = bt_now_ns();
                if ((r = raw_move(&tg, dir ? opt_from : opt_to, batches[i])) < 0) {
                    fprintf(stderr, "migrate-bench: move_pages: %s\n", strerror(-r));
                    exit(1);
                }
                raw_s[dir] += (double)(bt_now_ns() - t0) / 1e9 / 2;
            }
        }
        double act_rate = 2 * mib / (act_s[0] + act_s[1]),
               raw_rate = 2 * mib / (raw_s[0] + raw_s[1]);
        printf("| %u | %.0f (%.0f, %.0f) | %.0f (%.0f, %.0f) | %.2f | %.2f | %llu+%llu MiB |\n",
               batches[i], act_rate, mib / act_s[0], mib / act_s[1], raw_rate, mib / raw_s[0],
               mib / raw_s[1], act_rate / remote, raw_rate / remote,
               (unsigned long long)(moved[0] >> 20), (unsigned long long)(moved[1] >> 20));
        fflush(stdout);
    }
    bt_target_stop(&tg);
}

static void mode_rate(void)
{
    unsigned rates[16], nr = parse_list(opt_rates, rates, 16);
    bt_target tg = {0};
    act_ctx a;
    int r;

    if ((r = bt_target_start(&tg, opt_size, child_region, NULL)) < 0) {
        fprintf(stderr, "migrate-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    act_ctx_init(&a, &tg);
    for (unsigned i = 0; i < nr; i++) {
        int from = opt_from, to = opt_to;
        uint64_t total = 0;
        double secs = 0;

        /* start where the region is: mostly on `from` */
        {
            uint64_t c[64];
            if (count_nodes(&tg, c) == 0 && c[opt_to] > c[opt_from])
                from = opt_to, to = opt_from;
        }
        for (unsigned p = 0; p < 2 * opt_passes; p++) {
            act_result res;
            double t0 = bt_now_s();
            r = act_move(&a, from, to, 4096, rates[i], &res);
            if (r < 0) {
                fprintf(stderr, "migrate-bench: act_apply: %s (%s)\n", strerror(-r), res.error);
                exit(1);
            }
            secs += bt_now_s() - t0;
            total += res.cells[0].bytes_moved;
            if (res.cells[0].reserve_hit) {
                fprintf(stderr, "migrate-bench: node %d reached its reserve\n", to);
                break;
            }
            int x = from;
            from = to;
            to = x;
        }
        /* each move starts with a full bucket (a fresh mover): a second's worth at once */
        double burst = (double)rates[i] * (1 << 20) * 2 * opt_passes;
        double steady = total > burst ? ((double)total - burst) / (1 << 20) / secs : 0;
        /* | configured MiB/s | moves | MiB moved | seconds | achieved MiB/s after the bursts |
         * achieved / configured | */
        printf("| %u | %u | %.0f | %.2f | %.1f | %.3f |\n", rates[i], 2 * opt_passes,
               (double)total / (1 << 20), secs, steady, steady / rates[i]);
        fflush(stdout);
    }
    bt_target_stop(&tg);
}

/* kB of AnonHugePages of the target's mapping at hva (its smaps entry), -1 unknown */
static long anon_huge_kb(const bt_target *tg)
{
    char path[64], line[256];
    bool in = false;
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/smaps", (int)tg->pid);
    if (!(f = fopen(path, "re")))
        return -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a <= tg->hva && tg->hva < b;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

static void mode_parallel(void)
{
    unsigned threads[8], nt = parse_list(opt_threads, threads, 8),
                         nc = VN_MAX(1u, VN_MIN(opt_cells, 16u));
    double mib = (double)opt_size / (1 << 20);
    double remote = memcpy_mibs(VN_MIN(opt_size, 256ULL << 20), opt_from, opt_to);
    bt_target tg = {0};
    act_ctx a;
    snap_cell cells[16];
    plan_cell pcs[16];
    plan_move mvs[16];
    int r, fi, ti;

    printf("# memcpy %llu MiB, median of 5: node %d -> node %d %.0f MiB/s\n",
           (unsigned long long)(VN_MIN(opt_size, 256ULL << 20) >> 20), opt_from, opt_to, remote);
    if ((r = bt_target_start(&tg, opt_size, child_region, NULL)) < 0) {
        fprintf(stderr, "migrate-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    act_ctx_init(&a, &tg);
    fi = topo_node_index(a.t, (unsigned)opt_from);
    ti = topo_node_index(a.t, (unsigned)opt_to);
    /* CELLS ranges of the region, a cell each; windows of 16 MiB whatever the page size */
    uint64_t page = opt_hugetlb ? HUGE_2M : BT_PAGE;
    uint64_t part = tg.len / nc / page * page;
    memset(cells, 0, sizeof(cells));
    memset(pcs, 0, sizeof(pcs));
    a.st->sample.nr_ram = nc;
    for (unsigned k = 0; k < nc; k++) {
        a.st->sample.ram[k] = (ram_range){.cell = k,
                                          .gpa = k * part,
                                          .hva = tg.hva + k * part,
                                          .size = part,
                                          .page_size = page,
                                          .hugetlb = opt_hugetlb};
        static uint64_t cells_pages[16][VN_MAX_NODES];
        cells[k].pages = cells_pages[k];
        cells[k].nr_nodes = a.t->nr_nodes;
        cells[k].id = k;
        cells[k].page_size = page;
        pcs[k] = (plan_cell){.cell_id = k,
                             .nr_moves = 1,
                             .moves = &mvs[k],
                             .batch_pages = (uint32_t)((16ULL << 20) / page),
                             .page_size = page};
    }
    a.sd.nr_cells = nc;
    a.sd.cells = cells;
    a.pd.nr_cells = nc;
    a.pd.cells = pcs;
    printf(
        "# region %.0f MiB as %u cells of %llu MiB; THP %s, AnonHugePages %ld kB after the first touch\n",
        mib, nc, (unsigned long long)(part >> 20),
        opt_hugetlb ? "not asked (2 MiB hugetlb pages)"
        : opt_thp   ? "asked (MADV_HUGEPAGE)"
                    : "not asked",
        anon_huge_kb(&tg));
    /* | move_threads | act_apply() MiB/s (there, back) | / memcpy | / one thread | AnonHugePages kB
     * before -> after | */
    double one = 0;
    for (unsigned i = 0; i < nt; i++) {
        double secs[2] = {0};
        long huge0 = anon_huge_kb(&tg);
        a.cfg.move_threads = threads[i];
        for (int dir = 0; dir < 2; dir++) {
            int from = dir ? ti : fi, to = dir ? fi : ti;
            act_result res;
            for (unsigned k = 0; k < nc; k++) {
                mvs[k] = (plan_move){.from_node = from, .to_node = to, .bytes = part};
                pcs[k].target_node = to;
                pcs[k].current_node = from;
            }
            uint64_t t0 = bt_now_ns();
            r = act_run(&a, threads[i], 1u << 20, &res);
            secs[dir] = (double)(bt_now_ns() - t0) / 1e9;
            if (r < 0) {
                fprintf(stderr, "migrate-bench: act_apply: %s (%s)\n", strerror(-r), res.error);
                exit(1);
            }
            uint64_t moved = 0;
            for (unsigned k = 0; k < nc; k++)
                moved += res.cells[k].bytes_moved;
            if (moved < (uint64_t)nc * part * 99 / 100)
                fprintf(stderr, "migrate-bench: only %llu of %llu bytes moved\n",
                        (unsigned long long)moved, (unsigned long long)nc * part);
        }
        double rate = 2 * mib / (secs[0] + secs[1]);
        if (i == 0)
            one = rate;
        printf("| %u | %.0f (%.0f, %.0f) | %.2f | %.2f | %ld -> %ld |\n", threads[i], rate,
               mib / secs[0], mib / secs[1], rate / remote, one > 0 ? rate / one : 0, huge0,
               anon_huge_kb(&tg));
        fflush(stdout);
    }
    bt_target_stop(&tg);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"size-mib", required_argument, NULL, 's'},
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {"batches", required_argument, NULL, 'b'},
        {"rates", required_argument, NULL, 'r'},
        {"passes", required_argument, NULL, 'p'},
        {"threads", required_argument, NULL, 'T'},
        {"cells", required_argument, NULL, 'c'},
        {"thp", no_argument, NULL, 'H'},
        {"hugetlb", no_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *mode;
    int o;

    if (argc < 2) {
        fprintf(stderr,
                "usage: migrate-bench batch|rate|parallel [--size-mib N] [--from A --to B] ...\n");
        return 2;
    }
    mode = argv[1];
    optind = 2;
    while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (o) {
        case 's':
            opt_size = strtoull(optarg, NULL, 10) << 20;
            break;
        case 'f':
            opt_from = atoi(optarg);
            break;
        case 't':
            opt_to = atoi(optarg);
            break;
        case 'b':
            snprintf(opt_batches, sizeof(opt_batches), "%s", optarg);
            break;
        case 'r':
            snprintf(opt_rates, sizeof(opt_rates), "%s", optarg);
            break;
        case 'p':
            opt_passes = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'T':
            snprintf(opt_threads, sizeof(opt_threads), "%s", optarg);
            break;
        case 'c':
            opt_cells = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'H':
            opt_thp = true;
            break;
        case 'L':
            opt_hugetlb = true;
            break;
        default:
            return 2;
        }
    }
    if (bt_nr_nodes() < 2 || opt_from == opt_to) {
        fprintf(stderr, "migrate-bench: needs two NUMA nodes (this host has %d)\n", bt_nr_nodes());
        return 77;
    }
    if (opt_passes < 1)
        return 2;
    if (!strcmp(mode, "batch"))
        mode_batch();
    else if (!strcmp(mode, "rate"))
        mode_rate();
    else if (!strcmp(mode, "parallel"))
        mode_parallel();
    else
        return 2;
    return 0;
}
