/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fake scan_ops (agent/scan.h) for the agent's unit tests (test-agent-scan.c,
 * test-agent-collect.c): the test says where each process's pages are (node), what pagemap
 * says of each page and which pages are idle; the fake counts what was asked of it.
 */
#pragma once

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <unistd.h>

#include "scan.h"

static struct fake_scan {
    int (*node)(pid_t pid);                         /* the node of every page of pid */
    uint64_t (*pagemap)(pid_t pid, uint64_t vaddr); /* pagemap's entry of the page at vaddr */
    bool (*idle)(uint64_t pfn);                     /* NULL: no page idle */
    unsigned long queries, max_query;               /* move_pages queries, the largest */
    unsigned clears;                                /* soft-dirty bits cleared */
    pid_t pagemap_pid;                              /* whose pagemap is open */
} fake_scan;

__attribute__((unused)) static int fake_scan_query(pid_t pid, unsigned long n, void **pages,
                                                   int *status)
{
    (void)pages;
    fake_scan.queries++;
    if (n > fake_scan.max_query)
        fake_scan.max_query = n;
    for (unsigned long i = 0; i < n; i++)
        status[i] = fake_scan.node(pid);
    return 0;
}

__attribute__((unused)) static int fake_scan_open_pagemap(const char *proc_root, pid_t pid)
{
    (void)proc_root;
    fake_scan.pagemap_pid = pid;
    return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

__attribute__((unused)) static int fake_scan_read_pagemap(int fd, uint64_t vaddr, size_t n,
                                                          uint64_t *out)
{
    (void)fd;
    for (size_t i = 0; i < n; i++)
        out[i] = fake_scan.pagemap(fake_scan.pagemap_pid, vaddr + i * 4096);
    return 0;
}

__attribute__((unused)) static int fake_scan_clear(const char *proc_root, pid_t pid)
{
    (void)proc_root;
    (void)pid;
    fake_scan.clears++;
    return 0;
}

__attribute__((unused)) static int fake_scan_idle_test(uint64_t pfn, bool *ret)
{
    *ret = fake_scan.idle && fake_scan.idle(pfn);
    return 0;
}

__attribute__((unused)) static int fake_scan_idle_mark(uint64_t pfn)
{
    (void)pfn;
    return 0;
}

__attribute__((unused)) static const scan_ops fake_scan_ops = {
    .query_nodes = fake_scan_query,
    .read_pagemap = fake_scan_read_pagemap,
    .open_pagemap = fake_scan_open_pagemap,
    .clear_soft_dirty = fake_scan_clear,
    .idle_test = fake_scan_idle_test,
    .idle_mark = fake_scan_idle_mark,
};
