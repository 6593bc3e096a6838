/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An arrival the qemu hook placed, through whole passes on the fake host (fakehost.h), QMP on:
 * the hook wrote a <memnode mode='preferred'> of the node it put each cell's memory on and a
 * <placed host> stamped with this host's machine id (hookxml.h); vnumad adopts it
 * (domains.c adopt_placed, "arrival": "placed" in its records) and takes that memnode as its
 * own placement, no binding (sample.c placed_binding): when load later takes the node, the
 * cell leaves with its memory. The same memnode the operator wrote (no <placed>, or another
 * host's) keeps the memory on its node (decide: numatune-preferred). docs/fleet.md, "Placement
 * before arrival". The arrival itself on the real stack: tests/e2e/migrate-hook.sh and the
 * proving ground's scenario 30 (tests/e2e/ground/migrate.py); the placed memory moving later
 * is checked only here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "daemon_drive.h"
#include "domains.h"
#include "metadata.h"
#include "record.h"
#include "tap.h"
#include "util.h"

#define CELL_MIB   64
#define CELL_PAGES (CELL_MIB * 256ULL) /* 4 KiB pages */
#define OTHER_HOST "ffffffffffffffffffffffffffffffff"
/* an incoming domain's guest cell 0 preferred on node 1, as the qemu hook writes it (hookxml.c
 * write_numatune) or an operator */
#define PREFERRED_NODE1 "<numatune><memnode cellid='0' mode='preferred' nodeset='1'/></numatune>"
/* the incoming domain yields to other domains (a priority below 0 is always applied) */
#define AUTO_YIELDS "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"auto\" priority=\"-1\"/>"
/* the load that comes later: a domain that may only use node 1 */
#define AUTO_NODE1 "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"auto\" nodes=\"1\"/>"

/* vnumad's state of the domain (NULL: not tracked). */
static const dom_state *state_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) ? domains_find(&dm, uuid) : NULL;
}

/* The domain's last decision record (NULL: none). */
static const record_decision *record_of(fake_dom *fd)
{
    const dom_state *st = state_of(fd);

    return st ? st->publish.last_record : NULL;
}

/* Whether vnumad took the domain as placed by the qemu hook here (adopt_placed). */
static bool adopted_placed(fake_dom *fd)
{
    const dom_state *st = state_of(fd);

    return st && st->placed.valid;
}

/* The incoming domain's vCPUs are on node 0, and its memory too when `memory`. */
static bool left_node1(fake_dom *fd, bool memory)
{
    return all_pins_are(fd, "0-1") && (!memory || fake_dom_pages_on(fd, 0, 0) == CELL_PAGES);
}

/* One way the preferred memnode of node 1 came with an incoming domain: the qemu hook here wrote
 * it (<placed> with this host's machine id), or the operator did (a <placed> of another host's
 * hook, or none). */
typedef struct placed_case {
    const char *what;
    bool placed; /* a <placed> in its <state> */
    bool here;   /* ... stamped with this host's machine id (else another host's) */
} placed_case;

/* The incoming domain: 2 busy vCPUs in one cell of 64 MiB, its memory and (live) pins where the
 * hook put them, on node 1; it arrives by live migration. */
static fake_dom *arrive_on_node1(const placed_case *pc)
{
    dom_placed p = {.valid = true, .nr = 1, .cells = {{.cell = 0, .node = 1, .memory = true}}};
    char *state = NULL;
    fake_dom *a;

    a = fake_dom_add("fake-placed", 2, AUTO_YIELDS);
    fake_dom_memory(a, 1, CELL_MIB, 1);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_pin(a, 0, "2-3");
    fake_dom_set_pin(a, 1, "2-3");
    fake_dom_set_numatune(a, PREFERRED_NODE1);
    if (pc->placed) {
        snprintf(p.host, sizeof(p.host), "%s", pc->here ? dm.host_id : OTHER_HOST);
        if (meta_format_state(NULL, &p, 0, NULL, NULL, &state) < 0)
            abort();
        fake_dom_set_state(a, state);
        free(state);
    }
    arrive_migrated(a);
    return a;
}

