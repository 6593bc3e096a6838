/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The domains vnumad tracks: opted in by their <balancer> element, restored and dropped
 * when they opt out, forgotten when they stop; and the glue to their guest agent link.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "act.h"
#include "act_backend.h"
#include "act_originals.h"
#include "agentlink.h"
#include "arrival.h"
#include "clock.h"
#include "conflicts.h"
#include "conntab.h"
#include "core.h"
#include "domains.h"
#include "domains_agent.h"
#include "hostpolicy.h"
#include "hostpolicy_match.h"
#include "log.h"
#include "loop.h"
#include "metadata.h"
#include "mover.h"
#include "origfile.h"
#include "policy.h"
#include "publish.h"
#include "ramlayout.h"
#include "rules.h"
#include "sample.h"
#include "sample_vcpus.h"
#include "util.h"
#include "virt.h"
#include "workers.h"

/* ---- domain state ---- */

dom_state *domains_find(vnumad *dm, const char *uuid)
{
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (strcmp(dm->doms[i]->uuid, uuid) == 0)
            return dm->doms[i];
    return NULL;
}

dom_state *domains_find_by_name(vnumad *dm, const char *name)
{
    const char *at = strrchr(name, '@');

    for (size_t i = 0; i < dm->nr_doms; i++)
        if (strcmp(dm->doms[i]->name, name) == 0)
            return dm->doms[i];
    /* NAME@CONNECTION: one of two domains of the same name on two libvirt daemons */
    for (size_t i = 0; at && i < dm->nr_doms; i++)
        if (strlen(dm->doms[i]->name) == (size_t)(at - name) &&
            !strncmp(dm->doms[i]->name, name, (size_t)(at - name)) &&
            !strcmp(conns_label(dm, dm->doms[i]->conn_id), at + 1))
            return dm->doms[i];
    return NULL;
}

void domains_state_free(dom_state *st)
{
    if (!st)
        return;
    domains_agent_drop(st);
    domains_hints_return(st); /* (no work runs on a state freed) */
    for (unsigned i = 0; i < STATE_HISTORY; i++)
        free(st->publish.history[i]);
    free(st->publish.last_record);
    free(st->sample.qv);
    free(st->sample.xml);
    free(st->carried);
    virt_dom_free(st->dom);
    munmap(st, sizeof(*st));
}

/*
 * A dom_state is large (tables sized for the largest domain: 1024 vCPUs, 64 cells, 256 KiB)
 * and mostly untouched for a common one: each is mapped on its own, so that its untouched
 * pages cost no memory. From the heap, calloc clears (and makes resident) every byte once
 * glibc's mmap threshold has grown past its size; 150 domains took 46 MiB (issue 14).
 */
