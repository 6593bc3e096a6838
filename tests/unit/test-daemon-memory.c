/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Guest memory through whole passes on the fake host (fakehost.h), QMP on: vnumad learns each
 * domain's vCPU threads, cells and RAM from the fake QEMU's monitor and /proc, counts where
 * its pages are and moves them with the fake move_pages(2). A cell that must leave the node
 * its memory is on takes its memory with it; a node without room receives none, and never
 * drops below its reserve, even when it fills up between the decision and the move; a restart
 * moves nothing; a monitor that does not answer skips the
 * domain until it does. The same on the real stack: tests/e2e/ and the proving ground.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "daemon_drive.h"
#include "domains.h"
#include "holds.h"
#include "mover.h"
#include "ramlayout.h"
#include "tap.h"

#define CELL_MIB   64
#define CELL_PAGES (CELL_MIB * 256ULL) /* 4 KiB pages */
#define MIB        (1ULL << 20)
#define RESERVE    (256 * MIB) /* reserve_mib's default (3% of 8 GiB is less) */

static void config_qmp(daemon_config *cfg)
{
    fake_host_config(cfg);
    cfg->use_qmp = true;
}

/* a busy guest with two cells of 64 MiB, all of it on host node 1 */
static fake_dom *two_cells_on_node1(const char *name)
{
    fake_dom *fd = fake_dom_add(name, 4, AUTO);

    fake_dom_memory(fd, 2, CELL_MIB, 1);
    fake_dom_set_busy(fd, 1.0);
    return fd;
}

/* the pages of both cells on node 0 */
static uint64_t pages_on_node0(fake_dom *fd)
{
    return fake_dom_pages_on(fd, 0, 0) + fake_dom_pages_on(fd, 1, 0);
}

/* the cell (0 or 1) whose pages are all on node 0 now, -1 none */
static int cell_on_node0(fake_dom *fd)
{
    for (unsigned c = 0; c < 2; c++)
        if (fake_dom_pages_on(fd, c, 0) == CELL_PAGES)
            return (int)c;
    return -1;
}

static bool one_cell_moved(void *fd)
{
    return cell_on_node0(fd) >= 0;
}

/* The vCPUs of cell c (1 and 2 of each: the fake QEMU splits them in order) pinned to cpus. */
static bool cell_pinned(fake_dom *fd, int c, const char *cpus)
{
    char buf[32];

    for (unsigned v = (unsigned)c * 2; v < (unsigned)c * 2 + 2; v++)
        if (strcmp(fake_dom_pin(fd, v, buf, sizeof(buf)), cpus) != 0)
            return false;
    return true;
}

/* Four busy vCPUs in two cells, all on node 1's two CPUs: one cell goes to node 0, its memory
 * with it (every page), and the other stays; the passes after move nothing. */
static void test_cell_takes_its_memory(void)
{
    daemon_config cfg;
    fake_dom *a;
    char action[32], reason[64];
    int moved;

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-mem");
    start(&cfg);
    CHECK(run_until(one_cell_moved, a), "moves: one cell's 64 MiB all moved to node 0");
    (void)run_until(settled, NULL);
    moved = cell_on_node0(a);
    CHECK(moved >= 0 && fake_dom_pages_on(a, 1 - moved, 1) == CELL_PAGES,
          "moves: the other cell's memory stays on node 1");
    CHECK(moved >= 0 && cell_pinned(a, moved, "0-1") && cell_pinned(a, 1 - moved, "2-3"),
          "moves: each cell's vCPUs are pinned to its memory's node");
    CHECK(last_decision(a, action, sizeof(action), reason, sizeof(reason)) &&
              strcmp(action, "acted") == 0,
          "moves: its <state> says the pass acted (%s, %s)", action, reason);
    unsigned calls = fake_move_calls();
    pass();
    pass();
    CHECK(fake_move_calls() == calls && cell_on_node0(a) == moved,
          "moves: the next passes move nothing (%u move calls)", fake_move_calls() - calls);

    /* a restart (restore_on_exit: the pins are put back, the memory stays) moves nothing:
     * the vCPUs go back to their memory */
    stop_vnumad();
    CHECK(all_pins_are(a, "0-3") && cell_on_node0(a) == moved,
          "restart: vnumad stopped, pins restored, memory where it was");
    calls = fake_move_calls();
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pass();
    CHECK(fake_move_calls() == calls, "restart: no page moved in the first passes (%u move calls)",
          fake_move_calls() - calls);
    CHECK(moved >= 0 && cell_pinned(a, moved, "0-1") && cell_pinned(a, 1 - moved, "2-3"),
          "restart: each cell's vCPUs pinned to its memory again");
    stop();
}

