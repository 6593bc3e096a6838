/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of the agent's /proc and /sys readers (agent/procfs.c) and port
 * discovery (agent/port.c), on fixture trees written below a temporary root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-fixture.h"
#include "port.h"
#include "procfs.h"
#include "tap.h"

/* A stat line: comm, state, flags, utime, stime, starttime, rss, processor. */
static void stat_line(char *buf, size_t len, int pid, const char *comm, char state,
                      unsigned long flags, unsigned long ut, unsigned long st, unsigned long start,
                      unsigned long rss, int cpu)
{
    snprintf(buf, len,
             "%d (%s) %c 1 %d %d 0 -1 %lu 100 0 0 0 %lu %lu 0 0 20 0 1 0 %lu 1000000 %lu "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
             pid, comm, state, pid, pid, flags, ut, st, start, rss, cpu);
}

static void test_stat(void)
{
    static const struct {
        const char *comm;
        unsigned long ut, st;
        int cpu;
    } cases[] = {
        {"memtouch", 10, 5, 1},
        {"a) (b", 0, 0, 0}, /* parentheses in comm: the last ')' ends it */
        {"with space", 7, 0, 3},
        {"sixteen-bytes-ab", 1, 1, 0},
    };
    char buf[1024];
    procfs_stat st;

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        stat_line(buf, sizeof(buf), 100 + (int)i, cases[i].comm, 'R', 0, cases[i].ut, cases[i].st,
                  42, 300, cases[i].cpu);
        CHECK(procfs_parse_stat(buf, &st) == 0 && strcmp(st.comm, cases[i].comm) == 0 &&
                  st.ticks == cases[i].ut + cases[i].st && st.processor == cases[i].cpu &&
                  st.starttime == 42 && st.rss_pages == 300 && st.state == 'R',
              "stat line with comm '%s': comm, ticks, processor, starttime, rss", cases[i].comm);
    }
    st.ticks = 99;
    CHECK(procfs_parse_stat("12 (x R 1 2", &st) == -EINVAL && st.ticks == 99,
          "a stat line without ')' is refused and the result untouched");
    CHECK(procfs_parse_stat("12 (x) R 1 2 3", &st) == -EINVAL, "a truncated stat line is refused");
    stat_line(buf, sizeof(buf), 2, "kthreadd", 'S', 0x00208040, 0, 0, 1, 0, 0);
    CHECK(procfs_parse_stat(buf, &st) == 0 && (st.flags & PROCFS_PF_KTHREAD),
          "kernel thread flag read from field 9");
}

static void test_fixture_proc(void)
{
    char buf[1024];
    pid_t pids[8], tids[8];
    procfs_region regs[8];
    procfs_stat st;
    size_t dropped = 99;
    int n;

    stat_line(buf, sizeof(buf), 7, "worker", 'R', 0, 50, 10, 5, 200, 1);
    put("proc/7/stat", buf);
    stat_line(buf, sizeof(buf), 8, "worker", 'S', 0, 30, 0, 5, 200, 0);
    put("proc/7/task/8/stat", buf);
    put("proc/7/task/7/stat", buf);
    put("proc/12/stat", buf);
    put("proc/self/stat", buf); /* not numeric: not a pid */
    put("proc/uptime", "1234.56 100.00\n");
    put("proc/7/maps", "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/worker\n"
                       "7f0000000000-7f0003000000 rw-p 00000000 00:00 0 \n"
                       "7f0003000000-7f0003001000 ---p 00000000 00:00 0 \n"
                       "7ffd00000000-7ffd00021000 rw-s 00000000 00:05 12   /memfd:x (deleted)\n"
                       "7ffe00000000-7ffe00002000 r--p 00000000 00:00 0    [vvar]\n"
                       "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n");
    n = procfs_list_pids(root, pids, 8);
    CHECK(n == 2 && pids[0] == 7 && pids[1] == 12, "pids: numeric entries only, ascending");
    n = procfs_list_tasks(root, 7, tids, 8);
    CHECK(n == 2 && tids[0] == 7 && tids[1] == 8, "tasks of pid 7");
    CHECK(procfs_read_stat(root, 7, &st) == 0 && st.ticks == 60 && st.processor == 1,
          "stat of pid 7 from the fixture");
    CHECK(procfs_read_task_stat(root, 7, 8, &st) == 0 && st.ticks == 30 && st.processor == 0,
          "stat of thread 8");
    CHECK(procfs_read_stat(root, 99, &st) == -ENOENT, "a missing pid is -ENOENT");
    n = procfs_read_maps(root, 7, regs, 8, &dropped);
    CHECK(n == 6 && dropped == 0, "maps: 6 regions");
    CHECK(n == 6 && regs[1].start == 0x7f0000000000ULL && regs[1].end == 0x7f0003000000ULL &&
              regs[1].readable && regs[1].writable && !regs[1].shared && !regs[1].special,
          "maps: anonymous rw region");
    CHECK(n == 6 && !regs[2].readable, "maps: guard page is not readable");
    CHECK(n == 6 && regs[3].shared, "maps: shared memfd mapping");
    CHECK(n == 6 && regs[4].special && regs[5].special, "maps: [vvar] and [vsyscall] are special");
    n = procfs_read_maps(root, 7, regs, 2, &dropped);
    CHECK(n == 2 && dropped == 4, "maps: bounded, the rest counted as dropped");
    {
        uint64_t ms = 0;
        CHECK(procfs_uptime_ms(root, &ms) == 0 && ms == 1234560, "uptime in ms");
    }
}

