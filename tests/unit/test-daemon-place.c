/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The qemu hook's `place` on the fake host (fakehost.h), as the hook asks it over the control
 * socket: two arrivals placed in a row, with room on each node for one of them only, go to
 * different nodes (the first's room is promised to it, host/promise.h); the promise is released
 * once that domain arrived and a pass sampled it, when it stops (a failed migration), or after
 * PROMISE_EXPIRY_S of the fake clock; and a balancing pass counts the promised room as used.
 * Each waits for what it expects; none depends on how fast the machine is.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "daemon.h"
#include "fakehost.h"
#include "log.h"
#include "promise.h"
#include "tap.h"

#include "daemon_drive.h"

#define MIB     (1ULL << 20)
#define GIB     (1ULL << 30)
#define RESERVE (256 * MIB) /* reserve_mib's default (3% of 8 GiB is less) */

/* The node the cell of an incoming domain of mib MiB (no guest NUMA cells, 2 vCPUs, opted in)
 * is placed on, with its memory; -1 when its memory is not placed (no room), -2 when the
 * domain passes unchanged or no reply came. held_bytes (when not NULL) gets what the reply says
 * other promises held, all nodes. */
static int place(const char *uuid, const char *name, unsigned mib, uint64_t *held_bytes)
{
    char xml[2048], reply[65536];
    json_object *req = json_object_new_object(), *o = NULL, *ret, *cells, *c, *v;
    int node = -2;

    snprintf(xml, sizeof(xml),
             "<domain type='kvm'><name>%s</name><uuid>%s</uuid><metadata>"
             "<vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" mode=\"auto\"/></metadata>"
             "<memory unit='KiB'>%u</memory><vcpu placement='static'>2</vcpu>"
             "<os><type arch='x86_64' machine='pc'>hvm</type></os></domain>",
             name, uuid, mib * 1024);
    json_object_object_add(req, "command", json_object_new_string("place"));
    json_object_object_add(req, "xml", json_object_new_string(xml));
    if (!ctl(json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), reply, sizeof(reply)) ||
        !(o = json_tokener_parse(reply)) || !json_object_object_get_ex(o, "return", &ret) ||
        !json_object_object_get_ex(ret, "placed", &v) || !json_object_get_boolean(v) ||
        !json_object_object_get_ex(ret, "cells", &cells) || json_object_array_length(cells) != 1) {
        fprintf(stderr, "place %s: %s\n", name, reply);
        goto out;
    }
    c = json_object_array_get_idx(cells, 0);
    node = json_object_object_get_ex(c, "memory", &v) && json_object_get_boolean(v) &&
                   json_object_object_get_ex(c, "node", &v)
               ? json_object_get_int(v)
               : -1;
    if (held_bytes && json_object_object_get_ex(ret, "promised", &v)) {
        *held_bytes = 0;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *b;
            if (json_object_object_get_ex(json_object_array_get_idx(v, i), "bytes", &b))
                *held_bytes += (uint64_t)json_object_get_int64(b);
        }
    }
out:
    json_object_put(o);
    json_object_put(req);
    return node;
}

static const char *uuid_of(fake_dom *fd)
{
    static char buf[4][SNAP_UUID_MAX];
    static unsigned i;
    char *b = buf[i++ % 4];

    return fake_dom_uuid(fd, b, SNAP_UUID_MAX) ? b : "";
}

/* vnumad has the event that the domain's migration finished (the promise says so). */
static bool resumed(void *fd)
{
    const promise *p = promise_find(dm.promises, uuid_of(fd));

    return !p || p->arrived;
}

/* A domain of 2 GiB fits on a node with 3 GiB free (its reserve aside), two do not. */
static void room_for_one_each(void)
{
    fake_node_set_free(0, 3 * GIB);
    fake_node_set_free(1, 3 * GIB);
}

/* Two arrivals placed in a row go to different nodes; the first arrives (its migration
 * finishes) and a pass samples it: its room is no longer held, a third placement may take it. */
static void test_two_then_arrival(void)
{
    daemon_config cfg;
    fake_dom *a, *b;
    uint64_t held = 0;
    int na, nb, nc;

    fake_host_config(&cfg);
    room_for_one_each();
    start(&cfg);
    (void)run_until(first_pass_done, NULL);
    a = fake_dom_add("fake-a", 2, AUTO); /* (not known to vnumad: no event yet) */
    b = fake_dom_add("fake-b", 2, AUTO);
    na = place(uuid_of(a), "fake-a", 2048, &held);
    CHECK(na >= 0 && held == 0, "place: the first arrival gets a node with room (node %d)", na);
    nb = place(uuid_of(b), "fake-b", 2048, &held);
    CHECK(nb >= 0 && nb != na && held == 2 * GIB,
          "place: the second, placed before the first arrived, goes to the other node (node %d, "
          "%llu MiB held by the first)",
          nb, (unsigned long long)(held >> 20));
    nc = place("00000000-0000-4000-8000-0000000000cc", "fake-c", 2048, NULL);
    CHECK(nc == -1, "place: a third finds no room on either node (node %d)", nc);
    CHECK(place(uuid_of(a), "fake-a", 2048, &held) == na && held == 2 * GIB,
          "place: a new place of the first replaces its promise (not counted against it)");
    CHECK(promise_count(dm.promises) == 2, "place: two promises held (%u)",
          promise_count(dm.promises));

    /* a arrives by live migration: started, its memory coming, then it runs here */
    fake_dom_set_job(a, true);
    fake_event_lifecycle(a, VIRT_EVENT_STARTED, true);
    (void)run_until(is_tracked, a);
    (void)run_until(settled, NULL);
    unsigned sampled = fake_dom_calls(a, FAKE_VCPUS);
    pass();
    CHECK(fake_dom_calls(a, FAKE_VCPUS) > sampled && promise_find(dm.promises, uuid_of(a)),
          "arrival: while its migration runs its room stays held, though a pass sampled it");
    fake_dom_set_job(a, false);
    fake_event_lifecycle(a, VIRT_EVENT_RESUMED, true);
    (void)run_until(resumed, a);
    (void)run_until(settled, NULL);
    pass();
    CHECK(!promise_find(dm.promises, uuid_of(a)) && promise_find(dm.promises, uuid_of(b)),
          "arrival: once it runs here and a pass sampled it, its promise is released (b's stays)");
    /* (the fake host's free memory did not change: the room a held is free again) */
    nc = place("00000000-0000-4000-8000-0000000000cc", "fake-c", 2048, &held);
    CHECK(nc == na && held == 2 * GIB,
          "place: after the first arrived, a third sees its node's room again (node %d)", nc);
    stop();
}

