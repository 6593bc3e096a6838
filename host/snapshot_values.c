/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checked values of a snapshot (snapshot_values.h): errors with JSON paths, integers,
 * numbers, strings, node numbers, fields of objects, memory bindings, CPU lists.
 */
#include "snapshot_values.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- paths and errors ---- */

int snap_fail(snap_ctx *c, int error, const char *fmt, ...)
{
    char reason[SNAP_REASON_MAX];
    va_list ap;

    if (!c->err || c->errlen == 0)
        return error;
    va_start(ap, fmt);
    (void)vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (c->path.len)
        (void)snprintf(c->err, c->errlen, "%s: %s: %s", c->origin, c->path.buf, reason);
    else
        (void)snprintf(c->err, c->errlen, "%s: %s", c->origin, reason);
    return error;
}

/* A short description of a JSON value, for "got ..." in errors. */
static const char *describe(struct json_object *v, char *buf, size_t len)
{
    const char *s;

    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    default:
        s = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        copy_shown(buf, len, s ? s : "?", s ? strlen(s) : 1);
        return buf;
    }
}

/* "expected WHAT, got VALUE" */
static int fail_expected(snap_ctx *c, struct json_object *v, const char *what)
{
    char shown[SNAP_SHOWN_MAX + 8];

    return snap_fail(c, -EINVAL, "expected %s, got %s", what, describe(v, shown, sizeof(shown)));
}

static int fail_missing(snap_ctx *c, const char *key)
{
    size_t mark = vn_path_push_key(c, key);
    int r = snap_fail(c, -EINVAL, "missing required field");

    vn_path_pop(c, mark);
    return r;
}

/* ---- scalar values ---- */

/*
 * json-c saturates integers it cannot represent (in strict mode too) to
 * INT64_MIN / UINT64_MAX; those two values are therefore refused everywhere.
 */
int snap_parse_uint(snap_ctx *c, struct json_object *v, uint64_t max, uint64_t *out)
{
    char what[64];
    int64_t s;
    uint64_t u;

    (void)snprintf(what, sizeof(what), "an integer from 0 to %" PRIu64, max);
    if (!json_object_is_type(v, json_type_int))
        return fail_expected(c, v, what);
    s = json_object_get_int64(v);
    if (s < 0)
        return fail_expected(c, v, what);
    u = s == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)s;
    if (u == UINT64_MAX)
        return snap_fail(c, -EINVAL, "expected %s, got a number too large to represent", what);
    if (u > max)
        return fail_expected(c, v, what);
    *out = u;
    return 0;
}

static int parse_int(snap_ctx *c, struct json_object *v, int64_t min, int64_t max, int64_t *out)
{
    char what[80];
    int64_t s;

    assert(min > INT64_MIN && max < INT64_MAX);
    (void)snprintf(what, sizeof(what), "an integer from %" PRId64 " to %" PRId64, min, max);
    if (!json_object_is_type(v, json_type_int))
        return fail_expected(c, v, what);
    s = json_object_get_int64(v);
    if (s == INT64_MIN)
        return snap_fail(c, -EINVAL, "expected %s, got a number too small to represent", what);
    if (s < min || s > max) /* INT64_MAX also stands for every larger value */
        return fail_expected(c, v, what);
    *out = s;
    return 0;
}

/* A JSON number (integer or not), finite, min..max. */
static int parse_number(snap_ctx *c, struct json_object *v, double min, double max, double *out)
{
    char what[80];
    double d;

    (void)snprintf(what, sizeof(what), "a number from %g to %g", min, max);
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return fail_expected(c, v, what);
    d = json_object_get_double(v);
    if (!isfinite(d) || d < min || d > max)
        return fail_expected(c, v, what);
    *out = d;
    return 0;
}

static int parse_bool(snap_ctx *c, struct json_object *v, bool *out)
{
    if (!json_object_is_type(v, json_type_boolean))
        return fail_expected(c, v, "true or false");
    *out = json_object_get_boolean(v);
    return 0;
}

