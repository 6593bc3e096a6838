/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json-c plumbing shared by every parser of untrusted JSON (snapshots, QMP replies, the
 * control socket, the guest protocol): cleanup helpers, the strictness scan json-c's
 * strict mode needs, and a JSON path ("domains[3].cells[0].vcpus") for error messages.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

static inline void vn_json_putp(struct json_object **o)
{
    if (*o)
        (void)json_object_put(*o);
}

static inline void vn_tokener_freep(struct json_tokener **tok)
{
    if (*tok)
        json_tokener_free(*tok);
}

#define _cleanup_json_    _cleanup_(vn_json_putp)
#define _cleanup_tokener_ _cleanup_(vn_tokener_freep)

/* JSON's four whitespace characters. */
static inline bool vn_json_is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* ---- what json-c 0.16 lets through even in strict mode ---- */

typedef enum vn_json_lenient {
    VN_JSON_STRICT,       /* nothing found */
    VN_JSON_SINGLE_QUOTE, /* 'string' */
    VN_JSON_CONTROL_CHAR, /* a raw byte below 0x20 inside a string */
    VN_JSON_NUL_KEY,      /* "\u0000" in an object key: json-c cuts the key at the NUL */
    VN_JSON_LENIENT_MAX,
} vn_json_lenient;

/*
 * Scan text the tokener accepted for what strict JSON refuses and json-c does not:
 * single-quoted strings, raw control characters in strings, "\u0000" in an object key
 * (so "pass\u0000x" would count as "pass"). Returns VN_JSON_STRICT, or the first finding
 * with *ret_at set to the offset of the offending character. ret_keys (may be NULL) gets
 * the number of object keys seen (a string followed by ':').
 */
vn_json_lenient vn_json_scan(const char *text, size_t len, size_t *ret_at, uint64_t *ret_keys);

/* "single-quoted strings are not JSON", ... */
const char *vn_json_lenient_str(vn_json_lenient l);

/* ---- the one strict parse ---- */

typedef enum vn_json_error {
    VN_JSON_OK,
    VN_JSON_E_NOMEM,
    VN_JSON_E_EMPTY,     /* nothing but whitespace */
    VN_JSON_E_TRUNCATED, /* the text ends inside the value */
    VN_JSON_E_DEPTH,     /* nested deeper than asked */
    VN_JSON_E_UTF8,      /* invalid UTF-8 in a string */
    VN_JSON_E_SYNTAX,    /* json-c refused it: .why is its description */
    VN_JSON_E_TRAILING,  /* something but whitespace after the value (a NUL byte too) */
    VN_JSON_E_LENIENT,   /* what json-c lets through (.lenient; .why says what) */
    VN_JSON_E_DUPLICATE, /* an object has the same key twice (json-c keeps the last) */
} vn_json_error;

typedef struct vn_json_doc {
    struct json_object *root; /* the value, on VN_JSON_OK only; the caller puts it */
    vn_json_error error;
    vn_json_lenient lenient; /* for VN_JSON_E_LENIENT */
    size_t at;               /* byte offset of the problem (TRUNCATED: len) */
    const char *why;         /* static text: what is wrong */
} vn_json_doc;

/*
 * Parse len bytes of untrusted text as exactly one strict JSON value: json-c's strict mode
 * with UTF-8 validation and at most `depth` levels, a bare top-level scalar allowed, only
 * JSON whitespace after the value, then vn_json_scan() for what strict mode lets through and
 * a count of keys for duplicates. Every parser of untrusted JSON goes through here and maps
 * doc->error to its own messages. Returns doc->error.
 */
vn_json_error vn_json_parse(const char *text, size_t len, int depth, vn_json_doc *doc);

/* Object keys in the tree under v (nesting is bounded by the parse). */
uint64_t vn_json_count_keys(struct json_object *v);

/* ---- JSON paths for error messages ---- */

#define VN_JPATH_MAX 256

typedef struct vn_jpath {
    char buf[VN_JPATH_MAX];
    size_t len;
    size_t cap;          /* bytes of buf in use at most, NUL included; 0: all of it */
    size_t shown_max;    /* bytes of an untrusted key quoted in the path */
    const char *ident;   /* characters of a key written as ".key" (else ["key"]) */
    bool ident_digit_ok; /* may such a key start with a digit */
} vn_jpath;

/*
 * Copy up to `max` bytes of untrusted text into dst, printable ASCII only ('?' for other
 * bytes), "..." when cut. dstlen must exceed 4.
 */
void vn_shown(char *dst, size_t dstlen, const char *src, size_t srclen, size_t max);

/* vn_shown() of a NUL-terminated string (NULL shows as ""); returns dst. dstlen must exceed
 * max + 4 for the "..." to fit. */
const char *vn_shown_str(char *dst, size_t dstlen, const char *s, size_t max);

void vn_jpath_append(vn_jpath *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append ".key" ("key" at the top), or ["key"] when the key is not an identifier; returns the
 * length to restore with vn_jpath_pop(). */
size_t vn_jpath_push_key(vn_jpath *p, const char *key);
/* Append "[i]"; returns the length to restore. */
size_t vn_jpath_push_index(vn_jpath *p, size_t i);
void vn_jpath_pop(vn_jpath *p, size_t mark);

/* The same, for a parser's context that keeps its path in a `vn_jpath path` member. */
#define vn_path_append(c, ...)   vn_jpath_append(&(c)->path, __VA_ARGS__)
#define vn_path_push_key(c, key) vn_jpath_push_key(&(c)->path, (key))
#define vn_path_push_index(c, i) vn_jpath_push_index(&(c)->path, (i))
#define vn_path_pop(c, mark)     vn_jpath_pop(&(c)->path, (mark))
