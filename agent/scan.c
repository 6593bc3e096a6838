/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scan: bounded, windowed sampling of one process's memory (see scan.h).
 */
#include "scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "scanrule.h"
#include "util.h"

#define PAGE_SIZE_4K  4096ULL
#define PM_PRESENT    (1ULL << 63)
#define PM_SOFT_DIRTY (1ULL << 55)
#define PM_PFN_MASK   ((1ULL << 55) - 1)
#define PM_CHUNK      512 /* entries per pagemap read: 2 MiB, one kernel lock hold */
#define IDLE_BITMAP   "/sys/kernel/mm/page_idle/bitmap"

/* ---- the Linux operations ---- */

static int linux_query_nodes(pid_t pid, unsigned long n, void **pages, int *status)
{
    /* raw syscall: no libnuma in the static agent */
    if (syscall(SYS_move_pages, (long)pid, n, pages, NULL, status, 0L) < 0)
        return -errno;
    return 0;
}

static int linux_open_pagemap(const char *root, pid_t pid)
{
    char path[512];
    int fd;

    snprintf(path, sizeof(path), "%s/proc/%d/pagemap", root, (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static int linux_read_pagemap(int fd, uint64_t vaddr, size_t n, uint64_t *out)
{
    size_t want = n * sizeof(uint64_t), got = 0;
    off_t off = (off_t)(vaddr / PAGE_SIZE_4K * sizeof(uint64_t));

    while (got < want) {
        ssize_t r = pread(fd, (char *)out + got, want - got, off + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -EIO;
        got += (size_t)r;
    }
    return 0;
}

static int linux_clear_soft_dirty(const char *root, pid_t pid)
{
    char path[512];
    _cleanup_close_ int fd = -1;

    snprintf(path, sizeof(path), "%s/proc/%d/clear_refs", root, (int)pid);
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (write(fd, "4", 1) != 1)
        return -errno;
    return 0;
}

static int idle_fd(void)
{
    static int fd = -2;

    if (fd == -2)
        fd = open(IDLE_BITMAP, O_RDWR | O_CLOEXEC);
    return fd;
}

static int linux_idle_test(uint64_t pfn, bool *ret_idle)
{
    uint64_t word;
    int fd = idle_fd();

    if (fd < 0)
        return -ENOENT;
    if (pread(fd, &word, sizeof(word), (off_t)(pfn / 64 * 8)) != sizeof(word))
        return -errno;
    *ret_idle = (word >> (pfn % 64)) & 1;
    return 0;
}

static int linux_idle_mark(uint64_t pfn)
{
    uint64_t word = 1ULL << (pfn % 64);
    int fd = idle_fd();

    if (fd < 0)
        return -ENOENT;
    if (pwrite(fd, &word, sizeof(word), (off_t)(pfn / 64 * 8)) != sizeof(word))
        return -errno;
    return 0;
}

const scan_ops scan_ops_linux = {
    .query_nodes = linux_query_nodes,
    .read_pagemap = linux_read_pagemap,
    .open_pagemap = linux_open_pagemap,
    .clear_soft_dirty = linux_clear_soft_dirty,
    .idle_test = linux_idle_test,
    .idle_mark = linux_idle_mark,
};

bool scan_softdirty_supported(void)
{
    _cleanup_close_ int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    volatile char *p;
    uint64_t e = 0;
    bool ok;

    if (fd < 0)
        return false;
    p = mmap(NULL, PAGE_SIZE_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return false;
    p[0] = 1; /* a new page is soft-dirty where the kernel tracks it */
    ok = linux_read_pagemap(fd, (uint64_t)(uintptr_t)p, 1, &e) == 0 && (e & PM_PRESENT) &&
         (e & PM_SOFT_DIRTY);
    (void)munmap((void *)p, PAGE_SIZE_4K);
    return ok;
}

scan_heat scan_detect_heat(const char *root)
{
    char path[512];

    snprintf(path, sizeof(path), "%s%s", root, IDLE_BITMAP);
    if (access(path, R_OK | W_OK) == 0)
        return SCAN_HEAT_IDLE;
    /* clear_refs exists on every kernel with CONFIG_PROC_PAGE_MONITOR; without
     * CONFIG_MEM_SOFT_DIRTY bit 55 stays 0 and every block would read as cold. */
    snprintf(path, sizeof(path), "%s/proc/self/clear_refs", root);
    if (access(path, W_OK) == 0 && (root[0] != '\0' || scan_softdirty_supported()))
        return SCAN_HEAT_SOFTDIRTY;
    return SCAN_HEAT_RESIDENCY;
}

const char *scan_heat_name(scan_heat h)
{
    static const char *const names[SCAN_HEAT_MAX] = {
        [SCAN_HEAT_RESIDENCY] = "residency",
        [SCAN_HEAT_SOFTDIRTY] = "soft-dirty",
        [SCAN_HEAT_IDLE] = "page-idle",
    };
    return h < SCAN_HEAT_MAX ? names[h] : "unknown";
}

/* ---- state ---- */

scan_proc *scan_proc_new(pid_t pid, uint64_t starttime, unsigned nr_nodes)
{
    scan_proc *sp = calloc(1, sizeof(*sp));

    if (!sp)
        return NULL;
    sp->pid = pid;
    sp->starttime = starttime;
    sp->nr_nodes = VN_MAX(1u, VN_MIN(nr_nodes, (unsigned)AG_MAX_NODES));
    return sp;
}

static void free_regions(scan_region *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(r[i].node_pages);
    free(r);
}

void scan_proc_free(scan_proc *sp)
{
    if (!sp)
        return;
    free_regions(sp->regions, sp->nr_regions);
    free(sp);
}

int scan_proc_update_regions(scan_proc *sp, const procfs_region *maps, size_t n)
{
    scan_region *nr = NULL;
    size_t k = 0, j = 0;

    if (n > 0) {
        nr = calloc(n, sizeof(*nr));
        if (!nr)
            return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const procfs_region *m = &maps[i];
        scan_region *r;

        /* read-only mappings (text, rodata: page cache shared by many processes) and
         * guard pages are not scanned: the agent reports writable memory */
        if (!m->readable || !m->writable || m->special)
            continue;
        r = &nr[k];
        r->start = m->start;
        r->end = m->end;
        r->node_pages = calloc(sp->nr_nodes, sizeof(uint64_t));
        if (!r->node_pages) {
            free_regions(nr, k);
            return -ENOMEM;
        }
        /* both lists are sorted by address: carry over the state of the same start */
        while (j < sp->nr_regions && sp->regions[j].start < m->start)
            j++;
        if (j < sp->nr_regions && sp->regions[j].start == m->start) {
            scan_region *o = &sp->regions[j];
            r->cursor = o->cursor < r->end - r->start ? o->cursor : 0;
            r->uncond_scans = o->uncond_scans;
            r->touched = o->touched;
            r->scanned = o->scanned;
            memcpy(r->node_pages, o->node_pages, sp->nr_nodes * sizeof(uint64_t));
            if (o->end != m->end) /* resized: forget the estimate */
                memset(r->node_pages, 0, sp->nr_nodes * sizeof(uint64_t));
        }
        k++;
    }
    free_regions(sp->regions, sp->nr_regions);
    sp->regions = nr;
    sp->nr_regions = k;
    if (sp->next_region >= k)
        sp->next_region = 0;
    return 0;
}

/* ---- blocks ---- */

static scan_bin *bin_get(scan_proc *sp, uint64_t block)
{
    uint64_t key = block + 1;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 54) % SCAN_MAX_BINS;

    for (size_t i = 0; i < SCAN_MAX_BINS; i++) {
        scan_bin *b = &sp->bins[(h + i) % SCAN_MAX_BINS];
        if (b->block == key) {
            if (b->stamp != sp->collection) { /* first sight this collection: fresh counts */
                b->present = b->tracked = b->accessed = 0;
                b->stamp = sp->collection;
            }
            return b;
        }
        if (b->block == 0) {
            *b = (scan_bin){.block = key, .stamp = sp->collection};
            return b;
        }
    }
    sp->bins_dropped++;
    return NULL;
}

/* ---- one window ---- */

typedef struct window_buf {
    void *addrs[LOCK_HOLD_MAX_PAGES];
    int status[LOCK_HOLD_MAX_PAGES];
    uint64_t pm[LOCK_HOLD_MAX_PAGES];
    uint64_t chunk[PM_CHUNK];
} window_buf;

/* The pagemap entries of the n sampled pages from addr, every stride pages. */
static int window_pagemap(const scan_ctx *ctx, int fd, uint64_t addr, size_t n, uint64_t stride,
                          window_buf *wb)
{
    if (stride >= PM_CHUNK) {
        for (size_t i = 0; i < n; i++) {
            int r = ctx->ops->read_pagemap(fd, addr + i * stride * PAGE_SIZE_4K, 1, &wb->pm[i]);
            if (r < 0)
                return r;
        }
        return 0;
    }
    for (size_t i = 0; i < n;) {
        uint64_t first = i * stride; /* page index of sample i */
        uint64_t pages = VN_MIN((uint64_t)PM_CHUNK, (n - i - 1) * stride + 1);
        int r = ctx->ops->read_pagemap(fd, addr + first * PAGE_SIZE_4K, pages, wb->chunk);
        if (r < 0)
            return r;
        for (; i < n && i * stride < first + pages; i++)
            wb->pm[i] = wb->chunk[i * stride - first];
    }
    return 0;
}

static bool heat_tracked(const scan_proc *sp, const scan_region *r, const scan_ctx *ctx)
{
    switch (ctx->heat) {
    case SCAN_HEAT_SOFTDIRTY:
        return sp->softdirty_clear_ms != 0;
    case SCAN_HEAT_IDLE:
        return r->scanned;
    default:
        return false;
    }
}

/*
 * Sample [r->start + r->cursor, + len): at most LOCK_HOLD_MAX_PAGES pages, one
 * move_pages status query, pagemap in 2 MiB chunks (rule 5).
 */
static int scan_window(scan_proc *sp, scan_region *r, const scan_ctx *ctx, int pm_fd, uint64_t len,
                       window_buf *wb, scan_stats *stats)
{
    uint64_t addr = r->start + r->cursor, pages = len / PAGE_SIZE_4K;
    uint64_t stride = (pages + LOCK_HOLD_MAX_PAGES - 1) / LOCK_HOLD_MAX_PAGES;
    size_t n = (size_t)((pages + stride - 1) / stride);
    uint64_t counts[AG_MAX_NODES] = {0};
    bool tracked = heat_tracked(sp, r, ctx), any = false;
    bool have_pm = pm_fd >= 0;
    int q;

    for (size_t i = 0; i < n; i++)
        wb->addrs[i] = (void *)(uintptr_t)(addr + i * stride * PAGE_SIZE_4K);
    q = ctx->ops->query_nodes(sp->pid, n, wb->addrs, wb->status);
    if (q == -ESRCH)
        return q;
    if (q < 0)
        stats->errors++;
    if (have_pm && window_pagemap(ctx, pm_fd, addr, n, stride, wb) < 0) {
        stats->errors++;
        have_pm = false;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t e = have_pm ? wb->pm[i] : 0, pfn = e & PM_PFN_MASK;
        bool accessed = false;
        scan_bin *b;

        if (q == 0 && wb->status[i] >= 0 && (unsigned)wb->status[i] < sp->nr_nodes) {
            counts[wb->status[i]] += stride;
            any = true;
        }
        if (!(e & PM_PRESENT) || pfn == 0) /* pfn 0: no CAP_SYS_ADMIN */
            continue;
        any = true;
        if (ctx->heat == SCAN_HEAT_SOFTDIRTY) {
            accessed = (e & PM_SOFT_DIRTY) != 0;
        } else if (ctx->heat == SCAN_HEAT_IDLE) {
            bool idle = true;
            if (ctx->ops->idle_test(pfn, &idle) == 0)
                accessed = !idle;
            (void)ctx->ops->idle_mark(pfn);
        }
        b = bin_get(sp, (pfn * PAGE_SIZE_4K) >> SCAN_BLOCK_SHIFT);
        if (!b)
            continue;
        b->present += (uint32_t)stride;
        if (tracked) {
            b->tracked += (uint32_t)stride;
            if (accessed) {
                b->accessed += (uint32_t)stride;
                r->touched = true;
            }
        }
    }
    /* Replace this window's share of the region's estimate by what it holds now. */
    for (unsigned k = 0; k < sp->nr_nodes; k++) {
        uint64_t old = r->node_pages[k], size_pages = (r->end - r->start) / PAGE_SIZE_4K;
        uint64_t part =
            size_pages ? (uint64_t)((double)old * (double)pages / (double)size_pages) : old;
        r->node_pages[k] = old - VN_MIN(old, part) + counts[k];
        if (r->node_pages[k] > size_pages)
            r->node_pages[k] = size_pages;
    }
    if (!tracked)
        r->touched = any;
    r->scanned = true;
    stats->windows++;
    stats->bytes += len;
    stats->samples += n;
    return 0;
}

int scan_proc_collect(scan_proc *sp, const scan_ctx *ctx, uint64_t budget, scan_stats *stats)
{
    _cleanup_close_ int pm_fd = -1;
    _cleanup_free_ window_buf *wb = NULL;
    uint64_t scan_size = ctx->scan_size ? ctx->scan_size : SCAN_SIZE_DEFAULT;
    uint64_t used = 0;
    uint32_t windows = 0;
    size_t visited = 0;

    sp->collection++;
    if (sp->nr_regions == 0)
        return 0;
    wb = malloc(sizeof(*wb));
    if (!wb)
        return -ENOMEM;
    pm_fd = ctx->ops->open_pagemap(ctx->root, sp->pid);
    if (pm_fd == -ENOENT || pm_fd == -ESRCH)
        return -ESRCH;
    budget = VN_MAX(budget, SCAN_MIN_WINDOW);
    while (used < budget && windows < SCAN_MAX_WINDOWS && visited < sp->nr_regions) {
        scan_region *r = &sp->regions[sp->next_region];
        uint64_t size = r->end - r->start, len;
        int ret;

        /* rule 4: untouched regions still get their unconditional scans */
        if (r->cursor == 0 && r->scanned &&
            !rule_scan_region(r->touched, r->uncond_scans, size, scan_size)) {
            goto next_region;
        }
        len = VN_MIN(size - r->cursor, scan_size);
        len = VN_MIN(len, VN_MAX(budget - used, SCAN_MIN_WINDOW));
        len = (len + PAGE_SIZE_4K - 1) / PAGE_SIZE_4K * PAGE_SIZE_4K;
        if (!r->touched)
            r->uncond_scans++;
        ret = scan_window(sp, r, ctx, pm_fd, len, wb, stats);
        if (ret < 0)
            return ret;
        used += len;
        windows++;
        r->cursor += len;
        if (r->cursor < size)
            continue; /* the budget ends here; the next collection goes on from the cursor */
        r->cursor = 0;
    next_region:
        visited++;
        if (++sp->next_region >= sp->nr_regions) {
            sp->next_region = 0;
            if (++sp->sweeps % SCAN_RESET_SWEEPS == 0)
                for (size_t i = 0; i < sp->nr_regions; i++)
                    sp->regions[i].uncond_scans = 0;
        }
    }
    return 0;
}

/* Soft-dirty clears are separate (collect.c decides when, bounded by size and period). */

void scan_proc_mark(scan_proc *sp)
{
    sp->mark_region = sp->next_region;
    for (size_t i = 0; i < sp->nr_regions; i++)
        sp->regions[i].mark = sp->regions[i].cursor;
}

void scan_proc_rewind(scan_proc *sp)
{
    sp->next_region = sp->mark_region < sp->nr_regions ? sp->mark_region : 0;
    for (size_t i = 0; i < sp->nr_regions; i++)
        sp->regions[i].cursor = sp->regions[i].mark;
    memset(sp->bins, 0, sizeof(sp->bins));
}

void scan_proc_node_pages(const scan_proc *sp, uint64_t *node_pages)
{
    memset(node_pages, 0, sp->nr_nodes * sizeof(uint64_t));
    for (size_t i = 0; i < sp->nr_regions; i++)
        for (unsigned k = 0; k < sp->nr_nodes; k++)
            node_pages[k] += sp->regions[i].node_pages[k];
}

static uint32_t bin_heat(const scan_bin *b, double cpu_share)
{
    double h;

    if (b->tracked > 0) {
        h = (double)b->accessed / (double)b->tracked;
    } else {
        double density = (double)b->present / (double)(1u << (SCAN_BLOCK_SHIFT - 12));
        h = cpu_share * VN_MIN(1.0, density);
    }
    h = VN_MAX(0.0, VN_MIN(1.0, h));
    return (uint32_t)(h * 1000.0 + 0.5);
}

static int cmp_bin_block(const void *a, const void *b)
{
    const scan_bin *x = a, *y = b;
    return (x->block > y->block) - (x->block < y->block);
}

static int cmp_range_heat(const void *a, const void *b)
{
    const scan_range *x = a, *y = b;
    uint64_t wx = (uint64_t)x->heat * x->length, wy = (uint64_t)y->heat * y->length;
    if (x->heat != y->heat)
        return x->heat < y->heat ? 1 : -1;
    if (wx != wy)
        return wx < wy ? 1 : -1;
    return (x->gpa > y->gpa) - (x->gpa < y->gpa);
}

size_t scan_proc_ranges(scan_proc *sp, double cpu_share, uint32_t expire, scan_range *out,
                        size_t max)
{
    _cleanup_free_ scan_bin *live = malloc(sizeof(scan_bin) * SCAN_MAX_BINS);
    _cleanup_free_ scan_range *all = NULL;
    size_t n = 0, nr = 0;

    if (!live || max == 0)
        return 0;
    for (size_t i = 0; i < SCAN_MAX_BINS; i++) {
        scan_bin *b = &sp->bins[i];
        if (b->block == 0)
            continue;
        if (sp->collection - b->stamp >= expire) {
            b->block = 0; /* forgotten; the table is rebuilt below to keep probing valid */
            continue;
        }
        live[n++] = *b;
    }
    /* rebuild the open-addressing table without the expired blocks */
    memset(sp->bins, 0, sizeof(sp->bins));
    for (size_t i = 0; i < n; i++) {
        uint64_t key = live[i].block;
        size_t h = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 54) % SCAN_MAX_BINS;
        while (sp->bins[h].block != 0)
            h = (h + 1) % SCAN_MAX_BINS;
        sp->bins[h] = live[i];
    }
    if (n == 0)
        return 0;
    qsort(live, n, sizeof(*live), cmp_bin_block);
    all = calloc(n, sizeof(*all));
    if (!all)
        return 0;
    /* merge adjacent blocks of similar heat (within 250) into one range */
    for (size_t i = 0; i < n; i++) {
        uint64_t gpa = (live[i].block - 1) << SCAN_BLOCK_SHIFT;
        uint32_t heat = bin_heat(&live[i], cpu_share);
        scan_range *last = nr ? &all[nr - 1] : NULL;

        if (last && last->gpa + last->length == gpa &&
            (heat > last->heat ? heat - last->heat : last->heat - heat) <= 250) {
            uint64_t blocks = last->length >> SCAN_BLOCK_SHIFT;
            last->heat = (uint32_t)((last->heat * blocks + heat) / (blocks + 1));
            last->length += 1ULL << SCAN_BLOCK_SHIFT;
            continue;
        }
        all[nr++] = (scan_range){.gpa = gpa, .length = 1ULL << SCAN_BLOCK_SHIFT, .heat = heat};
    }
    qsort(all, nr, sizeof(*all), cmp_range_heat);
    nr = VN_MIN(nr, max);
    memcpy(out, all, nr * sizeof(*out));
    return nr;
}
