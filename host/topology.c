/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 1: read the host topology with hwloc and turn it into the plain
 * `topology` value of topology.h. This is the only file that walks an hwloc
 * topology; nothing hwloc-typed leaves it.
 *
 * Points where hwloc's view differs from what a VM balancer needs:
 *  - A CPU-less NUMA node (KNL MCDRAM, HBM, CXL, GPU memory) gets the cpuset of
 *    the CPUs near it, i.e. the same cpuset as its DRAM sibling. The kernel
 *    gives each CPU exactly one node, so each allowed PU is assigned to the
 *    most local node containing it (smallest cpuset, a normal-memory node
 *    before a special one, then the lowest os_index); a node left without PUs
 *    is memory-only.
 *  - hwloc drops disallowed PUs and nodes (cgroup cpuset) by default, but an
 *    allowed node can still have no allowed CPU (it is memory-only for us),
 *    and allowed CPUs can belong to a disallowed node (they count in
 *    topology.cpus but in no node).
 *  - An "L3Cache" of subtype MemorySideCache (KNL cache mode) sits above NUMA
 *    nodes and is a cache of memory, not of the CPUs: it is not an LLC.
 *  - hwloc_topology_set_xml()/set_synthetic() failing does not make the
 *    following hwloc_topology_load() fail: it silently discovers the live
 *    host instead. Their results are checked before loading.
 */
#include "topology.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <hwloc.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rules.h"
#include "topology_tiers.h"
#include "util.h"

/* A cpu list of the host's, as sysfs or the balancer writes it. */
#define TOPO_CPULIST_MAX VN_CPULIST_MAX

static void topo_hwloc_destroyp(hwloc_topology_t *h)
{
    if (*h)
        hwloc_topology_destroy(*h);
}

/* The name a source is reported by: "live", the path, or "synthetic:<string>". */
static void topo_source_name(topo_source_kind kind, const char *arg, char *buf, size_t len)
{
    switch (kind) {
    case TOPO_SOURCE_XML:
        (void)snprintf(buf, len, "%s", arg ? arg : "(null)");
        break;
    case TOPO_SOURCE_SYNTHETIC:
        (void)snprintf(buf, len, "synthetic:%s", arg ? arg : "(null)");
        break;
    default:
        (void)snprintf(buf, len, "live");
        break;
    }
}

/* Copy an hwloc bitmap into a vn_cpuset; -E2BIG when an index is >= VN_MAX_CPUS. */
static int topo_cpuset_from_hwloc(hwloc_const_bitmap_t b, vn_cpuset *out)
{
    vn_cpuset tmp;
    int i;

    /* weight -1: infinite set */
    if (hwloc_bitmap_weight(b) < 0 || hwloc_bitmap_last(b) >= VN_MAX_CPUS)
        return -E2BIG;
    cpuset_zero(&tmp);
    hwloc_bitmap_foreach_begin(i, b)
    {
        cpuset_set(&tmp, (unsigned)i);
    }
    hwloc_bitmap_foreach_end();
    *out = tmp;
    return 0;
}

/* True for NUMA nodes of ordinary memory (DRAM); false for MCDRAM, HBM, GPU memory... */
static bool topo_node_is_normal_memory(hwloc_obj_t node)
{
    return !node->subtype || strcmp(node->subtype, "DRAM") == 0;
}

/* The home node (index into nodes[]) of each PU, or -1: of the nodes whose CPUs hold the PU, the
 * one with the fewest CPUs (a node attached to a package beats one attached to the machine); on
 * a tie the earlier (lower os_index) node, unless only the later one is normal memory. Walks each
 * node's own CPUs once: no host size makes it quadratic. */
