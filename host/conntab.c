/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The table of the daemon's libvirt connections (host/conntab.h).
 */
#include <string.h>

#include "conntab.h"

conn_slot *conns_find(const vnumad *dm, unsigned id)
{
    for (unsigned i = 0; id && i < dm->nr_conns; i++)
        if (dm->conns[i]->id == id)
            return dm->conns[i];
    return NULL;
}

virt_conn *conns_virt(const vnumad *dm, unsigned id)
{
    conn_slot *cs = conns_find(dm, id);

    return cs && cs->connected ? cs->conn : NULL;
}

unsigned conns_connected(const vnumad *dm)
{
    unsigned n = 0;

    for (unsigned i = 0; i < dm->nr_conns; i++)
        n += dm->conns[i]->connected;
    return n;
}

const char *conns_label(const vnumad *dm, unsigned id)
{
    conn_slot *cs = conns_find(dm, id);

    return cs ? cs->m.label : "";
}

bool conns_many(const vnumad *dm)
{
    return dm->cfg.nr_uris > 1 || (dm->cfg.nr_uris == 1 && conn_uri_is_pattern(dm->cfg.uris[0]));
}

void conns_use(conn_slot *cs)
{
    cs->users++;
}

void conns_unuse(conn_slot *cs)
{
    cs->users--;
}
