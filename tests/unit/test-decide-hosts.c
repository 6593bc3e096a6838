/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the decide stage on the largest hosts: 8 sockets of 4096 CPUs, and node indexes past
 * 64, up to the kernel's 1024 nodes (node sets and per-node counts).
 */
#include "decide-fixture.h"
#include "decide.h"
#include "tap.h"

/* An 8-socket host with 4 nodes per socket and 128 PUs per node: 4096 CPUs, 32 nodes. A cell
 * whose memory is on the last node gets its vCPUs there, CPUs numbered far above 1023. */
static void test_eight_sockets(void)
{
    topology *t = load_synth("pack:8 numa:4 core:64 pu:2");
    unsigned last = t->nr_nodes - 1;
    snapshot s;
    plan p;

    CHECK(t->nr_cpus == 4096 && t->nr_nodes == 32 && cpuset_isset(&t->cpus, 4095),
          "8 sockets: %u CPUs, %u nodes", t->nr_cpus, t->nr_nodes);
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, -1);
    snap_cell *c = add_cell(d, 8, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, last, 512);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == (int)last && pc->nr_pins == 8 &&
              cpuset_equal(&pc->pins[0].cpus, &t->nodes[last].cpus) &&
              cpuset_first(&pc->pins[0].cpus) == 3968,
          "memory on node %u: the vCPUs go to its CPUs 3968-4095 (target %d)", last,
          pc ? pc->target_node : -2);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

/* Past 64 nodes: node sets (allowed nodes, a binding, a wide cell's span) and per-node counts
 * hold indexes up to the kernel's 1024 nodes; the build before refused such a topology. */
static void test_many_nodes(void)
{
    topology *t = load_synth("pack:8 numa:16 core:4 pu:1"); /* 128 nodes of 4 cores */
    snapshot s;
    plan p;

    CHECK(t->nr_nodes == 128, "128 nodes (%u)", t->nr_nodes);
    /* allowed nodes 100 and 127 only, memory bound to them, all on node 100 */
    snap_init(&s);
    snap_domain *d = add_domain(&s, "vm", VN_MODE_AUTO, 10, -1);
    nodeset_set(&d->allowed_nodes, 100);
    nodeset_set(&d->allowed_nodes, 127);
    snap_cell *c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[3].cpus);
    c->binding.mode = VN_MEM_RESTRICTIVE;
    c->binding.nodes = d->allowed_nodes;
    set_mem(c, 100, 256);
    run(t, &s, &p);
    const plan_cell *pc = find_cell(&p, "vm", 0);
    CHECK(pc && pc->target_node == 100 && pc->nr_pins == 2 &&
              cpuset_equal(&pc->pins[0].cpus, &t->nodes[100].cpus) && pc->nr_moves == 0,
          "allowed {100, 127}, memory on 100: the vCPUs go to node 100's CPUs (target %d)",
          pc ? pc->target_node : -2);
    plan_clear(&p);
    snapshot_clear(&s);

    /* a wide cell of 10 busy vCPUs allowed on nodes 90-92 (4 cores each): spans three of them */
    snap_init(&s);
    d = add_domain(&s, "wide", VN_MODE_AUTO, 0, -1);
    for (unsigned n = 90; n <= 92; n++)
        nodeset_set(&d->allowed_nodes, n);
    c = add_cell(d, 10, 0, 0.9, &t->cpus, &t->cpus);
    set_mem(c, 91, 600);
    run(t, &s, &p);
    pc = find_cell(&p, "wide", 0);
    CHECK(pc && has_rule(pc, RULE_WIDE_CELL) && nodeset_weight(&pc->span) == 3 &&
              nodeset_isset(&pc->span, 90) && nodeset_isset(&pc->span, 92) && pc->target_node == 91,
          "a wide cell allowed on nodes 90-92 spans the three (span of %u, target %d)",
          pc ? nodeset_weight(&pc->span) : 0, pc ? pc->target_node : -2);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);

    /* the kernel's largest: 1024 nodes, memory on the last one */
    t = load_synth("pack:32 numa:32 core:4 pu:2");
    snap_init(&s);
    d = add_domain(&s, "vm", VN_MODE_AUTO, 10, -1);
    c = add_cell(d, 2, 0, 0.9, &t->cpus, &t->nodes[0].cpus);
    set_mem(c, 1023, 512);
    run(t, &s, &p);
    pc = find_cell(&p, "vm", 0);
    CHECK(t->nr_nodes == 1024 && pc && pc->target_node == 1023 && pc->nr_pins == 2 &&
              cpuset_first(&pc->pins[0].cpus) == 8184,
          "1024 nodes, memory on node 1023: the vCPUs go to its CPUs 8184-8191 (target %d)",
          pc ? pc->target_node : -2);
    plan_clear(&p);
    snapshot_clear(&s);
    topo_free(t);
}

int main(void)
{
    test_eight_sockets();
    test_many_nodes();
    return tap_done();
}
