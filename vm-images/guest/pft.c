/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pft: page-fault throughput, in the style of Christoph Lameter's pft. THREADS
 * threads of one process each, for SECONDS seconds, mmap CHUNK MiB of
 * anonymous memory, write every page (one fault each), munmap it, again.
 * Every fault and every mmap/munmap takes the process's mmap_lock, so this is
 * what a concurrent reader of that lock (the agent's walks) slows down.
 * Prints one line: threads, faults, seconds, faults per second.
 *
 *   pft [--threads T] [--seconds S] [--chunk-mib M]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

static unsigned seconds = 5;
static size_t chunk = 4UL << 20;
static volatile int go, stop;

typedef struct worker {
    pthread_t tid;
    unsigned long faults;
} worker;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
    worker *w = arg;

    while (!go)
        ;
    while (!stop) {
        char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            break;
        for (size_t off = 0; off < chunk && !stop; off += PAGE) {
            p[off] = 1;
            w->faults++;
        }
        munmap(p, chunk);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned threads = 1;
    worker *w;
    unsigned long total = 0;
    double t0, t1;

    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long v = strtoul(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--threads") == 0)
            threads = (unsigned)v;
        else if (strcmp(argv[i], "--seconds") == 0)
            seconds = (unsigned)v;
        else if (strcmp(argv[i], "--chunk-mib") == 0)
            chunk = v << 20;
        else {
            fprintf(stderr, "pft: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (threads == 0 || threads > 256 || seconds == 0 || chunk == 0) {
        fprintf(stderr, "pft: invalid arguments\n");
        return 2;
    }
    w = calloc(threads, sizeof(*w));
    if (!w)
        return 1;
    for (unsigned t = 0; t < threads; t++)
        if (pthread_create(&w[t].tid, NULL, run, &w[t]) != 0) {
            fprintf(stderr, "pft: cannot start thread %u\n", t);
            return 1;
        }
    t0 = now_s();
    go = 1;
    while (now_s() - t0 < seconds)
        usleep(10000);
    stop = 1;
    t1 = now_s();
    for (unsigned t = 0; t < threads; t++) {
        pthread_join(w[t].tid, NULL);
        total += w[t].faults;
    }
    printf("pft: threads=%u seconds=%.2f faults=%lu faults_per_s=%.0f\n", threads, t1 - t0, total,
           (double)total / (t1 - t0));
    free(w);
    return 0;
}
