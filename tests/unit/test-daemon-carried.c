/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Hot ranges that travel with live migration, through whole passes on the fake host
 * (fakehost.h), QMP on: an arrival's live <state> carries the source vnumad's last decision
 * record, whose cells list their hottest followed ranges ("hot"); vnumad here reads them on
 * arrival (arrival.c, carried.c), its first passes follow them as hints of its own
 * (pass.c pass_submit_sample, hints.c hints_apply_carried; "hints": "carried" in the records),
 * a range outside the cell's guest RAM is ignored, and they go once the guest agent's first
 * hint set came or after the passes a young domain waits for one (hints_await_passes).
 * docs/records.md. The fake host has no guest agent: it gives a domain the agent's channel
 * with the port closed (vnumad waits for hints and opens nothing), and the test puts a hint
 * set where the agent link's callback puts it (st->guest.hints).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "clock.h"
#include "daemon_drive.h"
#include "domains.h"
#include "hints.h"
#include "metadata.h"
#include "record.h"
#include "tap.h"
#include "util.h"

#define MIB        (1ULL << 20)
#define CELL_MIB   64
#define CELL_PAGES (CELL_MIB * 256ULL) /* 4 KiB pages */
/* the fake QEMU's guest RAM: cell c at [c x 64 MiB, (c + 1) x 64 MiB) (fakehost_qemu.c) */
#define CELL1_GPA (CELL_MIB * MIB)

/* A hot range of the source's record, and whether it is in its cell's guest RAM here. */
typedef struct hot_case {
    uint64_t gpa, length;
    const char *heat;
    bool inside;
} hot_case;

/* cell 1's hot ranges as the source's record lists them: two inside cell 1's RAM, one past
 * every cell's RAM and one in cell 0's (both forged: the text is the tenant's to write) */
static const hot_case CELL1_HOT[] = {
    {1024 * MIB, 4 * MIB, "1.0", false},
    {CELL1_GPA + 8 * MIB, 4 * MIB, "0.9", true},
    {16 * MIB, 1 * MIB, "0.8", false},
    {CELL1_GPA + 32 * MIB, 2 * MIB, "0.5", true},
};
#define NR_INSIDE 2
/* the agent's own hot range of cell 1 (its first hint set) */
#define AGENT_GPA (CELL1_GPA + 48 * MIB)
#define AGENT_LEN (1 * MIB)

/* The source host's last decision record (as it travels in <state>'s <decision>), cell 1 with
 * `hot` (false: no "hot" key) into buf. */
static void source_record(bool hot, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(
        buf, len,
        "{\"domain\":\"fake-carried\",\"pass\":41,\"mode\":\"auto\",\"action\":\"none\","
        "\"reason\":\"ok\",\"cells\":[{\"cell\":0,\"node\":0,\"target\":0,\"reason\":\"none\","
        "\"busy_vcpus\":2},{\"cell\":1,\"node\":1,\"target\":1,\"reason\":\"none\","
        "\"busy_vcpus\":2");

    for (size_t i = 0; hot && i < VN_ARRAY_SIZE(CELL1_HOT) && used < len; i++)
        used += (size_t)snprintf(
            buf + used, len - used, "%s{\"gpa\":%" PRIu64 ",\"length\":%" PRIu64 ",\"heat\":%s}",
            i ? "," : ",\"hot\":[", CELL1_HOT[i].gpa, CELL1_HOT[i].length, CELL1_HOT[i].heat);
    if (used < len)
        snprintf(buf + used, len - used, "%s}],\"bytes_moved\":0}", hot ? "]" : "");
}

/* vnumad's state of the domain (NULL: not tracked). */
static dom_state *state_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) ? domains_find(&dm, uuid) : NULL;
}

/* The JSON of the domain's last decision record (NULL: none); the caller puts it. */
static struct json_object *record_json(fake_dom *fd)
{
    const dom_state *st = state_of(fd);

