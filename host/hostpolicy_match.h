/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host policy: what the rules look at in a domain's XML, and the first rule that matches
 * (hostpolicy_match.c; the rules themselves: hostpolicy.h).
 */
#pragma once

#include "hostpolicy.h"

/* What of a domain the rules look at (hostpolicy_facts()). A fact that is not there (no Nova
 * block, a value longer than HOSTPOLICY_VALUE_MAX) is has_X false and matches no glob. */
typedef struct hp_facts {
    bool has[HP_KEY_MAX];
    char value[HP_KEY_MAX][HOSTPOLICY_VALUE_MAX + 1];
    /* nova.project: its name besides its uuid (value[] holds the uuid) */
    bool has_project_name;
    char project_name[HOSTPOLICY_VALUE_MAX + 1];
} hp_facts;

/*
 * The facts of a domain from its live XML (name, Nova's and KubeVirt's blocks) and, when not
 * NULL, the XML its shape is read from (its persistent definition: `dedicated`). Untrusted
 * text: bounded, no network, no entities, no DTD; what does not parse gives no facts but
 * what parsed (a broken live XML: none). Returns 0, or -EINVAL when the live XML does not parse.
 */
int hostpolicy_facts(const char *live_xml, const char *shape_xml, hp_facts *ret);

/*
 * The mode p gives a domain with facts f, and why into where ("rule FILE:LINE" or "default").
 * Pure.
 */
vn_mode hostpolicy_decide(const host_policy *p, const hp_facts *f, const char **ret_where);