/* A migration that fails: the domain stops here. */
static void test_stop(void)
{
    daemon_config cfg;
    fake_dom *a;
    int na, nc;

    fake_host_config(&cfg);
    room_for_one_each();
    start(&cfg);
    (void)run_until(first_pass_done, NULL);
    a = fake_dom_add("fake-a", 2, AUTO);
    na = place(uuid_of(a), "fake-a", 2048, NULL);
    (void)place("00000000-0000-4000-8000-0000000000bb", "fake-b", 2048, NULL);
    fake_event_lifecycle(a, VIRT_EVENT_STARTED, true);
    (void)run_until(is_tracked, a);
    (void)run_until(settled, NULL);
    fake_dom_stop(a); /* the migration failed: libvirt stops the incoming QEMU */
    fake_event_lifecycle(a, VIRT_EVENT_STOPPED, false);
    (void)run_until(not_tracked, a);
    nc = place("00000000-0000-4000-8000-0000000000cc", "fake-c", 2048, NULL);
    CHECK(na >= 0 && nc == na, "stop: the room of an arrival that stopped is free again (node %d)",
          nc);
    stop();
}

/* Arrivals that never come (a migration that failed before QEMU started here: no event says
 * so) hold their room PROMISE_EXPIRY_S, then it is free. */
static void test_expiry(void)
{
    daemon_config cfg;
    int nc;

    fake_host_config(&cfg);
    room_for_one_each();
    start(&cfg);
    (void)run_until(first_pass_done, NULL);
    (void)place("00000000-0000-4000-8000-0000000000aa", "fake-a", 2048, NULL);
    (void)place("00000000-0000-4000-8000-0000000000bb", "fake-b", 2048, NULL);
    fake_clock_advance(PROMISE_EXPIRY_S - 1);
    pass_after(0); /* a pass meanwhile: it counts them, they stay */
    CHECK(place("00000000-0000-4000-8000-0000000000cc", "fake-c", 2048, NULL) == -1,
          "expiry: not before PROMISE_EXPIRY_S");
    fake_clock_advance(1);
    nc = place("00000000-0000-4000-8000-0000000000cc", "fake-c", 2048, NULL);
    CHECK(nc >= 0 && promise_count(dm.promises) == 1,
          "expiry: after PROMISE_EXPIRY_S the room of those that never came is free (node %d)", nc);
    stop();
}

/* A pass moves no memory into room promised to an arrival: a busy guest of two 64 MiB cells
 * crowded on node 1 gets a cell's vCPUs on node 0, whose free memory above its reserve is
 * all promised to a domain on its way. */
static void test_pass_counts_promises(void)
{
    daemon_config cfg;
    fake_dom *a;

    fake_host_config(&cfg);
    cfg.use_qmp = true;
    start(&cfg);
    (void)run_until(first_pass_done, NULL);
    a = fake_dom_add("fake-crowded", 4, AUTO);
    fake_dom_memory(a, 2, 64, 1);
    fake_dom_set_busy(a, 1.0);
    /* node 0: 512 MiB above its reserve and slack, node 1: none */
    fake_node_set_free(0, RESERVE + RESERVE_SLACK_BYTES + 512 * MIB);
    fake_node_set_free(1, RESERVE);
    CHECK(place("00000000-0000-4000-8000-0000000000aa", "fake-coming", 512, NULL) == 0,
          "pass: an arrival of 512 MiB is placed on node 0, the only room");
    fake_event_lifecycle(a, VIRT_EVENT_STARTED, false);
    (void)run_until(is_tracked, a);
    (void)run_until(settled, NULL);
    pass();
    pass();
    CHECK(fake_dom_pages_on(a, 0, 0) == 0 && fake_dom_pages_on(a, 1, 0) == 0 &&
              fake_move_calls() == 0,
          "pass: no page of the crowded guest moved into the promised room (%u move calls)",
          fake_move_calls());
    stop();
}

int main(void)
{
    fake_host_init(&host);
    log_set_level(getenv("VN_TEST_DEBUG") ? 7 : 3);
    test_two_then_arrival();
    test_stop();
    test_expiry();
    test_pass_counts_promises();
    return tap_done();
}
