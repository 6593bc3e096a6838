/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table of the daemon's libvirt connections (conns.h makes, opens and drops them): a
 * connection by its id, whether it is up, its label. Data and lookups only, on the loop
 * thread, for the floors below the daemon (domain tracking, the pass, the answers to vnumactl).
 */
#pragma once

#include <stdbool.h>

#include "connuri.h"
#include "core.h"
#include "virt.h"

typedef struct conn_slot {
    unsigned id;   /* never reused: a domain's conn_id names this connection or none */
    unsigned line; /* its uri line (cfg.uris[]) */
    conn_match m;  /* its URI, socket and label */
    virt_conn *conn;
    bool connected;
    bool opening;   /* its open is out on a worker */
    bool gone;      /* its socket went: removed once nothing uses it */
    unsigned users; /* reads out on the workers that call through conn */
    double backoff_s;
    double retry_at;   /* vn_mono_s() of its next open (0: none due) */
    unsigned failures; /* opens failed in a row (said at the first and then at each backoff) */
    struct vnumad *dm;
} conn_slot;

conn_slot *conns_find(const vnumad *dm, unsigned id);
/* The domain's connection when it is up, else NULL. */
virt_conn *conns_virt(const vnumad *dm, unsigned id);
/* Connections up now. */
unsigned conns_connected(const vnumad *dm);
/* The connection's label ("" when it is gone). */
const char *conns_label(const vnumad *dm, unsigned id);
/* Whether two connections are configured or may be (a glob): names are shown with theirs. */
bool conns_many(const vnumad *dm);
/* A read on a worker calls through cs->conn until conns_unuse: it is not closed meanwhile (the
 * connections' timer looks again until nothing uses it). */
void conns_use(conn_slot *cs);
void conns_unuse(conn_slot *cs);