/* A string without NUL bytes (json-c has already checked it is UTF-8). */
static int parse_string(snap_ctx *c, struct json_object *v, const char **out, size_t *ret_len)
{
    const char *s;
    int len;

    if (!json_object_is_type(v, json_type_string))
        return fail_expected(c, v, "a string");
    s = json_object_get_string(v);
    len = json_object_get_string_len(v);
    if (!s || len < 0)
        return fail_expected(c, v, "a string");
    if (memchr(s, '\0', (size_t)len))
        return snap_fail(c, -EINVAL, "string contains a NUL character");
    *out = s;
    *ret_len = (size_t)len;
    return 0;
}

/* The topology's node numbers as a Linux list ("0,2,5", "0-1023") for error messages. */
static const char *node_numbers(const topology *t, char *buf, size_t len)
{
    vn_cpuset numbers = {.nw = 0};

    for (unsigned i = 0; i < t->nr_nodes; i++)
        cpuset_set(&numbers, t->nodes[i].os_index);
    if (cpuset_format(&numbers, buf, len) < 0)
        (void)snprintf(buf, len, "(%u nodes)", t->nr_nodes);
    return buf;
}

/* A kernel node number to a topology node index, -EINVAL naming it when unknown. */
static int node_lookup(snap_ctx *c, int64_t number, int *ret_index)
{
    char nodes[VN_MAX_NODES * 5 + 1]; /* "1023," */
    int idx = number >= 0 && number <= SNAP_MAX_NODE_NUMBER
                  ? topo_node_index(c->t, (unsigned)number)
                  : -1;

    if (idx < 0)
        return snap_fail(c, -EINVAL, "unknown host node %" PRId64 " (the topology has nodes %s)",
                         number, node_numbers(c->t, nodes, sizeof(nodes)));
    *ret_index = idx;
    return 0;
}

/* A node number (or -1 when allow_none) to a node index (or -1). */
static int parse_node(snap_ctx *c, struct json_object *v, bool allow_none, int *ret_index)
{
    const char *what = allow_none ? "a host node number or -1" : "a host node number";
    int64_t n;
    int idx = -1, r;

    if (!json_object_is_type(v, json_type_int))
        return fail_expected(c, v, what);
    n = json_object_get_int64(v);
    if (n == -1 && allow_none) {
        *ret_index = -1;
        return 0;
    }
    if (n < 0 || n > SNAP_MAX_NODE_NUMBER)
        return fail_expected(c, v, what);
    r = node_lookup(c, n, &idx);
    if (r < 0)
        return r;
    *ret_index = idx;
    return 0;
}

/* ---- containers ---- */

int snap_expect_object(snap_ctx *c, struct json_object *v)
{
    return json_object_is_type(v, json_type_object) ? 0 : fail_expected(c, v, "an object");
}

/* An array of min..max entries; more than max is -E2BIG. */
int snap_expect_array(snap_ctx *c, struct json_object *v, size_t min, size_t max, size_t *ret_n)
{
    size_t n;

    if (!json_object_is_type(v, json_type_array))
        return fail_expected(c, v, "an array");
    n = json_object_array_length(v);
    if (n > max)
        return snap_fail(c, -E2BIG, "too many entries (%zu, at most %zu)", n, max);
    if (n < min)
        return snap_fail(c, -EINVAL, "expected at least %zu entr%s, got %zu", min,
                         min == 1 ? "y" : "ies", n);
    *ret_n = n;
    return 0;
}

/* Refuse every key of obj that is not in the NULL-terminated list `known`. */
int snap_check_fields(snap_ctx *c, struct json_object *obj, const char *const *known)
{
    struct json_object_iterator it = json_object_iter_begin(obj);
    struct json_object_iterator end = json_object_iter_end(obj);

    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *key = json_object_iter_peek_name(&it);
        bool found = false;

        for (const char *const *k = known; *k && !found; k++)
            found = strcmp(*k, key) == 0;
        if (!found) {
            (void)vn_path_push_key(c, key);
            return snap_fail(c, -EINVAL, "unknown field");
        }
    }
    return 0;
}

int snap_expect_fields(snap_ctx *c, struct json_object *obj, const char *const *known)
{
    int r = snap_expect_object(c, obj);

    return r < 0 ? r : snap_check_fields(c, obj, known);
}

/*
 * Field accessors: look `key` up in `obj`, and when present check it with the
 * matching parse_* function under the path ".key". An absent optional field
 * leaves *out untouched (the caller sets the default) and returns 0; an absent
 * required one is an error. They return 1 when the field was present.
 */
