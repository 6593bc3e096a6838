/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file as another process sees it (host/nsroot.c), on a fixture /proc whose proc/PID/root is a
 * directory: a path through an absolute link (/var/run -> /run, as container images have it) is
 * found inside that root; a link to a file outside the root, absolute or by "..", leads nowhere
 * (the same file exists outside and must not be read); a link as the last component is refused
 * with O_NOFOLLOW; a gone process is -ESRCH. Then this process's own root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nsroot.h"
#include "tap.h"

static char top[] = "/tmp/vnuma-nsroot-XXXXXX";

/* top/rel with text (its directories made first) */
static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", top, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    f = fopen(path, "we");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void link_at(const char *target, const char *rel)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", top, rel);
    if (symlink(target, path) < 0)
        fprintf(stderr, "# cannot link %s\n", path);
}

/* the first line of what nsroot_open gives for path, or "" with r < 0 */
static int read_in(const char *root, int pid, const char *path, int flags, char *buf, size_t len)
{
    int fd = nsroot_open(root, pid, path, flags);
    ssize_t n;

    buf[0] = '\0';
    if (fd < 0)
        return fd;
    n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

int main(void)
{
    char root[600], target[700], buf[256];
    int r;

    if (!mkdtemp(top))
        return CHECK(0, "fixture directory"), tap_done();
    snprintf(root, sizeof(root), "%s/host", top);
    put("host/proc/20/root/run/libvirt/qemu/dom.xml", "inside\n");
    put("host/proc/20/root/var/.keep", "");
    link_at("/run", "host/proc/20/root/var/run");
    /* the same path outside the daemon's root, on the "host": must never be read */
    put("outside/run/libvirt/qemu/dom.xml", "outside\n");
    put("secret", "outside\n");
    snprintf(target, sizeof(target), "%s/secret", top);
    link_at(target, "host/proc/20/root/run/abs-out");
    link_at("../../../../../../../../secret", "host/proc/20/root/run/rel-out");
    snprintf(target, sizeof(target), "%s/outside/run/libvirt", top);
    put("host/proc/21/root/run/.keep", "");
    link_at(target, "host/proc/21/root/run/libvirt"); /* a directory link out of the root */
    put("host/proc/21/root/libvirt/qemu/dom.xml", "inside-21\n");

    r = read_in(root, 20, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"), "the daemon's /run/libvirt/qemu/dom.xml (%d, %s)", r,
          buf);
    r = read_in(root, 20, "/var/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"),
          "through its /var/run -> /run (an absolute link): inside its root (%d, %s)", r, buf);
    r = read_in(root, 20, "run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"), "a relative path: from its root too (%d)", r);
    r = read_in(root, 20, "/run/abs-out", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0],
          "a link to an absolute path outside its root stays inside: nothing there (%d, %s)", r,
          buf);
    r = read_in(root, 20, "/run/rel-out", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0], "a link of '..' past its root stays inside (%d, %s)", r, buf);
    r = read_in(root, 20, "/../../../secret", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0], "a path of '..' past its root stays inside (%d)", r);
    r = read_in(root, 21, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0],
          "a directory link to the host's path: resolved in its root, not the host's file (%d, "
          "%s)",
          r, buf);
    r = read_in(root, 20, "/run/abs-out", O_RDONLY | O_NOFOLLOW, buf, sizeof(buf));
    CHECK(r == -ELOOP, "O_NOFOLLOW: a link as the last component is refused (%d)", r);
    r = read_in(root, 77, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ESRCH, "a process that is gone: -ESRCH (%d)", r);
    r = read_in(root, 0, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ESRCH, "pid 0: none (%d)", r);

    /* live: this process's root is the file system's */
    snprintf(target, sizeof(target), "%s/secret", top);
    r = read_in("/", getpid(), target, O_RDONLY, buf, sizeof(buf));
    if (r == -ENOSYS) {
        printf("# this kernel has no openat2 (before 5.6): nsroot_open cannot work here\n");
        CHECK(0, "live: openat2 exists");
    } else {
        CHECK(r == 0 && !strcmp(buf, "outside"), "live: a file through /proc/%d/root (%d)",
              (int)getpid(), r);
    }
    snprintf(buf, sizeof(buf), "rm -rf '%s'", top);
    CHECK(system(buf) == 0, "fixture removed");
    return tap_done();
}
