/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/topology.c: every hwloc XML of tests/data/topologies/ (copies
 * of ../shared/topologies, real and synthetic machines), synthetic strings,
 * the live host, free memory from a sysfs fixture tree, and bad inputs.
 *
 * The expected values were taken with hwloc's own tools, not with this code:
 *   lstopo-no-graphics -i F --only numanode          (nodes and os_index)
 *   hwloc-calc -i F --pi node:N --number-of pu       (CPUs of a node)
 *   hwloc-calc -i F --pi node:N --number-of core     (cores)
 *   hwloc-calc -i F --number-of pu core:C            (SMT width)
 *   hwloc-calc -i F --pi node:N --number-of l3cache  (LLCs)
 *   grep local_memory F, grep distances2 F           (memory, distances)
 * and imb_numa_nr follows rule 1 (../shared/RULES.md):
 *   one LLC: max(1, cpus / 8); several LLCs: the LLC count; memory-only: 0.
 *
 * Run from the repository root (make check does); VN_TOPOLOGIES_REPO
 * overrides the directory of XML files.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "topology.h"
#include "topology_print.h"
#include "util.h"

#define SYSFS_FIXTURE    "tests/data/sysfs"
#define MAX_EXPECT_NODES 8

typedef struct node_expect {
    unsigned os;    /* os_index */
    unsigned cpus;  /* allowed CPUs whose home is this node */
    unsigned cores; /* cores with an allowed CPU in the node */
    unsigned smt;   /* PUs per core at most */
    unsigned llc;   /* nr_llc */
    unsigned imb;   /* imb_numa_nr */
    bool cpuless;
} node_expect;

typedef struct xml_case {
    const char *file;
    unsigned nr_nodes;
    unsigned nr_cpus; /* all allowed CPUs */
    node_expect n[MAX_EXPECT_NODES];
    uint64_t mem_total0;           /* bytes of node index 0 (lowest os_index) */
    unsigned dist_a, dist_b, dist; /* distance between os_index dist_a and dist_b */
    bool distances_known;
    const char *cpus0; /* cpu list of node index 0 */
} xml_case;

/* NODE(os_index, CPUs, cores, smt, nr_llc, imb_numa_nr); MEMONLY(os_index): no CPU */
#define NODE(os_, cpus_, cores_, smt_, llc_, imb_)                                                 \
    {                                                                                              \
        .os = os_, .cpus = cpus_, .cores = cores_, .smt = smt_, .llc = llc_, .imb = imb_           \
    }
#define MEMONLY(os_)                                                                               \
    {                                                                                              \
        .os = os_, .cpuless = true                                                                 \
    }

