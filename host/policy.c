/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What of a domain's <balancer> element the host takes (policy.h). */
#include "policy.h"

#include <stdio.h>

bool policy_balancer_knobs(vn_balancer *cfg, bool trusted, char *why, size_t len)
{
    int n = 0;

    if (len)
        why[0] = '\0';
    if (trusted || !cfg->valid)
        return false;
    if (cfg->priority > 0) {
        n += snprintf(why, len, "priority %d", cfg->priority);
        cfg->priority = 0;
    }
    if (cfg->move_realtime) {
        if ((size_t)n < len)
            n += snprintf(why + n, len - (size_t)n, "%srealtime=\"move\"", n ? ", " : "");
        cfg->move_realtime = false;
    }
    return n > 0;
}
