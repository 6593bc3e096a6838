/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Decoding of protocol lines, driven by the table in schema.c (encode.c encodes them,
 * value.c releases and compares what was decoded).
 *
 * Decoding a line is done in three steps, each of which refuses the whole
 * line on the first problem:
 *   1. text: size, NUL bytes, strict UTF-8 (json-c's own check lets overlong
 *      forms and surrogates through), then json-c in strict mode with a depth
 *      limit, then a scan of the accepted text for what json-c lets through
 *      anyway (single quotes, raw control bytes in strings, NUL in keys) and
 *      a count of its keys (json-c keeps the last of duplicate keys silently);
 *   2. envelope: id, execute/arguments or return/error;
 *   3. value: decode_object() walks the message's descriptor, checking every
 *      field and writing into a zeroed temporary, which the caller receives
 *      only when everything was valid (and which is freed otherwise).
 * The JSON path of the value being checked is kept in dctx.path, so the
 * place that detects an error formats it once, as "PATH: reason".
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema.h"

/* Room for the deepest path ("return.processes[63].ranges[63].length") and a key. */
#define DCTX_PATH_MAX 160
/* Bytes of untrusted text (a key, a value) quoted in an error message. */
#define SHOWN_MAX 40

typedef struct dctx {
    char *err;
    size_t errlen;
    vn_jpath path;
    unsigned version;                 /* fields added after this version are unknown */
    bool open;                        /* unknown fields are ignored, not refused */
    uint64_t totals[PROTO_TOTAL_MAX]; /* message-wide entry counts */
} dctx;

/* ---- names ---- */

static const char *const error_names[PROTO_ERR_MAX] = {
    [PROTO_OK] = "ok",
    [PROTO_ERR_OVERSIZE] = "oversize",
    [PROTO_ERR_DEPTH] = "depth",
    [PROTO_ERR_SYNTAX] = "syntax",
    [PROTO_ERR_UTF8] = "utf8",
    [PROTO_ERR_TYPE] = "type",
    [PROTO_ERR_RANGE] = "range",
    [PROTO_ERR_LIMIT] = "limit",
    [PROTO_ERR_MISSING] = "missing",
    [PROTO_ERR_UNKNOWN] = "unknown",
    [PROTO_ERR_DUPLICATE] = "duplicate",
    [PROTO_ERR_COMMAND] = "command",
    [PROTO_ERR_VERSION] = "version",
    [PROTO_ERR_ID] = "id",
    [PROTO_ERR_RATE] = "rate",
    [PROTO_ERR_NOMEM] = "nomem",
};

const char *proto_error_name(proto_error e)
{
    return (unsigned)e < PROTO_ERR_MAX ? error_names[e] : "invalid";
}

const char *proto_error_class(proto_error e)
{
    return e == PROTO_ERR_COMMAND ? "CommandNotFound" : "GenericError";
}

uint64_t proto_known_caps(void)
{
    return PROTO_CAP_BIT(PROTO_CAP_MAX) - 1;
}

unsigned proto_choose_version(uint64_t host_versions)
{
    for (unsigned v = PROTO_VERSION_MAX; v >= PROTO_VERSION_MIN; v--)
        if (host_versions & (UINT64_C(1) << v))
            return v;
    return 0;
}

/* ---- UTF-8 ---- */

