/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample-bench: what sampling a guest cell's memory placement costs and how exact a
 * strided sample is. A child process stands for QEMU: it owns one anonymous region (a
 * memory-backend-ram cell), fully touched. The parent queries it the way vnumad does,
 * through host/numa_ops.c (numa_libnuma, move_pages(2) status queries) and the daemon's
 * own sample_count_pages() (host/sample.c). Prints Markdown table rows.
 *
 *   sample-bench cost --size-mib 1024 [--runs 5]
 *       time per pass of: windowed status queries of every page (several windows), one
 *       unwindowed query, a full /proc/PID/numa_maps read, strided queries (window 4096,
 *       rotating offset), and sample_count_pages() as compiled; --thp: the region is
 *       madvise(MADV_HUGEPAGE)d, as QEMU does with guest RAM (default: 4 KiB pages)
 *   sample-bench lock --size-mib 1024 [--threads 2] [--ms 3000] [--rounds 2]
 *       page-fault latency of threads in the target (mmap 1 MiB, write each page, munmap)
 *       while the parent samples the target's region continuously, per sampler config
 *   sample-bench accuracy --size-mib 1024 [--seed 1]
 *       (needs several nodes) a mixed placement: chunks first-touched by threads bound to
 *       different nodes, interleaved ranges, untouched holes; the exact per-node
 *       fractions against strided estimates over every offset, per sample count
 */
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-target.h"
#include "numa_ops.h"
#include "rules.h"
#include "sample.h"
#include "topology.h"
#include "util.h"

#define MAX_NODES 64

static const numa_ops *ops = &numa_libnuma;

/* ---- options ---- */
static uint64_t opt_size = 256ULL << 20;
static unsigned opt_runs = 5, opt_threads = 2, opt_ms = 3000, opt_rounds = 2;
static uint64_t opt_seed = 1;
static bool opt_thp;
static bool opt_random_layout; /* --layout random: every page on a random node */

/* ---- the walk ---- */

/*
 * The call pattern of sample_count_pages() (host/sample.c) with the window and the
 * stride as parameters: pages offset + k * stride, `window` pages per move_pages call,
 * -EFAULT answers resolved through pagemap. hits[] by kernel node. Returns calls or -errno.
 */
static long walk(pid_t pid, uint64_t hva, uint64_t npages, uint64_t window, uint64_t stride,
                 uint64_t offset, uint64_t hits[MAX_NODES])
{
    uint64_t sampled = (npages - offset + stride - 1) / stride;
    _cleanup_free_ void **pages = calloc(VN_MIN(window, sampled), sizeof(void *));
    _cleanup_free_ int *status = calloc(VN_MIN(window, sampled), sizeof(int));
    long calls = 0;

    if (!pages || !status)
        return -ENOMEM;
    memset(hits, 0, MAX_NODES * sizeof(*hits));
    for (uint64_t first = 0; first < sampled; first += window) {
        unsigned long n = (unsigned long)VN_MIN(window, sampled - first);
        int r;

        for (unsigned long i = 0; i < n; i++) {
            pages[i] = (void *)(uintptr_t)(hva + (offset + (first + i) * stride) * BT_PAGE);
            status[i] = -ENOENT;
        }
        r = ops->query(pid, n, pages, status);
        calls++;
        if (r < 0)
            return r;
        for (unsigned long i = 0; i < n; i++)
            if (status[i] == -EFAULT && ops->resolve_faulted) {
                if ((r = ops->resolve_faulted(pid, n, pages, status)) < 0)
                    return r;
                break;
            }
        for (unsigned long i = 0; i < n; i++)
            if (status[i] >= 0 && status[i] < MAX_NODES)
                hits[status[i]]++;
    }
    return calls;
}

static long read_numa_maps(pid_t pid)
{
    char path[64], buf[65536];
    long total = 0;
    ssize_t r;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while ((r = read(fd, buf, sizeof(buf))) > 0)
        total += r;
    close(fd);
    return total;
}

/* ---- child: a touched region, and the fault workload on command ---- */

typedef struct fault_cmd {
    uint32_t threads;
    uint32_t ms;
} fault_cmd;

typedef struct fault_result {
    bt_hist fault;
    bt_hist mapops; /* mmap and munmap calls */
    uint64_t faults;
} fault_result;

