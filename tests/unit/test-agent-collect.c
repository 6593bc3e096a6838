/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Unit tests of one collection (agent/collect.c) on a fixture /proc tree with
 * fake memory operations, and of the agent's protocol side (agent/serve.c)
 * through proto/'s own decoder: hello, get-hints, errors.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent-fixture.h"
#include "collect.h"
#include "proto.h"
#include "scan-fixture.h"
#include "serve.h"
#include "tap.h"

static void put_stat(int pid, int tid, const char *comm, unsigned long flags, unsigned long ticks,
                     unsigned long rss, int cpu)
{
    char path[128], buf[512];

    snprintf(buf, sizeof(buf),
             "%d (%s) R 1 %d %d 0 -1 %lu 100 0 0 0 %lu 0 0 0 20 0 1 0 77 1000000 %lu "
             "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 %d 0 0 0 0 0\n",
             tid, comm, pid, pid, flags, ticks, rss, cpu);
    if (tid == pid) {
        snprintf(path, sizeof(path), "proc/%d/stat", pid);
        put(path, buf);
    }
    snprintf(path, sizeof(path), "proc/%d/task/%d/stat", pid, tid);
    put(path, buf);
}

/* fake memory: every page of pid 100 on node 1 at guest-physical 128 MiB + offset, of
 * pid 200 on node 0 at 0 + offset; none idle */
static int node_of(pid_t pid)
{
    return pid == 100 ? 1 : 0;
}

static uint64_t pagemap_entry(pid_t pid, uint64_t vaddr)
{
    uint64_t base = pid == 100 ? (128ULL << 20) / 4096 : 16;

    return (1ULL << 63) | (1ULL << 55) | (base + (vaddr - 0x10000000) / 4096);
}

static void fixture(unsigned long t100, unsigned long t200)
{
    put_stat(100, 100, "memtouch", 0, t100, 4096, 1);
    put_stat(100, 101, "memtouch", 0, t100, 4096, 1);
    put_stat(200, 200, "idle", 0, t200, 100, 0);
    put_stat(2, 2, "kthreadd", 0x00208040, 5000, 0, 0);
    put("proc/100/maps", "10000000-11000000 rw-p 00000000 00:00 0 \n");
    put("proc/200/maps", "10000000-10100000 rw-p 00000000 00:00 0 \n");
    put("proc/2/maps", "");
    put("proc/uptime", "10.00 5.00\n");
}

static collector coll;
static ag_hints hints;

static void test_collect(void)
{
    collect_cfg cfg = {.interval_ms = 1000, .max_processes = 2, .scan_budget_mib = 64};

    put("sys/devices/system/node/online", "0-1\n");
    put("sys/devices/system/cpu/online", "0-1\n");
    fixture(1000, 10);
    CHECK(collector_init(&coll, root, &fake_scan_ops, SCAN_HEAT_SOFTDIRTY) == 0 &&
              coll.nr_nodes == 2 && coll.nr_cpus == 2,
          "collector: 2 nodes, 2 CPUs from the fixture");
    CHECK(collector_run(&coll, &cfg, 1000, &hints) == 0 && hints.seq == 1 &&
              hints.uptime_ms == 10000,
          "first collection: seq 1, uptime 10 s");
    CHECK(hints.nr_procs == 2 && hints.procs[0].pid == 100,
          "first collection (no deltas yet): kernel threads left out, largest RSS first");
    fixture(1100, 200); /* pid 200 ran more in this window */
    CHECK(collector_run(&coll, &cfg, 2000, &hints) == 0 && hints.seq == 2 && hints.nr_procs == 2 &&
              hints.procs[0].pid == 200 && hints.procs[1].pid == 100,
          "second collection: top N by runtime delta (200: 190 ticks, 100: 100)");
    CHECK(hints.procs[1].nr_vcpus == 1 && hints.procs[1].vcpus[0] == 1,
          "vCPUs: the processor of the threads that ran");
    CHECK(hints.procs[1].node_pages[1] == 4096 && hints.procs[1].node_pages[0] == 0,
          "memtouch: 16 MiB resident, all on node 1");
    CHECK(hints.procs[1].nr_ranges >= 1 && hints.procs[1].ranges[0].gpa >= (128ULL << 20) &&
              hints.procs[1].ranges[0].gpa + hints.procs[1].ranges[0].length <= (144ULL << 20),
          "memtouch: its ranges lie in guest-physical [128, 144) MiB");
    CHECK(hints.procs[1].ranges[0].heat == 1000,
          "soft-dirty after a clear: every sampled page written, heat 1000");
    cfg.max_processes = 1;
    fixture(1100, 200); /* nobody ran */
    CHECK(collector_run(&coll, &cfg, 3000, &hints) == 0 && hints.nr_procs == 1 &&
              hints.procs[0].nr_vcpus == 0,
          "max_processes 1 is followed; no thread ran: no vCPUs");
}

