/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Encoding of protocol lines, driven by the table in schema.c: a value becomes a JSON
 * object of the fields its descriptor lists for the version, in the envelope of the
 * guest agent's conventions (execute/arguments, return/error), one line with its "\n".
 */
#include <assert.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "schema.h"

/* ---- encoding ---- */

static int encode_field(const proto_field *f, const char *p, const void *base, unsigned version,
                        struct json_object **ret);

static int encode_object(const proto_object *o, const void *src, unsigned version,
                         struct json_object **ret)
{
    _cleanup_json_ struct json_object *obj = json_object_new_object();

    if (!obj)
        return -PROTO_ERR_NOMEM;
    for (unsigned i = 0; i < o->nr_fields; i++) {
        const proto_field *f = &o->fields[i];
        struct json_object *v = NULL;
        int r;

        if (f->since > version)
            continue;
        r = encode_field(f, (const char *)src + f->offset, src, version, &v);
        if (r < 0)
            return r;
        if (json_object_object_add(obj, f->name, v) < 0) {
            (void)json_object_put(v);
            return -PROTO_ERR_NOMEM;
        }
    }
    *ret = obj;
    obj = NULL;
    return 0;
}

static int array_add(struct json_object *arr, struct json_object *v)
{
    if (!v)
        return -PROTO_ERR_NOMEM;
    if (json_object_array_add(arr, v) < 0) {
        (void)json_object_put(v);
        return -PROTO_ERR_NOMEM;
    }
    return 0;
}

static int encode_field(const proto_field *f, const char *p, const void *base, unsigned version,
                        struct json_object **ret)
{
    _cleanup_json_ struct json_object *v = NULL;
    uint64_t set;
    int r;

    switch (f->type) {
    case PROTO_T_UINT:
        v = json_object_new_uint64(proto_load_uint(p, f->width));
        break;
    case PROTO_T_STRING:
        v = json_object_new_string_len(p, (int)strnlen(p, f->width));
        break;
    case PROTO_T_OBJECT:
        return encode_object(f->object, p, version, ret);
    case PROTO_T_ARRAY: {
        unsigned n = *(const unsigned *)((const char *)base + f->count_offset);
        size_t size = proto_elem_size(f->elem);
        const char *arr;

        memcpy(&arr, p, sizeof(arr));
        v = json_object_new_array_ext((int)n);
        if (!v)
            return -PROTO_ERR_NOMEM;
        for (unsigned i = 0; i < n; i++) {
            struct json_object *e = NULL;
            r = encode_field(f->elem, arr + i * size, arr + i * size, version, &e);
            if (r < 0)
                return r;
            r = array_add(v, e);
            if (r < 0)
                return r;
        }
        break;
    }
    case PROTO_T_VERSIONS:
    case PROTO_T_CAPS:
        memcpy(&set, p, sizeof(set));
        v = json_object_new_array();
        if (!v)
            return -PROTO_ERR_NOMEM;
        for (unsigned b = 0; b < 64; b++) {
            if (!(set & (UINT64_C(1) << b)))
                continue;
            if (f->type == PROTO_T_VERSIONS)
                r = array_add(v, json_object_new_uint64(b));
            else if (b < PROTO_CAP_MAX && proto_capabilities[b].since <= version)
                r = array_add(v, json_object_new_string(proto_capabilities[b].name));
            else
                r = 0;
            if (r < 0)
                return r;
        }
        break;
    default:
        return -PROTO_ERR_TYPE;
    }
    if (!v)
        return -PROTO_ERR_NOMEM;
    *ret = v;
    v = NULL;
    return 0;
}

int proto_encode_value(const proto_object *o, const void *src, unsigned version,
                       struct json_object **ret)
{
    return encode_object(o, src, version, ret);
}

/* Serialise an envelope into a malloc'd line ending in "\n". */
static int finish_line(struct json_object *root, char **ret_line, size_t *ret_len)
{
    const char *s;
    size_t len;
    char *line;

    s = json_object_to_json_string_ext(root,
                                       JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s)
        return -PROTO_ERR_NOMEM;
    len = strlen(s);
    if (len + 1 > PROTO_MAX_LINE)
        return -PROTO_ERR_OVERSIZE;
    line = malloc(len + 2);
    if (!line)
        return -PROTO_ERR_NOMEM;
    memcpy(line, s, len);
    line[len] = '\n';
    line[len + 1] = '\0';
    *ret_line = line;
    *ret_len = len + 1;
    return 0;
}

