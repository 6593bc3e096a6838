/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What an arriving domain brings in its live <state> (arrival.h). */
#include "arrival.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carried.h"
#include "log.h"
#include "metadata.h"
#include "util.h"

void arrival_adopt_placed(const char *host_id, dom_state *st, const char *state_xml)
{
    dom_placed p;
    char line[512] = "";
    size_t used = 0;

    if (st->placed.valid || !state_xml || !host_id || !host_id[0] ||
        meta_parse_placed(state_xml, &p) < 0 || !p.valid || strcmp(p.host, host_id) != 0)
        return;
    st->placed = p;
    for (unsigned k = 0; k < p.nr && used < sizeof(line); k++)
        used += (size_t)snprintf(line + used, sizeof(line) - used, "%scell %u on node %u%s",
                                 k ? ", " : "", p.cells[k].cell, p.cells[k].node,
                                 p.cells[k].memory ? "" : " (its vCPUs)");
    log_info("Domain '%s' came placed by the qemu hook (arrival-placed): %s", LOG_Q(st->name),
             line);
}

void arrival_adopt_carried(dom_state *st, const char *state_xml)
{
    _cleanup_free_ char *json = NULL;
    _cleanup_free_ carried_info *c = NULL;
    unsigned cells = 0;

    if (st->carried || !state_xml || !(json = meta_state_decision(state_xml)))
        return;
    c = calloc(1, sizeof(*c));
    if (!c)
        return;
    carried_parse(json, c);
    if (!c->nr_hot)
        return;
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        cells += c->cells[k].nr_hot > 0;
    log_info("Domain '%s' brought %u hot range(s) of %u cell(s) from the source host's last "
             "decision: its first passes follow them until its guest agent's first hint set",
             LOG_Q(st->name), c->nr_hot, cells);
    st->carried = VN_TAKE_PTR(c);
}
