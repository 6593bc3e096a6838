/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A tracked domain as the metrics see it, for test-metrics.c and test-golden.c: two cells,
 * each on its own node with 1 MiB and two vCPUs there, 87.5 % local. */
#pragma once

#include <stdio.h>
#include <stdlib.h>

#include "state.h"

/* The i-th domain, named `name`, opted in with `mode`; NULL when out of memory. free() it. */
__attribute__((unused)) static dom_state *fixture_metrics_dom(const char *name, unsigned i,
                                                              vn_mode mode)
{
    dom_state *st = calloc(1, sizeof(*st));

    if (!st)
        return NULL;
    snprintf(st->name, sizeof(st->name), "%s", name);
    snprintf(st->uuid, sizeof(st->uuid), "00000000-0000-0000-0000-%012u", i);
    st->cfg.valid = true;
    st->cfg.mode = mode;
    st->nr_view = 2;
    for (unsigned k = 0; k < 2; k++) {
        st->view[k].cell = k;
        st->view[k].target = (int)k;
        st->view[k].locality = 87.5;
        st->view[k].mem[k] = 1 << 20;
        st->view[k].vcpus[k] = 2;
    }
    return st;
}
