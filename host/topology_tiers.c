/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "topology_tiers.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void closedirp(DIR **d)
{
    if (*d)
        closedir(*d);
}

void topo_read_tiers(const char *root, topology *t)
{
    _cleanup_(closedirp) DIR *dir = NULL;
    int tier_of[VN_MAX_NODES]; /* by kernel node number */
    char path[4096];
    struct dirent *e;
    int n;

    for (unsigned i = 0; i < t->nr_nodes; i++)
        t->nodes[i].memory_tier = -1;
    for (unsigned i = 0; i < VN_MAX_NODES; i++)
        tier_of[i] = -1;
    n = snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering", root);
    if (n < 0 || (size_t)n >= sizeof(path) || !(dir = opendir(path)))
        return;
    while ((e = readdir(dir))) {
        _cleanup_fclose_ FILE *f = NULL;
        char line[VN_CPULIST_MAX], *end;
        unsigned long tier;
        vn_cpuset nodes; /* kernel node numbers */

        if (strncmp(e->d_name, "memory_tier", strlen("memory_tier")) != 0)
            continue;
        tier = strtoul(e->d_name + strlen("memory_tier"), &end, 10);
        if (end == e->d_name + strlen("memory_tier") || *end || tier > 1000000)
            continue;
        n = snprintf(path, sizeof(path), "%s/sys/devices/virtual/memory_tiering/%s/nodelist", root,
                     e->d_name);
        if (n < 0 || (size_t)n >= sizeof(path) || !(f = fopen(path, "re")) ||
            !fgets(line, sizeof(line), f))
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (cpuset_parse(line, &nodes) < 0)
            continue;
        CPUSET_FOREACH(k, &nodes)
        {
            if (k < VN_MAX_NODES)
                tier_of[k] = (int)tier;
        }
    }
    for (unsigned i = 0; i < t->nr_nodes; i++)
        if (t->nodes[i].os_index < VN_MAX_NODES)
            t->nodes[i].memory_tier = tier_of[t->nodes[i].os_index];
}

bool topo_is_lower_tier(const topology *t, unsigned n, unsigned home)
{
    const topo_node *a = &t->nodes[n], *h = &t->nodes[home];

    if (n == home || !a->cpuless)
        return false;
    if (a->memory_tier >= 0 && h->memory_tier >= 0)
        return a->memory_tier > h->memory_tier;
    if (a->latency_ns && h->latency_ns)
        return a->latency_ns > h->latency_ns;
    if (a->bandwidth_mib && h->bandwidth_mib)
        return a->bandwidth_mib < h->bandwidth_mib;
    return true;
}

void topo_link_tiers(topology *t)
{
    for (unsigned h = 0; h < t->nr_nodes; h++) {
        int best = -1;

        for (unsigned n = 0; !t->nodes[h].cpuless && n < t->nr_nodes; n++)
            if (topo_is_lower_tier(t, n, h) &&
                (best < 0 || topo_distance(t, h, n) < topo_distance(t, h, (unsigned)best)))
                best = (int)n;
        t->nodes[h].lower_tier = best;
    }
}
