/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "record.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "rules.h"
#include "util.h"

/* The kernel's number of node index n, or -1 (JSON null) for "none". */
static struct json_object *node_json(const topology *t, int n)
{
    if (n < 0 || (unsigned)n >= t->nr_nodes)
        return NULL;
    return json_object_new_int((int)t->nodes[n].os_index);
}

static struct json_object *rules_json(vn_rules rules)
{
    struct json_object *a = json_object_new_array();

    for (unsigned r = 0; a && r < RULE_MAX; r++)
        if (rules & RULE_BIT(r))
            json_object_array_add(a, json_object_new_string(rule_name((vn_rule)r)));
    return a;
}

void record_rules_str(vn_rules rules, char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (unsigned r = 0; r < RULE_MAX; r++) {
        int w;
        if (!(rules & RULE_BIT(r)))
            continue;
        w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", rule_name((vn_rule)r));
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    if (used == 0)
        snprintf(buf, len, "-");
}

/* A heat in 0..1 to 3 decimals (the record's JSON stays short). */
static double round3(double x)
{
    return round(x * 1000.0) / 1000.0;
}

static double round1(double x)
{
    return round(x * 10.0) / 10.0;
}

/* A cell's memory on two tiers (plan_tier), NULL when it is on one. */
static struct json_object *tier_json(const plan_tier *tr)
{
    struct json_object *o;

    if (tr->why == TIER_WHY_NONE || !(o = json_object_new_object()))
        return NULL;
    json_object_object_add(o, "why", json_object_new_string(tier_why_name(tr->why)));
    json_object_object_add(o, "hints", json_object_new_boolean(tr->hints));
    json_object_object_add(o, "hot_bytes", json_object_new_uint64(tr->hot));
    json_object_object_add(o, "hot_home_bytes", json_object_new_uint64(tr->hot_home));
    json_object_object_add(o, "home_bytes", json_object_new_uint64(tr->home));
    json_object_object_add(o, "lower_bytes", json_object_new_uint64(tr->lower));
    json_object_object_add(o, "demote_bytes", json_object_new_uint64(tr->demote));
    json_object_object_add(o, "down_bytes", json_object_new_uint64(tr->down));
    return o;
}

static struct json_object *cell_json(const topology *t, const plan_cell *pc)
{
    _cleanup_json_ struct json_object *o = json_object_new_object();
    struct json_object *pins = json_object_new_array(), *moves = json_object_new_array();
    char buf[VN_CPULIST_MAX];

    if (!o || !pins || !moves) {
        if (pins)
            json_object_put(pins);
        if (moves)
            json_object_put(moves);
        return NULL;
    }
    json_object_object_add(o, "cell", json_object_new_int((int)pc->cell_id));
    json_object_object_add(o, "current_node", node_json(t, pc->current_node));
    json_object_object_add(o, "target_node", node_json(t, pc->target_node));
    json_object_object_add(o, "candidate_node", node_json(t, pc->candidate_node));
    if (pc->lower_tier >= 0)
        json_object_object_add(o, "lower_tier", node_json(t, pc->lower_tier));
    if (pc->tier.why != TIER_WHY_NONE)
        json_object_object_add(o, "tier", tier_json(&pc->tier));
    json_object_object_add(o, "locality_before",
                           json_object_new_double(round1(pc->locality_before)));
    json_object_object_add(o, "locality_after", json_object_new_double(round1(pc->locality_after)));
    json_object_object_add(o, "reason", json_object_new_string(reason_name(pc->reason)));
    json_object_object_add(o, "rules", rules_json(pc->rules));
    if (pc->mem_pinned != MEM_PIN_NONE)
        json_object_object_add(o, "memory_pinned",
                               json_object_new_string(mem_pin_name(pc->mem_pinned)));
    for (unsigned i = 0; i < pc->nr_pins; i++) {
        struct json_object *p = json_object_new_object();
        (void)cpuset_format(&pc->pins[i].cpus, buf, sizeof(buf));
        json_object_object_add(p, "vcpu", json_object_new_int((int)pc->pins[i].vcpu));
        json_object_object_add(p, "cpus", json_object_new_string(buf));
        json_object_object_add(p, "rules", rules_json(pc->pins[i].rules));
        json_object_array_add(pins, p);
    }
    json_object_object_add(o, "pins", pins);
    for (unsigned i = 0; i < pc->nr_moves; i++) {
        const plan_move *m = &pc->moves[i];
        struct json_object *j = json_object_new_object();
        if (m->is_range) {
            json_object_object_add(j, "gpa", json_object_new_uint64(m->gpa));
            json_object_object_add(j, "length", json_object_new_uint64(m->length));
        } else {
            json_object_object_add(j, "from_node", node_json(t, m->from_node));
        }
        json_object_object_add(j, "to_node", node_json(t, m->to_node));
        if (m->cold)
            json_object_object_add(j, "cold", json_object_new_boolean(true));
        json_object_object_add(j, "bytes", json_object_new_uint64(m->bytes));
        json_object_object_add(j, "gain_points", json_object_new_double(round1(m->gain_points)));
        json_object_object_add(j, "rules", rules_json(m->rules));
        json_object_array_add(moves, j);
    }
    json_object_object_add(o, "moves", moves);
    if (pc->nr_moves)
        json_object_object_add(o, "batch_pages", json_object_new_int((int)pc->batch_pages));
    return VN_TAKE_PTR(o);
}

struct json_object *record_plan_json(const topology *t, const plan *p)
{
    _cleanup_json_ struct json_object *o = json_object_new_object();
    struct json_object *doms = json_object_new_array(), *sum = json_object_new_object();
    unsigned cells = 0, pins = 0, moves = 0;
    uint64_t bytes = 0;

    if (!o || !doms || !sum) {
        if (doms)
            json_object_put(doms);
        if (sum)
            json_object_put(sum);
        return NULL;
    }
    json_object_object_add(o, "pass", json_object_new_uint64(p->pass));
    json_object_object_add(o, "topology", json_object_new_string(t->source));
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        struct json_object *d = json_object_new_object(), *ca = json_object_new_array();
        json_object_object_add(d, "name", json_object_new_string(pd->name));
        json_object_object_add(d, "mode", json_object_new_string(mode_name(pd->mode)));
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            struct json_object *cj = cell_json(t, pc);
            if (!cj) {
                json_object_put(d);
                json_object_put(ca);
                json_object_put(doms);
                json_object_put(sum);
                return NULL;
            }
            json_object_array_add(ca, cj);
            cells++;
            pins += pc->nr_pins;
            moves += pc->nr_moves;
            for (unsigned m = 0; m < pc->nr_moves; m++)
                if (!pc->moves[m].is_range)
                    bytes += pc->moves[m].bytes;
        }
        json_object_object_add(d, "cells", ca);
        json_object_array_add(doms, d);
    }
    json_object_object_add(o, "domains", doms);
    json_object_object_add(sum, "domains", json_object_new_int((int)p->nr_domains));
    json_object_object_add(sum, "cells", json_object_new_int((int)cells));
    json_object_object_add(sum, "pins", json_object_new_int((int)pins));
    json_object_object_add(sum, "moves", json_object_new_int((int)moves));
    json_object_object_add(sum, "bytes_to_move", json_object_new_uint64(bytes));
    json_object_object_add(o, "summary", sum);
    return VN_TAKE_PTR(o);
}