/*
 * Length of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) at s[0..len), or 0 when invalid.
 */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (len < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* Offset of the first byte that is not valid UTF-8, or len. */
static size_t utf8_check(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;

    while (i < len) {
        size_t n = utf8_seq(u + i, len - i);
        if (n == 0)
            return i;
        i += n;
    }
    return len;
}

void proto_sanitize_comm(char *dst, const char *src)
{
    const unsigned char *u = (const unsigned char *)src;
    size_t len = strlen(src), i = 0, o = 0;

    while (i < len && o < PROTO_MAX_COMM) {
        size_t n = utf8_seq(u + i, len - i);

        if (n == 0 || u[i] < 0x20 || u[i] == 0x7f) {
            dst[o++] = '?';
            i++;
            continue;
        }
        if (o + n > PROTO_MAX_COMM)
            break;
        memcpy(dst + o, src + i, n);
        o += n;
        i += n;
    }
    dst[o] = '\0';
}

/* ---- paths and errors ---- */

/* The JSON path of the value being checked, for error messages (lib/json.h). */
#define PATH_IDENT "abcdefghijklmnopqrstuvwxyz0123456789_-"

/* Format "PATH: reason" (or "reason" at the top) into err and return -kind. */
static int fail(dctx *c, proto_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(dctx *c, proto_error kind, const char *fmt, ...)
{
    char reason[256];
    va_list ap;

    if (c->err && c->errlen) {
        va_start(ap, fmt);
        (void)vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        if (c->path.len)
            (void)snprintf(c->err, c->errlen, "%s: %s", c->path.buf, reason);
        else
            (void)snprintf(c->err, c->errlen, "%s", reason);
    }
    return -(int)kind;
}

static const char *type_name(struct json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_double:
        return "a non-integer number";
    case json_type_int:
        return "an integer";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    }
    return "?";
}

/* ---- values ---- */

/*
 * An integer min..max, multiple of align. json-c saturates what it cannot
 * represent to INT64_MIN / UINT64_MAX, and no field allows either.
 */
static int decode_uint(dctx *c, const proto_field *f, struct json_object *v, uint64_t *out)
{
    int64_t s;
    uint64_t u;

    if (!json_object_is_type(v, json_type_int))
        return fail(c, PROTO_ERR_TYPE, "expected an integer, got %s", type_name(v));
    s = json_object_get_int64(v);
    if (s < 0)
        return fail(c, PROTO_ERR_RANGE, "negative (%" PRId64 "), expected %" PRIu64 " .. %" PRIu64,
                    s, f->min, f->max);
    u = s == INT64_MAX ? json_object_get_uint64(v) : (uint64_t)s;
    if (u == UINT64_MAX)
        return fail(c, PROTO_ERR_RANGE, "too large to represent, expected %" PRIu64 " .. %" PRIu64,
                    f->min, f->max);
    if (u < f->min || u > f->max)
        return fail(c, PROTO_ERR_RANGE, "%" PRIu64 " is outside %" PRIu64 " .. %" PRIu64, u, f->min,
                    f->max);
    if (f->align && u % f->align)
        return fail(c, PROTO_ERR_RANGE, "%" PRIu64 " is not a multiple of %" PRIu64, u, f->align);
    *out = u;
    return 0;
}

/* A UTF-8 string of min..max bytes without NUL characters. */
static int decode_string(dctx *c, uint64_t min, uint64_t max, struct json_object *v,
                         const char **out, size_t *ret_len)
{
    const char *s;
    int len;

    if (!json_object_is_type(v, json_type_string))
        return fail(c, PROTO_ERR_TYPE, "expected a string, got %s", type_name(v));
    s = json_object_get_string(v);
    len = json_object_get_string_len(v);
    if (!s || len < 0)
        return fail(c, PROTO_ERR_TYPE, "expected a string");
    if (memchr(s, '\0', (size_t)len))
        return fail(c, PROTO_ERR_UTF8, "string contains a NUL character");
    if (utf8_check(s, (size_t)len) != (size_t)len)
        return fail(c, PROTO_ERR_UTF8, "string is not valid UTF-8");
    if ((uint64_t)len > max)
        return fail(c, PROTO_ERR_LIMIT, "string of %d bytes, at most %" PRIu64, len, max);
    if ((uint64_t)len < min)
        return fail(c, PROTO_ERR_RANGE, "string of %d bytes, at least %" PRIu64, len, min);
    *out = s;
    *ret_len = (size_t)len;
    return 0;
}

/* An array of min..max entries. */
static int expect_array(dctx *c, struct json_object *v, uint64_t min, uint64_t max, size_t *ret_n)
{
    size_t n;

    if (!json_object_is_type(v, json_type_array))
        return fail(c, PROTO_ERR_TYPE, "expected an array, got %s", type_name(v));
    n = json_object_array_length(v);
    if (n > max)
        return fail(c, PROTO_ERR_LIMIT, "%zu entries, at most %" PRIu64, n, max);
    if (n < min)
        return fail(c, PROTO_ERR_RANGE, "%zu entries, at least %" PRIu64, n, min);
    *ret_n = n;
    return 0;
}

static int decode_value(dctx *c, const proto_field *f, struct json_object *v, void *dst);
static int decode_object(dctx *c, const proto_object *o, struct json_object *v, void *dst);

/* The integer field `key` of every element is different. */
static int check_key_unique(dctx *c, const proto_field *f, const char *arr, size_t n)
{
    const proto_object *o = f->elem->object;
    size_t size = o->size;

    for (unsigned k = 0; k < o->nr_fields; k++) {
        const proto_field *key = &o->fields[k];

        if (!(key->flags & PROTO_F_KEY))
            continue;
        for (size_t i = 1; i < n; i++) {
            uint64_t vi = proto_load_uint(arr + i * size + key->offset, key->width);
            for (size_t j = 0; j < i; j++) {
                if (proto_load_uint(arr + j * size + key->offset, key->width) == vi) {
                    size_t mark = vn_path_push_index(c, i);
                    (void)vn_path_push_key(c, key->name);
                    int r = fail(c, PROTO_ERR_DUPLICATE, "%" PRIu64 " also in entry %zu", vi, j);
                    vn_path_pop(c, mark);
                    return r;
                }
            }
        }
    }
    return 0;
}

static int decode_array(dctx *c, const proto_field *f, struct json_object *v, void *dst)
{
    const proto_field *elem = f->elem;
    size_t n = 0, size = proto_elem_size(elem);
    char *arr = NULL;
    int r;

    r = expect_array(c, v, f->min, f->max, &n);
    if (r < 0)
        return r;
    if (f->total != PROTO_TOTAL_NONE) {
        c->totals[f->total] += n;
        if (c->totals[f->total] > proto_totals[f->total].max)
            return fail(c, PROTO_ERR_LIMIT, "more than %" PRIu64 " %s", proto_totals[f->total].max,
                        proto_totals[f->total].what);
    }
    if (n) {
        arr = calloc(n, size);
        if (!arr)
            return fail(c, PROTO_ERR_NOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t mark = vn_path_push_index(c, i);

        r = decode_value(c, elem, json_object_array_get_idx(v, i), arr + i * size);
        if (r < 0)
            goto error;
        if (elem->type == PROTO_T_UINT && (f->flags & PROTO_F_UNIQUE)) {
            uint64_t vi = proto_load_uint(arr + i * size, size);
            for (size_t j = 0; j < i; j++) {
                if (proto_load_uint(arr + j * size, size) == vi) {
                    r = fail(c, PROTO_ERR_DUPLICATE, "%" PRIu64 " also in entry %zu", vi, j);
                    goto error;
                }
            }
        }
        vn_path_pop(c, mark);
    }
    if (elem->type == PROTO_T_OBJECT) {
        r = check_key_unique(c, f, arr, n);
        if (r < 0)
            goto error;
    }
    memcpy((char *)dst + f->offset, &arr, sizeof(arr));
    *(unsigned *)((char *)dst + f->count_offset) = (unsigned)n;
    return 0;
error:
    proto_free_array(f, arr, n);
    return r;
}

static int decode_versions(dctx *c, const proto_field *f, struct json_object *v, uint64_t *out)
{
    static const proto_field version = {
        .name = "", .type = PROTO_T_UINT, .min = 1, .max = PROTO_VERSION_LIMIT, .width = 8};
    uint64_t set = 0, n_u;
    size_t n = 0;
    int r;

    r = expect_array(c, v, f->min, f->max, &n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        size_t mark = vn_path_push_index(c, i);

        r = decode_uint(c, &version, json_object_array_get_idx(v, i), &n_u);
        if (r < 0)
            return r;
        if (set & (UINT64_C(1) << n_u))
            return fail(c, PROTO_ERR_DUPLICATE, "version %" PRIu64 " listed twice", n_u);
        set |= UINT64_C(1) << n_u;
        vn_path_pop(c, mark);
    }
    *out = set;
    return 0;
}

static int decode_caps(dctx *c, const proto_field *f, struct json_object *v, uint64_t *out)
{
    uint64_t set = 0;
    size_t n = 0;
    int r;

    r = expect_array(c, v, f->min, f->max, &n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        size_t mark = vn_path_push_index(c, i), len = 0;
        const char *s = NULL;

        r = decode_string(c, 1, PROTO_MAX_CAP, json_object_array_get_idx(v, i), &s, &len);
        if (r < 0)
            return r;
        for (unsigned k = 0; k < PROTO_CAP_MAX; k++)
            if (proto_capabilities[k].since <= c->version &&
                strlen(proto_capabilities[k].name) == len &&
                memcmp(proto_capabilities[k].name, s, len) == 0)
                set |= PROTO_CAP_BIT(k);
        vn_path_pop(c, mark);
    }
    *out = set;
    return 0;
}

/* Check v against f and store it at dst + f->offset. */
static int decode_value(dctx *c, const proto_field *f, struct json_object *v, void *dst)
{
    char *p = (char *)dst + f->offset;
    const char *s = NULL;
    uint64_t u = 0;
    size_t len = 0;
    int r;

    switch (f->type) {
    case PROTO_T_UINT:
        r = decode_uint(c, f, v, &u);
        if (r == 0)
            proto_store_uint(p, f->width, u);
        return r;
    case PROTO_T_STRING:
        r = decode_string(c, f->min, f->max, v, &s, &len);
        if (r == 0) {
            memcpy(p, s, len);
            p[len] = '\0';
        }
        return r;
    case PROTO_T_OBJECT:
        return decode_object(c, f->object, v, p);
    case PROTO_T_ARRAY:
        return decode_array(c, f, v, dst);
    case PROTO_T_VERSIONS:
        r = decode_versions(c, f, v, &u);
        if (r == 0)
            memcpy(p, &u, sizeof(u));
        return r;
    case PROTO_T_CAPS:
        r = decode_caps(c, f, v, &u);
        if (r == 0)
            memcpy(p, &u, sizeof(u));
        return r;
    default:
        assert(!"bad descriptor");
        return fail(c, PROTO_ERR_TYPE, "bad descriptor");
    }
}

static const proto_field *find_field(const dctx *c, const proto_object *o, const char *key)
{
    for (unsigned i = 0; i < o->nr_fields; i++)
        if (o->fields[i].since <= c->version && strcmp(o->fields[i].name, key) == 0)
            return &o->fields[i];
    return NULL;
}

/* Keys of obj that are neither in `o` nor in the NULL-terminated list `extra`. */
static int check_unknown(dctx *c, const proto_object *o, struct json_object *obj,
                         const char *const *extra)
{
    struct json_object_iterator it = json_object_iter_begin(obj);
    struct json_object_iterator end = json_object_iter_end(obj);

    if (c->open)
        return 0;
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *key = json_object_iter_peek_name(&it);
        bool found = o && find_field(c, o, key);

        for (const char *const *k = extra; k && *k && !found; k++)
            found = strcmp(*k, key) == 0;
        if (!found) {
            size_t mark = vn_path_push_key(c, key);
            int r = fail(c, PROTO_ERR_UNKNOWN, "unknown field (protocol version %u)", c->version);
            vn_path_pop(c, mark);
            return r;
        }
    }
    return 0;
}

static int decode_object(dctx *c, const proto_object *o, struct json_object *v, void *dst)
{
    char why[160];
    int r;

    if (!json_object_is_type(v, json_type_object))
        return fail(c, PROTO_ERR_TYPE, "expected an object, got %s", type_name(v));
    r = check_unknown(c, o, v, NULL);
    if (r < 0)
        return r;
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        struct json_object *fv = NULL;
        size_t mark;

        if (f->since > c->version)
            continue;
        if (!json_object_object_get_ex(v, f->name, &fv)) {
            if (!(f->flags & PROTO_F_REQUIRED))
                continue;
            mark = vn_path_push_key(c, f->name);
            r = fail(c, PROTO_ERR_MISSING, "missing required field");
            vn_path_pop(c, mark);
            return r;
        }
        mark = vn_path_push_key(c, f->name);
        r = decode_value(c, f, fv, dst);
        if (r < 0)
            return r;
        vn_path_pop(c, mark);
    }
    if (o->check) {
        r = o->check(dst, why, sizeof(why));
        if (r > 0)
            return fail(c, (proto_error)r, "%s", why);
    }
    return 0;
}

