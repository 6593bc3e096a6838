/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a running domain (<run>/qemu/<name>.xml, its daemon's user's, 0600):
 * the pid of the QEMU libvirt started for it. The one place vnumad learns a domain's QEMU pid: the
 * pid file beside it is named after an escaped name (a domain called x&apos;y would read the pid
 * file of the domain called x'y), and QEMU's own replies are not QEMU's to vouch for.
 */
#ifndef VNUMA_DOMSTATUS_H
#define VNUMA_DOMSTATUS_H

#include <stddef.h>
#include <sys/types.h>

#include "virt.h"

/* The largest status file read (libvirt's are some 10-100 KiB). */
#define DOMSTATUS_MAX_BYTES (16u << 20)

/* The part of a session daemon's environment read (/proc/PID/environ), and the longest
 * directory taken from it. */
#define DOMSTATUS_ENV_MAX     (64u << 10)
#define DOMSTATUS_ENV_DIR_MAX 1024

/*
 * The QEMU pid (in vnumad's PID namespace) of running domain `ident`, from libvirt's status file,
 * which must be a regular file of its daemon's user that no one else may write, and name this
 * domain: its <uuid> and its running id. root: where /proc is ("/"; a fixture tree in tests).
 *
 * The host's own libvirt (ident->daemon_pid 0): the file is in /run/libvirt/qemu (or
 * $VN_LIBVIRT_RUN_DIR/qemu), root's (vnumad's user's). A daemon reached through a socket
 * (ident->daemon_pid, ident->daemon_uid): the file is read in the daemon's root, every link
 * resolved inside it (nsroot.h); root's daemon keeps libvirt's system layout
 * (/run/libvirt/qemu/NAME.xml, whatever path its URI has: a privileged QEMU driver takes
 * "/session" too), another user's is a session daemon ($XDG_RUNTIME_DIR/libvirt/qemu/run/
 * NAME.xml, its XDG_RUNTIME_DIR, else $XDG_CACHE_HOME, else $HOME/.cache, from its environment:
 * absolute paths without ".."), and the file must be that user's. Its pid is the daemon's word
 * in the daemon's PID namespace: mapped to the process of that namespace that has it
 * (nspid.h), and for a session daemon a process of the daemon's user.
 *
 * 0; -ESRCH: no status file (not running, or libvirt moved on), no such process, or the daemon
 * is gone; -EPERM: the file is not libvirt's or names another domain, run or user's process (why
 * in err); -EINVAL: not a status file.
 */
int domstatus_qemu_pid(const char *root, const virt_dom_id *ident, pid_t *ret, char *err,
                       size_t errlen);

#endif