typedef struct fault_thread {
    uint64_t until_ns;
    fault_result res;
} fault_thread;

#define FAULT_CHUNK (1ULL << 20)

static void *fault_loop(void *arg)
{
    fault_thread *ft = arg;

    while (bt_now_ns() < ft->until_ns) {
        uint64_t t0 = bt_now_ns(), t1;
        char *p =
            mmap(NULL, FAULT_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        t1 = bt_now_ns();
        if (p == MAP_FAILED)
            break;
        bt_hist_add(&ft->res.mapops, t1 - t0);
        for (uint64_t off = 0; off < FAULT_CHUNK; off += BT_PAGE) {
            uint64_t a = bt_now_ns(), b;
            ((volatile char *)p)[off] = 1;
            b = bt_now_ns();
            bt_hist_add(&ft->res.fault, b - a);
        }
        ft->res.faults += FAULT_CHUNK / BT_PAGE;
        t0 = bt_now_ns();
        munmap(p, FAULT_CHUNK);
        bt_hist_add(&ft->res.mapops, bt_now_ns() - t0);
    }
    return NULL;
}

static void child_touched(void *arg, int cmd_fd, int reply_fd)
{
    void *p = bt_map_region(opt_size, opt_thp);
    uint64_t hva = (uintptr_t)p;
    fault_cmd c;

    (void)arg;
    bt_touch(p, opt_size);
    if (bt_write_full(reply_fd, &hva, sizeof(hva)) < 0)
        _exit(1);
    while (bt_read_full(cmd_fd, &c, sizeof(c)) == 0) {
        fault_thread *ft = calloc(c.threads, sizeof(*ft));
        pthread_t *th = calloc(c.threads, sizeof(*th));
        _cleanup_free_ fault_result *all = calloc(1, sizeof(*all));
        uint64_t until = bt_now_ns() + (uint64_t)c.ms * 1000000ULL;

        if (!ft || !th || !all)
            _exit(1);
        for (unsigned i = 0; i < c.threads; i++) {
            ft[i].until_ns = until;
            pthread_create(&th[i], NULL, fault_loop, &ft[i]);
        }
        for (unsigned i = 0; i < c.threads; i++) {
            pthread_join(th[i], NULL);
            bt_hist_merge(&all->fault, &ft[i].res.fault);
            bt_hist_merge(&all->mapops, &ft[i].res.mapops);
            all->faults += ft[i].res.faults;
        }
        free(ft);
        free(th);
        if (bt_write_full(reply_fd, all, sizeof(*all)) < 0)
            _exit(1);
    }
}

static topology *live_topology(void)
{
    topology *t = topo_new();
    char err[256];

    if (!t || topo_load(TOPO_SOURCE_LIVE, NULL, NULL, t, err, sizeof(err)) < 0) {
        fprintf(stderr, "sample-bench: topology: %s\n", t ? err : "out of memory");
        exit(1);
    }
    return t;
}

/* ---- cost ---- */

typedef struct cost_method {
    const char *name;
    uint64_t window; /* 0: every page in one call */
    uint64_t stride;
    int kind; /* 0 walk, 1 numa_maps, 2 sample_count_pages */
} cost_method;

static void mode_cost(void)
{
    static const cost_method methods[] = {
        {"windowed query, every page", 512, 1, 0},
        {"windowed query, every page", 4096, 1, 0},
        {"windowed query, every page", 65536, 1, 0},
        {"one unwindowed query, every page", 0, 1, 0},
        {"/proc/PID/numa_maps, whole file", 0, 0, 1},
        {"strided query, rotating offset", 4096, 4, 0},
        {"strided query, rotating offset", 4096, 16, 0},
        {"strided query, rotating offset", 4096, 64, 0},
        {"strided query, rotating offset", 4096, 256, 0},
        {"strided query, rotating offset", 4096, 1024, 0},
        {"sample_count_pages() as built", 0, 0, 2},
    };
    bt_target tg = {0};
    uint64_t npages = opt_size / BT_PAGE;
    topology *t = live_topology();
    double *ms = calloc(opt_runs, sizeof(double));
    int r = bt_target_start(&tg, opt_size, child_touched, NULL);

    if (r < 0 || !ms) {
        fprintf(stderr, "sample-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    for (size_t m = 0; m < VN_ARRAY_SIZE(methods); m++) {
        const cost_method *cm = &methods[m];
        uint64_t queried = 0, present = 0;
        long calls = 0;
        char win[32], stride[32];

        for (unsigned run = 0; run < opt_runs; run++) {
            uint64_t hits[MAX_NODES], t0 = bt_now_ns();
            long c;
            if (cm->kind == 1) {
                c = read_numa_maps(tg.pid);
                queried = 0;
            } else if (cm->kind == 2) {
                uint64_t counts[VN_MAX_NODES];
                unsigned q = 0;
                c = sample_count_pages(ops, t, tg.pid, tg.hva, tg.len, BT_PAGE, run, counts, &q);
                if (c == 0)
                    c = q;
                rule_walk w = rule_lock_hold_walk(npages);
                queried = (npages + w.stride_pages - 1) / w.stride_pages;
                present = 0;
                for (unsigned n = 0; n < t->nr_nodes; n++)
                    present += counts[n];
            } else {
                uint64_t off = run % cm->stride;
                c = walk(tg.pid, tg.hva, npages, cm->window ? cm->window : npages, cm->stride, off,
                         hits);
                queried = (npages - off + cm->stride - 1) / cm->stride;
                present = 0;
                for (unsigned n = 0; n < MAX_NODES; n++)
                    present += hits[n];
                present *= cm->stride;
            }
            ms[run] = (double)(bt_now_ns() - t0) / 1e6;
            if (c < 0) {
                fprintf(stderr, "sample-bench: %s: %s\n", cm->name, strerror((int)-c));
                exit(1);
            }
            calls = c;
        }
        double mn = ms[0];
        for (unsigned i = 1; i < opt_runs; i++)
            mn = ms[i] < mn ? ms[i] : mn;
        double med = bt_median(ms, opt_runs);
        if (cm->kind == 2) {
            rule_walk w = rule_lock_hold_walk(npages);
            snprintf(win, sizeof(win), "%u", w.window_pages);
            snprintf(stride, sizeof(stride), "%llu", (unsigned long long)w.stride_pages);
        } else if (cm->kind == 1) {
            snprintf(win, sizeof(win), "-");
            snprintf(stride, sizeof(stride), "-");
        } else {
            snprintf(win, sizeof(win), "%llu",
                     (unsigned long long)(cm->window ? cm->window : npages));
            snprintf(stride, sizeof(stride), "%llu", (unsigned long long)cm->stride);
        }
        /* | size | method | window | stride | pages queried | calls | median ms | min ms |
         * ns per queried page | */
        char calls_s[32], per[32], q_s[32];
        snprintf(calls_s, sizeof(calls_s), "%ld", calls);
        snprintf(q_s, sizeof(q_s), "%llu", (unsigned long long)queried);
        snprintf(per, sizeof(per), "%.0f", queried ? med * 1e6 / (double)queried : 0.0);
        printf("| %llu MiB%s | %s | %s | %s | %s | %s | %.3f | %.3f | %s |\n",
               (unsigned long long)(opt_size >> 20), opt_thp ? " THP" : "", cm->name, win, stride,
               cm->kind == 1 ? "-" : q_s, cm->kind == 1 ? "-" : calls_s, med, mn,
               queried ? per : "-");
        (void)present;
        fflush(stdout);
    }
    bt_target_stop(&tg);
    free(ms);
    topo_free(t);
}

/* ---- lock ---- */

typedef struct lock_config {
    const char *name;
    int kind;        /* 0 none, 1 walk target, 2 numa_maps, 3 sample_count_pages, 4 walk self */
    uint64_t window; /* 0: all pages in one call */
} lock_config;

typedef struct lock_stats {
    fault_result res;
    uint64_t passes;
    double pass_ms_sum;
    double pass_ms_max;
    double secs;
} lock_stats;

static void mode_lock(void)
{
    static const lock_config configs[] = {
        {"no sampler", 0, 0},
        {"sampler on its own memory (CPU-contention control), window 4096", 4, 4096},
        {"move_pages query, window 512", 1, 512},
        {"move_pages query, window 4096", 1, 4096},
        {"move_pages query, window 65536", 1, 65536},
        {"move_pages query, unwindowed (one call)", 1, 0},
        {"sample_count_pages() as built", 3, 0},
        {"/proc/PID/numa_maps read", 2, 0},
    };
    const size_t nc = VN_ARRAY_SIZE(configs);
    lock_stats *ls = calloc(nc, sizeof(*ls));
    bt_target tg = {0};
    uint64_t npages = opt_size / BT_PAGE;
    topology *t = live_topology();
    void *self = bt_map_region(opt_size, opt_thp);
    int r;

    bt_touch(self, opt_size);
    r = bt_target_start(&tg, opt_size, child_touched, NULL);
    if (r < 0 || !ls) {
        fprintf(stderr, "sample-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    for (unsigned round = 0; round < opt_rounds; round++)
        for (size_t c = 0; c < nc; c++) {
            const lock_config *lc = &configs[c];
            fault_cmd cmd = {.threads = opt_threads, .ms = opt_ms};
            _cleanup_free_ fault_result *res = calloc(1, sizeof(*res));
            uint64_t start = bt_now_ns(), until = start + (uint64_t)opt_ms * 1000000ULL;

            if (!res || bt_write_full(tg.cmd_fd, &cmd, sizeof(cmd)) < 0)
                exit(1);
            while (lc->kind != 0 && bt_now_ns() < until) {
                uint64_t hits[MAX_NODES], t0 = bt_now_ns();
                long q = 0;
                double ms;
                if (lc->kind == 1 || lc->kind == 4) {
                    pid_t pid = lc->kind == 1 ? tg.pid : getpid();
                    uint64_t hva = lc->kind == 1 ? tg.hva : (uintptr_t)self;
                    q = walk(pid, hva, npages, lc->window ? lc->window : npages, 1, 0, hits);
                } else if (lc->kind == 2) {
                    q = read_numa_maps(tg.pid);
                } else {
                    uint64_t counts[VN_MAX_NODES];
                    unsigned nq;
                    q = sample_count_pages(ops, t, tg.pid, tg.hva, tg.len, BT_PAGE, ls[c].passes,
                                           counts, &nq);
                }
                if (q < 0) {
                    fprintf(stderr, "sample-bench: %s: %s\n", lc->name, strerror((int)-q));
                    exit(1);
                }
                ms = (double)(bt_now_ns() - t0) / 1e6;
                ls[c].passes++;
                ls[c].pass_ms_sum += ms;
                if (ms > ls[c].pass_ms_max)
                    ls[c].pass_ms_max = ms;
            }
            if (bt_read_full(tg.reply_fd, res, sizeof(*res)) < 0)
                exit(1);
            ls[c].secs += (double)(bt_now_ns() - start) / 1e9;
            bt_hist_merge(&ls[c].res.fault, &res->fault);
            bt_hist_merge(&ls[c].res.mapops, &res->mapops);
            ls[c].res.faults += res->faults;
        }
    for (size_t c = 0; c < nc; c++) {
        const fault_result *fr = &ls[c].res;
        /* | sampler | faults/s | fault p50 | p99 | p99.9 | max | mmap/munmap p50 | p99 |
         * max | sampler passes | ms per pass (mean / max) | */
        printf("| %s | %.0f | %.2f | %.2f | %.1f | %.0f | %.1f | %.1f | %.0f | %llu | ",
               configs[c].name, (double)fr->faults / ls[c].secs,
               (double)bt_hist_quantile(&fr->fault, 0.5) / 1e3,
               (double)bt_hist_quantile(&fr->fault, 0.99) / 1e3,
               (double)bt_hist_quantile(&fr->fault, 0.999) / 1e3, (double)fr->fault.max / 1e3,
               (double)bt_hist_quantile(&fr->mapops, 0.5) / 1e3,
               (double)bt_hist_quantile(&fr->mapops, 0.99) / 1e3, (double)fr->mapops.max / 1e3,
               (unsigned long long)ls[c].passes);
        if (ls[c].passes)
            printf("%.2f / %.2f |\n", ls[c].pass_ms_sum / (double)ls[c].passes, ls[c].pass_ms_max);
        else
            printf("- |\n");
    }
    bt_target_stop(&tg);
    free(ls);
    topo_free(t);
}

/* ---- accuracy ---- */

typedef struct chunk {
    uint64_t off, len; /* bytes */
    int node;          /* kernel node, -1 interleaved over all nodes, -2 never touched */
} chunk;

static chunk *chunks;
static unsigned nr_chunks;
static int nr_nodes;

/* Log-uniform chunk sizes 64 KiB..16 MiB; 10% untouched, 20% interleaved, the rest on
 * node i with weight (nr_nodes - i) (40/30/20/10% with 4 nodes). */
static void build_layout(uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1, off = 0;
    unsigned cap = 1024;
    int wsum = nr_nodes * (nr_nodes + 1) / 2;

    chunks = calloc(cap, sizeof(*chunks));
    if (opt_random_layout) {
        /* the worst case for a stratified sample: no run of pages shares a node */
        nr_chunks = (unsigned)(opt_size / BT_PAGE);
        chunks = realloc(chunks, nr_chunks * sizeof(*chunks));
        for (unsigned i = 0; i < nr_chunks; i++) {
            int w = (int)(bt_rnd(&s) % (uint64_t)wsum), n = 0;
            while (w >= nr_nodes - n) {
                w -= nr_nodes - n;
                n++;
            }
            chunks[i] = (chunk){.off = (uint64_t)i * BT_PAGE, .len = BT_PAGE, .node = n};
        }
        return;
    }
    while (off < opt_size) {
        double u = (double)(bt_rnd(&s) % 1000000) / 1e6;
        uint64_t len = (uint64_t)(65536.0 * pow(256.0, u)) & ~(BT_PAGE - 1);
        unsigned k = (unsigned)(bt_rnd(&s) % 100);
        chunk c = {.off = off, .len = VN_MIN(len, opt_size - off)};

        if (k < 10) {
            c.node = -2;
        } else if (k < 30) {
            c.node = -1;
        } else {
            int w = (int)(bt_rnd(&s) % (uint64_t)wsum), n = 0;
            while (w >= nr_nodes - n) {
                w -= nr_nodes - n;
                n++;
            }
            c.node = n;
        }
        if (nr_chunks == cap)
            chunks = realloc(chunks, (cap *= 2) * sizeof(*chunks));
        chunks[nr_chunks++] = c;
        off += c.len;
    }
}

typedef struct toucher {
    char *base;
    int node;
} toucher;

static void *touch_node_chunks(void *arg)
{
    toucher *to = arg;

    if (bt_bind_thread_to_node(to->node) < 0)
        fprintf(stderr, "sample-bench: cannot bind a thread to node %d\n", to->node);
    for (unsigned i = 0; i < nr_chunks; i++)
        if (chunks[i].node == to->node)
            bt_touch(to->base + chunks[i].off, chunks[i].len);
    return NULL;
}

static void child_mixed(void *arg, int cmd_fd, int reply_fd)
{
    char *p = bt_map_region(opt_size, opt_thp);
    uint64_t hva = (uintptr_t)p;
    unsigned long all = nr_nodes >= 64 ? ~0UL : (1UL << nr_nodes) - 1;
    pthread_t th[MAX_NODES];
    toucher to[MAX_NODES];
    char c;

    (void)arg;
    for (int n = 0; n < nr_nodes; n++) {
        to[n] = (toucher){.base = p, .node = n};
        pthread_create(&th[n], NULL, touch_node_chunks, &to[n]);
    }
    for (unsigned i = 0; i < nr_chunks; i++)
        if (chunks[i].node == -1) {
            if (bt_mbind(p + chunks[i].off, chunks[i].len, BT_MPOL_INTERLEAVE, all) < 0)
                fprintf(stderr, "sample-bench: mbind interleave failed\n");
            bt_touch(p + chunks[i].off, chunks[i].len);
        }
    for (int n = 0; n < nr_nodes; n++)
        pthread_join(th[n], NULL);
    if (bt_write_full(reply_fd, &hva, sizeof(hva)) < 0)
        _exit(1);
    while (read(cmd_fd, &c, 1) > 0)
        ;
}

/* max over nodes of |estimate - exact| in percentage points; present = 0: no sample */
static double node_error(const uint64_t *hits, const double *exact)
{
    uint64_t present = 0;
    double worst = 0;

    for (int n = 0; n < nr_nodes; n++)
        present += hits[n];
    if (!present)
        return 100;
    for (int n = 0; n < nr_nodes; n++) {
        double e = fabs((double)hits[n] / (double)present - exact[n]) * 100;
        worst = e > worst ? e : worst;
    }
    return worst;
}

static double systematic_error(const int8_t *st, uint64_t np, uint64_t stride, uint64_t off,
                               const double *exact)
{
    uint64_t hits[MAX_NODES] = {0};

    for (uint64_t i = off; i < np; i += stride)
        if (st[i] >= 0)
            hits[st[i]]++;
    return node_error(hits, exact);
}

static double jittered_error(const int8_t *st, uint64_t np, uint64_t stride, uint64_t seed,
                             const double *exact)
{
    uint64_t hits[MAX_NODES] = {0}, s = seed * 0x2545F4914F6CDD1DULL + 7;

    for (uint64_t b = 0; b < np; b += stride) {
        uint64_t i = b + bt_rnd(&s) % stride;
        if (i < np && st[i] >= 0)
            hits[st[i]]++;
    }
    return node_error(hits, exact);
}

#define JITTER_SEEDS 64

static void mode_accuracy(void)
{
    static const uint64_t caps[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536};
    uint64_t np = opt_size / BT_PAGE, counts[MAX_NODES] = {0}, present = 0;
    int8_t *st = calloc(np, 1);
    double exact[MAX_NODES] = {0};
    bt_target tg = {0};
    topology *t = live_topology();
    unsigned interleaved = 0, untouched = 0;
    uint64_t il_bytes = 0;
    int r;

    nr_nodes = bt_nr_nodes();
    if (nr_nodes < 2) {
        fprintf(stderr, "sample-bench: accuracy needs several NUMA nodes (this host has %d)\n",
                nr_nodes);
        exit(77);
    }
    build_layout(opt_seed);
    for (unsigned i = 0; i < nr_chunks; i++) {
        interleaved += chunks[i].node == -1;
        il_bytes += chunks[i].node == -1 ? chunks[i].len : 0;
        untouched += chunks[i].node == -2;
    }
    r = bt_target_start(&tg, opt_size, child_mixed, NULL);
    if (r < 0 || !st) {
        fprintf(stderr, "sample-bench: target: %s\n", strerror(-r));
        exit(1);
    }
    /* the exact placement: every page, windows of 4096 */
    {
        void **pages = calloc(4096, sizeof(void *));
        int *status = calloc(4096, sizeof(int));
        for (uint64_t first = 0; first < np; first += 4096) {
            unsigned long n = (unsigned long)VN_MIN(4096, np - first);
            for (unsigned long i = 0; i < n; i++)
                pages[i] = (void *)(uintptr_t)(tg.hva + (first + i) * BT_PAGE);
            if ((r = ops->query(tg.pid, n, pages, status)) < 0) {
                fprintf(stderr, "sample-bench: query: %s\n", strerror(-r));
                exit(1);
            }
            for (unsigned long i = 0; i < n; i++) {
                st[first + i] = (int8_t)(status[i] >= 0 && status[i] < nr_nodes ? status[i] : -1);
                if (st[first + i] >= 0) {
                    counts[status[i]]++;
                    present++;
                }
            }
        }
        free(pages);
        free(status);
    }
    printf("# layout %s: region %llu MiB = %llu pages, %u chunks (%u interleaved = %.1f%% of "
           "the region, %u untouched), %llu present\n",
           opt_random_layout ? "random (every page on a random node)" : "mixed",
           (unsigned long long)(opt_size >> 20), (unsigned long long)np, nr_chunks, interleaved,
           100.0 * (double)il_bytes / (double)opt_size, untouched, (unsigned long long)present);
    printf("# exact per-node fractions of present pages:");
    for (int n = 0; n < nr_nodes; n++) {
        exact[n] = (double)counts[n] / (double)present;
        printf(" node%d=%.2f%%", n, exact[n] * 100);
    }
    printf("\n");
    /* | sample cap N | stride | systematic: max err over all offsets | mean | stride|1:
     * max | jittered: max over 64 seeds | p95 | */
    for (size_t c = 0; c < VN_ARRAY_SIZE(caps); c++) {
        uint64_t stride = (np + caps[c] - 1) / caps[c];
        uint64_t odd = stride | 1;
        double smax = 0, ssum = 0, omax = 0, jmax = 0, j[JITTER_SEEDS];
        if (stride < 2)
            continue; /* every page: exact */
        for (uint64_t o = 0; o < stride; o++) {
            double e = systematic_error(st, np, stride, o, exact);
            smax = e > smax ? e : smax;
            ssum += e;
        }
        for (uint64_t o = 0; o < odd; o++) {
            double e = systematic_error(st, np, odd, o, exact);
            omax = e > omax ? e : omax;
        }
        for (unsigned s = 0; s < JITTER_SEEDS; s++) {
            j[s] = jittered_error(st, np, stride, s + 1, exact);
            jmax = j[s] > jmax ? j[s] : jmax;
        }
        qsort(j, JITTER_SEEDS, sizeof(double), bt_cmp_double);
        printf("| %llu MiB %s | %llu | %llu | %.2f | %.2f | %llu: %.2f | %.2f | %.2f |\n",
               (unsigned long long)(opt_size >> 20), opt_random_layout ? "random" : "mixed",
               (unsigned long long)caps[c], (unsigned long long)stride, smax, ssum / (double)stride,
               (unsigned long long)odd, omax, jmax, j[(JITTER_SEEDS * 95) / 100]);
    }
    /* the daemon's own routine, as compiled, over seeds 0..63 */
    {
        rule_walk w = rule_lock_hold_walk(np);
        double dmax = 0, dsum = 0;
        for (uint64_t seed = 0; seed < 64; seed++) {
            uint64_t dc[VN_MAX_NODES] = {0}, hits[MAX_NODES] = {0};
            unsigned q;
            if ((r = sample_count_pages(ops, t, tg.pid, tg.hva, tg.len, BT_PAGE, seed, dc, &q)) <
                0) {
                fprintf(stderr, "sample-bench: sample_count_pages: %s\n", strerror(-r));
                exit(1);
            }
            for (unsigned n = 0; n < t->nr_nodes && n < MAX_NODES; n++)
                hits[t->nodes[n].os_index] = dc[n];
            double e = node_error(hits, exact);
            dmax = e > dmax ? e : dmax;
            dsum += e;
        }
        printf("# %s: sample_count_pages() as built: %llu samples (stride %llu, %u calls of %u), "
               "seeds 0..63: max error %.2f points, mean %.2f\n",
               opt_random_layout ? "random" : "mixed",
               (unsigned long long)((np + w.stride_pages - 1) / w.stride_pages),
               (unsigned long long)w.stride_pages, w.nr_windows, w.window_pages, dmax, dsum / 64);
    }
    bt_target_stop(&tg);
    free(st);
    topo_free(t);
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"size-mib", required_argument, NULL, 's'},
        {"runs", required_argument, NULL, 'r'},
        {"threads", required_argument, NULL, 't'},
        {"ms", required_argument, NULL, 'm'},
        {"rounds", required_argument, NULL, 'R'},
        {"seed", required_argument, NULL, 'S'},
        {"thp", no_argument, NULL, 'H'},
        {"layout", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    const char *mode;
    int o;

    if (argc < 2) {
        fprintf(stderr, "usage: sample-bench cost|lock|accuracy [--size-mib N] ...\n");
        return 2;
    }
    mode = argv[1];
    optind = 2;
    while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (o) {
        case 's':
            opt_size = strtoull(optarg, NULL, 10) << 20;
            break;
        case 'r':
            opt_runs = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 't':
            opt_threads = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'm':
            opt_ms = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'R':
            opt_rounds = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'S':
            opt_seed = strtoull(optarg, NULL, 10);
            break;
        case 'H':
            opt_thp = true;
            break;
        case 'L':
            opt_random_layout = !strcmp(optarg, "random");
            break;
        default:
            return 2;
        }
    }
    if (opt_size < BT_PAGE || !opt_runs || !opt_threads || !opt_rounds)
        return 2;
    if (!strcmp(mode, "cost"))
        mode_cost();
    else if (!strcmp(mode, "lock"))
        mode_lock();
    else if (!strcmp(mode, "accuracy"))
        mode_accuracy();
    else
        return 2;
    return 0;
}
