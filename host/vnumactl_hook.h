/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl hook NAME OPERATION SUB-OPERATION EXTRA` (vnumactl_hook.c): libvirt's qemu hook,
 * installed as /etc/libvirt/hooks/qemu.d/vnuma (dist/libvirt/). At `migrate begin` it hands
 * the incoming domain's XML (stdin) to vnumad's `place` and prints the placed XML; in every
 * other case, and whenever vnumad is down, slow or says no, it prints nothing, so that
 * libvirt goes on with the XML it had. It always exits 0: a migration never fails for vnuma.
 */
#pragma once

#include "vnumactl_common.h"

/* How long the hook waits for vnumad's answer before the XML passes unchanged. */
#define VNUMACTL_HOOK_TIMEOUT_MS 5000

int vnumactl_hook(int argc, char **argv, const vnumactl_ctx *ctx);