/* At each vCPU pin of the act stage: whether the mover had been given (or had worked) an order
 * by then, and which vCPUs were pinned to node 0 already; the pin numbered fail_at fails
 * (-EAGAIN, transient) in the first pass. */
typedef struct pin_watch {
    unsigned n, fail_at;
    bool ordered[4];
    char pinned[4][8]; /* vCPU v pinned to node 0 ('1') or not ('0') */
} pin_watch;

static void watch_pin(fake_dom *fd, fake_call call, void *arg)
{
    pin_watch *w = arg;
    mover_stats ms;
    char buf[32];

    (void)call;
    mover_get_stats(dm.movers, &ms);
    if (w->n < 4) {
        w->ordered[w->n] = ms.orders > 0 || ms.bytes_moved > 0 || fake_move_calls() > 0;
        for (unsigned v = 0; v < 4; v++)
            w->pinned[w->n][v] = strcmp(fake_dom_pin(fd, v, buf, sizeof(buf)), "0-1") ? '0' : '1';
    }
    fake_dom_fail(fd, FAKE_PIN_VCPU, w->n == w->fail_at ? -EAGAIN : 0);
    w->n++;
}

/* A cell's memory is ordered right after its own vCPUs are pinned, and the cells whose memory
 * moves are pinned first: the mover starts while the other cells are pinned, never before the
 * cell's own pins, and a pin that fails orders nothing more. The fake QEMU gives vCPUs 0-1 to
 * cell 0 and 2-3 to cell 1; one of the two cells goes to node 0 with its memory. */
static void test_order_after_own_pins(void)
{
    daemon_config cfg;
    fake_dom *a;
    pin_watch w = {.fail_at = 4};
    int moved;
    bool done;

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-order");
    fake_dom_hook(a, FAKE_PIN_VCPU, watch_pin, &w);
    start(&cfg);
    done = run_until(one_cell_moved, a);
    CHECK(done && w.n == 4, "order: the first pass pinned 4 vCPUs (%u)", w.n);
    moved = cell_on_node0(a);
    CHECK(moved >= 0 && !w.ordered[0] && !w.ordered[1],
          "order: nothing was ordered before the first two pins");
    CHECK(moved >= 0 && w.pinned[2][2 * moved] == '1' && w.pinned[2][2 * moved + 1] == '1' &&
              w.ordered[2] && w.ordered[3],
          "order: cell %d (it moves) was pinned first and its memory ordered before the other "
          "cell's pins (pinned to node 0 at the third pin: %.4s)",
          moved, w.pinned[2]);
    stop();

    /* the first pin of the cell that moves fails, then the first of the other cell's: nothing
     * moves in the first case, the moving cell's memory in the second, and the next pass
     * pins what was left and moves the rest */
    for (unsigned fail_at = 0; fail_at <= 2; fail_at += 2) {
        pin_watch f = {.fail_at = fail_at};
        char name[32];
        snprintf(name, sizeof(name), "fake-order-fail%u", fail_at);
        config_qmp(&cfg);
        a = two_cells_on_node1(name);
        fake_dom_hook(a, FAKE_PIN_VCPU, watch_pin, &f);
        start(&cfg);
        (void)run_until(first_pass_done, NULL);
        uint64_t on0 = pages_on_node0(a);
        unsigned pinned = 0;
        for (unsigned v = 0; f.n >= 1 && f.n <= 4 && v < 4; v++)
            pinned += f.pinned[f.n - 1][v] == '1'; /* at the last pin call */
        if (fail_at == 0)
            CHECK(on0 == 0 && fake_move_calls() == 0 && f.n == 1,
                  "order, the moving cell's pin fails: nothing moved, nothing else pinned (%llu "
                  "pages on node 0, %u pin calls)",
                  (unsigned long long)on0, f.n);
        else
            CHECK(on0 == CELL_PAGES && f.n == 3 && pinned == 2,
                  "order, the other cell's pin fails: the moving cell (pinned) moved all its "
                  "memory (%llu pages on node 0, %u pin calls)",
                  (unsigned long long)on0, f.n);
        pass();
        moved = cell_on_node0(a);
        CHECK(moved >= 0 && fake_dom_pages_on(a, (unsigned)(1 - moved), 1) == CELL_PAGES &&
                  cell_pinned(a, moved, "0-1") && cell_pinned(a, 1 - moved, "2-3"),
              "order, a pin failed: the next pass pinned both cells and one cell's memory all "
              "moved");
        stop();
    }
}

