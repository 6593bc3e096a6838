/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test holds: named points of a pass where vnumad parks, when a test asked for it, until the
 * test lets it go. A test that needs an event to fall inside a stage (libvirtd restarted
 * between sample and act, a domain destroyed before its record is written, vnumad killed in
 * the middle of a move) arms the stage over the control socket (`vnumactl hold STAGE`), waits
 * until vnumad says it is held there, makes the event happen, and releases it (`vnumactl
 * release`). That is exact at any speed; a pause of N ms is not (issue 28).
 *
 * Off unless vnumad.conf says `test_holds = yes` (documented as test-only): then `hold` is
 * refused and every hold point costs one relaxed atomic load.
 *
 * An armed stage holds once, at the next time any thread reaches it, and is then disarmed.
 * At the stage reached on the event loop's thread (sample) the hold runs the loop, so
 * the control socket answers and libvirt's events are taken as they come while vnumad is
 * parked; at those reached on a worker or mover thread (act, move, record) that thread waits and
 * the loop goes on. While anything is held, works are not timed out (holds_active).
 *
 * State is this module's alone (a mutex and a condition variable guard it).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model.h"

struct json_object;

#define HOLDS_NAMES_MAX 8 /* domain names a hold shows (of the pass it parked) */

typedef enum hold_stage {
    HOLD_SAMPLE, /* a pass sampled its domains; before decide (loop thread) */
    HOLD_ACT,    /* a domain's act stage is about to begin, nothing changed yet (worker) */
    HOLD_MOVE,   /* a memory move moved its first batch of pages; before the next (mover) */
    HOLD_RECORD, /* a domain's decision record is about to be written (worker thread) */
    HOLD_MAX,
} hold_stage;

/* Allow holds (test_holds = yes) or not; turning them off releases what is held. */
void holds_enable(bool on);

/* The stage of a name ("sample", "act", "move", "record"), or -EINVAL. */
int holds_stage_from_name(const char *name);
const char *holds_stage_name(hold_stage s);

/* Arm a stage: the next thread that reaches it (for `domain`, NULL any) parks. 0, -EPERM
 * (holds are off). */
int holds_arm(hold_stage s, const char *domain);

/* Release what is held and disarm every stage. Returns how many threads were let go. */
unsigned holds_release(void);

/* A hold point of one domain's work (act, move, record), on a worker or mover thread. `pass` (0
 * when not known) and `domain` say where it was reached. Returns at once unless the stage is
 * armed; then parks until holds_release(). */
void holds_point(hold_stage s, uint64_t pass, const char *domain);

/* A hold point of a whole pass (sample), on the event loop's thread, which keeps running
 * the loop while it is parked. A pass without domains does not park. */
void holds_pass(hold_stage s, const snapshot *snap);

/* Something is parked now. */
bool holds_active(void);

/* {"enabled", "armed": [STAGE...], "held": [{"stage", "pass", "domains": [NAME...]
 *  (HOLDS_NAMES_MAX at most), "nr_domains"}...],
 *  "times": {STAGE: N...}}: what `vnumactl holds` prints. NULL on ENOMEM. */
struct json_object *holds_json(void);
