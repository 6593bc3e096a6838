/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The originals (act_originals.c): what vnumad found before it changed anything, which pins
 * are the operator's and never touched, and putting the originals back.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "act.h"
#include "domxml.h"

/*
 * Record what vnumad is about to change (vCPU pins, emulator pin, restrictive
 * nodeset) in st->orig, once per domain lifetime. Returns 0 or -errno.
 */
int act_save_originals(virt_dom *d, dom_state *st, const snap_domain *sd);

/*
 * Which emulator and IOThread pins of a domain's <cputune> (x, parsed from its persistent XML
 * when `persistent`, else from its live XML) are the operator's, into st->emulator_explicit
 * and st->iothread_explicit: vnumad never changes, saves or restores those. A persistent XML
 * is the operator's whatever vnumad did live (it pins live only). A transient domain has only
 * its live XML: its pins count as the operator's unless vnumad saved them as originals (a
 * vnumad restart: it may have changed them); act_operator_pins also drops an emulator pin
 * that differs from the saved one. A transient domain that arrived from another host
 * (st->arrived) has none: its live pins are the other host's, possibly its vnumad's, and it
 * is taken as unpinned within its <vcpu cpuset> (docs/fleet.md). No I/O.
 */
void act_explicit_pins(dom_state *st, const domxml_info *x, bool persistent);

/* Learn which emulator and IOThread pins are the operator's (act_explicit_pins, from the
 * domain's persistent XML, else its live XML), once per QEMU run: those are
 * never changed, saved or restored. For a domain that arrived from another host
 * (st->arrived), or one vnumad has no record of whose metadata says a vnumad changed it
 * (st->def_originals covers both), without originals yet, it also takes them, from this host's
 * definition of the domain (act_originals.c arrival_originals). Until it succeeds,
 * act_save_originals() refuses with -EAGAIN and act_apply() pins neither. */
void act_operator_pins(virt_dom *d, dom_state *st, const topology *t);

/*
 * Put back what st->orig saved, bounded by the domain's definition on this host (its
 * persistent XML; a transient domain's <vcpu cpuset>): a saved pin the definition does not
 * allow (act_restore_pin_ok: the originals come from metadata a tenant may forge) is replaced
 * by the definition's, and counted in *refused. Returns 0 or the first -errno (it tries
 * everything).
 */
int act_restore(virt_dom *d, dom_state *st, const topology *t, unsigned *refused);

/* Whether a saved pin may be put back where the domain's definition gives the thread `bound`:
 * within it, and off the host's isolated CPUs unless the definition names CPUs (a definition
 * that names none gives every host CPU, which is not a choice of the isolated ones) or the pin
 * is the whole bound. */
bool act_restore_pin_ok(const vn_cpuset *pin, const vn_cpuset *bound, const topology *t);
