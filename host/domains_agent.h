/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tracked domain's guest agent link (domains_agent.c): opened from what a sample read, its
 * hint sets checked against the domain and lent to a sample work, closed with the domain.
 */
#pragma once

#include "core.h"

/* Open the guest agent channel when the guest has the port open and none is open yet. */
void domains_agent_connect(vnumad *dm, dom_state *st);
/* Close the agent channel and forget its hints; NULL-safe on a state without one. */
void domains_agent_drop(dom_state *st);
/* The domain's hint set for a sample work to read on a worker (hints_apply, sample_hot.c), if
 * it is at most max_age_s old and none is lent yet, else NULL. It stays valid, even once a newer
 * set arrives or the link closes, until domains_hints_return (on the loop, when the work is
 * done). */
const proto_hints *domains_hints_lend(dom_state *st, double max_age_s, double now);
void domains_hints_return(dom_state *st);
/* A hint set that came while a work held the domain, checked and made the domain's set (on the
 * loop, once nothing holds the domain). */
void domains_hints_settle(dom_state *st);
