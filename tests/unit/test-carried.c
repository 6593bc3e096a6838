/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What travels in the source's last decision record (host/carried.c): each cell's busy vCPUs
 * and hottest ranges, written by record.c and read back on the next host; and what a forged
 * or broken record can say (nothing out of bounds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carried.h"
#include "decide-fixture.h"
#include "record.h"
#include "tap.h"

#define MIB (1024ULL * 1024)

/* A record's JSON with the cells text `cells`. */
static const char *rec(const char *cells)
{
    static char buf[8192];
    snprintf(buf, sizeof(buf), "{\"domain\":\"d\",\"action\":\"none\",\"cells\":[%s]}", cells);
    return buf;
}

static void test_round_trip(const topology *t)
{
    snap_hot_range hot[6] = {
        {.gpa = 64 * MIB, .length = 2 * MIB, .heat = 0.9},
        {.gpa = 80 * MIB, .length = 4 * MIB, .heat = 0.8, .shared = true},
        {.gpa = 90 * MIB, .length = 4 * MIB, .heat = 0.7, .fading = true},
        {.gpa = 96 * MIB, .length = 4 * MIB, .heat = 0.6},
        {.gpa = 100 * MIB, .length = 4 * MIB, .heat = 0.5},
        {.gpa = 110 * MIB, .length = 4 * MIB, .heat = 0.4},
    };
    snap_cell cells[2] = {{.id = 0}, {.id = 1, .nr_hot = 6, .hot = hot}};
    snap_domain sd = {.nr_cells = 2, .cells = cells};
    plan_cell pc[2] = {{.cell_id = 0,
                        .target_node = 0,
                        .current_node = 0,
                        .lower_tier = -1,
                        .candidate_node = -1,
                        .busy_vcpus = 2},
                       {.cell_id = 1,
                        .target_node = 1,
                        .current_node = 1,
                        .lower_tier = -1,
                        .candidate_node = -1,
                        .busy_vcpus = 0}};
    plan_domain pd = {.nr_cells = 2, .cells = pc};
    record_ctx rc = {.name = "d",
                     .uuid = "u",
                     .time = "t",
                     .action = "none",
                     .reason = "ok",
                     .sd = &sd,
                     .hints_carried = true};
    record_decision r;
    struct json_object *o;
    carried_info *c = calloc(1, sizeof(*c));

    record_decision_make(t, &rc, &pd, NULL, &r);
    o = record_decision_json(t, &r);
    CHECK(o && c, "a record with hot ranges made");
    if (!o || !c) {
        free(c);
        return;
    }
    carried_parse(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), c);
    CHECK(strstr(json_object_to_json_string(o), "\"hints\": \"carried\"") != NULL,
          "the record says its hot ranges were carried");
    CHECK(c->cells[0].busy_vcpus == 2 && c->cells[1].busy_vcpus == 0 && c->busy_known,
          "busy vCPUs per cell read back (%d, %d)", c->cells[0].busy_vcpus, c->cells[1].busy_vcpus);
    CHECK(c->cells[0].nr_hot == 0 && c->cells[1].nr_hot == CARRIED_HOT_PER_CELL &&
              c->nr_hot == CARRIED_HOT_PER_CELL,
          "the hottest %u ranges of cell 1 travel, none of cell 0 (%u, %u)", CARRIED_HOT_PER_CELL,
          c->cells[0].nr_hot, c->cells[1].nr_hot);
    CHECK(c->cells[1].hot[0].gpa == 64 * MIB && c->cells[1].hot[0].length == 2 * MIB &&
              c->cells[1].hot[0].heat == 0.9 && c->cells[1].hot[1].shared &&
              !c->cells[1].hot[0].shared,
          "... hottest first, with their heat and sharing");
    CHECK(c->cells[1].hot[2].gpa == 96 * MIB && c->cells[1].hot[3].gpa == 100 * MIB,
          "... a fading range (hot only in the set before) does not travel");
    json_object_put(o);
    free(c);
}

static void test_forged(void)
{
    carried_info *c = calloc(1, sizeof(*c));
    char many[4096];
    size_t used = 0;

    if (!c)
        return;
    carried_parse(rec("{\"cell\":0,\"busy_vcpus\":1,\"hot\":["
                      "{\"gpa\":4097,\"length\":4096,\"heat\":0.5},"
                      "{\"gpa\":8192,\"length\":0,\"heat\":0.5},"
                      "{\"gpa\":8192,\"length\":100,\"heat\":0.5},"
                      "{\"gpa\":4503599627366400,\"length\":8192,\"heat\":0.5},"
                      "{\"gpa\":-4096,\"length\":4096,\"heat\":0.5},"
                      "{\"gpa\":8192,\"length\":4096,\"heat\":1.5},"
                      "{\"gpa\":8192,\"length\":4096,\"heat\":\"hot\"},"
                      "{\"gpa\":8192,\"length\":4096},"
                      "[8192,4096,0.5],"
                      "{\"gpa\":12288,\"length\":4096,\"heat\":1}]}"),
                  c);
    CHECK(c->cells[0].nr_hot == 1 && c->cells[0].hot[0].gpa == 12288 && c->cells[0].busy_vcpus == 1,
          "unaligned, empty, past the 52-bit limit, negative, too hot, untyped ranges say "
          "nothing; the valid one stays (%u)",
          c->cells[0].nr_hot);
    carried_parse(rec("{\"cell\":0,\"busy_vcpus\":5},{\"cell\":0,\"busy_vcpus\":7},"
                      "{\"cell\":64,\"busy_vcpus\":1},{\"cell\":-1,\"busy_vcpus\":1},"
                      "{\"cell\":1,\"busy_vcpus\":100000}"),
                  c);
    CHECK(c->cells[0].busy_vcpus == 5 && c->cells[1].busy_vcpus == -1,
          "a cell twice: the first; a cell id out of range or a busy count over the bound says "
          "nothing");
    for (int i = 0; i < 40; i++)
        used += (size_t)snprintf(many + used, sizeof(many) - used,
                                 "%s{\"gpa\":%d,\"length\":4096,"
                                 "\"heat\":0.1}",
                                 i ? "," : "", (i + 1) * 4096);
    char cells[4200];
    snprintf(cells, sizeof(cells), "{\"cell\":2,\"hot\":[%s]}", many);
    carried_parse(rec(cells), c);
    CHECK(c->cells[2].nr_hot == CARRIED_HOT_PER_CELL && c->nr_hot == CARRIED_HOT_PER_CELL,
          "40 ranges of one cell: %u kept", c->cells[2].nr_hot);
    carried_parse("{\"cells\":[{\"cell\":0,\"busy_vcpus\":1}", c);
    CHECK(!c->busy_known && c->nr_hot == 0 && c->cells[0].busy_vcpus == -1,
          "a record that does not parse says nothing");
    carried_parse("{\"cells\":[],\"cells\":[{\"cell\":0,\"busy_vcpus\":1}]}", c);
    CHECK(!c->busy_known, "a record with a key twice says nothing");
    carried_parse(NULL, c);
    CHECK(!c->busy_known && !c->nr_hot, "no record says nothing");
    free(c);
}

int main(void)
{
    topology *t = load_synth("pack:2 numa:1 l3:1 core:2 pu:1");

    test_round_trip(t);
    test_forged();
    topo_free(t);
    return tap_done();
}
