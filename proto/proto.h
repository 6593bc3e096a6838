/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vnuma guest protocol: the one codec that vnumad (host) and vnuma-agent
 * (guest) share. docs/PROTOCOL.md describes the wire format; it is generated
 * from the message table in proto/schema.c, which also drives every decoder
 * and encoder below.
 *
 * Wire: one JSON object per line, at most PROTO_MAX_LINE bytes including the
 * '\n'. A 0xFF byte drops the partial line (resynchronisation). Requests go
 * host -> guest: {"execute": NAME, "arguments": {...}, "id": N}; replies
 * {"return": {...}, "id": N} or {"error": {"class": C, "desc": D}, "id": N}.
 *
 * Everything the peer sends is untrusted. Decoders check the whole line
 * against the table (types, ranges, counts, string lengths, unknown and
 * duplicate fields) and write their out-parameter only when all of it is
 * valid, so a bad message is never half-applied. They return 0 or
 * -PROTO_ERR_* (a negative proto_error), and describe the problem in err.
 *
 * Nothing here does I/O, reads a clock or logs.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- versions and limits (docs/PROTOCOL.md lists them, from the table) ---- */

/* Protocol versions this build speaks. */
#define PROTO_VERSION_MIN 1u
#define PROTO_VERSION_MAX 1u
/* Largest version number a hello may mention (versions travel as a 64-bit set). */
#define PROTO_VERSION_LIMIT 63u

/* Bytes of one message including its '\n'. */
#define PROTO_MAX_LINE 65536u
/* Nesting of JSON objects and arrays (a hint set needs 6). */
#define PROTO_MAX_DEPTH 8
/* Objects and arrays in one message (a full hint set has fewer than 800): bounds what
 * json-c allocates for a hostile line ("[{},{},...]" would otherwise cost ~16 MiB). */
#define PROTO_MAX_CONTAINERS 2048u
/* Processes per hint set. */
#define PROTO_MAX_PROCESSES 64u
/* Guest vCPUs (vCPU numbers are below this) and vCPUs listed per process. */
#define PROTO_MAX_VCPUS      1024u
#define PROTO_MAX_PROC_VCPUS 256u
/* Guest NUMA nodes (node_pages entries per process). */
#define PROTO_MAX_NODES 64u
/* Resident 4 KiB pages one process may claim on one node (4 PiB). */
#define PROTO_MAX_NODE_PAGES (1ull << 40)
/* Hot ranges per process and per hint set. */
#define PROTO_MAX_PROC_RANGES 64u
#define PROTO_MAX_RANGES      512u
/* Guest-physical addresses: ranges are PROTO_PAGE_SIZE aligned and end at or below
 * PROTO_GPA_LIMIT (x86-64's 52-bit physical address space). */
#define PROTO_PAGE_SIZE 4096u
#define PROTO_GPA_LIMIT (1ull << 52)
/* Heat of a range: 0 (cold) .. PROTO_MAX_HEAT (hottest). */
#define PROTO_MAX_HEAT 1000u
/* String lengths in bytes (UTF-8, no NUL). */
#define PROTO_MAX_COMM    16u
#define PROTO_MAX_AGENT   64u
#define PROTO_MAX_COMMAND 64u
#define PROTO_MAX_CAP     32u
#define PROTO_MAX_CLASS   32u
#define PROTO_MAX_DESC    256u
/* Entries of the capability and version lists of a hello. */
#define PROTO_MAX_CAPS     16u
#define PROTO_MAX_VERSIONS 16u
/* vnuma-get-hints arguments. */
#define PROTO_MIN_INTERVAL_MS 100u
#define PROTO_MAX_INTERVAL_MS 3600000u
#define PROTO_MAX_SCAN_MIB    (1u << 20)
/* Messages a host accepts from one guest: PROTO_RATE_PER_SEC on average, bursts of
 * PROTO_RATE_BURST (a host asks at most every PROTO_MIN_INTERVAL_MS). */
#define PROTO_RATE_PER_SEC 20u
#define PROTO_RATE_BURST   40u

/* The byte that drops the receiver's partial line. */
#define PROTO_RESYNC_BYTE 0xFF

/* ---- errors ---- */

