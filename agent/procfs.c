/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs: readers of /proc and /sys below a root (see procfs.h).
 */
#include "procfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* Read a small file (at most len - 1 bytes) into buf, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t len)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;

    if (fd < 0)
        return -errno;
    while (got < len - 1) {
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    return 0;
}

int procfs_parse_stat(const char *line, procfs_stat *ret)
{
    const char *open = strchr(line, '('), *close = strrchr(line, ')');
    uint64_t v[40] = {0};
    procfs_stat st = {0};
    const char *p;
    size_t len, i;

    if (!open || !close || close < open || close[1] != ' ')
        return -EINVAL;
    len = VN_MIN((size_t)(close - open - 1), sizeof(st.comm) - 1);
    memcpy(st.comm, open + 1, len);
    st.comm[len] = '\0';
    p = close + 2;
    if (!isalpha((unsigned char)*p))
        return -EINVAL;
    st.state = *p++;
    /* v[n] is field n + 3 */
    for (i = 1; i < VN_ARRAY_SIZE(v) && *p; i++) {
        char *end;
        while (*p == ' ')
            p++;
        if (*p == '\0' || *p == '\n')
            break;
        if (*p == '-') { /* a few fields are signed; the ones we keep are not */
            (void)strtoll(p, &end, 10);
            v[i] = 0;
        } else {
            v[i] = strtoull(p, &end, 10);
        }
        if (end == p)
            return -EINVAL;
        p = end;
    }
    if (i <= 21) /* rss (field 24) at least */
        return -EINVAL;
    st.flags = v[6];
    st.ticks = v[11] + v[12];
    st.starttime = v[19];
    st.rss_pages = v[21];
    st.processor = i > 36 ? (int)v[36] : -1;
    *ret = st;
    return 0;
}

static int read_stat_path(const char *path, procfs_stat *ret)
{
    char buf[1024];
    int r = read_small(path, buf, sizeof(buf));

    if (r < 0)
        return r;
    return procfs_parse_stat(buf, ret);
}

int procfs_read_stat(const char *root, pid_t pid, procfs_stat *ret)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/proc/%d/stat", root, (int)pid);
    return read_stat_path(path, ret);
}

int procfs_read_task_stat(const char *root, pid_t pid, pid_t tid, procfs_stat *ret)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/proc/%d/task/%d/stat", root, (int)pid, (int)tid);
    return read_stat_path(path, ret);
}

static int cmp_pid(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

static int list_numeric(const char *path, pid_t *ids, size_t max)
{
    DIR *dir = opendir(path);
    struct dirent *de;
    size_t n = 0;

    if (!dir)
        return -errno;
    while (n < max && (de = readdir(dir))) {
        char *end;
        long v;
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        v = strtol(de->d_name, &end, 10);
        if (*end != '\0' || v <= 0 || v > INT32_MAX)
            continue;
        ids[n++] = (pid_t)v;
    }
    (void)closedir(dir);
    qsort(ids, n, sizeof(*ids), cmp_pid);
    return (int)n;
}

int procfs_list_pids(const char *root, pid_t *pids, size_t max)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/proc", root);
    return list_numeric(path, pids, max);
}

int procfs_list_tasks(const char *root, pid_t pid, pid_t *tids, size_t max)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/proc/%d/task", root, (int)pid);
    return list_numeric(path, tids, max);
}

static bool special_mapping(const char *name)
{
    return strcmp(name, "[vsyscall]") == 0 || strcmp(name, "[vvar]") == 0 ||
           strcmp(name, "[vdso]") == 0 || strncmp(name, "[vvar_", 6) == 0;
}

int procfs_read_maps(const char *root, pid_t pid, procfs_region *regions, size_t max,
                     size_t *ret_dropped)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[512], line[4096];
    size_t n = 0, dropped = 0;

    snprintf(path, sizeof(path), "%s/proc/%d/maps", root, (int)pid);
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long start, end;
        char perms[5] = "", name[256] = "";
        int used = 0;
        procfs_region *reg;

        if (sscanf(line, "%llx-%llx %4s %*s %*s %*s%n", &start, &end, perms, &used) < 3 ||
            end <= start)
            continue;
        (void)sscanf(line + used, " %255s", name);
        if (n >= max) {
            dropped++;
            continue;
        }
        reg = &regions[n++];
        reg->start = start;
        reg->end = end;
        reg->readable = perms[0] == 'r';
        reg->writable = perms[1] == 'w';
        reg->shared = perms[3] == 's';
        reg->special = special_mapping(name);
    }
    if (ferror(f))
        return -EIO;
    if (ret_dropped)
        *ret_dropped = dropped;
    return (int)n;
}

int procfs_parse_list(const char *s, uint64_t *bitmap, size_t bits)
{
    const char *p = s;

    memset(bitmap, 0, (bits + 63) / 64 * sizeof(uint64_t));
    while (*p && *p != '\n') {
        char *end;
        unsigned long a, b;

        if (!isdigit((unsigned char)*p))
            return -EINVAL;
        a = strtoul(p, &end, 10);
        b = a;
        p = end;
        if (*p == '-') {
            p++;
            if (!isdigit((unsigned char)*p))
                return -EINVAL;
            b = strtoul(p, &end, 10);
            p = end;
        }
        if (b < a)
            return -EINVAL;
        for (unsigned long i = a; i <= b && i < bits; i++)
            bitmap[i / 64] |= 1ULL << (i % 64);
        if (*p == ',')
            p++;
        else if (*p && *p != '\n')
            return -EINVAL;
    }
    return 0;
}

static int count_list(const char *path, size_t bits, unsigned *ret)
{
    uint64_t map[AG_MAX_CPUS / 64];
    char buf[1024];
    unsigned highest = 0;
    bool any = false;
    int r;

    if (bits > AG_MAX_CPUS)
        bits = AG_MAX_CPUS;
    r = read_small(path, buf, sizeof(buf));
    if (r < 0)
        return r;
    r = procfs_parse_list(buf, map, bits);
    if (r < 0)
        return r;
    for (size_t i = 0; i < bits; i++)
        if (map[i / 64] & (1ULL << (i % 64))) {
            highest = (unsigned)i;
            any = true;
        }
    if (!any)
        return -EINVAL;
    *ret = highest + 1;
    return 0;
}

int procfs_node_count(const char *root, unsigned *ret)
{
    char path[512];
    int r;

    snprintf(path, sizeof(path), "%s/sys/devices/system/node/online", root);
    r = count_list(path, AG_MAX_NODES, ret);
    if (r == -ENOENT) {
        *ret = 1;
        return 0;
    }
    return r;
}

int procfs_cpu_count(const char *root, unsigned *ret)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/sys/devices/system/cpu/online", root);
    return count_list(path, AG_MAX_CPUS, ret);
}

int procfs_uptime_ms(const char *root, uint64_t *ret)
{
    char path[512], buf[128];
    double up;
    int r;

    snprintf(path, sizeof(path), "%s/proc/uptime", root);
    r = read_small(path, buf, sizeof(buf));
    if (r < 0)
        return r;
    if (sscanf(buf, "%lf", &up) != 1 || up < 0)
        return -EINVAL;
    *ret = (uint64_t)(up * 1000.0);
    return 0;
}