static void test_lists(void)
{
    static const struct {
        const char *s;
        int ret;
        unsigned count; /* bits set */
    } cases[] = {
        {"0-3\n", 0, 4},     {"0,2,4-5", 0, 4}, {"1", 0, 1},        {"", 0, 0},
        {"3-1", -EINVAL, 0}, {"a", -EINVAL, 0}, {"1-", -EINVAL, 0}, {"0-2000", 0, 128},
    };
    uint64_t map[2];

    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int r = procfs_parse_list(cases[i].s, map, 128);
        unsigned c = (unsigned)(__builtin_popcountll(map[0]) + __builtin_popcountll(map[1]));
        CHECK(r == cases[i].ret && (r < 0 || c == cases[i].count), "list '%.*s': %d, %u ids",
              (int)strcspn(cases[i].s, "\n"), cases[i].s, cases[i].ret, cases[i].count);
    }
    {
        unsigned nodes = 0, cpus = 0;
        CHECK(procfs_node_count(root, &nodes) == 0 && nodes == 1, "no node directory: one node");
        put("sys/devices/system/node/online", "0-1\n");
        put("sys/devices/system/cpu/online", "0-3\n");
        CHECK(procfs_node_count(root, &nodes) == 0 && nodes == 2, "two nodes online");
        CHECK(procfs_cpu_count(root, &cpus) == 0 && cpus == 4, "four CPUs online");
    }
}

static void test_port(void)
{
    char path[600], want[600];

    CHECK(port_find(root, PORT_NAME, path, sizeof(path)) == -ENOENT, "no port: -ENOENT");
    put("sys/class/virtio-ports/vport0p1/name", "org.qemu.guest_agent.0\n");
    put("sys/class/virtio-ports/vport1p2/name", "org.vnuma.agent.0\n");
    snprintf(want, sizeof(want), "%s/dev/vport1p2", root);
    CHECK(port_find(root, PORT_NAME, path, sizeof(path)) == 0 && strcmp(path, want) == 0,
          "port found by scanning /sys/class/virtio-ports/*/name");
    put("dev/virtio-ports/org.vnuma.agent.0", "");
    snprintf(want, sizeof(want), "%s/dev/virtio-ports/org.vnuma.agent.0", root);
    CHECK(port_find(root, PORT_NAME, path, sizeof(path)) == 0 && strcmp(path, want) == 0,
          "the udev link wins when it exists");
}

int main(void)
{
    int r;

    if (!fixture_root_make("procfs")) {
        printf("cannot create a temporary directory\n");
        return 77;
    }
    test_stat();
    test_fixture_proc();
    test_lists();
    test_port();
    r = tap_done();
    fixture_root_remove();
    return r;
}