static int topo_pu_homes(hwloc_obj_t *nodes, unsigned n, int home[VN_MAX_CPUS])
{
    _cleanup_free_ int *weight = calloc(n, sizeof(*weight));
    _cleanup_free_ bool *normal = calloc(n, sizeof(*normal));
    int pu;

    for (unsigned c = 0; c < VN_MAX_CPUS; c++)
        home[c] = -1;
    if (!weight || !normal)
        return -ENOMEM;
    for (unsigned i = 0; i < n; i++) {
        hwloc_obj_t c = nodes[i];

        if (!c->cpuset)
            continue;
        weight[i] = hwloc_bitmap_weight(c->cpuset);
        normal[i] = topo_node_is_normal_memory(c);
        hwloc_bitmap_foreach_begin(pu, c->cpuset)
        {
            if (pu >= VN_MAX_CPUS)
                break;
            int b = home[pu];
            if (b < 0 || weight[i] < weight[b] ||
                (weight[i] == weight[b] && normal[i] && !normal[b]))
                home[pu] = (int)i;
        }
        hwloc_bitmap_foreach_end();
    }
    return 0;
}

static int topo_cmp_obj_os_index(const void *a, const void *b)
{
    const hwloc_obj_t x = *(const hwloc_obj_t *)a, y = *(const hwloc_obj_t *)b;

    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

static int topo_cmp_cpuset_first(const void *a, const void *b)
{
    int x = cpuset_first(a), y = cpuset_first(b);

    return (x > y) - (x < y);
}

/* Cores and SMT width of every node, from hwloc Core objects (a PU is its own core without). */
static int topo_fill_cores(hwloc_topology_t h, topology *t, const int home[VN_MAX_CPUS])
{
    int nr_cores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
    /* per node index: the current core's CPUs in it; the nodes the core touched */
    _cleanup_free_ unsigned *in_node = calloc(t->nr_nodes, sizeof(*in_node));
    _cleanup_free_ unsigned *touched = calloc(t->nr_nodes, sizeof(*touched));

    if (!in_node || !touched)
        return -ENOMEM;
    for (unsigned c = 0; c < VN_MAX_CPUS; c++)
        t->core_of[c] = TOPO_CORE_NONE;
    if (nr_cores > UINT16_MAX - 1)
        nr_cores = 0; /* no core index fits: every CPU its own core */
    for (unsigned n = 0; n < t->nr_nodes; n++) {
        topo_node *node = &t->nodes[n];

        node->nr_cores = nr_cores > 0 ? 0 : node->nr_cpus;
        node->smt = nr_cores > 0 ? 0 : node->nr_cpus ? 1 : 0;
    }
    /* each core once, each of its CPUs once: a core counts in every node it has a CPU of */
    for (int i = 0; i < nr_cores; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_type(h, HWLOC_OBJ_CORE, (unsigned)i);
        unsigned nr_touched = 0;
        vn_cpuset cs;

        if (!core || !core->cpuset || topo_cpuset_from_hwloc(core->cpuset, &cs) < 0)
            continue;
        CPUSET_FOREACH(cpu, &cs)
        {
            int n = home[cpu];
            if (n < 0 || !cpuset_isset(&t->nodes[n].cpus, (unsigned)cpu))
                continue;
            t->core_of[cpu] = (uint16_t)i;
            if (in_node[n]++ == 0)
                touched[nr_touched++] = (unsigned)n;
        }
        for (unsigned k = 0; k < nr_touched; k++) {
            topo_node *node = &t->nodes[touched[k]];
            node->nr_cores++;
            node->smt = VN_MAX(node->smt, in_node[touched[k]]);
            in_node[touched[k]] = 0;
        }
    }
    return 0;
}

/* LLC (L3) groups of every node; returns 0 or -E2BIG (index of the node in *ret_node). */
static int topo_fill_llc(hwloc_topology_t h, topology *t, const int home[VN_MAX_CPUS],
                         unsigned *ret_node)
{
    /* per node index: the slot of the current L3 in its llc[] + 1 (0: none yet) */
    _cleanup_free_ unsigned *slot = calloc(t->nr_nodes, sizeof(*slot));
    _cleanup_free_ unsigned *touched = calloc(t->nr_nodes, sizeof(*touched));
    bool any_l3 = false;

    if (!slot || !touched)
        return -ENOMEM;

    for (hwloc_obj_t l3 = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_L3CACHE, NULL); l3;
         l3 = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_L3CACHE, l3)) {
        vn_cpuset cs;

        /* a cache of memory (KNL MCDRAM in cache mode), not of the CPUs */
        if (l3->subtype && strcmp(l3->subtype, "MemorySideCache") == 0)
            continue;
        if (!l3->cpuset || topo_cpuset_from_hwloc(l3->cpuset, &cs) < 0)
            continue;
        any_l3 = true;
        /* the cache's CPUs, each in its node's part: one walk of them, whatever the nodes */
        unsigned nr_touched = 0;
        CPUSET_FOREACH(cpu, &cs)
        {
            int n = home[cpu];
            topo_node *node = n >= 0 ? &t->nodes[n] : NULL;
            if (!node || !cpuset_isset(&node->cpus, (unsigned)cpu))
                continue;
            if (slot[n] == 0) {
                if (node->nr_llc >= VN_MAX_LLC_PER_NODE) {
                    *ret_node = (unsigned)n;
                    return -E2BIG;
                }
                cpuset_zero(&node->llc[node->nr_llc]);
                slot[n] = ++node->nr_llc;
                touched[nr_touched++] = (unsigned)n;
            }
            cpuset_set(&node->llc[slot[n] - 1], (unsigned)cpu);
        }
        for (unsigned k = 0; k < nr_touched; k++)
            slot[touched[k]] = 0;
    }

    for (unsigned n = 0; n < t->nr_nodes; n++) {
        topo_node *node = &t->nodes[n];

        if (node->cpuless) {
            node->nr_llc = 0;
            continue;
        }
        /* no L3 reported (or none over these CPUs): the node is one LLC */
        if (!any_l3 || node->nr_llc == 0) {
            node->nr_llc = 1;
            node->llc[0] = node->cpus;
        }
        qsort(node->llc, node->nr_llc, sizeof(node->llc[0]), topo_cmp_cpuset_first);
    }
    return 0;
}

