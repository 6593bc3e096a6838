/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The originals of a domain (act.h): what vnumad found before it changed anything (vCPU,
 * emulator and IOThread pins, a restrictive nodeset), which pins are the operator's and
 * never touched, and putting the originals back at an opt-out or a stop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "act_originals.h"
#include "act_pins.h"
#include "log.h"
#include "metadata.h"
#include "util.h"

static bool iothread_saved(const dom_state *st, unsigned id)
{
    for (unsigned k = 0; k < st->orig.nr_iothreads; k++)
        if (st->orig.iothread_id[k] == id)
            return true;
    return false;
}

/*
 * A domain that arrived from another host (st->arrived) carries that host's pins, live and
 * saved: none may be put back here; one whose live metadata says a vnumad changed it, with
 * no record of it (st->def_originals, as for an arrival), may carry that vnumad's. Its originals
 * are what this host would have given it at start: the pins of its definition here (`xml`;
 * transient, defined=false: its <vcpu cpuset> only) for the threads vnumad may change
 * (st->cputune_known). Returns 0 or -errno.
 */
static int arrival_originals(virt_dom *d, dom_state *st, const topology *t, const char *xml,
                             bool defined)
{
    const act_target tg = act_target_of(st);
    _cleanup_free_ virt_vcpu *v = NULL;
    _cleanup_free_ unsigned *ids = NULL;
    _cleanup_free_ vn_cpuset *pins = NULL;
    unsigned n = 0, nio = 0, nr_vcpus = 0;
    _cleanup_free_ dom_originals *o = calloc(1, sizeof(*o)); /* 1 MiB: not on a stack */
    vn_cpuset def;
    int r;

    if (!o)
        return -ENOMEM;
    r = virt_vcpus(d, &v, &n);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < n; i++)
        nr_vcpus = VN_MAX(nr_vcpus, v[i].number + 1);
    r = meta_defined_originals(xml, defined, &t->cpus, nr_vcpus, o, &def);
    if (r < 0)
        return r;
    if (!st->emulator_explicit) {
        o->emulator_pin = def;
        o->emulator_saved = true;
    }
    if (virt_iothreads(d, &ids, &pins, &nio) == 0)
        for (unsigned i = 0; i < nio && o->nr_iothreads < STATE_MAX_IOTHREADS; i++) {
            if (act_iothread_explicit(&tg, ids[i]))
                continue;
            o->iothread_id[o->nr_iothreads] = ids[i];
            o->iothread_pin[o->nr_iothreads++] = def;
        }
    snprintf(o->host, sizeof(o->host), "%s", st->host_id);
    originals_take(st, o);
    return 0;
}

void act_explicit_pins(dom_state *st, const domxml_info *x, bool persistent)
{
    /* a transient arrival's live XML holds the other host's pins, maybe its vnumad's */
    bool foreign = !persistent && st->def_originals;

    st->emulator_explicit = x->emulator_pinned && !foreign;
    st->nr_iothread_explicit = 0;
    for (unsigned i = 0; i < x->nr_iothread_pins && !foreign && i < STATE_MAX_IOTHREADS; i++)
        if (persistent || !st->orig.saved || !iothread_saved(st, x->iothread_pins[i]))
            st->iothread_explicit[st->nr_iothread_explicit++] = x->iothread_pins[i];
}

/* Once per QEMU run (act.h); while the XML cannot be read, every emulator and IOThread pin is
 * kept (st->cputune_known stays false). */
