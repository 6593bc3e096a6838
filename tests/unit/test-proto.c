/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of proto/: the message table, round trips of every message, framing,
 * hostile input (each case must give its error kind and leave the output
 * untouched), the rate limiter, the domain bounds check, and that
 * docs/PROTOCOL.md is what the table generates (VN_TEST_REGENERATE_OUTPUT=1
 * rewrites it).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "schema.h"
#include "tap.h"

#define SENTINEL 0xa5

/* A HINTS reply line with `body` as the hint set, id 2. */
#define HINTS(body)       "{\"return\":" body ",\"id\":2}"
#define PROC(x)           "{\"seq\":1,\"uptime_ms\":2,\"processes\":[" x "]}"
#define RANGE1(r)         PROC("{\"pid\":5,\"comm\":\"x\",\"vcpus\":[0],\"ranges\":[" r "]}")
#define HELLO_REPLY(body) "{\"return\":" body ",\"id\":1}"

static const proto_expect expect_hello = {.msg = PROTO_MSG_HELLO, .id = 1, .version = 0};
static const proto_expect expect_hints = {.msg = PROTO_MSG_GET_HINTS, .id = 2, .version = 1};

static bool all_sentinel(const void *p, size_t len)
{
    const unsigned char *u = p;
    for (size_t i = 0; i < len; i++)
        if (u[i] != SENTINEL)
            return false;
    return true;
}

/* ---- the table ---- */

static void test_schema(void)
{
    char err[256] = "";

    CHECK(proto_schema_check(err, sizeof(err)) == 0, "the message table is consistent %s", err);
    for (unsigned e = 0; e < PROTO_ERR_MAX; e++)
        CHECK(strcmp(proto_error_name((proto_error)e), "invalid") != 0,
              "error kind %u has a name (%s)", e, proto_error_name((proto_error)e));
    CHECK(strcmp(proto_error_name(PROTO_ERR_MAX), "invalid") == 0, "out of range: invalid");
    CHECK(strcmp(proto_error_class(PROTO_ERR_COMMAND), "CommandNotFound") == 0 &&
              strcmp(proto_error_class(PROTO_ERR_RANGE), "GenericError") == 0,
          "error classes");
    CHECK(proto_choose_version(UINT64_C(1) << 1 | UINT64_C(1) << 7) == 1,
          "choose_version: the highest common version");
    CHECK(proto_choose_version(UINT64_C(1) << 7) == 0, "choose_version: none in common");
}

/* ---- round trips ---- */

static void test_roundtrip_requests(void)
{
    static const proto_hello hellos[] = {
        {.versions = UINT64_C(1) << 1, .caps = 0},
        {.versions = UINT64_C(1) << 1, .caps = PROTO_CAP_BIT(PROTO_CAP_FLUSH)},
    };
    static const proto_get_hints gets[] = {
        {.interval_ms = PROTO_MIN_INTERVAL_MS, .max_processes = 1, .scan_budget_mib = 0},
        {.interval_ms = PROTO_MAX_INTERVAL_MS,
         .max_processes = PROTO_MAX_PROCESSES,
         .scan_budget_mib = PROTO_MAX_SCAN_MIB},
    };

    for (size_t i = 0; i < sizeof(hellos) / sizeof(hellos[0]); i++) {
        proto_request req;
        char *line = NULL, err[256] = "";
        size_t len = 0;
        uint32_t id = 0;
        int r = proto_encode_hello(7 + (uint32_t)i, &hellos[i], &line, &len);

        CHECK(r == 0 && len > 0 && line[len - 1] == '\n' && strlen(line) == len,
              "hello %zu encodes to one line", i);
        r = r == 0 ? proto_decode_request(line, len - 1, 0, &req, &id, err, sizeof(err)) : r;
        CHECK(r == 0 && req.msg == PROTO_MSG_HELLO && req.id == 7 + i && id == req.id &&
                  req.hello.versions == hellos[i].versions && req.hello.caps == hellos[i].caps,
              "hello %zu round-trips %s", i, err);
        free(line);
    }
    for (size_t i = 0; i < sizeof(gets) / sizeof(gets[0]); i++) {
        proto_request req;
        char *line = NULL, err[256] = "";
        size_t len = 0;
        uint32_t id = 0;
        int r = proto_encode_get_hints(UINT32_MAX - (uint32_t)i, &gets[i], &line, &len);

        r = r == 0 ? proto_decode_request(line, len - 1, 1, &req, &id, err, sizeof(err)) : r;
        CHECK(r == 0 && req.msg == PROTO_MSG_GET_HINTS && req.id == UINT32_MAX - i &&
                  memcmp(&req.get_hints, &gets[i], sizeof(gets[i])) == 0,
              "get-hints %zu round-trips %s", i, err);
        free(line);
    }
}