/* A new domain's first pass counts where its pages are while its CPU time window runs: the
 * sample that closes the window takes those counts and queries no page (one count sooner to
 * the first decision). Its memory is where its vCPUs fit, so nothing moves (no mover query). */
static void test_counts_in_window(void)
{
    daemon_config cfg;
    fake_dom *a;
    unsigned total, at_wait;
    char action[32], reason[64];

    config_qmp(&cfg);
    a = fake_dom_add("fake-window", 2, AUTO);
    fake_dom_memory(a, 1, CELL_MIB, 0);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    CHECK(run_until(first_pass_done, NULL), "window: the first pass ran");
    fake_query_calls(&total, &at_wait);
    CHECK(at_wait > 0 && total == at_wait,
          "window: its pages were counted before the window closed (%u queries), none after "
          "(%u)",
          at_wait, total - at_wait);
    CHECK(last_decision(a, action, sizeof(action), reason, sizeof(reason)) &&
              strcmp(reason, "ok") == 0 && fake_dom_pages_on(a, 0, 0) == CELL_PAGES,
          "window: the first pass decided on them (%s, %s), its memory stays", action, reason);
    stop();
}

/* The page queries vnumad made for the domain so far. */
static uint64_t scans_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];
    const dom_state *st;

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) && (st = domains_find(&dm, uuid))
               ? st->count.memory_scans
               : 0;
}

/* A settled domain's pages are counted after longer and longer waits (sample.h), and at the
 * next pass when QEMU's resident memory changed by more than 2% of the guest's RAM since the
 * last count (the guest touched memory, which lands where the kernel puts it). */
static void test_recount_on_rss(void)
{
    daemon_config cfg;
    fake_dom *a;
    uint64_t s0;

    config_qmp(&cfg);
    a = fake_dom_add("fake-rss", 2, AUTO);
    fake_dom_memory(a, 1, CELL_MIB, 0);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    CHECK(run_until(first_pass_done, NULL), "rss: the first pass ran");
    for (int i = 0; i < 8; i++) /* counted at passes 2, 4 and 8: the next waits 8 passes */
        pass();
    s0 = scans_of(a);
    pass();
    CHECK(scans_of(a) == s0, "rss: settled, a pass reuses the counts (%" PRIu64 " queries)",
          scans_of(a) - s0);
    fake_dom_touch(a, CELL_MIB * 1024 / 100); /* 1% of its RAM */
    pass();
    CHECK(scans_of(a) == s0, "rss: 1%% more resident memory counts nothing (%" PRIu64 " queries)",
          scans_of(a) - s0);
    fake_dom_touch(a, CELL_MIB * 1024 / 10); /* 10% more */
    pass();
    CHECK(scans_of(a) > s0,
          "rss: 10%% more resident memory counts at the next pass (%" PRIu64 " queries)",
          scans_of(a) - s0);
    pass(); /* the waits start again from one pass */
    s0 = scans_of(a);
    pass();
    CHECK(scans_of(a) == s0, "rss: then settled again (%" PRIu64 " queries)", scans_of(a) - s0);
    stop();
}

/* The node the cell would move to has no room (less free than its reserve): not a page moves
 * there. With a little room above the reserve, only what fits moves, and the node never
 * drops below the reserve. */
