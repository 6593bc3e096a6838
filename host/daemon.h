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

#include "core.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"

/* Run until SIGTERM/SIGINT on the live host; returns the process exit status. */
int daemon_main(const daemon_config *cfg, const char *config_path, bool detached);

/* What a daemon runs on: the live host (daemon_main), or a test's fake host
 * (tests/unit/fakehost.h), whose libvirt and clock are installed with virt_use and
 * vn_clock_use before the start. */
typedef struct daemon_host {
    topology *topo;         /* the host's topology (the caller's, outlives the daemon) */
    const numa_ops *numa;   /* the kernel's NUMA calls */
    const char *root;       /* where /proc (QEMU processes, /proc/stat) and /sys are read: "/" */
    const char *machine_id; /* this host's id: /etc/machine-id */
    /* a SIGTERM's meaning: a stop or a restart (stopkind_systemd; NULL: always a stop) */
    stop_kind (*stop_kind)(char *why, size_t len);
} daemon_host;

/* The daemon started on `host`: signals, journal, control socket, workers, timers, then the
 * connection (libvirt's event loop runs in the caller: loop_run_once). 0 or -errno (logged);
 * daemon_stop() in both cases. */
int daemon_start(vnumad *dm, const daemon_config *cfg, const char *config_path,
                 const daemon_host *host);
/* A pass now, as the timers run one (after a pass that runs: when it ends). */
void daemon_pass_now(vnumad *dm);
/* Restore on exit (restore_on_exit), close, stop the workers, leave the loop as it was. */
void daemon_stop(vnumad *dm);
