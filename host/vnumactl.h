/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What vnumactl's subcommands in other files share with vnumactl.c. */
#ifndef VNUMA_VNUMACTL_H
#define VNUMA_VNUMACTL_H

#define VNUMACTL_EXIT_OK    0
#define VNUMACTL_EXIT_ERROR 1
#define VNUMACTL_EXIT_USAGE 2

/* vnumad's control socket: the default or --socket */
extern const char *vnumactl_socket;

/* Report a bad option of subcommand `cmd` (getopt's optind points past it): 2. */
int vnumactl_usage_error(const char *cmd, char **argv);

/* `vnumactl top` (vnumactl_top.c) and `vnumactl history` (vnumactl_history.c) */
int vnumactl_top(int argc, char **argv);
int vnumactl_history(int argc, char **argv);

#endif
