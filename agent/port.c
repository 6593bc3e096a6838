/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * port: finding, opening and writing the virtio-serial port (see port.h).
 */
#include "port.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "util.h"

int port_find(const char *root, const char *name, char *path, size_t len)
{
    char buf[512], line[128];
    struct dirent *de;
    DIR *dir;
    int r = -ENOENT;

    snprintf(buf, sizeof(buf), "%s/dev/virtio-ports/%s", root, name);
    if (access(buf, F_OK) == 0) {
        snprintf(path, len, "%s", buf);
        return 0;
    }
    snprintf(buf, sizeof(buf), "%s/sys/class/virtio-ports", root);
    dir = opendir(buf);
    if (!dir)
        return -ENOENT;
    while (r < 0 && (de = readdir(dir))) {
        _cleanup_fclose_ FILE *f = NULL;

        if (de->d_name[0] == '.')
            continue;
        snprintf(buf, sizeof(buf), "%s/sys/class/virtio-ports/%s/name", root, de->d_name);
        f = fopen(buf, "re");
        if (!f || !fgets(line, sizeof(line), f))
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (strcmp(line, name) == 0) {
            snprintf(path, len, "%s/dev/%s", root, de->d_name);
            r = 0;
        }
    }
    (void)closedir(dir);
    return r;
}

int port_open(const char *path)
{
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

    return fd < 0 ? -errno : fd;
}

int port_write_all(int fd, const char *buf, size_t len, int timeout_ms)
{
    long long deadline = (long long)vn_mono_ms() + timeout_ms;
    size_t done = 0;

    while (done < len) {
        ssize_t w = write(fd, buf + done, len - done);
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        long long left;

        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -errno;
        left = deadline - (long long)vn_mono_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
            return -errno;
        if (p.revents & (POLLHUP | POLLERR) && !(p.revents & POLLOUT))
            return -EPIPE;
    }
    return 0;
}
