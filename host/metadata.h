/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The domain's <balancer> element in namespace urn:vnuma:balancer:1, read and
 * written with libxml2:
 *
 *   <balancer mode="auto" nodes="0-1" rate="256" priority="0">   (the operator's)
 *     <original>                                                  (vnumad's, live only)
 *       <vcpupin vcpu="0" cpuset="0-3"/> ... <emulatorpin cpuset="0-7"/>
 *       <numatune nodeset="0-1"/>
 *     </original>
 *     <decision pass="12" time="2026-11-30T05:55:00Z">{compact JSON record}</decision>
 *   </balancer>
 *
 * The operator's attributes are kept byte for byte when vnumad rewrites the
 * element; only <original> and <decision> are vnumad's.
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
 * The element rewritten: the operator's element (`xml`, as read) with vnumad's
 * children replaced by `orig` (when saved) and a <decision> holding `record_json`.
 * Returns 0 and a malloc'd string in *ret, or -EINVAL (xml does not parse) / -ENOMEM.
 */
int meta_format(const char *xml, const dom_originals *orig, uint64_t pass, const char *time,
                const char *record_json, char **ret);
