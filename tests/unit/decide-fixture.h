/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Snapshots built by hand for the tests of the decide stage (test-decide.c,
 * test-decide-properties.c): topologies, domains, cells and their memory, and
 * what to look for in the plan.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "model.h"
#include "topology.h"

#define MIB      (1024ULL * 1024)
#define PAGE     4096ULL
#define MAX_DOMS 16

/* ---------- building snapshots by hand ---------- */

/* nodes of the topology loaded last: the cells add_cell() makes count pages on them */
static unsigned fixture_nodes;

__attribute__((unused)) static topology *load_synth(const char *s)
{
    topology *t = topo_new();
    char err[512];

    if (!t || topo_load(TOPO_SOURCE_SYNTHETIC, s, NULL, t, err, sizeof(err)) < 0) {
        fprintf(stderr, "cannot load synthetic topology %s: %s\n", s, err);
        exit(1);
    }
    fixture_nodes = t->nr_nodes;
    return t;
}

__attribute__((unused)) static topology *load_xml(const char *path)
{
    topology *t = topo_new();
    char err[512];

    if (!t || topo_load(TOPO_SOURCE_XML, path, NULL, t, err, sizeof(err)) < 0) {
        topo_free(t);
        return NULL;
    }
    fixture_nodes = t->nr_nodes;
    return t;
}

__attribute__((unused)) static void snap_init(snapshot *s)
{
    memset(s, 0, sizeof(*s));
    s->domains = calloc(MAX_DOMS, sizeof(*s->domains));
}

__attribute__((unused)) static snap_domain *add_domain(snapshot *s, const char *name, vn_mode mode,
                                                       unsigned age, int preferred)
{
    snap_domain *d = &s->domains[s->nr_domains++];

    snprintf(d->name, sizeof(d->name), "%s", name);
    d->mode = mode;
    d->age_passes = age;
    d->preferred_node = preferred;
    d->cells = calloc(8, sizeof(*d->cells));
    return d;
}

/* A cell with nv vCPUs (ids from first_id), all `busy`, allowed on `allowed`,
 * pinned to `pinned` (running on its first CPU). */
__attribute__((unused)) static snap_cell *add_cell(snap_domain *d, unsigned nv, unsigned first_id,
                                                   double busy, const vn_cpuset *allowed,
                                                   const vn_cpuset *pinned)
{
    snap_cell *c = &d->cells[d->nr_cells];

    c->id = d->nr_cells++;
    c->nr_vcpus = nv;
    c->vcpus = calloc(nv, sizeof(*c->vcpus));
    if (snap_cell_nodes(c, fixture_nodes) < 0)
        abort();
    c->page_size = PAGE;
    c->last_candidate = -1;
    for (unsigned i = 0; i < nv; i++) {
        c->vcpus[i].id = first_id + i;
        c->vcpus[i].busy = busy;
        c->vcpus[i].allowed = *allowed;
        c->vcpus[i].pinned = *pinned;
        c->vcpus[i].cpu = -1;
    }
    return c;
}

__attribute__((unused)) static void set_mem(snap_cell *c, unsigned node, uint64_t mib)
{
    c->pages[node] = mib * MIB / PAGE;
}

__attribute__((unused)) static const plan_cell *find_cell(const plan *p, const char *dom,
                                                          unsigned cell)
{
    for (unsigned i = 0; i < p->nr_domains; i++)
        if (strcmp(p->domains[i].name, dom) == 0 && cell < p->domains[i].nr_cells)
            return &p->domains[i].cells[cell];
    return NULL;
}

__attribute__((unused)) static bool has_rule(const plan_cell *pc, vn_rule r)
{
    return pc && (pc->rules & RULE_BIT(r));
}

__attribute__((unused)) static uint64_t moved_bytes(const plan_cell *pc)
{
    uint64_t b = 0;

    for (unsigned i = 0; pc && i < pc->nr_moves; i++)
        if (!pc->moves[i].is_range)
            b += pc->moves[i].bytes;
    return b;
}

__attribute__((unused)) static void run(const topology *t, const snapshot *s, plan *p)
{
    vn_config c;

    config_defaults(&c);
    if (decide(t, s, &c, p) < 0) {
        fprintf(stderr, "decide failed\n");
        exit(1);
    }
}
