/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 5 of the pipeline: record. Turns plans into what people and scripts
 * read: JSON (node numbers are the kernel's), and a short human table.
 */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

#include "act.h"
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
    const char *time;   /* ISO 8601 UTC */
    const char *action; /* "acted", "advised", "none", "skipped", "error" */
    const char *reason; /* domain level: "ok", "paused", "invalid-config: ...", ... */
} record_ctx;

/*
 * The decision record of one domain in one pass (docs/records.md): what was
 * decided per cell, the rules that fired, and what the act stage did (res may
 * be NULL: nothing was carried out; pd may be NULL: nothing was decided).
 * Returns a new JSON object or NULL on ENOMEM.
 */
struct json_object *record_decision_json(const topology *t, const record_ctx *c,
                                         const plan_domain *pd, const act_result *res);
