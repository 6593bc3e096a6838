/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the snapshot parser's tests (test-snapshot.c, test-snapshot-errors.c) share:
 * a hand-built topology whose kernel node numbers are not 0..n-1, parsing against
 * it, and documents generated with a given number of entries.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "model.h"
#include "snapshot.h"
#include "topology.h"
#include "util.h"

#define ORIGIN   "test.json"
#define SENTINEL 0xa5

/*
 * Three nodes with kernel numbers 0, 2 and 5 (indexes 0, 1, 2): node 0 has CPUs
 * 0-3 and 4 GiB, node 2 has CPUs 4-7 and 4 GiB, node 5 is memory-only, 8 GiB.
 */
__attribute__((unused)) static void make_topology(topology *t)
{
    static const unsigned os[] = {0, 2, 5};

    topo_release(t);
    memset(t, 0, sizeof(*t));
    (void)snprintf(t->source, sizeof(t->source), "hand-built");
    if (topo_set_nodes(t, 3) < 0)
        abort();
    for (unsigned i = 0; i < t->nr_nodes; i++) {
        topo_node *n = &t->nodes[i];
        n->os_index = os[i];
        n->mem_total = (i == 2 ? 8 : 4) * VN_GIB;
        n->mem_free = n->mem_total;
        n->nr_llc = 1;
        if (i < 2) {
            for (unsigned cpu = 4 * i; cpu < 4 * i + 4; cpu++)
                cpuset_set(&n->cpus, cpu);
            n->nr_cpus = n->nr_cores = 4;
            n->smt = 1;
            n->llc[0] = n->cpus;
        } else {
            n->cpuless = true;
        }
        cpuset_or(&t->cpus, &t->cpus, &n->cpus);
        for (unsigned j = 0; j < t->nr_nodes; j++)
            t->distance[i * t->nr_nodes + j] = i == j ? 10 : 20;
    }
    t->nr_cpus = cpuset_weight(&t->cpus);
    t->distances_known = true;
}

__attribute__((unused)) static topology topo;

__attribute__((unused)) static int parse_len(const char *json, size_t len, snapshot *s, char *err,
                                             size_t errlen)
{
    return snap_parse(json, len, ORIGIN, &topo, s, err, errlen);
}

__attribute__((unused)) static int parse(const char *json, snapshot *s, char *err, size_t errlen)
{
    return parse_len(json, strlen(json), s, err, errlen);
}

__attribute__((unused)) static bool cpuset_is(const vn_cpuset *s, const char *list)
{
    vn_cpuset want;
    return cpuset_parse(list, &want) == 0 && cpuset_equal(s, &want);
}

/* ---- documents generated with a count just over (or at) a limit ---- */

__attribute__((unused)) static char *gen_domains(unsigned n)
{
    static const char dom[] = "{\"name\":\"vm%05u\",\"cells\":[{\"id\":0,\"vcpus\":[{\"id\":0,"
                              "\"allowed\":\"0\"}]}]}";
    size_t cap = 64 + (size_t)n * (sizeof(dom) + 8), len;
    char *buf = malloc(cap);

    if (!buf)
        return NULL;
    len = (size_t)snprintf(buf, cap, "{\"version\":1,\"domains\":[");
    for (unsigned i = 0; i < n; i++) {
        if (i)
            buf[len++] = ',';
        len += (size_t)snprintf(buf + len, cap - len, dom, i);
    }
    (void)snprintf(buf + len, cap - len, "]}");
    return buf;
}

/* One domain whose first cell's `key` array holds n copies of item (cells: n cells). */
__attribute__((unused)) static char *gen_array(const char *what, unsigned n)
{
    size_t cap = 256 + (size_t)n * 96, len;
    char *buf = malloc(cap);

    if (!buf)
        return NULL;
    len = (size_t)snprintf(buf, cap, "{\"version\":1,\"domains\":[{\"name\":\"a\",\"cells\":[");
    if (strcmp(what, "cells") == 0) {
        for (unsigned i = 0; i < n; i++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "%s{\"id\":%u,\"vcpus\":[{\"id\":%u,\"allowed\":\"0\"}]}",
                                    i ? "," : "", i, i);
        (void)snprintf(buf + len, cap - len, "]}]}");
        return buf;
    }
    len += (size_t)snprintf(buf + len, cap - len, "{\"id\":0,");
    if (strcmp(what, "vcpus") == 0) {
        len += (size_t)snprintf(buf + len, cap - len, "\"vcpus\":[");
        for (unsigned i = 0; i < n; i++)
            len += (size_t)snprintf(buf + len, cap - len, "%s{\"id\":%u,\"allowed\":\"0\"}",
                                    i ? "," : "", i);
        (void)snprintf(buf + len, cap - len, "]}]}]}");
        return buf;
    }
    len += (size_t)snprintf(buf + len, cap - len,
                            "\"vcpus\":[{\"id\":0,\"allowed\":\"0\"}],\"hints\":{\"%s\":[", what);
    for (unsigned i = 0; i < n; i++) {
        if (strcmp(what, "hot_ranges") == 0)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "%s{\"gpa\":%u,\"length\":4096,\"heat\":0.5}", i ? "," : "",
                                    i * 4096);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s{\"cell\":1,\"weight\":0.5}",
                                    i ? "," : "");
    }
    (void)snprintf(buf + len, cap - len, "]}}]}]}");
    return buf;
}