/* Whether every node of t is an object of distance matrix d. */
static unsigned topo_distances_coverage(const topology *t, const struct hwloc_distances_s *d)
{
    unsigned covered = 0;

    for (unsigned i = 0; i < d->nbobjs; i++)
        if (d->objs[i] && topo_node_index(t, d->objs[i]->os_index) >= 0)
            covered++;
    return covered;
}

/*
 * Fill t->distance from the best NUMA latency matrix: one the OS reported and
 * covering every node, else any latency matrix covering every node, else the
 * first latency matrix (defaults for the pairs it lacks).
 */
static void topo_fill_distances(hwloc_topology_t h, topology *t)
{
    struct hwloc_distances_s *all[16];
    unsigned nr = VN_ARRAY_SIZE(all);
    int best = -1, best_rank = 0;

    for (unsigned i = 0; i < t->nr_nodes; i++)
        for (unsigned j = 0; j < t->nr_nodes; j++)
            t->distance[i * t->nr_nodes + j] =
                i == j ? TOPO_DISTANCE_LOCAL : TOPO_DISTANCE_REMOTE_DEFAULT;
    /* one node: the only distance is the local one, nothing to learn */
    t->distances_known = t->nr_nodes == 1;

    if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, all,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0)
        return;
    nr = VN_MIN(nr, (unsigned)VN_ARRAY_SIZE(all));
    for (unsigned k = 0; k < nr; k++) {
        unsigned covered = topo_distances_coverage(t, all[k]);
        int rank;

        if (covered == 0)
            continue;
        rank = covered == t->nr_nodes ? 2 : 0;
        if (all[k]->kind & HWLOC_DISTANCES_KIND_FROM_OS)
            rank++;
        if (best < 0 || rank > best_rank) {
            best = (int)k;
            best_rank = rank;
        }
    }

    if (best >= 0) {
        const struct hwloc_distances_s *d = all[best];
        unsigned filled = 0;

        for (unsigned a = 0; a < d->nbobjs; a++) {
            int i = d->objs[a] ? topo_node_index(t, d->objs[a]->os_index) : -1;
            if (i < 0)
                continue;
            for (unsigned b = 0; b < d->nbobjs; b++) {
                int j = d->objs[b] ? topo_node_index(t, d->objs[b]->os_index) : -1;
                if (j < 0)
                    continue;
                hwloc_uint64_t v = d->values[a * d->nbobjs + b];
                t->distance[(unsigned)i * t->nr_nodes + (unsigned)j] =
                    v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
                filled++;
            }
        }
        t->distances_known = t->distances_known || filled == t->nr_nodes * t->nr_nodes;
    }
    for (unsigned k = 0; k < nr; k++)
        hwloc_distances_release(h, all[k]);
}

