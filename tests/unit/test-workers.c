/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The worker pool (host/workers.c): works run off the loop thread, a hung one is marked late
 * and the others go on, the late one's done() still comes, the extra thread leaves. */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "tap.h"
#include "workers.h"

typedef struct test_work {
    work w;
    bool hang;     /* wait until released */
    int *finished; /* done() calls (loop thread) */
    int *late_done;
} test_work;

static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static bool released;
#define WAIT_S 120.0
static int late_seen;

static void run(work *w)
{
    test_work *t = (test_work *)w;

    if (!t->hang)
        return;
    pthread_mutex_lock(&hang_lock);
    while (!released)
        pthread_cond_wait(&hang_cond, &hang_lock);
    pthread_mutex_unlock(&hang_lock);
}

static void done(work *w, bool late)
{
    test_work *t = (test_work *)w;

    (*t->finished)++;
    if (late)
        (*t->late_done)++;
    free(t);
}

static void on_late(work *w)
{
    (void)w;
    late_seen++;
}

/* One round of what the loop does while it waits: finished works' done(). */
static void pump(workers *p)
{
    struct pollfd pfd = {.fd = workers_fd(p), .events = POLLIN};

    if (poll(&pfd, 1, 50) > 0)
        workers_collect(p);
}

int main(void)
{
    workers *p = NULL;
    int finished = 0, late_done = 0;

    if (!CHECK(workers_start(2, 4, &p) == 0 && workers_threads(p) == 2, "a pool of 2 threads"))
        return tap_done();
    /* one hangs (a QEMU monitor that does not answer), eight do not */
    for (int i = 0; i < 9; i++) {
        test_work *t = calloc(1, sizeof(*t));
        t->w.run = run;
        t->w.done = done;
        t->w.on_late = on_late;
        t->hang = i == 0;
        t->finished = &finished;
        t->late_done = &late_done;
        workers_submit(p, &t->w);
    }
    /* the eight finish while the hung one holds a thread; then only the hung one runs, and
     * the clock the test hands workers_expire() decides when it is late: no test of how fast
     * anything runs (issue 28); each wait below only says "never happened" when it runs out */
    for (double end = vn_mono_s() + WAIT_S; finished < 8 && vn_mono_s() < end;)
        pump(p);
    CHECK(workers_expire(p, vn_mono_s(), 3600) == 0 && late_seen == 0,
          "running for less than the timeout, the hung work is not late yet");
    CHECK(workers_expire(p, vn_mono_s() + 3600, 3600) == 1, "past the timeout it is late");
    CHECK(finished == 8 && late_done == 0, "the 8 others finished beside the hung one (%d)",
          finished);
    CHECK(late_seen == 1 && workers_late(p) == 1, "the hung work was marked late once (%d, %u)",
          late_seen, workers_late(p));
    CHECK(workers_threads(p) == 3, "a thread was added in its place (%u threads)",
          workers_threads(p));
    pthread_mutex_lock(&hang_lock);
    released = true;
    pthread_cond_broadcast(&hang_cond);
    pthread_mutex_unlock(&hang_lock);
    for (double end = vn_mono_s() + WAIT_S; finished < 9 && vn_mono_s() < end;)
        pump(p);
    CHECK(finished == 9 && late_done == 1, "the late work's done() came, marked late (%d, %d)",
          finished, late_done);
    /* the extra thread leaves once it finds no work */
    double end = vn_mono_s() + WAIT_S;
    while (workers_threads(p) > 2 && vn_mono_s() < end) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(workers_threads(p) == 2 && workers_late(p) == 0,
          "back to 2 threads once the late work returned (%u)", workers_threads(p));
    workers_stop(p);
    return tap_done();
}
