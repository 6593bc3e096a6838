/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad.conf: "key = value" lines, '#' comments. Parsed strictly: an unknown
 * key or a bad value is an error naming the file, the line and the reason.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "state.h"

#define CONFIG_DEFAULT_PATH       "/etc/vnuma/vnumad.conf"
#define CONFIG_DEFAULT_POLICY_DIR "/etc/vnuma/policy.d" /* policy_dir: hostpolicy.h */

/* The documented defaults. */
void daemon_config_defaults(daemon_config *c);

/*
 * Parse `path` over the values already in *c. A missing file is fine when
 * `optional` (the defaults stay). Returns 0, or -EINVAL / -errno with
 * "FILE:LINE: reason" in err; *c is unchanged on error.
 */
int daemon_config_load(const char *path, bool optional, daemon_config *c, char *err, size_t errlen);

/*
 * `vnumad --check-config`: what can be checked on this host without starting: the directory
 * metrics_file is written into exists and (as root) is writable, pid_file's exists, socket's
 * and state_dir's exist writable or can be made (vnumad makes one level). 0, or -errno with
 * "KEY: reason" in err.
 */
int daemon_config_check_paths(const daemon_config *c, char *err, size_t errlen);

/*
 * A file vnumad (root) may take its configuration from: owned by root (or vnumad's user), not
 * writable by other users nor by a group other than root's (as sshd's StrictModes). 0, or
 * -EPERM with "PATH: reason" in err.
 */
int config_file_trusted(FILE *f, const char *path, char *err, size_t errlen);

/* Read one line (newline dropped) into buf: its length, -1 at the end of the file, or
 * -E2BIG when it does not fit (reading stops there: /dev/zero is not read to the end). */
ssize_t config_read_line(FILE *f, char *buf, size_t size);

/* Whether policy_dir names another directory than the default: then it must exist (a missing
 * default one is no rules). */
static inline bool config_policy_dir_named(const daemon_config *c)
{
    return strcmp(c->policy_dir, CONFIG_DEFAULT_POLICY_DIR) != 0;
}
