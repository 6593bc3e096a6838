/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Placement of an incoming domain before its memory arrives (place.h). */
#include "place.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "decide_incoming.h"
#include "hookxml.h"
#include "log.h"
#include "promise.h"
#include "util.h"

/* Each cell's decision, for the reply and the log. */
static struct json_object *cells_json(const topology *t, const plan_domain *pd, char *line,
                                      size_t len)
{
    struct json_object *a = json_object_new_array();
    size_t used = 0;

    line[0] = '\0';
    for (unsigned k = 0; a && k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        struct json_object *o = json_object_new_object();
        int node = pc->target_node >= 0 ? (int)t->nodes[pc->target_node].os_index : -1;
        if (!o)
            break;
        json_object_object_add(o, "cell", json_object_new_int((int)pc->cell_id));
        json_object_object_add(o, "node", node >= 0 ? json_object_new_int(node) : NULL);
        json_object_object_add(o, "memory", json_object_new_boolean(pc->nr_moves > 0));
        json_object_object_add(o, "pins", json_object_new_int((int)pc->nr_pins));
        json_object_object_add(o, "reason", json_object_new_string(reason_name(pc->reason)));
        json_object_array_add(a, o);
        if (used < len)
            used += (size_t)snprintf(line + used, len - used, "%scell %u on node %d%s",
                                     k ? ", " : "", pc->cell_id, node,
                                     pc->nr_moves ? "" : " (its memory where the kernel puts it)");
    }
    return a;
}

/* " node N: M MiB" per node of held[] that is not 0, into buf. */
static void held_line(const topology *t, const uint64_t held[], char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (unsigned n = 0; n < t->nr_nodes && used < len; n++)
        if (held[n])
            used += (size_t)snprintf(buf + used, len - used, "%snode %u %" PRIu64 " MiB",
                                     used ? ", " : "", t->nodes[n].os_index, held[n] >> 20);
}

/* The room other arriving domains hold per node, for the reply: [{"node", "bytes"}]. */
static struct json_object *held_json(const topology *t, const uint64_t held[])
{
    struct json_object *a = json_object_new_array();

    for (unsigned n = 0; a && n < t->nr_nodes; n++) {
        struct json_object *o;
        if (!held[n] || !(o = json_object_new_object()))
            continue;
        json_object_object_add(o, "node", json_object_new_int((int)t->nodes[n].os_index));
        json_object_object_add(o, "bytes", json_object_new_uint64(held[n]));
        json_object_array_add(a, o);
    }
    return a;
}

/*
 * The promises: the expired ones go (logged), the others' room is counted as used in s for
 * this placement (the domain's own earlier promise aside: this place replaces it), held[]
 * gets it per node.
 */
static void place_count_promises(vnumad *dm, const hook_domain *hd, double now, snapshot *s,
                                 uint64_t held[])
{
    char line[512];
    unsigned nr;

    (void)promise_expire(dm->promises, now);
    nr = promise_apply(dm->promises, dm->topo, hd->d.uuid, s, held);
    if (!nr)
        return;
    held_line(dm->topo, held, line, sizeof(line));
    log_info(
        "Placing '%s' with the room promised to %u other arriving domain(s) counted as used: %s",
        LOG_Q(hd->d.name), nr, line);
}

/* What the placement promised the domain is kept until it arrives (promise.h); a placement
 * that placed nothing drops an earlier promise of it. */
static void place_keep_promise(vnumad *dm, const hook_domain *hd, const plan_domain *pd,
                               bool placed, double now)
{
    static const plan_domain none;
    promise dropped;

    if (!hd->d.uuid[0]) /* (libvirt's XML always has one; nothing would release it) */
        return;
    if (promise_make(dm->promises, hd->d.uuid, hd->d.name, placed ? pd : &none, now, &dropped))
        log_warn(
            "Too many arrivals placed at once (%u): the room promised to '%s' (%s), the oldest, is no longer counted",
            PROMISE_MAX, LOG_Q(dropped.name), LOG_Q(dropped.uuid));
}