static dom_state *state_new(void)
{
    void *p =
        mmap(NULL, sizeof(dom_state), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

void domains_forget(vnumad *dm, dom_state *st)
{
    mover_forget(dm->movers, st->uuid); /* nothing of it moves any more */
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (dm->doms[i] == st) {
            dm->doms[i] = dm->doms[--dm->nr_doms];
            break;
        }
    if (st->busy) {
        st->orphan = true; /* a work on it is out: freed when it is back (pass_release) */
        return;
    }
    domains_state_free(st);
}

/* A domain seen for the first time, or again with a new libvirt id (restarted, or
 * arrived by migration): everything learnt about the old QEMU is void, and rule 3's
 * early phase starts over. */
static void state_reset_run(dom_state *st, int id)
{
    st->id = id;
    st->sample.pid = 0;
    st->age_passes = 0;
    st->preferred_node = -1;
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        st->last_candidate[k] = -1;
    memset(st->down_at, 0, sizeof(st->down_at));
    st->sample.nr_hint_prev = 0;
    st->sample.hints_seq = 0;
    st->sample.hints_first_pass = 0;
    st->sample.ram_for_id = -1;
    st->sample.nr_ram = 0;
    st->sample.ram_failures = 0;
    st->sample.ram_retry_age = 0;
    st->sample.ram_error[0] = '\0';
    sample_mem_changed(&st->sample);
    st->sample.nr_prev = 0;
    st->sample.prev_sample_s = 0;
    memset(st->sample.prev_poll_ns, 0xff, sizeof(st->sample.prev_poll_ns));
    st->sample.poll_at_s = 0;
    st->sample.rss_counted_kib = 0;
    st->sample.kvm_poll = 0;
    st->permanent_error = false;
    st->error[0] = '\0';
    st->publish.qom_created = false;
    st->publish.pub_key[0] = '\0';
    st->publish.pub_at_s = 0;
    domains_agent_drop(st);
    st->nr_view = 0;
    memset(st->mover.memfd_bound, 0, sizeof(st->mover.memfd_bound));
    st->cputune_known = false;
    st->arrived = false;
    st->def_originals = false;
    st->sample.bound_logged = false;
    memset(&st->placed, 0, sizeof(st->placed));
    free(st->carried);
    st->carried = NULL;
    st->carried_used = false;
    sample_vcpus_stale(&st->sample);
    sample_xml_stale(&st->sample);
    virt_dom_free(st->dom);
    st->dom = NULL;
}

/* libvirt placement='auto' asks numad for a placement at domain start: said once, from the
 * live XML its first sample read (no read of its own). */
void domains_check_placement(dom_state *st)
{
    if (st->placement_checked || !st->sample.xml)
        return;
    st->placement_checked = true;
    st->placement_auto = conflicts_placement_auto(st->sample.xml);
    if (st->placement_auto)
        log_warn(
            "Domain '%s' has placement='auto' (numad-driven placement at start); vnumad moves it afterwards, so the two disagree: use placement='static' for opted-in domains (docs/operations.md)",
            LOG_Q(st->name));
}

/*
 * The cached live XML, vCPU threads or RAM layout are stale (an event said so). While a work
 * on the domain is out they are the worker's (it may be reading them): marked, and dropped
 * when the domain is no longer busy (pass_release); the next sample reads them again.
 */
void domains_stale(dom_state *st, unsigned what)
{
    if (st->busy) {
        st->stale_pending |= what;
        return;
    }
    if (what & DOM_STALE_XML)
        sample_xml_stale(&st->sample);
    if (what & DOM_STALE_VCPUS)
        sample_vcpus_stale(&st->sample);
    if (what & DOM_STALE_RAM)
        ramlayout_stale(&st->sample);
}

/* ---- opt-in ---- */

void domains_restore(vnumad *dm, virt_dom *d, dom_state *st, const char *why)
{
    sample_input in;
    act_target tg;
    int r;

    mover_forget(dm->movers, st->uuid); /* no more of its memory moves */
    if (!st->orig.saved)
        return;
    unsigned refused = 0;
    r = act_restore(d, st, dm->topo, &refused);
    dm->stats.errors[METRICS_ERR_RESTORE_BOUNDS] += refused;
    /* a vnumad that restarted may not have found the backends yet */
    in = sample_input_of(st);
    if (ramlayout_locate_backends(dm->root, d, &in, &st->sample, &st->count, st->orig.memfd_cells) <
        0)
        log_warn("Cannot find the shared memory backends of '%s' to give them their own policy "
                 "back",
                 LOG_Q(st->name));
    tg = act_target_of(st);
    if (act_unbind_memfd(dm->numa, &tg) < 0)
        log_warn("Failed to give the shared memory backends of '%s' their own policy back",
                 LOG_Q(st->name));
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_RESTORE]++;
        log_err("Failed to restore the original pinning of '%s': %s", LOG_Q(st->name),
                virt_last_error());
        return;
    }
    log_info("Restored the original pinning and binding of '%s' (%s)", LOG_Q(st->name), why);
    originals_drop(st);
    (void)domains_record_originals(dm, st);
    st->arrived = st->def_originals = false; /* its pins are this host's now */
    publish_record_simple(dm, d, st, "restored", why);
}

/*
 * What consider() reads of a domain, all libvirt round trips: its handle (the lookup), its
 * <balancer> element and vnumad's <state> element.
 * Read on a worker for an event (domains_consider_later), on the loop otherwise.
 */
typedef struct consider_reads {
    virt_dom *d; /* NULL: not found, or no connection */
    int ident;   /* virt_dom_ident(): 0, or -ESRCH when it does not run */
    virt_dom_id id;
    int meta; /* virt_metadata_get(): 0, -ENOENT (no <balancer>), -errno */
    char *meta_xml;
    int state; /* virt_state_get() */
    char *state_xml;
    /* without an element, what the host policy looks at (hostpolicy.h): the live XML (what the
     * fleet manager wrote: name, Nova's and KubeVirt's blocks) and the definition (its shape;
     * a transient domain's is the live XML's) */
    int xml; /* virt_dom_xml(): 0, -errno; -ENODATA: not read (no policy, or an element) */
    char *live_xml;
    char *shape_xml; /* NULL: not asked for */
} consider_reads;

