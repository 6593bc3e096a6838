/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of host/notify.c: the sd_notify datagram reaches $NOTIFY_SOCKET (a path and an
 * abstract name); no socket set is not an error; a bad value is. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"
#include "tap.h"

static int listen_dgram(const char *name, bool abstract)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    size_t len = strlen(name);

    memcpy(sa.sun_path + (abstract ? 1 : 0), name, len);
    if (fd < 0 ||
        bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (abstract ? 1 : 0))) < 0)
        return -1;
    return fd;
}

static bool got(int fd, const char *want)
{
    char buf[128];
    struct timeval tv = {.tv_sec = 2};
    ssize_t n;

    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    n = recv(fd, buf, sizeof(buf) - 1, 0);
    if (n < 0)
        return false;
    buf[n] = '\0';
    return strcmp(buf, want) == 0;
}

int main(void)
{
    char dir[] = "/tmp/vnuma-test-notify-XXXXXX", path[128], abs_name[64], env[80];
    int fd;

    unsetenv("NOTIFY_SOCKET");
    CHECK(notify_send("READY=1") == 0, "no NOTIFY_SOCKET: nothing to do, no error");
    if (!mkdtemp(dir)) {
        printf("cannot create a temporary directory\n");
        return 77;
    }
    snprintf(path, sizeof(path), "%s/notify", dir);
    fd = listen_dgram(path, false);
    CHECK(fd >= 0, "listening on %s", path);
    setenv("NOTIFY_SOCKET", path, 1);
    CHECK(notify_send("READY=1") == 0 && got(fd, "READY=1"), "READY=1 arrives at a path socket");
    close(fd);
    unlink(path);
    rmdir(dir);

    snprintf(abs_name, sizeof(abs_name), "vnuma-test-notify-%d", (int)getpid());
    fd = listen_dgram(abs_name, true);
    snprintf(env, sizeof(env), "@%s", abs_name);
    setenv("NOTIFY_SOCKET", env, 1);
    CHECK(fd >= 0 && notify_send("STOPPING=1") == 0 && got(fd, "STOPPING=1"),
          "STOPPING=1 arrives at an abstract socket (@name)");
    close(fd);

    setenv("NOTIFY_SOCKET", "relative/path", 1);
    CHECK(notify_send("READY=1") == -EINVAL, "a relative NOTIFY_SOCKET is -EINVAL");
    setenv("NOTIFY_SOCKET", "/nonexistent-dir/notify", 1);
    CHECK(notify_send("READY=1") == -ENOENT, "a missing socket is -ENOENT");
    return tap_done();
}
