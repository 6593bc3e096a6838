/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A file as another process sees it (host/nsroot.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "nsroot.h"
#include "util.h"

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
    fd = (int)syscall(SYS_openat2, rfd, *path ? path : ".", &how, sizeof(how));
    return fd < 0 ? -errno : fd;
}
