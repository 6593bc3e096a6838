/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a running domain (<run>/qemu/<name>.xml, root's, 0600): the pid of
 * the QEMU libvirt started for it. The one place vnumad learns a domain's QEMU pid: the pid file
 * beside it is named after an escaped name (a domain called x&apos;y would read the pid file of
 * the domain called x'y), and QEMU's own replies are not QEMU's to vouch for.
 */
#ifndef VNUMA_DOMSTATUS_H
#define VNUMA_DOMSTATUS_H

#include <stddef.h>
#include <sys/types.h>

#include "virt.h"

/* The largest status file read (libvirt's are some 10-100 KiB). */
#define DOMSTATUS_MAX_BYTES (16u << 20)

/*
 * The QEMU pid of running domain `ident`, from libvirt's status file, which must be a regular
 * file of vnumad's user that no one else may write, and name this domain: its <uuid> and its
 * running id. A domain of a daemon reached through a socket (ident->daemon_pid) has its file in
 * that daemon's /run/libvirt, read in the daemon's root (a link there cannot lead out of it);
 * a daemon in a PID namespace of its own is refused (-EPERM): its pids are not this host's. 0;
 * -ESRCH: no status file (not running, or libvirt moved on); -EPERM: the file is not libvirt's or
 * names another domain or run (why in err); -EINVAL: not a status file.
 */
int domstatus_qemu_pid(const virt_dom_id *ident, pid_t *ret, char *err, size_t errlen);

#endif
