/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of record_continues() (host/record.c): when a pass is "moving" rather than "acted". */
#include <string.h>

#include "record.h"
#include "tap.h"

/* A previous record: cells 0 and 1 with targets t0 and t1 (topology node indexes). */
static record_decision last_rec(const char *action, int t0, int t1)
{
    record_decision r;
    memset(&r, 0, sizeof(r));
    snprintf(r.action, sizeof(r.action), "%s", action);
    r.nr_cells = 2;
    r.cells[0] = (record_cell){.cell = 0, .target = t0, .lower_tier = -1};
    r.cells[1] = (record_cell){.cell = 1, .target = t1, .lower_tier = -1};
    return r;
}

int main(void)
{
    plan_move mv = {.from_node = 3, .to_node = 1, .bytes = 1 << 20};
    plan_pin pin = {.vcpu = 0};
    plan_cell cells[2] = {
        {.cell_id = 0, .target_node = 1, .lower_tier = -1, .nr_moves = 1, .moves = &mv},
        {.cell_id = 1, .target_node = 2, .lower_tier = -1}, /* nothing to do this pass */
    };
    plan_domain pd = {.nr_cells = 2, .cells = cells};
    act_result res;
    record_decision last = last_rec("acted", 1, 2);

    memset(&res, 0, sizeof(res));
    res.nr_cells = 2;
    res.cells[0].bytes_moved = 1 << 20;
    CHECK(record_continues(&last, &pd, &res),
          "memory moved toward the last acted record's target, nothing else: moving");
    last = last_rec("moving", 1, 0);
    CHECK(record_continues(&last, &pd, &res),
          "after a moving record too; a cell with nothing to do is not compared");
    CHECK(!record_continues(NULL, &pd, &res), "no previous record: acted");
    last = last_rec("none", 1, 2);
    CHECK(!record_continues(&last, &pd, &res),
          "the previous record did nothing (memory went back?): a new decision");
    last = last_rec("advised", 1, 2);
    CHECK(!record_continues(&last, &pd, &res), "after advise mode: acted");
    last = last_rec("acted", 0, 2);
    CHECK(!record_continues(&last, &pd, &res), "a changed target is a new decision");
    last = last_rec("acted", -1, 2);
    CHECK(!record_continues(&last, &pd, &res), "a cell that had no target: acted");

    last = last_rec("acted", 1, 2);
    res.cells[0].pins_done = 1;
    cells[0].nr_pins = 1;
    cells[0].pins = &pin;
    CHECK(!record_continues(&last, &pd, &res), "a vCPU pinned: acted");
    res.cells[0].pins_done = 0;
    cells[0].nr_pins = 0;
    res.emulator_pinned = true;
    CHECK(!record_continues(&last, &pd, &res), "the emulator pinned: acted");
    res.emulator_pinned = false;
    res.memfd_bound = 1;
    CHECK(!record_continues(&last, &pd, &res), "a backend given a preferred node: acted");
    res.memfd_bound = 0;
    res.cells[0].bytes_moved = 0;
    CHECK(!record_continues(&last, &pd, &res), "nothing moved: not moving");
    return tap_done();
}
