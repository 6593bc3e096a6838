/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * THE message table: every message of the vnuma guest protocol, its fields,
 * their types, limits and the version that added them. The codec
 * (codec.c, encode.c, value.c) validates, decodes and encodes by walking it; docs/PROTOCOL.md is
 * printed from it (doc.c, `make proto-doc`). Change the protocol here, then
 * regenerate the document; test-proto fails while the two differ.
 *
 * Compatibility rules for later versions: a new version may add messages,
 * fields (with .since) and capabilities; it never changes the meaning or
 * limits of what an older version has. Handshake messages (vnuma-hello) are
 * open (unknown fields ignored) in every version, so that either side can be
 * newer; every other object is closed in version 1 (an unknown field is a
 * lie or a bug: PROTO_ERR_UNKNOWN). A later version that wants its objects
 * open sets .open_since to itself.
 */
#include "schema.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define MEMBER_SIZE(st, member) sizeof(((st *)0)->member)

/* An integer member of struct `st`. */
#define F_UINT(st, member, fl, lo, hi, al, text)                                                   \
    {                                                                                              \
        .name = #member, .type = PROTO_T_UINT, .flags = (fl), .since = 1, .min = (lo),             \
        .max = (hi), .align = (al), .offset = offsetof(st, member),                                \
        .width = MEMBER_SIZE(st, member), .doc = (text)                                            \
    }
/* A char[] member of struct `st`. */
#define F_STRING(st, member, fl, lo, hi, text)                                                     \
    {                                                                                              \
        .name = #member, .type = PROTO_T_STRING, .flags = (fl), .since = 1, .min = (lo),           \
        .max = (hi), .offset = offsetof(st, member), .width = MEMBER_SIZE(st, member),             \
        .doc = (text)                                                                              \
    }