/* Build *t from a loaded hwloc topology: the CPUs and nodes allowed to this process, or
 * every online one (whole_host). Returns 0 or -errno with a reason in err. */
/* Each node's latency and bandwidth from its best initiator, where the source has them (ACPI
 * HMAT on a live host, memattrs in an XML export); 0 where it does not. */
static void topo_fill_memattrs(hwloc_topology_t h, hwloc_obj_t *nodes, topology *t)
{
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        struct hwloc_location where;
        hwloc_uint64_t v;

        if (hwloc_memattr_get_best_initiator(h, HWLOC_MEMATTR_ID_LATENCY, nodes[i], 0, &where,
                                             &v) == 0)
            t->nodes[i].latency_ns = v;
        if (hwloc_memattr_get_best_initiator(h, HWLOC_MEMATTR_ID_BANDWIDTH, nodes[i], 0, &where,
                                             &v) == 0)
            t->nodes[i].bandwidth_mib = v;
    }
}

static int topo_from_hwloc(hwloc_topology_t h, bool whole_host, topology *t, char *err,
                           size_t errlen)
{
    hwloc_const_cpuset_t allowed_cpus =
        whole_host ? hwloc_topology_get_topology_cpuset(h) : hwloc_topology_get_allowed_cpuset(h);
    hwloc_const_nodeset_t allowed_nodes =
        whole_host ? hwloc_topology_get_topology_nodeset(h) : hwloc_topology_get_allowed_nodeset(h);
    _cleanup_free_ hwloc_obj_t *nodes = NULL;
    _cleanup_free_ int *home = NULL;
    unsigned nr = 0;
    int pu, r;

    if (!allowed_cpus || !allowed_nodes) {
        return vn_fail(err, errlen, -EINVAL, "topology %s: cannot load: no allowed CPU or node set",
                       t->source);
    }

    nodes = calloc(VN_MAX_NODES, sizeof(*nodes));
    if (!nodes)
        return vn_fail(err, errlen, -ENOMEM, "topology %s: out of memory", t->source);
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, NULL); o;
         o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, o)) {
        if (!hwloc_bitmap_isset(allowed_nodes, o->os_index))
            continue;
        if (nr >= VN_MAX_NODES) {
            return vn_fail(err, errlen, -E2BIG,
                           "topology %s: more than %u NUMA nodes, vnuma handles %u", t->source,
                           (unsigned)VN_MAX_NODES, (unsigned)VN_MAX_NODES);
        }
        nodes[nr++] = o;
    }
    if (nr == 0) {
        return vn_fail(err, errlen, -ENODEV, "topology %s: cannot load: no allowed NUMA node",
                       t->source);
    }
    qsort(nodes, nr, sizeof(nodes[0]), topo_cmp_obj_os_index);

    r = topo_cpuset_from_hwloc(allowed_cpus, &t->cpus);
    if (r < 0) {
        return vn_fail(err, errlen, r, "topology %s: CPU %d is beyond the %u CPUs vnuma handles",
                       t->source, hwloc_bitmap_last(allowed_cpus), (unsigned)VN_MAX_CPUS);
    }
    t->nr_cpus = cpuset_weight(&t->cpus);

    if (topo_set_nodes(t, nr) < 0)
        return vn_fail(err, errlen, -ENOMEM, "topology %s: out of memory for %u nodes", t->source,
                       nr);
    for (unsigned i = 0; i < nr; i++) {
        topo_node *node = &t->nodes[i];

        node->os_index = nodes[i]->os_index;
        node->mem_total = nodes[i]->attr ? nodes[i]->attr->numanode.local_memory : 0;
        node->mem_free = node->mem_total;
        node->mem_free_known = false;
        cpuset_zero(&node->cpus);
    }
    home = calloc(VN_MAX_CPUS, sizeof(*home));
    if (!home || topo_pu_homes(nodes, nr, home) < 0)
        return vn_fail(err, errlen, -ENOMEM, "topology %s: out of memory", t->source);
    hwloc_bitmap_foreach_begin(pu, allowed_cpus)
    {
        if (pu < VN_MAX_CPUS && home[pu] >= 0)
            cpuset_set(&t->nodes[home[pu]].cpus, (unsigned)pu);
    }
    hwloc_bitmap_foreach_end();

    for (unsigned i = 0; i < nr; i++) {
        topo_node *node = &t->nodes[i];

        node->nr_cpus = cpuset_weight(&node->cpus);
        node->cpuless = node->nr_cpus == 0;
    }
    if (topo_fill_cores(h, t, home) < 0)
        return vn_fail(err, errlen, -ENOMEM, "topology %s: out of memory", t->source);

    unsigned bad_node = 0;
    r = topo_fill_llc(h, t, home, &bad_node);
    if (r == -ENOMEM)
        return vn_fail(err, errlen, r, "topology %s: out of memory", t->source);
    if (r < 0) {
        return vn_fail(err, errlen, r,
                       "topology %s: node %u has more than %u LLCs, vnuma handles %u", t->source,
                       t->nodes[bad_node].os_index, (unsigned)VN_MAX_LLC_PER_NODE,
                       (unsigned)VN_MAX_LLC_PER_NODE);
    }
    for (unsigned i = 0; i < nr; i++) {
        topo_node *node = &t->nodes[i];

        node->imb_numa_nr = node->cpuless ? 0 : rule_imb_numa_nr(node->nr_cpus, node->nr_llc);
    }
    topo_fill_distances(h, t);
    topo_fill_memattrs(h, nodes, t);
    topo_link_tiers(t);
    return 0;
}

