/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnuma-agent: the guest side of vnuma. It runs inside the guest and reports
 * per-process access hints to vnumad over the virtio-serial port
 * org.vnuma.agent.0.
 *
 * This build locates the port (the udev link, else a scan of
 * /sys/class/virtio-ports/NAME/name); the hint protocol (proto/) comes with
 * the guest-agent work and is not in this build.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define AGENT_VERSION "0.1.0"
#define AGENT_PORT_NAME "org.vnuma.agent.0"

/* Find the device of the agent's port below root ("" for /). Returns 0 and
 * writes the path, or -ENOENT. */
static int find_port(const char *root, char *path, size_t len)
{
    char buf[512], name[128];
    struct dirent *de;
    DIR *dir;
    int r = -ENOENT;

    snprintf(buf, sizeof(buf), "%s/dev/virtio-ports/%s", root, AGENT_PORT_NAME);
    if (access(buf, F_OK) == 0) {
        snprintf(path, len, "%s", buf);
        return 0;
    }
    snprintf(buf, sizeof(buf), "%s/sys/class/virtio-ports", root);
    dir = opendir(buf);
    if (!dir)
        return -ENOENT;
    while ((de = readdir(dir))) {
        FILE *f;
        if (de->d_name[0] == '.')
            continue;
        snprintf(buf, sizeof(buf), "%s/sys/class/virtio-ports/%s/name", root, de->d_name);
        f = fopen(buf, "re");
        if (!f)
            continue;
        if (fgets(name, sizeof(name), f)) {
            name[strcspn(name, "\n")] = '\0';
            if (strcmp(name, AGENT_PORT_NAME) == 0) {
                snprintf(path, len, "%s/dev/%s", root, de->d_name);
                r = 0;
            }
        }
        fclose(f);
        if (r == 0)
            break;
    }
    closedir(dir);
    return r;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"find-port", no_argument, NULL, 'f'},
        {"root", required_argument, NULL, 'r'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *root = "";
    char path[600];
    int c, find = 0;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            find = 1;
            break;
        case 'r':
            root = optarg;
            break;
        case 'V':
            printf("vnuma-agent %s\n", AGENT_VERSION);
            return 0;
        case 'h':
            printf("Usage: vnuma-agent --find-port [--root DIR] | --version\n");
            return 0;
        default:
            return 2;
        }
    }
    if (!find) {
        fprintf(stderr, "vnuma-agent: this build only locates its port (--find-port); "
                        "the hint protocol is not in it yet\n");
        return 2;
    }
    if (find_port(root, path, sizeof(path)) < 0) {
        fprintf(stderr, "vnuma-agent: no virtio-serial port named %s\n", AGENT_PORT_NAME);
        return 1;
    }
    printf("%s\n", path);
    return 0;
}
