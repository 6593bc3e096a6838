/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer harness of the host side of the guest protocol: arbitrary bytes
 * from a hostile guest go through the stream reader, the rate limiter and
 * proto_decode_reply() (as the reply to vnuma-hello, id 1, before a version
 * is negotiated, and to vnuma-get-hints, id 2, in version 1), and every hint
 * set decoded through proto_hints_check_bounds() with fixed domain bounds.
 * The oracles are the sanitizers plus a round trip: a decoded hint set must
 * encode, and decode again to an equal one. The agent-side request decoder
 * gets the same lines.
 *
 * With VN_FUZZ_SELFTEST_CRASH set, every input aborts (tests/cli/fuzz.sh
 * checks that it notices); the environment is read once, at start-up, not per
 * input.
 *
 * Built and run by `make fuzz` (clang -fsanitize=fuzzer,address,undefined);
 * tests/cli/fuzz.sh runs it for a bounded time in `make check`.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool selftest_crash;

/* A domain with 4 vCPUs, 2 guest nodes, RAM at [0, 2 GiB) and [4 GiB, 6 GiB). */
static const proto_gpa_range fuzz_ram[] = {{0, 2ull << 30}, {4ull << 30, 2ull << 30}};

static void roundtrip(const proto_hints *h, uint32_t id)
{
    proto_expect expect = {.msg = PROTO_MSG_GET_HINTS, .id = id, .version = PROTO_VERSION_MAX};
    proto_reply again;
    char *line = NULL;
    size_t len = 0;
    int r;

    r = proto_encode_hints_reply(id, h, &line, &len);
    if (r == -PROTO_ERR_OVERSIZE)
        return; /* a compact input can be shorter than our encoding of it */
    if (r < 0)
        abort(); /* a decoded hint set must be encodable */
    r = proto_decode_reply(line, len - 1, &expect, &again, NULL, 0);
    if (r < 0 || again.kind != PROTO_REPLY_HINTS || !proto_hints_equal(h, &again.hints))
        abort();
    proto_reply_clear(&again);
    free(line);
}

static void one_line(const char *line, size_t len)
{
    proto_expect hello = {.msg = PROTO_MSG_HELLO, .id = 1, .version = 0};
    proto_expect hints = {.msg = PROTO_MSG_GET_HINTS, .id = 2, .version = PROTO_VERSION_MAX};
    proto_request req;
    proto_reply rep;
    char err[256];
    uint32_t id;
    int r;

    r = proto_decode_reply(line, len, &hello, &rep, err, sizeof(err));
    if (r == 0)
        proto_reply_clear(&rep);
    else if (r >= 0 || -r >= PROTO_ERR_MAX || !err[0])
        abort(); /* every failure has a kind and a reason */

    r = proto_decode_reply(line, len, &hints, &rep, err, sizeof(err));
    if (r == 0) {
        if (rep.kind == PROTO_REPLY_HINTS) {
            roundtrip(&rep.hints, 2);
            (void)proto_hints_check_bounds(&rep.hints, 4, 2, fuzz_ram, 2, err, sizeof(err));
            for (unsigned p = 0; p < rep.hints.nr_processes; p++) {
                const proto_process *proc = &rep.hints.processes[p];
                for (unsigned i = 0; i < proc->nr_vcpus; i++)
                    if (proc->vcpus[i] >= 4)
                        abort();
                if (proc->nr_node_pages > 2)
                    abort();
            }
        }
        proto_reply_clear(&rep);
    } else if (r >= 0 || -r >= PROTO_ERR_MAX || !err[0]) {
        abort();
    }

    (void)proto_decode_request(line, len, (unsigned)(len & 1), &req, &id, err, sizeof(err));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    selftest_crash = getenv("VN_FUZZ_SELFTEST_CRASH") != NULL;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static proto_reader reader;
    proto_rate rate;
    uint64_t now = 0;
    size_t off = 0;

    /* tests/cli/fuzz.sh checks that a finding fails it: this makes every input one. */
    if (selftest_crash)
        abort();
    proto_reader_init(&reader);
    proto_rate_init(&rate, PROTO_RATE_PER_SEC, PROTO_RATE_BURST);
    while (off < size) {
        const char *line = NULL;
        size_t used = 0, len = 0;
        int r = proto_reader_feed(&reader, data + off, size - off, &used, &line, &len);

        if (used == 0 || used > size - off)
            abort(); /* the reader always makes progress */
        off += used;
        now += 7;
        if (r == 1) {
            if (len >= PROTO_MAX_LINE || strlen(line) > len)
                abort();
            if (proto_rate_allow(&rate, now))
                one_line(line, len);
        }
    }
    return 0;
}