/* <root>/sys/devices/system/cpu/isolated into t->isolated (empty when absent). */
static void topo_read_isolated(const char *root, topology *t)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[4096], line[TOPO_CPULIST_MAX];
    int n;

    cpuset_zero(&t->isolated);
    n = snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/isolated", root);
    if (n < 0 || (size_t)n >= sizeof(path))
        return;
    f = fopen(path, "re");
    if (!f || !fgets(line, sizeof(line), f))
        return;
    line[strcspn(line, "\n")] = '\0';
    if (cpuset_parse(line, &t->isolated) < 0)
        cpuset_zero(&t->isolated);
}

/* errno after a failed hwloc call, never 0. */
static int topo_errno(void)
{
    return errno > 0 ? errno : EINVAL;
}

/* Bounds of a synthetic description, checked before hwloc builds it: hwloc inserts each object
 * among its siblings one by one, in time quadratic in a level's arity ("numa:2 pu:100000" ran
 * for minutes), and holds every object in memory. */
#define TOPO_SYNTHETIC_LEN_MAX   65536 /* bytes: index lists of every PU fit */
#define TOPO_SYNTHETIC_LEVELS    16    /* hwloc's own object types number fewer */
#define TOPO_SYNTHETIC_ARITY_MAX 1024  /* children per parent: 256-core packages, 8 SMT */

/* "numa", "node" or "NUMANode" (hwloc's names of a NUMA level), of len bytes. */
static bool synthetic_is_numa(const char *type, size_t len)
{
    return (len == 4 && !strncasecmp(type, "numa", 4)) ||
           (len == 4 && !strncasecmp(type, "node", 4)) ||
           (len == 8 && !strncasecmp(type, "numanode", 8));
}

/* 0 when the description s stays within vnuma's limits as far as its levels say (hwloc checks
 * the rest), else -E2BIG with the reason. Levels are "[type:]arity" words, each optionally
 * followed by "(attributes)"; "[numa...]" adds a memory child to each object of the level
 * before it. */