/* A pointer member of struct `st` with its count in nr_member. */
#define F_ARRAY(st, member, fl, lo, hi, element, tot, text)                                        \
    {                                                                                              \
        .name = #member, .type = PROTO_T_ARRAY, .flags = (fl), .since = 1, .min = (lo),            \
        .max = (hi), .offset = offsetof(st, member), .width = MEMBER_SIZE(st, member),             \
        .count_offset = offsetof(st, nr_##member), .elem = &(element), .total = (tot),             \
        .doc = (text)                                                                              \
    }
/* A uint64_t bit set member of struct `st` read from a list (PROTO_T_VERSIONS, PROTO_T_CAPS). */
#define F_SET(st, member, wire, kind, fl, lo, hi, text)                                            \
    {                                                                                              \
        .name = (wire), .type = (kind), .flags = (fl), .since = 1, .min = (lo), .max = (hi),       \
        .offset = offsetof(st, member), .width = MEMBER_SIZE(st, member), .doc = (text)            \
    }
/* An array element: an integer of C type ctype, or an object. */
#define E_UINT(ctype, fl, lo, hi, text)                                                            \
    {                                                                                              \
        .name = "", .type = PROTO_T_UINT, .flags = (fl), .since = 1, .min = (lo), .max = (hi),     \
        .width = sizeof(ctype), .doc = (text)                                                      \
    }
#define E_OBJECT(obj)                                                                              \
    {                                                                                              \
        .name = "", .type = PROTO_T_OBJECT, .since = 1, .object = &(obj)                           \
    }

#define OBJECT(cname, ctype, fieldarray, checkfn, checktext)                                       \
    {                                                                                              \
        .name = (cname), .size = sizeof(ctype), .fields = (fieldarray),                            \
        .nr_fields = sizeof(fieldarray) / sizeof((fieldarray)[0]), .check = (checkfn),             \
        .check_doc = (checktext)                                                                   \
    }

#define REQ PROTO_F_REQUIRED

/* ---- vnuma-hello ---- */

static const proto_field hello_fields[] = {
    F_SET(proto_hello, versions, "versions", PROTO_T_VERSIONS, REQ, 1, PROTO_MAX_VERSIONS,
          "protocol versions the host speaks (1 .. 63, each at most once)"),
    F_SET(proto_hello, caps, "capabilities", PROTO_T_CAPS, 0, 0, PROTO_MAX_CAPS,
          "capabilities of the host; absent: none"),
};
static const proto_object hello_object = OBJECT("hello", proto_hello, hello_fields, NULL, NULL);

static const proto_field hello_reply_fields[] = {
    F_UINT(proto_hello_reply, version, REQ, PROTO_VERSION_MIN, PROTO_VERSION_MAX, 0,
           "the version chosen: the highest the agent speaks of those the host offered"),
    F_STRING(proto_hello_reply, agent, REQ, 1, PROTO_MAX_AGENT,
             "the agent's version string (\"vnuma-agent 0.2.0\")"),
    F_SET(proto_hello_reply, caps, "capabilities", PROTO_T_CAPS, 0, 0, PROTO_MAX_CAPS,
          "capabilities of the agent; absent: none"),
    F_UINT(proto_hello_reply, nodes, REQ, 1, PROTO_MAX_NODES, 0,
           "guest NUMA nodes the agent sees (1 without NUMA)"),
    F_UINT(proto_hello_reply, vcpus, REQ, 1, PROTO_MAX_VCPUS, 0, "guest vCPUs the agent sees"),
};
static const proto_object hello_reply_object =
    OBJECT("hello reply", proto_hello_reply, hello_reply_fields, NULL, NULL);

/* ---- vnuma-get-hints ---- */

static const proto_field get_hints_fields[] = {
    F_UINT(proto_get_hints, interval_ms, REQ, PROTO_MIN_INTERVAL_MS, PROTO_MAX_INTERVAL_MS, 0,
           "how often the agent collects, in milliseconds; this request is answered with the "
           "latest collection"),
    F_UINT(proto_get_hints, max_processes, REQ, 1, PROTO_MAX_PROCESSES, 0,
           "report the top N processes by recent runtime"),
    F_UINT(proto_get_hints, scan_budget_mib, REQ, 0, PROTO_MAX_SCAN_MIB, 0,
           "MiB of address space the agent may scan for hot ranges per collection (rule 4's "
           "scan budget); 0: no range scan"),
};
static const proto_object get_hints_object =
    OBJECT("get-hints", proto_get_hints, get_hints_fields, NULL, NULL);

/* A range must end inside the guest-physical address space: gpa + length neither wraps nor
 * passes PROTO_GPA_LIMIT. */
static int range_check(const void *value, char *why, size_t len)
{
    const proto_range *r = value;

    if (r->length > PROTO_GPA_LIMIT - r->gpa) {
        (void)snprintf(why, len, "gpa + length passes the end of the guest-physical space (2^52)");
        return PROTO_ERR_RANGE;
    }
    return 0;
}

static const proto_field range_fields[] = {
    F_UINT(proto_range, gpa, REQ, 0, PROTO_GPA_LIMIT - PROTO_PAGE_SIZE, PROTO_PAGE_SIZE,
           "guest-physical start address"),
    F_UINT(proto_range, length, REQ, PROTO_PAGE_SIZE, PROTO_GPA_LIMIT, PROTO_PAGE_SIZE, "bytes"),
    F_UINT(proto_range, heat, REQ, 0, PROTO_MAX_HEAT, 0,
           "access estimate: 0 cold .. 1000 the hottest the agent saw"),
};
static const proto_object range_object =
    OBJECT("range", proto_range, range_fields, range_check,
           "gpa + length <= 2^52 (no wrap-around, inside the guest-physical address space)");

static const proto_field vcpu_elem =
    E_UINT(uint32_t, 0, 0, PROTO_MAX_VCPUS - 1, "a guest vCPU number");
static const proto_field node_pages_elem =
    E_UINT(uint64_t, 0, 0, PROTO_MAX_NODE_PAGES, "resident 4 KiB pages on that guest node");
static const proto_field range_elem = E_OBJECT(range_object);

static const proto_field process_fields[] = {
    F_UINT(proto_process, pid, REQ | PROTO_F_KEY, 1, INT32_MAX, 0,
           "guest process id, unique in the hint set"),
    F_STRING(proto_process, comm, REQ, 0, PROTO_MAX_COMM, "the process name"),
    F_ARRAY(proto_process, vcpus, REQ | PROTO_F_UNIQUE, 0, PROTO_MAX_PROC_VCPUS, vcpu_elem,
            PROTO_TOTAL_NONE,
            "guest vCPUs its threads ran on since the previous collection, each at most once"),
    F_ARRAY(proto_process, node_pages, 0, 0, PROTO_MAX_NODES, node_pages_elem, PROTO_TOTAL_NONE,
            "resident pages per guest node, index = guest node; absent without the "
            "`node-pages` capability"),
    F_ARRAY(proto_process, ranges, 0, 0, PROTO_MAX_PROC_RANGES, range_elem, PROTO_TOTAL_RANGES,
            "hot guest-physical ranges, hottest first; absent without the `hot-ranges` "
            "capability"),
};
static const proto_object process_object =
    OBJECT("process", proto_process, process_fields, NULL, NULL);
static const proto_field process_elem = E_OBJECT(process_object);

static const proto_field hints_fields[] = {
    F_UINT(proto_hints, seq, REQ, 0, UINT64_MAX - 1, 0,
           "collection number; grows by one per collection, restarts at 0 with the agent"),
    F_UINT(proto_hints, uptime_ms, REQ, 0, UINT64_MAX - 1, 0,
           "guest uptime (CLOCK_BOOTTIME) at the collection, in milliseconds"),
    F_ARRAY(proto_hints, processes, REQ, 0, PROTO_MAX_PROCESSES, process_elem, PROTO_TOTAL_NONE,
            "the top processes by recent runtime, busiest first"),
};
static const proto_object hints_object = OBJECT("hint set", proto_hints, hints_fields, NULL, NULL);

/* ---- errors ---- */

static const proto_field error_fields[] = {
    F_STRING(proto_error_reply, class, REQ, 1, PROTO_MAX_CLASS,
             "`CommandNotFound` for an unknown command, `GenericError` otherwise"),
    F_STRING(proto_error_reply, desc, REQ, 0, PROTO_MAX_DESC, "a human-readable reason"),
};
const proto_object proto_error_object =
    OBJECT("error", proto_error_reply, error_fields, NULL, NULL);

/* ---- the messages ---- */

const proto_message proto_messages[PROTO_MSG_MAX] = {
    [PROTO_MSG_HELLO] =
        {
            .msg = PROTO_MSG_HELLO,
            .name = "vnuma-hello",
            .since = 1,
            .handshake = true,
            .open_since = 0,
            .direction = "host -> guest",
            .arguments = &hello_object,
            .reply_kind = PROTO_REPLY_HELLO,
            .reply = &hello_reply_object,
            .doc = "The first request on every connection (and after any error reply naming "
                   "the version): the host lists the versions it speaks and its capabilities; "
                   "the agent answers with the version chosen, which every later message "
                   "follows. An agent that shares no version with the host answers with an "
                   "error. Both objects are open in every version: unknown fields are ignored, "
                   "so that either side can be newer.",
        },
    [PROTO_MSG_GET_HINTS] =
        {
            .msg = PROTO_MSG_GET_HINTS,
            .name = "vnuma-get-hints",
            .since = 1,
            .handshake = false,
            .open_since = PROTO_NEVER,
            .direction = "host -> guest",
            .arguments = &get_hints_object,
            .reply_kind = PROTO_REPLY_HINTS,
            .reply = &hints_object,
            .doc = "The host asks for the latest hint set and tells the agent how to collect "
                   "the next ones (interval, number of processes, scan budget). Valid only after "
                   "a hello. The agent answers with its most recent collection.",
        },
};

const proto_capability proto_capabilities[PROTO_CAP_MAX] = {
    [PROTO_CAP_FLUSH] = {PROTO_CAP_FLUSH, "flush", 1, "host",
                         "the host may send a 0xFF byte before a request to flush the agent's "
                         "parser (every agent must accept it; this only announces it)"},
    [PROTO_CAP_NODE_PAGES] = {PROTO_CAP_NODE_PAGES, "node-pages", 1, "guest",
                              "processes carry `node_pages`"},
    [PROTO_CAP_HOT_RANGES] = {PROTO_CAP_HOT_RANGES, "hot-ranges", 1, "guest",
                              "processes carry hot `ranges` (the agent can read pagemap PFNs: "
                              "root in the guest)"},
};

const proto_total_desc proto_totals[PROTO_TOTAL_MAX] = {
    [PROTO_TOTAL_NONE] = {"", 0},
    [PROTO_TOTAL_RANGES] = {"ranges in one hint set", PROTO_MAX_RANGES},
};

const proto_version_desc proto_versions[] = {
    {1, "hello, get-hints, hint sets with per-node pages and hot ranges"},
};
const unsigned proto_nr_versions = sizeof(proto_versions) / sizeof(proto_versions[0]);

#define LIMIT(n, text, hit)                                                                        \
    {                                                                                              \
#n, (n), (text), (hit)                                                                     \
    }

const proto_limit proto_limits[] = {
    LIMIT(PROTO_MAX_LINE, "bytes of one message, including its newline",
          "the receiver drops the line up to the next newline (`oversize`), then reads on"),
    LIMIT(PROTO_MAX_DEPTH, "nesting of objects and arrays (a hint set needs 6)",
          "message refused (`depth`)"),
    LIMIT(PROTO_MAX_CONTAINERS,
          "objects and arrays in one message (bounds what the JSON parser allocates)",
          "message refused before parsing (`limit`)"),
    LIMIT(PROTO_MAX_PROCESSES, "processes in one hint set; `max_processes` at most this",
          "message refused (`limit`)"),
    LIMIT(PROTO_MAX_PROC_VCPUS, "vCPUs listed for one process", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_VCPUS, "guest vCPUs: vCPU numbers are below this", "message refused (`range`)"),
    LIMIT(PROTO_MAX_NODES, "guest NUMA nodes, `node_pages` entries per process",
          "message refused (`limit`, `range`)"),
    LIMIT(PROTO_MAX_NODE_PAGES, "pages one process may claim on one node",
          "message refused (`range`)"),
    LIMIT(PROTO_MAX_PROC_RANGES, "hot ranges of one process", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_RANGES, "hot ranges in one hint set, all processes together",
          "message refused (`limit`)"),
    LIMIT(PROTO_PAGE_SIZE, "alignment of `gpa` and `length`", "message refused (`range`)"),
    LIMIT(PROTO_GPA_LIMIT, "end of the guest-physical address space (2^52)",
          "message refused (`range`)"),
    LIMIT(PROTO_MAX_HEAT, "largest heat", "message refused (`range`)"),
    LIMIT(PROTO_MAX_COMM, "bytes of `comm`", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_AGENT, "bytes of the agent version string", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_COMMAND, "bytes of a command name", "request refused (`limit`)"),
    LIMIT(PROTO_MAX_CAP, "bytes of a capability name", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_CAPS, "capabilities in one hello", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_VERSIONS, "versions in one hello", "message refused (`limit`)"),
    LIMIT(PROTO_MAX_CLASS, "bytes of an error class", "reply refused (`limit`)"),
    LIMIT(PROTO_MAX_DESC, "bytes of an error description", "reply refused (`limit`)"),
    LIMIT(PROTO_RATE_PER_SEC, "messages per second a host accepts from one guest, on average",
          "the message is dropped unread (`rate`)"),
    LIMIT(PROTO_RATE_BURST, "messages a host accepts from one guest in a burst",
          "the message is dropped unread (`rate`)"),
};
const unsigned proto_nr_limits = sizeof(proto_limits) / sizeof(proto_limits[0]);

const char *const proto_error_docs[PROTO_ERR_MAX] = {
    [PROTO_OK] = "no error",
    [PROTO_ERR_OVERSIZE] = "a line longer than `PROTO_MAX_LINE` bytes",
    [PROTO_ERR_DEPTH] = "objects and arrays nested deeper than `PROTO_MAX_DEPTH`",
    [PROTO_ERR_SYNTAX] = "not one JSON object: bad JSON, single-quoted strings, raw control "
                         "bytes in strings, NUL bytes, data after the object",
    [PROTO_ERR_UTF8] = "invalid UTF-8 (overlong forms, surrogates, beyond U+10FFFF), or a NUL "
                       "character (`\\u0000`) in a string or key",
    [PROTO_ERR_TYPE] = "a value of the wrong JSON type (`1.0` is not an integer), or a line that "
                       "is not a request or reply",
    [PROTO_ERR_RANGE] = "a number outside its range (negative, too large), an unaligned address "
                        "or length, a range past 2^52, too few entries",
    [PROTO_ERR_LIMIT] = "too many entries or objects, or a string too long",
    [PROTO_ERR_MISSING] = "a required field is absent",
    [PROTO_ERR_UNKNOWN] = "a field that the negotiated version does not have, in a closed object",
    [PROTO_ERR_DUPLICATE] = "a key twice in one object, a pid twice in a hint set, a vCPU or "
                            "version twice in a list",
    [PROTO_ERR_COMMAND] = "an unknown command (error class `CommandNotFound`)",
    [PROTO_ERR_VERSION] = "a message the negotiated version does not have (or no hello yet), "
                          "or no common version",
    [PROTO_ERR_ID] = "a reply whose id is not the outstanding request's (late, duplicate or "
                     "unsolicited)",
    [PROTO_ERR_RATE] = "more messages than the rate limit allows",
    [PROTO_ERR_NOMEM] = "out of memory",
};

void *proto_request_args(proto_request *r)
{
    switch (r->msg) {
    case PROTO_MSG_HELLO:
        return &r->hello;
    case PROTO_MSG_GET_HINTS:
        return &r->get_hints;
    default:
        return NULL;
    }
}

void *proto_reply_value(proto_reply *r, proto_reply_kind kind)
{
    switch (kind) {
    case PROTO_REPLY_HELLO:
        return &r->hello;
    case PROTO_REPLY_HINTS:
        return &r->hints;
    case PROTO_REPLY_ERROR:
        return &r->error;
    default:
        return NULL;
    }
}

static int check_field(const proto_object *o, const proto_field *f, char *err, size_t errlen);

static int check_object(const proto_object *o, char *err, size_t errlen)
{
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        int r;

        if (f->offset + (f->type == PROTO_T_OBJECT ? 0 : f->width) > o->size)
            goto bad;
        for (unsigned j = 0; j < i; j++)
            if (strcmp(o->fields[j].name, f->name) == 0)
                goto bad;
        r = check_field(o, f, err, errlen);
        if (r < 0)
            return r;
        continue;
    bad:
        (void)snprintf(err, errlen, "%s.%s: bad descriptor", o->name, f->name);
        return -EINVAL;
    }
    return 0;
}

