/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A snapshot value as snapshot JSON (snapshot_write.h). */
#include "snapshot_write.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "record.h"
#include "util.h"

/* json-c's object, NULL (out of memory) carried through: a failed add is found at the end. */
#define add(o, k, v) json_object_object_add((o), (k), (v))

static struct json_object *node_number(const topology *t, int index)
{
    return json_object_new_int(index < 0 ? -1 : (int)t->nodes[index].os_index);
}

static struct json_object *binding(const topology *t, const vn_mem_binding *b)
{
    struct json_object *o = json_object_new_object();

    if (!o)
        return NULL;
    add(o, "mode", json_object_new_string(mem_mode_name(b->mode)));
    if (b->mode != VN_MEM_NONE)
        add(o, "nodes", record_node_list(t, &b->nodes));
    return o;
}

static struct json_object *cpulist(const vn_cpuset *s, char *buf)
{
    return cpuset_format(s, buf, VN_CPULIST_MAX) < 0 ? NULL : json_object_new_string(buf);
}

static struct json_object *vcpu(const snap_vcpu *v, char *buf)
{
    struct json_object *o = json_object_new_object();

    if (!o)
        return NULL;
    add(o, "id", json_object_new_int((int)v->id));
    add(o, "busy", json_object_new_double(v->busy));
    add(o, "allowed", cpulist(&v->allowed, buf));
    if (!cpuset_equal(&v->pinned, &v->allowed))
        add(o, "pinned", cpulist(&v->pinned, buf));
    if (v->cpu >= 0)
        add(o, "cpu", json_object_new_int(v->cpu));
    if (v->fixed)
        add(o, "fixed", json_object_new_boolean(true));
    return o;
}

/* {"<node>": pages, ...} of the nodes with some */
static struct json_object *node_pages(const topology *t, const uint64_t *pages)
{
    struct json_object *o = json_object_new_object();
    char key[16];

    for (unsigned n = 0; o && n < t->nr_nodes; n++)
        if (pages[n]) {
            (void)snprintf(key, sizeof(key), "%u", t->nodes[n].os_index);
            add(o, key, json_object_new_uint64(pages[n]));
        }
    return o;
}

static struct json_object *hints(const topology *t, const snap_cell *c)
{
    struct json_object *o = json_object_new_object(), *hot = NULL, *shares = NULL;

    if (!o)
        return NULL;
    if (c->hot_pages)
        add(o, "hot_pages", node_pages(t, c->hot_pages));
    if (c->nr_hot && (hot = json_object_new_array()))
        for (unsigned i = 0; i < c->nr_hot; i++) {
            struct json_object *h = json_object_new_object();
            if (h) {
                add(h, "gpa", json_object_new_uint64(c->hot[i].gpa));
                add(h, "length", json_object_new_uint64(c->hot[i].length));
                add(h, "heat", json_object_new_double(c->hot[i].heat));
                if (c->hot[i].shared)
                    add(h, "shared", json_object_new_boolean(true));
            }
            json_object_array_add(hot, h);
        }
    if (c->nr_shares && (shares = json_object_new_array()))
        for (unsigned i = 0; i < c->nr_shares; i++) {
            struct json_object *sh = json_object_new_object();
            if (sh) {
                add(sh, "cell", json_object_new_int((int)c->shares[i].cell));
                add(sh, "weight", json_object_new_double(c->shares[i].weight));
            }
            json_object_array_add(shares, sh);
        }
    if (c->nr_hot)
        add(o, "hot_ranges", hot);
    if (c->nr_shares)
        add(o, "shares", shares);
    return o;
}

static struct json_object *cell(const topology *t, const snap_cell *c, char *buf)
{
    struct json_object *o = json_object_new_object(), *vcpus;

    if (!o)
        return NULL;
    add(o, "id", json_object_new_int((int)c->id));
    if (c->binding.mode != VN_MEM_NONE)
        add(o, "numatune", binding(t, &c->binding));
    if (c->page_size != 4096)
        add(o, "page_size", json_object_new_uint64(c->page_size));
    if (c->granule > c->page_size)
        add(o, "move_granule", json_object_new_uint64(c->granule));
    if (c->mem_pinned != MEM_PIN_NONE)
        add(o, "memory_pinned", json_object_new_string(mem_pin_name(c->mem_pinned)));
    add(o, "pages", node_pages(t, c->pages));
    if (c->last_candidate >= 0)
        add(o, "last_candidate", node_number(t, c->last_candidate));
    if (c->down_ago)
        add(o, "down_ago", json_object_new_int64(c->down_ago));
    if (c->order_left)
        add(o, "order_left", json_object_new_uint64(c->order_left));
    vcpus = json_object_new_array();
    for (unsigned i = 0; vcpus && i < c->nr_vcpus; i++)
        json_object_array_add(vcpus, vcpu(&c->vcpus[i], buf));
    add(o, "vcpus", vcpus);
    if (c->nr_hot || c->nr_shares)
        add(o, "hints", hints(t, c));
    return o;
}