void act_operator_pins(virt_dom *d, dom_state *st, const topology *t)
{
    _cleanup_free_ char *xml = NULL;
    domxml_info x;
    bool persistent;
    char err[256];
    int r;

    if (st->cputune_known)
        return;
    persistent = virt_dom_persistent(d);
    r = persistent ? virt_dom_xml_inactive(d, &xml) : virt_dom_xml(d, &xml);
    if (r < 0) {
        log_debug(
            "Cannot read the XML of '%s' (%s): its emulator and IOThread pins are kept this pass",
            LOG_Q(st->name), virt_last_error());
        return;
    }
    r = domxml_parse(xml, t, &x, err, sizeof(err));
    if (r < 0) {
        log_debug(
            "Cannot parse the XML of '%s' (%s): its emulator and IOThread pins are kept this pass",
            LOG_Q(st->name), err);
        return;
    }
    act_explicit_pins(st, &x, persistent);
    if (!persistent && st->orig.saved && st->emulator_explicit && st->orig.emulator_saved) {
        vn_cpuset cur;
        if (virt_emulator_pin(d, &cur) < 0 || !cpuset_equal(&cur, &st->orig.emulator_pin))
            st->emulator_explicit = false; /* vnumad's own pin, from before its restart */
    }
    st->cputune_known = true;
    r = st->def_originals && !st->orig.saved ? arrival_originals(d, st, t, xml, persistent) : 0;
    if (r < 0) {
        log_debug("Cannot take this host's originals of '%s': %s", LOG_Q(st->name), strerror(-r));
        st->cputune_known = false; /* nothing is changed before they are taken */
        return;
    }
    if (st->emulator_explicit || st->nr_iothread_explicit)
        log_info("The %s XML of '%s' pins %s%s%u IOThread(s): vnumad leaves those pins as they are",
                 persistent ? "persistent" : "live", LOG_Q(st->name),
                 st->emulator_explicit ? "its emulator" : "", st->emulator_explicit ? " and " : "",
                 st->nr_iothread_explicit);
}

int act_save_originals(virt_dom *d, dom_state *st, const snap_domain *sd)
{
    const act_target tg = act_target_of(st);
    _cleanup_free_ virt_vcpu *v = NULL;
    _cleanup_free_ dom_originals *o = NULL;
    unsigned n = 0;
    char nodeset[STATE_NODESET_MAX];
    vn_mem_mode mode;
    int r;

    if (st->orig.saved)
        return 0;
    /* the operator's pins are not known, or (arrived, no record) this host's originals not taken
     * yet (act_operator_pins takes them): nothing is changed yet */
    if (!st->cputune_known || st->def_originals)
        return -EAGAIN;
    o = calloc(1, sizeof(*o)); /* 1 MiB: not on a stack */
    if (!o)
        return -ENOMEM;
    r = virt_vcpus(d, &v, &n);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < n; i++)
        if (v[i].number < STATE_MAX_VCPUS) {
            o->vcpu_pin[v[i].number] = v[i].affinity;
            o->nr_vcpus = VN_MAX(o->nr_vcpus, v[i].number + 1);
        }
    /* the operator's pins (act_operator_pins) are neither changed nor restored */
    if (!st->emulator_explicit && virt_emulator_pin(d, &o->emulator_pin) == 0)
        o->emulator_saved = true;
    {
        _cleanup_free_ unsigned *ids = NULL;
        _cleanup_free_ vn_cpuset *pins = NULL;
        unsigned nio = 0;
        if (virt_iothreads(d, &ids, &pins, &nio) == 0)
            for (unsigned i = 0; i < nio && o->nr_iothreads < STATE_MAX_IOTHREADS; i++) {
                if (act_iothread_explicit(&tg, ids[i]))
                    continue;
                o->iothread_id[o->nr_iothreads] = ids[i];
                o->iothread_pin[o->nr_iothreads++] = pins[i];
            }
    }
    if (sd->nr_cells && sd->cells[0].binding.mode == VN_MEM_RESTRICTIVE &&
        virt_numa_get(d, &mode, nodeset, sizeof(nodeset)) == 0 && mode == VN_MEM_RESTRICTIVE) {
        snprintf(o->nodeset, sizeof(o->nodeset), "%s", nodeset);
        o->numa_saved = true;
    }
    o->saved = true;
    snprintf(o->host, sizeof(o->host), "%s", st->host_id);
    originals_take(st, o);
    return 0;
}

