/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vnumad's own record of a domain's originals, in state_dir/originals (origfile.h). */
#include "origfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metadata.h"
#include "util.h"

#define ORIGFILE_DIR   "originals"
#define ORIGFILE_MAGIC "vnuma-originals 1"
#define BOOT_ID_LEN    36

bool origfile_uuid_ok(const char *s)
{
    static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

    if (!s || strlen(s) != sizeof(shape) - 1)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == '-' ? s[i] != '-'
                            : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* This boot's id (the kernel's random boot_id), "" when it cannot be read. */
static void boot_id(char buf[BOOT_ID_LEN + 1])
{
    _cleanup_close_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, BOOT_ID_LEN) : -1;

    buf[n == BOOT_ID_LEN ? BOOT_ID_LEN : 0] = '\0';
    if (!origfile_uuid_ok(buf))
        buf[0] = '\0';
}

/* A directory fd of vnumad's own: a directory, not a link, its user's, nobody else may write. */
static int own_dir(int fd)
{
    struct stat sb;

    if (fstat(fd, &sb) < 0)
        return -errno;
    if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022))
        return -EPERM;
    return 0;
}

/* state_dir/originals, opened (made 0700 when missing and `make`). */
static int open_dir(const char *state_dir, bool make)
{
    _cleanup_close_ int top = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd, r;

    if (top < 0)
        return -errno;
    if (make && mkdirat(top, ORIGFILE_DIR, 0700) < 0 && errno != EEXIST)
        return -errno;
    fd = openat(top, ORIGFILE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
    r = own_dir(fd);
    if (r < 0) {
        close(fd);
        return r;
    }
    return fd;
}

int origfile_remove(const char *state_dir, const char *uuid)
{
    _cleanup_close_ int dir = -1;

    if (!origfile_uuid_ok(uuid))
        return -EINVAL;
    dir = open_dir(state_dir, false);
    if (dir == -ENOENT)
        return 0;
    if (dir < 0)
        return dir;
    return unlinkat(dir, uuid, 0) < 0 && errno != ENOENT ? -errno : 0;
}

int origfile_write(const char *state_dir, const char *uuid, int id, const dom_originals *o)
{
    _cleanup_free_ char *xml = NULL;
    _cleanup_close_ int dir = -1;
    char tmp[64], boot[BOOT_ID_LEN + 1], head[128];
    int fd, r = 0, n;

    if (!origfile_uuid_ok(uuid))
        return -EINVAL;
    if (!o->saved)
        return origfile_remove(state_dir, uuid);
    r = meta_format_state(o, NULL, 0, NULL, NULL, &xml);
    if (r < 0)
        return r;
    dir = open_dir(state_dir, true);
    if (dir < 0)
        return dir;
    boot_id(boot);
    n = snprintf(head, sizeof(head), ORIGFILE_MAGIC " boot=%s id=%d\n", boot, id);
    snprintf(tmp, sizeof(tmp), ".%s.tmp", uuid);
    (void)unlinkat(dir, tmp, 0); /* left by a vnumad that died writing it */
    fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    errno = 0;
    if (write(fd, head, (size_t)n) != n || write(fd, xml, strlen(xml)) != (ssize_t)strlen(xml) ||
        write(fd, "\n", 1) != 1 || fsync(fd) < 0)
        r = errno ? -errno : -EIO;
    if (close(fd) < 0 && !r)
        r = -errno;
    if (!r && renameat(dir, tmp, dir, uuid) < 0)
        r = -errno;
    if (r)
        (void)unlinkat(dir, tmp, 0);
    return r;
}

/* The whole of a record file of vnumad's own into a malloc'd NUL-terminated *ret. */
static int read_own(int dir, const char *name, char **ret)
{
    _cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    _cleanup_free_ char *buf = NULL;
    struct stat sb;
    size_t len = 0;
    ssize_t n;

    if (fd < 0)
        return errno == ELOOP ? -EPERM : -errno;
    if (fstat(fd, &sb) < 0)
        return -errno;
    if (!S_ISREG(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022))
        return -EPERM;
    if (sb.st_size < 0 || (uint64_t)sb.st_size > ORIGFILE_MAX_BYTES)
        return -EINVAL;
    buf = malloc((size_t)sb.st_size + 1);
    if (!buf)
        return -ENOMEM;
    while (len < (size_t)sb.st_size && (n = read(fd, buf + len, (size_t)sb.st_size - len)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    *ret = VN_TAKE_PTR(buf);
    return 0;
}

int origfile_read(const char *state_dir, const char *uuid, int id, dom_originals *ret)
{
    _cleanup_close_ int dir = -1;
    _cleanup_free_ char *text = NULL;
    char boot[BOOT_ID_LEN + 1], want[128];
    const char *xml;
    int r;

    memset(ret, 0, sizeof(*ret));
    if (!origfile_uuid_ok(uuid))
        return -EINVAL;
    dir = open_dir(state_dir, false);
    if (dir < 0)
        return dir;
    r = read_own(dir, uuid, &text);
    if (r < 0)
        return r;
    boot_id(boot);
    snprintf(want, sizeof(want), ORIGFILE_MAGIC " boot=%s id=%d\n", boot, id);
    if (strncmp(text, ORIGFILE_MAGIC " ", sizeof(ORIGFILE_MAGIC)) != 0 ||
        !(xml = strchr(text, '\n')))
        return -EINVAL;
    r = meta_parse_state(xml + 1, ret);
    if (r < 0 || !ret->saved) {
        memset(ret, 0, sizeof(*ret));
        return -EINVAL;
    }
    /* another QEMU run's, or another boot's: what it saved may not be what this run had */
    if (strncmp(text, want, strlen(want)) != 0 || !boot[0])
        return -ESTALE;
    return 0;
}

bool origfile_same(const dom_originals *a, const dom_originals *b)
{
    _cleanup_free_ char *x = NULL;
    _cleanup_free_ char *y = NULL;

    return a->saved && b->saved && meta_format_state(a, NULL, 0, NULL, NULL, &x) == 0 &&
           meta_format_state(b, NULL, 0, NULL, NULL, &y) == 0 && strcmp(x, y) == 0;
}

int origfile_prune(const char *state_dir, bool (*keep)(const char *uuid, void *arg), void *arg)
{
    int fd = open_dir(state_dir, false), n = 0;
    _cleanup_closedir_ DIR *d = NULL;
    struct dirent *e;

    if (fd == -ENOENT)
        return 0;
    if (fd < 0)
        return fd;
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    while ((e = readdir(d))) {
        const char *name = e->d_name;
        char uuid[40];
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        /* a temporary file: ".UUID.tmp" */
        snprintf(uuid, sizeof(uuid), "%.36s", name[0] == '.' ? name + 1 : name);
        if (origfile_uuid_ok(uuid) && keep(uuid, arg))
            continue;
        if (unlinkat(dirfd(d), name, 0) == 0)
            n++;
    }
    return n;
}