/* Error kinds: decoders return -PROTO_ERR_*, and hosts count them per peer. */
typedef enum proto_error {
    PROTO_OK = 0,
    PROTO_ERR_OVERSIZE,  /* line longer than PROTO_MAX_LINE */
    PROTO_ERR_DEPTH,     /* nesting deeper than PROTO_MAX_DEPTH */
    PROTO_ERR_SYNTAX,    /* not one JSON object (incl. single quotes, raw control bytes) */
    PROTO_ERR_UTF8,      /* invalid UTF-8, or a NUL character in a string or key */
    PROTO_ERR_TYPE,      /* a value of the wrong JSON type, or not a request/reply */
    PROTO_ERR_RANGE,     /* a number outside its range, unaligned, or a range that wraps */
    PROTO_ERR_LIMIT,     /* too many entries or objects, or a string too long */
    PROTO_ERR_MISSING,   /* a required field is absent */
    PROTO_ERR_UNKNOWN,   /* a field the negotiated version does not have */
    PROTO_ERR_DUPLICATE, /* a key twice in one object, a pid or vCPU listed twice */
    PROTO_ERR_COMMAND,   /* unknown command (error class CommandNotFound) */
    PROTO_ERR_VERSION,   /* message not in the negotiated version, or no common version */
    PROTO_ERR_ID,        /* reply id is not the outstanding request's */
    PROTO_ERR_RATE,      /* over the peer's message rate */
    PROTO_ERR_NOMEM,     /* out of memory */
    PROTO_ERR_MAX
} proto_error;

/* "oversize", "depth", ...: stable names for counters and logs; "invalid" when out of range. */
const char *proto_error_name(proto_error e);

/* The qemu-guest-agent error class for an error reply: "CommandNotFound" for
 * PROTO_ERR_COMMAND, "GenericError" otherwise. */
const char *proto_error_class(proto_error e);

/* ---- messages ---- */

typedef enum proto_msg {
    PROTO_MSG_HELLO,     /* vnuma-hello */
    PROTO_MSG_GET_HINTS, /* vnuma-get-hints */
    PROTO_MSG_MAX
} proto_msg;

/* Capabilities (bit (1 << PROTO_CAP_x) of a capability set). Unknown names are ignored. */
typedef enum proto_cap {
    PROTO_CAP_FLUSH,      /* host: may send 0xFF before a request */
    PROTO_CAP_NODE_PAGES, /* guest: fills node_pages */
    PROTO_CAP_HOT_RANGES, /* guest: fills ranges (pagemap, needs root in the guest) */
    PROTO_CAP_MAX
} proto_cap;

#define PROTO_CAP_BIT(c) (UINT64_C(1) << (c))

/* Host -> guest arguments of vnuma-hello. versions: bit v set when the host speaks v. */
typedef struct proto_hello {
    uint64_t versions;
    uint64_t caps;
} proto_hello;

/* Host -> guest arguments of vnuma-get-hints. */
typedef struct proto_get_hints {
    uint32_t interval_ms;     /* how often the agent collects */
    uint32_t max_processes;   /* top N processes by recent runtime */
    uint32_t scan_budget_mib; /* rule 4's scan budget per collection */
} proto_get_hints;

typedef struct proto_request {
    proto_msg msg;
    uint32_t id;
    union {
        proto_hello hello;
        proto_get_hints get_hints;
    };
} proto_request;

/* Guest -> host reply to vnuma-hello. */
typedef struct proto_hello_reply {
    uint32_t version;                /* chosen, one the host offered */
    char agent[PROTO_MAX_AGENT + 1]; /* agent version string */
    uint64_t caps;                   /* known capabilities of the agent */
    uint32_t nodes;                  /* guest NUMA nodes the agent sees */
    uint32_t vcpus;                  /* guest vCPUs the agent sees */
} proto_hello_reply;

/* A guest-physical range [gpa, gpa + length). */
typedef struct proto_gpa_range {
    uint64_t gpa;
    uint64_t length;
} proto_gpa_range;

typedef struct proto_range {
    uint64_t gpa;    /* PROTO_PAGE_SIZE aligned */
    uint64_t length; /* > 0, PROTO_PAGE_SIZE multiple, gpa + length <= PROTO_GPA_LIMIT */
    uint32_t heat;   /* 0 .. PROTO_MAX_HEAT */
} proto_range;

