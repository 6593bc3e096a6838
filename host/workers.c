/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"

enum { WORK_QUEUED, WORK_RUNNING, WORK_FINISHED };

struct workers {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    work *queue, *queue_tail; /* submitted, not started */
    work *running;            /* started, not finished (linked by next) */
    work *finished;           /* finished, done() not called yet */
    unsigned nr, max_extra;   /* threads wanted, more allowed for late works */
    unsigned threads;         /* threads alive */
    unsigned late;            /* running works marked late */
    unsigned idle;            /* threads waiting for work */
    bool stopping;
    int efd;
};

static void unlink_running(workers *p, work *w)
{
    for (work **pp = &p->running; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            return;
        }
}

static void *worker_main(void *arg)
{
    workers *p = arg;
    uint64_t one = 1;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* a thread that stood in for a late work leaves once that work is back */
        while (!p->stopping && !p->queue) {
            if (p->threads > p->nr + p->late)
                goto out;
            p->idle++;
            pthread_cond_wait(&p->cond, &p->lock);
            p->idle--;
        }
        if (p->stopping)
            goto out;
        work *w = p->queue;
        p->queue = w->next;
        if (!p->queue)
            p->queue_tail = NULL;
        w->state = WORK_RUNNING;
        w->started_s = vn_mono_s();
        w->next = p->running;
        p->running = w;
        pthread_mutex_unlock(&p->lock);

        w->run(w);

        pthread_mutex_lock(&p->lock);
        unlink_running(p, w);
        if (w->late) {
            p->late--;
            pthread_cond_broadcast(&p->cond); /* one thread too many now: it leaves */
        }
        w->state = WORK_FINISHED;
        w->next = p->finished;
        p->finished = w;
        (void)!write(p->efd, &one, sizeof(one));
    }
out:
    p->threads--;
    pthread_cond_broadcast(&p->cond);
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* With p->lock held. */
static int add_thread(workers *p)
{
    pthread_t t;
    pthread_attr_t a;
    int r;

    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    r = pthread_create(&t, &a, worker_main, p);
    pthread_attr_destroy(&a);
    if (r != 0)
        return -r;
    p->threads++;
    return 0;
}

int workers_start(unsigned nr, unsigned max_extra, workers **ret)
{
    workers *p = calloc(1, sizeof(*p));
    int r = 0;

    if (!p)
        return -ENOMEM;
    p->nr = nr ? nr : 1;
    p->max_extra = max_extra;
    p->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (p->efd < 0) {
        r = -errno;
        free(p);
        return r;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    pthread_mutex_lock(&p->lock);
    for (unsigned i = 0; i < p->nr && r == 0; i++)
        r = add_thread(p);
    pthread_mutex_unlock(&p->lock);
    if (r < 0) {
        workers_stop(p);
        return r;
    }
    *ret = p;
    return 0;
}

void workers_stop(workers *p)
{
    struct timespec ts = {0, 10 * 1000 * 1000};

    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->cond);
    /* the threads are detached: wait (1 s at most) for those not stuck in a late work */
    for (int i = 0; i < 100 && p->threads > p->late; i++) {
        pthread_mutex_unlock(&p->lock);
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&p->lock);
    }
    bool stuck = p->threads > 0;
    pthread_mutex_unlock(&p->lock);
    if (stuck)
        return; /* a thread still holds p: left to the exiting process */
    close(p->efd);
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int workers_fd(const workers *p)
{
    return p->efd;
}

void workers_submit(workers *p, work *w)
{
    pthread_mutex_lock(&p->lock);
    w->state = WORK_QUEUED;
    w->late = false;
    w->started_s = 0;
    w->next = NULL;
    if (p->queue_tail)
        p->queue_tail->next = w;
    else
        p->queue = w;
    p->queue_tail = w;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
}

void workers_collect(workers *p)
{
    uint64_t n;
    work *list, *rev = NULL;

    (void)!read(p->efd, &n, sizeof(n));
    pthread_mutex_lock(&p->lock);
    list = p->finished;
    p->finished = NULL;
    pthread_mutex_unlock(&p->lock);
    /* in the order they finished */
    while (list) {
        work *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        work *next = rev->next;
        rev->done(rev, rev->late);
        rev = next;
    }
}

unsigned workers_expire(workers *p, double now_s, double timeout_s)
{
    work *late[64];
    unsigned n = 0;

    pthread_mutex_lock(&p->lock);
    for (work *w = p->running; w && n < 64; w = w->next)
        if (!w->late && now_s - w->started_s >= timeout_s) {
            w->late = true;
            p->late++;
            late[n++] = w;
            /* a thread in its place, so that the other domains go on */
            if (p->threads < p->nr + p->late && p->threads < p->nr + p->max_extra)
                (void)add_thread(p);
        }
    pthread_mutex_unlock(&p->lock);
    /* the work stays the worker's: late() may only read what the loop owns about it */
    for (unsigned i = 0; i < n; i++)
        if (late[i]->on_late)
            late[i]->on_late(late[i]);
    return n;
}

void workers_restart_clocks(workers *p, double now_s)
{
    pthread_mutex_lock(&p->lock);
    for (work *w = p->running; w; w = w->next)
        if (!w->late)
            w->started_s = now_s;
    pthread_mutex_unlock(&p->lock);
}

unsigned workers_out(workers *p)
{
    unsigned n = 0;

    pthread_mutex_lock(&p->lock);
    for (const work *w = p->queue; w; w = w->next)
        n++;
    for (const work *w = p->running; w; w = w->next)
        n += !w->late;
    for (const work *w = p->finished; w; w = w->next)
        n++;
    pthread_mutex_unlock(&p->lock);
    return n;
}

unsigned workers_threads(workers *p)
{
    pthread_mutex_lock(&p->lock);
    unsigned n = p->threads;
    pthread_mutex_unlock(&p->lock);
    return n;
}

unsigned workers_late(workers *p)
{
    pthread_mutex_lock(&p->lock);
    unsigned n = p->late;
    pthread_mutex_unlock(&p->lock);
    return n;
}
