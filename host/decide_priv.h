/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the decide stage's files share (decide.c places cells and domains, decide_cell.c
 * holds a cell's facts, its room and the gates on its memory, decide_wide.c places wide
 * cells). Not for other stages: decide.h is the stage's interface.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "model.h"
#include "topology.h"

/* What the pass has committed so far, per node index (the topology's nr_nodes entries). */
typedef struct pass_state {
    double load[VN_MAX_NODES];        /* busy vCPUs (plus unmanaged busy CPUs) placed */
    uint64_t free_left[VN_MAX_NODES]; /* free bytes not yet promised to a move */
    topo_huge huge[VN_MAX_NODES][TOPO_HUGE_SIZES]; /* free huge pages not yet promised */
} pass_state;

/* Per-cell facts derived once from the snapshot. Only the topology's nr_nodes entries of the
 * per-node arrays are set (dcell_view_init), so that a host of few nodes does not pay for
 * VN_MAX_NODES: keep them last. */
typedef struct cell_view {
    const snap_cell *cell;
    uint64_t bytes;                 /* resident bytes, all nodes */
    double busy;                    /* busy vCPUs (count above the threshold) */
    int home;                       /* node its vCPUs are confined to, -1 none */
    bool mem_movable;               /* binding allows moving memory */
    bool mem_pinned;                /* it cannot move: the vCPUs go to it (cell->mem_pinned) */
    vn_cpuset usable;               /* CPUs its vCPUs may be pinned to (vcpu_usable()) */
    double weight_on[VN_MAX_NODES]; /* share of the cell's vCPU weight running on each node */
    double mem_frac[VN_MAX_NODES];  /* share of the cell's memory on each node */
} cell_view;

/* The cost terms of one candidate node, kept apart so the plan can say which
 * rule changed the choice. */
typedef struct node_cost {
    bool feasible;
    bool over_capacity; /* CPUs would be oversubscribed (or entering, within the margin) */
    bool over_cores;    /* more busy vCPUs than cores, margin aside: really oversubscribed */
    bool no_room;       /* target lacks room above its reserve for the incoming memory */
    double mem, vcpu, share, imbalance;
} node_cost;

/* ---- decide.c: the parts of one cell's placement that decide_incoming.c shares ---- */

/* The placement objective's terms for the cell on every node (costs: the topology's nr_nodes
 * entries); placed_node: node index of each of the domain's cells placed so far, -1 not yet. */
void dplace_cost(const topology *t, const snap_domain *d, const vn_config *c, const cell_view *cv,
                 const pass_state *ps, const int placed_node[], node_cost costs[]);
/* One pass of a pick: which of the hard constraints hold in it. */
typedef struct dpick_pass {
    bool capacity; /* CPU capacity, with the margin to enter a node */
    bool cores;    /* cores for the busy vCPUs, without the margin */
    bool room;     /* room above the reserve for the memory */
} dpick_pass;
/* The cheapest feasible node in the first pass of `order` that has one; -1 none. */
int dplace_pick(const topology *t, const node_cost costs[], const dpick_pass order[], unsigned nr);
/* Pins of every vCPU of the cell onto its usable CPUs of node n (those not there already). */
int dplace_pins(const topology *t, const snap_cell *cell, unsigned n, vn_rules rules,
                plan_cell *pc);
/* The cell's busy vCPUs counted on node target (-1: where they run now). */
void dplace_account_load(const topology *t, const cell_view *cv, int target, pass_state *ps);

/* ---- decide_cell.c ---- */

/* Free memory node n keeps (max of the reserve and its fraction of the node). */
uint64_t dcell_node_reserve(const topology *t, const vn_config *c, unsigned n);
/* Free bytes of node n: the snapshot's when known, else the topology's. */
uint64_t dcell_node_free(const topology *t, const snapshot *s, unsigned n);
/* Bytes of the cell's memory node n can take now (huge pages, or above the reserve). */
uint64_t dcell_room(const topology *t, const vn_config *c, const pass_state *ps,
                    const snap_cell *cell, unsigned n);
/* Promise `bytes` of node n to the cell's move. */
uint64_t dcell_deficit(const topology *t, const vn_config *c, const pass_state *ps,
                       const snap_cell *cell, unsigned n);
