/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a domain arriving from another host brings in vnumad's <state> of its live XML, kept in
 * its dom_state (domains.c calls these at the arrival, and when a vnumad started later finds
 * it): the qemu hook's placement on this host (hookxml.h) and the hot ranges of the source
 * host's last decision (carried.h). state_xml is that element's text, NULL when it could not be
 * read. Tenant-reachable text: parsed by metadata.c and carried.c, never trusted further.
 */
#pragma once

#include "state.h"

/*
 * The <placed> stamped with this host's machine id host_id (the hook wrote it into the XML this
 * QEMU run started from) into st->placed, and so into the <state> vnumad writes; logged once
 * (arrival-placed). Nothing when st has one, host_id is unknown or it names another host.
 */
void arrival_adopt_placed(const char *host_id, dom_state *st, const char *state_xml);

/*
 * The hot ranges of the last decision record in <state> into st->carried (the first passes
 * follow them until the guest agent's first hint set: pass.c); logged once. Nothing when st
 * has them already or the record names none.
 */
void arrival_adopt_carried(dom_state *st, const char *state_xml);
