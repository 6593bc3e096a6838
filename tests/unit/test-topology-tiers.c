/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Memory tiers of a topology (host/topology_tiers.c): the kernel's memory_tiering read from a
 * sysfs tree, which CPU-less nodes are a lower tier (the kernel's tiers, else HMAT latency, else
 * bandwidth, else any CPU-less node), and each CPU node's nearest one; what `vnumactl topology`
 * shows of them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decide-fixture.h"
#include "decide.h"
#include "record.h"
#include "tap.h"
#include "topology.h"
#include "topology_print.h"
#include "topology_tiers.h"
#include "util.h"

#define TOPODIR "tests/data/topologies"

static topology *load_tiers_xml(const char *file)
{
    topology *t = topo_new();
    char path[512], err[512] = "";

    (void)snprintf(path, sizeof(path), "%s/%s", TOPODIR, file);
    if (!t || topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", path, err);
        exit(1);
    }
    return t;
}

/* <root>/sys/devices/virtual/memory_tiering/memory_tier<tier>/nodelist = list */
static void write_tier(const char *root, unsigned tier, const char *list)
{
    char path[512];
    FILE *f;

    (void)snprintf(path, sizeof(path), "%s/sys", root);
    (void)mkdir(path, 0755);
    (void)snprintf(path, sizeof(path), "%s/sys/devices", root);
    (void)mkdir(path, 0755);
    (void)snprintf(path, sizeof(path), "%s/sys/devices/virtual", root);
    (void)mkdir(path, 0755);
    (void)snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering", root);
    (void)mkdir(path, 0755);
    (void)snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering/memory_tier%u", root,
                   tier);
    (void)mkdir(path, 0755);
    (void)snprintf(path, sizeof(path),
                   "%s/sys/devices/virtual/memory_tiering/memory_tier%u/nodelist", root, tier);
    f = fopen(path, "w");
    if (!f)
        exit(1);
    fprintf(f, "%s\n", list);
    fclose(f);
}

static unsigned os_of(const topology *t, int idx)
{
    return idx < 0 ? 9999 : t->nodes[idx].os_index;
}

/* Nodes 1-3 have CPUs, 4 and 5 none; no HMAT attributes in the export. */
static void test_kernel_tiers(void)
{
    topology *t = load_tiers_xml("16amd64-8n2c-cpusets.xml");
    char root[] = "/tmp/vnuma-tiers-XXXXXX";
    int i1 = topo_node_index(t, 1), i4 = topo_node_index(t, 4), i5 = topo_node_index(t, 5);

    CHECK(t->nodes[i1].memory_tier == -1 && t->nodes[i1].lower_tier == i4,
          "no tiers known: any CPU-less node is a lower tier, node 1's nearest is 4 (got %u)",
          os_of(t, t->nodes[i1].lower_tier));
    if (!mkdtemp(root))
        exit(1);
    topo_read_tiers(root, t);
    CHECK(t->nodes[i1].memory_tier == -1, "an empty sysfs tree: no tier (a kernel before 6.1)");

    /* the kernel puts node 4 with the DRAM (tier 4) and node 5 below it (tier 22: kmem DAX) */
    write_tier(root, 4, "1-4");
    write_tier(root, 22, "5");
    topo_read_tiers(root, t);
    topo_link_tiers(t);
    CHECK(t->nodes[i4].memory_tier == 4 && t->nodes[i5].memory_tier == 22 &&
              t->nodes[i1].lower_tier == i5 && t->nodes[topo_node_index(t, 3)].lower_tier == i5 &&
              t->nodes[i4].lower_tier == -1,
          "kernel tiers: node 4 is DRAM's tier, 5 the lower; node 1's lower tier is 5 (got %u), a "
          "CPU-less node has none",
          os_of(t, t->nodes[i1].lower_tier));
    CHECK(!topo_is_lower_tier(t, (unsigned)i4, (unsigned)i1) &&
              topo_is_lower_tier(t, (unsigned)i5, (unsigned)i1) &&
              !topo_is_lower_tier(t, (unsigned)topo_node_index(t, 2), (unsigned)i1),
          "a CPU-less node of the same tier is not lower; a node with CPUs never is");

    /* what vnumactl topology shows */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    topo_print(t, false, f);
    fclose(f);
    CHECK(text && strstr(text, "tier  lower") && strstr(text, "   22      -"),
          "the table has the tier and lower-tier columns (%zu bytes)", len);
    free(text);
    text = NULL;
    f = open_memstream(&text, &len);
    topo_print(t, true, f);
    fclose(f);
    CHECK(text && strstr(text, "\"memory_tier\": 22") && strstr(text, "\"lower_tier\": 5"),
          "the JSON names each node's tier and lower tier");
    free(text);

    /* a hostile tree: a name that is not a tier, a list that does not parse */
    write_tier(root, 7, "garbage");
    char bogus[600];
    (void)snprintf(bogus, sizeof(bogus), "%s/sys/devices/virtual/memory_tiering/memory_tierX",
                   root);
    (void)mkdir(bogus, 0755);
    topo_read_tiers(root, t);
    CHECK(t->nodes[i5].memory_tier == 22, "a tier that does not parse is skipped, the rest stand");

    char cmd[700];
    (void)snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", root);
    topo_free(t);
}