/* The XML the host policy needs of a domain without an element (HOSTPOLICY_NEEDS_*). */
static void policy_read(virt_dom *d, unsigned needs, consider_reads *cr)
{
    if (!(needs & HOSTPOLICY_NEEDS_LIVE))
        return; /* the default alone: nothing of the domain is looked at */
    cr->xml = virt_dom_xml(d, &cr->live_xml);
    if (cr->xml < 0 || !(needs & HOSTPOLICY_NEEDS_INACTIVE))
        return;
    if (!virt_dom_persistent(d))
        cr->xml = (cr->shape_xml = strdup(cr->live_xml)) ? 0 : -ENOMEM;
    else
        cr->xml = virt_dom_xml_inactive(d, &cr->shape_xml);
}

static void consider_read(virt_conn *conn, const char *uuid, unsigned needs, consider_reads *cr)
{
    memset(cr, 0, sizeof(*cr));
    cr->ident = cr->meta = cr->state = -ENOTCONN;
    cr->xml = -ENODATA;
    if (!conn || virt_dom_open(conn, uuid, &cr->d) < 0) {
        cr->d = NULL;
        return;
    }
    cr->ident = virt_dom_ident(cr->d, &cr->id);
    if (cr->ident < 0)
        return;
    cr->meta = virt_metadata_get(cr->d, &cr->meta_xml);
    if (cr->meta < 0 && cr->meta != -ENOENT)
        return;
    if (cr->meta == -ENOENT && needs)
        policy_read(cr->d, needs, cr);
    cr->state = virt_state_get(cr->d, &cr->state_xml);
}

static void consider_reads_free(consider_reads *cr)
{
    virt_dom_free(cr->d);
    free(cr->meta_xml);
    free(cr->state_xml);
    free(cr->live_xml);
    free(cr->shape_xml);
    memset(cr, 0, sizeof(*cr));
}

int domains_record_originals(vnumad *dm, dom_state *st)
{
    int r = origfile_write(dm->cfg.state_dir, st->uuid, st->id, &st->orig);

    st->orig_recorded = r == 0;
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_ORIGINALS]++;
        log_warn("Cannot %s the record of the originals of '%s' in %s/originals: %s",
                 st->orig.saved ? "write" : "remove", LOG_Q(st->name), dm->cfg.state_dir,
                 strerror(-r));
    }
    return r;
}

/*
 * What the live metadata says of originals, never put back: the <original> of vnumad's <state>
 * (another host's: the domain arrived; this host's without a record: some vnumad changed it and
 * its record is gone; the same as a record of an earlier run: a save image restored), into *ret.
 */
static void claimed_originals(const consider_reads *cr, dom_originals *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (cr->state == 0)
        (void)meta_parse_state(cr->state_xml, ret);
}

/*
 * The originals a restore may put back: vnumad's own record of this QEMU run (origfile.h),
 * never the metadata, into *ret (ret->saved false: none). A record of an earlier run is this
 * run's when the live metadata carried the same originals along (a save image restored here:
 * `virsh restore`, a managed save at the next start, also across a reboot); else it goes.
 */
static void recorded_originals(vnumad *dm, const consider_reads *cr, dom_originals *ret)
{
    int r = origfile_read(dm->cfg.state_dir, cr->id.uuid, cr->id.id, ret);

    if (r == -ESTALE) {
        _cleanup_free_ dom_originals *claim = calloc(1, sizeof(*claim)); /* 1 MiB */
        if (claim)
            claimed_originals(cr, claim);
        if (claim && origfile_same(ret, claim) && !meta_originals_foreign(claim, dm->host_id)) {
            log_info("'%s' runs again with the originals vnumad recorded before (a save image "
                     "restored): taken over",
                     LOG_Q(cr->id.name));
            r = origfile_write(dm->cfg.state_dir, cr->id.uuid, cr->id.id, ret);
        } else {
            memset(ret, 0, sizeof(*ret));
            r = origfile_remove(dm->cfg.state_dir, cr->id.uuid);
        }
    }
    if (r < 0 && r != -ENOENT) {
        dm->stats.errors[METRICS_ERR_ORIGINALS]++;
        log_warn("Cannot read the record of the originals of '%s' in %s/originals: %s",
                 LOG_Q(cr->id.name), dm->cfg.state_dir, strerror(-r));
    }
}

