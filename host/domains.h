/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Domain tracking (domains.c): which domains are tracked (opt-in, opt-out, restore), what an
 * event changed, migration arrival, and each domain's guest agent link. Below the pass,
 * beside publishing; calls publishing and the act stage.
 */
#pragma once

#include "core.h"

/* The tracked domain with this uuid (or name), or NULL. */
dom_state *domains_find(vnumad *dm, const char *uuid);
dom_state *domains_find_by_name(vnumad *dm, const char *name);

/* Free a domain's state and close its agent link; NULL-safe. Does not untrack it. */
void domains_state_free(dom_state *st);

/* Stop tracking st and free it (nothing is restored). */
void domains_forget(vnumad *dm, dom_state *st);

/* Read a running domain's <balancer> element and track, update, restore or drop it; true
 * when something that matters for balancing changed. */
bool domains_consider(vnumad *dm, unsigned conn, const char *uuid);
/* The same for an event, with the libvirt reads on a worker thread and the rest on the loop
 * when they are back (a pass soon if something changed). */
void domains_consider_later(vnumad *dm, unsigned conn, const char *uuid);
/* Drop the cached XML / vCPU threads / RAM layout (DOM_STALE_*), or mark them while busy. */
void domains_stale(dom_state *st, unsigned what);
/* The domain's deferred read (st->reconsider, pass.c), as the arrival asked for. */
bool domains_reconsider(vnumad *dm, dom_state *st);
/* An event for the domain (it stopped): a read of it still out is stale, read again. */
void domains_consider_stale(vnumad *dm, unsigned conn, const char *uuid);
/* Runs the loop until no read is out, or timeout_s (shutdown). */
void domains_consider_drain(vnumad *dm, double timeout_s);

/* domains_consider() of a domain that arrives by live migration: its live pins and the
 * originals in its metadata are the other host's, never put back here (domains.c). While
 * the migration runs (`finished` false: libvirt holds the domain) nothing is written; once
 * it finished, this host's originals are taken and written. */
bool domains_arrived(vnumad *dm, unsigned conn, const char *uuid, bool finished);

/* Write vnumad's record of st's originals (origfile.h), or remove it when they are not saved;
 * a failure is logged and counted. 0 or -errno. On the loop. */
int domains_record_originals(vnumad *dm, dom_state *st);

/* Give the domain its original pinning and binding back (if vnumad changed them) and
 * record "restored" with reason `why`. */
void domains_restore(vnumad *dm, virt_dom *d, dom_state *st, const char *why);

/* placement='auto' warned once, from the live XML a sample read (no read of its own). */
void domains_check_placement(dom_state *st);
