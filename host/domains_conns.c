/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Domain tracking and the libvirt connections (domains.h): what a connection's coming up,
 * loss and end mean for the domains it runs, and which records of originals are kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conntab.h"
#include "core.h"
#include "domains.h"
#include "domains_conns.h"
#include "log.h"
#include "origfile.h"
#include "virt.h"

typedef struct running_ids {
    vnumad *dm;
    const conn_slot *cs;
    const virt_dom_id *ids;
    size_t n;
} running_ids;

/*
 * A record worth keeping: of a domain that runs (here, or tracked on another connection), or of
 * one libvirt still knows (a managed save). With several connections a record is dropped only
 * while every one of them is up, and only when none runs the domain: which daemon a stopped
 * domain belongs to is not known.
 */
static bool uuid_known(const char *uuid, void *arg)
{
    const running_ids *ri = arg;
    virt_dom *d;

    for (size_t k = 0; k < ri->n; k++)
        if (strcmp(ri->ids[k].uuid, uuid) == 0)
            return true;
    if (domains_find(ri->dm, uuid))
        return true;
    if (ri->dm->nr_conns != 1)
        return false; /* (every connection is up: origfile_prune's caller checked) */
    switch (virt_dom_open(ri->cs->conn, uuid, &d)) {
    case 0:
        virt_dom_free(d);
        return true;
    case -ESRCH: /* no such domain */
        return false;
    default: /* libvirtd cannot tell now: kept until it can */
        return true;
    }
}

void domains_conn_up(vnumad *dm, conn_slot *cs, const virt_dom_id *ids, size_t n, bool now)
{
    /* its domains' handles were of the connection before; what no longer runs goes */
    for (size_t i = 0; i < dm->nr_doms;) {
        dom_state *st = dm->doms[i];
        bool found = false;
        if (st->conn_id != cs->id) {
            i++;
            continue;
        }
        for (size_t k = 0; k < n && !found; k++)
            found = strcmp(ids[k].uuid, st->uuid) == 0;
        if (!found) {
            domains_forget(dm, st);
            continue;
        }
        if (!st->busy) {
            virt_dom_free(st->dom);
            st->dom = NULL;
        }
        i++;
    }
    for (size_t k = 0; k < n; k++) {
        if (now)
            (void)domains_consider(dm, cs->id, ids[k].uuid);
        else
            domains_consider_later(dm, cs->id, ids[k].uuid);
    }
    /* the records of domains libvirt no longer knows */
    if (conns_connected(dm) != dm->nr_conns)
        return;
    running_ids ri = {dm, cs, ids, n};
    int r = origfile_prune(dm->cfg.state_dir, uuid_known, &ri);
    if (r < 0)
        log_warn("Cannot look through %s/originals: %s", dm->cfg.state_dir, strerror(-r));
}

void domains_conn_down(vnumad *dm, const conn_slot *cs)
{
    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        if (st->conn_id == cs->id && !st->busy) { /* (a work's handle is its own) */
            virt_dom_free(st->dom);
            st->dom = NULL;
        }
    }
}

void domains_conn_gone(vnumad *dm, const conn_slot *cs)
{
    for (size_t i = 0; i < dm->nr_doms;) {
        dom_state *st = dm->doms[i];
        if (st->conn_id == cs->id && !st->busy) {
            log_info("Domain '%s' is no longer tracked: its libvirt daemon (%s) is gone",
                     LOG_Q(st->name), cs->m.label);
            domains_forget(dm, st);
            continue;
        }
        i++;
    }
}