typedef enum arrival {
    ARRIVAL_NONE,      /* an event or a resync: arrived only if its originals say so */
    ARRIVAL_MIGRATING, /* STARTED_MIGRATED: the migration runs, libvirt holds the domain */
    ARRIVAL_FINISHED,  /* RESUMED_MIGRATED: it runs here now */
    ARRIVAL_MAX,
} arrival;

/*
 * A domain that came from another host: by live migration, or with originals another host
 * saved (a vnumad started after the migration, a save image restored here). Its live pins
 * are the other host's, chosen for that host's CPUs, and so are the originals it carried:
 * neither is ever put back here. It is balanced as new (rule 3's early phase anew), and its
 * originals are this host's definition of it, taken before any change (act_operator_pins)
 * and, when `write`, written into the live metadata at once, so that an opt-out or a
 * vnumad stop gives it the pins it would have had had it started here.
 */
static void arrive(vnumad *dm, virt_dom *d, dom_state *st, const consider_reads *cr, bool write)
{
    char time[32];

    if (!st->arrived) {
        log_info(
            "Domain '%s' arrived from another host: the pins it came with and the originals saved there are not put back here",
            LOG_Q(st->name));
        state_reset_run(st, st->id);
        originals_drop(st); /* the other host's <original> goes from the metadata too */
        st->arrived = st->def_originals = true;
    }
    arrival_adopt_placed(dm->host_id, st, cr->state == 0 ? cr->state_xml : NULL);
    arrival_adopt_carried(st, cr->state == 0 ? cr->state_xml : NULL);
    if (!write || st->orig.saved)
        return;
    act_operator_pins(d, st, dm->topo);
    if (!st->orig.saved)
        return; /* the next pass tries again before it changes anything */
    (void)domains_record_originals(dm, st); /* (else the pass does, before any change) */
    vn_iso_time(time, sizeof(time));
    if (publish_metadata(d, st, dm->pass, time, NULL) < 0)
        dm->stats.errors[METRICS_ERR_METADATA]++;
}

/*
 * The mode of a domain without an element: the host policy's (the first rule that matches its
 * XML, else the default), and what gave it into *ret_where. -EAGAIN: its XML could not be read
 * (nothing changes until it can).
 */
static int policy_mode(const vnumad *dm, const consider_reads *cr, vn_mode *ret,
                       const char **ret_where)
{
    hp_facts f;

    *ret = VN_MODE_OFF;
    *ret_where = "default";
    if (!hostpolicy_needs(dm->policy))
        return 0;
    if (!(hostpolicy_needs(dm->policy) & HOSTPOLICY_NEEDS_LIVE)) {
        *ret = dm->policy->default_mode;
        return 0;
    }
    if (cr->xml == -ENODATA) /* read before the policy changed: it is considered again */
        return -EAGAIN;
    if (cr->xml < 0)
        return -EAGAIN;
    (void)hostpolicy_facts(cr->live_xml, cr->shape_xml, &f);
    *ret = hostpolicy_decide(dm->policy, &f, ret_where);
    return 0;
}

/* The <balancer> element a host policy's mode stands for: as if the domain had
 * <balancer mode="MODE"/> (every other knob its default). */
static void policy_balancer(const topology *t, vn_mode mode, vn_balancer *ret)
{
    char xml[96];

    snprintf(xml, sizeof(xml), "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"%s\"/>",
             mode_name(mode));
    (void)meta_parse(xml, t, ret, NULL);
}

/*
 * Look at a running domain's <balancer> element (what `cr` read) and track, update or drop
 * it; without an element, the host policy says its mode (hostpolicy.h): the element always
 * wins. Returns true when something that matters for balancing changed.
 */
