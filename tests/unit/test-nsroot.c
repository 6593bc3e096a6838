/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file as another process sees it (host/nsroot.c), on a fixture /proc whose proc/PID/root is a
 * directory: a path through an absolute link (/var/run -> /run, as container images have it) is
 * found inside that root; a link to a file outside the root, absolute or by "..", leads nowhere
 * (the same file exists outside and must not be read); a link as the last component is refused
 * with O_NOFOLLOW; links that name each other are -ELOOP; a gone process is -ESRCH. Each case
 * twice: through nsroot_open (openat2 RESOLVE_IN_ROOT) and through nsroot_walk, what it falls
 * back to without openat2 (a kernel before 5.6, valgrind). Then this process's own root.
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

/* How a case opens: nsroot_open (openat2 where the kernel has it), or nsroot_walk (what it falls
 * back to without openat2) from the fixture's proc/PID/root. */
static int walking;

/* the first line of what path opens to as process pid sees it, or "" with r < 0 */
static int read_in(const char *root, int pid, const char *path, int flags, char *buf, size_t len)
{
    char dir[700];
    int fd;
    ssize_t n;

    buf[0] = '\0';
    if (walking) {
        snprintf(dir, sizeof(dir), "%s/proc/%d/root", root, pid);
        int rfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rfd < 0)
            return -ESRCH;
        fd = nsroot_walk(rfd, path, flags);
        close(rfd);
    } else {
        fd = nsroot_open(root, pid, path, flags);
    }
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

/* every case, the way `walking` says */
/* every case, the way `walking` says */
static void cases(const char *root)
{
    const char *how = walking ? "walk" : "open";
    char buf[256];
    int r;

    r = read_in(root, 20, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"), "%s: the daemon's /run/libvirt/qemu/dom.xml (%d, %s)",
          how, r, buf);
    r = read_in(root, 20, "/var/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"),
          "%s: through its /var/run -> /run (an absolute link): inside its root (%d, %s)", how, r,
          buf);
    r = read_in(root, 20, "run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"), "%s: a relative path: from its root too (%d)", how, r);
    r = read_in(root, 20, "/run/./libvirt//qemu/../qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"), "%s: '.', '//' and '..' inside the root (%d)", how, r);
    r = read_in(root, 20, "/var/run/rel-in/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "inside"),
          "%s: a relative link (libvirt/qemu) after an absolute one (%d, %s)", how, r, buf);
    r = read_in(root, 20, "/run/abs-out", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0],
          "%s: a link to an absolute path outside its root stays inside: nothing there (%d, %s)",
          how, r, buf);
    r = read_in(root, 20, "/run/rel-out", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0], "%s: a link of '..' past its root stays inside (%d, %s)", how, r,
          buf);
    r = read_in(root, 20, "/../../../../secret", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0], "%s: a path of '..' past its root stays inside (%d)", how, r);
    r = read_in(root, 21, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOENT && !buf[0],
          "%s: a directory link to the host's path: resolved in its root, not the host's file "
          "(%d, %s)",
          how, r, buf);
    r = read_in(root, 20, "/run/abs-out", O_RDONLY | O_NOFOLLOW, buf, sizeof(buf));
    CHECK(r == -ELOOP, "%s: O_NOFOLLOW: a link as the last component is refused (%d)", how, r);
    r = read_in(root, 20, "/run/loop-a/x", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ELOOP, "%s: links that name each other: -ELOOP (%d)", how, r);
    r = read_in(root, 20, "/run/libvirt/qemu/dom.xml/x", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ENOTDIR, "%s: a file as a directory: -ENOTDIR (%d)", how, r);
    r = read_in(root, 77, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ESRCH, "%s: a process that is gone: -ESRCH (%d)", how, r);
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
    link_at("../../../../../secret",
            "host/proc/20/root/run/rel-out"); /* top/secret, without the root */
    link_at("libvirt/qemu", "host/proc/20/root/run/rel-in");
    link_at("/run/loop-b", "host/proc/20/root/run/loop-a");
    link_at("loop-a", "host/proc/20/root/run/loop-b");
    snprintf(target, sizeof(target), "%s/outside/run/libvirt", top);
    put("host/proc/21/root/run/.keep", "");
    link_at(target, "host/proc/21/root/run/libvirt"); /* a directory link out of the root */
    put("host/proc/21/root/libvirt/qemu/dom.xml", "inside-21\n");

    cases(root);
    walking = 1;
    cases(root);
    walking = 0;
    r = read_in(root, 0, "/run/libvirt/qemu/dom.xml", O_RDONLY, buf, sizeof(buf));
    CHECK(r == -ESRCH, "pid 0: none (%d)", r);

    /* live: this process's root is the file system's */
    snprintf(target, sizeof(target), "%s/secret", top);
    r = read_in("/", getpid(), target, O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "outside"), "live: a file through /proc/%d/root (%d)",
          (int)getpid(), r);
    walking = 1;
    r = read_in("/", getpid(), target, O_RDONLY, buf, sizeof(buf));
    CHECK(r == 0 && !strcmp(buf, "outside"), "live, walking: the same file (%d)", r);
    snprintf(buf, sizeof(buf), "rm -rf '%s'", top);
    CHECK(system(buf) == 0, "fixture removed");
    return tap_done();
}
