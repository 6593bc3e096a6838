/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A process's mappings (procmaps.c), from /proc/PID/maps: never smaps, which walks every page
 * table of a guest's memory. What the sample stage (ramlayout.c: a backend's page size) and the
 * act stage (act_backend.c: a shared backend's policy) both read.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct proc_map {
    uint64_t start, end; /* the mapping, [start, end) */
    uint64_t offset;     /* in the file it maps */
    uint64_t inode;      /* 0: anonymous */
    char perms[5];       /* "rw-p", "---p", "rw-s" ... */
    /* its name as maps shows it: a file's path (chosen by whoever made the file: untrusted),
     * "/memfd:NAME (deleted)", "[heap]", or "" (anonymous); name_cut: longer than kept */
    char name[256];
    bool name_cut;
    char map_file[96]; /* /proc/PID/map_files/START-END: the file it maps, for statfs, open */
} proc_map;

/* A maps line longer than this (a path near PATH_MAX and more) is skipped, not read. */
#define PROCMAPS_LINE_MAX (PATH_MAX + 256)
/* len of procmaps_walk() for every mapping */
#define PROCMAPS_ALL UINT64_MAX

/*
 * fn(m, opaque) for each mapping of process pid (its maps under root: "/", a fixture tree in
 * tests; map_file is always the real /proc's) that overlaps [addr, addr + len), in address
 * order (len PROCMAPS_ALL: every mapping from addr on), until fn returns non-zero: that value is
 * returned. Otherwise 0, or -ENOENT when no mapping overlapped; -ESRCH when the process is gone,
 * another -errno when maps cannot be read.
 */
int procmaps_walk(const char *root, pid_t pid, uint64_t addr, uint64_t len,
                  int (*fn)(const proc_map *m, void *opaque), void *opaque);
