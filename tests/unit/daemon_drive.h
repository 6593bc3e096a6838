/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Driving vnumad's whole daemon on the fake host (fakehost.h) from a test (daemon_drive.c):
 * start and stop it, run its loop until something happened, run a pass as its timer would,
 * and read what it did (its records in <state>, its originals, its pins). Shared by
 * test-daemon (the core's paths) and test-daemon-memory (guest memory through QMP).
 */
#pragma once

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core.h"
#include "daemon.h"
#include "fakehost.h"
#include "state.h"

/* What vnumad runs on, its state, and its config file ("" none) for the next start(). */
extern daemon_host host;
extern vnumad dm;
extern char config_path[256];
/* <balancer mode="auto"/> */
extern const char *const AUTO;

/* Runs vnumad's loop until cond(arg); false when it never came (a timeout of real seconds
 * only says it never happened). */
bool run_until(bool (*cond)(void *), void *arg);
/* Nothing out: no event's read, no pass running or due, no work of a pass, no domain held,
 * no memory moving. */
bool settled(void *arg);
/* Every event the fake libvirt daemons sent is read (what it started may still be out:
 * settled says). */
bool events_read(void *arg);
/* The first pass ran and everything it started is in. */
bool first_pass_done(void *arg);
/* One pass as the timer runs it, s seconds of the fake clock after the last (pass(): 5 s),
 * and the loop until everything it started is in. */
void pass_after(double s);
void pass(void);
/* a arrives by live migration: started with libvirt's job on it, then resumed here; the loop
 * runs until everything each event started is in. */
void arrive_migrated(fake_dom *a);

void start(const daemon_config *cfg);
/* vnumad stops; the fake host stays as it is (a restart follows). */
void stop_vnumad(void);
/* vnumad stops and the fake host forgets everything (between tests). */
void stop(void);

bool is_tracked(void *fd);
bool not_tracked(void *fd);
/* Every vCPU pinned inside one node of the fake host (0-1 or 2-3), all on the same one. */
bool pinned_to_one_node(void *fd);
bool all_pins_are(fake_dom *fd, const char *cpus);
/* The last <decision> vnumad wrote into the domain's <state>: its action and reason. */
bool last_decision(fake_dom *fd, char *action, size_t alen, char *reason, size_t rlen);
/* The originals in the domain's <state> (saved false: none). */
void state_originals(fake_dom *fd, dom_originals *out);
bool state_has_originals(fake_dom *fd);
bool decision_restored(void *fd);

/* vnumactl's side of the control socket, on a thread while the loop runs: one request line, the
 * reply until vnumad closes. */
typedef struct ctl_call {
    char request[8192]; /* (a place request carries a domain XML) */
    char reply[65536];
    bool sent; /* the request is in the socket (or the thread gave up): under ctl_lock */
    atomic_bool done;
} ctl_call;
/* Starts c's client thread and returns once its request line is in the socket, the loop not run
 * meanwhile: vnumad accepts the connection with the line there already, and its wait for a
 * client's line (CONTROL_TIMEOUT_MS, real time from the accept) never depends on how soon the
 * thread ran. The caller runs the loop (run_until(ctl_done, c)) and joins *t. */
void ctl_begin(ctl_call *c, pthread_t *t);
bool ctl_done(void *arg);
/* One request (a JSON object, no newline) and its reply; false when none came. */
bool ctl(const char *request, char *reply, size_t len);