/* ---- text ---- */

/* Objects and arrays in the text, counted before json-c allocates them (exact for valid JSON;
 * for invalid JSON only the error kind may differ). */
static size_t count_containers(const char *text, size_t len)
{
    bool in_string = false;
    size_t n = 0;

    for (size_t i = 0; i < len; i++) {
        char ch = text[i];

        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = false;
        } else if (ch == '"') {
            in_string = true;
        } else if (ch == '{' || ch == '[') {
            n++;
        }
    }
    return n;
}

/* Step 1: one line of text to one JSON object. */
static int parse_line(dctx *c, const char *line, size_t len, struct json_object **ret)
{
    _cleanup_json_ struct json_object *root = NULL;
    vn_json_doc doc;
    size_t bad;

    if (len >= PROTO_MAX_LINE)
        return fail(c, PROTO_ERR_OVERSIZE, "line of %zu bytes, at most %u with its newline", len,
                    PROTO_MAX_LINE);
    if (memchr(line, '\0', len))
        return fail(c, PROTO_ERR_SYNTAX, "NUL byte in the line");
    bad = utf8_check(line, len);
    if (bad != len)
        return fail(c, PROTO_ERR_UTF8, "column %zu: invalid UTF-8", bad + 1);
    if (count_containers(line, len) > PROTO_MAX_CONTAINERS)
        return fail(c, PROTO_ERR_LIMIT, "more than %u objects and arrays in one message",
                    PROTO_MAX_CONTAINERS);

    switch (vn_json_parse(line, len, PROTO_MAX_DEPTH, &doc)) {
    case VN_JSON_OK:
        root = doc.root;
        break;
    case VN_JSON_E_NOMEM:
        return fail(c, PROTO_ERR_NOMEM, "out of memory");
    case VN_JSON_E_EMPTY:
    case VN_JSON_E_TRUNCATED:
        return fail(c, PROTO_ERR_SYNTAX, "unexpected end of line");
    case VN_JSON_E_DEPTH:
        return fail(c, PROTO_ERR_DEPTH, "column %zu: nesting deeper than %d levels", doc.at + 1,
                    PROTO_MAX_DEPTH);
    case VN_JSON_E_UTF8:
        return fail(c, PROTO_ERR_UTF8, "column %zu: invalid UTF-8", doc.at + 1);
    case VN_JSON_E_TRAILING:
        return fail(c, PROTO_ERR_SYNTAX, "column %zu: data after the message", doc.at + 1);
    case VN_JSON_E_LENIENT:
        if (doc.lenient == VN_JSON_NUL_KEY)
            return fail(c, PROTO_ERR_UTF8, "column %zu: key contains a NUL character", doc.at + 1);
        return fail(c, PROTO_ERR_SYNTAX, "column %zu: %s", doc.at + 1, doc.why);
    case VN_JSON_E_DUPLICATE:
        return fail(c, PROTO_ERR_DUPLICATE, "an object has the same key twice");
    case VN_JSON_E_SYNTAX:
    default:
        return fail(c, PROTO_ERR_SYNTAX, "column %zu: %s", doc.at + 1, doc.why);
    }
    if (!json_object_is_type(root, json_type_object))
        return fail(c, PROTO_ERR_TYPE, "expected an object, got %s", type_name(root));
    *ret = root;
    root = NULL;
    return 0;
}

