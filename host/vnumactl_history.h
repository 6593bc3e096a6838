/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `vnumactl history` (vnumactl_history.c): a domain's decisions over time, from the journal. */
#pragma once

#include "vnumactl_common.h"

int vnumactl_history(int argc, char **argv, vnumactl_ctx *ctx);