const char *record_node_str(const topology *t, int n, char *buf, size_t len)
{
    if (n < 0 || (unsigned)n >= t->nr_nodes)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%u", t->nodes[n].os_index);
    return buf;
}

void record_plan_table(const topology *t, const plan *p, FILE *f)
{
    char rules[512], cur[16], tgt[16], bytes[32], cpus[VN_CPULIST_MAX];

    fprintf(f, "%-20s %4s %-6s %4s %6s %16s %4s %10s  %s\n", "DOMAIN", "CELL", "MODE", "NOW",
            "TARGET", "LOCALITY", "PINS", "MOVE", "DECISION");
    for (unsigned i = 0; i < p->nr_domains; i++) {
        const plan_domain *pd = &p->domains[i];
        for (unsigned k = 0; k < pd->nr_cells; k++) {
            const plan_cell *pc = &pd->cells[k];
            uint64_t b = 0;
            char loc[32];
            for (unsigned m = 0; m < pc->nr_moves; m++)
                if (!pc->moves[m].is_range)
                    b += pc->moves[m].bytes;
            record_node_str(t, pc->current_node, cur, sizeof(cur));
            record_node_str(t, pc->target_node, tgt, sizeof(tgt));
            vn_human_bytes(b, bytes, sizeof(bytes));
            record_rules_str(pc->rules, rules, sizeof(rules));
            snprintf(loc, sizeof(loc), "%3.0f%% -> %3.0f%%", pc->locality_before,
                     pc->locality_after);
            fprintf(f, "%-20.20s %4u %-6s %4s %6s %16s %4u %10s  %s: %s\n", pd->name, pc->cell_id,
                    mode_name(pd->mode), cur, tgt, loc, pc->nr_pins, b ? bytes : "-",
                    reason_name(pc->reason), rules);
            for (unsigned m = 0; m < pc->nr_pins; m++) {
                (void)cpuset_format(&pc->pins[m].cpus, cpus, sizeof(cpus));
                fprintf(f, "    pin vcpu %u -> cpus %s\n", pc->pins[m].vcpu, cpus);
            }
            for (unsigned m = 0; m < pc->nr_moves; m++) {
                const plan_move *mv = &pc->moves[m];
                vn_human_bytes(mv->bytes, bytes, sizeof(bytes));
                record_node_str(t, mv->to_node, tgt, sizeof(tgt));
                if (mv->is_range) {
                    fprintf(f,
                            "    move hot range gpa 0x%" PRIx64 "+0x%" PRIx64 " -> node %s first\n",
                            mv->gpa, mv->length, tgt);
                } else {
                    record_node_str(t, mv->from_node, cur, sizeof(cur));
                    fprintf(f, "    move %s node %s -> node %s (+%.1f points)\n", bytes, cur, tgt,
                            mv->gain_points);
                }
            }
        }
    }
    fprintf(f, "%u actions\n", plan_nr_actions(p));
}