static int check_field(const proto_object *o, const proto_field *f, char *err, size_t errlen)
{
    bool ok = f->since >= 1 && f->since <= PROTO_VERSION_MAX && f->min <= f->max;

    switch (f->type) {
    case PROTO_T_UINT:
        ok = ok && (f->width == 4 || f->width == 8) && (f->width == 8 || f->max <= UINT32_MAX) &&
             (f->align == 0 || (f->min % f->align == 0 && f->max % f->align == 0));
        break;
    case PROTO_T_STRING:
        ok = ok && f->max + 1 <= f->width;
        break;
    case PROTO_T_ARRAY:
        ok = ok && f->elem && f->width == sizeof(void *) &&
             f->count_offset + sizeof(unsigned) <= o->size &&
             (f->elem->type == PROTO_T_UINT || f->elem->type == PROTO_T_OBJECT) &&
             f->max <= UINT32_MAX && (f->total == PROTO_TOTAL_NONE || f->total < PROTO_TOTAL_MAX);
        if (ok && f->elem->type == PROTO_T_UINT)
            ok = check_field(o, f->elem, err, errlen) == 0;
        if (ok && f->elem->type == PROTO_T_OBJECT)
            return check_object(f->elem->object, err, errlen);
        break;
    case PROTO_T_VERSIONS:
    case PROTO_T_CAPS:
        ok = ok && f->width == sizeof(uint64_t);
        break;
    default:
        ok = false;
    }
    if (!ok) {
        (void)snprintf(err, errlen, "%s.%s: bad descriptor", o->name, f->name);
        return -EINVAL;
    }
    return 0;
}