static int synthetic_bounds(const char *s, const char *source, char *err, size_t errlen)
{
    uint64_t objs = 1, nodes = 0;
    unsigned levels = 0;
    const char *p = s;

    if (strnlen(s, TOPO_SYNTHETIC_LEN_MAX + 1) > TOPO_SYNTHETIC_LEN_MAX)
        return vn_fail(err, errlen, -E2BIG, "topology %s: the description is longer than %u bytes",
                       source, (unsigned)TOPO_SYNTHETIC_LEN_MAX);
    while (*p) {
        const char *word, *colon, *num;
        unsigned long long arity;
        size_t digits;

        if (isspace((unsigned char)*p)) {
            p++;
            continue;
        }
        if (*p == '(' || *p == '[') { /* attributes, or a memory child: "[numa(...)]" */
            char close = *p == '(' ? ')' : ']';
            const char *type = p + 1, *q = strchr(p, close);
            if (*p == '[' && synthetic_is_numa(type, strcspn(type, ":()] \t\n")))
                nodes += objs;
            if (!q)
                return 0; /* unbalanced: hwloc says so */
            p = q + 1;
            continue;
        }
        word = p;
        p += strcspn(p, " \t\n([");
        colon = memchr(word, ':', (size_t)(p - word));
        num = colon ? colon + 1 : word;
        digits = strspn(num, "0123456789");
        if (digits == 0 || num + digits != p)
            return 0; /* not a level: hwloc refuses it */
        arity = digits > 6 ? ULLONG_MAX : strtoull(num, NULL, 10);
        if (++levels > TOPO_SYNTHETIC_LEVELS)
            return vn_fail(err, errlen, -E2BIG, "topology %s: more than %u levels", source,
                           (unsigned)TOPO_SYNTHETIC_LEVELS);
        if (arity > TOPO_SYNTHETIC_ARITY_MAX)
            return vn_fail(err, errlen, -E2BIG,
                           "topology %s: '%.*s': more than %u children per parent, the most "
                           "vnuma handles",
                           source, (int)VN_MIN((size_t)(p - word), 64), word,
                           (unsigned)TOPO_SYNTHETIC_ARITY_MAX);
        objs *= arity ? arity : 1;
        if (objs > VN_MAX_CPUS)
            return vn_fail(err, errlen, -E2BIG,
                           "topology %s: more than %u objects at '%.*s', the most CPUs vnuma "
                           "handles",
                           source, (unsigned)VN_MAX_CPUS, (int)VN_MIN((size_t)(p - word), 64),
                           word);
        if (synthetic_is_numa(word, colon ? (size_t)(colon - word) : 0))
            nodes += objs;
    }
    if (nodes > VN_MAX_NODES)
        return vn_fail(err, errlen, -E2BIG,
                       "topology %s: more than %u NUMA nodes, vnuma handles %u", source,
                       (unsigned)VN_MAX_NODES, (unsigned)VN_MAX_NODES);
    return 0;
}

