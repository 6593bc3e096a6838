/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One balancing pass (pass.c): sample -> decide -> act -> record per domain, each domain's
 * blocking part a work on the worker threads (pass_work.h). Below the daemon; calls the work
 * plumbing, domain tracking, publishing and the stages.
 */
#pragma once

#include "core.h"

/* One balancing pass over the tracked domains (nothing while disconnected), timed, then
 * the metrics file published. */
void pass_run(vnumad *dm);
