/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host's other load per node (host/hostload.c) from two /proc/stat readings. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decide-fixture.h"
#include "hostload.h"
#include "tap.h"

/* A fixture root whose proc/stat has 4 CPUs with these busy and idle ticks. */
static int stat_file(const char *root, const unsigned busy[4], const unsigned idle[4])
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc", root);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/proc/stat", root);
    f = fopen(path, "we");
    if (!f)
        return -1;
    fprintf(f, "cpu  1 2 3 4 5 6 7 8 0 0\n");
    /* user carries the busy ticks (guest time is inside it), idle and iowait the rest */
    for (unsigned c = 0; c < 4; c++)
        fprintf(f, "cpu%u %u 0 0 %u 0 0 0 0 %u 0\n", c, busy[c], idle[c], busy[c] / 2);
    fprintf(f, "intr 1 2 3\nctxt 5\n");
    return fclose(f);
}

int main(void)
{
    topology *t = load_synth("pack:2 numa:1 core:2 pu:1"); /* node 0: CPUs 0-1, node 1: 2-3 */
    char root[] = "/tmp/vnuma-load-XXXXXX";
    host_load a, b;
    snapshot s;

    if (!CHECK(mkdtemp(root) != NULL, "fixture directory"))
        return tap_done();
    unsigned b0[4] = {100, 100, 100, 100}, i0[4] = {100, 100, 100, 100};
    /* over the window: CPU 0 busy 100%, CPU 1 idle, CPU 2 busy 90%, CPU 3 busy 40% */
    unsigned b1[4] = {200, 100, 190, 140}, i1[4] = {100, 200, 110, 160};
    CHECK(stat_file(root, b0, i0) == 0 && hostload_read(root, &a) == 0 && a.valid &&
              a.busy[2] == 100 && a.total[2] == 200,
          "proc/stat read: per-CPU busy and total ticks (guest time not counted twice)");
    CHECK(stat_file(root, b1, i1) == 0 && hostload_read(root, &b) == 0, "second reading");

    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, 0);
    snap_cell *c = add_cell(d, 1, 0, 0.95, &t->cpus, &t->nodes[0].cpus);
    c->vcpus[0].cpu = 0; /* the opted-in vCPU is what keeps CPU 0 busy */
    hostload_other_busy(t, &a, &b, &s);
    CHECK(s.other_busy[0] == 0 && s.other_busy[1] == 1,
          "node 0: its busy CPU is the opted-in vCPU (0 other); node 1: 0.9 + 0.4 busy CPUs "
          "of other work round to 1 (got %.1f, %.1f)",
          s.other_busy[0], s.other_busy[1]);
    /* CPUs no sampled vCPU may use (housekeeping) and isolated ones do not count */
    (void)cpuset_parse("0-2", &c->vcpus[0].allowed);
    c->vcpus[0].pinned = c->vcpus[0].allowed;
    (void)cpuset_parse("2", &t->isolated);
    hostload_other_busy(t, &a, &b, &s);
    CHECK(s.other_busy[1] == 0,
          "node 1: CPU 2 isolated and CPU 3 outside every vCPU's CPUs: no other load (got %.1f)",
          s.other_busy[1]);
    /* over every CPU (a domain that comes to the host): CPU 3's 0.4 counts, isolated CPU 2 not */
    double all_busy[VN_MAX_NODES] = {0};
    (void)cpuset_parse("3", &t->isolated);
    CHECK(hostload_other_busy_all(t, &a, &b, &s, all_busy) == 0 && all_busy[0] == 0 &&
              all_busy[1] == 1,
          "every CPU: node 1's busy CPU 2 counts though no vCPU may use it (CPU 3 isolated); "
          "node 0's is the opted-in vCPU (got %.1f, %.1f)",
          all_busy[0], all_busy[1]);
    snap_domain *saved = s.domains;
    unsigned nd = s.nr_domains;
    s.nr_domains = 0;
    CHECK(hostload_other_busy_all(t, &a, &b, &s, all_busy) == 0 && all_busy[0] == 1 &&
              all_busy[1] == 1,
          "no balanced domain on the host: every busy CPU is other load (got %.1f, %.1f)",
          all_busy[0], all_busy[1]);
    s.nr_domains = nd;
    s.domains = saved;
    (void)cpuset_parse("2", &t->isolated);
    host_load none = {0};
    CHECK(hostload_other_busy_all(t, &none, &b, &s, all_busy) == -ENODATA,
          "every CPU: no earlier reading, -ENODATA");
    s.other_busy[1] = 7;
    hostload_other_busy(t, &none, &b, &s);
    CHECK(s.other_busy[1] == 7, "no earlier reading: other_busy is left as it was");
    /* idle CPUs (the mover's threads): 0 + 1 + 0.1 + 0.6 over all four, 1.6 over 1 and 3 */
    vn_cpuset all, some;
    (void)cpuset_parse("0-3", &all);
    (void)cpuset_parse("1,3", &some);
    double i_all = hostload_idle_cpus(&a, &b, &all), i_some = hostload_idle_cpus(&a, &b, &some);
    CHECK(i_all > 1.69 && i_all < 1.71 && i_some > 1.59 && i_some < 1.61 &&
              hostload_idle_cpus(&none, &b, &all) == 0,
          "idle CPUs: 1.7 of four, 1.6 of CPUs 1 and 3, 0 without an earlier reading (%.2f, "
          "%.2f)",
          i_all, i_some);
    host_load back = a; /* a counter that went backwards (CPU hot-unplugged): not counted */
    back.total[1] = b.total[1] + 1;
    i_all = hostload_idle_cpus(&back, &b, &all);
    CHECK(i_all > 0.69 && i_all < 0.71, "idle CPUs: a CPU whose ticks went back is skipped (%.2f)",
          i_all);
    snapshot_clear(&s);
    topo_free(t);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    (void)!system(cmd);
    return tap_done();
}
