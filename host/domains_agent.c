/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tracked domain's guest agent link and its hint sets (domains_agent.h). */
#include "domains_agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentlink.h"
#include "clock.h"
#include "log.h"
#include "sample.h"
#include "util.h"

static void hints_free(proto_hints *h)
{
    if (h) {
        proto_hints_free(h);
        free(h);
    }
}

/* Forget the domain's hint set, if any; one a sample work reads is kept until it is back. */
static void hints_drop(dom_state *st)
{
    hints_free(st->guest.hints_unchecked);
    st->guest.hints_unchecked = NULL;
    if (st->guest.hints && st->guest.hints == st->guest.hints_lent) {
        hints_free(st->guest.hints_retired); /* (lent once at a time: none) */
        st->guest.hints_retired = st->guest.hints;
    } else {
        hints_free(st->guest.hints);
    }
    st->guest.hints = NULL;
}

const proto_hints *domains_hints_lend(dom_state *st, double max_age_s, double now)
{
    if (!st->guest.hints || now - st->guest.hints_at_s > max_age_s || st->guest.hints_lent)
        return NULL;
    return st->guest.hints_lent = st->guest.hints;
}

void domains_hints_return(dom_state *st)
{
    st->guest.hints_lent = NULL;
    hints_free(st->guest.hints_retired);
    st->guest.hints_retired = NULL;
}

void domains_agent_drop(dom_state *st)
{
    agentlink_close(st->guest.link);
    st->guest.link = NULL;
    st->guest.link_closed = false;
    st->guest.connected = false;
    hints_drop(st);
}

/* ---- the guest agent ---- */

static void on_agent_ready(void *opaque, const proto_hello_reply *hello)
{
    dom_state *st = opaque;

    st->guest.connected = true;
    log_info("vnuma-agent %s of '%s' connected (protocol %u, %u guest nodes, %u vCPUs)",
             LOG_Q(hello->agent), LOG_Q(st->name), hello->version, hello->nodes, hello->vcpus);
}

/* A hint set in place of the last one, once its bounds are checked against what the last
 * sample read of the domain (on the loop, while no work on the domain is out). */
static void hints_install(dom_state *st, proto_hints *h, double at_s)
{
    proto_gpa_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    char err[256] = "";
    int dropped;

    for (unsigned i = 0; i < st->sample.nr_ram; i++)
        ram[i] = (proto_gpa_range){.gpa = st->sample.ram[i].gpa, .length = st->sample.ram[i].size};
    /* lies the codec cannot see: vCPUs, nodes and ranges the domain does not have */
    dropped =
        proto_hints_check_bounds(h, st->sample.nr_prev, st->sample.nr_ram ? st->sample.nr_ram : 1,
                                 ram, st->sample.nr_ram, err, sizeof(err));
    if (dropped > 0) {
        st->guest.stats.dropped_entries += (uint64_t)dropped;
        snprintf(st->guest.stats.last_error, sizeof(st->guest.stats.last_error),
                 "out of bounds: %.200s", err);
        log_debug("Dropped %d hint entries of '%s' outside the domain: %s", dropped,
                  LOG_Q(st->name), err);
    }
    hints_drop(st);
    st->guest.hints = h;
    st->guest.hints_at_s = at_s;
}

/* While a work holds the domain, its sample may be rewriting the RAM layout and the vCPUs
 * the bounds are checked against: the set waits for the work (domains_hints_settle), a newer
 * one in its place. */
static void on_agent_hints(void *opaque, proto_hints *h)
{
    dom_state *st = opaque;

    if (st->busy) {
        hints_free(st->guest.hints_unchecked);
        st->guest.hints_unchecked = h;
        st->guest.unchecked_at_s = vn_mono_s();
        return;
    }
    hints_install(st, h, vn_mono_s());
}

void domains_hints_settle(dom_state *st)
{
    proto_hints *h = st->guest.hints_unchecked;

    if (!h || st->busy)
        return;
    st->guest.hints_unchecked = NULL;
    hints_install(st, h, st->guest.unchecked_at_s);
}

/* The hints go with the link at once (what status and the metrics show must never be
 * "disconnected" with a hint age); the link itself is closed from the pass, not from inside
 * its own callback. */
static void on_agent_closed(void *opaque)
{
    dom_state *st = opaque;

    st->guest.connected = false;
    st->guest.link_closed = true;
    hints_drop(st);
}

/* Open the agent channel when the guest has the port open and none is open yet: after a
 * sample, from the live XML it read (no libvirt call here, on the loop). */
void domains_agent_connect(vnumad *dm, dom_state *st)
{
    agentlink_callbacks cb = {
        .hints = on_agent_hints, .ready = on_agent_ready, .closed = on_agent_closed, .opaque = st};
    char path[256];
    bool open = false;
    int r;

    /* the cached live XML: an opened port raises VSERPORT_CHANGE, which marks it stale; a
     * read without an open channel is searched once */
    if (st->guest.link || !sample_monitor_ok(dm->cfg.use_qmp, st->cfg.mode) || !st->cfg.valid ||
        !st->sample.xml || st->guest.no_channel_gen == st->sample.xml_gen)
        return;
    r = agentlink_find_channel(st->sample.xml, path, sizeof(path), &open);
    st->guest.channel_defined = r == 0;
    if (r < 0 || !open) {
        st->guest.no_channel_gen = st->sample.xml_gen;
        return;
    }
    r = agentlink_open(path, st->sample.daemon_pid, st->sample.pid, &cb, &st->guest.stats,
                       &st->guest.link);
    /* refused: tried again each pass (QEMU's own socket may come back), said once per read of
     * the live XML */
    if ((r == -ELOOP || r == -ENOTSOCK || r == -EPERM) &&
        st->guest.refused_gen != st->sample.xml_gen) {
        st->guest.refused_gen = st->sample.xml_gen;
        log_warn("Not opening the agent channel of '%s' at %s: %s", LOG_Q(st->name), path,
                 r == -ELOOP ? "a symbolic link is on the way"
                 : r == -EPERM
                     ? "not its QEMU's (another user's socket, or another process listens)"
                     : "not a socket");
    } else if (r < 0) {
        log_debug("Cannot open the agent channel of '%s': %s", LOG_Q(st->name), strerror(-r));
    }
}