static void test_roundtrip_replies(void)
{
    uint32_t vcpus[PROTO_MAX_PROC_VCPUS];
    uint64_t pages[PROTO_MAX_NODES];
    proto_range ranges[PROTO_MAX_PROC_RANGES];
    proto_process procs[8];
    proto_hello_reply hr = {.version = 1,
                            .caps = PROTO_CAP_BIT(PROTO_CAP_HOT_RANGES),
                            .nodes = PROTO_MAX_NODES,
                            .vcpus = PROTO_MAX_VCPUS};
    proto_hints sets[3];
    char *line = NULL, err[256] = "";
    proto_reply rep;
    size_t len = 0;
    int r;

    for (unsigned i = 0; i < PROTO_MAX_PROC_VCPUS; i++)
        vcpus[i] = PROTO_MAX_VCPUS - 1 - i;
    for (unsigned i = 0; i < PROTO_MAX_NODES; i++)
        pages[i] = i == 0 ? PROTO_MAX_NODE_PAGES : i * 1000;
    for (unsigned i = 0; i < PROTO_MAX_PROC_RANGES; i++)
        ranges[i] = (proto_range){
            .gpa = (uint64_t)i << 30, .length = PROTO_PAGE_SIZE * (i + 1), .heat = i * 15};
    ranges[0] = (proto_range){
        .gpa = PROTO_GPA_LIMIT - PROTO_PAGE_SIZE, .length = PROTO_PAGE_SIZE, .heat = 1000};
    memset(procs, 0, sizeof(procs));
    for (unsigned i = 0; i < 8; i++) {
        procs[i].pid = i == 0 ? INT32_MAX : (int32_t)(100 + i);
        (void)snprintf(procs[i].comm, sizeof(procs[i].comm), i == 1 ? "\xc3\xa9t\xc3\xa9" : "p%u",
                       i);
        procs[i].vcpus = vcpus;
        procs[i].nr_vcpus = i == 0 ? PROTO_MAX_PROC_VCPUS : i;
        procs[i].node_pages = pages;
        procs[i].nr_node_pages = i == 0 ? PROTO_MAX_NODES : 2;
        procs[i].ranges = ranges;
        procs[i].nr_ranges = i == 0 ? 16 : i;
    }
    (void)snprintf(procs[2].comm, sizeof(procs[2].comm), "0123456789abcdef"); /* 16 bytes */
    sets[0] = (proto_hints){.seq = 0, .uptime_ms = 0};
    sets[1] = (proto_hints){
        .seq = UINT64_MAX - 1, .uptime_ms = 99, .processes = procs, .nr_processes = 1};
    sets[2] =
        (proto_hints){.seq = 5, .uptime_ms = 1ull << 40, .processes = procs, .nr_processes = 8};

    (void)snprintf(hr.agent, sizeof(hr.agent), "vnuma-agent 0.2.0 \xe2\x9c\x93");
    r = proto_encode_hello_reply(1, &hr, &line, &len);
    r = r == 0 ? proto_decode_reply(line, len - 1, &expect_hello, &rep, err, sizeof(err)) : r;
    CHECK(r == 0 && rep.kind == PROTO_REPLY_HELLO && rep.id == 1 &&
              memcmp(&rep.hello, &hr, sizeof(hr)) == 0,
          "hello reply round-trips %s", err);
    free(line);

    for (unsigned s = 0; s < 3; s++) {
        r = proto_encode_hints_reply(2, &sets[s], &line, &len);
        CHECK(r == 0 && len <= PROTO_MAX_LINE, "hint set %u encodes (%zu bytes) %s", s, len,
              r ? proto_error_name((proto_error)-r) : "");
        if (r)
            continue;
        r = proto_decode_reply(line, len - 1, &expect_hints, &rep, err, sizeof(err));
        CHECK(r == 0 && rep.kind == PROTO_REPLY_HINTS && rep.id == 2 &&
                  proto_hints_equal(&rep.hints, &sets[s]),
              "hint set %u round-trips %s", s, err);
        proto_reply_clear(&rep);
        free(line);
    }

    r = proto_encode_error(2, "CommandNotFound", "no such\tcommand \xc3\xa9", &line, &len);
    r = r == 0 ? proto_decode_reply(line, len - 1, &expect_hints, &rep, err, sizeof(err)) : r;
    CHECK(r == 0 && rep.kind == PROTO_REPLY_ERROR && rep.id == 2 &&
              strcmp(rep.error.class, "CommandNotFound") == 0 &&
              strcmp(rep.error.desc, "no such?command ??") == 0,
          "error reply round-trips, its text made printable ASCII (%s) %s",
          r == 0 ? rep.error.desc : "", err);
    free(line);
}

static void test_encoders_refuse(void)
{
    proto_range bad_range = {.gpa = 4097, .length = 4096, .heat = 1};
    proto_range wrap = {.gpa = PROTO_GPA_LIMIT - PROTO_PAGE_SIZE, .length = 2 * PROTO_PAGE_SIZE};
    uint32_t dup[] = {1, 1};
    proto_process p = {.pid = 1, .ranges = &bad_range, .nr_ranges = 1};
    proto_hints h = {.processes = &p, .nr_processes = 1};
    proto_hello_reply hr = {.version = 2, .nodes = 1, .vcpus = 1};
    proto_get_hints g = {.interval_ms = 1, .max_processes = 1};
    char *line = NULL;
    size_t len = 0;

    CHECK(proto_encode_hints_reply(2, &h, &line, &len) == -PROTO_ERR_RANGE && !line,
          "encoding an unaligned gpa is refused (range)");
    p.ranges = &wrap;
    CHECK(proto_encode_hints_reply(2, &h, &line, &len) == -PROTO_ERR_RANGE && !line,
          "encoding a range past 2^52 is refused (range)");
    p.nr_ranges = 0;
    p.vcpus = dup;
    p.nr_vcpus = 2;
    CHECK(proto_encode_hints_reply(2, &h, &line, &len) == -PROTO_ERR_DUPLICATE && !line,
          "encoding a vCPU twice is refused (duplicate)");
    (void)snprintf(hr.agent, sizeof(hr.agent), "a");
    CHECK(proto_encode_hello_reply(1, &hr, &line, &len) == -PROTO_ERR_RANGE && !line,
          "encoding a version this build does not speak is refused (range)");
    CHECK(proto_encode_get_hints(1, &g, &line, &len) == -PROTO_ERR_RANGE && !line,
          "encoding an interval below the minimum is refused (range)");
}

/* The biggest hint set the limits allow does not fit a line: the encoder says so. */
static void test_encode_oversize(void)
{
    static uint32_t vcpus[PROTO_MAX_PROC_VCPUS];
    static proto_process procs[PROTO_MAX_PROCESSES];
    proto_hints h = {.processes = procs, .nr_processes = PROTO_MAX_PROCESSES};
    char *line = NULL;
    size_t len = 0;

    for (unsigned i = 0; i < PROTO_MAX_PROC_VCPUS; i++)
        vcpus[i] = 1000 - i;
    for (unsigned i = 0; i < PROTO_MAX_PROCESSES; i++) {
        procs[i] = (proto_process){
            .pid = (int32_t)i + 1, .vcpus = vcpus, .nr_vcpus = PROTO_MAX_PROC_VCPUS};
        memcpy(procs[i].comm, "abcdefghijklmnop", 16);
    }
    CHECK(proto_encode_hints_reply(2, &h, &line, &len) == -PROTO_ERR_OVERSIZE && !line,
          "a hint set longer than PROTO_MAX_LINE is refused by the encoder (oversize)");
}

