/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test holds (host/holds.c) on worker threads: off by default, armed once, for one domain
 * when asked, exactly one of two racing threads parks, release and turning them off let it go,
 * what `vnumactl holds` shows. The loop-thread hold (sample) runs libvirt's event loop: it is
 * proven end to end (tests/e2e/holds.sh). */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "holds.h"
#include "tap.h"

typedef struct point_arg {
    hold_stage stage;
    uint64_t pass;
    const char *domain;
    atomic_bool returned;
} point_arg;

static void *point_thread(void *opaque)
{
    point_arg *a = opaque;

    holds_point(a->stage, a->pass, a->domain);
    atomic_store(&a->returned, true);
    return NULL;
}

/* wait until cond() (an event in another thread); false when it never came (60 s) */
static bool wait_until(bool (*cond)(void *), void *arg)
{
    double deadline = vn_mono_s() + 60;
    struct timespec ts = {0, 2 * 1000 * 1000};

    while (!cond(arg)) {
        if (vn_mono_s() > deadline)
            return false;
        nanosleep(&ts, NULL);
    }
    return true;
}

static bool is_active(void *arg)
{
    (void)arg;
    return holds_active();
}

static bool has_returned(void *arg)
{
    return atomic_load(&((point_arg *)arg)->returned);
}

static bool either_returned(void *arg)
{
    point_arg *r = arg;
    return atomic_load(&r[0].returned) || atomic_load(&r[1].returned);
}

static int times(hold_stage s)
{
    struct json_object *j = holds_json(), *t = NULL, *n = NULL;
    int r = -1;

    if (j && json_object_object_get_ex(j, "times", &t) &&
        json_object_object_get_ex(t, holds_stage_name(s), &n))
        r = json_object_get_int(n);
    json_object_put(j);
    return r;
}

int main(void)
{
    point_arg a = {.stage = HOLD_RECORD, .pass = 6, .domain = "vm2"};
    point_arg other = {.stage = HOLD_RECORD, .pass = 5, .domain = "vm1"};
    point_arg race[2] = {{.stage = HOLD_MOVE, .domain = "vm1"},
                         {.stage = HOLD_MOVE, .domain = "vm1"}};
    pthread_t t, t2[2];
    struct json_object *j;
    const char *s;

    /* off by default */
    CHECK(holds_arm(HOLD_ACT, NULL) == -EPERM, "holds are off until enabled: arm is -EPERM");
    holds_point(HOLD_ACT, 1, "vm1"); /* returns at once, or the test hangs here */
    CHECK(!holds_active(), "a hold point with holds off returns at once");

    holds_enable(true);
    CHECK(holds_stage_from_name("sample") == HOLD_SAMPLE &&
              holds_stage_from_name("act") == HOLD_ACT &&
              holds_stage_from_name("move") == HOLD_MOVE &&
              holds_stage_from_name("record") == HOLD_RECORD,
          "the four stages by name");
    CHECK(holds_stage_from_name("Act") == -EINVAL && holds_stage_from_name("") == -EINVAL &&
              holds_stage_from_name(NULL) == -EINVAL,
          "unknown, empty and missing names are -EINVAL");

    /* for one domain: another's work goes on, the domain's parks */
    CHECK(holds_arm(HOLD_RECORD, "vm2") == 0, "arm record for vm2");
    pthread_create(&t, NULL, point_thread, &other);
    pthread_join(t, NULL);
    CHECK(atomic_load(&other.returned) && !holds_active(), "vm1's record write is not held");
    pthread_create(&t, NULL, point_thread, &a);
    CHECK(wait_until(is_active, NULL), "vm2's record write parks");
    j = holds_json();
    s = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    CHECK(strstr(s, "\"armed\":[]") &&
              strstr(s, "\"held\":[{\"stage\":\"record\",\"pass\":6,\"domains\":[\"vm2\"],"
                        "\"nr_domains\":1}]") &&
              strstr(s, "\"record\":1") && strstr(s, "\"enabled\":true"),
          "holds_json shows it held, disarmed, once (%s)", s);
    json_object_put(j);
    CHECK(!atomic_load(&a.returned), "... and it stays parked");
    /* armed once: a second write goes on while the first is still parked */
    atomic_store(&other.returned, false);
    other.domain = "vm2";
    pthread_create(&t2[0], NULL, point_thread, &other);
    pthread_join(t2[0], NULL);
    CHECK(atomic_load(&other.returned), "a hold is armed once: the next vm2 write is not held");
    CHECK(holds_release() == 1, "release lets one thread go");
    CHECK(wait_until(has_returned, &a), "the parked thread returns");
    pthread_join(t, NULL);
    CHECK(!holds_active(), "nothing held after the release");

    /* two threads reach one armed stage: exactly one parks */
    CHECK(holds_arm(HOLD_MOVE, NULL) == 0, "arm move (any domain)");
    pthread_create(&t2[0], NULL, point_thread, &race[0]);
    pthread_create(&t2[1], NULL, point_thread, &race[1]);
    CHECK(wait_until(is_active, NULL), "one mover parks");
    CHECK(wait_until(either_returned, race), "the other goes on");
    CHECK(atomic_load(&race[0].returned) != atomic_load(&race[1].returned) && times(HOLD_MOVE) == 1,
          "exactly one parked (move held %d time(s))", times(HOLD_MOVE));

    /* turning holds off releases what is held and refuses new ones */
    holds_enable(false);
    CHECK(wait_until(has_returned, &race[0]) && wait_until(has_returned, &race[1]),
          "holds_enable(false) lets the parked mover go");
    pthread_join(t2[0], NULL);
    pthread_join(t2[1], NULL);
    CHECK(holds_arm(HOLD_MOVE, NULL) == -EPERM && !holds_active(), "and arming is refused again");
    return tap_done();
}
