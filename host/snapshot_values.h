/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checked values the snapshot parser (snapshot.c) builds a snapshot from: integers,
 * node numbers, fields of objects, memory bindings, CPU lists. Private to the two files.
 *
 * Each function takes one JSON value, checks it completely (type, range, unknown fields,
 * counts) and writes its out-parameter only on success. The JSON path of the value being
 * checked is kept in snap_ctx.path, so the one place that detects an error also formats
 * it, once, as "ORIGIN: PATH: reason", and returns -EINVAL (-E2BIG over a limit).
 *
 * The snap_field_* functions read member `key` of an object: they return 1 when it is
 * present and valid, 0 when it is absent and not required, or a negative errno.
 */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "json.h"
#include "model.h"
#include "topology.h"

/* Largest kernel node number accepted before the topology lookup. */
#define SNAP_MAX_NODE_NUMBER INT_MAX
/* Room for the deepest path ("domains[4095].cells[63].hints.hot_ranges[255].length") plus a
 * quoted unknown key. */
#define SNAP_PATH_MAX 256
/* Bytes of an unknown key, or of a bad value, quoted in an error message. */
#define SNAP_SHOWN_MAX 48
/* Bytes of the reason part of an error message. */
#define SNAP_REASON_MAX 512

typedef struct snap_ctx {
    const char *origin;
    const topology *t;
    char *err;
    size_t errlen;
    vn_jpath path;
} snap_ctx;

/* ---- paths and errors ---- */

/* The JSON path of the value being checked (lib/json.h). */
#define PATH_IDENT "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
#define copy_shown(dst, dstlen, src, srclen)                                                       \
    vn_shown((dst), (dstlen), (src), (srclen), SNAP_SHOWN_MAX)
#define SNAP_CTX_PATH                                                                              \
    {                                                                                              \
        .cap = SNAP_PATH_MAX, .shown_max = SNAP_SHOWN_MAX, .ident = PATH_IDENT                     \
    }

/* Format "ORIGIN: PATH: reason" (or "ORIGIN: reason" at the top level) and return error. */
int snap_fail(snap_ctx *c, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- values ---- */

/*
 * An integer in 0..max. json-c saturates integers it cannot represent (in strict mode
 * too) to INT64_MIN / UINT64_MAX; those two values are therefore refused everywhere.
 */
int snap_parse_uint(snap_ctx *c, struct json_object *v, uint64_t max, uint64_t *out);

/* A pages-object key: a node number in canonical decimal ("0", "17"; not "01", "-1", "+1"),
 * to its topology node index. */
int snap_parse_node_key(snap_ctx *c, const char *key, int *ret_index);

/* An array of distinct node numbers, at least one, to a set of node indexes. */
int snap_parse_node_set(snap_ctx *c, struct json_object *v, vn_nodeset *out);

/* {"mode": "strict"|..., "nodes": [...]}: nodes non-empty unless mode is "none". */
int snap_parse_binding(snap_ctx *c, struct json_object *obj, vn_mem_binding *out);

/* A non-empty CPU list string whose CPUs all belong to the topology. */
int snap_parse_cpulist(snap_ctx *c, struct json_object *v, vn_cpuset *out);

/* ---- containers ---- */

int snap_expect_object(snap_ctx *c, struct json_object *v);

/* An array of min..max entries; more than max is -E2BIG. */
int snap_expect_array(snap_ctx *c, struct json_object *v, size_t min, size_t max, size_t *ret_n);

/* Refuse every key of obj that is not in the NULL-terminated list `known`. */
int snap_check_fields(snap_ctx *c, struct json_object *obj, const char *const *known);

/* snap_expect_object() and snap_check_fields(): an object with only `known` keys. */
int snap_expect_fields(snap_ctx *c, struct json_object *obj, const char *const *known);

/* Member `key` in *v; when present, push ".key" onto the path (*mark restores it). */
int snap_field_enter(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                     struct json_object **v, size_t *mark);

/* After checking a present field with result r: pop its path and return 1, or return r. */
int snap_field_leave(snap_ctx *c, size_t mark, int r);

int snap_field_uint(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                    uint64_t max, uint64_t *out);
int snap_field_int(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                   int64_t min, int64_t max, int64_t *out);
int snap_field_number(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                      double min, double max, double *out);
int snap_field_bool(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                    bool *out);
/* A node number to its node index; allow_none accepts -1 (no node) as -1. */
int snap_field_node(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                    bool allow_none, int *out);

/*
 * A string (*out, *len: borrowed from obj). Leaves the path pointing at the field on
 * success too, so the caller can go on checking the string's content; the caller pops it
 * with vn_path_pop(c, *mark).
 */
int snap_field_string(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                      const char **out, size_t *len, size_t *mark);

/* A required string field `key` that from_name() knows (mode_from_name, ...): *ret is its
 * value; an unknown name is "expected EXPECTED". */
int snap_field_name(snap_ctx *c, struct json_object *obj, const char *key,
                    int (*from_name)(const char *s, size_t len), const char *expected, int *ret);