/* Without the kernel's tiers: HMAT latency, then bandwidth, decide. */
static void test_attributes(void)
{
    topology *t = load_tiers_xml("64intel64-fakeKNL-SNC4-hybrid.xml");
    int mcdram = topo_node_index(t, 4);

    CHECK(t->nodes[0].bandwidth_mib > 0 &&
              t->nodes[mcdram].bandwidth_mib > t->nodes[0].bandwidth_mib &&
              t->nodes[0].lower_tier == -1,
          "KNL: MCDRAM has more bandwidth than DRAM: not a lower tier (node 0's lower tier %d)",
          t->nodes[0].lower_tier);
    /* a CXL-like node: same bandwidth, more latency */
    t->nodes[0].latency_ns = 90;
    t->nodes[mcdram].latency_ns = 250;
    topo_link_tiers(t);
    CHECK(topo_is_lower_tier(t, (unsigned)mcdram, 0) && t->nodes[0].lower_tier >= 0,
          "latency, where known, decides before bandwidth: a slower node is a lower tier");
    topo_free(t);
}

/* A cell placed on a node gets the node's lower tier beside its target, in the plan and the
 * decision record; a memory-only cell gets none. */
static void test_placement(void)
{
    topology *t = load_tiers_xml("16amd64-8n2c-cpusets.xml");
    int i1 = topo_node_index(t, 1), i4 = topo_node_index(t, 4);
    snapshot s;
    plan p;

    fixture_nodes = t->nr_nodes;
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, i1);
    snap_cell *c = add_cell(d, 1, 0, 0.9, &t->cpus, &t->nodes[i1].cpus);
    set_mem(c, (unsigned)i1, 256);
    snap_cell *m = add_cell(d, 0, 0, 0, &t->cpus, &t->cpus);
    set_mem(m, (unsigned)i4, 64);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0), *pm = find_cell(&p, "vm", 1);
    CHECK(pc && pc->target_node == i1 && pc->lower_tier == i4 && pm && pm->lower_tier == -1,
          "a cell on node 1: lower tier node 4 beside it (got %d); the memory-only cell none (%d)",
          pc ? pc->lower_tier : -9, pm ? pm->lower_tier : -9);

    record_ctx rc = {.name = "vm",
                     .mode = VN_MODE_AUTO,
                     .pass = 1,
                     .time = "t",
                     .action = "none",
                     .reason = "ok"};
    record_decision r;
    record_decision_make(t, &rc, &p.domains[0], NULL, &r);
    struct json_object *j = record_decision_json(t, &r);
    const char *text = j ? json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN) : "";
    CHECK(strstr(text, "\"lower_tier\":4"), "the decision record names it: %s", text);
    json_object_put(j);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

int main(void)
{
    test_kernel_tiers();
    test_attributes();
    test_placement();
    return tap_done();
}