    return st && st->publish.last_record ? record_decision_json(dm.topo, st->publish.last_record)
                                         : NULL;
}

/* The record in the domain's live <state>, as the next host reads it (NULL: none); the caller
 * puts it. */
static struct json_object *state_record(fake_dom *fd)
{
    _cleanup_free_ char *state = fake_dom_state(fd);
    _cleanup_free_ char *json = state ? meta_state_decision(state) : NULL;

    return json ? json_tokener_parse(json) : NULL;
}

/* The record's cell `cell` (NULL: none). */
static struct json_object *record_cell_of(struct json_object *rec, unsigned cell)
{
    struct json_object *cells, *c, *id;

    if (!rec || !json_object_object_get_ex(rec, "cells", &cells))
        return NULL;
    for (size_t i = 0; i < json_object_array_length(cells); i++) {
        c = json_object_array_get_idx(cells, i);
        if (json_object_object_get_ex(c, "cell", &id) && json_object_get_int(id) == (int)cell)
            return c;
    }
    return NULL;
}

/* The record says "hints": "carried". */
static bool says_carried(struct json_object *rec)
{
    struct json_object *v;

    return rec && json_object_object_get_ex(rec, "hints", &v) &&
           strcmp(json_object_get_string(v), "carried") == 0;
}

/* Whether the record has a "hints" key at all. */
static bool has_hints_key(struct json_object *rec)
{
    return rec && json_object_object_get_ex(rec, "hints", NULL);
}

/* The hot ranges cell `cell` of the record lists (-1: no such cell). */
static int nr_hot(struct json_object *rec, unsigned cell)
{
    struct json_object *c = record_cell_of(rec, cell), *hot;

    if (!c)
        return -1;
    return json_object_object_get_ex(c, "hot", &hot) ? (int)json_object_array_length(hot) : 0;
}

/* Whether cell `cell` of the record lists the range [gpa, gpa + length). */
static bool lists_hot(struct json_object *rec, unsigned cell, uint64_t gpa, uint64_t length)
{
    struct json_object *c = record_cell_of(rec, cell), *hot, *g, *l;

    if (!c || !json_object_object_get_ex(c, "hot", &hot))
        return false;
    for (size_t i = 0; i < json_object_array_length(hot); i++) {
        struct json_object *h = json_object_array_get_idx(hot, i);
        if (json_object_object_get_ex(h, "gpa", &g) && json_object_object_get_ex(h, "length", &l) &&
            (uint64_t)json_object_get_uint64(g) == gpa &&
            (uint64_t)json_object_get_uint64(l) == length)
            return true;
    }
    return false;
}

/* Whether cell `cell` of the record has rule `rule` in its rules. */
static bool cell_rule(struct json_object *rec, unsigned cell, const char *rule)
{
    struct json_object *c = record_cell_of(rec, cell), *rules;

    if (!c || !json_object_object_get_ex(c, "rules", &rules))
        return false;
    for (size_t i = 0; i < json_object_array_length(rules); i++)
        if (strcmp(json_object_get_string(json_object_array_get_idx(rules, i)), rule) == 0)
            return true;
    return false;
}

/* Cell `cell`'s reason in the record ("" none). */
static const char *cell_reason(struct json_object *rec, unsigned cell)
{
    struct json_object *c = record_cell_of(rec, cell), *r;

    return c && json_object_object_get_ex(c, "reason", &r) ? json_object_get_string(r) : "";
}

/* Cell `cell`'s "bytes_planned" in the record (0 none). */
static uint64_t cell_planned(struct json_object *rec, unsigned cell)
{
    struct json_object *c = record_cell_of(rec, cell), *b;

    return c && json_object_object_get_ex(c, "bytes_planned", &b) ? json_object_get_uint64(b) : 0;
}

