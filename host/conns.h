/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's libvirt connections (docs/configuration.md, "Connections"): one per uri line of
 * vnumad.conf, and one per unix socket a glob in a uri line's socket= matches (a KubeVirt node's
 * per-pod virtqemud), found as they appear and dropped as they go. Each has its own events, its
 * own domains (dom_state.conn_id) and its own reconnect with backoff; an open, and the list of
 * running domains that follows it, run on the workers, so that a daemon that does not answer
 * (stopped, hung) holds one worker, never the loop or the other connections. Owned by conns.c,
 * on the loop thread; the daemon's event handlers get the connection (conn_slot) as opaque.
 */
#pragma once

#include <stdbool.h>

#include "conntab.h"
#include "core.h"
#include "virt.h"

/* The uri lines' connections made; a single plain one opened now (a host's own libvirtd is
 * there before the first pass), several and the globs' on the workers. `events` are the
 * handlers of every connection (opaque: the conn_slot). 0 or -errno. */
int conns_start(vnumad *dm, const virt_callbacks *events);
/* Every connection closed (a worker still in a call on one keeps it: the process is ending). */
void conns_stop(vnumad *dm);

/* libvirt said the connection is gone (virt_callbacks.closed): closed and opened again. */
void conns_lost(conn_slot *cs);
/* Every domain of every connection up read again, the lists on the workers (a reload). */
void conns_relist(vnumad *dm);
/* The globs looked through again now (SIGHUP). */
void conns_scan_now(vnumad *dm);
