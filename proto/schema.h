/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The protocol declared once (internal to proto/): the descriptor types of
 * the message table in schema.c. codec.c decodes, encode.c encodes and value.c
 * frees and compares by walking these descriptors, doc.c prints docs/PROTOCOL.md
 * from them; none knows a message by heart.
 */
#pragma once

#include "proto.h"

/* open_since value: unknown fields are never ignored. */
#define PROTO_NEVER UINT32_MAX

typedef enum proto_type {
    PROTO_T_UINT,     /* integer min..max, a multiple of align; stored in `width` bytes */
    PROTO_T_STRING,   /* UTF-8, min..max bytes, no NUL; stored NUL-terminated in char[width] */
    PROTO_T_OBJECT,   /* a JSON object described by .object, stored inline */
    PROTO_T_ARRAY,    /* min..max elements .elem: a malloc'd array at offset, its count an
                         unsigned at count_offset */
    PROTO_T_VERSIONS, /* min..max distinct version numbers 1..PROTO_VERSION_LIMIT: a uint64_t
                         bit set */
    PROTO_T_CAPS,     /* min..max capability names of 1..PROTO_MAX_CAP bytes: a uint64_t bit
                         set of the known ones (unknown names are ignored) */
    PROTO_T_MAX
} proto_type;

/* Field flags. */
#define PROTO_F_REQUIRED (1u << 0) /* absent: PROTO_ERR_MISSING */
#define PROTO_F_UNIQUE   (1u << 1) /* array of integers: no value twice */
#define PROTO_F_KEY      (1u << 2) /* integer field of an array's objects: unique among them */

/* Message-wide counters of entries (PROTO_T_ARRAY .total). */
typedef enum proto_total { PROTO_TOTAL_NONE, PROTO_TOTAL_RANGES, PROTO_TOTAL_MAX } proto_total;

typedef struct proto_object proto_object;

typedef struct proto_field {
    const char *name;
    proto_type type;
    unsigned flags;
    unsigned since;      /* the protocol version that added the field */
    uint64_t min, max;   /* value (UINT), bytes (STRING), entries (ARRAY, VERSIONS, CAPS) */
    uint64_t align;      /* UINT: the value is a multiple of this (0: any) */
    size_t offset;       /* where the value goes in the C struct */
    size_t width;        /* UINT: bytes of the member (4, 8); STRING: sizeof the char array */
    size_t count_offset; /* ARRAY: where the unsigned count goes */
    const struct proto_field *elem; /* ARRAY: the element (name unused, offset 0) */
    const proto_object *object;     /* OBJECT */
    proto_total total;              /* ARRAY: also counted message-wide against proto_totals[] */
    const char *doc;
} proto_field;

struct proto_object {
    const char *name; /* for docs and errors: "process" */
    size_t size;      /* sizeof the C struct */
    const proto_field *fields;
    unsigned nr_fields;
    /* Relations between fields that no single field descriptor expresses: returns 0 or
     * a proto_error and a reason. NULL: none. */
    int (*check)(const void *value, char *why, size_t len);
    const char *check_doc;
};

typedef struct proto_message {
    proto_msg msg;
    const char *name;
    unsigned since;
    bool handshake;      /* decodable before a version is negotiated; read with every field
                            this build knows */
    unsigned open_since; /* unknown fields ignored from this version on (0: always, PROTO_NEVER:
                            never) */
    const char *direction;
    const proto_object *arguments;
    proto_reply_kind reply_kind;
    const proto_object *reply;
    const char *doc;
} proto_message;

typedef struct proto_capability {
    proto_cap cap;
    const char *name;
    unsigned since;
    const char *sender; /* "host", "guest" */
    const char *doc;
} proto_capability;

typedef struct proto_total_desc {
    const char *what;
    uint64_t max;
} proto_total_desc;

/* A named limit for the documentation: constant, value, meaning, what happens when hit. */
typedef struct proto_limit {
    const char *name;
    uint64_t value;
    const char *doc;
    const char *when_hit;
} proto_limit;

typedef struct proto_version_desc {
    unsigned version;
    const char *doc;
} proto_version_desc;

extern const proto_message proto_messages[PROTO_MSG_MAX];
extern const proto_object proto_error_object;
extern const proto_capability proto_capabilities[PROTO_CAP_MAX];
extern const proto_total_desc proto_totals[PROTO_TOTAL_MAX];
extern const proto_limit proto_limits[];
extern const unsigned proto_nr_limits;
extern const proto_version_desc proto_versions[];
extern const unsigned proto_nr_versions;
/* One-line descriptions of the error kinds, index = proto_error. */
extern const char *const proto_error_docs[PROTO_ERR_MAX];

/* Check the table itself (widths hold the limits, strings fit their arrays, ...):
 * 0, or -EINVAL naming the first bad descriptor in err. For the tests. */
int proto_schema_check(char *err, size_t errlen);

/* The C struct that holds a message's arguments / reply is the union member of
 * proto_request / proto_reply; these return its address. */
void *proto_request_args(proto_request *r);
void *proto_reply_value(proto_reply *r, proto_reply_kind kind);

/* Generic encoder into a json_object (json-c), used by the doc generator for examples. */
struct json_object;
int proto_encode_value(const proto_object *o, const void *src, unsigned version,
                       struct json_object **ret);

/* ---- values (value.c) ---- */

/* The unsigned integer of `width` bytes (4 or 8) at p. */
void proto_store_uint(void *p, size_t width, uint64_t v);
uint64_t proto_load_uint(const void *p, size_t width);

/* Bytes of one element of an array field. */
size_t proto_elem_size(const proto_field *elem);

/* Free the n elements of array field f at arr (their own arrays too), and arr. NULL-safe. */
void proto_free_array(const proto_field *f, void *arr, size_t n);

/* Free every array that the object at p owns (recursively); p itself is not freed. */
void proto_free_object(const proto_object *o, void *p);