static int add_key(struct json_object *obj, const char *key, struct json_object *v)
{
    if (!v)
        return -PROTO_ERR_NOMEM;
    if (json_object_object_add(obj, key, v) < 0) {
        (void)json_object_put(v);
        return -PROTO_ERR_NOMEM;
    }
    return 0;
}

static int encode_request(proto_msg m, uint32_t id, const void *args, char **ret_line,
                          size_t *ret_len)
{
    const proto_message *msg = &proto_messages[m];
    _cleanup_json_ struct json_object *root = json_object_new_object();
    _cleanup_free_ char *line = NULL;
    struct json_object *a = NULL;
    proto_request check;
    uint32_t check_id;
    size_t len = 0;
    int r;

    if (!root)
        return -PROTO_ERR_NOMEM;
    r = add_key(root, "execute", json_object_new_string(msg->name));
    if (r < 0)
        return r;
    r = encode_object(msg->arguments, args, PROTO_VERSION_MAX, &a);
    if (r < 0)
        return r;
    r = add_key(root, "arguments", a);
    if (r == 0)
        r = add_key(root, "id", json_object_new_uint64(id));
    if (r == 0)
        r = finish_line(root, &line, &len);
    if (r < 0)
        return r;
    r = proto_decode_request(line, len - 1, msg->handshake ? 0 : PROTO_VERSION_MAX, &check,
                             &check_id, NULL, 0);
    if (r < 0)
        return r;
    *ret_line = line;
    *ret_len = len;
    line = NULL;
    return 0;
}

static int encode_reply(proto_msg m, uint32_t id, const char *key, const proto_object *o,
                        const void *value, char **ret_line, size_t *ret_len)
{
    _cleanup_json_ struct json_object *root = json_object_new_object();
    _cleanup_free_ char *line = NULL;
    struct json_object *v = NULL;
    proto_expect expect = {.msg = m, .id = id, .version = PROTO_VERSION_MAX};
    proto_reply check;
    size_t len = 0;
    int r;

    if (!root)
        return -PROTO_ERR_NOMEM;
    r = encode_object(o, value, PROTO_VERSION_MAX, &v);
    if (r < 0)
        return r;
    r = add_key(root, key, v);
    if (r == 0)
        r = add_key(root, "id", json_object_new_uint64(id));
    if (r == 0)
        r = finish_line(root, &line, &len);
    if (r < 0)
        return r;
    r = proto_decode_reply(line, len - 1, &expect, &check, NULL, 0);
    if (r < 0)
        return r;
    proto_reply_clear(&check);
    *ret_line = line;
    *ret_len = len;
    line = NULL;
    return 0;
}

int proto_encode_hello(uint32_t id, const proto_hello *h, char **ret_line, size_t *ret_len)
{
    assert(h && ret_line && ret_len);
    return encode_request(PROTO_MSG_HELLO, id, h, ret_line, ret_len);
}

int proto_encode_get_hints(uint32_t id, const proto_get_hints *g, char **ret_line, size_t *ret_len)
{
    assert(g && ret_line && ret_len);
    return encode_request(PROTO_MSG_GET_HINTS, id, g, ret_line, ret_len);
}

int proto_encode_hello_reply(uint32_t id, const proto_hello_reply *h, char **ret_line,
                             size_t *ret_len)
{
    assert(h && ret_line && ret_len);
    return encode_reply(PROTO_MSG_HELLO, id, "return", proto_messages[PROTO_MSG_HELLO].reply, h,
                        ret_line, ret_len);
}

int proto_encode_hints_reply(uint32_t id, const proto_hints *h, char **ret_line, size_t *ret_len)
{
    assert(h && ret_line && ret_len);
    return encode_reply(PROTO_MSG_GET_HINTS, id, "return",
                        proto_messages[PROTO_MSG_GET_HINTS].reply, h, ret_line, ret_len);
}

/* Copy text cut to max bytes, printable ASCII only. */
static void copy_ascii(char *dst, size_t max, const char *src)
{
    size_t n = 0;

    for (; src && src[n] && n < max; n++) {
        unsigned char ch = (unsigned char)src[n];
        dst[n] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    dst[n] = '\0';
}

int proto_encode_error(uint32_t id, const char *class, const char *desc, char **ret_line,
                       size_t *ret_len)
{
    proto_error_reply e;

    assert(ret_line && ret_len);
    copy_ascii(e.class, PROTO_MAX_CLASS, class && *class ? class : "GenericError");
    copy_ascii(e.desc, PROTO_MAX_DESC, desc ? desc : "");
    /* Any expected message will do for the self-check: error replies are read alike. */
    return encode_reply(PROTO_MSG_HELLO, id, "error", &proto_error_object, &e, ret_line, ret_len);
}
