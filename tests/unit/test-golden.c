/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Golden files (tests/golden/; VN_TEST_REGENERATE_OUTPUT=1 rewrites them, tap.h tap_golden):
 *   - the plan (record_plan_json, as `vnumad --advise --json` prints it) for every example
 *     snapshot of tests/data/snapshots on its topology, and for the demo;
 *   - the decision records (record_decision_json) of the demo plan's domains, for a fixed pass
 *     and time;
 *   - the metrics exposition (metrics_render) of a fixed host and two domains.
 * A change of any of them shows as a diff of the file in the commit that made it.
 */
#include <dirent.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide.h"
#include "metrics-fixture.h"
#include "metrics.h"
#include "model.h"
#include "record.h"
#include "snapshot.h"
#include "state.h"
#include "tap.h"
#include "topology.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The plan of snapshot `snap` on topology `topo` (a file), as advise prints it; NULL on error. */
static char *plan_text(const char *topo, const char *snap, topology *t, plan *p)
{
    snapshot s = {0};
    vn_config cfg;
    char err[1024], *out = NULL;
    struct json_object *j;

    if (topo_load(TOPO_SOURCE_XML, topo, NULL, t, err, sizeof(err)) < 0 ||
        snap_load_file(snap, t, &s, err, sizeof(err)) < 0) {
        printf("# %s: %s\n", snap, err);
        return NULL;
    }
    config_defaults(&cfg);
    if (decide(t, &s, &cfg, p) == 0 && (j = record_plan_json(t, p))) {
        const char *txt = json_object_to_json_string_ext(j, JSON_FLAGS);
        if (asprintf(&out, "%s\n", txt) < 0)
            out = NULL;
        json_object_put(j);
    }
    snapshot_clear(&s);
    return out;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void golden_plans(void)
{
    struct dirent **ents = NULL;
    int n = scandir("tests/data/topologies", &ents, NULL, by_name);

    CHECK(n > 0, "tests/data/topologies is read (%d entries)", n);
    for (int i = 0; i < n; i++) {
        const char *name = ents[i]->d_name;
        size_t len = strlen(name);
        char topo[512], snap[512], golden[300];
        if (len > 4 && strcmp(name + len - 4, ".xml") == 0) {
            static topology t; /* 2 MiB: off the stack */
            plan p = {0};
            char *text;
            snprintf(topo, sizeof(topo), "tests/data/topologies/%s", name);
            snprintf(snap, sizeof(snap), "tests/data/snapshots/%.*s.json", (int)(len - 4), name);
            snprintf(golden, sizeof(golden), "plan-%.*s.json", (int)(len - 4), name);
            text = plan_text(topo, snap, &t, &p);
            if (CHECK(text != NULL, "%s: planned", snap))
                tap_golden(golden, text);
            free(text);
            plan_clear(&p);
        }
        free(ents[i]);
    }
    free(ents);
}

/* The demo's plan (tests/golden/demo-plan.json, as tests/cli/advise.sh compares the CLI's) and
 * the decision record of each of its domains. */
static void golden_demo(void)
{
    static topology t; /* 2 MiB: off the stack */
    plan p = {0};
    char *text = plan_text("tests/data/topologies/32em64t-2n8c2t-pci-normalio.xml",
                           "tests/data/demo-snapshot.json", &t, &p);
    struct json_object *arr = json_object_new_array();

    if (!CHECK(text != NULL && arr, "the demo is planned")) {
        free(text);
        json_object_put(arr);
        return;
    }
    tap_golden("demo-plan.json", text);
    free(text);
    for (unsigned i = 0; i < p.nr_domains; i++) {
        const plan_domain *pd = &p.domains[i];
        char uuid[40];
        record_ctx rc = {.name = pd->name,
                         .uuid = uuid,
                         .mode = pd->mode,
                         .pass = 7,
                         .time = "2026-01-01T00:00:00Z",
                         .action = pd->mode == VN_MODE_AUTO ? "acted" : "advised",
                         .reason = "ok"};
        record_decision rec;
        snprintf(uuid, sizeof(uuid), "00000000-0000-0000-0000-%012u", i);
        record_decision_make(&t, &rc, pd, NULL, &rec);
        json_object_array_add(arr, record_decision_json(&t, &rec));
    }
    if (asprintf(&text, "%s\n", json_object_to_json_string_ext(arr, JSON_FLAGS)) >= 0) {
        tap_golden("demo-records.json", text);
        free(text);
    }
    json_object_put(arr);
    plan_clear(&p);
}

/* The exposition of a fixed host: counters, a pass histogram, two domains with two cells. */
static void golden_metrics(void)
{
    static const char *const names[] = {"web-1", "db \"main\""};
    static topology t; /* 2 MiB: off the stack */
    metrics_host h = {0};
    dom_state *doms[2];
    plan_cell cells[2] = {{.lower_tier = -1}, {.lower_tier = -1}};
    plan_domain pd = {.nr_cells = 2, .cells = cells};
    char err[256], *text = NULL;

    if (!CHECK(topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, &t, err, sizeof(err)) ==
                   0,
               "synthetic 2-node topology (%s)", err))
        return;
    for (unsigned i = 0; i < 2; i++) {
        dom_state *st = fixture_metrics_dom(names[i], i, i ? VN_MODE_ADVISE : VN_MODE_AUTO);
        if (!st)
            return;
        st->count.bytes_moved = 4096 * 3 * i;
        st->count.pages_moved = 3 * i;
        st->count.pins = 2;
        doms[i] = st;
    }
    h.connected = true;
    h.passes = 7;
    h.last_pass_unix = 1767225600;
    cells[0].reason = REASON_NONE;
    cells[0].rules = RULE_BIT(RULE_EARLY_MIGRATION) | RULE_BIT(RULE_LOCALITY);
    cells[1].reason = REASON_ALREADY_LOCAL;
    cells[1].rules = RULE_BIT(RULE_LOCALITY);
    metrics_count_plan(&h, &pd);
    metrics_count_action(&h, "acted");
    h.skips[METRICS_SKIP_PAUSED] = 4;
    h.errors[METRICS_ERR_SAMPLE] = 1;
    metrics_observe(&h.pass_seconds, 0.003);
    metrics_observe(&h.pass_seconds, 0.2);
    if (CHECK(metrics_render(&h, &t, doms, 2, 100, &text) == 0 && text, "the exposition renders"))
        tap_golden("metrics.prom", text);
    free(text);
    for (unsigned i = 0; i < 2; i++)
        free(doms[i]);
}

int main(void)
{
    golden_plans();
    golden_demo();
    golden_metrics();
    return tap_done();
}
