/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * decide-bench: time the decide stage on a synthetic host and a synthetic
 * snapshot. Prints one line: topology, domains, cells, vCPUs, median and
 * min/max microseconds per decide() over --runs runs, and peak RSS.
 *
 *   decide-bench --synthetic "pack:2 numa:4 l3:3 core:8 pu:2" --domains 1000 --cells 4 --runs 51
 *
 * The snapshot is seeded (--seed) so runs are repeatable: 2 vCPUs per cell, 15% of
 * vCPUs busy, each cell's memory (256 MiB) spread over one to three nodes, vCPUs
 * pinned to a random node or floating, a quarter of domains new (early migration).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "decide.h"
#include "topology.h"
#include "util.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double now_us(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void build(const topology *t, unsigned nd, unsigned nc, snapshot *s)
{
    memset(s, 0, sizeof(*s));
    s->domains = calloc(nd, sizeof(*s->domains));
    s->nr_domains = nd;
    for (unsigned i = 0; i < nd; i++) {
        snap_domain *d = &s->domains[i];
        snprintf(d->name, sizeof(d->name), "bench-%05u", i);
        d->mode = (i % 10) ? VN_MODE_AUTO : VN_MODE_ADVISE;
        d->age_passes = (i % 4) ? 50 : 0;
        d->preferred_node = (i % 4) ? (int)(rnd() % t->nr_nodes) : -1;
        d->nr_cells = nc;
        d->cells = calloc(nc, sizeof(*d->cells));
        for (unsigned k = 0; k < nc; k++) {
            snap_cell *c = &d->cells[k];
            unsigned home = (unsigned)(rnd() % t->nr_nodes), spread = 1 + (unsigned)(rnd() % 3);
            c->id = k;
            c->page_size = 4096;
            if (snap_cell_nodes(c, t->nr_nodes) < 0)
                abort();
            c->last_candidate = (int)(rnd() % t->nr_nodes);
            for (unsigned m = 0; m < spread; m++)
                c->pages[(home + m) % t->nr_nodes] += 65536 / spread;
            c->nr_vcpus = 2;
            c->vcpus = calloc(2, sizeof(*c->vcpus));
            for (unsigned v = 0; v < 2; v++) {
                snap_vcpu *vc = &c->vcpus[v];
                unsigned pin = (unsigned)(rnd() % t->nr_nodes);
                vc->id = k * 2 + v;
                vc->busy = (rnd() % 100) < 15 ? 0.8 : 0.05;
                vc->allowed = t->cpus;
                vc->pinned = (rnd() % 2) ? t->nodes[pin].cpus : t->cpus;
                vc->cpu = cpuset_first(&vc->pinned);
            }
        }
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"synthetic", required_argument, NULL, 's'}, {"domains", required_argument, NULL, 'd'},
        {"cells", required_argument, NULL, 'c'},     {"runs", required_argument, NULL, 'r'},
        {"seed", required_argument, NULL, 'S'},      {NULL, 0, NULL, 0}};
    const char *synth = "pack:2 numa:4 l3:3 core:8 pu:2";
    unsigned nd = 100, nc = 4, runs = 21;
    topology *t = topo_new();
    double *us;
    snapshot s;
    vn_config cfg;
    struct rusage ru;
    char err[256];
    int o;

    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 's':
            synth = optarg;
            break;
        case 'd':
            nd = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'c':
            nc = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'r':
            runs = (unsigned)strtoul(optarg, NULL, 10);
            break;
        case 'S':
            rng = strtoull(optarg, NULL, 10) | 1;
            break;
        default:
            return 2;
        }
    }
    if (!t || topo_load(TOPO_SOURCE_SYNTHETIC, synth, NULL, t, err, sizeof(err)) < 0) {
        fprintf(stderr, "decide-bench: %s\n", err);
        return 1;
    }
    if (nd < 1 || nc < 1 || nc > SNAP_MAX_CELLS_PER_DOMAIN || runs < 1) {
        fprintf(stderr, "decide-bench: bad sizes\n");
        return 2;
    }
    config_defaults(&cfg);
    build(t, nd, nc, &s);
    us = calloc(runs, sizeof(*us));
    for (unsigned i = 0; i < runs; i++) {
        plan p;
        double t0 = now_us();
        if (decide(t, &s, &cfg, &p) < 0)
            return 1;
        us[i] = now_us() - t0;
        plan_clear(&p);
    }
    qsort(us, runs, sizeof(*us), cmp_double);
    getrusage(RUSAGE_SELF, &ru);
    printf("nodes=%u pus=%u domains=%u cells=%u vcpus=%u runs=%u median_us=%.0f min_us=%.0f "
           "max_us=%.0f maxrss_kib=%ld\n",
           t->nr_nodes, t->nr_cpus, nd, nd * nc, nd * nc * 2, runs, us[runs / 2], us[0],
           us[runs - 1], ru.ru_maxrss);
    snapshot_clear(&s);
    free(us);
    topo_free(t);
    return 0;
}