/* ---- framing ---- */

typedef struct feed_result {
    unsigned lines;
    char got[4][128];
    unsigned oversize_events;
} feed_result;

static void feed_all(proto_reader *r, const char *data, size_t len, size_t chunk, feed_result *out)
{
    size_t off = 0;

    while (off < len) {
        size_t n = len - off < chunk ? len - off : chunk, pos = 0;

        while (pos < n) {
            const char *line = NULL;
            size_t used = 0, ll = 0;
            int rc = proto_reader_feed(r, data + off + pos, n - pos, &used, &line, &ll);

            pos += used;
            if (rc == 1 && out->lines < 4)
                (void)snprintf(out->got[out->lines], sizeof(out->got[0]), "%.*s", (int)ll, line);
            if (rc == 1)
                out->lines++;
            if (rc == -PROTO_ERR_OVERSIZE)
                out->oversize_events++;
        }
        off += n;
    }
}

static void test_framing(void)
{
    static proto_reader r;
    static const char two[] = "{\"a\":1}\n{\"b\":2}\r\n\n\r\n";
    static const size_t chunks[] = {1, 2, 3, 7, 1000};
    static char big[PROTO_MAX_LINE + 100];
    feed_result res;

    for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
        proto_reader_init(&r);
        memset(&res, 0, sizeof(res));
        feed_all(&r, two, strlen(two), chunks[c], &res);
        CHECK(res.lines == 2 && strcmp(res.got[0], "{\"a\":1}") == 0 &&
                  strcmp(res.got[1], "{\"b\":2}") == 0 && proto_reader_pending(&r) == 0,
              "two lines (LF, CRLF, empty lines skipped) fed %zu byte(s) at a time", chunks[c]);
    }

    proto_reader_init(&r);
    memset(&res, 0, sizeof(res));
    feed_all(&r, "{\"half\":\xff{\"c\":3}\n\xff\xff", 20, 100, &res);
    CHECK(res.lines == 1 && strcmp(res.got[0], "{\"c\":3}") == 0 && r.resyncs == 1,
          "0xFF in the middle drops the partial line (resyncs %llu)",
          (unsigned long long)r.resyncs);

    proto_reader_init(&r);
    memset(&res, 0, sizeof(res));
    feed_all(&r, "{\"partial", 9, 100, &res);
    CHECK(res.lines == 0 && proto_reader_pending(&r) == 9, "an unfinished line is pending (9)");

    /* Exactly PROTO_MAX_LINE bytes with the newline: accepted. One more: dropped. */
    for (int extra = 0; extra <= 1; extra++) {
        size_t content = PROTO_MAX_LINE - 1 + (size_t)extra;

        memset(big, 'x', content);
        big[content] = '\n';
        memcpy(big + content + 1, "{\"next\":1}\n", 11);
        proto_reader_init(&r);
        memset(&res, 0, sizeof(res));
        feed_all(&r, big, content + 12, extra ? 4096 : 65536, &res);
        if (!extra)
            CHECK(res.lines == 2 && r.oversize == 0,
                  "a line of PROTO_MAX_LINE bytes with its newline is accepted");
        else
            CHECK(res.lines == 1 && strcmp(res.got[0], "{\"next\":1}") == 0 && r.oversize == 1 &&
                      res.oversize_events == 1,
                  "a line over PROTO_MAX_LINE is dropped, counted once, and the next line read");
    }

    /* A never-ending line: memory stays bounded, one event, 0xFF recovers. */
    proto_reader_init(&r);
    memset(&res, 0, sizeof(res));
    memset(big, 'y', sizeof(big));
    for (int i = 0; i < 5; i++)
        feed_all(&r, big, sizeof(big), 8192, &res);
    CHECK(res.oversize_events == 1 && proto_reader_pending(&r) == 0,
          "slowloris: 5 x 64 KiB without a newline is one oversize event, nothing held");
    feed_all(&r, "\xff{\"ok\":1}\n", 11, 100, &res);
    CHECK(res.lines == 1 && strcmp(res.got[0], "{\"ok\":1}") == 0,
          "0xFF ends the dropping of an overlong line");
}

/* ---- hostile replies ---- */

typedef struct bad_case {
    const char *name;
    const char *line; /* NULL: built by the test */
    size_t len;       /* 0: strlen */
    const proto_expect *expect;
    proto_error want;
} bad_case;

