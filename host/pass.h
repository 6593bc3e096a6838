/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One balancing pass (pass.c): sample -> decide -> act -> record per domain, on worker
 * threads, and the plumbing of per-domain work. Below the daemon; calls domain tracking,
 * publishing and the stages. Hands publishing its record writer (vnumad.submit_write).
 */
#pragma once

#include "core.h"

/* Per-domain work of a pass is given up after this long (seconds; at least the interval):
 * the domain is skipped as not answering and the pass goes on. */
#define PASS_DOMAIN_TIMEOUT_MIN_S 5.0
/* Worker threads, and how many more stand in for works that do not return. Below libvirtd's
 * max_client_requests (5 per client): one connection, at most PASS_WORKERS calls at once
 * from works that answer. */
#define PASS_WORKERS       4
#define PASS_WORKERS_EXTRA 32

/* Start the worker threads and watch them from the loop. 0 or -errno. */
int pass_init(vnumad *dm);
/* Release a domain's hold (busy) taken by the pass or a work: a forgotten domain is freed,
 * one whose <balancer> changed meanwhile is considered again. */
void pass_release(vnumad *dm, dom_state *st);
/* fn(dm) as a pass would run it: the records it writes are waited for (each at most the
 * domain timeout). For the restore at exit. */
void pass_drain(vnumad *dm, void (*fn)(vnumad *dm));

/* One balancing pass over the tracked domains (nothing while disconnected), timed, then
 * the metrics file published. */
void pass_run(vnumad *dm);
