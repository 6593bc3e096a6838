/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The privileges vnumad keeps (privs.c). It runs as root, and needs only a few of root's
 * capabilities: the ones systemd's unit gives it (dist/systemd/vnumad.service.in,
 * CapabilityBoundingSet). Started any other way (by hand, an init script, a container), it drops
 * the rest itself, before it reads a byte of anyone else's.
 */
#pragma once

#include <stddef.h>

/* Keep CAP_SYS_NICE, CAP_SYS_PTRACE, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_SYS_ADMIN
 * (those of them it has) in the effective, permitted and (when it may change it) bounding
 * sets; drop every other one. A no-op when not root. 0, or -EPERM with the reason in err. */
int privs_drop(char *err, size_t errlen);