/* The first page of the domain vnumad moved is in the carried range `hc`. */
static bool moved_first(fake_dom *fd, const hot_case *hc, uint64_t *gpa)
{
    *gpa = UINT64_MAX;
    return fake_dom_first_moved(fd, gpa) && *gpa >= hc->gpa && *gpa < hc->gpa + hc->length;
}

/* Pages of the domain's two cells on node 0. */
static uint64_t pages_on_node0(fake_dom *fd)
{
    return fake_dom_pages_on(fd, 0, 0) + fake_dom_pages_on(fd, 1, 0);
}

/* The incoming domain: 4 busy vCPUs in two cells of 64 MiB, all on host node 1 (its two CPUs
 * cannot run them: a cell leaves, with its memory), with the agent's channel (port closed) when
 * `channel`; it arrives by live migration with a <state> whose <decision> is `record` (NULL:
 * a <state> without one). */
static fake_dom *arrive(const char *record, bool channel)
{
    char *state = NULL;
    fake_dom *a;

    a = fake_dom_add("fake-carried", 4, AUTO);
    fake_dom_memory(a, 2, CELL_MIB, 1);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_agent_channel(a, channel);
    if (meta_format_state(NULL, NULL, 41, "2026-01-01T00:00:00Z", record, &state) < 0)
        abort();
    fake_dom_set_state(a, state);
    free(state);
    arrive_migrated(a);
    return a;
}

static void start_qmp(void)
{
    daemon_config cfg;

    fake_host_config(&cfg);
    cfg.use_qmp = true;
    start(&cfg);
}

static void dump(const char *what, fake_dom *fd)
{
    struct json_object *rec = record_json(fd);

    if (getenv("VN_TEST_DEBUG"))
        printf("# %s: %s\n", what, rec ? json_object_to_json_string(rec) : "(no record)");
    json_object_put(rec);
}

/*
 * The arrival's first pass follows cell 1's carried ranges that are in its RAM (the record
 * says "hints": "carried" and lists them, not the forged ones), and a cell that moves takes its
 * hot ranges first (hot-first); with no agent, after the passes a young domain waits for one
 * the ranges are dropped.
 */
