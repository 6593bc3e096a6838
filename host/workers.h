/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small pool of threads for the blocking per-domain work of a pass (libvirt calls, QEMU
 * monitor commands, move_pages), so that the event loop never waits on one domain: the loop
 * submits works, keeps running (control socket, libvirt events, agent links) and is woken
 * through an eventfd when works finish; it then calls each finished work's done() itself, on
 * the loop thread, where the daemon's shared state lives.
 *
 * A work that runs longer than the caller's timeout is marked late (workers_expire): the
 * caller stops waiting for it and a thread is added in its place, so one hung QEMU monitor
 * (libvirt waits for its answer without a timeout) costs one thread, not the pool. When a
 * late work returns at last, its done() runs with late = true and the extra thread leaves.
 *
 * Ownership: a work and what it points to belong to the worker thread from submit until
 * done() is called on the loop thread; done() frees it.
 */
#pragma once

#include <stdbool.h>

typedef struct work work;
struct work {
    void (*run)(work *w);             /* on a worker thread */
    void (*done)(work *w, bool late); /* on the loop thread (workers_collect); frees w */
    void (*on_late)(work *w); /* on the loop thread when it goes late (workers_expire); NULL none */
    /* the pool's */
    work *next;
    int state;
    double started_s;
    bool late;
};

typedef struct workers workers;

/* nr threads (at least 1), at most max_extra more for late works. 0 or -errno. */
int workers_start(unsigned nr, unsigned max_extra, workers **ret);
/* Stop the threads: waits for the idle ones, leaves those stuck in a late work behind
 * (detached; the process is exiting). Works still queued are not run and not freed. */
void workers_stop(workers *p);
/* An eventfd, readable when finished works wait for workers_collect(). */
int workers_fd(const workers *p);
void workers_submit(workers *p, work *w);
/* On the loop thread: done() of every finished work (the eventfd is drained). */
void workers_collect(workers *p);
/* Works that have run for timeout_s or longer by now are marked late and their on_late(w) is
 * called (the loop thread); returns how many. */
unsigned workers_expire(workers *p, double now_s, double timeout_s);
/* Every running work that is not late counts its time from now_s: while a test holds vnumad
 * (host/holds.h) no work is late, and none is the moment it is released. */
void workers_restart_clocks(workers *p, double now_s);
/* Works submitted whose done() has not run yet, but the late ones (at shutdown: what is still
 * worth waiting for). */
unsigned workers_out(workers *p);
/* Threads now (for the metrics and tests), and works running late. */
unsigned workers_threads(workers *p);
unsigned workers_late(workers *p);