/* pid 300: 64 MiB at guest-physical 256 MiB; every page written since it began (soft-dirty),
 * and after a clear only its first 8 MiB (its hot set) */
static uint64_t pagemap_hotcold(pid_t pid, uint64_t vaddr)
{
    uint64_t off = vaddr - 0x20000000, dirty = !fake_scan.clears || off < (8ULL << 20);

    (void)pid;
    return (1ULL << 63) | (dirty << 55) | ((256ULL << 20) / 4096 + off / 4096);
}

static void fixture_hotcold(unsigned long ticks)
{
    put_stat(300, 300, "memtouch", 0, ticks, 16384, 0);
    put("proc/300/maps", "20000000-24000000 rw-p 00000000 00:00 0 \n");
    put("proc/uptime", "20.00 5.00\n");
}

/* Whether proc 300's ranges of the hint set tell its hot 8 MiB from the cold 56. */
static bool tells_hot_from_cold(const ag_hints *h)
{
    bool hot = false, cold = true;

    for (unsigned p = 0; p < h->nr_procs; p++)
        for (unsigned i = 0; h->procs[p].pid == 300 && i < h->procs[p].nr_ranges; i++) {
            const scan_range *g = &h->procs[p].ranges[i];
            if (g->gpa == (256ULL << 20) && g->length == (8ULL << 20) && g->heat == 1000)
                hot = true;
            if (g->gpa + g->length > (264ULL << 20) && g->heat > 0)
                cold = false;
        }
    return hot && cold;
}

/* The first hint set of a session tells hot from cold: a prime, then the collection. The
 * budget (16 MiB) covers a quarter of the process: the collection after the prime must walk
 * the prime's windows again. */
static void test_prime(void)
{
    collect_cfg cfg = {.interval_ms = 1000, .max_processes = 1, .scan_budget_mib = 16};
    static collector c;
    int r;

    fake_scan.pagemap = pagemap_hotcold;
    put_stat(100, 100, "memtouch", 0, 0, 1, 1);
    put_stat(200, 200, "idle", 0, 0, 1, 0);

    /* as before: the first collection of a session reports at once */
    fake_scan.clears = 0;
    fixture_hotcold(100);
    CHECK(collector_init(&c, root, &fake_scan_ops, SCAN_HEAT_SOFTDIRTY) == 0, "a new collector");
    r = collector_run(&c, &cfg, 1000, &hints);
    CHECK(r == 0 && hints.nr_procs == 1 && !tells_hot_from_cold(&hints),
          "without a prime the first hint set cannot tell hot from cold (%u ranges)",
          hints.nr_procs ? hints.procs[0].nr_ranges : 0);
    collector_free(&c);

    /* primed: the first hint set reported, a window later, does */
    fake_scan.clears = 0;
    fixture_hotcold(100);
    CHECK(collector_init(&c, root, &fake_scan_ops, SCAN_HEAT_SOFTDIRTY) == 0, "a new collector");
    r = collector_prime(&c, &cfg, 1000);
    CHECK(r == 0 && fake_scan.clears == 1, "prime: a collection that cleared the soft-dirty bits");
    fixture_hotcold(200); /* it ran for the window since */
    r = collector_run(&c, &cfg, 2000, &hints);
    CHECK(r == 0 && hints.nr_procs == 1 && hints.procs[0].pid == 300 && tells_hot_from_cold(&hints),
          "primed: the first hint set tells hot from cold: [256, 264) MiB at heat 1000, nothing of "
          "the 56 cold MiB hot (%u ranges)",
          hints.nr_procs ? hints.procs[0].nr_ranges : 0);
    collector_free(&c);
    fake_scan.pagemap = pagemap_entry;
}

static const ag_hints *served;
static int fake_hints(void *userdata, const collect_cfg *cfg, const ag_hints **ret)
{
    collect_cfg *seen = userdata;
    *seen = *cfg;
    *ret = served;
    return 0;
}

