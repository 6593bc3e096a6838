/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs: the agent's readers of /proc and /sys. Every path is built below a
 * root ("" for the real system) so tests can point them at a fixture tree.
 * Nothing here logs; functions return 0 or -errno and write their out
 * parameters only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Guest nodes and CPUs the agent reports at most (bitmaps and arrays are sized by these). */
#define AG_MAX_NODES 64
#define AG_MAX_CPUS  1024
/* Threads of one process read per collection at most (rule 5: bounded walks). */
#define AG_MAX_THREADS 256
/* Regions (VMAs) of one process tracked at most; the rest are ignored and counted. */
#define AG_MAX_REGIONS 512

typedef struct procfs_stat {
    char comm[17];      /* field 2 without the parentheses, at most 16 bytes */
    char state;         /* field 3 */
    uint64_t flags;     /* field 9 (PF_KTHREAD = 0x00200000) */
    uint64_t ticks;     /* utime + stime (fields 14 and 15), in clock ticks */
    uint64_t starttime; /* field 22: with the pid, identifies one process */
    uint64_t rss_pages; /* field 24 */
    int processor;      /* field 39: the CPU it last ran on */
} procfs_stat;

#define PROCFS_PF_KTHREAD 0x00200000ULL

typedef struct procfs_region {
    uint64_t start, end; /* [start, end) virtual addresses */
    bool readable, writable, shared;
    bool special; /* [vsyscall], [vvar], [vdso]: never scanned */
} procfs_region;

/* Parse one stat line (/proc/PID/stat or /proc/PID/task/TID/stat). */
int procfs_parse_stat(const char *line, procfs_stat *ret);

/* Read ROOT/proc/PID/stat. */
int procfs_read_stat(const char *root, pid_t pid, procfs_stat *ret);

/* Read ROOT/proc/PID/task/TID/stat. */
int procfs_read_task_stat(const char *root, pid_t pid, pid_t tid, procfs_stat *ret);

/*
 * The numeric entries of ROOT/proc (pids), at most `max`, ascending. Returns
 * the number written or -errno.
 */
int procfs_list_pids(const char *root, pid_t *pids, size_t max);

/* The thread ids of ROOT/proc/PID/task, at most `max`, ascending; count or -errno. */
int procfs_list_tasks(const char *root, pid_t pid, pid_t *tids, size_t max);

/*
 * The regions of ROOT/proc/PID/maps, at most `max` (the rest is counted in
 * *ret_dropped). Returns the number written or -errno. The kernel takes the
 * target's mmap_lock once per read() buffer, not for the whole file.
 */
int procfs_read_maps(const char *root, pid_t pid, procfs_region *regions, size_t max,
                     size_t *ret_dropped);

/* Parse a Linux list ("0-3,5") into a bitmap of `bits` bits; ids beyond are ignored. */
int procfs_parse_list(const char *s, uint64_t *bitmap, size_t bits);

/*
 * Count of the ids in ROOT/sys/devices/system/node/online and
 * .../cpu/online (highest id + 1: ids are dense in a guest). 1 node when the
 * kernel has no NUMA directory.
 */
int procfs_node_count(const char *root, unsigned *ret);
int procfs_cpu_count(const char *root, unsigned *ret);

/* Guest uptime in milliseconds from ROOT/proc/uptime. */
int procfs_uptime_ms(const char *root, uint64_t *ret);