int place_command(void *opaque, const control_request *req, struct json_object **ret,
                  char *errclass, size_t classlen, char *err, size_t errlen)
{
    vnumad *dm = opaque;
    hook_domain hd;
    plan_domain pd = {0};
    snapshot s = {0};
    _cleanup_free_ char *out = NULL, *unplaced = NULL;
    char why[512] = "", line[1024];
    struct json_object *o, *cells = NULL;
    bool source_busy = false, fits;
    double now = vn_mono_s();
    _cleanup_free_ uint64_t *held = calloc(VN_MAX(dm->topo->nr_nodes, 1u), sizeof(*held));
    int r;

    (void)errclass;
    (void)classlen;
    if (!held)
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
    /* the free memory of now (a pass's own reading stands while it runs: its workers read it) */
    if (!dm->in_pass)
        (void)topo_refresh_free(dm->topo, dm->root);
    r = hookxml_read(req->xml, dm->topo, &hd, why, sizeof(why));
    if (r == -ENOMEM)
        return vn_fail(err, errlen, r, "out of memory");
    if (r > 0 && dm->host_paused) {
        snprintf(why, sizeof(why), "vnumad is paused (vnumactl pause --all)");
        r = 0;
    }
    if (r > 0) {
        for (unsigned n = 0; n < dm->topo->nr_nodes; n++)
            s.other_busy[n] = dm->node_load[n];
        place_count_promises(dm, &hd, now, &s, held);
        r = decide_incoming(dm->topo, &s, &dm->cfg.decide, &hd.d, hd.cell_bytes, &pd);
        fits = r == 0 && hookxml_emulator_fits(dm->topo, &hd, &pd, why, sizeof(why));
        if (fits)
            r = hookxml_write(req->xml, dm->topo, &hd, &pd, dm->host_id, &out);
        if (r == 0 && fits && !out)
            snprintf(why, sizeof(why), "no node of this host may hold its cells");
        if (r == 0)
            cells = cells_json(dm->topo, &pd, line, sizeof(line));
        source_busy = hd.busy_known;
        if (r == 0)
            place_keep_promise(dm, &hd, &pd, out != NULL, now);
        if (r == 0 && out) {
            char load[VN_MAX_NODES * 12] = "";
            size_t used = 0;
            for (unsigned n = 0; n < dm->topo->nr_nodes && used < sizeof(load); n++)
                used += (size_t)snprintf(load + used, sizeof(load) - used, "%s%u:%g", n ? " " : "",
                                         dm->topo->nodes[n].os_index, dm->node_load[n]);
            log_info(
                "Placed incoming domain '%s' (%s): %s; busy vCPUs %s; busy CPUs per node %s; the room of its placed memory is held until it arrives",
                LOG_Q(hd.d.name), LOG_Q(hd.d.uuid), line,
                hd.busy_known ? "as the source's last decision counted them"
                              : "unknown: every vCPU taken as busy",
                load);
        }
        plan_domain_clear(&pd);
        hookxml_clear(&hd);
        if (r < 0) {
            json_object_put(cells);
            return vn_fail(err, errlen, r, "cannot place the domain: %s", strerror(-r));
        }
    }
    if (!out) {
        /* a placement it carries from an earlier host is taken out (hookxml_unplace) */
        r = hookxml_unplace(req->xml, &unplaced);
        if (r == -ENOMEM) {
            json_object_put(cells);
            return vn_fail(err, errlen, r, "out of memory");
        }
        if (unplaced)
            log_info("An incoming domain passes without the placement of an earlier host: %s", why);
        else
            log_debug("An incoming domain passes unchanged: %s", why);
    }
    o = json_object_new_object();
    if (!o) {
        json_object_put(cells);
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
    }
    json_object_object_add(o, "placed", json_object_new_boolean(out != NULL));
    json_object_object_add(o, "why", out ? NULL : json_object_new_string(why));
    json_object_object_add(o, "cells", cells ? cells : json_object_new_array());
    json_object_object_add(o, "source_busy", json_object_new_boolean(source_busy));
    json_object_object_add(o, "promised", held_json(dm->topo, held));
    json_object_object_add(o, "unplaced", json_object_new_boolean(unplaced != NULL));
    json_object_object_add(o, "xml",
                           out        ? json_object_new_string(out)
                           : unplaced ? json_object_new_string(unplaced)
                                      : NULL);
    *ret = o;
    return 0;
}