static int field_get(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                     struct json_object **v)
{
    if (json_object_object_get_ex(obj, key, v))
        return 1;
    return required ? fail_missing(c, key) : 0;
}

/* field_get(), and when the field is present push ".key" (*mark restores the path). */
int snap_field_enter(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                     struct json_object **v, size_t *mark)
{
    int r = field_get(c, obj, key, required, v);

    if (r > 0)
        *mark = vn_path_push_key(c, key);
    return r;
}

/* After checking a present field with result r: pop its path and return 1, or return r. */
int snap_field_leave(snap_ctx *c, size_t mark, int r)
{
    if (r < 0)
        return r;
    vn_path_pop(c, mark);
    return 1;
}

/* The body every snap_field_* shares: the field entered (absent: 0, or an error when
 * required), its value `v` checked by PARSE, the field left (1) or the error returned. */
#define FIELD(c, obj, key, required, PARSE)                                                        \
    do {                                                                                           \
        struct json_object *v = NULL;                                                              \
        size_t mark = 0;                                                                           \
        int r = snap_field_enter(c, obj, key, required, &v, &mark);                                \
        if (r <= 0)                                                                                \
            return r;                                                                              \
        return snap_field_leave(c, mark, PARSE);                                                   \
    } while (0)

int snap_field_uint(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                    uint64_t max, uint64_t *out)
{
    FIELD(c, obj, key, required, snap_parse_uint(c, v, max, out));
}

int snap_field_int(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                   int64_t min, int64_t max, int64_t *out)
{
    FIELD(c, obj, key, required, parse_int(c, v, min, max, out));
}

int snap_field_number(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                      double min, double max, double *out)
{
    FIELD(c, obj, key, required, parse_number(c, v, min, max, out));
}

int snap_field_bool(snap_ctx *c, struct json_object *obj, const char *key, bool required, bool *out)
{
    FIELD(c, obj, key, required, parse_bool(c, v, out));
}

int snap_field_node(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                    bool allow_none, int *out)
{
    FIELD(c, obj, key, required, parse_node(c, v, allow_none, out));
}

/*
 * Leaves the path pointing at the field on success too, so the caller can go
 * on checking the string's content; the caller pops it with vn_path_pop(c, *mark).
 */
int snap_field_string(snap_ctx *c, struct json_object *obj, const char *key, bool required,
                      const char **out, size_t *len, size_t *mark)
{
    struct json_object *v = NULL;
    int r = snap_field_enter(c, obj, key, required, &v, mark);

    if (r <= 0)
        return r;
    r = parse_string(c, v, out, len);
    return r < 0 ? r : 1;
}

int snap_field_name(snap_ctx *c, struct json_object *obj, const char *key,
                    int (*from_name)(const char *s, size_t len), const char *expected, int *ret)
{
    const char *s;
    size_t len, mark;
    int v, r = snap_field_string(c, obj, key, true, &s, &len, &mark);

    if (r < 0)
        return r;
    v = from_name(s, len);
    if (v < 0)
        return snap_fail(c, -EINVAL, "expected %s", expected);
    vn_path_pop(c, mark);
    *ret = v;
    return 1;
}

/* ---- composite values ---- */

/* An array of distinct node numbers, at least one, to a set of node indexes. */
int snap_parse_node_set(snap_ctx *c, struct json_object *v, vn_nodeset *out)
{
    vn_nodeset mask = {.nw = 0};
    size_t n;
    int r;

    r = snap_expect_array(c, v, 1, VN_MAX_NODES, &n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        size_t mark = vn_path_push_index(c, i);
        struct json_object *e = json_object_array_get_idx(v, i);
        int idx = -1;

        r = parse_node(c, e, false, &idx);
        if (r < 0)
            return r;
        if (nodeset_isset(&mask, (unsigned)idx))
            return snap_fail(c, -EINVAL, "host node %u listed twice", c->t->nodes[idx].os_index);
        nodeset_set(&mask, (unsigned)idx);
        vn_path_pop(c, mark);
    }
    *out = mask;
    return 0;
}