/*
 * The preferred <memnode> the qemu hook wrote for an incoming domain's cell is vnumad's own
 * placement (sample.c placed_binding), not the operator's wish that memory never leaves the
 * node: when load takes that node later, the cell goes elsewhere with its memory, as a cell
 * without a binding does. The same memnode the operator wrote (no <placed>, or another host's)
 * keeps the memory where it is: the vCPUs go, the memory stays (numatune-preferred).
 */
static void test_placed_memnode(void)
{
    static const placed_case cases[] = {
        {"placed here", true, true},
        {"placed by another host", true, false},
        {"the operator's", false, false},
    };

    for (size_t i = 0; i < VN_ARRAY_SIZE(cases); i++) {
        const placed_case *pc = &cases[i];
        const record_decision *r;
        daemon_config cfg;
        fake_dom *a, *b;
        char buf[32];

        fake_host_config(&cfg);
        cfg.use_qmp = true;
        start(&cfg);
        CHECK(dm.host_id[0], "%s: vnumad knows this host's machine id", pc->what);
        a = arrive_on_node1(pc);
        pass();
        pass();
        r = record_of(a);
        CHECK(adopted_placed(a) == pc->here && r && r->placed == pc->here && r->nr_cells == 1 &&
                  r->cells[0].placed_node == (pc->here ? 1 : -1),
              "%s: the arrival is %s placed by the hook (record: arrival %s, placed node %d)",
              pc->what, pc->here ? "taken as" : "not taken as", r && r->placed ? "placed" : "-",
              r && r->nr_cells ? r->cells[0].placed_node : -2);
        CHECK(fake_dom_pages_on(a, 0, 1) == CELL_PAGES && all_pins_are(a, "2-3") &&
                  fake_move_calls() == 0,
              "%s: alone, it stays where it came (node 1, %u move calls)", pc->what,
              fake_move_calls());

        /* load that may only use node 1 starts, ahead of the incoming domain */
        b = fake_dom_add("fake-load", 2, AUTO_NODE1);
        fake_dom_memory(b, 1, CELL_MIB, 1);
        fake_dom_set_busy(b, 1.0);
        fake_event_lifecycle(b, VIRT_EVENT_STARTED, false);
        (void)run_until(settled, NULL);
        /* vnumad moves the vCPUs when they no longer fit (the two-stage filter may hold them a
         * pass), and the memory with them when it may move */
        for (int k = 0; k < 6 && !left_node1(a, pc->here); k++)
            pass();
        CHECK(all_pins_are(a, "0-1") && all_pins_are(b, "2-3"),
              "%s: node 1 taken, its vCPUs go to node 0 (%s), the load's stay on node 1", pc->what,
              fake_dom_pin(a, 0, buf, sizeof(buf)));
        if (pc->here) {
            CHECK(fake_dom_pages_on(a, 0, 0) == CELL_PAGES,
                  "%s: its memory goes with them, as a cell without a binding (%llu of %llu pages "
                  "on node 0)",
                  pc->what, (unsigned long long)fake_dom_pages_on(a, 0, 0),
                  (unsigned long long)CELL_PAGES);
            unsigned calls = fake_move_calls();
            pass();
            pass();
            CHECK(fake_move_calls() == calls && left_node1(a, true),
                  "%s: the next passes move nothing, it stays on node 0 (%u move calls)", pc->what,
                  fake_move_calls() - calls);
        } else {
            pass();
            pass();
            r = record_of(a);
            CHECK(fake_dom_pages_on(a, 0, 1) == CELL_PAGES && fake_move_calls() == 0,
                  "%s: its memory stays on the preferred node (%llu of %llu pages on node 1, %u "
                  "move calls)",
                  pc->what, (unsigned long long)fake_dom_pages_on(a, 0, 1),
                  (unsigned long long)CELL_PAGES, fake_move_calls());
            CHECK(r && r->nr_cells == 1 && r->cells[0].reason == REASON_NUMATUNE_PREFERRED,
                  "%s: the record says why (%s)", pc->what,
                  r && r->nr_cells ? reason_name(r->cells[0].reason) : "no record");
        }
        stop();
    }
}

int main(void)
{
    fake_host_init(&host);
    test_placed_memnode();
    return tap_done();
}
