/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 1 of the pipeline: the host topology, read with hwloc from the live
 * host, an hwloc XML export or an hwloc synthetic description. The result is a
 * plain value (no hwloc types leak out) that the decide stage reads.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"
#include "nodeset.h"

/* Most LLC (L3) groups recorded per node. */
#define VN_MAX_LLC_PER_NODE 32
/* SLIT distance of a node to itself, and the remote default when the source has no matrix. */
#define TOPO_DISTANCE_LOCAL          10
#define TOPO_DISTANCE_REMOTE_DEFAULT 20
/* Huge page sizes recorded per node (x86-64 has 2 MiB and 1 GiB, arm64 up to four). */
#define TOPO_HUGE_SIZES 4

/* A node's pool of huge pages of one size (hugetlbfs backends allocate from it, not from
 * MemFree). */
typedef struct topo_huge {
    uint64_t page_size;  /* bytes; 0: unused entry */
    uint64_t free_pages; /* free_hugepages of the node */
} topo_huge;

typedef struct topo_node {
    unsigned os_index;                  /* the kernel's node number */
    vn_cpuset cpus;                     /* allowed CPUs of the node (empty: memory-only node) */
    unsigned nr_cpus;                   /* weight of cpus */
    unsigned nr_cores;                  /* cores with at least one allowed PU */
    unsigned smt;                       /* most allowed PUs on one core (1: no SMT) */
    uint64_t mem_total;                 /* bytes of memory local to the node */
    uint64_t mem_free;                  /* bytes free at load time; == mem_total when unknown */
    bool mem_free_known;                /* mem_free came from the running kernel */
    bool cpuless;                       /* no allowed CPU: never a home for vCPUs */
    unsigned nr_llc;                    /* LLC (L3) groups intersecting the node; 1 when no L3 */
    vn_cpuset llc[VN_MAX_LLC_PER_NODE]; /* allowed CPUs of each LLC group in this node */
    unsigned imb_numa_nr;               /* rule 1: allowed imbalance, see rule_imb_numa_nr() */
    topo_huge huge[TOPO_HUGE_SIZES];    /* huge page pools, live hosts only (sysfs) */
    /* Memory tiers (topology_tiers.c). The kernel's tier of the node's memory (memory_tierN
     * under /sys/devices/virtual/memory_tiering: a higher N is slower), -1 unknown; hwloc's
     * memory attributes from the node's best initiator (ACPI HMAT), 0 unknown. */
    int memory_tier;
    uint64_t latency_ns;
    uint64_t bandwidth_mib;
    int lower_tier; /* a node with CPUs: its nearest node of a lower memory tier, -1 none */
} topo_node;

typedef struct topology {
    char source[256]; /* "live", the XML path, or "synthetic:<string>" */
    /* The nodes, sorted by kernel number, and their distances: sized for the host
     * (topo_set_nodes), owned by the topology and freed by topo_release(). */
    unsigned nr_nodes;
    topo_node *nodes;
    /* distance[i * nr_nodes + j]: SLIT-style distance between node indexes i and j */
    unsigned *distance;
    bool distances_known; /* false: defaults were filled in */
    vn_cpuset cpus;       /* all allowed CPUs */
    unsigned nr_cpus;
    /* CPUs the kernel isolates from the scheduler's load balancing (isolcpus=, nohz_full
     * with domain isolation: /sys/devices/system/cpu/isolated; live hosts only). Never part
     * of a pin mask vnumad chooses: vCPUs pinned to a set of them would stack on one. */
    vn_cpuset isolated;
    /* core_of[cpu]: an index of the core the CPU belongs to (SMT siblings share it);
     * TOPO_CORE_NONE for a CPU of no known core (each counts as a core of its own). */
    uint16_t core_of[VN_MAX_CPUS];
} topology;

#define TOPO_CORE_NONE UINT16_MAX

/* Cores among cpus: SMT siblings count once (two busy vCPUs on the two threads of one core
 * share it). */
unsigned topo_count_cores(const topology *t, const vn_cpuset *cpus);

typedef enum topo_source_kind {
    TOPO_SOURCE_LIVE,
    TOPO_SOURCE_XML,
    TOPO_SOURCE_SYNTHETIC,
    TOPO_SOURCE_MAX,
} topo_source_kind;

/*
 * Load a topology. For TOPO_SOURCE_XML arg is a file path, for
 * TOPO_SOURCE_SYNTHETIC an hwloc synthetic string, for LIVE it is ignored.
 * For the live host, free memory per node is read from sysfs below sysfs_root
 * ("/" normally; tests point it at a fixture tree; NULL means "/").
 * Returns 0 and fills *ret, or -errno; on error a one-line reason naming the
 * source is written to err (may be NULL).
 */
int topo_load(topo_source_kind kind, const char *arg, const char *sysfs_root, topology *ret,
              char *err, size_t errlen);

/* A zeroed topology to load into (NULL on no memory), and its release: topo_free() frees
 * what topo_load() or topo_set_nodes() gave it, then the topology itself. NULL-safe. */
topology *topo_new(void);
void topo_free(topology *t);
static inline void topo_freep(topology **t)
{
    topo_free(*t);
}
#define _cleanup_topo_ __attribute__((cleanup(topo_freep)))

/* Frees the nodes and distances of a topology that is not itself on the heap (static, or
 * inside another struct), leaving it with no nodes. */
void topo_release(topology *t);

/* Gives t nr zeroed nodes (1 .. VN_MAX_NODES) and a distance matrix, replacing any it had
 * (hand-built topologies: tests, fixtures). 0, -EINVAL or -ENOMEM. */
int topo_set_nodes(topology *t, unsigned nr);

/* A Linux list of kernel node numbers -> set of topology node indexes (numbers the
 * topology does not know are ignored). Returns 0, -EINVAL or -ERANGE. */
int topo_nodelist_parse(const topology *t, const char *list, vn_nodeset *ret);

/* Index (0..nr_nodes-1) of the node with kernel number os_index, or -1. */
int topo_node_index(const topology *t, unsigned os_index);

/* Distance between node indexes a and b. */
static inline unsigned topo_distance(const topology *t, unsigned a, unsigned b)
{
    return t->distance[a * t->nr_nodes + b];
}

/*
 * Read MemFree of each node from <sysfs_root>/sys/devices/system/node/nodeN/meminfo
 * into t->nodes[].mem_free, and the free huge pages of each size the node has
 * (nodeN/hugepages/hugepages-<kB>kB/free_hugepages) into t->nodes[].huge[]. Returns 0
 * or -errno (nodes that cannot be read keep their previous value).
 */
int topo_refresh_free(topology *t, const char *sysfs_root);

/* Index of the pool of `page_size` bytes in pools[], or -1: memory of that page size is not
 * hugetlb-backed there (a size no pool has is the base page size, or THP: from MemFree). */
int topo_huge_slot(const topo_huge pools[TOPO_HUGE_SIZES], uint64_t page_size);