bool act_restore_pin_ok(const vn_cpuset *pin, const vn_cpuset *bound, const topology *t)
{
    if (cpuset_empty(pin) || !cpuset_subset(pin, bound))
        return false;
    /* a definition that names CPUs names the isolated ones it gives the domain too */
    if (cpuset_equal(pin, bound) || !cpuset_equal(bound, &t->cpus))
        return true;
    return !cpuset_intersects(pin, &t->isolated);
}

/* The definition's pins on this host, into *def (every vCPU's) and *def_all (the emulator's
 * and unpinned IOThreads'): a persistent domain's definition, a transient one's live <vcpu
 * cpuset> (its live <vcpupin>s are vnumad's own by now). -errno when it cannot be read. */
static int restore_bounds(virt_dom *d, const dom_state *st, const topology *t, dom_originals *def,
                          vn_cpuset *def_all)
{
    _cleanup_free_ char *xml = NULL;
    bool persistent = virt_dom_persistent(d);
    int r = persistent ? virt_dom_xml_inactive(d, &xml) : virt_dom_xml(d, &xml);

    if (r < 0)
        return r;
    return meta_defined_originals(xml, persistent, &t->cpus, st->orig.nr_vcpus, def, def_all);
}

/* A saved pin within what the definition gives the thread: its own pin there (`bound`, a
 * <vcpupin>, else the default), or the CPUs the definition gives the domain at all (`def_all`:
 * its <vcpu cpuset>, else every host CPU, and every <vcpupin>), which a live pin of the
 * operator's may have used; else the definition's pin. */
static void pin_bounded(const dom_state *st, const char *what, vn_cpuset *pin,
                        const vn_cpuset *bound, const vn_cpuset *def_all, const topology *t,
                        unsigned *refused)
{
    char a[128] = "", b[128] = "";

    if (act_restore_pin_ok(pin, bound, t) || act_restore_pin_ok(pin, def_all, t))
        return;
    (void)cpuset_format(pin, a, sizeof(a));
    (void)cpuset_format(bound, b, sizeof(b));
    log_warn("The saved original pin of %s of '%s' (%s) is not one its definition allows (%s): "
             "the definition's is put back",
             what, LOG_Q(st->name), a, b);
    *pin = *bound;
    (*refused)++;
}

/*
 * The originals are read back from the domain's metadata, which whoever may write any of its
 * namespaces can forge (docs/security.md): every pin put back is within the CPUs the domain's
 * definition on this host gives it (pin_bounded, act_restore_pin_ok), else the definition's own
 * pin is; a restrictive nodeset is within the definition's. Replaced in st->orig (kept for a
 * retry).
 */
