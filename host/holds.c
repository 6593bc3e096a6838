/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test holds (host/holds.h): a stage armed over the control socket parks the next thread
 * that reaches it until the test releases it.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "holds.h"
#include "log.h"
#include "loop.h"
#include "snapshot.h"
#include "util.h"
#include "virt.h"

static const char *const stage_names[HOLD_MAX] = {
    [HOLD_SAMPLE] = "sample",
    [HOLD_ACT] = "act",
    [HOLD_MOVE] = "move",
    [HOLD_RECORD] = "record",
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released = PTHREAD_COND_INITIALIZER;
static atomic_bool enabled;
static atomic_uint armed;   /* a bit per stage; read without the lock at every hold point */
static uint64_t generation; /* holds_release() adds one: what a parked thread waits for */
static unsigned nr_held;
static struct {
    bool held;
    uint64_t pass;
    char names[HOLDS_NAMES_MAX][SNAP_NAME_MAX]; /* the pass's domains, or the one */
    unsigned nr_names, nr_domains;
    unsigned times;           /* held this many times since start */
    char only[SNAP_NAME_MAX]; /* armed for this domain only ("" any) */
} stages[HOLD_MAX];

void holds_enable(bool on)
{
    atomic_store(&enabled, on);
    if (!on)
        (void)holds_release();
}

int holds_stage_from_name(const char *name)
{
    for (int s = 0; s < HOLD_MAX; s++)
        if (name && !strcmp(name, stage_names[s]))
            return s;
    return -EINVAL;
}

const char *holds_stage_name(hold_stage s)
{
    return (unsigned)s < HOLD_MAX ? stage_names[s] : "?";
}

int holds_arm(hold_stage s, const char *domain)
{
    if (!atomic_load(&enabled))
        return -EPERM;
    if ((unsigned)s >= HOLD_MAX)
        return -EINVAL;
    pthread_mutex_lock(&lock);
    snprintf(stages[s].only, sizeof(stages[s].only), "%s", domain ? domain : "");
    atomic_fetch_or(&armed, 1u << s);
    pthread_mutex_unlock(&lock);
    log_info("Hold armed at '%s'%s%s%s (test_holds)", stage_names[s], domain ? " for '" : "",
             domain ? LOG_Q(domain) : "", domain ? "'" : "");
    return 0;
}

unsigned holds_release(void)
{
    unsigned n;

    pthread_mutex_lock(&lock);
    atomic_store(&armed, 0);
    n = nr_held;
    generation++;
    pthread_cond_broadcast(&released);
    pthread_mutex_unlock(&lock);
    if (n)
        log_info("Released %u hold(s) (test_holds)", n);
    return n;
}

/* The hold armed at s is for one of `names` (lock held). */
static bool wanted(hold_stage s, const char *const *names, unsigned nr)
{
    if (!stages[s].only[0])
        return true;
    for (unsigned i = 0; i < nr; i++)
        if (!strcmp(names[i], stages[s].only))
            return true;
    return false;
}

/* Parks the caller when stage s is armed (and disarms it); `names` are the domains of what
 * parks (nr_domains of them in all), `on_loop` whether the caller is the loop's thread. */
static void hold_here(hold_stage s, uint64_t pass, const char *const *names, unsigned nr_domains,
                      bool on_loop)
{
    unsigned bit = 1u << s;
    uint64_t gen;

    if (!(atomic_load_explicit(&armed, memory_order_relaxed) & bit))
        return;
    pthread_mutex_lock(&lock);
    if (!(atomic_load(&armed) & bit) || !wanted(s, names, nr_domains)) {
        pthread_mutex_unlock(&lock);
        return;
    }
    atomic_fetch_and(&armed, ~bit); /* this thread takes it */
    stages[s].held = true;
    stages[s].pass = pass;
    stages[s].nr_domains = nr_domains;
    stages[s].nr_names = nr_domains < HOLDS_NAMES_MAX ? nr_domains : HOLDS_NAMES_MAX;
    for (unsigned i = 0; i < stages[s].nr_names; i++)
        snprintf(stages[s].names[i], sizeof(stages[s].names[i]), "%s", names[i]);
    stages[s].times++;
    nr_held++;
    gen = generation;
    log_info(
        "Held at '%s' in pass %llu with %u domain(s), first '%s' (test_holds): waiting for vnumactl release",
        stage_names[s], (unsigned long long)pass, nr_domains, LOG_Q(names[0]));
    while (generation == gen) {
        if (!on_loop) {
            pthread_cond_wait(&released, &lock);
            continue;
        }
        /* the loop thread: the control socket (the release itself) and libvirt's events
         * are served from here while the pass is parked */
        pthread_mutex_unlock(&lock);
        int r = loop_run_once();
        pthread_mutex_lock(&lock);
        if (r < 0)
            break;
    }
    stages[s].held = false;
    nr_held--;
    pthread_mutex_unlock(&lock);
}

void holds_point(hold_stage s, uint64_t pass, const char *domain)
{
    const char *names[1] = {domain ? domain : ""};

    hold_here(s, pass, names, 1, false);
}

void holds_pass(hold_stage s, const snapshot *snap)
{
    _cleanup_free_ const char **names = NULL;

    if (!snap->nr_domains || !(atomic_load_explicit(&armed, memory_order_relaxed) & (1u << s)))
        return;
    names = calloc(snap->nr_domains, sizeof(*names));
    if (!names)
        return;
    for (unsigned i = 0; i < snap->nr_domains; i++)
        names[i] = snap->domains[i].name;
    hold_here(s, snap->pass, names, snap->nr_domains, true);
}

bool holds_active(void)
{
    bool a;

    pthread_mutex_lock(&lock);
    a = nr_held > 0;
    pthread_mutex_unlock(&lock);
    return a;
}

struct json_object *holds_json(void)
{
    struct json_object *o = json_object_new_object(), *arm = json_object_new_array(),
                       *held = json_object_new_array(), *times = json_object_new_object();
    unsigned bits = atomic_load(&armed);

    if (!o || !arm || !held || !times) {
        json_object_put(o);
        json_object_put(arm);
        json_object_put(held);
        json_object_put(times);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    for (unsigned s = 0; s < HOLD_MAX; s++) {
        if (bits & (1u << s))
            json_object_array_add(arm, json_object_new_string(stage_names[s]));
        if (stages[s].held) {
            struct json_object *h = json_object_new_object();
            json_object_object_add(h, "stage", json_object_new_string(stage_names[s]));
            json_object_object_add(h, "pass",
                                   stages[s].pass ? json_object_new_uint64(stages[s].pass) : NULL);
            struct json_object *names = json_object_new_array();
            for (unsigned i = 0; names && i < stages[s].nr_names; i++)
                json_object_array_add(names, json_object_new_string(stages[s].names[i]));
            json_object_object_add(h, "domains", names);
            json_object_object_add(h, "nr_domains", json_object_new_int((int)stages[s].nr_domains));
            json_object_array_add(held, h);
        }
        json_object_object_add(times, stage_names[s], json_object_new_int((int)stages[s].times));
    }
    pthread_mutex_unlock(&lock);
    json_object_object_add(o, "enabled", json_object_new_boolean(atomic_load(&enabled)));
    json_object_object_add(o, "armed", arm);
    json_object_object_add(o, "held", held);
    json_object_object_add(o, "times", times);
    return o;
}
