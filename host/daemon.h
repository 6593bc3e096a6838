/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's daemon: one thread running libvirt's event loop. A balancing pass
 * (sample -> decide -> act -> record) runs every interval and soon after an
 * event that matters (domain started, opt-in changed). The connection to
 * libvirtd is re-opened with backoff when it drops, and everything is then
 * resynchronised from scratch.
 */
#pragma once

#include <stdbool.h>

#include "state.h"

/* Run until SIGTERM/SIGINT; returns the process exit status. */
int daemon_main(const daemon_config *cfg, const char *config_path);
