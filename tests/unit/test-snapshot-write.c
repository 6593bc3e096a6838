/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/snapshot_write.c: every example of tests/data/snapshots/, read against its
 * topology, written and read back, is the same snapshot, field by field (a field the writer
 * left out or wrote wrong shows as a difference), and writing it again gives the same text.
 * Data files are found below $VN_SRCDIR (default: the current directory, the repo root).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"
#include "snapshot_write.h"
#include "tap.h"
#include "testdata.h"
#include "util.h"

/* The first difference between a and b into why (false), or true when they are the same. */
static bool same_cell(const snap_cell *a, const snap_cell *b, unsigned nr_nodes, char *why,
                      size_t len)
{
    if (a->id != b->id || a->page_size != b->page_size || a->granule != b->granule ||
        a->mem_pinned != b->mem_pinned || a->binding.mode != b->binding.mode ||
        !nodeset_equal(&a->binding.nodes, &b->binding.nodes) ||
        a->last_candidate != b->last_candidate || a->down_ago != b->down_ago ||
        a->order_left != b->order_left || a->nr_vcpus != b->nr_vcpus || a->nr_hot != b->nr_hot ||
        a->nr_shares != b->nr_shares) {
        snprintf(why, len, "cell %u: id, page size, pin, binding, candidate or counts", a->id);
        return false;
    }
    for (unsigned n = 0; n < nr_nodes; n++)
        if (a->pages[n] != b->pages[n]) {
            snprintf(why, len, "cell %u: pages on node index %u", a->id, n);
            return false;
        }
    if (!a->hot_pages != !b->hot_pages) {
        snprintf(why, len, "cell %u: hot pages known on one side only", a->id);
        return false;
    }
    for (unsigned n = 0; a->hot_pages && n < nr_nodes; n++)
        if (a->hot_pages[n] != b->hot_pages[n]) {
            snprintf(why, len, "cell %u: hot pages on node index %u", a->id, n);
            return false;
        }
    for (unsigned v = 0; v < a->nr_vcpus; v++) {
        const snap_vcpu *x = &a->vcpus[v], *y = &b->vcpus[v];
        if (x->id != y->id || x->busy != y->busy || !cpuset_equal(&x->allowed, &y->allowed) ||
            !cpuset_equal(&x->pinned, &y->pinned) || x->cpu != y->cpu || x->fixed != y->fixed) {
            snprintf(why, len, "cell %u: vCPU %u", a->id, x->id);
            return false;
        }
    }
    for (unsigned h = 0; h < a->nr_hot; h++)
        if (a->hot[h].gpa != b->hot[h].gpa || a->hot[h].length != b->hot[h].length ||
            a->hot[h].heat != b->hot[h].heat || a->hot[h].shared != b->hot[h].shared) {
            snprintf(why, len, "cell %u: hot range %u", a->id, h);
            return false;
        }
    for (unsigned k = 0; k < a->nr_shares; k++)
        if (a->shares[k].cell != b->shares[k].cell || a->shares[k].weight != b->shares[k].weight) {
            snprintf(why, len, "cell %u: share %u", a->id, k);
            return false;
        }
    return true;
}

static bool same(const topology *t, const snapshot *a, const snapshot *b, char *why, size_t len)
{
    if (a->pass != b->pass || a->nr_domains != b->nr_domains) {
        snprintf(why, len, "pass or number of domains");
        return false;
    }
    for (unsigned n = 0; n < t->nr_nodes; n++)
        if (a->free_known[n] != b->free_known[n] || a->free_bytes[n] != b->free_bytes[n] ||
            a->other_busy[n] != b->other_busy[n] ||
            memcmp(a->free_huge[n], b->free_huge[n], sizeof(a->free_huge[n])) != 0) {
            snprintf(why, len, "node index %u", n);
            return false;
        }
    for (unsigned i = 0; i < a->nr_domains; i++) {
        const snap_domain *x = &a->domains[i], *y = &b->domains[i];
        if (strcmp(x->name, y->name) || strcmp(x->uuid, y->uuid) || x->mode != y->mode ||
            x->priority != y->priority || !nodeset_equal(&x->allowed_nodes, &y->allowed_nodes) ||
            x->age_passes != y->age_passes || x->preferred_node != y->preferred_node ||
            x->busy_unmeasured != y->busy_unmeasured || x->hints_pending != y->hints_pending ||
            x->hint_passes != y->hint_passes || x->tier != y->tier || x->nr_cells != y->nr_cells) {
            snprintf(why, len, "domain %.64s", x->name);
            return false;
        }
        for (unsigned c = 0; c < x->nr_cells; c++)
            if (!same_cell(&x->cells[c], &y->cells[c], t->nr_nodes, why, len))
                return false;
    }
    return true;
}

/* What the examples do not hold: huge pages, a realtime vCPU, pinned memory, an unmeasured
 * domain, a page size, a memory-only cell, a cell binding of its own, hot pages. */
