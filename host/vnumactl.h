/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumactl's subcommands in other files, as vnumactl.c calls them. */
#pragma once

#include "vnumactl_common.h"

/* `vnumactl top` (vnumactl_top.c) and `vnumactl history` (vnumactl_history.c) */
int vnumactl_top(int argc, char **argv, vnumactl_ctx *ctx);
int vnumactl_history(int argc, char **argv, vnumactl_ctx *ctx);
