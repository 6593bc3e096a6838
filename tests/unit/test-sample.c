/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/sample.c and host/numa_ops.c that need no domain (host/qemu.c's reply
 * parsers are tests/unit/test-qemu.c):
 *   - Mems_allowed of this process, the backoff of memory discovery;
 *   - sample_count_pages() against this process (real move_pages queries) and against
 *     a recording numa_ops on a large fake region (rule 5's windows and stride);
 *   - numa_libnuma's move, bind_file and node_free on this process.
 * Data files are found below $VN_SRCDIR (default: the current directory, the repo root).
 * The live sampling of a real domain is tests/unit/test-sample-live.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <math.h>
#include <numaif.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "numa_ops.h"
#include "qemu.h"
#include "ramlayout.h"
#include "rules.h"
#include "sample.h"
#include "sample_proc.h"
#include "tap.h"
#include "topology.h"
#include "util.h"

#define PAGE 4096ULL

/* Mems_allowed of a real process: this one may use every node of this machine */
static void test_mems_allowed(void)
{
    topology *t = topo_new();
    char err[256];
    vn_nodeset mask = {.nw = 0}, all;
    int r;

    if (!t || topo_load(TOPO_SOURCE_LIVE, NULL, NULL, t, err, sizeof(err)) < 0) {
        CHECK(false, "live topology for Mems_allowed (%s)", err);
        topo_free(t);
        return;
    }
    uint64_t rss = 0;
    r = sample_mems_allowed("/", getpid(), t, &mask, &rss);
    all = nodeset_first_n(t->nr_nodes);
    CHECK(r == 0 && nodeset_equal(&mask, &all),
          "Mems_allowed of this process: every one of the %u nodes (r=%d, %u of them)", t->nr_nodes,
          r, nodeset_weight(&mask));
    CHECK(rss > 0, "its resident memory from the same read (%llu KiB)", (unsigned long long)rss);
    CHECK(sample_mems_allowed("/", 0x7ffffff0, t, &mask, NULL) == -ESRCH,
          "a process that is gone: ESRCH");
    topo_free(t);
}

static void test_ram_backoff(void)
{
    static const unsigned want[] = {1, 2, 4, 8, 16, 32, 32, 32};

    for (unsigned k = 0; k < VN_ARRAY_SIZE(want); k++)
        CHECK(ramlayout_backoff(k) == want[k],
              "memory discovery: after %u failures wait %u passes (got %u)", k, want[k],
              ramlayout_backoff(k));
    CHECK(ramlayout_backoff(1000) == RAMLAYOUT_RETRY_MAX, "memory discovery: the wait is bounded");
}

/* ---- sample_count_pages on this process ---- */

static topology live_topo, fake_topo, mixed_topo;

static void test_count_self(void)
{
    const size_t touched = 8 * VN_MIB, untouched = 64 * VN_MIB;
    uint64_t counts[VN_MAX_NODES], sum = 0;
    unsigned queries = 0;
    char *a, *b;
    pid_t child;
    int r, node0 = topo_node_index(&live_topo, 0);

    a = mmap(NULL, touched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    b = mmap(NULL, untouched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
    if (!CHECK(a != MAP_FAILED && b != MAP_FAILED, "mmap 8 MiB and 64 MiB"))
        return;
    (void)madvise(a, touched, MADV_NOHUGEPAGE);
    for (size_t off = 0; off < touched; off += PAGE)
        a[off] = 1;

    r = sample_count_pages(&numa_libnuma, &live_topo, getpid(), (uintptr_t)a, touched, PAGE, 0,
                           counts, &queries);
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        sum += counts[n];
    CHECK(r == 0 && sum == touched / PAGE, "self: 8 MiB touched: %" PRIu64 " resident pages (r=%d)",
          sum, r);
    CHECK(r == 0 && queries == rule_lock_hold_walk(touched / PAGE).nr_windows && queries == 1,
          "self: 8 MiB in %u query (expected %u)", queries,
          rule_lock_hold_walk(touched / PAGE).nr_windows);
    if (live_topo.nr_nodes == 1)
        CHECK(node0 == 0 && counts[0] == touched / PAGE, "self: all pages on node 0");

    r = sample_count_pages(&numa_libnuma, &live_topo, getpid(), (uintptr_t)b, untouched, PAGE, 0,
                           counts, &queries);
    sum = 0;
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        sum += counts[n];
    CHECK(r == 0 && sum == 0,
          "self: 64 MiB mapped, untouched: no resident pages (r=%d sum=%" PRIu64 ")", r, sum);
    CHECK(queries == 4, "self: 64 MiB in 4 windows of 4096 pages (got %u)", queries);

    /* half of the 8 MiB dropped again */
    (void)madvise(a, touched / 2, MADV_DONTNEED);
    r = sample_count_pages(&numa_libnuma, &live_topo, getpid(), (uintptr_t)a, touched, PAGE, 0,
                           counts, &queries);
    sum = 0;
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        sum += counts[n];
    CHECK(r == 0 && sum == touched / PAGE / 2, "self: after MADV_DONTNEED of half: %" PRIu64, sum);

    /* a dead process */
    child = fork();
    if (child == 0)
        _exit(0);
    (void)waitpid(child, NULL, 0);
    memset(counts, 0xab, sizeof(counts));
    r = sample_count_pages(&numa_libnuma, &live_topo, child, (uintptr_t)a, touched, PAGE, 0, counts,
                           &queries);
    CHECK(r == -ESRCH && counts[0] == 0xabababababababab,
          "self: a dead pid gives -ESRCH, counts untouched (r=%d)", r);

    CHECK(sample_count_pages(&numa_libnuma, &live_topo, getpid(), (uintptr_t)a, touched, 0, 0,
                             counts, &queries) == -EINVAL,
          "self: page size 0 refused");
    CHECK(sample_count_pages(&numa_libnuma, &live_topo, getpid(), UINT64_MAX - 4095, 8192, PAGE, 0,
                             counts, &queries) == -EINVAL,
          "self: a range wrapping around refused");
    r = sample_count_pages(&numa_libnuma, &live_topo, getpid(), (uintptr_t)a, 0, PAGE, 0, counts,
                           &queries);
    CHECK(r == 0 && queries == 0 && counts[0] == 0, "self: empty range, no query");

    (void)munmap(a, touched);
    (void)munmap(b, untouched);
}

/* ---- a recording numa_ops on a large fake region ---- */

static struct fake {
    uint64_t base, len, page;
    unsigned calls, max_count, fail_at;
    int fail_rc;
    bool bad_addr, not_spaced;
    uint64_t expect_stride, last_idx;
    int absent_every; /* every Nth sampled page is not present (0: none) */
    int unknown_node; /* kernel node reported for the last quarter, not in the topology */
} fk;

static int fake_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    (void)pid;
    fk.calls++;
    if (count > fk.max_count)
        fk.max_count = (unsigned)count;
    if (fk.fail_at && fk.calls == fk.fail_at)
        return fk.fail_rc;
    for (unsigned long i = 0; i < count; i++) {
        uint64_t a = (uintptr_t)pages[i], idx;

        if (a < fk.base || a >= fk.base + fk.len || (a - fk.base) % fk.page)
            fk.bad_addr = true;
        idx = (a - fk.base) / fk.page / fk.expect_stride; /* the stratum */
        if (i && idx != (uintptr_t)fk.last_idx + 1)
            fk.not_spaced = true; /* one page from each stratum, in order */
        fk.last_idx = idx;
        if (fk.absent_every && idx % (uint64_t)fk.absent_every == 0)
            status[i] = -ENOENT;
        else if (fk.unknown_node && a - fk.base >= fk.len / 4 * 3)
            status[i] = fk.unknown_node;
        else
            status[i] = a - fk.base < fk.len / 2 ? 0 : 1; /* first half node 0, then node 1 */
    }
    return 0;
}

static const numa_ops fake_ops = {.query = fake_query};

typedef struct walk_case {
    const char *what;
    uint64_t len;
    int absent_every, unknown_node;
    unsigned fail_at;
    int fail_rc;
} walk_case;

static const walk_case walk_cases[] = {
    {"16 GiB, all present", 16 * VN_GIB, 0, 0, 0, 0},
    {"16 GiB + 5 pages (stride 17)", 16 * VN_GIB + 5 * PAGE, 0, 0, 0, 0},
    {"1 TiB", 1024 * VN_GIB, 0, 0, 0, 0},
    {"1 GiB (stride 1)", VN_GIB, 0, 0, 0, 0},
    {"16 GiB, every 4th sample absent", 16 * VN_GIB, 4, 0, 0, 0},
    {"16 GiB, last quarter on unknown node 9", 16 * VN_GIB, 0, 9, 0, 0},
    {"16 GiB, process gone at call 3", 16 * VN_GIB, 0, 0, 3, -ESRCH},
    {"16 GiB, EPERM at call 1", 16 * VN_GIB, 0, 0, 1, -EPERM},
    {"10 pages + 100 bytes", 10 * PAGE + 100, 0, 0, 0, 0},
};

static void test_walk_one(const walk_case *c, uint64_t seed)
{
    uint64_t pages = c->len / PAGE + (c->len % PAGE != 0);
    rule_walk w = rule_lock_hold_walk(pages);
    uint64_t counts[VN_MAX_NODES], sum = 0, hits0 = 0, hits1 = 0, want0, want1, half = c->len / 2;
    uint64_t sampled;
    unsigned queries = 0;
    int r;

    memset(&fk, 0, sizeof(fk));
    fk.base = 0x7f0000000000ULL;
    fk.len = c->len;
    fk.page = PAGE;
    fk.expect_stride = w.stride_pages;
    fk.absent_every = c->absent_every;
    fk.unknown_node = c->unknown_node;
    fk.fail_at = c->fail_at;
    fk.fail_rc = c->fail_rc;
    memset(counts, 0xab, sizeof(counts));

    r = sample_count_pages(&fake_ops, &fake_topo, 4242, fk.base, c->len, PAGE, seed, counts,
                           &queries);
    if (c->fail_at) {
        CHECK(r == c->fail_rc && fk.calls == c->fail_at && counts[0] == 0xabababababababab,
              "walk %s seed %" PRIu64 ": %d after %u calls, counts untouched (r=%d calls=%u)",
              c->what, seed, c->fail_rc, c->fail_at, r, fk.calls);
        return;
    }
    sampled = (pages + w.stride_pages - 1) / w.stride_pages;
    CHECK(r == 0 && queries == fk.calls &&
              queries == (sampled + w.window_pages - 1) / w.window_pages,
          "walk %s seed %" PRIu64 ": %u calls for %" PRIu64 " samples (r=%d)", c->what, seed,
          fk.calls, sampled, r);
    CHECK(fk.calls <= LOCK_HOLD_MAX_QUERIES_PER_CELL && fk.max_count <= LOCK_HOLD_MAX_PAGES,
          "walk %s seed %" PRIu64 ": <= %d calls of <= %d pages (%u calls, largest %u)", c->what,
          seed, LOCK_HOLD_MAX_QUERIES_PER_CELL, LOCK_HOLD_MAX_PAGES, fk.calls, fk.max_count);
    CHECK(!fk.bad_addr && !fk.not_spaced,
          "walk %s seed %" PRIu64 ": pages inside, one from each stratum of %" PRIu64, c->what,
          seed, w.stride_pages);
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        sum += counts[n];
    /* sample k is rule_lock_hold_page(k); each stands for pages / samples pages */
    for (uint64_t k = 0; k < sampled; k++) {
        uint64_t a = rule_lock_hold_page(&w, pages, seed, k) * PAGE;
        if (c->absent_every && k % (uint64_t)c->absent_every == 0)
            continue;
        if (c->unknown_node && a >= c->len / 4 * 3)
            continue;
        if (a < half)
            hits0++;
        else
            hits1++;
    }
    want0 = w.stride_pages == 1 ? hits0 : (uint64_t)((unsigned __int128)hits0 * pages / sampled);
    want1 = w.stride_pages == 1 ? hits1 : (uint64_t)((unsigned __int128)hits1 * pages / sampled);
    CHECK(counts[0] == want0 && counts[1] == want1 && sum == want0 + want1,
          "walk %s seed %" PRIu64 ": scaled counts %" PRIu64 "+%" PRIu64 " (got %" PRIu64
          "+%" PRIu64 ")",
          c->what, seed, want0, want1, counts[0], counts[1]);
    if (!c->absent_every && !c->unknown_node)
        CHECK(sum <= pages && pages - sum < 2,
              "walk %s seed %" PRIu64 ": scaled total %" PRIu64 " ~ %" PRIu64 " pages", c->what,
              seed, sum, pages);
}

static void test_walk(void)
{
    static const uint64_t seeds[] = {0, 7, 0x9e3779b97f4a7c15ULL, 12345};

    for (size_t i = 0; i < VN_ARRAY_SIZE(walk_cases); i++)
        for (size_t s = 0; s < VN_ARRAY_SIZE(seeds); s++)
            test_walk_one(&walk_cases[i], seeds[s]);
}

/*
 * The estimate of a strided walk on a mixed placement: chunks of 2 MiB on four nodes in
 * uneven shares (45/30/15/10 %), a quarter of the chunks half-resident, and the first
 * GiB interleaved page by page. For many seeds every node's share must be within 2
 * points of the exact one (the bound LOCK_HOLD_MAX_QUERIES_PER_CELL is chosen for).
 */
static int mixed_node(uint64_t page)
{
    uint64_t chunk = page / 512, h = chunk * 0x9e3779b97f4a7c15ULL;
    unsigned share = (unsigned)((h >> 40) % 100);

    if (page < 262144)
        return (int)(page % 4); /* the interleaved first GiB */
    if ((h >> 20) % 4 == 0 && page % 2)
        return -ENOENT; /* a quarter of the chunks half-resident */
    return share < 45 ? 0 : share < 75 ? 1 : share < 90 ? 2 : 3;
}

static int mixed_query(pid_t pid, unsigned long count, void **pages, int *status)
{
    (void)pid;
    fk.calls++;
    for (unsigned long i = 0; i < count; i++)
        status[i] = mixed_node(((uintptr_t)pages[i] - fk.base) / PAGE);
    return 0;
}

static void test_walk_accuracy(void)
{
    static const numa_ops mixed_ops = {.query = mixed_query};
    const uint64_t len = 16 * VN_GIB, pages = len / PAGE;
    uint64_t exact[4] = {0}, resident = 0;
    double worst = 0;
    unsigned worst_seed = 0;
    bool ok = true;

    for (uint64_t p = 0; p < pages; p++) {
        int n = mixed_node(p);
        if (n >= 0) {
            exact[n]++;
            resident++;
        }
    }
    for (unsigned seed = 0; seed < 200; seed++) {
        uint64_t counts[VN_MAX_NODES];
        unsigned queries;

        memset(&fk, 0, sizeof(fk));
        fk.base = 0x7f0000000000ULL;
        if (sample_count_pages(&mixed_ops, &mixed_topo, 4242, fk.base, len, PAGE,
                               seed * 0x9e3779b97f4a7c15ULL, counts, &queries) < 0) {
            ok = false;
            break;
        }
        for (unsigned n = 0; n < 4; n++) {
            double err = fabs((double)counts[n] - (double)exact[n]) / (double)pages * 100;
            if (err > worst) {
                worst = err;
                worst_seed = seed;
            }
        }
    }
    CHECK(ok && worst <= 2.0,
          "16 GiB mixed placement, 200 seeds: worst per-node error %.2f points (seed %u), "
          "<= 2",
          worst, worst_seed);
}

/* ---- numa_libnuma on this process ---- */

/* The policy a new mapping of the memfd sees: the shared object's, as QEMU's would. */
static int shared_policy(int fd)
{
    int mode = -1;
    void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);

    if (p == MAP_FAILED)
        return -1;
    if (get_mempolicy(&mode, NULL, 0, p, MPOL_F_ADDR) < 0)
        mode = -1;
    (void)munmap(p, 4096);
    return mode;
}

static void test_libnuma(void)
{
    const size_t len = 16 * PAGE;
    void *pages[16];
    int nodes[16], status[16];
    char *a;
    int r, fd;
    long long fr;
    char path[64];

    a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!CHECK(a != MAP_FAILED, "mmap 16 pages"))
        return;
    for (unsigned i = 0; i < 16; i++) {
        a[i * PAGE] = 1;
        pages[i] = a + i * PAGE;
        nodes[i] = 0;
        status[i] = -1234;
    }
    r = numa_libnuma.move(getpid(), 16, pages, nodes, status, false);
    {
        bool all0 = true;
        for (unsigned i = 0; i < 16; i++)
            all0 &= status[i] == 0;
        CHECK(r == 0 && all0, "libnuma move: 16 own pages to node 0 (r=%d status[0]=%d)", r,
              status[0]);
    }
    for (unsigned i = 0; i < 16; i++)
        nodes[i] = 4095;
    r = numa_libnuma.move(getpid(), 16, pages, nodes, status, false);
    CHECK(r < 0, "libnuma move: node 4095 refused (r=%d %s)", r, strerror(-r));
    for (unsigned i = 0; i < 16; i++)
        nodes[i] = -3;
    r = numa_libnuma.move(getpid(), 16, pages, nodes, status, false);
    CHECK(r < 0, "libnuma move: node -3 refused (r=%d)", r);
    for (unsigned i = 0; i < 16; i++)
        status[i] = -1234;
    r = numa_libnuma.query(getpid(), 16, pages, status);
    CHECK(r == 0 && status[0] == 0 && status[15] == 0, "libnuma query: pages on node 0 (r=%d)", r);
    CHECK(numa_libnuma.query(getpid(), 0, NULL, NULL) == 0, "libnuma query: zero pages");

    /* pagemap fallback: what a 6.1 status query answers for NUMA-hinting (PROT_NONE) pages */
    {
        char *mem =
            mmap(NULL, 32 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        void *pg[32];
        int st[32];
        bool all_resolved = true, untouched_kept = true;
        for (int i = 0; i < 32; i++) {
            if (i < 16)
                mem[i * 4096] = 1;
            pg[i] = mem + i * 4096;
            st[i] = -EFAULT;
        }
        r = numa_libnuma.resolve_faulted(getpid(), 32, pg, st);
        for (int i = 0; i < 32; i++) {
            if (i < 16)
                all_resolved &= st[i] == 0;
            else
                untouched_kept &= st[i] == -EFAULT;
        }
        CHECK(r == 0 && all_resolved && untouched_kept,
              "pagemap fallback: 16 present 'EFAULT' pages resolve to node 0 from their frames, "
              "16 untouched ones stay unknown (r=%d)",
              r);
        st[0] = -EFAULT;
        CHECK(numa_libnuma.resolve_faulted(999999, 1, pg, st) == -ESRCH,
              "pagemap fallback of a dead process: -ESRCH");
        (void)munmap(mem, 32 * 4096);
    }

    fr = numa_libnuma.node_free(0);
    CHECK(fr > 0, "libnuma node_free(0) = %lld", fr);
    fr = numa_libnuma.node_free(4000);
    CHECK(fr < 0, "libnuma node_free(4000) = %lld", fr);

    /* file_policy on a memfd of our own, the way vnumad sets a shared backend's policy */
    fd = memfd_create("vnuma-test", MFD_CLOEXEC);
    if (CHECK(fd >= 0 && ftruncate(fd, 4 * (off_t)VN_MIB) == 0, "memfd of 4 MiB")) {
        vn_mempolicy pref = {.mode = MPOL_PREFERRED}, bind = {.mode = MPOL_BIND}, old, old2;
        vn_mempolicy dflt = {.mode = MPOL_DEFAULT}, bad = {.mode = MPOL_PREFERRED};
        cpuset_set(&pref.nodes, 0);
        cpuset_set(&bind.nodes, 0);
        cpuset_set(&bad.nodes, 1000);
        (void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        r = numa_libnuma.file_policy(path, 0, 4 * VN_MIB, &bind, NULL);
        CHECK(r == 0 && shared_policy(fd) == MPOL_BIND,
              "libnuma file_policy: a backend the operator bound to node 0 (r=%d %s)", r,
              strerror(-r));
        r = numa_libnuma.file_policy(path, 100, VN_MIB, &pref, &old);
        CHECK(r == 0 && old.mode == MPOL_BIND && cpuset_isset(&old.nodes, 0) &&
                  cpuset_weight(&old.nodes) == 1 && shared_policy(fd) == MPOL_PREFERRED,
              "libnuma file_policy: preferred node 0 set at an unaligned offset, the old "
              "policy read first: bind to 0 (r=%d, mode %d)",
              r, old.mode);
        r = numa_libnuma.file_policy(path, 0, 4 * VN_MIB, &old, &old2);
        CHECK(r == 0 && old2.mode == MPOL_PREFERRED && shared_policy(fd) == MPOL_BIND,
              "libnuma file_policy: the saved policy goes back exactly (bind, not default)");
        r = numa_libnuma.file_policy(path, 0, 4 * VN_MIB, &dflt, NULL);
        CHECK(r == 0 && shared_policy(fd) == MPOL_DEFAULT,
              "libnuma file_policy: default set on a shared object that had a policy (r=%d, "
              "policy %d)",
              r, shared_policy(fd));
        r = numa_libnuma.file_policy(path, 0, 4 * VN_MIB, &bad, NULL);
        CHECK(r == -EINVAL, "libnuma file_policy: node 1000 refused (r=%d)", r);
        r = numa_libnuma.file_policy("/nonexistent/vnuma", 0, 4096, &pref, NULL);
        CHECK(r == -ENOENT, "libnuma file_policy: missing path (r=%d)", r);
        r = numa_libnuma.file_policy(path, 0, 0, &pref, NULL);
        CHECK(r == -EINVAL, "libnuma file_policy: empty range (r=%d)", r);
        /* what a map_files link may name besides shared memory: it is not opened read-write */
        r = numa_libnuma.file_policy("/dev/null", 0, 4096, &pref, NULL);
        CHECK(r == -EPERM, "libnuma file_policy: a device is refused before it is opened (r=%d)",
              r);
        struct statfs sfs;
        if (statfs("/proc/self/exe", &sfs) == 0 && sfs.f_type != TMPFS_MAGIC) {
            r = numa_libnuma.file_policy("/proc/self/exe", 0, 4096, &pref, NULL);
            CHECK(r == -EOPNOTSUPP,
                  "libnuma file_policy: a regular file off tmpfs (this test's binary) has no "
                  "shared policy and is not opened (r=%d)",
                  r);
        }
        (void)close(fd);
    }
    (void)munmap(a, len);
}

/* sample_cgroup_cpus on fixture trees: cgroup v1 (cpuset line) and v2 (0:: line). */
static void put(const char *root, const char *rel, const char *text)
{
    char path[4096], cmd[4200];
    FILE *f;

    snprintf(path, sizeof(path), "%s%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    f = fopen(path, "we");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_cgroup_cpus(void)
{
    char v1[] = "/tmp/vnuma-cg1-XXXXXX", v2[] = "/tmp/vnuma-cg2-XXXXXX", cmd[256];
    vn_cpuset set, want;
    int r;

    if (!CHECK(mkdtemp(v1) && mkdtemp(v2), "fixture directories"))
        return;
    put(v1, "/proc/42/cgroup",
        "4:memory:/machine/qemu-1-vm.libvirt-qemu/emulator\n"
        "5:cpuset_x:/wrong\n3:cpu,cpuset:/machine/qemu-1-vm.libvirt-qemu/emulator\n0::/\n");
    put(v1, "/sys/fs/cgroup/cpuset/machine/qemu-1-vm.libvirt-qemu/cpuset.effective_cpus", "2-5\n");
    put(v1, "/sys/fs/cgroup/cpuset/machine/qemu-1-vm.libvirt-qemu/emulator/cpuset.effective_cpus",
        "2\n");
    r = sample_cgroup_cpus(v1, 42, NULL, 0, &set);
    (void)cpuset_parse("2-5", &want);
    CHECK(r == 0 && cpuset_equal(&set, &want),
          "cgroup v1: the domain's group above its emulator group bounds it (2-5, r=%d)", r);
    put(v2, "/proc/43/cgroup",
        "0::/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/libvirt/emulator\n");
    put(v2, "/sys/fs/cgroup/machine.slice/machine-qemu\\x2d1\\x2dvm.scope/cpuset.cpus.effective",
        "4-7,12\n");
    r = sample_cgroup_cpus(v2, 43, NULL, 0, &set);
    (void)cpuset_parse("4-7,12", &want);
    CHECK(r == 0 && cpuset_equal(&set, &want),
          "cgroup v2: the machine scope above libvirt/emulator bounds it (4-7,12, r=%d)", r);
    /* libvirt without systemd: the domain's group has no cpuset files, /machine has */
    put(v2, "/proc/46/cgroup", "0::/machine/qemu-2-vm.libvirt-qemu/emulator\n");
    put(v2, "/sys/fs/cgroup/machine/qemu-2-vm.libvirt-qemu/cgroup.procs", "");
    put(v2, "/sys/fs/cgroup/machine/cpuset.cpus.effective", "1-7\n");
    r = sample_cgroup_cpus(v2, 46, NULL, 0, &set);
    (void)cpuset_parse("1-7", &want);
    CHECK(r == 0 && cpuset_equal(&set, &want),
          "cgroup v2, no cpuset controller in the domain's group: its nearest ancestor's (1-7, "
          "r=%d)",
          r);
    /* the file found is kept: the next call reads it alone, until it cannot be read */
    char cached[256] = "", tiny[8] = "";
    r = sample_cgroup_cpus(v2, 46, cached, sizeof(cached), &set);
    CHECK(r == 0 && !strcmp(cached, "/sys/fs/cgroup/machine/cpuset.cpus.effective"),
          "the file found is kept (r=%d, '%s')", r, cached);
    r = sample_cgroup_cpus(v2, 46, tiny, sizeof(tiny), &set);
    CHECK(r == 0 && tiny[0] == '\0', "a file too long to keep is not kept (r=%d)", r);
    put(v2, "/proc/46/cgroup", "0::/elsewhere\n");
    put(v2, "/sys/fs/cgroup/machine/cpuset.cpus.effective", "3\n");
    r = sample_cgroup_cpus(v2, 46, cached, sizeof(cached), &set);
    (void)cpuset_parse("3", &want);
    CHECK(r == 0 && cpuset_equal(&set, &want),
          "with a kept file, /proc/PID/cgroup is not read again (3, r=%d)", r);
    snprintf(cmd, sizeof(cmd), "rm -f '%s/sys/fs/cgroup/machine/cpuset.cpus.effective'", v2);
    (void)!system(cmd);
    r = sample_cgroup_cpus(v2, 46, cached, sizeof(cached), &set);
    CHECK(r < 0 && cached[0] == '\0',
          "a kept file gone: looked up again (no file under /elsewhere: r=%d, '%s')", r, cached);
    r = sample_cgroup_cpus(v2, 44, NULL, 0, &set);
    CHECK(r == -ESRCH, "no such process: -ESRCH (r=%d)", r);
    put(v2, "/proc/45/cgroup", "0::/elsewhere\n");
    r = sample_cgroup_cpus(v2, 45, NULL, 0, &set);
    CHECK(r < 0, "no cpuset file: an error, no bound (r=%d)", r);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", v1, v2);
    (void)!system(cmd);
}

/* sample_thread: a vCPU thread's CPU time, CPU and affinity from /proc (fixtures, then this
 * process's own thread). */
static void test_thread(void)
{
    char root[] = "/tmp/vnuma-proc-XXXXXX", cmd[256];
    uint64_t ns = 0;
    int cpu = -1, r;
    vn_cpuset aff, want;

    if (!CHECK(mkdtemp(root), "fixture directory"))
        return;
    /* a command with spaces and ')' in it; utime 150, stime 50 ticks; processor 3 */
    put(root, "/77/stat",
        "77 (CPU 0/KVM) x) S 1 1 1 0 -1 4194368 0 0 0 0 150 50 0 0 20 0 1 0 100 0 0 "
        "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 -1 3 0 0 0 0 0\n");
    put(root, "/77/status", "Name:\tCPU 0/KVM\nCpus_allowed_list:\t2-3,6\n");
    put(root, "/77/schedstat", "123456789 1000 42\n");
    r = sample_thread(root, 77, &ns, &cpu, &aff);
    cpuset_parse("2-3,6", &want);
    CHECK(r == 0 && ns == 123456789 && cpu == 3 && cpuset_equal(&aff, &want),
          "schedstat time in ns, processor after a command with ') ', Cpus_allowed_list (r=%d, "
          "ns=%llu, cpu=%d)",
          r, (unsigned long long)ns, cpu);
    snprintf(cmd, sizeof(cmd), "rm -f %s/77/schedstat", root);
    CHECK(system(cmd) == 0, "schedstat removed");
    r = sample_thread(root, 77, &ns, &cpu, &aff);
    CHECK(r == 0 && ns == 200ULL * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK)),
          "without schedstat: utime + stime in clock ticks (r=%d, ns=%llu)", r,
          (unsigned long long)ns);
    CHECK(sample_thread(root, 78, &ns, &cpu, &aff) == -ESRCH, "a thread that is gone: -ESRCH");
    r = sample_thread("/proc", (pid_t)syscall(SYS_gettid), &ns, &cpu, &aff);
    CHECK(r == 0 && ns > 0 && cpu >= 0 && !cpuset_empty(&aff),
          "this thread in the real /proc (r=%d, cpu=%d)", r, cpu);
    /* the real /proc: the affinity from sched_getaffinity(2), as /proc shows it */
    char line[512] = "";
    snprintf(cmd, sizeof(cmd), "/proc/self/task/%d/status", (int)syscall(SYS_gettid));
    FILE *st = fopen(cmd, "re");
    while (st && fgets(line, sizeof(line), st) && strncmp(line, "Cpus_allowed_list:", 18))
        ;
    if (st)
        fclose(st);
    line[strcspn(line, "\n")] = '\0';
    CHECK(cpuset_parse(line + 18 + strspn(line + 18, " \t"), &want) == 0 &&
              cpuset_equal(&aff, &want),
          "this thread's affinity is /proc's Cpus_allowed_list (%s)", line);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    CHECK(system(cmd) == 0, "fixture removed");
}

/* ramlayout_page_size: what the kernel migrates at once. Anonymous guest RAM moves in whole
 * transparent huge pages on a host whose THP is not "never"; the size is the kernel's. */
static void test_granule(void)
{
    char root[] = "/tmp/vnuma-thp-XXXXXX", cmd[256];
    uint64_t ps = 0, g = 0;
    bool huge = true;
    int r;

    if (!CHECK(mkdtemp(root), "fixture directory"))
        return;
    put(root, "/proc/4242/maps", "7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n");
    put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
    put(root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "2097152\n");
    r = ramlayout_page_size(root, 4242, 0x7f0000000000ULL, &ps, &huge, &g);
    CHECK(r == 0 && ps == 4096 && !huge && g == 2 << 20,
          "anonymous RAM, THP madvise: 4 KiB pages moved in 2 MiB (r=%d, %llu, %llu)", r,
          (unsigned long long)ps, (unsigned long long)g);
    put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
    r = ramlayout_page_size(root, 4242, 0x7f0000000000ULL, &ps, &huge, &g);
    CHECK(r == 0 && ps == 4096 && g == 4096, "THP never: moved in 4 KiB pages (%llu)",
          (unsigned long long)g);
    put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
    put(root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "3000000\n");
    CHECK(ramlayout_thp_size(root) == 0, "a size that is no power of two: none");
    put(root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "536870912\n");
    CHECK(ramlayout_thp_size(root) == 512 << 20, "512 MiB (arm64, 64 KiB pages)");
    snprintf(cmd, sizeof(cmd), "rm -rf %s/sys", root);
    CHECK(system(cmd) == 0 && ramlayout_thp_size(root) == 0, "no THP in sysfs: none");
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    CHECK(system(cmd) == 0, "fixture removed");
}

/* A thread is QEMU's when the kernel lists it in /proc/PID/task. */
static void test_thread_of(void)
{
    pid_t self = getpid();
    CHECK(sample_thread_of("/", self, self) == 0, "the main thread is one of this process's");
    CHECK(sample_thread_of("/", self, 1) == -ESRCH, "pid 1 is not a thread of this process");
    CHECK(sample_thread_of("/", 1, self) == -ESRCH, "nor is this one of pid 1's");
    CHECK(sample_thread_of("/", 0, self) == -ESRCH, "no pid: no thread of it");
}

int main(void)
{
    char err[256] = "";

    test_thread_of();
    test_cgroup_cpus();
    test_thread();
    test_granule();
    test_mems_allowed();
    test_ram_backoff();

    if (CHECK(topo_load(TOPO_SOURCE_LIVE, NULL, NULL, &live_topo, err, sizeof(err)) == 0,
              "live topology (%s)", err))
        test_count_self();
    if (CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, &fake_topo, err,
                        sizeof(err)) == 0 &&
                  fake_topo.nr_nodes == 2 && topo_node_index(&fake_topo, 1) == 1,
              "synthetic 2-node topology (%s)", err))
        test_walk();
    if (CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "numa:4 core:1 pu:1", NULL, &mixed_topo, err,
                        sizeof(err)) == 0 &&
                  mixed_topo.nr_nodes == 4,
              "synthetic 4-node topology (%s)", err))
        test_walk_accuracy();
    test_libnuma();
    return tap_done();
}