/* Step 2: the envelope's id (uint32). */
static int decode_id(dctx *c, struct json_object *root, uint32_t *ret)
{
    static const proto_field id = {
        .name = "id", .type = PROTO_T_UINT, .min = 0, .max = UINT32_MAX, .width = 4};
    struct json_object *v = NULL;
    uint64_t u = 0;
    size_t mark;
    int r;

    if (!json_object_object_get_ex(root, "id", &v)) {
        mark = vn_path_push_key(c, "id");
        r = fail(c, PROTO_ERR_MISSING, "missing required field");
        vn_path_pop(c, mark);
        return r;
    }
    mark = vn_path_push_key(c, "id");
    r = decode_uint(c, &id, v, &u);
    if (r < 0)
        return r;
    vn_path_pop(c, mark);
    *ret = (uint32_t)u;
    return 0;
}

/* The field version and openness for reading msg in negotiated version `version`. */
static int enter_message(dctx *c, const proto_message *msg, unsigned version)
{
    if (version > PROTO_VERSION_MAX)
        return fail(c, PROTO_ERR_VERSION, "version %u is not spoken here", version);
    if (msg->handshake) {
        c->version = PROTO_VERSION_MAX;
    } else {
        if (version == 0)
            return fail(c, PROTO_ERR_VERSION, "%s before a version was negotiated (vnuma-hello)",
                        msg->name);
        if (msg->since > version)
            return fail(c, PROTO_ERR_VERSION, "%s is not in protocol version %u", msg->name,
                        version);
        c->version = version;
    }
    c->open = msg->open_since != PROTO_NEVER && c->version >= msg->open_since;
    return 0;
}