static void test_serve(void)
{
    static serve s;
    collect_cfg seen = {0};
    proto_reply rep;
    proto_expect ex = {.msg = PROTO_MSG_HELLO, .id = 1, .version = 0};
    char *line = NULL, err[256];
    size_t len = 0;

    served = &hints;
    serve_init(&s, 2, 2, "soft-dirty", true, fake_hints, &seen);
    /* get-hints before a hello is refused with an error reply naming the id */
    {
        proto_get_hints g = {.interval_ms = 500, .max_processes = 4, .scan_budget_mib = 32};
        char *req = NULL;
        size_t rl = 0;
        CHECK(proto_encode_get_hints(7, &g, &req, &rl) == 0 &&
                  serve_line(&s, req, rl - 1, &line, &len) == 0,
              "get-hints before hello: answered");
        CHECK(strstr(line, "\"error\"") && strstr(line, "\"id\":7"),
              "get-hints before hello: an error reply with its id: %.*s", (int)len - 1, line);
        free(line);
        free(req);
    }
    {
        proto_hello h = {.versions = PROTO_CAP_BIT(1), .caps = 0};
        char *req = NULL;
        size_t rl = 0;
        CHECK(proto_encode_hello(1, &h, &req, &rl) == 0 &&
                  serve_line(&s, req, rl - 1, &line, &len) == 0,
              "hello answered");
        ex = (proto_expect){.msg = PROTO_MSG_HELLO, .id = 1, .version = 0};
        memset(&rep, 0, sizeof(rep));
        CHECK(proto_decode_reply(line, len - 1, &ex, &rep, err, sizeof(err)) == 0 &&
                  rep.kind == PROTO_REPLY_HELLO && rep.hello.version == 1 && rep.hello.nodes == 2 &&
                  rep.hello.vcpus == 2 && (rep.hello.caps & PROTO_CAP_BIT(PROTO_CAP_HOT_RANGES)) &&
                  strstr(rep.hello.agent, "heat=soft-dirty"),
              "hello reply: version 1, 2 nodes, 2 vCPUs, hot-ranges, heat method named (%s)", err);
        proto_reply_clear(&rep);
        free(line);
        free(req);
    }
    {
        proto_get_hints g = {.interval_ms = 500, .max_processes = 4, .scan_budget_mib = 32};
        char *req = NULL;
        size_t rl = 0;
        CHECK(proto_encode_get_hints(2, &g, &req, &rl) == 0 &&
                  serve_line(&s, req, rl - 1, &line, &len) == 0,
              "get-hints answered");
        CHECK(seen.interval_ms == 500 && seen.max_processes == 4 && seen.scan_budget_mib == 32,
              "the host's interval, process count and budget reach the collector");
        ex = (proto_expect){.msg = PROTO_MSG_GET_HINTS, .id = 2, .version = 1};
        memset(&rep, 0, sizeof(rep));
        CHECK(proto_decode_reply(line, len - 1, &ex, &rep, err, sizeof(err)) == 0 &&
                  rep.kind == PROTO_REPLY_HINTS && rep.hints.nr_processes == hints.nr_procs &&
                  rep.hints.seq == hints.seq,
              "hint set decodes with the host's decoder (%s), %zu bytes", err, len);
        CHECK(rep.kind == PROTO_REPLY_HINTS && rep.hints.nr_processes == 1 &&
                  rep.hints.processes[0].pid == hints.procs[0].pid &&
                  rep.hints.processes[0].nr_node_pages == 2 &&
                  rep.hints.processes[0].nr_ranges == hints.procs[0].nr_ranges,
              "hint set fields survive the round trip");
        proto_reply_clear(&rep);
        free(line);
        free(req);
    }
    line = NULL;
    CHECK(serve_line(&s, "{\"execute\":\"nope\",\"id\":3}", 25, &line, &len) == 0 && line &&
              strstr(line, "\"error\"") && strstr(line, "\"id\":3"),
          "unknown command: error reply with its id: %.*s", line ? (int)len - 1 : 0,
          line ? line : "");
    free(line);
    CHECK(serve_line(&s, "{\"execute\":", 12, &line, &len) == 0 && strstr(line, "\"error\""),
          "garbage: an error reply, the agent goes on");
    free(line);
    serve_reset(&s);
    CHECK(s.version == 0, "a new host session starts without a version");
}

int main(void)
{
    fake_scan.node = node_of;
    fake_scan.pagemap = pagemap_entry;
    int r;

    if (!fixture_root_make("collect")) {
        printf("cannot create a temporary directory\n");
        return 77;
    }
    test_collect();
    test_serve();
    test_prime();
    collector_free(&coll);
    r = tap_done();
    fixture_root_remove();
    return r;
}