typedef struct proto_process {
    int32_t pid;                   /* > 0, unique in the hint set */
    char comm[PROTO_MAX_COMM + 1]; /* valid UTF-8 */
    uint32_t *vcpus;               /* guest vCPUs its threads ran on recently, unique */
    unsigned nr_vcpus;
    uint64_t *node_pages; /* resident pages, index = guest node */
    unsigned nr_node_pages;
    proto_range *ranges; /* hot guest-physical ranges */
    unsigned nr_ranges;
} proto_process;

/* A hint set: the reply to vnuma-get-hints. Owns its arrays (proto_hints_free()). */
typedef struct proto_hints {
    uint64_t seq;
    uint64_t uptime_ms;
    proto_process *processes;
    unsigned nr_processes;
} proto_hints;

typedef struct proto_error_reply {
    char class[PROTO_MAX_CLASS + 1];
    char desc[PROTO_MAX_DESC + 1];
} proto_error_reply;

typedef enum proto_reply_kind {
    PROTO_REPLY_HELLO,
    PROTO_REPLY_HINTS,
    PROTO_REPLY_ERROR,
    PROTO_REPLY_MAX
} proto_reply_kind;

/* A decoded reply: kind says which member is valid. Clear with proto_reply_clear(). */
typedef struct proto_reply {
    proto_reply_kind kind;
    uint32_t id;
    union {
        proto_hello_reply hello;
        proto_hints hints;
        proto_error_reply error;
    };
} proto_reply;

/* ---- framing ---- */

/*
 * A stream reader: feed it bytes as they arrive, get complete lines back.
 * Fixed memory (PROTO_MAX_LINE bytes), no allocation. A line is returned
 * without its '\n' and without one '\r' before it; empty lines are skipped.
 * A 0xFF byte drops the partial line; a line longer than PROTO_MAX_LINE is
 * dropped up to the next '\n' and reported once.
 */
typedef struct proto_reader {
    size_t len;        /* bytes of the partial line in buf */
    bool discarding;   /* dropping an overlong line up to the next '\n' */
    uint64_t lines;    /* complete lines returned */
    uint64_t oversize; /* lines dropped for length */
    uint64_t resyncs;  /* 0xFF bytes that dropped a partial line */
    char buf[PROTO_MAX_LINE];
} proto_reader;

void proto_reader_init(proto_reader *r);

/*
 * Consume bytes of data[0..len) up to the end of the first complete line and
 * set *ret_used to how many were consumed. Returns:
 *   1  a line: *ret_line (NUL-terminated, valid until the next call) and *ret_linelen;
 *   0  all len bytes consumed, no line complete yet;
 *   -PROTO_ERR_OVERSIZE  the partial line just went over PROTO_MAX_LINE: it is being
 *      dropped up to the next '\n' (reported once per line, counted in r->oversize).
 * Call it again with data + *ret_used until everything is used.
 */
int proto_reader_feed(proto_reader *r, const void *data, size_t len, size_t *ret_used,
                      const char **ret_line, size_t *ret_linelen);

/* Bytes of the unfinished line held (0 while discarding): lets a host time out a
 * peer that never finishes its line. */
size_t proto_reader_pending(const proto_reader *r);

/* ---- rate limit ---- */

/* A token bucket: per_sec messages per second on average, bursts of up to burst. */
typedef struct proto_rate {
    uint32_t per_sec;
    uint32_t burst;
    uint64_t millitokens; /* tokens * 1000 */
    uint64_t last_ms;
    bool started;
    uint64_t dropped; /* messages refused */
} proto_rate;

/* A full bucket. per_sec and burst must be > 0. */
void proto_rate_init(proto_rate *rl, uint32_t per_sec, uint32_t burst);

/* Take one token at time now_ms (any monotonic clock in milliseconds). Returns
 * true when the message may be processed; false (and counts it) when over the
 * rate: the caller drops the message and counts PROTO_ERR_RATE. */
bool proto_rate_allow(proto_rate *rl, uint64_t now_ms);

/* ---- decoding ---- */

/* What a host waits for: the reply to request `id`, of message `msg`, in
 * negotiated version `version` (0 before the hello reply arrived). */
typedef struct proto_expect {
    proto_msg msg;
    uint32_t id;
    unsigned version;
} proto_expect;

