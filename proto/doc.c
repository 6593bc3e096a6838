/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * docs/PROTOCOL.md, printed from the message table (schema.c). The prose
 * around the tables lives here; every number, field, message, capability and
 * error kind comes from the table or from proto.h, and the examples are
 * produced by the encoders themselves.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"

#define NUM_LEN 32

/* A number the way a reader wants it: 2^52, 2^31 - 1, 4096. */
static const char *num(uint64_t v, char *buf)
{
    static const uint64_t offsets[] = {0, 1, 2, PROTO_PAGE_SIZE};

    for (unsigned i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
        for (unsigned k = 20; k <= 64; k++) {
            uint64_t pow = k == 64 ? 0 : UINT64_C(1) << k; /* 2^64 wraps to 0 */
            if (v + offsets[i] == pow && (k < 64 || offsets[i] > 0)) {
                if (offsets[i])
                    (void)snprintf(buf, NUM_LEN, "2^%u - %" PRIu64, k, offsets[i]);
                else
                    (void)snprintf(buf, NUM_LEN, "2^%u", k);
                return buf;
            }
        }
    }
    (void)snprintf(buf, NUM_LEN, "%" PRIu64, v);
    return buf;
}

static const char *type_of(const proto_field *f, char *buf, size_t len)
{
    switch (f->type) {
    case PROTO_T_UINT:
        return "integer";
    case PROTO_T_STRING:
        return "string";
    case PROTO_T_OBJECT:
        (void)snprintf(buf, len, "*%s* object", f->object->name);
        return buf;
    case PROTO_T_ARRAY:
        if (f->elem->type == PROTO_T_OBJECT)
            (void)snprintf(buf, len, "array of *%s*", f->elem->object->name);
        else
            (void)snprintf(buf, len, "array of %s", type_of(f->elem, buf, len));
        return buf;
    case PROTO_T_VERSIONS:
        return "array of integer";
    case PROTO_T_CAPS:
        return "array of string";
    default:
        return "?";
    }
}

static void print_limits(FILE *out, const proto_field *f)
{
    char a[NUM_LEN], b[NUM_LEN], c[NUM_LEN];

    switch (f->type) {
    case PROTO_T_UINT:
        fprintf(out, "%s .. %s", num(f->min, a), num(f->max, b));
        if (f->align)
            fprintf(out, ", a multiple of %s", num(f->align, c));
        if (f->flags & PROTO_F_KEY)
            fprintf(out, ", unique in the array");
        break;
    case PROTO_T_STRING:
        fprintf(out, "%s .. %s bytes of UTF-8, no NUL", num(f->min, a), num(f->max, b));
        break;
    case PROTO_T_OBJECT:
        fprintf(out, "see *%s*", f->object->name);
        break;
    case PROTO_T_ARRAY:
        fprintf(out, "%s .. %s entries", num(f->min, a), num(f->max, b));
        if (f->elem->type == PROTO_T_UINT) {
            fprintf(out, ", each %s .. %s", num(f->elem->min, a), num(f->elem->max, b));
            if (f->flags & PROTO_F_UNIQUE)
                fprintf(out, ", each at most once");
        }
        if (f->total != PROTO_TOTAL_NONE)
            fprintf(out, "; at most %s %s", num(proto_totals[f->total].max, a),
                    proto_totals[f->total].what);
        break;
    case PROTO_T_VERSIONS:
        fprintf(out, "%s .. %s entries, each 1 .. %u, each at most once", num(f->min, a),
                num(f->max, b), PROTO_VERSION_LIMIT);
        break;
    case PROTO_T_CAPS:
        fprintf(out, "%s .. %s names of 1 .. %u bytes; unknown names are ignored", num(f->min, a),
                num(f->max, b), PROTO_MAX_CAP);
        break;
    default:
        break;
    }
}

static void print_object(FILE *out, const proto_object *o)
{
    fprintf(out, "| field | type | required | limits | since | meaning |\n");
    fprintf(out, "|---|---|---|---|---|---|\n");
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        char type[64];

        fprintf(out, "| `%s` | %s | %s | ", f->name, type_of(f, type, sizeof(type)),
                f->flags & PROTO_F_REQUIRED ? "yes" : "no");
        print_limits(out, f);
        fprintf(out, " | %u | %s |\n", f->since, f->doc ? f->doc : "");
    }
    if (o->check_doc)
        fprintf(out, "\nAlso: %s.\n", o->check_doc);
}