static bool consider(vnumad *dm, unsigned conn, const char *uuid, arrival how,
                     const consider_reads *cr)
{
    virt_dom *d = cr->d;
    vn_balancer cfg;
    _cleanup_free_ dom_originals *orig = calloc(1, sizeof(*orig));   /* 1 MiB: not on a stack */
    _cleanup_free_ dom_originals *claim = calloc(1, sizeof(*claim)); /* (both) */
    dom_state *st = domains_find(dm, uuid);
    bool changed = false;
    vn_mode pmode = VN_MODE_OFF;
    const char *where = "element";
    char why[STATE_OPT_IN_MAX + 48];

    if (!orig || !claim)
        return false;

    if (st && st->busy) {
        /* a work on it is out (pass.c): read again once it is back, as the arrival it is
         * (a migration that finished meanwhile would otherwise be lost: its originals are
         * taken only then) */
        st->reconsider = true;
        st->reconsider_how = VN_MAX(st->reconsider_how, (unsigned)how);
        return false;
    }
    if (!d)
        return false;
    if (st && st->conn_id != conn && conns_find(dm, st->conn_id)) {
        /* two daemons with a domain of the same UUID (a tenant chose it): the first one found
         * is balanced, the other left alone */
        log_warn("Domain '%s' on connection %s has the same UUID as '%s' on connection %s; "
                 "left alone",
                 LOG_Q(cr->ident == 0 ? cr->id.name : uuid), conns_label(dm, conn), LOG_Q(st->name),
                 conns_label(dm, st->conn_id));
        return false;
    }
    if (cr->ident < 0) {
        if (st) /* (its record stays for a save image restored: origfile.h) */
            domains_forget(dm, st);
        return false;
    }
    if (st && st->id != cr->id.id) {
        /* a new QEMU run: what the last one saved is not this one's */
        originals_drop(st);
        st->arrived = st->def_originals = false;
    }
    /* what a restore may put back: vnumad's own record of this run, and nothing else */
    if (!st || !st->orig.saved)
        recorded_originals(dm, cr, orig);
    if (cr->meta == -ENOENT && policy_mode(dm, cr, &pmode, &where) < 0)
        return false;
    if (cr->meta == -ENOENT && pmode == VN_MODE_OFF) {
        /* never opted in, or the element was removed: restore what we changed (also what a
         * vnumad before us changed, when it recorded it) */
        if (!st && dm->nr_doms < MAX_DOMAINS && orig->saved) {
            st = state_new();
            if (st) {
                snprintf(st->uuid, sizeof(st->uuid), "%s", cr->id.uuid);
                snprintf(st->name, sizeof(st->name), "%s", cr->id.name);
                st->conn_id = conn;
                state_reset_run(st, cr->id.id);
                st->cfg.valid = true;
                originals_set(&st->orig, orig);
                dm->doms[dm->nr_doms++] = st;
            }
        }
        if (st) {
            snprintf(st->host_id, sizeof(st->host_id), "%s", dm->host_id);
            if (how != ARRIVAL_NONE)
                arrive(dm, d, st, cr, false); /* the restore writes the metadata */
            if (st->def_originals && !st->orig.saved)
                act_operator_pins(d, st, dm->topo);
            if (!strcmp(st->opt_in, "element") || !st->opt_in[0])
                snprintf(why, sizeof(why), "opted out: element removed");
            else
                snprintf(why, sizeof(why), "opted out: host policy (%s)", where);
            domains_restore(dm, d, st, why);
            domains_forget(dm, st);
            changed = true;
        }
        return changed;
    }
    if (cr->meta < 0 && cr->meta != -ENOENT)
        return false;
    char dropped[64] = "";
    bool clipped = false;
    if (cr->meta == -ENOENT) {
        policy_balancer(dm->topo, pmode, &cfg); /* (no <original> in it: claim stays empty) */
    } else {
        meta_parse(cr->meta_xml, dm->topo, &cfg, claim);
        clipped = policy_balancer_knobs(&cfg, dm->cfg.balancer_knobs, dropped, sizeof(dropped));
    }
    if (claim->saved)
        log_warn("The <balancer> element of '%s' holds an <original>: ignored (vnumad puts back "
                 "only what it recorded itself)",
                 LOG_Q(cr->id.name));
    claimed_originals(cr, claim);
    if (!st && cfg.valid && cfg.mode == VN_MODE_OFF && !orig->saved)
        return false; /* mode="off" and nothing of ours to undo */
    if (!st) {
        if (dm->nr_doms >= MAX_DOMAINS) {
            log_warn("Too many domains; not tracking '%s'", LOG_Q(cr->id.name));
            return false;
        }
        st = state_new();
        if (!st)
            return false;
        snprintf(st->uuid, sizeof(st->uuid), "%s", cr->id.uuid);
        state_reset_run(st, cr->id.id);
        dm->doms[dm->nr_doms++] = st;
        changed = true;
        log_info("Tracking domain '%s' (%s)%s%s", LOG_Q(cr->id.name), uuid,
                 conns_many(dm) ? " on connection " : "",
                 conns_many(dm) ? conns_label(dm, conn) : "");
    } else if (st->id != cr->id.id) {
        state_reset_run(st, cr->id.id);
        changed = true;
    }
    snprintf(st->name, sizeof(st->name), "%s", cr->id.name);
    snprintf(st->host_id, sizeof(st->host_id), "%s", dm->host_id);
    st->conn_id = conn; /* (a domain whose connection went, found on another) */
    /* an arrival: a migration's event, or another host's originals in the live metadata of a
     * run vnumad has no record of (a vnumad started after the migration, a save image restored
     * here); with a record of this run the metadata says nothing vnumad does not know */
    if (how != ARRIVAL_NONE ||
        (!st->orig.saved && !orig->saved && meta_originals_foreign(claim, dm->host_id))) {
        changed |= !st->arrived;
        arrive(dm, d, st, cr, how != ARRIVAL_MIGRATING);
    }
    /* (a vnumad started after it arrived placed) */
    arrival_adopt_placed(dm->host_id, st, cr->state == 0 ? cr->state_xml : NULL);
    /* a restarted vnumad finds the originals in its record */
    if (!st->orig.saved && orig->saved && !st->arrived) {
        originals_set(&st->orig, orig);
        st->orig_recorded = true;
    } else if (!st->orig.saved && !st->def_originals && claim->saved) {
        /* the live metadata says a vnumad changed it (this host's <original>, or one without a
         * host: an older vnumad's), and there is no record: its live pins may be that
         * vnumad's, so its originals are this host's definition, taken before any change */
        log_warn("'%s' has originals in its live metadata but vnumad has no record of them: "
                 "its definition's pins are taken as its originals",
                 LOG_Q(st->name));
        st->def_originals = true;
        st->cputune_known = false;
    }
    if (memcmp(&cfg, &st->cfg, sizeof(cfg)) != 0 || strcmp(st->opt_in, where) != 0) {
        if (!cfg.valid)
            log_warn("Leaving '%s' alone: invalid <balancer> element: %s", LOG_Q(st->name),
                     cfg.error);
        else
            log_info("Domain '%s' balancer mode %s (%s)", LOG_Q(st->name), mode_name(cfg.mode),
                     where);
        snprintf(st->opt_in, sizeof(st->opt_in), "%s", where);
        if (clipped)
            log_warn("The <balancer> element of '%s' asks for %s: not applied, the operator's "
                     "alone (balancer_knobs = yes in vnumad.conf gives the element those)",
                     LOG_Q(st->name), dropped);
        st->cfg = cfg;
        changed = true;
        if (cfg.mode != VN_MODE_AUTO) /* advise: nothing more of it moves */
            mover_drop(dm->movers, st->uuid);
    }
    /* the handle read with it serves this QEMU run's passes: no lookup on the loop */
    if (!st->dom && virt_dom_ref(d, &st->dom) < 0)
        st->dom = NULL;
    if (cfg.valid && cfg.mode == VN_MODE_OFF) {
        if (st->def_originals && !st->orig.saved)
            act_operator_pins(d, st, dm->topo);
        domains_restore(dm, d, st, "opted out: mode off");
        domains_forget(dm, st);
    } else if (!cfg.valid && st->orig.saved) {
        domains_restore(dm, d, st, "invalid <balancer> element");
    }
    return changed;
}