static void restore_bound(virt_dom *d, dom_state *st, const topology *t, unsigned *refused)
{
    _cleanup_free_ dom_originals *def = calloc(1, sizeof(*def)); /* 1 MiB: not on a stack */
    vn_cpuset def_all = t->cpus;
    char what[48];

    if (!def || restore_bounds(d, st, t, def, &def_all) < 0) {
        log_warn("Cannot read the definition of '%s' (%s): its originals are put back only "
                 "where they stay off the host's isolated CPUs",
                 LOG_Q(st->name), virt_last_error());
        if (def) {
            memset(def, 0, sizeof(*def));
            for (unsigned v = 0; v < st->orig.nr_vcpus && v < STATE_MAX_VCPUS; v++)
                def->vcpu_pin[v] = t->cpus;
        }
        def_all = t->cpus;
    }
    /* the CPUs the definition gives the domain at all: its default and every vCPU's pin */
    vn_cpuset dflt = def_all;
    for (unsigned v = 0; def && v < st->orig.nr_vcpus && v < STATE_MAX_VCPUS; v++)
        cpuset_or(&def_all, &def_all, &def->vcpu_pin[v]);
    for (unsigned v = 0; v < st->orig.nr_vcpus && v < STATE_MAX_VCPUS; v++) {
        if (cpuset_empty(&st->orig.vcpu_pin[v]))
            continue;
        snprintf(what, sizeof(what), "vCPU %u", v);
        pin_bounded(st, what, &st->orig.vcpu_pin[v], def ? &def->vcpu_pin[v] : &t->cpus, &def_all,
                    t, refused);
    }
    if (st->orig.emulator_saved)
        pin_bounded(st, "the emulator", &st->orig.emulator_pin, &dflt, &def_all, t, refused);
    for (unsigned i = 0; i < st->orig.nr_iothreads; i++) {
        snprintf(what, sizeof(what), "IOThread %u", st->orig.iothread_id[i]);
        pin_bounded(st, what, &st->orig.iothread_pin[i], &dflt, &def_all, t, refused);
    }
    if (st->orig.numa_saved) {
        vn_cpuset want, allowed;
        bool ok = cpuset_parse(st->orig.nodeset, &want) == 0 && !cpuset_empty(&want);
        if (ok && def && def->numa_saved && cpuset_parse(def->nodeset, &allowed) == 0)
            ok = cpuset_subset(&want, &allowed);
        else if (ok) {
            cpuset_zero(&allowed);
            for (unsigned n = 0; n < t->nr_nodes; n++)
                cpuset_set(&allowed, (unsigned)t->nodes[n].os_index);
            ok = cpuset_subset(&want, &allowed);
        }
        if (!ok) {
            log_warn("The saved original nodeset of '%s' (%s) is not one its definition allows: "
                     "%s",
                     LOG_Q(st->name), st->orig.nodeset,
                     def && def->numa_saved ? "the definition's is put back"
                                            : "it is left as it is");
            if (def && def->numa_saved)
                snprintf(st->orig.nodeset, sizeof(st->orig.nodeset), "%s", def->nodeset);
            else
                st->orig.numa_saved = false;
            (*refused)++;
        }
    }
}

int act_restore(virt_dom *d, dom_state *st, const topology *t, unsigned *refused)
{
    int first = 0, r;

    *refused = 0;
    if (!st->orig.saved)
        return 0;
    restore_bound(d, st, t, refused);
    /* libvirt first; each thread's real affinity is checked once, after everything below */
    for (unsigned v = 0; v < st->orig.nr_vcpus; v++) {
        if (cpuset_empty(&st->orig.vcpu_pin[v]))
            continue;
        r = virt_pin_vcpu(d, v, &st->orig.vcpu_pin[v]);
        if (r < 0 && !first)
            first = r;
    }
    if (st->orig.emulator_saved) {
        r = virt_pin_emulator(d, &st->orig.emulator_pin);
        if (r < 0 && !first)
            first = r;
    }
    for (unsigned i = 0; i < st->orig.nr_iothreads; i++) {
        r = virt_pin_iothread(d, st->orig.iothread_id[i], &st->orig.iothread_pin[i]);
        if (r < 0 && !first)
            first = r;
    }
    if (st->orig.numa_saved) {
        r = virt_numa_set_nodeset(d, st->orig.nodeset);
        if (r < 0 && !first)
            first = r;
    }
    /* after the emulator, IOThread and numatune changes (libvirt rewrites cgroup settings
     * for them): every vCPU thread must really have its original affinity */
    for (unsigned v = 0; v < st->orig.nr_vcpus && v < STATE_MAX_VCPUS; v++) {
        if (cpuset_empty(&st->orig.vcpu_pin[v]))
            continue;
        r = act_thread_affinity(st->sample.pid, st->sample.vcpu_tid[v], &st->orig.vcpu_pin[v]);
        if (r > 0)
            st->count.affinity_fixups++;
        else if (r < 0 && !first)
            first = r;
    }
    return first;
}