int topo_load(topo_source_kind kind, const char *arg, const char *sysfs_root, topology *ret,
              char *err, size_t errlen)
{
    _cleanup_(topo_hwloc_destroyp) hwloc_topology_t h = NULL;
    _cleanup_topo_ topology *t = NULL;
    int r;

    if (err && errlen)
        err[0] = '\0';
    if (!ret || (int)kind < 0 || kind >= TOPO_SOURCE_MAX ||
        (kind != TOPO_SOURCE_LIVE && (!arg || !*arg))) {
        return vn_fail(err, errlen, -EINVAL, "topology: invalid source");
    }

    t = calloc(1, sizeof(*t));
    if (!t) {
        return vn_fail(err, errlen, -ENOMEM, "topology: out of memory");
    }
    topo_source_name(kind, arg, t->source, sizeof(t->source));

    /* hwloc loads its plugins at the process's first init: the I/O ones (PCI, OpenCL, GL)
     * pull in libpciaccess, libOpenCL and X11 for devices the balancer filters out below (a
     * tenth of vnumad's start, several hundred ms on a slow or starved host). An operator's
     * own HWLOC_PLUGINS_BLACKLIST stands. */
    (void)setenv("HWLOC_PLUGINS_BLACKLIST",
                 "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,"
                 "hwloc_rsmi,hwloc_levelzero",
                 0);
    if (hwloc_topology_init(&h) < 0) {
        h = NULL;
        r = -topo_errno();
        return vn_fail(err, errlen, r, "topology %s: cannot load: hwloc init failed: %s", t->source,
                       strerror(-r));
    }
    /* only what the balancer reads: no I/O devices, no instruction caches */
    (void)hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
    (void)hwloc_topology_set_icache_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);

    /* The live host whole, not only the CPUs of vnumad's own cgroup: a host that confines
     * system.slice to housekeeping CPUs must not make those the only CPUs guests get. Each
     * domain's own bounds come from its cgroup (sample.c). */
    if (kind == TOPO_SOURCE_LIVE)
        (void)hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    /* Linux's sysfs gives every object the balancer reads; hwloc's x86 component only adds
     * CPUID details, and to read them binds vnumad to each CPU of the host in turn, each bind
     * waiting for that CPU on a busy host (its start, a SIGHUP's reload) */
    if (kind == TOPO_SOURCE_LIVE)
        (void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");

    /* a failed set_xml/set_synthetic would let load() discover the live host instead */
    errno = 0;
    if (kind == TOPO_SOURCE_XML && hwloc_topology_set_xml(h, arg) < 0) {
        r = -topo_errno();
        return vn_fail(err, errlen, r, "topology %s: cannot load: %s", t->source,
                       r == -EINVAL ? "not a valid hwloc XML topology" : strerror(-r));
    }
    if (kind == TOPO_SOURCE_SYNTHETIC) {
        r = synthetic_bounds(arg, t->source, err, errlen);
        if (r < 0)
            return r;
    }
    if (kind == TOPO_SOURCE_SYNTHETIC && hwloc_topology_set_synthetic(h, arg) < 0) {
        r = -topo_errno();
        return vn_fail(err, errlen, r, "topology %s: cannot load: %s", t->source,
                       r == -EINVAL ? "not a valid hwloc synthetic description" : strerror(-r));
    }
    errno = 0;
    if (hwloc_topology_load(h) < 0) {
        r = -topo_errno();
        return vn_fail(err, errlen, r, "topology %s: cannot load: %s", t->source, strerror(-r));
    }

    r = topo_from_hwloc(h, kind == TOPO_SOURCE_LIVE, t, err, errlen);
    if (r < 0)
        return r;

    /* a host without per-node meminfo (some containers) keeps mem_free_known == false */
    if (kind == TOPO_SOURCE_LIVE) {
        (void)topo_refresh_free(t, sysfs_root);
        topo_read_isolated(sysfs_root && *sysfs_root ? sysfs_root : "/", t);
        topo_read_tiers(sysfs_root && *sysfs_root ? sysfs_root : "/", t);
        topo_link_tiers(t);
    }

    topo_release(ret);
    *ret = *t; /* the nodes and distances move to ret */
    t->nodes = NULL;
    t->distance = NULL;
    return 0;
}

topology *topo_new(void)
{
    return calloc(1, sizeof(topology));
}

void topo_release(topology *t)
{
    if (!t)
        return;
    free(t->nodes);
    free(t->distance);
    t->nodes = NULL;
    t->distance = NULL;
    t->nr_nodes = 0;
}

void topo_free(topology *t)
{
    topo_release(t);
    free(t);
}

int topo_set_nodes(topology *t, unsigned nr)
{
    topo_node *nodes;
    unsigned *distance;

    if (nr == 0 || nr > VN_MAX_NODES)
        return -EINVAL;
    nodes = calloc(nr, sizeof(*nodes));
    distance = calloc((size_t)nr * nr, sizeof(*distance));
    if (!nodes || !distance) {
        free(nodes);
        free(distance);
        return -ENOMEM;
    }
    topo_release(t);
    t->nodes = nodes;
    t->distance = distance;
    t->nr_nodes = nr;
    for (unsigned i = 0; i < nr; i++)
        t->nodes[i].memory_tier = t->nodes[i].lower_tier = -1;
    return 0;
}

unsigned topo_count_cores(const topology *t, const vn_cpuset *cpus)
{
    vn_cpuset seen; /* core indexes seen, as bits (there are fewer cores than CPUs) */
    unsigned n = 0;

    cpuset_zero(&seen);
    CPUSET_FOREACH(cpu, cpus)
    {
        unsigned core = t->core_of[cpu];
        if (core == TOPO_CORE_NONE) {
            n++;
        } else if (!cpuset_isset(&seen, core)) {
            cpuset_set(&seen, core);
            n++;
        }
    }
    return n;
}