static void test_no_room(void)
{
    daemon_config cfg;
    fake_dom *a;

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-full");
    fake_node_set_free(0, RESERVE - 16 * MIB);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pass();
    CHECK(fake_dom_pages_on(a, 0, 0) == 0 && fake_dom_pages_on(a, 1, 0) == 0 &&
              fake_move_calls() == 0,
          "no room: nothing moved to a node below its reserve (%u move calls)", fake_move_calls());
    stop();

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-tight");
    fake_node_set_free(0, RESERVE + 24 * MIB);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pass();
    uint64_t on0 = pages_on_node0(a);
    CHECK(on0 > 0 && on0 < CELL_PAGES, "tight: part of a cell moved (%llu of %llu pages)",
          (unsigned long long)on0, (unsigned long long)CELL_PAGES);
    CHECK(fake_node_min_free(0) >= RESERVE,
          "tight: node 0 never went below its reserve (lowest %llu MiB free)",
          (unsigned long long)(fake_node_min_free(0) / MIB));
    stop();
}

/* someone else takes node 0's memory down to 4 MiB above the reserve (once) */
static void fill_node0(fake_dom *fd, fake_call call, void *arg)
{
    bool *done = arg;

    (void)fd, (void)call;
    if (!*done)
        fake_node_set_free(0, RESERVE + 4 * MIB);
    *done = true;
}

/* Node 0 had room when the pass decided, and fills up before the pages move (vnumad pins the
 * vCPUs first): the mover checks the node before every window and stops at the reserve. */
static void test_fills_up(void)
{
    daemon_config cfg;
    fake_dom *a;
    bool filled = false;

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-fills");
    fake_dom_hook(a, FAKE_PIN_VCPU, fill_node0, &filled);
    start(&cfg);
    (void)run_until(settled, NULL);
    fake_dom_hook(a, FAKE_PIN_VCPU, NULL, NULL);
    uint64_t on0 = pages_on_node0(a);
    CHECK(filled && on0 < CELL_PAGES, "fills up: the move stopped short (%llu of %llu pages moved)",
          (unsigned long long)on0, (unsigned long long)CELL_PAGES);
    CHECK(fake_node_min_free(0) >= RESERVE,
          "fills up: node 0 never went below its reserve (lowest %llu MiB free)",
          (unsigned long long)(fake_node_min_free(0) / MIB));
    stop();
}

static bool move_held(void *arg)
{
    (void)arg;
    return holds_active();
}

static bool mover_empty(void *arg)
{
    mover_stats ms;

    (void)arg;
    mover_get_stats(dm.movers, &ms);
    return ms.orders == 0;
}

static bool mode_advise(void *arg)
{
    (void)arg;
    return dm.nr_doms == 1 && dm.doms[0]->cfg.mode == VN_MODE_ADVISE;
}

static bool passes_after(void *arg)
{
    return dm.pass >= *(uint64_t *)arg;
}

/* The mover works between passes, and nothing waits for it: with a move parked between two
 * windows (a test hold), passes still run, sample, decide and write their records, and the
 * memory moves on once it is let go. */
static void test_loop_never_waits(void)
{
    daemon_config cfg;
    fake_dom *a;
    uint64_t want;

    config_qmp(&cfg);
    cfg.test_holds = true;
    cfg.decide.move_threads = cfg.decide.move_threads_max = 1; /* the one mover thread parks */
    a = two_cells_on_node1("fake-async");
    start(&cfg);
    CHECK(holds_arm(HOLD_MOVE, NULL) == 0, "async: a hold armed between two windows of a move");
    CHECK(run_until(move_held, NULL), "async: the mover moved a window and parked");
    unsigned on0 = (unsigned)pages_on_node0(a);
    want = dm.pass + 2;
    for (int i = 0; i < 2; i++) {
        fake_clock_advance(5.0);
        daemon_pass_now(&dm);
    }
    CHECK(run_until(passes_after, &want) && holds_active() && on0 > 0 && on0 < CELL_PAGES,
          "async: two more passes ran while the move was parked (pass %llu, %u pages moved)",
          (unsigned long long)dm.pass, on0);
    (void)holds_release();
    CHECK(run_until(one_cell_moved, a), "async: let go, the cell's memory all moved");
    stop();
}

