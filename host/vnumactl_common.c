/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumactl's bad-option report, shared by its subcommands (vnumactl_common.h). */
#include "vnumactl_common.h"

#include <getopt.h>
#include <stdio.h>

int vnumactl_usage_error(const vnumactl_ctx *ctx, char **argv)
{
    fprintf(stderr, "vnumactl: %s: invalid option or missing argument: '%s'\n", ctx->name,
            optind > 0 ? argv[optind - 1] : "");
    fprintf(stderr, "Usage: vnumactl %s %s\n", ctx->name, ctx->args);
    return VNUMACTL_EXIT_USAGE;
}