/* {"mode": "strict"|..., "nodes": [...]}: nodes non-empty unless mode is "none". */
int snap_parse_binding(snap_ctx *c, struct json_object *obj, vn_mem_binding *out)
{
    static const char *const known[] = {"mode", "nodes", NULL};
    vn_mem_binding b = {.mode = VN_MEM_NONE};
    struct json_object *nodes = NULL;
    size_t mark;
    int m, r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_name(c, obj, "mode", mem_mode_from_name,
                        "\"strict\", \"restrictive\", \"preferred\", \"interleave\" or \"none\"",
                        &m);
    if (r < 0)
        return r;
    b.mode = (vn_mem_mode)m;
    r = snap_field_enter(c, obj, "nodes", b.mode != VN_MEM_NONE, &nodes, &mark);
    if (r < 0)
        return r;
    if (r > 0) {
        if (b.mode == VN_MEM_NONE) {
            if (!json_object_is_type(nodes, json_type_array) || json_object_array_length(nodes) > 0)
                return snap_fail(c, -EINVAL, "must be absent or empty with mode \"none\"");
        } else {
            r = snap_parse_node_set(c, nodes, &b.nodes);
            if (r < 0)
                return r;
        }
        vn_path_pop(c, mark);
    }
    *out = b;
    return 0;
}

/*
 * A Linux CPU list, checked strictly before hwloc's (lenient) parser sees it:
 * "N" or "N-M" items with N <= M, separated by single commas.
 */
static int check_cpulist_syntax(snap_ctx *c, const char *s, const char *shown)
{
    const char *p = s;

    for (;;) {
        unsigned long a, b;
        char *end;

        /* at most 9 digits: no overflow, and far above VN_MAX_CPUS anyway */
        if (*p < '0' || *p > '9' || strspn(p, "0123456789") > 9)
            break;
        a = b = strtoul(p, &end, 10);
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9' || strspn(p, "0123456789") > 9)
                break;
            b = strtoul(p, &end, 10);
            p = end;
            if (b < a)
                return snap_fail(c, -EINVAL, "malformed CPU list \"%s\": range %lu-%lu is reversed",
                                 shown, a, b);
        }
        if (*p == '\0')
            return 0;
        if (*p != ',')
            break;
        p++;
    }
    return snap_fail(c, -EINVAL, "malformed CPU list \"%s\"", shown);
}

/* A non-empty CPU list string whose CPUs all belong to the topology. */
int snap_parse_cpulist(snap_ctx *c, struct json_object *v, vn_cpuset *out)
{
    char shown[SNAP_SHOWN_MAX + 8], cpus[256];
    vn_cpuset set, outside;
    const char *s;
    size_t len;
    int r;

    r = parse_string(c, v, &s, &len);
    if (r < 0)
        return r;
    if (len == 0)
        return snap_fail(c, -EINVAL, "empty CPU list");
    copy_shown(shown, sizeof(shown), s, len);
    r = check_cpulist_syntax(c, s, shown);
    if (r < 0)
        return r;
    r = cpuset_parse(s, &set);
    if (r == -ERANGE)
        return snap_fail(c, -EINVAL, "CPU list \"%s\" names a CPU above %d", shown,
                         VN_MAX_CPUS - 1);
    if (r < 0)
        return snap_fail(c, r, "malformed CPU list \"%s\"", shown);
    if (cpuset_empty(&set))
        return snap_fail(c, -EINVAL, "empty CPU list");
    cpuset_andnot(&outside, &set, &c->t->cpus);
    if (!cpuset_empty(&outside)) {
        if (cpuset_format(&c->t->cpus, cpus, sizeof(cpus)) < 0)
            (void)snprintf(cpus, sizeof(cpus), "...");
        return snap_fail(c, -EINVAL, "CPU %d is not a CPU of the host topology (%s)",
                         cpuset_first(&outside), cpus);
    }
    *out = set;
    return 0;
}

/* A pages-object key: a node number in canonical decimal ("0", "17"; not "01", "-1", "+1"). */
int snap_parse_node_key(snap_ctx *c, const char *key, int *ret_index)
{
    size_t len = strlen(key);
    unsigned long n;

    if (len == 0 || len > 9 || strspn(key, "0123456789") != len || (key[0] == '0' && len > 1))
        return snap_fail(c, -EINVAL, "expected a host node number in decimal as the key");
    n = strtoul(key, NULL, 10);
    return node_lookup(c, (int64_t)n, ret_index);
}