/* The objects nested in o, each once, in order of first appearance. */
static unsigned collect_nested(const proto_object *o, const proto_object **list, unsigned n,
                               unsigned max)
{
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        const proto_object *sub = f->type == PROTO_T_OBJECT ? f->object
                                  : f->type == PROTO_T_ARRAY && f->elem->type == PROTO_T_OBJECT
                                      ? f->elem->object
                                      : NULL;
        bool seen = false;

        if (!sub)
            continue;
        for (unsigned j = 0; j < n; j++)
            seen = seen || list[j] == sub;
        if (seen || n == max)
            continue;
        list[n++] = sub;
        n = collect_nested(sub, list, n, max);
    }
    return n;
}

static void print_nested(FILE *out, const proto_object *o)
{
    const proto_object *list[16];
    unsigned n = collect_nested(o, list, 0, 16);

    for (unsigned i = 0; i < n; i++) {
        fprintf(out, "\n*%s*:\n\n", list[i]->name);
        print_object(out, list[i]);
    }
}

static void example(FILE *out, const char *who, int r, char *line)
{
    if (r < 0) {
        fprintf(out, "(example failed: %s)\n", proto_error_name((proto_error)-r));
        return;
    }
    fprintf(out, "%s\n\n```\n%s```\n", who, line);
    free(line);
}

static void print_examples(FILE *out, proto_msg m)
{
    char *line = NULL;
    size_t len = 0;
    int r;

    if (m == PROTO_MSG_HELLO) {
        proto_hello h = {.versions = UINT64_C(1) << 1, .caps = PROTO_CAP_BIT(PROTO_CAP_FLUSH)};
        proto_hello_reply hr = {.version = 1,
                                .caps = PROTO_CAP_BIT(PROTO_CAP_NODE_PAGES) |
                                        PROTO_CAP_BIT(PROTO_CAP_HOT_RANGES),
                                .nodes = 2,
                                .vcpus = 4};

        (void)snprintf(hr.agent, sizeof(hr.agent), "vnuma-agent 0.2.0");
        r = proto_encode_hello(1, &h, &line, &len);
        example(out, "Host:", r, line);
        r = proto_encode_hello_reply(1, &hr, &line, &len);
        example(out, "\nGuest:", r, line);
    } else {
        proto_get_hints g = {.interval_ms = 1000, .max_processes = 8, .scan_budget_mib = 256};
        uint32_t vcpus[] = {2, 3};
        uint64_t pages[] = {1024, 262144};
        proto_range ranges[] = {{.gpa = 0x100000000ull, .length = 0x200000, .heat = 1000},
                                {.gpa = 0x120000000ull, .length = 0x10000000, .heat = 420}};
        proto_process p = {.pid = 812,
                           .vcpus = vcpus,
                           .nr_vcpus = 2,
                           .node_pages = pages,
                           .nr_node_pages = 2,
                           .ranges = ranges,
                           .nr_ranges = 2};
        proto_hints hs = {.seq = 17, .uptime_ms = 123456, .processes = &p, .nr_processes = 1};

        (void)snprintf(p.comm, sizeof(p.comm), "memtouch");
        r = proto_encode_get_hints(2, &g, &line, &len);
        example(out, "Host:", r, line);
        r = proto_encode_hints_reply(2, &hs, &line, &len);
        example(out, "\nGuest:", r, line);
    }
}