/*
 * Host side: decode one line (from proto_reader) as the reply to *expect.
 * Returns 0 and fills *ret (the caller owns it: proto_reply_clear()), or
 * -PROTO_ERR_* with a one-line reason in err ("return.processes[3].ranges[0].gpa:
 * not a multiple of 4096"); *ret is untouched then. expect may be NULL when no
 * request is outstanding: every reply is then -PROTO_ERR_ID.
 */
int proto_decode_reply(const char *line, size_t len, const proto_expect *expect, proto_reply *ret,
                       char *err, size_t errlen);

/*
 * Guest side: decode one line as a request in negotiated version `version`
 * (0 before a hello: only vnuma-hello is accepted then). Returns 0 and fills
 * *ret, or -PROTO_ERR_* with the reason in err. Exception to the out-parameter
 * rule: *ret_id is set whenever the request's id was readable, on failure too,
 * so the agent can address its error reply; it is set to 0 otherwise (ids the
 * host uses start at 1).
 */
int proto_decode_request(const char *line, size_t len, unsigned version, proto_request *ret,
                         uint32_t *ret_id, char *err, size_t errlen);

/* Free what a decoded reply owns (the hint set's arrays) and zero it. NULL is fine. */
void proto_reply_clear(proto_reply *r);

/* Free a hint set's arrays and zero it. NULL is fine. */
void proto_hints_free(proto_hints *h);

/* Field-by-field equality of two hint sets (tests and the fuzzer's round trip). */
bool proto_hints_equal(const proto_hints *a, const proto_hints *b);

/* ---- encoding ---- */

/*
 * Each encoder returns 0 and a malloc'd, NUL-terminated line ending in "\n"
 * (*ret_line, *ret_len without the NUL), or -PROTO_ERR_*: every encoded
 * message is decoded again before it is handed out, so an encoder never
 * produces what the peer's decoder would refuse (-PROTO_ERR_OVERSIZE: too big
 * for one line; the agent then reports fewer processes).
 */
int proto_encode_hello(uint32_t id, const proto_hello *h, char **ret_line, size_t *ret_len);
int proto_encode_get_hints(uint32_t id, const proto_get_hints *g, char **ret_line, size_t *ret_len);
int proto_encode_hello_reply(uint32_t id, const proto_hello_reply *h, char **ret_line,
                             size_t *ret_len);
int proto_encode_hints_reply(uint32_t id, const proto_hints *h, char **ret_line, size_t *ret_len);
/* An error reply. class and desc are cut to their limits and every byte outside
 * printable ASCII becomes '?', so any text can be passed (strerror(), a decoder's err). */
int proto_encode_error(uint32_t id, const char *class, const char *desc, char **ret_line,
                       size_t *ret_len);

/* ---- negotiation ---- */

/* The version a guest chooses from the host's set: the highest both speak, 0 when none. */
unsigned proto_choose_version(uint64_t host_versions);

/* The capability set this build knows of (others are ignored when decoding). */
uint64_t proto_known_caps(void);

/* Copy a process name into dst (PROTO_MAX_COMM + 1 bytes) so that it is valid
 * for the wire: cut at PROTO_MAX_COMM bytes on a character boundary, invalid
 * UTF-8 and control bytes replaced by '?'. For the agent, which reads comm
 * from /proc where any bytes may appear. */
void proto_sanitize_comm(char *dst, const char *src);

/* ---- domain bounds (host side) ---- */

/*
 * Drop from a decoded hint set what the domain cannot have: vCPU numbers not
 * below nr_vcpus, node_pages entries at or beyond nr_nodes, and ranges not
 * inside the guest RAM ranges ram[0..nr_ram) (a range may span adjacent RAM
 * ranges). Processes are kept (their lists may become empty). Returns the
 * number of entries dropped (0: nothing was out of bounds) and describes the
 * first one in err ("pid 812: vCPU 9 is not below 4").
 */
int proto_hints_check_bounds(proto_hints *h, unsigned nr_vcpus, unsigned nr_nodes,
                             const proto_gpa_range *ram, unsigned nr_ram, char *err, size_t errlen);

/* ---- documentation ---- */

/* Write docs/PROTOCOL.md, generated from the message table, to f. Returns 0 or -errno. */
int proto_doc_write(FILE *f);