void record_snapshot_table(const topology *t, const snapshot *s, FILE *f)
{
    char b[32];

    fprintf(f, "%-20s %4s", "DOMAIN", "CELL");
    for (unsigned n = 0; n < t->nr_nodes; n++)
        fprintf(f, "   node%-3u", t->nodes[n].os_index);
    fprintf(f, "   (memory; vCPUs per node)\n");
    for (unsigned i = 0; i < s->nr_domains; i++) {
        const snap_domain *d = &s->domains[i];
        if (d->mode == VN_MODE_OFF)
            continue;
        for (unsigned k = 0; k < d->nr_cells; k++) {
            const snap_cell *c = &d->cells[k];
            fprintf(f, "%-20.20s %4u", d->name, c->id);
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                vn_human_bytes(c->pages[n] * c->page_size, b, sizeof(b));
                fprintf(f, " %10s", c->pages[n] ? b : "-");
            }
            fprintf(f, "\n%-25s", "");
            for (unsigned n = 0; n < t->nr_nodes; n++) {
                unsigned on = 0;
                for (unsigned v = 0; v < c->nr_vcpus; v++)
                    on += cpuset_subset(&c->vcpus[v].pinned, &t->nodes[n].cpus);
                fprintf(f, " %6u cpu", on);
            }
            fprintf(f, "\n");
        }
    }
}

/* A node index of t, or -1. */
static int node_index(const topology *t, int n)
{
    return n >= 0 && (unsigned)n < t->nr_nodes ? n : -1;
}

/* The cell's hottest ranges the pass followed (sorted hottest first; not the fading ones). */
static void record_hot(const snap_domain *sd, unsigned cell, record_cell *rc)
{
    for (unsigned k = 0; sd && k < sd->nr_cells; k++) {
        const snap_cell *c = &sd->cells[k];
        if (c->id != cell)
            continue;
        for (unsigned h = 0; h < c->nr_hot && rc->nr_hot < CARRIED_HOT_PER_CELL; h++)
            if (!c->hot[h].fading)
                rc->hot[rc->nr_hot++] = (carried_range){.gpa = c->hot[h].gpa,
                                                        .length = c->hot[h].length,
                                                        .heat = c->hot[h].heat,
                                                        .shared = c->hot[h].shared};
    }
}