static void test_carried_followed(void)
{
    char record[4096];
    struct json_object *rec;
    fake_dom *a;
    unsigned await, carried_passes;

    start_qmp();
    await = hints_await_passes(dm.cfg.interval_s);
    source_record(true, record, sizeof(record));
    a = arrive(record, false);
    CHECK(state_of(a) && state_of(a)->carried && state_of(a)->carried->nr_hot == 4,
          "arrival: vnumad took the source's 4 hot ranges of cell 1 (%u)",
          state_of(a) && state_of(a)->carried ? state_of(a)->carried->nr_hot : 0);
    pass();
    dump("first pass", a);
    rec = record_json(a);
    CHECK(says_carried(rec), "first pass: its record says \"hints\": \"carried\"");
    bool inside = true, forged = false;
    for (size_t i = 0; i < VN_ARRAY_SIZE(CELL1_HOT); i++) {
        bool listed = lists_hot(rec, 1, CELL1_HOT[i].gpa, CELL1_HOT[i].length);
        inside &= !CELL1_HOT[i].inside || listed;
        forged |= !CELL1_HOT[i].inside && listed;
    }
    CHECK(inside && nr_hot(rec, 1) == NR_INSIDE,
          "first pass: cell 1's record lists the %d carried ranges in its RAM (%d listed)",
          NR_INSIDE, nr_hot(rec, 1));
    CHECK(!forged, "first pass: ... not the forged ones (past every cell's RAM, in cell 0's)");
    CHECK(nr_hot(rec, 0) == 0, "first pass: cell 0 has no hot range (%d)", nr_hot(rec, 0));
    /* the two busy cells do not fit on node 1's two CPUs: cell 1 goes to node 0 with its
     * memory, the carried hot ranges first */
    uint64_t gpa;
    bool first = moved_first(a, &CELL1_HOT[1], &gpa);
    CHECK(fake_dom_pages_on(a, 1, 0) == CELL_PAGES && cell_rule(rec, 1, "hot-first"),
          "first pass: cell 1 moved to node 0 with its memory (%llu of %llu pages), its hot "
          "ranges first (hot-first)",
          (unsigned long long)fake_dom_pages_on(a, 1, 0), (unsigned long long)CELL_PAGES);
    CHECK(first,
          "first pass: the first page moved is in the hottest carried range of its RAM (guest "
          "0x%" PRIx64 ", range 0x%" PRIx64 "+0x%" PRIx64 ")",
          gpa, CELL1_HOT[1].gpa, CELL1_HOT[1].length);
    json_object_put(rec);
    /* what the next host reads: the record in the live <state> */
    rec = state_record(a);
    CHECK(says_carried(rec) && lists_hot(rec, 1, CELL1_HOT[1].gpa, CELL1_HOT[1].length) &&
              lists_hot(rec, 1, CELL1_HOT[3].gpa, CELL1_HOT[3].length) &&
              nr_hot(rec, 1) == NR_INSIDE,
          "first pass: the record in its live <state> lists them too (they travel on)");
    json_object_put(rec);
    carried_passes = 1;
    for (unsigned k = 1; k < await + 2; k++) {
        pass();
        rec = record_json(a);
        if (says_carried(rec) && carried_passes == k)
            carried_passes++;
        json_object_put(rec);
    }
    dump("later", a);
    rec = record_json(a);
    CHECK(carried_passes == await && !says_carried(rec) && state_of(a) && !state_of(a)->carried,
          "no agent: the carried ranges are followed %u passes (hints_await_passes), then "
          "dropped (%u passes said carried)",
          await, carried_passes);
    json_object_put(rec);
    /* the next host must not take the ranges this one dropped as they aged (nor read that they
     * are followed): the live <state> says so too, not at the next heartbeat */
    rec = state_record(a);
    CHECK(rec && !says_carried(rec) && nr_hot(rec, 1) == 0,
          "no agent: once dropped, the record in its live <state> no longer says carried nor "
          "lists them (%s, %d hot ranges)",
          says_carried(rec) ? "carried" : "not carried", nr_hot(rec, 1));
    json_object_put(rec);
    stop();
}

/* How an arrival with the agent's channel (port closed) came: with the source's hot ranges, a
 * record without any, or no record. */
typedef struct wait_case {
    const char *what;
    bool record, hot;
} wait_case;

/*
 * A young domain with the agent's channel waits for its agent's first hint set before its
 * memory moves (hints-pending: a cold start, the hot set goes home first); the hot ranges it
 * carried are such a set: its memory moves at once, hot ranges first.
 */
