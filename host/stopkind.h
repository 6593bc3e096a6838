/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stop or a restart: what a SIGTERM means.
 *
 * On a stop vnumad puts back what it changed (restore_on_exit); on a restart it leaves every
 * guest where it is, because the next vnumad finds its originals in each domain's live
 * metadata and would only place the guest again. Under systemd the unit's pending job says
 * which: a stop job, or a restart job (`systemctl restart`, `try-restart`, the restart a
 * package upgrade runs) whose stop half is running. vnumad asks systemd (PID 1, over its
 * private D-Bus socket, else the system bus). Elsewhere `vnumactl stop --keep` says so.
 */
#pragma once

#include <stddef.h>

typedef enum stop_kind {
    STOP_UNKNOWN, /* not under systemd, or systemd could not be asked (why says) */
    STOP_STOP,    /* a stop job, or no job at all (a signal sent by hand) */
    STOP_RESTART, /* the unit's job is a restart */
} stop_kind;

/* What systemd says the SIGTERM vnumad got is for; why (a sentence for the log) is always
 * written. */
stop_kind stopkind_systemd(char *why, size_t len);