int topo_node_index(const topology *t, unsigned os_index)
{
    unsigned lo = 0, hi = t->nr_nodes;

    /* nodes are sorted by kernel number */
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (t->nodes[mid].os_index < os_index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->nr_nodes && t->nodes[lo].os_index == os_index ? (int)lo : -1;
}

/* MemFree of one node from its meminfo file, in bytes. Returns 0 or -errno. */
static int topo_read_memfree(const char *root, unsigned os_index, uint64_t *ret_bytes)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[4096], line[256];
    int n;

    n = snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%u/meminfo", root, os_index);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (fgets(line, sizeof(line), f)) {
        unsigned node;
        uint64_t kb;

        /* "Node 0 MemFree:         4950944 kB" */
        if (sscanf(line, "Node %u MemFree: %" SCNu64 " kB", &node, &kb) == 2) {
            if (node != os_index || kb > UINT64_MAX / 1024)
                return -EINVAL;
            *ret_bytes = kb * 1024;
            return 0;
        }
    }
    return ferror(f) ? -EIO : -ENODATA;
}

/* The huge page pools of one node: nodeN/hugepages/hugepages-<kB>kB/free_hugepages. */
static void topo_read_huge(const char *root, topo_node *node)
{
    _cleanup_closedir_ DIR *d = NULL;
    char path[4096];
    unsigned nr = 0;
    struct dirent *e;
    int n;

    n = snprintf(path, sizeof(path), "%s/sys/devices/system/node/node%u/hugepages", root,
                 node->os_index);
    memset(node->huge, 0, sizeof(node->huge));
    if (n < 0 || (size_t)n >= sizeof(path))
        return;
    d = opendir(path);
    if (!d)
        return; /* no hugetlb in this kernel */
    while ((e = readdir(d)) && nr < TOPO_HUGE_SIZES) {
        _cleanup_fclose_ FILE *f = NULL;
        char file[4096 + 300];
        uint64_t kb, pages;

        if (sscanf(e->d_name, "hugepages-%" SCNu64 "kB", &kb) != 1 || kb == 0 ||
            kb > UINT64_MAX / 1024)
            continue;
        (void)snprintf(file, sizeof(file), "%s/%s/free_hugepages", path, e->d_name);
        f = fopen(file, "re");
        if (!f || fscanf(f, "%" SCNu64, &pages) != 1)
            continue;
        node->huge[nr++] = (topo_huge){.page_size = kb * 1024, .free_pages = pages};
    }
}

int topo_huge_slot(const topo_huge pools[TOPO_HUGE_SIZES], uint64_t page_size)
{
    for (unsigned i = 0; i < TOPO_HUGE_SIZES; i++)
        if (pools[i].page_size && pools[i].page_size == page_size)
            return (int)i;
    return -1;
}

int topo_refresh_free(topology *t, const char *sysfs_root)
{
    const char *root = sysfs_root && *sysfs_root ? sysfs_root : "/";
    char base[4096];
    size_t len;
    int ret = 0;

    if (!t)
        return -EINVAL;
    /* "/" and "/tmp/x/" become "" and "/tmp/x": paths are built as base + "/sys/..." */
    len = strlen(root);
    if (len >= sizeof(base))
        return -ENAMETOOLONG;
    memcpy(base, root, len + 1);
    while (len > 0 && base[len - 1] == '/')
        base[--len] = '\0';

    for (unsigned i = 0; i < t->nr_nodes; i++) {
        uint64_t bytes = 0;
        int r = topo_read_memfree(base, t->nodes[i].os_index, &bytes);

        topo_read_huge(base, &t->nodes[i]);
        if (r < 0) {
            if (ret == 0)
                ret = r;
            continue;
        }
        t->nodes[i].mem_free = bytes;
        t->nodes[i].mem_free_known = true;
    }
    return ret;
}

/* A Linux list of kernel node numbers -> set of topology node indexes (numbers the
 * topology does not know are ignored). */
int topo_nodelist_parse(const topology *t, const char *list, vn_nodeset *ret)
{
    vn_cpuset set;
    vn_nodeset mask = {.nw = 0};
    int r;

    r = cpuset_parse(list, &set);
    if (r < 0)
        return r;
    for (int n = cpuset_first(&set); n >= 0; n = cpuset_next(&set, n)) {
        int idx = topo_node_index(t, (unsigned)n);
        if (idx >= 0)
            nodeset_set(&mask, (unsigned)idx);
    }
    *ret = mask;
    return 0;
}