void record_decision_make(const topology *t, const record_ctx *c, const plan_domain *pd,
                          const act_result *res, record_decision *out)
{
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", c->name);
    out->has_uuid = c->uuid != NULL;
    if (c->uuid)
        snprintf(out->uuid, sizeof(out->uuid), "%s", c->uuid);
    out->mode = c->mode;
    out->pass = c->pass;
    snprintf(out->time, sizeof(out->time), "%s", c->time);
    snprintf(out->action, sizeof(out->action), "%s", c->action);
    snprintf(out->reason, sizeof(out->reason), "%s", c->reason);
    out->nr_cells = pd ? VN_MIN(pd->nr_cells, (unsigned)SNAP_MAX_CELLS_PER_DOMAIN) : 0;
    for (unsigned k = 0; k < out->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        record_cell *rc = &out->cells[k];
        bool done = res && k < res->nr_cells;

        rc->cell = pc->cell_id;
        rc->node = node_index(t, pc->current_node);
        rc->target = node_index(t, pc->target_node);
        rc->lower_tier = node_index(t, pc->lower_tier);
        rc->reason = pc->reason;
        rc->mem_pinned = pc->mem_pinned;
        rc->page_size = pc->page_size;
        rc->rules = pc->rules;
        rc->pins = pc->nr_pins;
        rc->pins_done = done ? res->cells[k].pins_done : 0;
        for (unsigned m = 0; m < pc->nr_moves; m++)
            if (!pc->moves[m].is_range)
                rc->bytes_planned += pc->moves[m].bytes;
        rc->bytes_moved = done ? res->cells[k].bytes_moved : 0;
        rc->locality_before = pc->locality_before;
        rc->locality_after = pc->locality_after;
        rc->busy_vcpus = pc->busy_vcpus;
        rc->span = pc->span;
        rc->cpu_overcommit = pc->cpu_overcommit;
        rc->tier = pc->tier;
        rc->placed_node = -1;
        for (unsigned i = 0; c->placed && c->placed->valid && i < c->placed->nr; i++)
            if (c->placed->cells[i].cell == pc->cell_id)
                rc->placed_node = topo_node_index(t, c->placed->cells[i].node);
        record_hot(c->sd, pc->cell_id, rc);
        out->bytes_moved += rc->bytes_moved;
    }
    out->placed = c->placed && c->placed->valid;
    out->hints_carried = c->hints_carried;
    snprintf(out->opt_in, sizeof(out->opt_in), "%s", c->opt_in ? c->opt_in : "");
    out->has_error = res && res->kind != ACT_OK;
    if (out->has_error)
        snprintf(out->error, sizeof(out->error), "%s", res->error);
}

/* [{"gpa", "length", "heat", "shared"}...]: what the next host reads (carried.h). */
static struct json_object *hot_json(const record_cell *rc)
{
    struct json_object *a = json_object_new_array();

    for (unsigned h = 0; a && h < rc->nr_hot; h++) {
        struct json_object *o = json_object_new_object();
        if (!o)
            break;
        json_object_object_add(o, "gpa", json_object_new_uint64(rc->hot[h].gpa));
        json_object_object_add(o, "length", json_object_new_uint64(rc->hot[h].length));
        json_object_object_add(o, "heat", json_object_new_double(round3(rc->hot[h].heat)));
        if (rc->hot[h].shared)
            json_object_object_add(o, "shared", json_object_new_boolean(true));
        json_object_array_add(a, o);
    }
    return a;
}

struct json_object *record_decision_json(const topology *t, const record_decision *r)
{
    _cleanup_json_ struct json_object *o = json_object_new_object();
    struct json_object *cells;

