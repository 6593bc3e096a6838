/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memtouch: a workload for the test guest. Allocates MIB MiB bound to guest
 * node NODE (mbind(MPOL_BIND) by raw syscall: no libnuma in a static
 * initramfs) and writes one byte of every page in a loop, with THREADS
 * threads each on its own slice, for SECONDS seconds (0: forever).
 *
 *   memtouch [--node N] [--mib M] [--threads T] [--seconds S]
 */
#include <errno.h>
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
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned node = 0, threads = 1, seconds = 0;
    unsigned long mib = 32, mask[2] = {0};
    pthread_t tid[64];
    slice sl[64];
    size_t len, per;
    char *p;

    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long v = strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--node") == 0)
            node = (unsigned)v;
        else if (strcmp(argv[i], "--mib") == 0)
            mib = v;
        else if (strcmp(argv[i], "--threads") == 0)
            threads = (unsigned)v;
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = (unsigned)v;
        else {
            fprintf(stderr, "memtouch: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (node >= 128 || threads == 0 || threads > 64 || mib == 0) {
        fprintf(stderr, "memtouch: invalid arguments\n");
        return 2;
    }
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
    fflush(stdout);
    per = (len / threads) & ~(PAGE - 1);
    for (unsigned t = 0; t < threads; t++) {
        sl[t] = (slice){
            .base = p + t * per, .len = t + 1 == threads ? len - t * per : per, .seconds = seconds};
        if (pthread_create(&tid[t], NULL, toucher, &sl[t]) != 0) {
            fprintf(stderr, "memtouch: cannot start thread %u\n", t);
            return 1;
        }
    }
    for (unsigned t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    return 0;
}