/* clang-format off */
static const xml_case xml_cases[] = {
    {
        /* real 8-node Opteron: no L3; the NUMANode matrix is flat 10/20 (the four
         * distance levels 10/20/40/80 are on a Package matrix, not used) */
        .file = "16amd64-4distances.xml", .nr_nodes = 8, .nr_cpus = 16,
        .n = {
            NODE(0, 2, 2, 1, 1, 1), /* 2 CPUs, no L3 = 1 LLC: max(1, 2/8) = 1 */
            NODE(1, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(2, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(3, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(4, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(5, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(6, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(7, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
        },
        .mem_total0 = 8587984896ULL, .dist_a = 0, .dist_b = 7, .dist = 20,
        .distances_known = true, .cpus0 = "2-3",
    },
    {
        /* cgroup allows nodes 1-5 (allowed_nodeset 0x3e) and CPUs 0-3,5-6,12-15
         * (0xf06f). Nodes 4 and 5 are allowed but none of their CPUs is: memory-only.
         * CPUs 0-1 and 12-15 are allowed but their nodes (0, 6, 7) are not: they
         * count in topology.cpus, in no node. hwloc-calc --number-of node all says 3
         * only because "all" is the allowed cpuset, which nodes 4 and 5 do not touch. */
        .file = "16amd64-8n2c-cpusets.xml", .nr_nodes = 5, .nr_cpus = 10,
        .n = {
            NODE(1, 2, 2, 1, 1, 1), /* 2 CPUs, no L3: max(1, 2/8) = 1 */
            NODE(2, 1, 1, 1, 1, 1), /* 1 CPU, no L3: max(1, 1/8) = 1 */
            NODE(3, 1, 1, 1, 1, 1), /* 1 CPU, no L3: max(1, 1/8) = 1 */
            MEMONLY(4), /* memory-only: 0 */
            MEMONLY(5), /* memory-only: 0 */
        },
        .mem_total0 = 8589934592ULL, .dist_a = 1, .dist_b = 5, .dist = 20,
        .distances_known = true, .cpus0 = "2-3",
    },
    {
        .file = "32em64t-2n8c2t-pci-normalio.xml", .nr_nodes = 2, .nr_cpus = 32,
        .n = {
            NODE(0, 16, 8, 2, 1, 2), /* 16 CPUs, 1 L3: max(1, 16/8) = 2 */
            NODE(1, 16, 8, 2, 1, 2), /* 16 CPUs, 1 L3: max(1, 16/8) = 2 */
        },
        .mem_total0 = 34330173440ULL, .dist_a = 0, .dist_b = 1, .dist = 20,
        .distances_known = true, .cpus0 = "0-7,16-23",
    },
    {
        /* KNL SNC-4 hybrid: DDR nodes 0-3 hold the CPUs, MCDRAM nodes 4-7 share their
         * sibling's cpuset in hwloc (hwloc-calc --pi node:4 --number-of pu says 16)
         * but own no CPU in Linux: memory-only. The "L3" above each pair is a
         * MemorySideCache (MCDRAM cache), not a CPU cache: with or without it one
         * LLC per node. No distance matrix in the file. */
        .file = "64intel64-fakeKNL-SNC4-hybrid.xml", .nr_nodes = 8, .nr_cpus = 64,
        .n = {
            NODE(0, 16, 4, 4, 1, 2), /* 16 CPUs, 1 LLC: max(1, 16/8) = 2 */
            NODE(1, 16, 4, 4, 1, 2), /* 16 CPUs, 1 LLC: max(1, 16/8) = 2 */
            NODE(2, 16, 4, 4, 1, 2), /* 16 CPUs, 1 LLC: max(1, 16/8) = 2 */
            NODE(3, 16, 4, 4, 1, 2), /* 16 CPUs, 1 LLC: max(1, 16/8) = 2 */
            MEMONLY(4), /* MCDRAM: 0 */
            MEMONLY(5), /* MCDRAM: 0 */
            MEMONLY(6), /* MCDRAM: 0 */
            MEMONLY(7), /* MCDRAM: 0 */
        },
        .mem_total0 = 1073741824ULL, .dist_a = 0, .dist_b = 4, .dist = TOPO_DISTANCE_REMOTE_DEFAULT,
        .distances_known = false, .cpus0 = "0-3,16-19,32-35,48-51",
    },
    {
        .file = "96em64t-4n4d3ca2co-pci.xml", .nr_nodes = 4, .nr_cpus = 96,
        .n = {
            NODE(0, 24, 24, 1, 4, 4), /* 24 CPUs, 4 L3: the LLC count = 4 */
            NODE(1, 24, 24, 1, 4, 4), /* 24 CPUs, 4 L3: the LLC count = 4 */
            NODE(2, 24, 24, 1, 4, 4), /* 24 CPUs, 4 L3: the LLC count = 4 */
            NODE(3, 24, 24, 1, 4, 4), /* 24 CPUs, 4 L3: the LLC count = 4 */
        },
        .mem_total0 = 51269931008ULL, .dist_a = 0, .dist_b = 3, .dist = 26,
        .distances_known = true, .cpus0 = "0-23",
    },
    {
        /* the file has 2 NUMA nodes only (no GPU memory node); one L3 per core */
        .file = "power8gpudistances.xml", .nr_nodes = 2, .nr_cpus = 16,
        .n = {
            NODE(0, 8, 4, 2, 4, 4), /* 8 CPUs, 4 L3: the LLC count = 4 */
            NODE(1, 8, 4, 2, 4, 4), /* 8 CPUs, 4 L3: the LLC count = 4 */
        },
        .mem_total0 = 68556816384ULL, .dist_a = 0, .dist_b = 1, .dist = 40,
        .distances_known = true, .cpus0 = "0-1,8-9,16-17,24-25",
    },
    {
        .file = "synthetic-spr-2s-snc2.xml", .nr_nodes = 4, .nr_cpus = 224,
        .n = {
            NODE(0, 56, 28, 2, 1, 7), /* 56 CPUs, 1 L3: max(1, 56/8) = 7 */
            NODE(1, 56, 28, 2, 1, 7), /* 56 CPUs, 1 L3: max(1, 56/8) = 7 */
            NODE(2, 56, 28, 2, 1, 7), /* 56 CPUs, 1 L3: max(1, 56/8) = 7 */
            NODE(3, 56, 28, 2, 1, 7), /* 56 CPUs, 1 L3: max(1, 56/8) = 7 */
        },
        .mem_total0 = 1073741824ULL, .dist_a = 0, .dist_b = 3, .dist = TOPO_DISTANCE_REMOTE_DEFAULT,
        .distances_known = false, .cpus0 = "0-55",
    },
    {
        .file = "synthetic-zen3-2s-nps1.xml", .nr_nodes = 2, .nr_cpus = 256,
        .n = {
            NODE(0, 128, 64, 2, 8, 8), /* 128 CPUs, 8 L3: the LLC count = 8 */
            NODE(1, 128, 64, 2, 8, 8), /* 128 CPUs, 8 L3: the LLC count = 8 */
        },
        .mem_total0 = 1073741824ULL, .dist_a = 0, .dist_b = 1, .dist = TOPO_DISTANCE_REMOTE_DEFAULT,
        .distances_known = false, .cpus0 = "0-127",
    },
    {
        .file = "synthetic-zen4-2s-nps4.xml", .nr_nodes = 8, .nr_cpus = 384,
        .n = {
            NODE(0, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(1, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(2, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(3, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(4, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(5, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(6, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
            NODE(7, 48, 24, 2, 3, 3), /* 48 CPUs, 3 L3: the LLC count = 3 */
        },
        .mem_total0 = 1073741824ULL, .dist_a = 3, .dist_b = 4, .dist = TOPO_DISTANCE_REMOTE_DEFAULT,
        .distances_known = false, .cpus0 = "0-47",
    },
    {
        /* one node: its only distance is the local one, so it is known */
        .file = "this-machine-1node.xml", .nr_nodes = 1, .nr_cpus = 2,
        .n = {
            NODE(0, 2, 2, 1, 1, 1), /* 2 CPUs, 1 L3: max(1, 2/8) = 1 */
        },
        .mem_total0 = 6939684864ULL, .dist_a = 0, .dist_b = 0, .dist = TOPO_DISTANCE_LOCAL,
        .distances_known = true, .cpus0 = "0-1",
    },
};

typedef struct synth_case {
    const char *desc;
    unsigned nr_nodes;
    unsigned cpus, cores, smt, llc, imb; /* of every node */
    const char *llc0;                    /* first LLC of node 0 */
} synth_case;

static const synth_case synth_cases[] = {
    /* desc, nodes, then of each node: CPUs, cores, smt, nr_llc, imb_numa_nr, first LLC */
    {"pack:2 numa:4 l3:3 core:8 pu:2", 8, 48, 24, 2, 3,
     3 /* 48 CPUs, 3 L3: the LLC count = 3 */, "0-15"},
    {"numa:2 core:4 pu:1", 2, 4, 4, 1, 1,
     1 /* 4 CPUs, no L3 = 1 LLC: max(1, 4/8) = 1 */, "0-3"},
    {"pack:1 numa:1 l3:2 core:2 pu:2", 1, 8, 4, 2, 2,
     2 /* 8 CPUs, 2 L3: the LLC count = 2 */, "0-3"},
};
/* clang-format on */

static const char *topodir(void)
{
    const char *d = getenv("VN_TOPOLOGIES_REPO");
    return d && *d ? d : "tests/data/topologies";
}

static bool cpus_are(const vn_cpuset *s, const char *want)
{
    char buf[4096];

    return cpuset_format(s, buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0;
}

/* Invariants every loaded topology keeps, whatever the source. */
static void check_invariants(const topology *t, const char *name)
{
    vn_cpuset seen, llcs;
    bool disjoint = true, llc_ok = true, sorted = true, diag = true, symmetric = true;
    unsigned sum = 0;

    cpuset_zero(&seen);
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        const topo_node *n = &t->nodes[i];

        if (cpuset_intersects(&seen, &n->cpus))
            disjoint = false;
        cpuset_or(&seen, &seen, &n->cpus);
        sum += n->nr_cpus;
        if (i > 0 && t->nodes[i - 1].os_index >= n->os_index)
            sorted = false;
        cpuset_zero(&llcs);
        for (unsigned l = 0; l < n->nr_llc; l++) {
            if (cpuset_intersects(&llcs, &n->llc[l]) || cpuset_empty(&n->llc[l]))
                llc_ok = false;
            cpuset_or(&llcs, &llcs, &n->llc[l]);
        }
        if (!cpuset_equal(&llcs, &n->cpus) || n->nr_cpus != cpuset_weight(&n->cpus) ||
            n->cpuless != (n->nr_cpus == 0))
            llc_ok = false;
        if (topo_distance(t, i, i) != TOPO_DISTANCE_LOCAL)
            diag = false;
        for (unsigned j = 0; j < t->nr_nodes; j++)
            if (topo_distance(t, i, j) != topo_distance(t, j, i))
                symmetric = false;
    }
    CHECK(disjoint && cpuset_subset(&seen, &t->cpus) && sum <= t->nr_cpus &&
              t->nr_cpus == cpuset_weight(&t->cpus),
          "%s: node CPU sets are disjoint and within the allowed CPUs", name);
    CHECK(llc_ok, "%s: LLC groups partition each node's CPUs, cpuless iff no CPU", name);
    CHECK(sorted, "%s: nodes sorted by os_index", name);
    CHECK(diag && symmetric, "%s: distance matrix has %d on the diagonal and is symmetric", name,
          TOPO_DISTANCE_LOCAL);
}

static void test_xml_case(const xml_case *c)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_free_ char *path = NULL;
    char err[512] = "";
    int r, a, b;

    if (asprintf(&path, "%s/%s", topodir(), c->file) < 0) {
        path = NULL;
        CHECK(0, "%s: out of memory", c->file);
        return;
    }
    r = topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err));
    if (!CHECK(r == 0, "%s: loads (%s)", c->file, r < 0 ? err : "ok"))
        return;
    CHECK(strcmp(t->source, path) == 0, "%s: source is the path", c->file);
    CHECK(t->nr_nodes == c->nr_nodes, "%s: %u nodes (got %u)", c->file, c->nr_nodes, t->nr_nodes);
    CHECK(t->nr_cpus == c->nr_cpus, "%s: %u allowed CPUs (got %u)", c->file, c->nr_cpus,
          t->nr_cpus);
    if (t->nr_nodes != c->nr_nodes)
        return;

    for (unsigned i = 0; i < c->nr_nodes; i++) {
        const node_expect *e = &c->n[i];
        const topo_node *n = &t->nodes[i];

        CHECK(n->os_index == e->os, "%s: node index %u is os_index %u (got %u)", c->file, i, e->os,
              n->os_index);
        CHECK(n->nr_cpus == e->cpus && n->nr_cores == e->cores && n->smt == e->smt,
              "%s: node %u has %u CPUs, %u cores, smt %u (got %u, %u, %u)", c->file, e->os, e->cpus,
              e->cores, e->smt, n->nr_cpus, n->nr_cores, n->smt);
        CHECK(n->cpuless == e->cpuless, "%s: node %u cpuless=%d", c->file, e->os, e->cpuless);
        CHECK(n->nr_llc == e->llc, "%s: node %u has %u LLCs (got %u)", c->file, e->os, e->llc,
              n->nr_llc);
        CHECK(n->imb_numa_nr == e->imb, "%s: node %u imb_numa_nr %u (got %u)", c->file, e->os,
              e->imb, n->imb_numa_nr);
        CHECK(!n->mem_free_known && n->mem_free == n->mem_total,
              "%s: node %u free memory unknown for an XML source", c->file, e->os);
    }
    CHECK(t->nodes[0].mem_total == c->mem_total0,
          "%s: node %u has %" PRIu64 " bytes (got %" PRIu64 ")", c->file, c->n[0].os, c->mem_total0,
          t->nodes[0].mem_total);
    CHECK(cpus_are(&t->nodes[0].cpus, c->cpus0), "%s: node %u CPUs are %s", c->file, c->n[0].os,
          c->cpus0);
    a = topo_node_index(t, c->dist_a);
    b = topo_node_index(t, c->dist_b);
    CHECK(a >= 0 && b >= 0 && topo_distance(t, (unsigned)a, (unsigned)b) == c->dist,
          "%s: distance(%u, %u) = %u (got %u)", c->file, c->dist_a, c->dist_b, c->dist,
          a >= 0 && b >= 0 ? topo_distance(t, (unsigned)a, (unsigned)b) : 0);
    CHECK(t->distances_known == c->distances_known, "%s: distances_known=%d", c->file,
          c->distances_known);
    check_invariants(t, c->file);
}

/* Every XML file in the directory has a case above, so a new file cannot go untested. */
static void test_every_file_has_a_case(void)
{
    DIR *d = opendir(topodir());
    struct dirent *de;
    unsigned files = 0, missing = 0;

    if (!CHECK(d != NULL, "topology directory %s can be opened (%s)", topodir(),
               d ? "ok" : strerror(errno)))
        return;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        bool found = false;

        if (len < 4 || strcmp(de->d_name + len - 4, ".xml") != 0)
            continue;
        files++;
        for (size_t i = 0; i < VN_ARRAY_SIZE(xml_cases); i++)
            if (strcmp(xml_cases[i].file, de->d_name) == 0)
                found = true;
        if (!found) {
            missing++;
            printf("# %s has no case in test-topology.c\n", de->d_name);
        }
    }
    (void)closedir(d);
    CHECK(files == VN_ARRAY_SIZE(xml_cases) && missing == 0,
          "every XML file in %s has a case (%u files, %zu cases, %u missing)", topodir(), files,
          VN_ARRAY_SIZE(xml_cases), missing);
}

static void test_cpusets_allowed_only(void)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_free_ char *path = NULL;
    char err[512] = "";

    if (asprintf(&path, "%s/16amd64-8n2c-cpusets.xml", topodir()) < 0) {
        path = NULL;
        CHECK(0, "cpusets: out of memory");
        return;
    }
    if (!CHECK(topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err)) == 0,
               "cpusets: loads (%s)", err))
        return;
    /* allowed_cpuset 0x0000f06f of 0x0000ffff; allowed_nodeset 0x3e of 0xff */
    CHECK(cpus_are(&t->cpus, "0-3,5-6,12-15"), "cpusets: exactly the 10 allowed CPUs");
    CHECK(topo_node_index(t, 0) < 0 && topo_node_index(t, 6) < 0 && topo_node_index(t, 7) < 0,
          "cpusets: disallowed nodes 0, 6, 7 are absent");
    CHECK(t->nr_nodes == 5 && cpus_are(&t->nodes[1].cpus, "5") && cpus_are(&t->nodes[2].cpus, "6"),
          "cpusets: node 2 has only CPU 5 and node 3 only CPU 6 (4 and 7 are disallowed)");
    CHECK(t->nr_nodes == 5 && t->nodes[3].cpuless && t->nodes[4].cpuless &&
              cpuset_empty(&t->nodes[3].cpus),
          "cpusets: nodes 4 and 5 (CPUs 8-11 disallowed) are memory-only");
}

static void test_partial_distances(void)
{
    _cleanup_topo_ topology *t = topo_new();
    char err[512] = "";

    /* "numa:3 core:1 pu:1" with a latency matrix over nodes 0 and 2 only */
    if (!CHECK(topo_load(TOPO_SOURCE_XML, "tests/data/topology-partial-distances.xml", NULL, t, err,
                         sizeof(err)) == 0,
               "partial distances: loads (%s)", err))
        return;
    CHECK(t->nr_nodes == 3 && topo_distance(t, 0, 2) == 30 && topo_distance(t, 2, 0) == 30,
          "partial distances: distance(0, 2) = 30 from the file");
    CHECK(t->nr_nodes == 3 && topo_distance(t, 0, 1) == TOPO_DISTANCE_REMOTE_DEFAULT &&
              topo_distance(t, 1, 2) == TOPO_DISTANCE_REMOTE_DEFAULT &&
              topo_distance(t, 1, 1) == TOPO_DISTANCE_LOCAL,
          "partial distances: node 1 gets the defaults");
    CHECK(!t->distances_known, "partial distances: distances_known is false");
}

static void test_synthetic(const synth_case *c)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_free_ char *source = NULL;
    char err[512] = "";
    bool all = true;

    if (!CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, c->desc, NULL, t, err, sizeof(err)) == 0,
               "synthetic \"%s\": loads (%s)", c->desc, err))
        return;
    if (asprintf(&source, "synthetic:%s", c->desc) < 0)
        source = NULL;
    CHECK(source && strcmp(t->source, source) == 0, "synthetic \"%s\": source is \"%s\"", c->desc,
          t->source);
    CHECK(t->nr_nodes == c->nr_nodes, "synthetic \"%s\": %u nodes (got %u)", c->desc, c->nr_nodes,
          t->nr_nodes);
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        const topo_node *n = &t->nodes[i];

        if (n->os_index != i || n->nr_cpus != c->cpus || n->nr_cores != c->cores ||
            n->smt != c->smt || n->nr_llc != c->llc || n->imb_numa_nr != c->imb || n->cpuless)
            all = false;
    }
    CHECK(all,
          "synthetic \"%s\": every node has %u CPUs, %u cores, smt %u, %u LLCs, imb_numa_nr %u",
          c->desc, c->cpus, c->cores, c->smt, c->llc, c->imb);
    CHECK(t->nr_nodes > 0 && cpus_are(&t->nodes[0].llc[0], c->llc0),
          "synthetic \"%s\": first LLC of node 0 is %s", c->desc, c->llc0);
    CHECK(!t->distances_known || t->nr_nodes == 1, "synthetic \"%s\": no distance matrix", c->desc);
    check_invariants(t, c->desc);
}

static void test_live(void)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_topo_ topology *fx = topo_new();
    char err[512] = "";
    cpu_set_t aff;
    vn_cpuset affset;
    int i0;

    if (!CHECK(topo_load(TOPO_SOURCE_LIVE, NULL, "/", t, err, sizeof(err)) == 0, "live: loads (%s)",
               err))
        return;
    CHECK(strcmp(t->source, "live") == 0, "live: source is \"live\"");
    /* hwloc's I/O plugins (PCI, OpenCL, GL) are not loaded: hwloc's own blacklist names them
     * (an operator's value would stand) */
    const char *bl = getenv("HWLOC_PLUGINS_BLACKLIST");
    CHECK(bl && strstr(bl, "hwloc_pci") && strstr(bl, "hwloc_opencl") && strstr(bl, "hwloc_gl"),
          "live: hwloc's I/O plugins are not loaded (HWLOC_PLUGINS_BLACKLIST=%s)", bl ? bl : "");
    i0 = topo_node_index(t, 0);
    CHECK(i0 >= 0 && !cpuset_empty(&t->nodes[i0].cpus) && t->nodes[i0].imb_numa_nr >= 1,
          "live: node 0 exists and has CPUs");

    cpuset_zero(&affset);
    if (sched_getaffinity(0, sizeof(aff), &aff) == 0) {
        for (unsigned c = 0; c < VN_MAX_CPUS && c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &aff))
                cpuset_set(&affset, c);
        CHECK(cpuset_subset(&affset, &t->cpus) && t->nr_cpus >= (unsigned)CPU_COUNT(&aff),
              "live: the %d CPUs of sched_getaffinity are all in the topology (%u)",
              CPU_COUNT(&aff), t->nr_cpus);
    } else {
        CHECK(0, "live: sched_getaffinity: %s", strerror(errno));
    }
    if (i0 >= 0 && access("/sys/devices/system/node/node0/meminfo", R_OK) == 0)
        CHECK(t->nodes[i0].mem_free_known && t->nodes[i0].mem_free > 0 &&
                  t->nodes[i0].mem_free <= t->nodes[i0].mem_total,
              "live: node 0 free memory read from /sys (%" PRIu64 " of %" PRIu64 " bytes)",
              t->nodes[i0].mem_free, t->nodes[i0].mem_total);
    check_invariants(t, "live");

    /* the sysfs root reaches the free-memory reader */
    if (CHECK(topo_load(TOPO_SOURCE_LIVE, NULL, SYSFS_FIXTURE, fx, err, sizeof(err)) == 0,
              "live with a sysfs fixture root: loads (%s)", err)) {
        i0 = topo_node_index(fx, 0);
        CHECK(i0 >= 0 && fx->nodes[i0].mem_free_known &&
                  fx->nodes[i0].mem_free == 1048576ULL * 1024,
              "live with a sysfs fixture root: node 0 MemFree is the fixture's 1048576 kB");
    }
}

static void test_refresh_free(void)
{
    _cleanup_topo_ topology *t = topo_new();
    char err[512] = "";
    int r;

    /* nodes 0-3; the fixture has node0, node1, a node2 without MemFree, no node3 */
    if (!CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "numa:4 core:1 pu:1", NULL, t, err, sizeof(err)) ==
                   0,
               "refresh: synthetic 4-node topology loads (%s)", err))
        return;
    if (!CHECK(t->nr_nodes == 4, "refresh: 4 nodes"))
        return;
    t->nodes[2].mem_free = 12345;
    t->nodes[3].mem_free = 67890;

    r = topo_refresh_free(t, SYSFS_FIXTURE);
    CHECK(r < 0, "refresh: reports the unreadable nodes (%d)", r);
    CHECK(t->nodes[0].mem_free_known && t->nodes[0].mem_free == 1048576ULL * 1024,
          "refresh: node 0 MemFree 1048576 kB");
    CHECK(t->nodes[1].mem_free_known && t->nodes[1].mem_free == 3145728ULL * 1024,
          "refresh: node 1 MemFree 3145728 kB");
    CHECK(!t->nodes[2].mem_free_known && t->nodes[2].mem_free == 12345,
          "refresh: node 2 (meminfo without MemFree) keeps its previous value");
    CHECK(!t->nodes[3].mem_free_known && t->nodes[3].mem_free == 67890,
          "refresh: node 3 (no meminfo file) keeps its previous value");

    t->nodes[0].mem_free = 0;
    (void)topo_refresh_free(t, SYSFS_FIXTURE "/");
    CHECK(t->nodes[0].mem_free == 1048576ULL * 1024, "refresh: a root with a trailing / works");

    t->nr_nodes = 2; /* only the readable nodes */
    CHECK(topo_refresh_free(t, SYSFS_FIXTURE) == 0, "refresh: 0 when every node is read");
    CHECK(topo_refresh_free(t, "tests/data/does-not-exist") == -ENOENT &&
              t->nodes[1].mem_free == 3145728ULL * 1024,
          "refresh: a missing root gives -ENOENT and changes nothing");
}