void dcell_take_room(pass_state *ps, const snap_cell *cell, unsigned n, uint64_t bytes);
/* The CPUs decide may pin a vCPU to (allowed less isolated; a fixed vCPU's own pin). */
void dcell_vcpu_usable(const topology *t, const snap_vcpu *v, vn_cpuset *out);
/* Busy vCPUs node n holds for the cell: the cores of the node its vCPUs may use. */
double dcell_capacity(const topology *t, const cell_view *cv, unsigned n);
bool dcell_vcpu_busy(const snap_vcpu *v, const vn_config *c);
/* Nodes with CPUs. */
unsigned dcell_cpu_nodes(const topology *t);
/* Node index whose CPUs contain cpu, or -1. */
int dcell_cpu_node(const topology *t, int cpu);
/* The facts decide derives once from a cell. */
void dcell_view_init(const topology *t, const snap_cell *cell, const vn_config *c, cell_view *cv);
/* Locality in percent: the busy-weighted share of memory on the node its vCPU runs on. */
double dcell_locality(const topology *t, const double weight_on[], const double mem_frac[]);
/* The minimum gain and rule 3 on a cell's memory moves toward target: true when they may
 * move now (their rules in *mr). */
bool dcell_memory_gate(const snap_domain *d, const vn_config *c, const snap_cell *cell, int target,
                       double gain, vn_rules why, plan_cell *pc, vn_rules *mr);

/* Node indexes of a cell's pages (arg: the snap_cell), most pages first, for qsort_r. */
int dcell_cmp_source(const void *a, const void *b, void *arg);

/* ---- decide_tier.c ---- */

/* A cell's memory on its target node and that node's lower tier (dtier_view). */
typedef struct tier_view {
    int lower;         /* the target's lower tier the cell may use, -1 none */
    vn_tier_why why;   /* NONE: one tier (the rest unset) */
    uint64_t home;     /* bytes of the cell on the target */
    uint64_t on_lower; /* ... on the lower tier */
    uint64_t stray;    /* ... on other nodes */
    uint64_t hot;      /* its hot set (0 without hints) */
    uint64_t hot_home; /* ... of it on the target */
    double gain;       /* points of the cell a tier plan would change (the memory gate's gain) */
    bool may_down;     /* memory from other nodes may go down (hints, or cold-first) */
} tier_view;

/* The lower tier of node n the cell's memory may go to, -1 none: the domain's tier is not off,
 * the cell has vCPUs, the node has one, the domain's nodes and the cell's binding (none,
 * strict or restrictive) allow it. */
int dtier_lower(const topology *t, const snap_domain *d, const snap_cell *cell, unsigned n);
/* Bytes of the cell node n's lower tier takes when n is short of room (the cold part, or for
 * cold-first without hints all of it); 0 when the cell is not tiered there. */
uint64_t dtier_room(const topology *t, const vn_config *c, const pass_state *ps,
                    const snap_domain *d, const cell_view *cv, unsigned n);
/* Whether the cell's memory goes on two tiers with the target as its home, and the facts. */
void dtier_view(const topology *t, const vn_config *c, const pass_state *ps, const snap_domain *d,
                const cell_view *cv, unsigned target, tier_view *tv);
/* The moves of a tiered cell (tv->why set) into pc (moves, hot list, rules, tier), its room
 * taken from ps; a hot range moves up only when two hint sets agree (agree >= 1), or in the
 * domain's early passes (`early`). *home_after gets the bytes of it on the target once they are
 * done. 0 or -ENOMEM. */
int dtier_plan(const topology *t, const vn_config *c, pass_state *ps, const cell_view *cv,
               unsigned target, const tier_view *tv, bool shared_ok, bool early, vn_rules base,
               plan_cell *pc, uint64_t *home_after);

/* ---- decide_wide.c ---- */

/* More busy vCPUs than any node the cell may use has cores for (with hysteresis). */
bool dwide_is_wide(const topology *t, const cell_view *cv, const node_cost costs[]);
/* Place a wide cell over the nearest nodes from `seed`. Returns 0 or -ENOMEM. */
int dwide_decide(const topology *t, const snap_domain *d, const vn_config *c, const cell_view *cv,
                 pass_state *ps, const node_cost costs[], int seed, vn_rules why, plan_cell *pc);
