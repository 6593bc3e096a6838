/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What vnumactl.c hands its subcommands in other files (vnumactl_top.c, vnumactl_history.c):
 * the control socket and the subcommand's usage line, and the one way they report a bad option.
 * Below vnumactl.c and the subcommands; calls neither.
 */
#pragma once

#include <stdbool.h>

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

/* An option a subcommand has besides --json, --socket PATH and --help: its argument (without
 * one: "1") is stored in *value, for the subcommand to check. */
typedef struct vnumactl_opt {
    const char *name; /* the long name */
    char short_name;  /* 0: none */
    bool has_arg;
    const char **value;
} vnumactl_opt;

/* A subcommand's options (argv[0] is its name): --json into *json (NULL: it has none),
 * --socket PATH into ctx->socket, --help (its usage line, exit status 0), then extra[].
 * -1 when the subcommand goes on with its positional arguments from optind; else the exit
 * status to return (help printed, or a usage error reported). */
int vnumactl_options(int argc, char **argv, vnumactl_ctx *ctx, bool *json,
                     const vnumactl_opt *extra, unsigned nr_extra);
