/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumactl's bad-option report, shared by its subcommands (vnumactl_common.h). */
#include "vnumactl_common.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

int vnumactl_usage_error(const vnumactl_ctx *ctx, char **argv)
{
    fprintf(stderr, "vnumactl: %s: invalid option or missing argument: '%s'\n", ctx->name,
            optind > 0 ? argv[optind - 1] : "");
    fprintf(stderr, "Usage: vnumactl %s %s\n", ctx->name, ctx->args);
    return VNUMACTL_EXIT_USAGE;
}

#define VNUMACTL_MAX_OPTS 8

int vnumactl_options(int argc, char **argv, vnumactl_ctx *ctx, bool *json,
                     const vnumactl_opt *extra, unsigned nr_extra)
{
    struct option opts[VNUMACTL_MAX_OPTS + 4];
    char shorts[2 * VNUMACTL_MAX_OPTS + 4] = "h";
    unsigned n = 0;
    size_t sl = 1;
    int c;

    if (nr_extra > VNUMACTL_MAX_OPTS)
        return VNUMACTL_EXIT_ERROR;
    if (json) {
        opts[n++] = (struct option){"json", no_argument, NULL, 'j'};
        shorts[sl++] = 'j';
    }
    opts[n++] = (struct option){"socket", required_argument, NULL, 'S'};
    opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    for (unsigned i = 0; i < nr_extra; i++) {
        /* an option without a short name is told by its index, above any character */
        int val = extra[i].short_name ? extra[i].short_name : 256 + (int)i;
        opts[n++] = (struct option){extra[i].name,
                                    extra[i].has_arg ? required_argument : no_argument, NULL, val};
        if (extra[i].short_name) {
            shorts[sl++] = extra[i].short_name;
            if (extra[i].has_arg)
                shorts[sl++] = ':';
        }
    }
    opts[n] = (struct option){NULL, 0, NULL, 0};
    shorts[sl] = '\0';
    while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        if (c == 'j' && json) {
            *json = true;
        } else if (c == 'S') {
            ctx->socket = optarg;
        } else if (c == 'h') {
            printf("Usage: vnumactl %s %s\n", ctx->name, ctx->args);
            return VNUMACTL_EXIT_OK;
        } else {
            unsigned i;
            for (i = 0; i < nr_extra; i++)
                if (c == (extra[i].short_name ? extra[i].short_name : 256 + (int)i))
                    break;
            if (i == nr_extra)
                return vnumactl_usage_error(ctx, argv);
            *extra[i].value = extra[i].has_arg ? optarg : "1";
        }
    }
    return -1;
}