/* A decoding context writing its error into err (may be NULL). */
#define DCTX_INIT(err_, errlen_)                                                                   \
    {                                                                                              \
        .err = (err_), .errlen = (errlen_),                                                        \
        .path = {.cap = DCTX_PATH_MAX,                                                             \
                 .shown_max = SHOWN_MAX,                                                           \
                 .ident = PATH_IDENT,                                                              \
                 .ident_digit_ok = true},                                                          \
    }

/* The first steps of every line: clear the error, parse the text, read the id. */
static int begin_line(dctx *c, const char *line, size_t len, struct json_object **ret_root,
                      uint32_t *ret_id)
{
    int r;

    if (c->err && c->errlen)
        c->err[0] = '\0';
    r = parse_line(c, line, len, ret_root);
    if (r < 0)
        return r;
    return decode_id(c, *ret_root, ret_id);
}

int proto_decode_reply(const char *line, size_t len, const proto_expect *expect, proto_reply *ret,
                       char *err, size_t errlen)
{
    static const char *const envelope[] = {"return", "error", "id", NULL};
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *ret_v = NULL, *err_v = NULL;
    dctx c = DCTX_INIT(err, errlen);
    const proto_message *msg;
    proto_reply tmp;
    size_t mark;
    int r;

    assert(ret && (line || len == 0));
    memset(&tmp, 0, sizeof(tmp));
    r = begin_line(&c, line, len, &root, &tmp.id);
    if (r < 0)
        return r;
    if (!expect)
        return fail(&c, PROTO_ERR_ID, "reply %" PRIu32 " while no request is outstanding", tmp.id);
    if (tmp.id != expect->id)
        return fail(&c, PROTO_ERR_ID,
                    "reply %" PRIu32 " to request %" PRIu32 " which is not outstanding", tmp.id,
                    expect->id);
    assert((unsigned)expect->msg < PROTO_MSG_MAX);
    msg = &proto_messages[expect->msg];
    r = enter_message(&c, msg, expect->version);
    if (r < 0)
        return r;
    (void)json_object_object_get_ex(root, "return", &ret_v);
    (void)json_object_object_get_ex(root, "error", &err_v);
    if (ret_v && err_v)
        return fail(&c, PROTO_ERR_TYPE, "a reply has \"return\" or \"error\", not both");
    if (!ret_v && !err_v)
        return fail(&c, PROTO_ERR_TYPE, "not a reply: no \"return\" or \"error\"");
    r = check_unknown(&c, NULL, root, envelope);
    if (r < 0)
        return r;
    if (err_v) {
        /* Error replies are open in every version: a newer agent may add to them. */
        c.open = true;
        tmp.kind = PROTO_REPLY_ERROR;
        mark = vn_path_push_key(&c, "error");
        r = decode_object(&c, &proto_error_object, err_v, &tmp.error);
    } else {
        tmp.kind = msg->reply_kind;
        mark = vn_path_push_key(&c, "return");
        r = decode_object(&c, msg->reply, ret_v, proto_reply_value(&tmp, tmp.kind));
    }
    if (r < 0) {
        proto_reply_clear(&tmp);
        return r;
    }
    vn_path_pop(&c, mark);
    *ret = tmp;
    return 0;
}