typedef struct bad_case {
    topo_source_kind kind;
    const char *arg;
    int want; /* expected return, 0: any -errno */
    const char *in_err;
} bad_case;

static const bad_case bad_cases[] = {
    {TOPO_SOURCE_XML, "tests/data/bad/does-not-exist.xml", -ENOENT, "does-not-exist.xml"},
    {TOPO_SOURCE_XML, "tests/data/bad/topology-malformed.xml", 0, "topology-malformed.xml"},
    {TOPO_SOURCE_XML, "tests/data/bad/topology-empty.xml", 0, "topology-empty.xml"},
    {TOPO_SOURCE_XML, "tests/data/bad", 0, "tests/data/bad"},
    {TOPO_SOURCE_SYNTHETIC, "pack:2 bogus:3", 0, "pack:2 bogus:3"},
    {TOPO_SOURCE_SYNTHETIC, "numa:2", 0, "numa:2"},
    /* limits of topology.h */
    /* > VN_MAX_NODES, the kernel's 1024 */
    {TOPO_SOURCE_SYNTHETIC, "pack:2 numa:513 core:1 pu:1", -E2BIG, "more than 1024 NUMA nodes"},
    {TOPO_SOURCE_SYNTHETIC, "pack:2 core:513 [numa] pu:1", -E2BIG, "more than 1024 NUMA nodes"},
    {TOPO_SOURCE_SYNTHETIC, "pack:8 numa:8 core:65 pu:2", -E2BIG, "at 'pu:2'"}, /* PU 8192 */
    /* hostile descriptions, refused before hwloc builds them (it took minutes and GBs) */
    {TOPO_SOURCE_SYNTHETIC, "numa:2 pu:100000", -E2BIG, "'pu:100000': more than 1024 children"},
    {TOPO_SOURCE_SYNTHETIC, "pack:64 numa:16 core:64 pu:2", -E2BIG, "more than 8192 objects"},
    {TOPO_SOURCE_SYNTHETIC, "numa:1 pu:99999999999999999999999", -E2BIG, "1024 children"},
    {TOPO_SOURCE_SYNTHETIC,
     "numa:1 a:1 b:1 c:1 d:1 e:1 f:1 g:1 h:1 i:1 j:1 k:1 l:1 m:1 n:1 o:1 p:1", -E2BIG,
     "more than 16 levels"},
    {TOPO_SOURCE_SYNTHETIC, "numa:1 l3:33 core:1 pu:1", -E2BIG, "l3:33"}, /* > 32 LLCs */
};