/* The most any cell of a status reply has queued in the mover (mover_left_bytes). */
static uint64_t queued_in_reply(const char *reply)
{
    const char *key = "\"mover_left_bytes\":";
    uint64_t most = 0;

    for (const char *p = strstr(reply, key); p; p = strstr(p + 1, key)) {
        uint64_t v = strtoull(p + strlen(key), NULL, 10);
        most = v > most ? v : most;
    }
    return most;
}

/* A busy domain's move started and parked between two windows (a test hold; one mover
 * thread, so nothing else moves meanwhile). */
static fake_dom *start_move_parked(const char *name, const char *what)
{
    daemon_config cfg;
    fake_dom *a;

    config_qmp(&cfg);
    cfg.test_holds = true;
    cfg.decide.move_threads = cfg.decide.move_threads_max = 1;
    a = two_cells_on_node1(name);
    start(&cfg);
    (void)holds_arm(HOLD_MOVE, NULL);
    CHECK(run_until(move_held, NULL), "%s: a move parked between two windows", what);
    return a;
}

/* `vnumactl pause` while a move is under way: what was queued for the domain goes, and nothing
 * more of its memory moves; `vnumactl status` shows the mover's queue. */
static void test_pause_drops(void)
{
    fake_dom *a;
    char reply[16384];

    a = start_move_parked("fake-paused", "pause");
    CHECK(ctl("{\"command\":\"status\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"mover\":{\"orders\":1,"),
          "pause: status shows one cell's order in the mover's queue");
    CHECK(queued_in_reply(reply) > 0 && strstr(reply, "\"eta_s\":") &&
              !strstr(reply, "\"eta_s\":null"),
          "pause: status shows the bytes queued for a cell (%llu) and when they are moved",
          (unsigned long long)queued_in_reply(reply));
    CHECK(ctl("{\"command\":\"pause\",\"domain\":\"fake-paused\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"paused\":true"),
          "pause: vnumactl pause answered");
    uint64_t on0 = pages_on_node0(a);
    (void)holds_release();
    (void)run_until(settled, NULL);
    CHECK(pages_on_node0(a) == on0 && on0 < CELL_PAGES,
          "pause: nothing moved after it (%llu pages on node 0 before and after)",
          (unsigned long long)on0);
    CHECK(ctl("{\"command\":\"status\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"mover\":{\"orders\":0,"),
          "pause: the mover's queue is empty");
    stop();
}

/* The domain switched to advise while a move is under way: what was queued for it goes, and
 * nothing more of its memory moves (advise decides and records, it never acts). */
static void test_advise_drops(void)
{
    fake_dom *a;
    char reply[16384];

    a = start_move_parked("fake-advise", "advise");
    fake_dom_set_balancer(a, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"advise\"/>");
    fake_event_metadata(a);
    CHECK(run_until(mode_advise, NULL), "advise: vnumad read the new mode");
    CHECK(mover_empty(NULL), "advise: the mover's queue is empty (the move is still parked)");
    uint64_t on0 = pages_on_node0(a);
    (void)holds_release();
    (void)run_until(settled, NULL);
    pass();
    pass();
    CHECK(pages_on_node0(a) == on0 && on0 < CELL_PAGES,
          "advise: nothing moved after it (%llu pages on node 0 before and after)",
          (unsigned long long)on0);
    CHECK(ctl("{\"command\":\"status\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"mover\":{\"orders\":0,"),
          "advise: status shows the mover's queue empty");
    stop();
}

#define ADVISE "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"advise\"/>"

/* Monitor commands vnumad sent the domain (QMP and HMP). */
static unsigned monitor_calls(fake_dom *fd)
{
    return fake_dom_calls(fd, FAKE_QMP) + fake_dom_calls(fd, FAKE_HMP);
}

/* From `vnumactl status`: the bytes of guest cell `cell` of domain `name` on host node `node`
 * (-1: no such cell), and its memory_error ("" none) into err. */