static void print_intro(FILE *out)
{
    char a[NUM_LEN];

    fprintf(out,
            "# vnuma guest protocol\n"
            "\n"
            "<!-- Generated by build/proto-doc from proto/schema.c: do not edit. Change the "
            "table, then run `make proto-doc`; test-proto fails while this file and the table "
            "differ. -->\n"
            "\n"
            "vnumad (host) and vnuma-agent (guest) talk over the virtio-serial port "
            "`org.vnuma.agent.0` (host side: the domain's channel socket; guest side: "
            "`/dev/virtio-ports/org.vnuma.agent.0` or the `/dev/vportNpM` whose "
            "`/sys/class/virtio-ports/*/name` says so). The host asks, the guest answers: "
            "every message from the guest is a reply to one request. One C codec "
            "(`proto/`, `proto/proto.h`) is used by both sides; this document is printed "
            "from its message table (`proto/schema.c`), the same table that drives its "
            "decoders and encoders.\n"
            "\n"
            "## Framing\n"
            "\n"
            "- One JSON object per line, terminated by `\\n` (a `\\r` before it is ignored; "
            "empty lines are skipped). A line is at most `PROTO_MAX_LINE` = %s bytes "
            "including its newline. A longer line is dropped up to the next newline and "
            "counted (`oversize`); the next line is read normally, so memory stays bounded "
            "whatever the peer sends.\n"
            "- A `0xFF` byte (never part of valid UTF-8) drops the partial line the receiver "
            "holds, like qemu-guest-agent's delimiter. Either side may send `0xFF` before a "
            "request or reply to flush the peer's parser; a host should do so when it "
            "connects and after a reply it refused.\n"
            "- The text is UTF-8 (strictly: no overlong forms, surrogates or code points "
            "above U+10FFFF) and strict JSON: no single quotes, no raw control bytes in "
            "strings, no `\\u0000` in strings or keys, no key twice in one object, nothing "
            "after the object. Objects and arrays nest at most `PROTO_MAX_DEPTH` = %d deep. "
            "Integers are JSON integers (`1.0` and `1e3` are refused) within the limits "
            "below.\n"
            "\n"
            "## Envelope\n"
            "\n"
            "Like qemu-guest-agent: a request is "
            "`{\"execute\": NAME, \"arguments\": {...}, \"id\": N}`, its reply "
            "`{\"return\": {...}, \"id\": N}` or "
            "`{\"error\": {\"class\": CLASS, \"desc\": TEXT}, \"id\": N}`. `id` is an integer "
            "0 .. 2^32 - 1 that the reply echoes; the host numbers its requests from 1 and has "
            "one outstanding at a time. A reply with another id (late, duplicate, unsolicited) "
            "is refused (`id`). A guest that cannot read a request's id answers with id 0. "
            "An unknown command is answered with the error class `CommandNotFound`, any other "
            "bad request with `GenericError`.\n"
            "\n",
            num(PROTO_MAX_LINE, a), PROTO_MAX_DEPTH);
}

static void print_versions(FILE *out)
{
    fprintf(out, "## Versions and capabilities\n"
                 "\n"
                 "Versions are small integers. `vnuma-hello` is the first request on every "
                 "connection: the host lists every version it speaks and its capabilities; the "
                 "agent picks the highest version both speak and answers with it and its own "
                 "capabilities (an agent sharing no version answers with an error). Every later "
                 "message follows the chosen version. Before a hello, an agent answers any other "
                 "request with an error (`version`); an agent that restarted says so that way, "
                 "and the host says hello again.\n"
                 "\n"
                 "Either side can be newer:\n"
                 "\n"
                 "- A version only ever adds messages, fields and capabilities; it never changes "
                 "the meaning or limits of what an older version has.\n"
                 "- Handshake objects (`vnuma-hello` and its reply, and error replies) are *open* "
                 "in every version: unknown fields are ignored (still within the size, depth and "
                 "UTF-8 limits), so a newer peer can always be greeted.\n"
                 "- Every other object is *closed* in version 1: a field that the negotiated "
                 "version does not have is refused (`unknown`), since a peer that chose that "
                 "version must not send it. A later version may declare its objects open from "
                 "that version on (`open_since` in the table); unknown fields are then ignored "
                 "only when that version or a later one was negotiated.\n"
                 "- Unknown capability names are ignored; capabilities only announce optional "
                 "behaviour, never change the format.\n"
                 "\n"
                 "| version | adds |\n"
                 "|---|---|\n");
    for (unsigned i = 0; i < proto_nr_versions; i++)
        fprintf(out, "| %u | %s |\n", proto_versions[i].version, proto_versions[i].doc);
    fprintf(out, "\n| capability | sent by | since | meaning |\n|---|---|---|---|\n");
    for (unsigned c = 0; c < PROTO_CAP_MAX; c++)
        fprintf(out, "| `%s` | %s | %u | %s |\n", proto_capabilities[c].name,
                proto_capabilities[c].sender, proto_capabilities[c].since,
                proto_capabilities[c].doc);
    fprintf(out, "\n");
}

