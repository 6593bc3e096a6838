/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * systemd's readiness protocol without libsystemd (sd_notify(3), "the
 * protocol" section): one datagram of "KEY=VALUE" lines to the AF_UNIX socket
 * named by $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace).
 * vnumad sends READY=1 once its control socket listens (Type=notify),
 * RELOADING=1/READY=1 around a SIGHUP reload and STOPPING=1 when it finishes.
 * This module does not log.
 */
#pragma once

/* Send `state` ("READY=1", ...). 0 when sent or when $NOTIFY_SOCKET is unset; -errno. */
int notify_send(const char *state);