/*
 * Events: the reads on a worker, so that a storm of starts (each read waits for libvirtd,
 * busy starting domains) does not hold the loop; then consider() on the loop. One read per
 * domain is out at a time: an event for it while its read is out (it may predate the
 * change) reads again when that one is back, with the strongest arrival asked for.
 */
typedef struct consider_work {
    work w;
    vnumad *dm;
    struct consider_work *next; /* dm->considering */
    conn_slot *cs;              /* its connection, in use until done (conns_use) */
    unsigned conn;
    char uuid[SNAP_UUID_MAX];
    arrival how;
    bool again;
    unsigned needs; /* hostpolicy_needs() when submitted (the loop's policy, not the worker's) */
    consider_reads cr;
} consider_work;

static consider_work *consider_pending(vnumad *dm, unsigned conn, const char *uuid)
{
    for (consider_work *cw = dm->considering; cw; cw = cw->next)
        if (cw->conn == conn && strcmp(cw->uuid, uuid) == 0)
            return cw;
    return NULL;
}

static void consider_run(work *w)
{
    consider_work *cw = (consider_work *)w;

    consider_read(cw->cs->conn, cw->uuid, cw->needs, &cw->cr);
}

static void consider_done(work *w, bool late);

static void consider_submit(vnumad *dm, consider_work *cw)
{
    cw->again = false;
    cw->needs = hostpolicy_needs(dm->policy);
    cw->next = dm->considering;
    dm->considering = cw;
    dm->nr_considering++;
    workers_submit(dm->pool, &cw->w);
}

