/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtouch: a workload for the test guest. Allocates MIB MiB bound to guest
 * node NODE (mbind(MPOL_BIND) by raw syscall: no libnuma in a static
 * initramfs) and writes one byte of every page in a loop, with THREADS
 * threads each on its own slice, for SECONDS seconds (0: forever). With --gpa 1 it
 * prints, once every page is written, the guest-physical ranges that hold the buffer (from
 * /proc/self/pagemap: the hot set a host-side benchmark follows, tests/bench/hotset.sh):
 *   memtouch: pid P gpa 0xSTART+0xLEN ...     (up to 8 ranges a line)
 *   memtouch: pid P gpa done R ranges N pages
 * --pause MS sleeps MS milliseconds after each pass over the buffer (every page is still
 * written once a pass: hot to a soft-dirty or page-idle scan whose period is longer than a
 * pass and its pause; the tests that only need hot memory need no whole vCPU for it).
 * --hold 1 writes every page once and then keeps the memory without touching it (cold memory
 * that stays allocated); --ready FILE creates FILE once every page is written, --wait FILE
 * waits for FILE before allocating (so one memtouch's buffer is allocated after another's).
 *
 *   memtouch [--node N] [--mib M] [--threads T] [--seconds S] [--gpa 0|1] [--hold 0|1]
 *            [--pause MS] [--ready FILE] [--wait FILE]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MPOL_BIND      2
#define MPOL_MF_STRICT (1 << 0)
#define MPOL_MF_MOVE   (1 << 1)
#define PAGE           4096UL

typedef struct slice {
    volatile char *base;
    size_t len;
    unsigned seconds;
    unsigned pause_ms;
    unsigned long passes;
} slice;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *toucher(void *arg)
{
    slice *s = arg;
    double end = now_s() + s->seconds;

    for (;;) {
        for (size_t off = 0; off < s->len; off += PAGE)
            s->base[off]++;
        s->passes++;
        if (s->seconds && now_s() >= end)
            break;
        if (s->pause_ms) {
            struct timespec ts = {.tv_sec = s->pause_ms / 1000,
                                  .tv_nsec = (long)(s->pause_ms % 1000) * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The buffer's guest-physical ranges, sorted and coalesced, on stdout; pages not present are
 * left out. */
static void print_gpa(const char *p, size_t len)
{
    int fd = open("/proc/self/pagemap", O_RDONLY);
    size_t n = 0, ranges = 0, on_line = 0;
    uint64_t *pa = calloc(len / PAGE + 1, sizeof(*pa));

    if (fd < 0 || !pa) {
        printf("memtouch: pid %d gpa unknown: %s\n", (int)getpid(), strerror(errno));
        if (fd >= 0)
            close(fd);
        free(pa);
        return;
    }
    for (size_t off = 0; off < len; off += PAGE) {
        uint64_t e = 0;
        uintptr_t va = (uintptr_t)p + off;
        if (pread(fd, &e, sizeof(e), (off_t)(va / PAGE * sizeof(e))) == (ssize_t)sizeof(e) &&
            (e >> 63) && (e & ((1ULL << 55) - 1))) /* present: bits 0-54 are the frame */
            pa[n++] = (e & ((1ULL << 55) - 1)) * PAGE;
    }
    close(fd);
    qsort(pa, n, sizeof(*pa), cmp_u64);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && pa[j] == pa[j - 1] + PAGE)
            j++;
        if (on_line == 0)
            printf("memtouch: pid %d gpa", (int)getpid());
        printf(" %#llx+%#llx", (unsigned long long)pa[i], (unsigned long long)((j - i) * PAGE));
        ranges++;
        if (++on_line == 8) {
            printf("\n");
            on_line = 0;
        }
        i = j;
    }
    if (on_line)
        printf("\n");
    printf("memtouch: pid %d gpa done %zu ranges %zu pages\n", (int)getpid(), ranges, n);
    free(pa);
}

int main(int argc, char **argv)
{
    unsigned node = 0, threads = 1, seconds = 0, gpa = 0, hold = 0, pause_ms = 0;
    const char *ready = NULL, *wait = NULL;
    unsigned long mib = 32, mask[2] = {0};
    pthread_t tid[64];
    slice sl[64];
    size_t len, per;
    char *p;

    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long v = strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--ready") == 0)
            ready = argv[i + 1];
        else if (strcmp(argv[i], "--wait") == 0)
            wait = argv[i + 1];
        else if (strcmp(argv[i], "--hold") == 0)
            hold = v != 0;
        else if (strcmp(argv[i], "--node") == 0)
            node = (unsigned)v;
        else if (strcmp(argv[i], "--mib") == 0)
            mib = v;
        else if (strcmp(argv[i], "--threads") == 0)
            threads = (unsigned)v;
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = (unsigned)v;
        else if (strcmp(argv[i], "--gpa") == 0)
            gpa = v != 0;
        else if (strcmp(argv[i], "--pause") == 0)
            pause_ms = v > 10000 ? 10000 : (unsigned)v;
        else {
            fprintf(stderr, "memtouch: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (node >= 128 || threads == 0 || threads > 64 || mib == 0) {
        fprintf(stderr, "memtouch: invalid arguments\n");
        return 2;
    }
    if (wait)
        while (access(wait, F_OK) != 0)
            usleep(100000);
    len = mib << 20;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "memtouch: mmap %lu MiB: %s\n", mib, strerror(errno));
        return 1;
    }
    mask[node / 64] = 1UL << (node % 64);
    if (syscall(SYS_mbind, p, len, MPOL_BIND, mask, 128UL, MPOL_MF_STRICT | MPOL_MF_MOVE) < 0)
        fprintf(stderr, "memtouch: mbind to node %u: %s (touching anyway)\n", node,
                strerror(errno));
    memset(p, 1, len);
    printf("memtouch: pid %d: %lu MiB at %p bound to node %u, %u threads\n", (int)getpid(), mib,
           (void *)p, node, threads);
    if (gpa)
        print_gpa(p, len);
    fflush(stdout);
    if (ready)
        close(open(ready, O_WRONLY | O_CREAT, 0644));
    while (hold)
        pause();
    per = (len / threads) & ~(PAGE - 1);
    for (unsigned t = 0; t < threads; t++) {
        sl[t] = (slice){.base = p + t * per,
                        .len = t + 1 == threads ? len - t * per : per,
                        .seconds = seconds,
                        .pause_ms = pause_ms};
        if (pthread_create(&tid[t], NULL, toucher, &sl[t]) != 0) {
            fprintf(stderr, "memtouch: cannot start thread %u\n", t);
            return 1;
        }
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    return 0;
}