static int64_t status_cell_bytes(const char *name, unsigned cell, unsigned node, char *err,
                                 size_t errlen)
{
    static char reply[65536];
    struct json_object *j, *doms, *cells, *v;
    int64_t bytes = -1;
    char key[16];

    err[0] = '\0';
    if (!ctl("{\"command\":\"status\"}", reply, sizeof(reply)) || !(j = json_tokener_parse(reply)))
        return -1;
    if (json_object_object_get_ex(j, "return", &v))
        doms = json_object_object_get_ex(v, "domains", &doms) ? doms : NULL;
    else
        doms = json_object_object_get_ex(j, "domains", &doms) ? doms : NULL;
    for (size_t i = 0; doms && i < json_object_array_length(doms); i++) {
        struct json_object *d = json_object_array_get_idx(doms, i), *n, *e;
        if (!json_object_object_get_ex(d, "name", &n) ||
            strcmp(json_object_get_string(n), name) != 0)
            continue;
        if (json_object_object_get_ex(d, "memory_error", &e) && e)
            snprintf(err, errlen, "%s", json_object_get_string(e));
        if (!json_object_object_get_ex(d, "cells", &cells))
            break;
        for (size_t k = 0; k < json_object_array_length(cells); k++) {
            struct json_object *c = json_object_array_get_idx(cells, k), *id, *mem, *b;
            snprintf(key, sizeof(key), "%u", node);
            /* a node the cell has neither memory nor vCPUs on is left out: 0 bytes */
            if (json_object_object_get_ex(c, "cell", &id) && json_object_get_int(id) == (int)cell &&
                json_object_object_get_ex(c, "memory", &mem))
                bytes = json_object_object_get_ex(mem, key, &b) ? json_object_get_int64(b) : 0;
        }
    }
    json_object_put(j);
    return bytes;
}

/* A domain vnumad only advises on is never sent a monitor command, which libvirt marks as a
 * taint of the domain: its cells come from the live XML, its RAM from QEMU's maps. Cells named
 * there (hugetlbfs files) are counted; equal anonymous cells cannot be told apart and say so.
 * An auto domain beside them is asked (so the count can tell); a domain switched from advise
 * to auto is asked from then on, and one switched back no more. */
static void test_advise_untainted(void)
{
    daemon_config cfg;
    fake_dom *a, *h, *e;
    char err[256];

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-auto");
    h = fake_dom_add("fake-adv-huge", 4, ADVISE);
    fake_dom_memory(h, 2, CELL_MIB, 1);
    fake_dom_hugetlbfs(h);
    fake_dom_set_busy(h, 1.0);
    e = fake_dom_add("fake-adv-equal", 4, ADVISE);
    fake_dom_memory(e, 2, CELL_MIB, 1);
    fake_dom_set_busy(e, 1.0);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pass();
    CHECK(monitor_calls(h) == 0 && monitor_calls(e) == 0 && monitor_calls(a) > 0,
          "advise: no monitor command to the two advise domains (%u, %u), %u to the auto one",
          monitor_calls(h), monitor_calls(e), monitor_calls(a));
    int64_t c0 = status_cell_bytes("fake-adv-huge", 0, 1, err, sizeof(err));
    int64_t c1 = status_cell_bytes("fake-adv-huge", 1, 1, err, sizeof(err));
    CHECK(c0 == (int64_t)CELL_MIB * (int64_t)MIB && c1 == c0 && !err[0],
          "advise: hugetlbfs cells counted from maps, 64 MiB each on node 1 (%lld, %lld%s%s)",
          (long long)c0, (long long)c1, err[0] ? ": " : "", err);
    c0 = status_cell_bytes("fake-adv-equal", 0, 1, err, sizeof(err));
    CHECK(c0 == 0 && strstr(err, "which is which only QEMU's monitor tells"),
          "advise: equal anonymous cells are left uncounted and status says why (%lld: %s)",
          (long long)c0, err);
    CHECK(fake_dom_pages_on(h, 0, 1) == CELL_PAGES && fake_dom_pages_on(e, 0, 1) == CELL_PAGES,
          "advise: no page of theirs moved");

    fake_dom_set_balancer(e, AUTO);
    fake_event_metadata(e);
    pass();
    pass();
    unsigned asked = monitor_calls(e);
    CHECK(asked > 0, "advise -> auto: the domain is asked from then on (%u)", asked);
    fake_dom_set_balancer(e, ADVISE);
    fake_event_metadata(e);
    pass();
    pass();
    unsigned then = monitor_calls(e);
    pass();
    pass();
    CHECK(monitor_calls(e) == then, "auto -> advise: no more monitor commands (%u then %u)", then,
          monitor_calls(e));
    stop();
}

