/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `vnumactl snapshot` (vnumactl_snapshot.c): save the live host for `vnumad --advise`, or show
 * every running VM's vCPUs and memory per node. */
#pragma once

#include "vnumactl_common.h"

int vnumactl_snapshot(int argc, char **argv, vnumactl_ctx *ctx);
