/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl snapshot` on the fake host (fakehost.h), QMP on: every running domain, opted in or
 * not, is read without a monitor command and nothing changes (no pin, no page, no record of a
 * domain that did not opt in); the reply is a snapshot the parser takes against the host's
 * topology, in which a domain that did not opt in is in mode advise, busy fractions measured
 * over a window, and hugetlbfs cells counted; the decide stage advises on it. The same on the
 * real stack: tests/e2e/snapshot.sh.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_drive.h"
#include "decide.h"
#include "snapshot.h"
#include "tap.h"

#define CELL_MIB   64
#define CELL_PAGES (CELL_MIB * 256ULL)

static unsigned monitor_calls(fake_dom *fd)
{
    return fake_dom_calls(fd, FAKE_QMP) + fake_dom_calls(fd, FAKE_HMP);
}

static const snap_domain *find(const snapshot *s, const char *name)
{
    for (unsigned i = 0; i < s->nr_domains; i++)
        if (strcmp(s->domains[i].name, name) == 0)
            return &s->domains[i];
    return NULL;
}

static void test_snapshot(void)
{
    daemon_config cfg;
    fake_dom *a, *u, *e;
    char buf[32], err[512] = "";
    static ctl_call call = {.request = "{\"command\":\"snapshot\"}\n"};
    pthread_t th;

    fake_host_config(&cfg);
    cfg.use_qmp = true;
    a = fake_dom_add("fake-auto", 4, AUTO);
    fake_dom_memory(a, 2, CELL_MIB, 1);
    fake_dom_set_busy(a, 1.0);
    u = fake_dom_add("fake-untracked", 4, NULL); /* never opted in */
    fake_dom_memory(u, 2, CELL_MIB, 1);
    fake_dom_hugetlbfs(u);
    fake_dom_set_busy(u, 0.5);
    fake_dom_set_pin(u, 0, "2");
    e = fake_dom_add("fake-equal", 2, NULL);
    fake_dom_memory(e, 2, CELL_MIB, 0);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();

    unsigned m_a = monitor_calls(a), moves = fake_move_calls();
    char pins_u[4][32];
    for (unsigned v = 0; v < 4; v++)
        snprintf(pins_u[v], sizeof(pins_u[v]), "%s", fake_dom_pin(u, v, buf, sizeof(buf)));
    ctl_begin(&call, &th);
    CHECK(run_until(ctl_done, &call) && strstr(call.reply, "\"return\""),
          "snapshot: vnumad answers (%.120s)", call.reply);
    pthread_join(th, NULL);

    CHECK(monitor_calls(u) == 0 && monitor_calls(e) == 0 && monitor_calls(a) == m_a,
          "snapshot: no monitor command to any domain (%u, %u, %u more)", monitor_calls(u),
          monitor_calls(e), monitor_calls(a) - m_a);
    bool pins_same = true;
    for (unsigned v = 0; v < 4; v++)
        pins_same &= strcmp(pins_u[v], fake_dom_pin(u, v, buf, sizeof(buf))) == 0;
    char *state = fake_dom_state(u);
    CHECK(pins_same && fake_move_calls() == moves && !state &&
              fake_dom_pages_on(u, 0, 1) == CELL_PAGES,
          "snapshot: nothing changed: pins, pages, no <state> on the domain that did not opt in");
    free(state);

    struct json_object *reply = json_tokener_parse(call.reply), *ret = NULL, *snap = NULL;
    snapshot s = {0};
    int r = -1;
    if (reply && json_object_object_get_ex(reply, "return", &ret) &&
        json_object_object_get_ex(ret, "snapshot", &snap)) {
        const char *text = json_object_to_json_string(snap);
        r = snap_parse(text, strlen(text), "snapshot", dm.topo, &s, err, sizeof(err));
    }
    CHECK(r == 0, "snapshot: the reply's snapshot parses against the host topology (%s)", err);
    const snap_domain *da = find(&s, "fake-auto"), *du = find(&s, "fake-untracked"),
                      *de = find(&s, "fake-equal");
    CHECK(s.nr_domains == 3 && da && du && de && strcmp(s.domains[0].name, "fake-auto") == 0,
          "snapshot: every running domain, opted in or not, by name (%u)", s.nr_domains);
    CHECK(da && du && de && da->mode == VN_MODE_AUTO && du->mode == VN_MODE_ADVISE &&
              de->mode == VN_MODE_ADVISE,
          "snapshot: the tracked domain's mode, advise for those that did not opt in");
    CHECK(du && !du->busy_unmeasured && du->nr_cells == 2 && du->cells[0].nr_vcpus == 2 &&
              du->cells[0].vcpus[0].busy > 0.4 && du->cells[0].vcpus[0].busy < 0.6 &&
              cpuset_first(&du->cells[0].vcpus[0].pinned) == 2,
          "snapshot: its cells from the XML, busy measured over a window (%.2f), its pins",
          du && du->nr_cells ? du->cells[0].vcpus[0].busy : -1.0);
    CHECK(du && du->cells[0].pages[1] == CELL_PAGES && du->cells[1].pages[1] == CELL_PAGES,
          "snapshot: hugetlbfs cells counted: 64 MiB each on node 1");
    CHECK(de && de->nr_cells == 2 && de->cells[0].pages[0] == 0 &&
              strstr(call.reply, "which is which only QEMU's monitor tells"),
          "snapshot: equal anonymous cells left uncounted, and the reply says why");

    plan p = {0};
    if (r == 0) {
        r = decide(dm.topo, &s, &cfg.decide, &p);
        CHECK(r == 0 && p.nr_domains == 3, "snapshot: the decide stage advises on it (r=%d)", r);
        plan_clear(&p);
    }
    snapshot_clear(&s);
    json_object_put(reply);

    /* a domain that stops while it is read is left out, with the reason, and the rest stand */
    static ctl_call again = {.request = "{\"command\":\"snapshot\"}\n"};
    fake_dom_fail(e, FAKE_VCPUS, -ESRCH);
    ctl_begin(&again, &th);
    CHECK(run_until(ctl_done, &again) &&
              strstr(again.reply, "\"left_out\":[{\"name\":\"fake-equal\"") &&
              strstr(again.reply, "\"name\":\"fake-untracked\""),
          "snapshot: a domain gone while it is read is left out, the others are in");
    pthread_join(th, NULL);
    fake_dom_fail(e, FAKE_VCPUS, 0);

    /* a domain pinned where vnumad's topology has no CPU (CPU 6 of a host it sees 0-3 of)
     * cannot be a snapshot entry: it is left out with the parser's reason, and the file
     * stays one vnumad --advise takes */
    static ctl_call third = {.request = "{\"command\":\"snapshot\"}\n"};
    fake_dom_set_pin(e, 0, "6");
    ctl_begin(&third, &th);
    bool answered = run_until(ctl_done, &third);
    pthread_join(th, NULL);
    snapshot s3 = {0};
    err[0] = '\0';
    reply = answered ? json_tokener_parse(third.reply) : NULL;
    r = -1;
    if (reply && json_object_object_get_ex(reply, "return", &ret) &&
        json_object_object_get_ex(ret, "snapshot", &snap)) {
        const char *text = json_object_to_json_string(snap);
        r = snap_parse(text, strlen(text), "snapshot", dm.topo, &s3, err, sizeof(err));
    }
    CHECK(r == 0 && s3.nr_domains == 2 && !find(&s3, "fake-equal") &&
              strstr(third.reply, "\"left_out\":[{\"name\":\"fake-equal\",\"reason\":\"not a "
                                  "valid snapshot entry: "),
          "snapshot: a domain pinned outside the topology is left out with the reason; the rest "
          "parses (%s)",
          err);
    snapshot_clear(&s3);
    json_object_put(reply);
    stop();
}

int main(void)
{
    fake_host_init(&host);
    test_snapshot();
    return tap_done();
}