static void test_bad(const bad_case *c)
{
    _cleanup_topo_ topology *t = topo_new();
    char err[512] = "";
    int r;

    t->nr_nodes = 42; /* must stay: *ret is written only on success */
    r = topo_load(c->kind, c->arg, NULL, t, err, sizeof(err));
    CHECK(c->want ? r == c->want : r < 0, "bad \"%s\": fails with %s (got %d)", c->arg,
          c->want == -ENOENT  ? "-ENOENT"
          : c->want == -E2BIG ? "-E2BIG"
                              : "-errno",
          r);
    CHECK(strstr(err, c->in_err) && strchr(err, '\n') == NULL,
          "bad \"%s\": one-line message names it: %s", c->arg, err);
    CHECK(t->nr_nodes == 42, "bad \"%s\": output untouched", c->arg);
}

/* The largest hosts vnuma handles load: 8 sockets of 8 nodes with 128 PUs each (8192 CPUs, 64
 * nodes), and memory children written hwloc's way. */
static void test_limits(void)
{
    static const struct {
        const char *s;
        unsigned cpus, nodes;
    } good[] = {
        {"pack:8 numa:8 core:64 pu:2", 8192, 64},
        {"pack:8 numa:2 core:64 pu:2", 2048, 16},
        {"pack:2 [numa] core:4 pu:2", 16, 2},
        {"pack:64 [numa(memory=1GB)] core:2 pu:1", 128, 64},
        /* past 64 nodes: an 8-socket host of 16 nodes a socket, the kernel's 1024 nodes */
        {"pack:8 numa:16 core:32 pu:2", 8192, 128},
        {"pack:32 numa:32 core:4 pu:2", 8192, 1024},
        {"pack:1024 [numa(memory=1GB)] core:1 pu:1", 1024, 1024},
    };
    _cleanup_topo_ topology *t = topo_new();
    char err[512];

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int r = topo_load(TOPO_SOURCE_SYNTHETIC, good[i].s, NULL, t, err, sizeof(err));
        CHECK(r == 0 && t->nr_cpus == good[i].cpus && t->nr_nodes == good[i].nodes &&
                  cpuset_isset(&t->cpus, good[i].cpus - 1),
              "\"%s\" loads: %u CPUs, %u nodes (%s)", good[i].s, r == 0 ? t->nr_cpus : 0,
              r == 0 ? t->nr_nodes : 0, r == 0 ? "ok" : err);
    }

    /* the last of 1024 nodes is whole: its CPUs, cores, SMT, LLC, its index and distances */
    int r =
        topo_load(TOPO_SOURCE_SYNTHETIC, "pack:32 numa:32 core:4 pu:2", NULL, t, err, sizeof(err));
    const topo_node *last = r == 0 ? &t->nodes[1023] : NULL;
    CHECK(last && last->os_index == 1023 && cpus_are(&last->cpus, "8184-8191") &&
              last->nr_cores == 4 && last->smt == 2 && last->nr_llc == 1 &&
              topo_node_index(t, 1023) == 1023 && topo_node_index(t, 511) == 511 &&
              topo_node_index(t, 1024) == -1 && topo_distance(t, 1023, 1023) == 10 &&
              topo_distance(t, 0, 1023) == TOPO_DISTANCE_REMOTE_DEFAULT &&
              t->core_of[8191] == t->core_of[8190] && t->core_of[8191] != t->core_of[8189],
          "node 1023 of 1024: CPUs 8184-8191, 4 cores of 2 threads, one LLC, index 1023 (%s)",
          r == 0 ? "ok" : err);
}

