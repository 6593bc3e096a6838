/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pids across PID namespaces (host/nspid.h): /proc/PID/ns/pid and the NSpid line of
 * /proc/PID/status.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "nspid.h"
#include "util.h"

#define NSPID_KEY "NSpid:"

int nspid_ns(const char *root, pid_t pid, char *ret, size_t len)
{
    char path[PATH_MAX];
    ssize_t n;

    if (pid < 0 || len == 0)
        return -EINVAL;
    if (pid == 0)
        (void)snprintf(path, sizeof(path), "%s/proc/self/ns/pid", root);
    else
        (void)snprintf(path, sizeof(path), "%s/proc/%d/ns/pid", root, (int)pid);
    n = readlink(path, ret, len - 1);
    if (n < 0)
        return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
    if ((size_t)n >= len - 1 || n == 0)
        return -ENAMETOOLONG;
    ret[n] = '\0';
    return 0;
}

int nspid_other(const char *root, pid_t pid)
{
    char own[NSPID_NS_MAX], theirs[NSPID_NS_MAX];
    int r;

    if (pid <= 0)
        return -ESRCH;
    r = nspid_ns(root, pid, theirs, sizeof(theirs));
    if (r < 0)
        return r;
    r = nspid_ns(root, 0, own, sizeof(own));
    if (r < 0)
        return r;
    return strcmp(own, theirs) != 0;
}

int nspid_parse(const char *value, pid_t *ret_outer, pid_t *ret_inner)
{
    pid_t first = 0, last = 0;
    unsigned fields = 0;
    const char *p = value;

    for (;;) {
        int64_t v;
        char num[16];
        size_t n;

        p += strspn(p, " \t");
        if (*p == '\0' || *p == '\n')
            break;
        n = strcspn(p, " \t\n");
        if (n >= sizeof(num) || ++fields > NSPID_LEVELS_MAX)
            return -EINVAL;
        memcpy(num, p, n);
        num[n] = '\0';
        if (vn_parse_i64(num, 1, INT32_MAX, &v) < 0)
            return -EINVAL;
        if (fields == 1)
            first = (pid_t)v;
        last = (pid_t)v;
        p += n;
    }
    if (fields == 0)
        return -EINVAL;
    *ret_outer = first;
    *ret_inner = last;
    return 0;
}

/* The NSpid line of a status file: its first and last field. -ENOENT when it has none (a
 * kernel before 4.1), -EINVAL when it does not parse. A line longer than the buffer is read on
 * in pieces, none of which is taken for the start of a line. */
static int status_nspid(const char *path, pid_t *outer, pid_t *inner)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[512];
    bool at_start = true;

    if (!f)
        return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f)) {
        bool whole = strchr(line, '\n') != NULL;
        if (at_start && strncmp(line, NSPID_KEY, strlen(NSPID_KEY)) == 0)
            return whole ? nspid_parse(line + strlen(NSPID_KEY), outer, inner) : -EINVAL;
        at_start = whole;
    }
    return -ENOENT;
}

/* A /proc directory entry that is a pid (all digits), as a pid; 0 when it is not. */
static pid_t entry_pid(const char *name)
{
    int64_t v;

    if (name[0] < '0' || name[0] > '9' || vn_parse_i64(name, 1, INT32_MAX, &v) < 0)
        return 0;
    return (pid_t)v;
}

int nspid_find(const char *root, const char *ns, pid_t inner, pid_t *ret)
{
    char path[PATH_MAX];
    struct dirent *e;

    if (inner <= 0 || !ns || !ns[0])
        return -EINVAL;
    (void)snprintf(path, sizeof(path), "%s/proc", root);
    _cleanup_closedir_ DIR *dir = opendir(path);
    if (!dir)
        return -errno;
    while ((e = readdir(dir))) {
        char theirs[NSPID_NS_MAX];
        pid_t p = entry_pid(e->d_name), outer, in;

        if (p <= 0 || nspid_ns(root, p, theirs, sizeof(theirs)) < 0 || strcmp(theirs, ns) != 0)
            continue;
        (void)snprintf(path, sizeof(path), "%s/proc/%d/status", root, (int)p);
        if (status_nspid(path, &outer, &in) < 0 || in != inner || outer != p)
            continue;
        *ret = p;
        return 0;
    }
    return -ESRCH;
}

int nspid_task(const char *root, pid_t pid, pid_t inner, pid_t *ret)
{
    char path[PATH_MAX];
    struct dirent *e;

    if (pid <= 0 || inner <= 0)
        return -ESRCH;
    (void)snprintf(path, sizeof(path), "%s/proc/%d/task", root, (int)pid);
    _cleanup_closedir_ DIR *dir = opendir(path);
    if (!dir)
        return errno == ENOENT || errno == ENOTDIR ? -ESRCH : -errno;
    while ((e = readdir(dir))) {
        pid_t t = entry_pid(e->d_name), outer, in;

        if (t <= 0)
            continue;
        (void)snprintf(path, sizeof(path), "%s/proc/%d/task/%d/status", root, (int)pid, (int)t);
        if (status_nspid(path, &outer, &in) < 0 || in != inner || outer != t)
            continue;
        *ret = t;
        return 0;
    }
    return -ESRCH;
}
