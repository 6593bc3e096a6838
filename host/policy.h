/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What of a domain's <balancer> element the host takes (policy.c). The element is reachable
 * by tenants (a fleet manager copies their data into the domain XML: docs/security.md), so
 * the knobs that take from other domains are the operator's: unless vnumad.conf says
 * balancer_knobs = yes (only the operator writes domain metadata on this host), an element's
 * priority above 0 and realtime="move" are not applied. What only narrows or slows the
 * domain itself is the element's to say: mode, nodes, tier, rate (a per-domain limit below
 * the host's), priority 0 and below.
 */
#ifndef VNUMA_POLICY_H
#define VNUMA_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "state.h"

/*
 * Bring a parsed element (cfg->valid) to what the host takes: with `trusted` nothing changes;
 * otherwise an operator-only knob goes back to its default. Returns true when something was
 * dropped, and what (e.g. "priority 50, realtime=\"move\"") in why.
 */
bool policy_balancer_knobs(vn_balancer *cfg, bool trusted, char *why, size_t len);

#endif