static void test_bad_args(void)
{
    _cleanup_topo_ topology *t = topo_new();
    char err[8];

    CHECK(topo_load(TOPO_SOURCE_XML, NULL, NULL, t, NULL, 0) == -EINVAL, "NULL path: -EINVAL");
    CHECK(topo_load(TOPO_SOURCE_MAX, "x", NULL, t, NULL, 0) == -EINVAL, "bad kind: -EINVAL");
    /* a short error buffer is truncated, not overrun */
    CHECK(topo_load(TOPO_SOURCE_XML, "tests/data/bad/does-not-exist.xml", NULL, t, err,
                    sizeof(err)) == -ENOENT &&
              strlen(err) == sizeof(err) - 1,
          "a short error buffer is truncated");
}

static void test_print(void)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_free_ char *text = NULL, *json = NULL, *path = NULL;
    size_t len = 0;
    char err[512] = "";
    FILE *f;

    if (asprintf(&path, "%s/64intel64-fakeKNL-SNC4-hybrid.xml", topodir()) < 0) {
        path = NULL;
        return;
    }
    if (!CHECK(topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err)) == 0,
               "print: KNL loads (%s)", err))
        return;

    f = open_memstream(&text, &len);
    if (!f)
        return;
    topo_print(t, false, f);
    (void)fclose(f);
    CHECK(text && strstr(text, "memory-only") && strstr(text, "0-3,16-19,32-35,48-51") &&
              strstr(text, "source: ") && strstr(text, "1.0 GiB"),
          "print: table shows memory-only nodes, CPU lists, GiB and the source");

    f = open_memstream(&json, &len);
    if (!f)
        return;
    topo_print(t, true, f);
    (void)fclose(f);

    json_object *root = json ? json_tokener_parse(json) : NULL, *nodes = NULL, *n4 = NULL,
                *v = NULL, *dist = NULL;
    bool ok = root && json_object_object_get_ex(root, "nodes", &nodes) &&
              json_object_array_length(nodes) == 8 &&
              json_object_object_get_ex(root, "distances", &dist) &&
              json_object_array_length(dist) == 8;
    CHECK(ok, "print: JSON parses with 8 nodes and an 8x8 distance matrix");
    if (ok) {
        n4 = json_object_array_get_idx(nodes, 4);
        CHECK(json_object_object_get_ex(n4, "cpuless", &v) && json_object_get_boolean(v) &&
                  json_object_object_get_ex(n4, "mem_free", &v) && v == NULL &&
                  json_object_object_get_ex(n4, "mem_total", &v) &&
                  json_object_get_int64(v) == 2147483648LL,
              "print: JSON node 4 is cpuless, mem_free null, mem_total 2 GiB");
        v = NULL;
        CHECK(json_object_object_get_ex(root, "distances_known", &v) && !json_object_get_boolean(v),
              "print: JSON distances_known false");
    }
    if (root)
        (void)json_object_put(root);
}

int main(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(xml_cases); i++)
        test_xml_case(&xml_cases[i]);
    test_every_file_has_a_case();
    test_cpusets_allowed_only();
    test_partial_distances();
    for (size_t i = 0; i < VN_ARRAY_SIZE(synth_cases); i++)
        test_synthetic(&synth_cases[i]);
    test_live();
    test_refresh_free();
    for (size_t i = 0; i < VN_ARRAY_SIZE(bad_cases); i++)
        test_bad(&bad_cases[i]);
    test_bad_args();
    test_limits();
    test_print();
    return tap_done();
}