    if (!o)
        return NULL;
    json_object_object_add(o, "domain", json_object_new_string(r->name));
    if (r->has_uuid)
        json_object_object_add(o, "uuid", json_object_new_string(r->uuid));
    json_object_object_add(o, "pass", json_object_new_uint64(r->pass));
    json_object_object_add(o, "time", json_object_new_string(r->time));
    json_object_object_add(o, "mode", json_object_new_string(mode_name(r->mode)));
    if (r->opt_in[0])
        json_object_object_add(o, "opt_in", json_object_new_string(r->opt_in));
    json_object_object_add(o, "action", json_object_new_string(r->action));
    json_object_object_add(o, "reason", json_object_new_string(r->reason));
    if (r->placed)
        json_object_object_add(o, "arrival", json_object_new_string("placed"));
    if (r->hints_carried)
        json_object_object_add(o, "hints", json_object_new_string("carried"));
    cells = json_object_new_array();
    if (!cells)
        return NULL;
    json_object_object_add(o, "cells", cells);
    for (unsigned k = 0; k < r->nr_cells; k++) {
        const record_cell *rc = &r->cells[k];
        struct json_object *j = json_object_new_object();
        if (!j)
            return NULL;
        json_object_object_add(j, "cell", json_object_new_int((int)rc->cell));
        json_object_object_add(j, "node", node_json(t, rc->node));
        json_object_object_add(j, "target", node_json(t, rc->target));
        if (rc->lower_tier >= 0)
            json_object_object_add(j, "lower_tier", node_json(t, rc->lower_tier));
        if (rc->tier.why != TIER_WHY_NONE)
            json_object_object_add(j, "tier", tier_json(&rc->tier));
        json_object_object_add(j, "reason", json_object_new_string(reason_name(rc->reason)));
        json_object_object_add(j, "rules", rules_json(rc->rules));
        if (rc->mem_pinned != MEM_PIN_NONE)
            json_object_object_add(j, "memory_pinned",
                                   json_object_new_string(mem_pin_name(rc->mem_pinned)));
        if (rc->page_size)
            json_object_object_add(j, "page_size", json_object_new_uint64(rc->page_size));
        json_object_object_add(j, "pins", json_object_new_int((int)rc->pins));
        json_object_object_add(j, "pins_done", json_object_new_int((int)rc->pins_done));
        json_object_object_add(j, "bytes_planned", json_object_new_uint64(rc->bytes_planned));
        json_object_object_add(j, "bytes_moved", json_object_new_uint64(rc->bytes_moved));
        json_object_object_add(j, "locality_before",
                               json_object_new_double(round1(rc->locality_before)));
        json_object_object_add(j, "locality_after",
                               json_object_new_double(round1(rc->locality_after)));
        if (rc->busy_vcpus >= 0)
            json_object_object_add(j, "busy_vcpus", json_object_new_int(rc->busy_vcpus));
        if (!nodeset_empty(&rc->span)) {
            struct json_object *span = record_node_list(t, &rc->span);
            if (span)
                json_object_object_add(j, "span", span);
        }
        if (rc->cpu_overcommit)
            json_object_object_add(j, "cpu_overcommit", json_object_new_boolean(true));
        if (r->placed && rc->placed_node >= 0)
            json_object_object_add(j, "placed_node", node_json(t, rc->placed_node));
        if (rc->nr_hot)
            json_object_object_add(j, "hot", hot_json(rc));
        json_object_array_add(cells, j);
    }
    json_object_object_add(o, "bytes_moved", json_object_new_uint64(r->bytes_moved));
    if (r->has_error)
        json_object_object_add(o, "error", json_object_new_string(r->error));
    return VN_TAKE_PTR(o);
}

/*
 * A pass that carried out nothing but memory moves toward the targets of the domain's last
 * pass that acted (or went on moving): the same decision, still being carried out, recorded
 * "moving" rather than "acted" (issue 16: a cell's memory is decided on once, then moved at
 * the budget's rate over as many passes as it takes). A pin, an emulator pin, a backend
 * policy or a changed target makes it a new decision: "acted".
 */
bool record_continues(const record_decision *last, const plan_domain *pd, const act_result *res)
{
    bool moved = false;

    if (!last || (strcmp(last->action, "acted") != 0 && strcmp(last->action, "moving") != 0))
        return false;
    if (res->emulator_pinned || res->memfd_bound || res->nr_cells != pd->nr_cells)
        return false;
    for (unsigned k = 0; k < res->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        const record_cell *lc = NULL;
        if (res->cells[k].pins_done)
            return false;
        moved |= res->cells[k].bytes_moved > 0;
        if (!pc->nr_moves && !pc->nr_pins)
            continue; /* nothing for this cell this pass */
        for (unsigned i = 0; i < last->nr_cells && !lc; i++)
            if (last->cells[i].cell == pc->cell_id)
                lc = &last->cells[i];
        if (!lc || lc->target < 0 || lc->target != pc->target_node)
            return false;
    }
    return moved;
}

struct json_object *record_node_list(const topology *t, const vn_nodeset *s)
{
    struct json_object *a = json_object_new_array();

    NODESET_FOREACH(n, s)
    {
        if (!a || (unsigned)n >= t->nr_nodes)
            break;
        json_object_array_add(a, json_object_new_int((int)t->nodes[n].os_index));
    }
    return a;
}
