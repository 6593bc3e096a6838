/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file as another process sees it (host/nsroot.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nsroot.h"
#include "util.h"

/* how many times an openat2 that ends in EAGAIN is tried */
#define NSROOT_EAGAIN_TRIES 8

/* Symbolic links followed in one lookup at most, as the kernel's (MAXSYMLINKS). */
#define NSROOT_LINKS_MAX 40
/* Directories deep a lookup goes at most (each an fd held while it walks). */
#define NSROOT_DEPTH_MAX 64

typedef struct walk {
    int fd[NSROOT_DEPTH_MAX]; /* fd[0]: the root; fd[depth]: where the walk is */
    unsigned depth;
} walk;

static void walk_up_to(walk *w, unsigned depth)
{
    while (w->depth > depth)
        close(w->fd[w->depth--]);
}

/* todo = link target + "/" + rest (rest may point into todo itself); an absolute target
 * starts again at the root. */
static int splice_link(walk *w, int dirfd, const char *name, char *todo, size_t len,
                       const char *rest)
{
    char target[PATH_MAX], tail[PATH_MAX];
    ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

    if (n < 0)
        return -errno;
    if (n == 0)
        return -ENOENT; /* an empty link names nothing */
    target[n] = '\0';
    if ((size_t)snprintf(tail, sizeof(tail), "%s", rest) >= sizeof(tail) ||
        (size_t)snprintf(todo, len, "%s/%s", target, tail) >= len)
        return -ENAMETOOLONG;
    if (target[0] == '/')
        walk_up_to(w, 0);
    return 0;
}

int nsroot_walk(int rfd, const char *path, int flags)
{
    walk w = {.depth = 0};
    char todo[PATH_MAX * 2], name[NAME_MAX + 1];
    unsigned links = 0;
    const char *p = todo;
    int r;

    if ((size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo))
        return -ENAMETOOLONG;
    w.fd[0] = fcntl(rfd, F_DUPFD_CLOEXEC, 0);
    if (w.fd[0] < 0)
        return -errno;
    for (;;) {
        int cur = w.fd[w.depth], fd;
        struct stat st;
        size_t n;
        bool last;

        p += strspn(p, "/");
        n = strcspn(p, "/");
        if (n == 0) { /* the path ends at a directory: that directory */
            r = openat(cur, ".", flags | O_CLOEXEC);
            r = r < 0 ? -errno : r;
            break;
        }
        if (n > NAME_MAX) {
            r = -ENAMETOOLONG;
            break;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        last = p[n + strspn(p + n, "/")] == '\0';
        p += n;
        if (!strcmp(name, "."))
            continue;
        if (!strcmp(name, "..")) {
            if (w.depth > 0) /* (the root's ".." is the root) */
                walk_up_to(&w, w.depth - 1);
            continue;
        }
        if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            r = -errno;
            break;
        }
        if (S_ISLNK(st.st_mode) && !(last && (flags & O_NOFOLLOW))) {
            r = ++links > NSROOT_LINKS_MAX ? -ELOOP
                                           : splice_link(&w, cur, name, todo, sizeof(todo), p);
            if (r < 0)
                break;
            p = todo;
            continue;
        }
        if (last) {
            /* (a link put there since the fstatat is not followed: ELOOP, or O_PATH's own fd
             * of the link, as openat2 gives) */
            r = openat(cur, name, flags | O_NOFOLLOW | O_CLOEXEC);
            r = r < 0 ? -errno : r;
            break;
        }
        if (w.depth + 1 >= NSROOT_DEPTH_MAX) {
            r = -ENAMETOOLONG;
            break;
        }
        fd = openat(cur, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ELOOP && ++links <= NSROOT_LINKS_MAX) {
            p -= n; /* a link since the fstatat: looked at again */
            continue;
        }
        if (fd < 0) {
            r = -errno;
            break;
        }
        w.fd[++w.depth] = fd;
    }
    walk_up_to(&w, 0);
    close(w.fd[0]);
    return r;
}

int nsroot_open(const char *root, pid_t pid, const char *path, int flags)
{
    char dir[PATH_MAX];
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    int fd;

    if (pid <= 0)
        return -ESRCH;
    if (!path || !*path)
        return -EINVAL;
    if ((size_t)snprintf(dir, sizeof(dir), "%s/proc/%d/root", root, (int)pid) >= sizeof(dir))
        return -ENAMETOOLONG;
    _cleanup_close_ int rfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
    while (*path == '/')
        path++; /* (RESOLVE_IN_ROOT starts an absolute path at rfd too: said once more) */
    /* EAGAIN: a rename or mount anywhere on the host raced a '..' of the path, and the kernel
     * could not rule out an escape; it may be tried again (openat2(2)). Bounded: whoever owns
     * that root can keep renaming, and the caller then gets the error. */
    for (int tries = 0; tries < NSROOT_EAGAIN_TRIES; tries++) {
        fd = (int)syscall(SYS_openat2, rfd, *path ? path : ".", &how, sizeof(how));
        if (fd >= 0 || errno != EAGAIN)
            break;
    }
    if (fd < 0 && errno == ENOSYS)
        return nsroot_walk(rfd, path, flags); /* a kernel before 5.6, or valgrind (3.19) */
    return fd < 0 ? -errno : fd;
}
