/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `vnumactl top` (vnumactl_top.c): vnumad's domains live in a terminal, or once (--batch). */
#pragma once

#include "vnumactl_common.h"

int vnumactl_top(int argc, char **argv, vnumactl_ctx *ctx);
