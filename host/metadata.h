/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The domain's metadata, read and written with libxml2. Two elements, one writer each:
 *
 *   <balancer mode="auto" nodes="0-1" rate="256" priority="0"/>
 *       namespace urn:vnuma:balancer:1: the operator's opt-in. vnumad only reads it.
 *
 *   <state>                                                   namespace urn:vnuma:state:1:
 *     <original host="machine id">                            vnumad's own, live only
 *       <vcpupin vcpu="0" cpuset="0-3"/> ... <emulatorpin cpuset="0-7"/>
 *       <numatune nodeset="0-1"/>
 *     </original>
 *     <decision pass="12" time="2026-11-30T05:55:00Z">{compact JSON record}</decision>
 *   </state>
 *
 * libvirt has no compare-and-swap for metadata: were vnumad to rewrite the operator's
 * element (read, add its record, write), an opt-out written between its read and its
 * write would be lost. So vnumad writes only its own element, whole, never read back.
 * vnumad 0.1.0 kept <original> and <decision> inside <balancer>: meta_parse() still
 * accepts them (and returns that <original>, which domains.c logs and ignores).
 *
 * <original> in <state> is a copy for readers: what a restore puts back comes from vnumad's
 * own record (origfile.h), never from the metadata, which anyone who may write metadata can
 * forge.
 *
 * The live metadata travels with the domain (live migration, a save image restored
 * elsewhere): <original host=...> says which host the originals are of, so that no host
 * ever puts back another host's CPU numbers. An <original> without it (older vnumad) is
 * this host's.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "state.h"
#include "topology.h"

/* Longest element accepted from libvirt (hostile or broken values are refused). */
#define META_MAX_BYTES (256 * 1024)

/*
 * Parse the element. *ret_cfg always gets a result: valid=false with the reason in
 * ret_cfg->error (printable ASCII) for a broken element (unknown or duplicated attribute,
 * bad value, unknown node, unknown child element, a second <original>, another
 * namespace, DTD/entities, not UTF-8). When ret_orig is not NULL and the element
 * carries <original>, it is filled from the first one (ret_orig->saved = true).
 * Returns 0, or -ENOMEM.
 */
int meta_parse(const char *xml, const topology *t, vn_balancer *ret_cfg, dom_originals *ret_orig);

/*
 * vnumad's <state> element: `orig` (when saved), `placed` (when valid; NULL: none) and, when
 * record_json is not NULL, a <decision> holding it. Returns 0 and a malloc'd string in *ret, or
 * -ENOMEM.
 */
int meta_format_state(const dom_originals *orig, const dom_placed *placed, uint64_t pass,
                      const char *time, const char *record_json, char **ret);

/*
 * The <placed> child of vnumad's <state> (the qemu hook's placement, hookxml.h) into *ret:
 * ret->valid false when there is none or it is broken (a host that is not a machine id, a
 * cell or node out of range, a cell twice, another child). 0, or -EINVAL when the element is
 * not vnumad's state.
 */
int meta_parse_placed(const char *xml, dom_placed *ret);

/* The text of the <decision> of vnumad's <state> element (the last decision record, JSON:
 * carried.h reads it), malloc'd; NULL when there is none or the element is not vnumad's state. */
char *meta_state_decision(const char *xml);

/*
 * Parse vnumad's <state> element (as written by meta_format_state(), or broken: then
 * nothing is taken from it). ret_orig gets its <original> (ret_orig->saved = false when
 * there is none). Returns 0, or -EINVAL when the element is not vnumad's state.
 */
int meta_parse_state(const char *xml, dom_originals *ret_orig);

/*
 * Whether originals o were taken on another host than `host` (this host's machine id):
 * saved, with a host, and not this one. False when either host is unknown.
 */
bool meta_originals_foreign(const dom_originals *o, const char *host);

/*
 * The originals of a domain that arrived from another host, from this host's definition
 * of it (xml: a <domain> XML): each of its first nr_vcpus vCPUs gets its <cputune><vcpupin>,
 * else the <vcpu cpuset>, else host_cpus, as libvirt would pin them at start here; a
 * restrictive <numatune><memory> gives the nodeset. With defined=false (a transient domain:
 * its pins are the other host's) the vCPUs only get the <vcpu cpuset> or host_cpus, and no
 * nodeset. *ret_default gets the set unpinned threads get (for the emulator and IOThreads).
 * ret->host is left empty. Returns 0, -EINVAL (not a domain XML) or -ENOMEM.
 */
int meta_defined_originals(const char *xml, bool defined, const vn_cpuset *host_cpus,
                           unsigned nr_vcpus, dom_originals *ret, vn_cpuset *ret_default);
