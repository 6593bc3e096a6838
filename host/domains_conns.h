/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Domain tracking and the libvirt connections (domains_conns.c): what a connection's coming
 * up, loss and end mean for the domains it runs. Called by the connections (conns.c).
 */
#pragma once

#include <stddef.h>

#include "conntab.h"
#include "core.h"

/* A connection came up, or its domains are to be read again (a reload):
 * forget what of it no longer runs, consider every domain in ids[n] (now, on the loop, or
 * later: the reads on the workers), and drop the records of originals no daemon knows. */
void domains_conn_up(vnumad *dm, conn_slot *cs, const virt_dom_id *ids, size_t n, bool now);
/* The connection was lost: its domains' handles go (they stay tracked until it is back). */
void domains_conn_down(vnumad *dm, const conn_slot *cs);
/* The connection is gone for good (its socket went): its domains are no longer tracked. */
void domains_conn_gone(vnumad *dm, const conn_slot *cs);