static void consider_done(work *w, bool late)
{
    consider_work *cw = (consider_work *)w;
    vnumad *dm = cw->dm;

    (void)late;
    for (consider_work **p = &dm->considering; *p; p = &(*p)->next)
        if (*p == cw) {
            *p = cw->next;
            break;
        }
    dm->nr_considering--;
    if (cw->again && !dm->quit && cw->cs->connected) {
        consider_reads_free(&cw->cr);
        cw->w = (work){.run = consider_run, .done = consider_done};
        consider_submit(dm, cw);
        return;
    }
    if (!dm->quit && cw->cs->connected && consider(dm, cw->conn, cw->uuid, cw->how, &cw->cr))
        dm->pass_soon(dm);
    consider_reads_free(&cw->cr); /* (before the connection may close) */
    conns_unuse(cw->cs);
    free(cw);
}

static void consider_later(vnumad *dm, unsigned conn, const char *uuid, arrival how)
{
    consider_work *cw = consider_pending(dm, conn, uuid);
    conn_slot *cs = conns_find(dm, conn);

    if (cw) {
        cw->again = true;
        cw->how = VN_MAX(cw->how, how);
        return;
    }
    if (!cs || !cs->connected)
        return;
    cw = calloc(1, sizeof(*cw));
    if (!cw)
        return;
    cw->w = (work){.run = consider_run, .done = consider_done};
    cw->dm = dm;
    cw->cs = cs;
    cw->conn = conn;
    conns_use(cs);
    snprintf(cw->uuid, sizeof(cw->uuid), "%s", uuid);
    cw->how = how;
    consider_submit(dm, cw);
}

void domains_consider_later(vnumad *dm, unsigned conn, const char *uuid)
{
    consider_later(dm, conn, uuid, ARRIVAL_NONE);
}

void domains_consider_stale(vnumad *dm, unsigned conn, const char *uuid)
{
    consider_work *cw = consider_pending(dm, conn, uuid);

    if (cw)
        cw->again = true;
}

void domains_consider_drain(vnumad *dm, double timeout_s)
{
    double end = vn_mono_s() + timeout_s;

    while (dm->nr_considering && vn_mono_s() < end)
        if (loop_run_once() < 0)
            break;
}

/* On the loop: read now. A read for the same domain still out is stale: read again. */
static bool consider_now(vnumad *dm, unsigned conn, const char *uuid, arrival how)
{
    consider_work *cw = consider_pending(dm, conn, uuid);
    consider_reads cr;
    bool changed;

    if (cw)
        cw->again = true;
    consider_read(conns_virt(dm, conn), uuid, hostpolicy_needs(dm->policy), &cr);
    changed = consider(dm, conn, uuid, how, &cr);
    consider_reads_free(&cr);
    return changed;
}

bool domains_consider(vnumad *dm, unsigned conn, const char *uuid)
{
    return consider_now(dm, conn, uuid, ARRIVAL_NONE);
}

bool domains_arrived(vnumad *dm, unsigned conn, const char *uuid, bool finished)
{
    return consider_now(dm, conn, uuid, finished ? ARRIVAL_FINISHED : ARRIVAL_MIGRATING);
}

bool domains_reconsider(vnumad *dm, dom_state *st)
{
    char uuid[SNAP_UUID_MAX];
    arrival how = (arrival)st->reconsider_how;

    st->reconsider = false;
    st->reconsider_how = ARRIVAL_NONE;
    memcpy(uuid, st->uuid, sizeof(uuid)); /* consider() may free st */
    return consider_now(dm, st->conn_id, uuid, how);
}
