/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumactl: the administrator's command line. One entry per subcommand in
 * vnumactl_cmds[]; to add a subcommand write a `static int cmd_NAME(int argc,
 * char **argv)` (argv[0] is the subcommand's name, parse with getopt_long,
 * return the exit status) and add a line to the table.
 *
 * Exit status: 0 success, 1 error (one line "vnumactl: <reason>" on stderr),
 * 2 usage error (usage on stderr).
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"
#include "util.h"

#define VNUMACTL_EXIT_OK    0
#define VNUMACTL_EXIT_ERROR 1
#define VNUMACTL_EXIT_USAGE 2

typedef struct vnumactl_cmd {
    const char *name;
    const char *args;    /* synopsis of the arguments, for usage */
    const char *summary; /* one line, for usage */
    int (*run)(int argc, char **argv);
} vnumactl_cmd;

static int cmd_help(int argc, char **argv);
static int cmd_topology(int argc, char **argv);

static const vnumactl_cmd vnumactl_cmds[] = {
    {"topology", "[--input FILE.xml | --synthetic STRING] [--json]",
     "show the host NUMA topology (live host by default) and rule 1's imb_numa_nr per node",
     cmd_topology},
    {"help", "", "show this help", cmd_help},
};

static void usage(FILE *f)
{
    fprintf(f, "Usage: vnumactl COMMAND [OPTIONS]\n\nCommands:\n");
    for (size_t i = 0; i < VN_ARRAY_SIZE(vnumactl_cmds); i++)
        fprintf(f, "  %s%s%s\n      %s\n", vnumactl_cmds[i].name, *vnumactl_cmds[i].args ? " " : "",
                vnumactl_cmds[i].args, vnumactl_cmds[i].summary);
    fprintf(f, "\nOptions:\n  -h, --help    show this help\n");
}

static const vnumactl_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(vnumactl_cmds); i++)
        if (strcmp(vnumactl_cmds[i].name, name) == 0)
            return &vnumactl_cmds[i];
    return NULL;
}

/* Report a bad option of subcommand `cmd` (getopt's optind points past it) and return 2. */
static int usage_error(const char *cmd, char **argv)
{
    const vnumactl_cmd *c = find_cmd(cmd);

    fprintf(stderr, "vnumactl: %s: invalid option or missing argument: '%s'\n", cmd,
            optind > 0 ? argv[optind - 1] : "");
    if (c)
        fprintf(stderr, "Usage: vnumactl %s %s\n", c->name, c->args);
    return VNUMACTL_EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage(stdout);
    return VNUMACTL_EXIT_OK;
}

static int cmd_topology(int argc, char **argv)
{
    static const struct option opts[] = {
        {"input", required_argument, NULL, 'i'},
        {"synthetic", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    _cleanup_free_ topology *t = NULL;
    topo_source_kind kind = TOPO_SOURCE_LIVE;
    const char *arg = NULL;
    bool json = false;
    char err[512];
    int c, r;

    while ((c = getopt_long(argc, argv, "+i:s:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
        case 's':
            if (arg) {
                fprintf(stderr, "vnumactl: topology: give only one of --input and --synthetic\n");
                return VNUMACTL_EXIT_USAGE;
            }
            kind = c == 'i' ? TOPO_SOURCE_XML : TOPO_SOURCE_SYNTHETIC;
            arg = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            printf("Usage: vnumactl topology %s\n", find_cmd("topology")->args);
            return VNUMACTL_EXIT_OK;
        default:
            return usage_error("topology", argv);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vnumactl: topology: unexpected argument '%s'\n", argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }

    t = malloc(sizeof(*t));
    if (!t) {
        fprintf(stderr, "vnumactl: out of memory\n");
        return VNUMACTL_EXIT_ERROR;
    }
    r = topo_load(kind, arg, "/", t, err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "vnumactl: %s\n", err[0] ? err : strerror(-r));
        return VNUMACTL_EXIT_ERROR;
    }
    topo_print(t, json, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const vnumactl_cmd *cmd;
    int c;

    opterr = 0; /* our messages name the subcommand and use one line */
    /* '+': stop at the subcommand, its options are its own */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VNUMACTL_EXIT_OK;
        default:
            fprintf(stderr, "vnumactl: invalid option '%s'\n", argv[optind - 1]);
            usage(stderr);
            return VNUMACTL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "vnumactl: missing command\n");
        usage(stderr);
        return VNUMACTL_EXIT_USAGE;
    }
    cmd = find_cmd(argv[optind]);
    if (!cmd) {
        fprintf(stderr, "vnumactl: unknown command '%s'\n", argv[optind]);
        usage(stderr);
        return VNUMACTL_EXIT_USAGE;
    }

    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: start the subcommand's getopt afresh at argv[1] */
    return cmd->run(argc, argv);
}
