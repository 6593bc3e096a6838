/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process's mappings from /proc/PID/maps (procmaps.h). */
#include "procmaps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "util.h"

int procmaps_walk(const char *root, pid_t pid, uint64_t addr, uint64_t len,
                  int (*fn)(const proc_map *m, void *opaque), void *opaque)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[PATH_MAX], line[512];
    unsigned found = 0;
    int n = snprintf(path, sizeof(path), "%s/proc/%d/maps", root, (int)pid);

    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long start, end, off, ino;
        proc_map m;
        int r;

        if (sscanf(line, "%llx-%llx %*s %llx %*s %llu", &start, &end, &off, &ino) != 4)
            continue;
        if (end <= addr || start >= addr + len)
            continue;
        m = (proc_map){.start = start, .end = end, .offset = off, .inode = ino};
        (void)snprintf(m.map_file, sizeof(m.map_file), "/proc/%d/map_files/%llx-%llx", (int)pid,
                       start, end);
        found++;
        r = fn(&m, opaque);
        if (r)
            return r;
    }
    return found ? 0 : -ENOENT;
}