static const bad_case bad_replies[] = {
    {"not JSON", "{\"return\":", 0, &expect_hints, PROTO_ERR_SYNTAX},
    {"trailing data", HINTS(PROC("")) " x", 0, &expect_hints, PROTO_ERR_SYNTAX},
    {"two objects", HINTS(PROC("")) HINTS(PROC("")), 0, &expect_hints, PROTO_ERR_SYNTAX},
    {"single-quoted key", "{'return':" PROC("") ",\"id\":2}", 0, &expect_hints, PROTO_ERR_SYNTAX},
    {"single-quoted value", HINTS(PROC("{\"pid\":5,\"comm\":'x',\"vcpus\":[]}")), 0, &expect_hints,
     PROTO_ERR_SYNTAX},
    {"raw tab in a string", HINTS(PROC("{\"pid\":5,\"comm\":\"a\tb\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_SYNTAX},
    {"raw NUL byte", "{\"return\":{}\0,\"id\":2}", 20, &expect_hints, PROTO_ERR_SYNTAX},
    {"NaN", HINTS("{\"seq\":NaN,\"uptime_ms\":2,\"processes\":[]}"), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"array at the top", "[1,2]", 0, &expect_hints, PROTO_ERR_TYPE},
    {"deep nesting", "{\"return\":{\"a\":[[[[[[[[[[1]]]]]]]]]]},\"id\":2}", 0, &expect_hello,
     PROTO_ERR_DEPTH},
    {"overlong UTF-8", HINTS(PROC("{\"pid\":5,\"comm\":\"\xc0\xaf\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_UTF8},
    {"UTF-8 surrogate", HINTS(PROC("{\"pid\":5,\"comm\":\"\xed\xa0\x80\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_UTF8},
    {"UTF-8 above U+10FFFF", HINTS(PROC("{\"pid\":5,\"comm\":\"\xf4\x90\x80\x80\",\"vcpus\":[]}")),
     0, &expect_hints, PROTO_ERR_UTF8},
    {"truncated UTF-8", HINTS(PROC("{\"pid\":5,\"comm\":\"\xe2\x9c\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_UTF8},
    {"invalid UTF-8 in a key", "{\"return\":{},\"\xff\xfe\":1,\"id\":1}", 0, &expect_hello,
     PROTO_ERR_UTF8},
    {"NUL in a string", HINTS(PROC("{\"pid\":5,\"comm\":\"a\\u0000b\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_UTF8},
    {"NUL in a key", "{\"return\":" PROC("") ",\"id\\u0000x\":3,\"id\":2}", 0, &expect_hints,
     PROTO_ERR_UTF8},
    {"duplicate key (id)", "{\"return\":" PROC("") ",\"id\":2,\"id\":2}", 0, &expect_hints,
     PROTO_ERR_DUPLICATE},
    {"duplicate key (nested)", HINTS("{\"seq\":1,\"seq\":1,\"uptime_ms\":2,\"processes\":[]}"), 0,
     &expect_hints, PROTO_ERR_DUPLICATE},
    {"duplicate pid",
     HINTS(PROC("{\"pid\":5,\"comm\":\"\",\"vcpus\":[]},"
                "{\"pid\":5,\"comm\":\"\",\"vcpus\":[]}")),
     0, &expect_hints, PROTO_ERR_DUPLICATE},
    {"duplicate vCPU", HINTS(PROC("{\"pid\":5,\"comm\":\"\",\"vcpus\":[3,1,3]}")), 0, &expect_hints,
     PROTO_ERR_DUPLICATE},
    {"wrong id", "{\"return\":" PROC("") ",\"id\":3}", 0, &expect_hints, PROTO_ERR_ID},
    {"unsolicited reply", HINTS(PROC("")), 0, NULL, PROTO_ERR_ID},
    {"id missing", "{\"return\":" PROC("") "}", 0, &expect_hints, PROTO_ERR_MISSING},
    {"id negative", "{\"return\":" PROC("") ",\"id\":-2}", 0, &expect_hints, PROTO_ERR_RANGE},
    {"id above uint32", "{\"return\":" PROC("") ",\"id\":4294967298}", 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"id a string", "{\"return\":" PROC("") ",\"id\":\"2\"}", 0, &expect_hints, PROTO_ERR_TYPE},
    {"return and error",
     "{\"return\":" PROC("") ",\"error\":{\"class\":\"X\",\"desc\":\"\"},\"id\":2}", 0,
     &expect_hints, PROTO_ERR_TYPE},
    {"neither return nor error", "{\"id\":2}", 0, &expect_hints, PROTO_ERR_TYPE},
    {"return not an object", "{\"return\":[],\"id\":2}", 0, &expect_hints, PROTO_ERR_TYPE},
    {"seq a float", HINTS("{\"seq\":1.0,\"uptime_ms\":2,\"processes\":[]}"), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"seq exponent", HINTS("{\"seq\":1e3,\"uptime_ms\":2,\"processes\":[]}"), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"seq a string", HINTS("{\"seq\":\"1\",\"uptime_ms\":2,\"processes\":[]}"), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"seq negative", HINTS("{\"seq\":-1,\"uptime_ms\":2,\"processes\":[]}"), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"seq 2^64 - 1", HINTS("{\"seq\":18446744073709551615,\"uptime_ms\":2,\"processes\":[]}"), 0,
     &expect_hints, PROTO_ERR_RANGE},
    {"seq beyond 2^64", HINTS("{\"seq\":99999999999999999999999,\"uptime_ms\":2,\"processes\":[]}"),
     0, &expect_hints, PROTO_ERR_RANGE},
    {"processes missing", HINTS("{\"seq\":1,\"uptime_ms\":2}"), 0, &expect_hints,
     PROTO_ERR_MISSING},
    {"processes an object", HINTS("{\"seq\":1,\"uptime_ms\":2,\"processes\":{}}"), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"pid 0", HINTS(PROC("{\"pid\":0,\"comm\":\"\",\"vcpus\":[]}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"pid negative", HINTS(PROC("{\"pid\":-1,\"comm\":\"\",\"vcpus\":[]}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"pid above int32", HINTS(PROC("{\"pid\":2147483648,\"comm\":\"\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_RANGE},
    {"comm 17 bytes", HINTS(PROC("{\"pid\":5,\"comm\":\"0123456789abcdefg\",\"vcpus\":[]}")), 0,
     &expect_hints, PROTO_ERR_LIMIT},
    {"comm a number", HINTS(PROC("{\"pid\":5,\"comm\":5,\"vcpus\":[]}")), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"vCPU 1024", HINTS(PROC("{\"pid\":5,\"comm\":\"\",\"vcpus\":[1024]}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"vCPU null", HINTS(PROC("{\"pid\":5,\"comm\":\"\",\"vcpus\":[null]}")), 0, &expect_hints,
     PROTO_ERR_TYPE},
    {"node_pages too large",
     HINTS(PROC("{\"pid\":5,\"comm\":\"\",\"vcpus\":[],\"node_pages\":[1099511627777]}")), 0,
     &expect_hints, PROTO_ERR_RANGE},
    {"unaligned gpa", HINTS(RANGE1("{\"gpa\":4097,\"length\":4096,\"heat\":1}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"unaligned length", HINTS(RANGE1("{\"gpa\":4096,\"length\":4095,\"heat\":1}")), 0,
     &expect_hints, PROTO_ERR_RANGE},
    {"zero length", HINTS(RANGE1("{\"gpa\":4096,\"length\":0,\"heat\":1}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"gpa + length past 2^52",
     HINTS(RANGE1("{\"gpa\":4503599627366400,\"length\":8192,\"heat\":1}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"gpa + length wraps 2^64",
     HINTS(RANGE1("{\"gpa\":18446744073709547520,\"length\":8192,\"heat\":1}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"heat 1001", HINTS(RANGE1("{\"gpa\":4096,\"length\":4096,\"heat\":1001}")), 0, &expect_hints,
     PROTO_ERR_RANGE},
    {"range field missing", HINTS(RANGE1("{\"gpa\":4096,\"length\":4096}")), 0, &expect_hints,
     PROTO_ERR_MISSING},
    {"unknown field in a hint set (version 1 is closed)",
     HINTS("{\"seq\":1,\"uptime_ms\":2,\"processes\":[],\"x\":1}"), 0, &expect_hints,
     PROTO_ERR_UNKNOWN},
    {"unknown field in a range", HINTS(RANGE1("{\"gpa\":4096,\"length\":4096,\"heat\":1,\"x\":1}")),
     0, &expect_hints, PROTO_ERR_UNKNOWN},
    {"unknown envelope field", "{\"return\":" PROC("") ",\"id\":2,\"x\":1}", 0, &expect_hints,
     PROTO_ERR_UNKNOWN},
    {"hello reply: version 2 (not offered)",
     HELLO_REPLY("{\"version\":2,\"agent\":\"a\",\"nodes\":1,\"vcpus\":1}"), 0, &expect_hello,
     PROTO_ERR_RANGE},
    {"hello reply: agent empty",
     HELLO_REPLY("{\"version\":1,\"agent\":\"\",\"nodes\":1,\"vcpus\":1}"), 0, &expect_hello,
     PROTO_ERR_RANGE},
    {"hello reply: 0 nodes", HELLO_REPLY("{\"version\":1,\"agent\":\"a\",\"nodes\":0,\"vcpus\":1}"),
     0, &expect_hello, PROTO_ERR_RANGE},
    {"hello reply: 65 nodes",
     HELLO_REPLY("{\"version\":1,\"agent\":\"a\",\"nodes\":65,\"vcpus\":1}"), 0, &expect_hello,
     PROTO_ERR_RANGE},
    {"hello reply: capability a number",
     HELLO_REPLY("{\"version\":1,\"agent\":\"a\",\"nodes\":1,\"vcpus\":1,\"capabilities\":[1]}"), 0,
     &expect_hello, PROTO_ERR_TYPE},
    {"error: class too long",
     "{\"error\":{\"class\":\"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg\",\"desc\":\"\"},\"id\":2}", 0,
     &expect_hints, PROTO_ERR_LIMIT},
    {"error: desc missing", "{\"error\":{\"class\":\"GenericError\"},\"id\":2}", 0, &expect_hints,
     PROTO_ERR_MISSING},
};

static int decode_into_sentinel(const char *line, size_t len, const proto_expect *e,
                                proto_reply *rep, char *err, size_t errlen)
{
    memset(rep, SENTINEL, sizeof(*rep));
    return proto_decode_reply(line, len, e, rep, err, errlen);
}

static void test_bad_replies(void)
{
    for (size_t i = 0; i < sizeof(bad_replies) / sizeof(bad_replies[0]); i++) {
        const bad_case *b = &bad_replies[i];
        size_t len = b->len ? b->len : strlen(b->line);
        char err[256] = "";
        proto_reply rep;
        int r = decode_into_sentinel(b->line, len, b->expect, &rep, err, sizeof(err));

        CHECK(r == -(int)b->want && all_sentinel(&rep, sizeof(rep)) && err[0],
              "%s: %s (got %s: %s), output untouched", b->name, proto_error_name(b->want),
              r < 0 ? proto_error_name((proto_error)-r) : "success", err);
    }
}

/* Lines built from loops: counts over the limits. */
static char *build(const char *head, const char *item, unsigned n, const char *sep,
                   const char *tail)
{
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * (strlen(item) + 24 + strlen(sep)) + 1;
    char *s = malloc(cap), *p = s;

    p += sprintf(p, "%s", head);
    for (unsigned i = 0; i < n; i++) {
        p += sprintf(p, i ? sep : "", "");
        p += sprintf(p, item, i + 1);
    }
    (void)sprintf(p, "%s", tail);
    return s;
}

static void test_limits(void)
{
    struct {
        const char *name;
        char *line;
        proto_error want;
    } cases[] = {
        {"65 processes",
         build("{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[",
               "{\"pid\":%u,\"comm\":\"\",\"vcpus\":[]}", PROTO_MAX_PROCESSES + 1, ",",
               "]},\"id\":2}"),
         PROTO_ERR_LIMIT},
        {"64 processes",
         build("{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[",
               "{\"pid\":%u,\"comm\":\"\",\"vcpus\":[]}", PROTO_MAX_PROCESSES, ",", "]},\"id\":2}"),
         PROTO_OK},
        {"257 vCPUs of one process",
         build("{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[{\"pid\":1,\"comm\":\"\","
               "\"vcpus\":[",
               "%u", PROTO_MAX_PROC_VCPUS + 1, ",", "]}]},\"id\":2}"),
         PROTO_ERR_LIMIT},
        {"65 node_pages",
         build("{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[{\"pid\":1,"
               "\"comm\":\"\",\"vcpus\":[],\"node_pages\":[",
               "%u", PROTO_MAX_NODES + 1, ",", "]}]},\"id\":2}"),
         PROTO_ERR_LIMIT},
        /* gpa 1, 2, ...: unaligned, but the count is checked before any entry. */
        {"65 ranges of one process",
         build("{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[{\"pid\":1,\"comm\":\"\","
               "\"vcpus\":[],\"ranges\":[",
               "{\"gpa\":%u,\"length\":4096,\"heat\":1}", PROTO_MAX_PROC_RANGES + 1, ",",
               "]}]},\"id\":2}"),
         PROTO_ERR_LIMIT},
        {"17 capabilities",
         build("{\"return\":{\"version\":1,\"agent\":\"a\",\"nodes\":1,\"vcpus\":1,"
               "\"capabilities\":[",
               "\"c%u\"", PROTO_MAX_CAPS + 1, ",", "]},\"id\":1}"),
         PROTO_ERR_LIMIT},
    };
    char *many = NULL;
    size_t off = 0, cap = 64 * 1024;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        proto_reply rep;
        int r;

        r = decode_into_sentinel(cases[i].line, strlen(cases[i].line),
                                 strstr(cases[i].line, "\"version\"") ? &expect_hello
                                                                      : &expect_hints,
                                 &rep, err, sizeof(err));
        if (cases[i].want == PROTO_OK) {
            CHECK(r == 0 && rep.hints.nr_processes == PROTO_MAX_PROCESSES, "%s: accepted %s",
                  cases[i].name, err);
            if (r == 0)
                proto_reply_clear(&rep);
        } else {
            CHECK(r == -(int)cases[i].want && all_sentinel(&rep, sizeof(rep)),
                  "%s: %s (got %s: %s), output untouched", cases[i].name,
                  proto_error_name(cases[i].want),
                  r < 0 ? proto_error_name((proto_error)-r) : "success", err);
        }
        free(cases[i].line);
    }

    /* 9 processes x 64 ranges = 576 > PROTO_MAX_RANGES in one hint set. */
    many = malloc(cap);
    off += (size_t)sprintf(many + off, "{\"return\":{\"seq\":1,\"uptime_ms\":2,\"processes\":[");
    for (unsigned p = 0; p < 9; p++) {
        off += (size_t)sprintf(many + off, "%s{\"pid\":%u,\"comm\":\"\",\"vcpus\":[],\"ranges\":[",
                               p ? "," : "", p + 1);
        for (unsigned i = 0; i < PROTO_MAX_PROC_RANGES; i++)
            off += (size_t)sprintf(many + off, "%s{\"gpa\":%u,\"length\":4096,\"heat\":1}",
                                   i ? "," : "", i * 4096);
        off += (size_t)sprintf(many + off, "]}");
    }
    (void)sprintf(many + off, "]},\"id\":2}");
    {
        char err[256] = "";
        proto_reply rep;
        int r = decode_into_sentinel(many, strlen(many), &expect_hints, &rep, err, sizeof(err));

        CHECK(r == -PROTO_ERR_LIMIT && all_sentinel(&rep, sizeof(rep)),
              "576 ranges in one hint set: limit (%s), output untouched", err);
    }
    free(many);

    /* 2049 empty objects: refused before json-c builds them. */
    {
        char *objs = build("{\"return\":{\"version\":1,\"agent\":\"a\",\"nodes\":1,\"vcpus\":1,"
                           "\"x\":[",
                           "{}", PROTO_MAX_CONTAINERS - 2, ",", "]},\"id\":1}");
        char err[256] = "";
        proto_reply rep;
        int r = decode_into_sentinel(objs, strlen(objs), &expect_hello, &rep, err, sizeof(err));

        CHECK(r == -PROTO_ERR_LIMIT && all_sentinel(&rep, sizeof(rep)),
              "%u objects and arrays in one message: limit (%s)", PROTO_MAX_CONTAINERS + 1, err);
        free(objs);
        objs = build("{\"return\":{\"version\":1,\"agent\":\"a\",\"nodes\":1,\"vcpus\":1,"
                     "\"x\":[",
                     "[\"[{\"]", PROTO_MAX_CONTAINERS - 3, ",", "]},\"id\":1}");
        r = proto_decode_reply(objs, strlen(objs), &expect_hello, &rep, err, sizeof(err));
        CHECK(r == 0, "%u (brackets inside strings do not count): accepted %s",
              PROTO_MAX_CONTAINERS, err);
        free(objs);
    }

    /* A whole line over the limit given to the decoder directly. */
    {
        char *huge = malloc(PROTO_MAX_LINE + 1);
        char err[256] = "";
        proto_reply rep;
        int r;

        memset(huge, ' ', PROTO_MAX_LINE);
        memcpy(huge, HINTS(PROC("")), strlen(HINTS(PROC(""))));
        r = decode_into_sentinel(huge, PROTO_MAX_LINE, &expect_hints, &rep, err, sizeof(err));
        CHECK(r == -PROTO_ERR_OVERSIZE && all_sentinel(&rep, sizeof(rep)),
              "a %u-byte line given to the decoder: oversize (%s)", PROTO_MAX_LINE, err);
        r = decode_into_sentinel(huge, PROTO_MAX_LINE - 1, &expect_hints, &rep, err, sizeof(err));
        CHECK(r == 0, "the same padded with spaces to %u bytes: accepted %s", PROTO_MAX_LINE - 1,
              err);
        if (r == 0)
            proto_reply_clear(&rep);
        free(huge);
    }
}

/* ---- forward compatibility ---- */

static int decode_request_str(const char *line, unsigned version, proto_request *req, uint32_t *id,
                              char *err, size_t errlen)
{
    return proto_decode_request(line, strlen(line), version, req, id, err, errlen);
}

static void test_versions(void)
{
    static const char newer[] =
        HELLO_REPLY("{\"version\":1,\"agent\":\"vnuma-agent 9\",\"nodes\":2,\"vcpus\":4,"
                    "\"capabilities\":[\"hot-ranges\",\"warp-drive\",\"hot-ranges\"],"
                    "\"future\":{\"x\":[1,{\"y\":null}]}}");
    static const char newer_err[] = "{\"error\":{\"class\":\"GenericError\",\"desc\":\"d\","
                                    "\"hint\":\"x\"},\"id\":2}";
    proto_expect hints_v0 = {.msg = PROTO_MSG_GET_HINTS, .id = 2, .version = 0};
    proto_expect hints_v2 = {.msg = PROTO_MSG_GET_HINTS, .id = 2, .version = 2};
    proto_request req;
    proto_reply rep;
    char err[256] = "";
    uint32_t id = 99;
    int r;

    r = proto_decode_reply(newer, strlen(newer), &expect_hello, &rep, err, sizeof(err));
    CHECK(r == 0 && rep.kind == PROTO_REPLY_HELLO &&
              rep.hello.caps == PROTO_CAP_BIT(PROTO_CAP_HOT_RANGES) && rep.hello.nodes == 2,
          "a newer agent's hello reply: unknown fields and capabilities ignored %s", err);
    r = proto_decode_reply(newer_err, strlen(newer_err), &expect_hints, &rep, err, sizeof(err));
    CHECK(r == 0 && rep.kind == PROTO_REPLY_ERROR && strcmp(rep.error.desc, "d") == 0,
          "error replies are open: an unknown field is ignored %s", err);
    r = decode_into_sentinel(HINTS(PROC("")), strlen(HINTS(PROC(""))), &hints_v0, &rep, err,
                             sizeof(err));
    CHECK(r == -PROTO_ERR_VERSION && all_sentinel(&rep, sizeof(rep)),
          "a hint set before a version was negotiated: version (%s)", err);
    r = decode_into_sentinel(HINTS(PROC("")), strlen(HINTS(PROC(""))), &hints_v2, &rep, err,
                             sizeof(err));
    CHECK(r == -PROTO_ERR_VERSION, "a version this build does not speak: version (%s)", err);

    /* Requests, as the agent sees them. */
    r = decode_request_str("{\"execute\":\"vnuma-hello\",\"arguments\":{\"versions\":[1,2,9],"
                           "\"capabilities\":[\"flush\",\"new\"],\"new\":{}},\"id\":4,\"x\":1}",
                           0, &req, &id, err, sizeof(err));
    CHECK(r == 0 && req.msg == PROTO_MSG_HELLO && id == 4 &&
              req.hello.versions == ((1u << 1) | (1u << 2) | (1u << 9)) &&
              req.hello.caps == PROTO_CAP_BIT(PROTO_CAP_FLUSH) &&
              proto_choose_version(req.hello.versions) == 1,
          "a newer host's hello: unknown fields ignored, version 1 chosen %s", err);
    r = decode_request_str("{\"execute\":\"vnuma-hello\",\"arguments\":{\"versions\":[1,1]},"
                           "\"id\":4}",
                           0, &req, &id, err, sizeof(err));
    CHECK(r == -PROTO_ERR_DUPLICATE, "hello listing a version twice: duplicate (%s)", err);
    r = decode_request_str("{\"execute\":\"vnuma-hello\",\"arguments\":{\"versions\":[64]},"
                           "\"id\":4}",
                           0, &req, &id, err, sizeof(err));
    CHECK(r == -PROTO_ERR_RANGE, "hello with version 64: range (%s)", err);
}

static void test_requests(void)
{
    static const struct {
        const char *name;
        const char *line;
        unsigned version;
        proto_error want;
        uint32_t want_id;
    } cases[] = {
        {"unknown command", "{\"execute\":\"guest-exec\",\"arguments\":{},\"id\":9}", 1,
         PROTO_ERR_COMMAND, 9},
        {"get-hints before hello",
         "{\"execute\":\"vnuma-get-hints\",\"arguments\":{\"interval_ms\":1000,"
         "\"max_processes\":4,\"scan_budget_mib\":1},\"id\":5}",
         0, PROTO_ERR_VERSION, 5},
        {"get-hints: unknown argument",
         "{\"execute\":\"vnuma-get-hints\",\"arguments\":{\"interval_ms\":1000,"
         "\"max_processes\":4,\"scan_budget_mib\":1,\"turbo\":true},\"id\":5}",
         1, PROTO_ERR_UNKNOWN, 5},
        {"get-hints: 65 processes",
         "{\"execute\":\"vnuma-get-hints\",\"arguments\":{\"interval_ms\":1000,"
         "\"max_processes\":65,\"scan_budget_mib\":1},\"id\":6}",
         1, PROTO_ERR_RANGE, 6},
        {"get-hints: arguments missing", "{\"execute\":\"vnuma-get-hints\",\"id\":7}", 1,
         PROTO_ERR_MISSING, 7},
        {"no execute", "{\"arguments\":{},\"id\":8}", 1, PROTO_ERR_TYPE, 8},
        {"no id", "{\"execute\":\"vnuma-hello\",\"arguments\":{\"versions\":[1]}}", 0,
         PROTO_ERR_MISSING, 0},
        {"not JSON", "\"execute\":", 0, PROTO_ERR_SYNTAX, 0},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        proto_request req;
        char err[256] = "";
        uint32_t id = 12345;
        int r;

        memset(&req, SENTINEL, sizeof(req));
        r = proto_decode_request(cases[i].line, strlen(cases[i].line), cases[i].version, &req, &id,
                                 err, sizeof(err));
        CHECK(r == -(int)cases[i].want && id == cases[i].want_id && all_sentinel(&req, sizeof(req)),
              "request, %s: %s, id %u for the error reply (got %s, id %u: %s)", cases[i].name,
              proto_error_name(cases[i].want), cases[i].want_id,
              r < 0 ? proto_error_name((proto_error)-r) : "success", id, err);
    }
}

/* ---- rate limit ---- */

static void test_rate(void)
{
    proto_rate rl;
    unsigned ok = 0;

    proto_rate_init(&rl, 10, 5);
    for (int i = 0; i < 8; i++)
        ok += proto_rate_allow(&rl, 1000);
    CHECK(ok == 5 && rl.dropped == 3, "a burst of 8 at one instant: 5 pass, 3 dropped");
    CHECK(!proto_rate_allow(&rl, 1099), "99 ms later: still empty (10/s)");
    CHECK(proto_rate_allow(&rl, 1100), "100 ms later: one token");
    ok = 0;
    for (uint64_t t = 2000; t < 12000; t += 10)
        ok += proto_rate_allow(&rl, t);
    CHECK(ok >= 99 && ok <= 106, "a flood at 100/s for 10 s: about 10/s pass (%u)", ok);
    CHECK(proto_rate_allow(&rl, UINT64_MAX / 2) && proto_rate_allow(&rl, UINT64_MAX / 2),
          "a long pause refills up to the burst, no overflow");
    ok = 0;
    for (int i = 0; i < 10; i++)
        ok += proto_rate_allow(&rl, UINT64_MAX / 2);
    CHECK(ok == 3, "... and no more than the burst (%u more)", ok);
    CHECK(!proto_rate_allow(&rl, 5), "a clock that goes back refills nothing");
}

/* ---- domain bounds ---- */

static void test_bounds(void)
{
    uint32_t vcpus[] = {0, 7, 3, 4, 1000};
    uint64_t pages[] = {10, 20, 30, 40};
    proto_range ranges[] = {
        {.gpa = 0, .length = 4096, .heat = 1},                   /* inside node 0's RAM */
        {.gpa = (2ull << 30) - 4096, .length = 8192, .heat = 2}, /* spans the adjacent ranges */
        {.gpa = (3ull << 30), .length = 4096, .heat = 3},        /* in the hole */
        {.gpa = (6ull << 30) - 4096, .length = 8192, .heat = 4}, /* runs off the end */
        {.gpa = (5ull << 30), .length = 1ull << 30, .heat = 5},  /* inside */
    };
    const proto_gpa_range ram[] = {{4ull << 30, 2ull << 30}, {0, 2ull << 30}, {2ull << 30, 4096}};
    proto_process p = {.pid = 812,
                       .vcpus = vcpus,
                       .nr_vcpus = 5,
                       .node_pages = pages,
                       .nr_node_pages = 4,
                       .ranges = ranges,
                       .nr_ranges = 5};
    proto_hints h = {.processes = &p, .nr_processes = 1};
    char err[256] = "";
    int n = proto_hints_check_bounds(&h, 4, 2, ram, 3, err, sizeof(err));

    CHECK(n == 7, "7 lies dropped: vCPUs 7, 4, 1000; nodes 2, 3; 2 ranges (got %d: %s)", n, err);
    CHECK(p.nr_vcpus == 2 && vcpus[0] == 0 && vcpus[1] == 3, "vCPUs 0 and 3 kept, in order");
    CHECK(p.nr_node_pages == 2, "node_pages cut to the domain's 2 nodes");
    CHECK(p.nr_ranges == 3 && ranges[0].heat == 1 && ranges[1].heat == 2 && ranges[2].heat == 5,
          "ranges inside RAM kept (one spanning adjacent RAM ranges)");
    CHECK(strstr(err, "pid 812") && strstr(err, "vCPU 7"), "the first drop is described: %s", err);
    n = proto_hints_check_bounds(&h, 4, 2, ram, 3, err, sizeof(err));
    CHECK(n == 0 && err[0] == '\0', "checking again drops nothing");
    n = proto_hints_check_bounds(&h, 4, 2, NULL, 0, err, sizeof(err));
    CHECK(n == 3 && p.nr_ranges == 0, "no RAM known: every range dropped");
}

static void test_comm(void)
{
    char out[PROTO_MAX_COMM + 1];

    proto_sanitize_comm(out, "kworker/0:1");
    CHECK(strcmp(out, "kworker/0:1") == 0, "sanitize_comm keeps a plain name");
    proto_sanitize_comm(out, "a\xff\x01"
                             "b\xc3\xa9");
    CHECK(strcmp(out, "a??b\xc3\xa9") == 0, "sanitize_comm replaces invalid bytes");
    proto_sanitize_comm(out, "0123456789abcde\xc3\xa9");
    CHECK(strcmp(out, "0123456789abcde") == 0, "sanitize_comm cuts on a character boundary");
}

/* ---- the document ---- */

static void test_doc(void)
{
    const char *path = getenv("VN_PROTOCOL_MD") ? getenv("VN_PROTOCOL_MD") : "docs/PROTOCOL.md";
    char *gen = NULL, *disk = NULL;
    size_t gen_len = 0, disk_len = 0;
    FILE *f = open_memstream(&gen, &gen_len);
    int r = f ? proto_doc_write(f) : -ENOMEM;

    if (f)
        (void)fclose(f);
    CHECK(r == 0 && gen_len > 1000, "the generator writes the document (%zu bytes)", gen_len);
    if (getenv("VN_TEST_REGENERATE_OUTPUT")) {
        f = fopen(path, "we");
        if (f) {
            (void)fwrite(gen, 1, gen_len, f);
            (void)fclose(f);
        }
    }
    f = fopen(path, "re");
    if (f) {
        disk = malloc(gen_len + 2);
        disk_len = fread(disk, 1, gen_len + 1, f);
        (void)fclose(f);
    }
    CHECK(disk && disk_len == gen_len && memcmp(disk, gen, gen_len) == 0,
          "%s is what the table generates (run `make proto-doc` after changing proto/schema.c)",
          path);
    CHECK(gen && !strstr(gen, "example failed"), "every example in the document encodes");
    free(gen);
    free(disk);
}

int main(void)
{
    test_schema();
    test_roundtrip_requests();
    test_roundtrip_replies();
    test_encoders_refuse();
    test_encode_oversize();
    test_framing();
    test_bad_replies();
    test_limits();
    test_versions();
    test_requests();
    test_rate();
    test_bounds();
    test_comm();
    test_doc();
    return tap_done();
}
