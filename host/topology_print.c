/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The topology as text for people (`vnumactl topology`): a table of the nodes and their
 * distance matrix, or the same as JSON.
 */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "topology_print.h"
#include "util.h"

#define TOPO_CPULIST_MAX VN_CPULIST_MAX

static void topo_print_json(const topology *t, FILE *f)
{
    _cleanup_json_ json_object *root = json_object_new_object();
    json_object *nodes = json_object_new_array();
    json_object *dist = json_object_new_array();
    char buf[TOPO_CPULIST_MAX];

    if (!root || !nodes || !dist) {
        if (nodes)
            (void)json_object_put(nodes);
        if (dist)
            (void)json_object_put(dist);
        return;
    }
    json_object_object_add(root, "source", json_object_new_string(t->source));
    json_object_object_add(root, "distances_known", json_object_new_boolean(t->distances_known));
    json_object_object_add(root, "nodes", nodes);
    json_object_object_add(root, "distances", dist);

    for (unsigned i = 0; i < t->nr_nodes; i++) {
        const topo_node *n = &t->nodes[i];
        json_object *o = json_object_new_object();
        json_object *llcs = json_object_new_array();

        if (!o || !llcs) {
            if (o)
                (void)json_object_put(o);
            if (llcs)
                (void)json_object_put(llcs);
            return;
        }
        json_object_object_add(o, "node", json_object_new_int64(n->os_index));
        (void)cpuset_format(&n->cpus, buf, sizeof(buf));
        json_object_object_add(o, "cpus", json_object_new_string(buf));
        json_object_object_add(o, "nr_cpus", json_object_new_int64(n->nr_cpus));
        json_object_object_add(o, "cores", json_object_new_int64(n->nr_cores));
        json_object_object_add(o, "smt", json_object_new_int64(n->smt));
        for (unsigned l = 0; l < n->nr_llc && l < VN_MAX_LLC_PER_NODE; l++) {
            (void)cpuset_format(&n->llc[l], buf, sizeof(buf));
            json_object_array_add(llcs, json_object_new_string(buf));
        }
        json_object_object_add(o, "llcs", llcs);
        json_object_object_add(o, "nr_llc", json_object_new_int64(n->nr_llc));
        json_object_object_add(o, "imb_numa_nr", json_object_new_int64(n->imb_numa_nr));
        json_object_object_add(o, "mem_total", json_object_new_uint64(n->mem_total));
        json_object_object_add(o, "mem_free",
                               n->mem_free_known ? json_object_new_uint64(n->mem_free) : NULL);
        json_object_object_add(o, "cpuless", json_object_new_boolean(n->cpuless));
        json_object_object_add(o, "memory_tier",
                               n->memory_tier >= 0 ? json_object_new_int(n->memory_tier) : NULL);
        json_object_object_add(
            o, "lower_tier",
            n->lower_tier >= 0 ? json_object_new_int64(t->nodes[n->lower_tier].os_index) : NULL);
        json_object_object_add(o, "latency_ns",
                               n->latency_ns ? json_object_new_uint64(n->latency_ns) : NULL);
        json_object_object_add(o, "bandwidth_mib",
                               n->bandwidth_mib ? json_object_new_uint64(n->bandwidth_mib) : NULL);
        json_object_array_add(nodes, o);
    }
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        json_object *row = json_object_new_array();

        if (!row)
            return;
        for (unsigned j = 0; j < t->nr_nodes; j++)
            json_object_array_add(row, json_object_new_int64(topo_distance(t, i, j)));
        json_object_array_add(dist, row);
    }
    fprintf(f, "%s\n",
            json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* "15.6 GiB" */
static void topo_format_gib(uint64_t bytes, char *buf, size_t len)
{
    (void)snprintf(buf, len, "%.1f GiB", (double)bytes / (double)VN_GIB);
}

static void topo_print_table(const topology *t, FILE *f)
{
    char cpus[TOPO_CPULIST_MAX], total[32], freeb[32];
    int w = 4;

    for (unsigned i = 0; i < t->nr_nodes; i++) {
        (void)cpuset_format(&t->nodes[i].cpus, cpus, sizeof(cpus));
        w = VN_MAX(w, (int)strlen(cpus));
    }

    fprintf(f, "%4s  %-*s  %5s  %5s  %3s  %4s  %11s  %10s  %10s  %4s  %5s  %7s  %9s\n", "node", w,
            "cpus", "#cpus", "cores", "smt", "llcs", "imb_numa_nr", "mem total", "mem free", "tier",
            "lower", "latency", "bandwidth");
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        const topo_node *n = &t->nodes[i];
        char tier[16] = "-", lower[16] = "-", lat[24] = "-", bw[24] = "-";

        if (n->memory_tier >= 0)
            (void)snprintf(tier, sizeof(tier), "%d", n->memory_tier);
        if (n->lower_tier >= 0)
            (void)snprintf(lower, sizeof(lower), "%u", t->nodes[n->lower_tier].os_index);
        if (n->latency_ns)
            (void)snprintf(lat, sizeof(lat), "%" PRIu64 "ns", n->latency_ns);
        if (n->bandwidth_mib)
            (void)snprintf(bw, sizeof(bw), "%.1fG/s", (double)n->bandwidth_mib / 1024.0);

        (void)cpuset_format(&n->cpus, cpus, sizeof(cpus));
        topo_format_gib(n->mem_total, total, sizeof(total));
        if (n->mem_free_known)
            topo_format_gib(n->mem_free, freeb, sizeof(freeb));
        else
            (void)snprintf(freeb, sizeof(freeb), "-");
        fprintf(f, "%4u  %-*s  %5u  %5u  %3u  %4u  %11u  %10s  %10s  %4s  %5s  %7s  %9s%s\n",
                n->os_index, w, n->cpuless ? "-" : cpus, n->nr_cpus, n->nr_cores, n->smt, n->nr_llc,
                n->imb_numa_nr, total, freeb, tier, lower, lat, bw,
                n->cpuless ? "  memory-only" : "");
    }

    fprintf(f, "\ndistances%s:\n%4s", t->distances_known ? "" : " (defaults: source has none)",
            "node");
    for (unsigned j = 0; j < t->nr_nodes; j++)
        fprintf(f, " %4u", t->nodes[j].os_index);
    fprintf(f, "\n");
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        fprintf(f, "%4u", t->nodes[i].os_index);
        for (unsigned j = 0; j < t->nr_nodes; j++)
            fprintf(f, " %4u", topo_distance(t, i, j));
        fprintf(f, "\n");
    }
    fprintf(f, "\nsource: %s\n", t->source);
}

void topo_print(const topology *t, bool json, FILE *f)
{
    if (json)
        topo_print_json(t, f);
    else
        topo_print_table(t, f);
}
