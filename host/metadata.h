/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The domain's metadata, read and written with libxml2. Two elements, one writer each:
 *
 *   <balancer mode="auto" nodes="0-1" rate="256" priority="0"/>
 *       namespace urn:vnuma:balancer:1: the operator's opt-in. vnumad only reads it.
 *
 *   <state>                                                   namespace urn:vnuma:state:1:
 *     <original>                                              vnumad's own, live only
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
 * accepts them, and their originals count only while the domain has no <state>.
 */
#pragma once

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
 * vnumad's <state> element: `orig` (when saved) and, when record_json is not NULL, a
 * <decision> holding it. Returns 0 and a malloc'd string in *ret, or -ENOMEM.
 */
int meta_format_state(const dom_originals *orig, uint64_t pass, const char *time,
                      const char *record_json, char **ret);

/*
 * Parse vnumad's <state> element (as written by meta_format_state(), or broken: then
 * nothing is taken from it). ret_orig gets its <original> (ret_orig->saved = false when
 * there is none). Returns 0, or -EINVAL when the element is not vnumad's state.
 */
int meta_parse_state(const char *xml, dom_originals *ret_orig);