int proto_schema_check(char *err, size_t errlen)
{
    int r;

    for (unsigned m = 0; m < PROTO_MSG_MAX; m++) {
        const proto_message *msg = &proto_messages[m];

        if (msg->msg != m || !msg->name || strlen(msg->name) > PROTO_MAX_COMMAND ||
            msg->since < 1 || msg->since > PROTO_VERSION_MAX) {
            (void)snprintf(err, errlen, "message %u: bad descriptor", m);
            return -EINVAL;
        }
        r = check_object(msg->arguments, err, errlen);
        if (r < 0)
            return r;
        r = check_object(msg->reply, err, errlen);
        if (r < 0)
            return r;
    }
    for (unsigned c = 0; c < PROTO_CAP_MAX; c++) {
        const proto_capability *cap = &proto_capabilities[c];

        if (cap->cap != c || !cap->name || strlen(cap->name) > PROTO_MAX_CAP) {
            (void)snprintf(err, errlen, "capability %u: bad descriptor", c);
            return -EINVAL;
        }
    }
    for (unsigned e = 0; e < PROTO_ERR_MAX; e++) {
        if (!proto_error_docs[e]) {
            (void)snprintf(err, errlen, "error kind %u: no description", e);
            return -EINVAL;
        }
    }
    return check_object(&proto_error_object, err, errlen);
}
