/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process's mappings from /proc/PID/maps (procmaps.h). */
#include "procmaps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/*
 * One line of maps: "START-END PERMS OFFSET DEV INODE   NAME". The name (a file's path, which
 * whoever created the file chose, or [heap], [stack], /memfd:...) is everything after the
 * inode's blanks; it may itself hold blanks. 0, or -EINVAL for a line that is not one.
 */
static int maps_line(const char *line, pid_t pid, proc_map *m)
{
    unsigned long long start, end, off, ino;
    char perms[8];
    int name_at = 0;

    if (sscanf(line, "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &off, &ino, &name_at) !=
            5 ||
        end <= start || strlen(perms) != 4)
        return -EINVAL;
    *m = (proc_map){.start = start, .end = end, .offset = off, .inode = ino};
    memcpy(m->perms, perms, 4);
    if (name_at > 0) {
        const char *name = line + name_at;
        size_t len = strcspn(name, "\n");
        m->name_cut = len >= sizeof(m->name);
        len = VN_MIN(len, sizeof(m->name) - 1);
        memcpy(m->name, name, len);
        m->name[len] = '\0';
    }
    (void)snprintf(m->map_file, sizeof(m->map_file), "/proc/%d/map_files/%llx-%llx", (int)pid,
                   start, end);
    return 0;
}

int procmaps_walk(const char *root, pid_t pid, uint64_t addr, uint64_t len,
                  int (*fn)(const proc_map *m, void *opaque), void *opaque)
{
    _cleanup_fclose_ FILE *f = NULL;
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    char path[PATH_MAX];
    unsigned found = 0;
    int n = snprintf(path, sizeof(path), "%s/proc/%d/maps", root, (int)pid);

    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    /* whole lines, however long a file's name is: a line read in pieces would let the rest of
     * a crafted name be taken for a mapping of its own */
    while (getline(&line, &cap, f) > 0) {
        proc_map m;
        int r;

        if (strlen(line) > PROCMAPS_LINE_MAX || maps_line(line, pid, &m) < 0)
            continue;
        if (m.end <= addr || (len != PROCMAPS_ALL && m.start >= addr + len))
            continue;
        found++;
        r = fn(&m, opaque);
        if (r)
            return r;
    }
    return found ? 0 : -ENOENT;
}