static const char every_field[] =
    "{\"version\":1,\"pass\":7,\"nodes\":[{\"node\":1,\"free_bytes\":1048576,"
    "\"free_hugepages\":{\"2097152\":12,\"1073741824\":1}}],\"domains\":[{\"name\":\"rt\","
    "\"balancer\":{\"mode\":\"advise\",\"tier\":\"cold-first\"},\"busy_unmeasured\":true,"
    "\"hints_pending\":true,\"hint_passes\":2,\"numatune\":{\"mode\":"
    "\"preferred\",\"nodes\":[1]},\"cells\":[{\"id\":0,\"page_size\":2097152,"
    "\"memory_pinned\":\"vfio\",\"pages\":{\"1\":3},\"down_ago\":4,\"order_left\":8388608,\"hints\":{\"hot_ranges\":[{\"gpa\":0,"
    "\"length\":4096,\"heat\":1}],\"hot_pages\":{\"1\":1}},\"vcpus\":[{\"id\":0,\"busy\":0.1,"
    "\"allowed\":\"0-3\",\"pinned\":\"2\",\"cpu\":2,\"fixed\":true}]},{\"id\":3,\"move_granule\":2097152,"
    "\"numatune\":{\"mode\":\"interleave\",\"nodes\":[0,1]},\"vcpus\":[]}]}]}";

/* Node numbers past 64 on a host of 1024 nodes: the balancer's nodes, bindings, pages, free
 * memory and a preferred node. */
static const char many_nodes[] =
    "{\"version\":1,\"pass\":3,\"nodes\":[{\"node\":1000,\"free_bytes\":1048576}],"
    "\"domains\":[{\"name\":\"far\",\"balancer\":{\"mode\":\"auto\",\"nodes\":[64,700,1023]},"
    "\"preferred_node\":700,\"numatune\":{\"mode\":\"restrictive\",\"nodes\":[700,1023]},"
    "\"cells\":[{\"id\":0,\"pages\":{\"65\":10,\"700\":20,\"1023\":30},\"vcpus\":[{\"id\":0,"
    "\"busy\":0.5,\"allowed\":\"0-1023\",\"pinned\":\"700\",\"cpu\":700}]}]}]}";

static void round_trip(const char *base, const topology *t, const char *snap_path,
                       const char *text_in)
{
    snapshot s1 = {0}, s2 = {0};
    char err[1024] = "", why[256] = "";
    struct json_object *j1 = NULL, *j2 = NULL;
    int r;

    r = text_in ? snap_parse(text_in, strlen(text_in), base, t, &s1, err, sizeof(err))
                : snap_load_file(snap_path, t, &s1, err, sizeof(err));
    if (!CHECK(r == 0, "%s: the example loads (%s)", base, err))
        return;
    j1 = snapshot_write(t, &s1);
    const char *text = j1 ? json_object_to_json_string_ext(j1, JSON_C_TO_STRING_PLAIN) : "";
    r = j1 ? snap_parse(text, strlen(text), "written", t, &s2, err, sizeof(err)) : -ENOMEM;
    CHECK(r == 0, "%s: what the writer wrote is a valid snapshot (%s)", base, err);
    CHECK(r == 0 && same(t, &s1, &s2, why, sizeof(why)),
          "%s: read back, it is the same snapshot, field by field (differs: %s)", base, why);
    j2 = r == 0 ? snapshot_write(t, &s2) : NULL;
    CHECK(j1 && j2 && strcmp(text, json_object_to_json_string_ext(j2, JSON_C_TO_STRING_PLAIN)) == 0,
          "%s: written again, the same text", base);
    json_object_put(j1);
    json_object_put(j2);
    snapshot_clear(&s1);
    snapshot_clear(&s2);
}

static void example(const char *base, const char *topo, const char *snap, void *arg)
{
    topology *t = topo_new();
    char err[1024] = "";

    (void)arg;
    if (t && CHECK(topo_load(TOPO_SOURCE_XML, topo, NULL, t, err, sizeof(err)) == 0,
                   "topology %s loads (%s)", base, err))
        round_trip(base, t, snap, NULL);
    topo_free(t);
}

int main(void)
{
    (void)testdata_each_example(example, NULL);

    topology *t = topo_new();
    char err[256] = "";
    if (t && CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, t, err,
                             sizeof(err)) == 0,
                   "synthetic two-node topology (%s)", err))
        round_trip("every field", t, NULL, every_field);
    topo_free(t);

    t = topo_new();
    if (t && CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "pack:32 numa:32 core:1 pu:1", NULL, t, err,
                             sizeof(err)) == 0,
                   "synthetic 1024-node topology (%s)", err)) {
        snapshot far = {0};
        round_trip("nodes past 64", t, NULL, many_nodes);
        int r = snap_parse(many_nodes, strlen(many_nodes), "far", t, &far, err, sizeof(err));
        const snap_domain *d = r == 0 ? &far.domains[0] : NULL;
        CHECK(
            d && nodeset_weight(&d->allowed_nodes) == 3 && nodeset_isset(&d->allowed_nodes, 1023) &&
                d->preferred_node == 700 && nodeset_isset(&d->cells[0].binding.nodes, 700) &&
                d->cells[0].pages[65] == 10 && d->cells[0].pages[1023] == 30 &&
                far.free_known[1000] && far.free_bytes[1000] == 1048576,
            "nodes past 64: node 1023 allowed, 700 preferred and bound, pages on 65 and 1023 (%s)",
            err);
        snapshot_clear(&far);
    }
    topo_free(t);
    return tap_done();
}
