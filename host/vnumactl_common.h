/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What vnumactl.c hands its subcommands in other files (vnumactl_top.c, vnumactl_history.c):
 * the control socket and the subcommand's usage line, and the one way they report a bad option.
 * Below vnumactl.c and the subcommands; calls neither.
 */
#pragma once

#define VNUMACTL_EXIT_OK    0
#define VNUMACTL_EXIT_ERROR 1
#define VNUMACTL_EXIT_USAGE 2

typedef struct vnumactl_ctx {
    const char *socket; /* vnumad's control socket: the default, --socket before the
                         * subcommand, or the subcommand's own --socket */
    const char *name;   /* the subcommand, as typed */
    const char *args;   /* its usage line (vnumactl.c's table) */
} vnumactl_ctx;

/* Report a bad option of the subcommand (getopt's optind points past it): 2. */
int vnumactl_usage_error(const vnumactl_ctx *ctx, char **argv);