static bool hung(void *fd)
{
    return fake_dom_hung(fd);
}

/* QEMU's monitor hangs while vnumad finds the guest's cells: the domain is skipped as not
 * answering and nothing of it moves; another domain is placed meanwhile. Once the monitor
 * answers, the domain is placed and its memory moves. */
static void test_monitor_hangs(void)
{
    daemon_config cfg;
    fake_dom *a, *b;
    uint64_t skipped;

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-hangs");
    b = fake_dom_add("fake-other", 2, AUTO);
    fake_dom_memory(b, 0, CELL_MIB, 0);
    fake_dom_set_busy(b, 1.0);
    fake_dom_hang(a, FAKE_QMP);
    start(&cfg);
    CHECK(run_until(hung, a), "monitor hangs: vnumad's query to it hangs");
    (void)run_until(settled, NULL);
    skipped = dm.stats.skips[METRICS_SKIP_NOT_ANSWERING];
    CHECK(skipped >= 1, "monitor hangs: the domain is skipped as not answering (%llu)",
          (unsigned long long)skipped);
    CHECK(pinned_to_one_node(b) && fake_move_calls() == 0,
          "monitor hangs: the other domain is placed meanwhile, nothing moved");
    fake_dom_release(a);
    /* the worker the monitor held ends on a real thread: waited for before the passes are
     * counted (under load the four passes ran while it was still ending: seen once) */
    (void)run_until(settled, NULL);
    for (int i = 0; i < 4 && !one_cell_moved(a); i++) {
        pass();
        (void)run_until(settled, NULL);
    }
    CHECK(one_cell_moved(a), "monitor hangs: once it answers, a cell and its memory move");
    stop();
}

/* vnumactl advise while libvirt runs a job on the domain (a migration): as a pass, no monitor
 * command is sent (it would go behind or into the job's); the client hears Busy. Before, advise
 * sampled through the monitor whatever libvirt was doing. */
static void test_advise_job(void)
{
    daemon_config cfg;
    fake_dom *a;
    char reply[4096];

    config_qmp(&cfg);
    a = two_cells_on_node1("fake-job");
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    fake_dom_set_job(a, true);
    ramlayout_stale(&domains_find_by_name(&dm, "fake-job")->sample); /* the next sample asks */
    unsigned before = monitor_calls(a);
    CHECK(ctl("{\"command\":\"advise\",\"domain\":\"fake-job\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"Busy\"") && strstr(reply, "runs a job"),
          "advise during a job: Busy, with the reason (%.160s)", reply);
    CHECK(monitor_calls(a) == before, "advise during a job: no monitor command (%u then %u)",
          before, monitor_calls(a));
    fake_dom_set_job(a, false);
    CHECK(ctl("{\"command\":\"advise\",\"domain\":\"fake-job\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"return\""),
          "advise after the job: the plan (%.80s)", reply);
    stop();
}

/* A QEMU that reports another domain's vCPU thread as its own (its replies are QEMU's word, and
 * QEMU is what an escaped guest owns) is not believed: its domain is not sampled, nothing of it is
 * pinned or moved, and the other domain (not opted in) is never asked anything. A status file
 * under its name that names another domain is refused the same way. Before the check, vnumad took
 * the thread, sampled it and pinned it with sched_setaffinity(2). */
