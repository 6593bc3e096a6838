/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 5 of the pipeline: record. Turns plans into what people and scripts
 * read: JSON (node numbers are the kernel's), and a short human table.
 */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "act.h"
#include "carried.h"
#include "model.h"
#include "topology.h"

/* The plan as a JSON object (caller owns the reference), or NULL on ENOMEM. */
struct json_object *record_plan_json(const topology *t, const plan *p);

/* A short human table of the plan, one row per cell, then one line per action. */
void record_plan_table(const topology *t, const plan *p, FILE *f);

/* Per-node placement of the opted-in domains' cells (bytes of memory per node,
 * vCPUs per node), numastat style, for "before"/"after" views. */
void record_snapshot_table(const topology *t, const snapshot *s, FILE *f);

/* Write the names of the rules set in `rules` into buf as "a,b,c" ("-" if none). */
void record_rules_str(vn_rules rules, char *buf, size_t len);

/* Who and when a decision record is about. */
typedef struct record_ctx {
    const char *name;
    const char *uuid;
    vn_mode mode;
    uint64_t pass;
    const char *time;         /* ISO 8601 UTC */
    const char *action;       /* "acted", "moving", "advised", "none", "skipped", "error" */
    const char *reason;       /* domain level: "ok", "paused", "invalid-config: ...", ... */
    const dom_placed *placed; /* the qemu hook's placement of its arrival here; NULL: none */
    const snap_domain *sd;    /* what the pass sampled (its cells' hot ranges); NULL: none */
    bool hints_carried;       /* the hot ranges were the source host's (carried.h) */
    const char *opt_in;       /* what put it in its mode ("element", "rule F:L", "default") */
} record_ctx;

/* A record's limits: its strings are copies, so a record outlives the pass that made it. */
#define RECORD_TIME_MAX   32
#define RECORD_ACTION_MAX 16
#define RECORD_REASON_MAX (STATE_ERROR_MAX + 32)

/* One cell of a decision record: what was decided and what the act stage did. */
typedef struct record_cell {
    unsigned cell;          /* the guest's cell id */
    int node;               /* topology node index it runs on, -1 unknown */
    int target;             /* topology node index of its target, -1 none */
    int lower_tier;         /* the target's nearest lower memory tier (node index), -1 none */
    vn_reason reason;       /* the decision */
    vn_rules rules;         /* the rules that fired */
    vn_mem_pin mem_pinned;  /* memory that cannot move, and why (MEM_PIN_NONE: it can) */
    uint64_t page_size;     /* bytes per page of the cell's memory */
    unsigned pins;          /* vCPU pins planned */
    unsigned pins_done;     /* vCPU pins carried out */
    uint64_t bytes_planned; /* bulk moves planned (hot ranges are not counted twice) */
    uint64_t bytes_moved;
    double locality_before; /* percent, unrounded */
    double locality_after;
    int busy_vcpus;      /* the cell's vCPUs counted busy, -1 not measured (plan_cell) */
    vn_nodeset span;     /* wide cell: topology node indexes it spans, else empty */
    bool cpu_overcommit; /* no node it may use had cores to spare for its busy vCPUs */
    plan_tier tier;      /* its memory on two tiers (tier.why TIER_WHY_NONE: one) */
    int placed_node;     /* topology node index the qemu hook placed it on, -1 none */
    unsigned nr_hot;     /* its hottest ranges the pass followed (what travels: carried.h) */
    carried_range hot[CARRIED_HOT_PER_CELL];
} record_cell;

/* The decision record of one domain in one pass (docs/records.md), as typed values. */
typedef struct record_decision {
    char name[SNAP_NAME_MAX];
    bool has_uuid;
    char uuid[SNAP_UUID_MAX];
    vn_mode mode;
    uint64_t pass;
    char time[RECORD_TIME_MAX];     /* ISO 8601 UTC */
    char action[RECORD_ACTION_MAX]; /* as record_ctx */
    char reason[RECORD_REASON_MAX];
    bool has_error; /* the act stage failed: error says how */
    char error[STATE_ERROR_MAX];
    uint64_t bytes_moved;          /* sum over the cells */
    bool placed;                   /* it arrived placed by the qemu hook ("arrival": "placed") */
    bool hints_carried;            /* its hot ranges were the source host's ("hints": "carried") */
    char opt_in[STATE_OPT_IN_MAX]; /* "opt_in": what put it in its mode; "" not said */
    unsigned nr_cells;
    record_cell cells[SNAP_MAX_CELLS_PER_DOMAIN];
} record_decision;

/*
 * Fill `out` with the decision record of one domain in one pass: what was decided per cell
 * (pd may be NULL: nothing was decided), the rules that fired, and what the act stage did
 * (res may be NULL: nothing was carried out). Node indexes outside t become -1; strings
 * are copied (truncated to the record's limits).
 */
void record_decision_make(const topology *t, const record_ctx *c, const plan_domain *pd,
                          const act_result *res, record_decision *out);

/* The record as JSON (docs/records.md; node numbers are the kernel's): a new JSON object or
 * NULL on ENOMEM. */
struct json_object *record_decision_json(const topology *t, const record_decision *r);

/*
 * Whether a pass that carried out res for plan pd only goes on with the decision of last (the
 * domain's previous record): last acted or was moving, res moved memory, changed no pin, no
 * emulator pin and no backend policy, and every cell with something to do has last's target.
 * Such a pass is recorded "moving", not "acted" (docs/records.md).
 */
bool record_continues(const record_decision *last, const plan_domain *pd, const act_result *res);

/* The kernel's number of node index n into buf ("-" for none or out of range); returns buf. */
const char *record_node_str(const topology *t, int n, char *buf, size_t len);

/* A set of node indexes as a JSON array of the kernel's node numbers (NULL on no memory). */
struct json_object *record_node_list(const topology *t, const vn_nodeset *s);