int proto_decode_request(const char *line, size_t len, unsigned version, proto_request *ret,
                         uint32_t *ret_id, char *err, size_t errlen)
{
    static const char *const envelope[] = {"execute", "arguments", "id", NULL};
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *exec_v = NULL, *args_v = NULL;
    dctx c = DCTX_INIT(err, errlen);
    const proto_message *msg = NULL;
    const char *name = NULL;
    proto_request tmp;
    size_t name_len = 0, mark;
    int r;

    assert(ret && ret_id && (line || len == 0));
    *ret_id = 0;
    memset(&tmp, 0, sizeof(tmp));
    r = begin_line(&c, line, len, &root, &tmp.id);
    if (r < 0)
        return r;
    *ret_id = tmp.id;
    if (!json_object_object_get_ex(root, "execute", &exec_v))
        return fail(&c, PROTO_ERR_TYPE, "not a request: no \"execute\"");
    mark = vn_path_push_key(&c, "execute");
    r = decode_string(&c, 1, PROTO_MAX_COMMAND, exec_v, &name, &name_len);
    if (r < 0)
        return r;
    vn_path_pop(&c, mark);
    for (unsigned m = 0; m < PROTO_MSG_MAX && !msg; m++)
        if (strlen(proto_messages[m].name) == name_len &&
            memcmp(proto_messages[m].name, name, name_len) == 0)
            msg = &proto_messages[m];
    if (!msg || (version && msg->since > version)) {
        char shown[SHOWN_MAX + 8];
        vn_shown(shown, sizeof(shown), name, name_len, SHOWN_MAX);
        return fail(&c, PROTO_ERR_COMMAND, "the command '%s' has not been found", shown);
    }
    r = enter_message(&c, msg, version);
    if (r < 0)
        return r;
    r = check_unknown(&c, NULL, root, envelope);
    if (r < 0)
        return r;
    tmp.msg = msg->msg;
    if (!json_object_object_get_ex(root, "arguments", &args_v)) {
        mark = vn_path_push_key(&c, "arguments");
        r = fail(&c, PROTO_ERR_MISSING, "missing required field");
        vn_path_pop(&c, mark);
        return r;
    }
    mark = vn_path_push_key(&c, "arguments");
    /* Requests own no arrays in any version so far: nothing to free on error. */
    r = decode_object(&c, msg->arguments, args_v, proto_request_args(&tmp));
    if (r < 0)
        return r;
    vn_path_pop(&c, mark);
    *ret = tmp;
    return 0;
}
