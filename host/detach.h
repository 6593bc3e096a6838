/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Detaching vnumad from the terminal that started it (without --foreground).
 *
 * The parent stays until the child has started: it exits 0 once the child listens on its
 * socket and is connected to libvirt or retrying, or with the child's own exit status when the
 * start failed, so an init script or an operator sees a failed start. Until then the child's
 * errors and warnings are also written to the terminal's stderr. Once started, the child writes
 * its pid file and leaves the terminal (stdin, stdout and stderr on /dev/null).
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Fork. Returns 0 in the child (a new session, cwd /); the parent never returns: it exits
 * with the start status. -errno when the fork itself failed (still attached). */
int detach_begin(void);

/* The child has started: write pid_file (when not empty), tell the parent, leave the
 * terminal. 0, or -errno with the reason in err (the parent then exits 1). */
int detach_done(const char *pid_file, char *err, size_t errlen);

/* At exit: remove pid_file if it still holds this process's pid. */
void detach_remove_pidfile(const char *pid_file);

/* Write "PID\n" to path atomically (a temporary file in the same directory, renamed), mode
 * 0644. 0 or -errno. */
int pidfile_write(const char *path, pid_t pid);