static void print_messages(FILE *out)
{
    fprintf(out, "## Messages\n");
    for (unsigned m = 0; m < PROTO_MSG_MAX; m++) {
        const proto_message *msg = &proto_messages[m];

        fprintf(out, "\n### `%s`\n\n", msg->name);
        fprintf(out, "%s, since version %u%s. %s\n", msg->direction, msg->since,
                msg->handshake                   ? ", handshake (open: unknown fields ignored)"
                : msg->open_since == PROTO_NEVER ? ", closed (unknown fields refused)"
                                                 : "",
                msg->doc);
        fprintf(out, "\nArguments (*%s*):\n\n", msg->arguments->name);
        print_object(out, msg->arguments);
        print_nested(out, msg->arguments);
        fprintf(out, "\nReply, `return` (*%s*):\n\n", msg->reply->name);
        print_object(out, msg->reply);
        print_nested(out, msg->reply);
        fprintf(out, "\nExample:\n\n");
        print_examples(out, msg->msg);
    }
    fprintf(out, "\n### Error replies\n\nAny request may be answered with an error; error "
                 "objects are open in every version.\n\n");
    print_object(out, &proto_error_object);
    {
        char *line = NULL;
        size_t len = 0;
        int r = proto_encode_error(
            3, "CommandNotFound", "the command 'vnuma-frobnicate' has not been found", &line, &len);
        fprintf(out, "\nExample:\n\n");
        example(out, "Guest:", r, line);
    }
    fprintf(out, "\n");
}

static void print_limits_table(FILE *out)
{
    char a[NUM_LEN];

    fprintf(out, "## Limits\n"
                 "\n"
                 "The host treats the guest as hostile. Every limit is a named constant in "
                 "`proto/proto.h`; the field tables above give each field's own. A message over "
                 "any limit is refused as a whole and counted by its error kind; nothing of it is "
                 "used (decoders fill a temporary and hand it over only when all of it is valid).\n"
                 "\n"
                 "| constant | value | what | when exceeded |\n|---|---|---|---|\n");
    for (unsigned i = 0; i < proto_nr_limits; i++)
        fprintf(out, "| `%s` | %s | %s | %s |\n", proto_limits[i].name,
                num(proto_limits[i].value, a), proto_limits[i].doc, proto_limits[i].when_hit);
    fprintf(out,
            "\nThe rate limit is a token bucket per guest (`proto_rate`): it holds "
            "`PROTO_RATE_BURST` tokens, refills `PROTO_RATE_PER_SEC` per second, and every "
            "line received takes one; a line that finds the bucket empty is dropped unread. "
            "The host asks at most every `PROTO_MIN_INTERVAL_MS` = %u ms, so an honest agent "
            "never meets it. A line that never ends (slowloris) holds at most "
            "`PROTO_MAX_LINE` bytes; `proto_reader_pending()` lets the host time it out.\n"
            "\n",
            PROTO_MIN_INTERVAL_MS);
}

static void print_errors(FILE *out)
{
    fprintf(out, "## Errors\n"
                 "\n"
                 "Decoders return one of these kinds (`proto_error`, named by "
                 "`proto_error_name()`) with a one-line reason naming the JSON path "
                 "(`return.processes[3].ranges[0].gpa: 4097 is not a multiple of 4096`). The "
                 "host counts them per domain and drops the message; the agent answers a bad "
                 "request with an error reply.\n"
                 "\n"
                 "| kind | meaning |\n|---|---|\n");
    for (unsigned e = 1; e < PROTO_ERR_MAX; e++)
        fprintf(out, "| `%s` | %s |\n", proto_error_name((proto_error)e), proto_error_docs[e]);
    fprintf(out,
            "\n## What only the domain can check\n"
            "\n"
            "A well-formed hint set can still lie. `proto_hints_check_bounds()` drops, entry "
            "by entry, vCPU numbers not below the domain's vCPU count, `node_pages` entries "
            "at or beyond its guest node count, and ranges not inside guest RAM (a range may "
            "span adjacent RAM ranges); it returns how many it dropped, for the host to count. "
            "The rest of the hint set is used.\n");
}

int proto_doc_write(FILE *out)
{
    print_intro(out);
    print_versions(out);
    print_messages(out);
    print_limits_table(out);
    print_errors(out);
    return ferror(out) ? -EIO : 0;
}