static struct json_object *domain(const topology *t, const snap_domain *d, char *buf)
{
    struct json_object *o = json_object_new_object(), *b, *cells;

    if (!o)
        return NULL;
    add(o, "name", json_object_new_string(d->name));
    if (d->uuid[0])
        add(o, "uuid", json_object_new_string(d->uuid));
    b = json_object_new_object();
    if (b) {
        add(b, "mode", json_object_new_string(mode_name(d->mode)));
        if (d->priority)
            add(b, "priority", json_object_new_int(d->priority));
        if (!nodeset_empty(&d->allowed_nodes))
            add(b, "nodes", record_node_list(t, &d->allowed_nodes));
        if (d->tier != VN_TIER_AUTO)
            add(b, "tier", json_object_new_string(tier_name(d->tier)));
    }
    add(o, "balancer", b);
    if (d->age_passes)
        add(o, "age_passes", json_object_new_int64(d->age_passes));
    if (d->preferred_node >= 0)
        add(o, "preferred_node", node_number(t, d->preferred_node));
    if (d->busy_unmeasured)
        add(o, "busy_unmeasured", json_object_new_boolean(true));
    if (d->hints_pending)
        add(o, "hints_pending", json_object_new_boolean(true));
    if (d->hint_passes)
        add(o, "hint_passes", json_object_new_int64(d->hint_passes));
    cells = json_object_new_array();
    for (unsigned i = 0; cells && i < d->nr_cells; i++)
        json_object_array_add(cells, cell(t, &d->cells[i], buf));
    add(o, "cells", cells);
    return o;
}

static struct json_object *node(const topology *t, const snapshot *s, unsigned n)
{
    struct json_object *o = json_object_new_object(), *huge = NULL;
    char key[24];

    if (!o)
        return NULL;
    add(o, "node", node_number(t, (int)n));
    if (s->free_known[n])
        add(o, "free_bytes", json_object_new_uint64(s->free_bytes[n]));
    if (s->other_busy[n] > 0)
        add(o, "other_busy", json_object_new_double(s->other_busy[n]));
    for (unsigned k = 0; k < TOPO_HUGE_SIZES; k++) {
        const topo_huge *h = &s->free_huge[n][k];
        if (!h->page_size)
            continue;
        if (!huge && !(huge = json_object_new_object()))
            break;
        (void)snprintf(key, sizeof(key), "%" PRIu64, h->page_size);
        add(huge, key, json_object_new_uint64(h->free_pages));
    }
    if (huge)
        add(o, "free_hugepages", huge);
    return o;
}

/* Whether every value under v was made (json-c gives NULL for one it could not allocate,
 * and an object or array holds that NULL as JSON null). */
static bool complete(struct json_object *v)
{
    if (!v)
        return false;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, x)
        {
            (void)k;
            if (!complete(x))
                return false;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (!complete(json_object_array_get_idx(v, i)))
                return false;
    }
    return true;
}

struct json_object *snapshot_write(const topology *t, const snapshot *s)
{
    _cleanup_free_ char *buf = malloc(VN_CPULIST_MAX);
    struct json_object *o = json_object_new_object(), *nodes, *doms;

    if (!o || !buf) {
        json_object_put(o);
        return NULL;
    }
    add(o, "version", json_object_new_int(1));
    add(o, "pass", json_object_new_uint64(s->pass));
    nodes = json_object_new_array();
    for (unsigned n = 0; nodes && n < t->nr_nodes; n++) {
        bool huge = false;
        for (unsigned k = 0; k < TOPO_HUGE_SIZES; k++)
            huge |= s->free_huge[n][k].page_size != 0;
        if (s->free_known[n] || s->other_busy[n] > 0 || huge)
            json_object_array_add(nodes, node(t, s, n));
    }
    add(o, "nodes", nodes);
    doms = json_object_new_array();
    for (unsigned i = 0; doms && i < s->nr_domains; i++)
        json_object_array_add(doms, domain(t, &s->domains[i], buf));
    add(o, "domains", doms);
    if (!complete(o)) {
        json_object_put(o);
        return NULL;
    }
    return o;
}