static void test_no_wait_with_carried(void)
{
    static const wait_case cases[] = {
        {"carried ranges", true, true},
        {"a record without hot ranges", true, false},
        {"no record", false, false},
    };

    for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        const wait_case *wc = &cases[i];
        char record[4096];
        struct json_object *rec;
        fake_dom *a;

        start_qmp();
        source_record(wc->hot, record, sizeof(record));
        a = arrive(wc->record ? record : NULL, true);
        pass();
        dump(wc->what, a);
        rec = record_json(a);
        int moved = fake_dom_pages_on(a, 0, 0) == CELL_PAGES   ? 0
                    : fake_dom_pages_on(a, 1, 0) == CELL_PAGES ? 1
                                                               : -1;
        if (wc->hot) {
            CHECK(says_carried(rec) && nr_hot(rec, 1) == NR_INSIDE,
                  "%s: the first pass follows them (\"hints\": \"carried\", %d hot ranges)",
                  wc->what, nr_hot(rec, 1));
            CHECK(moved >= 0 && pages_on_node0(a) == CELL_PAGES,
                  "%s: no wait for the agent: a cell's memory moved in the first pass (cell %d, "
                  "%llu pages on node 0)",
                  wc->what, moved, (unsigned long long)pages_on_node0(a));
            uint64_t gpa;
            bool first = moved_first(a, &CELL1_HOT[1], &gpa);
            CHECK(moved == 1 && cell_rule(rec, 1, "hot-first") && first,
                  "%s: cell 1 moved its carried hot ranges first (hot-first; first page moved: "
                  "guest 0x%" PRIx64 ")",
                  wc->what, gpa);
        } else {
            CHECK(rec && !has_hints_key(rec) && nr_hot(rec, 0) == 0 && nr_hot(rec, 1) == 0,
                  "%s: no \"hints\" in the record, no hot range", wc->what);
            CHECK(pages_on_node0(a) == 0 && fake_move_calls() == 0 && cell_planned(rec, 0) == 0 &&
                      cell_planned(rec, 1) == 0,
                  "%s: the first pass pins the vCPUs, the memory waits for the agent (%llu pages "
                  "on node 0, %u move calls)",
                  wc->what, (unsigned long long)pages_on_node0(a), fake_move_calls());
            json_object_put(rec);
            pass();
            rec = record_json(a);
            CHECK(pages_on_node0(a) == 0 && fake_move_calls() == 0 &&
                      strcmp(cell_reason(rec, 1), "hints-pending") == 0,
                  "%s: the second pass too: cell 1 (on node 0, its memory on node 1) says %s",
                  wc->what, cell_reason(rec, 1));
        }
        json_object_put(rec);
        stop();
    }
}

/* The agent's first hint set, as the agent link's callback leaves it (domains.c on_agent_hints):
 * one process whose threads ran on cell 1's vCPUs (2 and 3), hot in one range of cell 1. */
static void agent_hints(dom_state *st)
{
    proto_hints *h = calloc(1, sizeof(*h));
    proto_process *p = calloc(1, sizeof(*p));
    proto_range *r = calloc(1, sizeof(*r));
    uint32_t *v = calloc(2, sizeof(*v));

    if (!h || !p || !r || !v || st->guest.hints)
        abort();
    v[0] = 2;
    v[1] = 3;
    *r = (proto_range){.gpa = AGENT_GPA, .length = AGENT_LEN, .heat = PROTO_MAX_HEAT};
    *p = (proto_process){
        .pid = 100, .comm = "db", .vcpus = v, .nr_vcpus = 2, .ranges = r, .nr_ranges = 1};
    *h = (proto_hints){.seq = 1, .uptime_ms = 60000, .processes = p, .nr_processes = 1};
    st->guest.hints = h;
    st->guest.hints_at_s = vn_mono_s();
}

/*
 * Once the agent's first hint set came, the domain follows it, not the ranges it carried: the
 * record no longer says "carried", and lists the agent's range (the carried ones fade).
 */
static void test_agent_takes_over(void)
{
    char record[4096];
    struct json_object *rec;
    fake_dom *a;
    dom_state *st;

    start_qmp();
    source_record(true, record, sizeof(record));
    a = arrive(record, true);
    pass();
    rec = record_json(a);
    CHECK(says_carried(rec), "agent: the first pass follows the carried ranges");
    json_object_put(rec);
    st = state_of(a);
    if (st)
        agent_hints(st);
    pass();
    dump("agent", a);
    rec = record_json(a);
    CHECK(rec && !says_carried(rec) && st && !st->carried,
          "agent: with its first hint set the record no longer says carried, the carried ranges "
          "are dropped");
    CHECK(lists_hot(rec, 1, AGENT_GPA, AGENT_LEN) && nr_hot(rec, 1) == 1,
          "agent: cell 1 lists the agent's hot range only (%d)", nr_hot(rec, 1));
    json_object_put(rec);
    stop();
}

int main(void)
{
    fake_host_init(&host);
    test_carried_followed();
    test_no_wait_with_carried();
    test_agent_takes_over();
    return tap_done();
}
