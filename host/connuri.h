/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libvirt URIs of vnumad.conf's uri lines (docs/configuration.md, "Connections"): a URI's
 * socket= parameter, and the sockets a glob in it matches, each a connection of its own with a
 * label (what the glob's wildcard components matched: "h2" for .../h2/libvirt-sock), and the
 * daemon listening on a URI's socket. No state: nothing but the file system's view of the
 * sockets, and the kernel's word on who listens.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CONN_URI_MAX   256
#define CONN_LABEL_MAX 128

typedef struct conn_match {
    char uri[CONN_URI_MAX];     /* the concrete URI (the glob replaced by the socket's path) */
    char socket[CONN_URI_MAX];  /* its socket= path ("" when it has none) */
    char label[CONN_LABEL_MAX]; /* what vnumad names the connection by */
    dev_t dev;                  /* the socket file's (glob matches; 0 for the others) */
    ino_t ino;
} conn_match;

/* Whether uri's socket= parameter (if any) is an absolute path vnumad can put in a URI again:
 * 0, or -EINVAL with the reason in why. */
int conn_uri_check(const char *uri, char *why, size_t wlen);
/* Whether uri's socket= parameter holds a glob ('*', '?', '['). */
bool conn_uri_is_pattern(const char *uri);
/*
 * The connections uri stands for, into out[max]: itself (label: the URI), or for a socket glob
 * each match that is a unix socket itself (not a symbolic link to one: a link is named by
 * whoever may write its directory, and would connect vnumad to a daemon the glob does not name)
 * whose path fits in a URI. Sorted by path. How many (at most max), or -errno.
 */
int conn_uri_expand(const char *uri, conn_match *out, unsigned max);
/*
 * The pid and user of the daemon listening on the unix socket of uri's socket= parameter (the
 * kernel's word: SO_PEERCRED, in vnumad's PID and user namespaces, whatever namespaces the daemon
 * runs in), pid 0 when the URI names no socket. -errno when it cannot be told (-ESRCH: its PID
 * namespace is not below vnumad's): a connection whose daemon is not known is not used.
 */
int conn_uri_daemon(const char *uri, pid_t *ret_pid, uid_t *ret_uid);