static void test_foreign_threads(void)
{
    daemon_config cfg;
    fake_dom *evil, *victim;
    unsigned pins;

    config_qmp(&cfg);
    victim = fake_dom_add("fake-victim", 2, NULL);
    fake_dom_memory(victim, 0, CELL_MIB, 1);
    evil = two_cells_on_node1("fake-evil");
    fake_dom_report_tid(evil, 1, victim, 0);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    CHECK(dm.stats.skips[METRICS_SKIP_SAMPLE_FAILED] >= 1 &&
              dm.stats.errors[METRICS_ERR_SAMPLE] >= 1,
          "a foreign thread id: the sample is refused (%llu failed samples)",
          (unsigned long long)dm.stats.skips[METRICS_SKIP_SAMPLE_FAILED]);
    pins = fake_dom_calls(evil, FAKE_PIN_VCPU) + fake_dom_calls(evil, FAKE_PIN_EMULATOR);
    CHECK(pins == 0 && fake_move_calls() == 0 && all_pins_are(evil, "0-3") &&
              all_pins_are(victim, "0-3"),
          "a foreign thread id: nothing pinned (%u pin calls) or moved (%u move calls)", pins,
          fake_move_calls());
    CHECK(fake_dom_calls(victim, FAKE_QMP) == 0 && fake_dom_calls(victim, FAKE_PIN_VCPU) == 0,
          "a foreign thread id: the other domain is not asked or touched");
    stop();

    config_qmp(&cfg);
    victim = fake_dom_add("fake-victim", 2, NULL);
    fake_dom_memory(victim, 0, CELL_MIB, 1);
    evil = two_cells_on_node1("fake-evil");
    fake_dom_forge_status(evil, victim);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pins = fake_dom_calls(evil, FAKE_PIN_VCPU) + fake_dom_calls(evil, FAKE_PIN_EMULATOR);
    CHECK(dm.stats.skips[METRICS_SKIP_SAMPLE_FAILED] >= 1 && pins == 0 && fake_move_calls() == 0,
          "a status file naming another domain: not sampled, nothing pinned (%u) or moved (%u)",
          pins, fake_move_calls());
    stop();
}

/* A QEMU in a PID namespace of its own (a KubeVirt pod's) reports its vCPU threads' ids as its
 * namespace has them: vnumad takes each as the thread of that QEMU that has the id there (NSpid,
 * nspid.h), samples and pins it, and moves its memory, as any domain's. Reporting a thread id
 * none of its threads has there (the id of another domain's thread here) is refused as above. */
static void test_own_pid_namespace(void)
{
    daemon_config cfg;
    fake_dom *pod, *victim;
    dom_state *st;
    unsigned pins;
    bool here = true;

    config_qmp(&cfg);
    pod = two_cells_on_node1("fake-pod");
    fake_dom_pidns(pod, 100);
    start(&cfg);
    CHECK(run_until(one_cell_moved, pod),
          "own PID namespace: sampled and balanced, one cell's memory moved to node 0");
    (void)run_until(settled, NULL);
    st = domains_find_by_name(&dm, "fake-pod");
    for (unsigned v = 0; st && v < 4; v++)
        here &= st->sample.vcpu_tid[v] > 4194304; /* the fake host's ids, not 101..104 */
    CHECK(st && st->sample.ns_other && here,
          "own PID namespace: its vCPU threads are known by their ids here (%d, not 101)",
          st ? (int)st->sample.vcpu_tid[0] : -1);
    int moved = cell_on_node0(pod);
    CHECK(moved >= 0 && cell_pinned(pod, moved, "0-1") && cell_pinned(pod, 1 - moved, "2-3") &&
              dm.stats.errors[METRICS_ERR_SAMPLE] == 0,
          "own PID namespace: each cell's vCPUs pinned to its memory's node, no failed sample");
    stop();

    config_qmp(&cfg);
    victim = fake_dom_add("fake-victim", 2, NULL);
    fake_dom_memory(victim, 0, CELL_MIB, 1);
    pod = two_cells_on_node1("fake-pod");
    fake_dom_pidns(pod, 100);
    fake_dom_report_tid(pod, 1, victim, 0);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    pins = fake_dom_calls(pod, FAKE_PIN_VCPU) + fake_dom_calls(pod, FAKE_PIN_EMULATOR);
    CHECK(dm.stats.skips[METRICS_SKIP_SAMPLE_FAILED] >= 1 && pins == 0 && fake_move_calls() == 0 &&
              all_pins_are(victim, "0-3"),
          "own PID namespace, another domain's thread id reported: not sampled, nothing pinned "
          "(%u) or moved (%u)",
          pins, fake_move_calls());
    stop();
}

int main(void)
{
    fake_host_init(&host);
    test_cell_takes_its_memory();
    test_order_after_own_pins();
    test_counts_in_window();
    test_recount_on_rss();
    test_no_room();
    test_fills_up();
    test_loop_never_waits();
    test_pause_drops();
    test_advise_drops();
    test_advise_untainted();
    test_monitor_hangs();
    test_foreign_threads();
    test_own_pid_namespace();
    test_advise_job();
    return tap_done();
}
