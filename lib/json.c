/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "json.h"

#include <assert.h>
#include <stdarg.h>
#include <string.h>

vn_json_lenient vn_json_scan(const char *text, size_t len, size_t *ret_at, uint64_t *ret_keys)
{
    bool in_string = false, has_nul = false;
    size_t start = 0;
    uint64_t keys = 0;

    for (size_t i = 0; i < len; i++) {
        char ch = text[i];

        if (!in_string) {
            if (ch == '\'') {
                *ret_at = i;
                return VN_JSON_SINGLE_QUOTE;
            }
            if (ch == '"') {
                in_string = true;
                has_nul = false;
                start = i;
            }
            continue;
        }
        if ((unsigned char)ch < 0x20) {
            *ret_at = i;
            return VN_JSON_CONTROL_CHAR;
        }
        if (ch == '\\') {
            if (i + 5 < len && memcmp(text + i + 1, "u0000", 5) == 0)
                has_nul = true;
            i++; /* skip the escaped character */
        } else if (ch == '"') {
            size_t j = i + 1;

            in_string = false;
            while (j < len && vn_json_is_space(text[j]))
                j++;
            if (j < len && text[j] == ':') {
                keys++;
                if (has_nul) {
                    *ret_at = start;
                    return VN_JSON_NUL_KEY;
                }
            }
        }
    }
    if (ret_keys)
        *ret_keys = keys;
    return VN_JSON_STRICT;
}

const char *vn_json_lenient_str(vn_json_lenient l)
{
    static const char *const names[VN_JSON_LENIENT_MAX] = {
        [VN_JSON_STRICT] = "strict JSON",
        [VN_JSON_SINGLE_QUOTE] = "single-quoted strings are not JSON",
        [VN_JSON_CONTROL_CHAR] = "control character in a string",
        [VN_JSON_NUL_KEY] = "object key contains a NUL character",
    };

    return l < VN_JSON_LENIENT_MAX ? names[l] : "?";
}

static vn_json_error parsed(vn_json_doc *doc, vn_json_error e, size_t at, const char *why)
{
    doc->error = e;
    doc->at = at;
    doc->why = why;
    return e;
}

uint64_t vn_json_count_keys(struct json_object *v)
{
    uint64_t n = 0;

    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val)
        {
            (void)key;
            n += 1 + vn_json_count_keys(val);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        size_t len = json_object_array_length(v);
        for (size_t i = 0; i < len; i++)
            n += vn_json_count_keys(json_object_array_get_idx(v, i));
    }
    return n;
}

vn_json_error vn_json_parse(const char *text, size_t len, int depth, vn_json_doc *doc)
{
    _cleanup_tokener_ struct json_tokener *tok = NULL;
    _cleanup_json_ struct json_object *root = NULL;
    enum json_tokener_error jerr;
    uint64_t keys = 0;
    size_t end, i;

    assert(doc && (text || len == 0) && len <= INT32_MAX);
    *doc = (vn_json_doc){0};
    for (i = 0; i < len && vn_json_is_space(text[i]); i++)
        ;
    if (i == len)
        return parsed(doc, VN_JSON_E_EMPTY, len, "empty");
    tok = json_tokener_new_ex(depth);
    if (!tok)
        return parsed(doc, VN_JSON_E_NOMEM, 0, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    root = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue) {
        /* All of it consumed: a NUL byte ends a bare top-level scalar ("null"), or shows the
         * text is cut short. */
        root = json_tokener_parse_ex(tok, "", 1);
        if (json_tokener_get_error(tok) != json_tokener_success)
            return parsed(doc, VN_JSON_E_TRUNCATED, len, "unexpected end of input");
        jerr = json_tokener_success;
        end = len;
    }
    if (jerr == json_tokener_error_depth)
        return parsed(doc, VN_JSON_E_DEPTH, VN_MIN(end, len), "nested too deep");
    if (jerr == json_tokener_error_parse_utf8_string)
        return parsed(doc, VN_JSON_E_UTF8, VN_MIN(end, len), json_tokener_error_desc(jerr));
    if (jerr != json_tokener_success)
        return parsed(doc, VN_JSON_E_SYNTAX, VN_MIN(end, len), json_tokener_error_desc(jerr));
    /* json-c stops at a NUL byte: what follows is refused here too. */
    for (i = end; i < len; i++)
        if (!vn_json_is_space(text[i]))
            return parsed(doc, VN_JSON_E_TRAILING, i, "data after the value");
    doc->lenient = vn_json_scan(text, end, &i, &keys);
    if (doc->lenient != VN_JSON_STRICT)
        return parsed(doc, VN_JSON_E_LENIENT, i, vn_json_lenient_str(doc->lenient));
    if (vn_json_count_keys(root) != keys)
        return parsed(doc, VN_JSON_E_DUPLICATE, 0, "an object has the same key twice");
    doc->root = root;
    root = NULL;
    return parsed(doc, VN_JSON_OK, end, NULL);
}

void vn_shown(char *dst, size_t dstlen, const char *src, size_t srclen, size_t max)
{
    size_t n = 0;

    assert(dstlen > 4);
    for (size_t i = 0; i < srclen && n + 4 < dstlen; i++) {
        unsigned char ch = (unsigned char)src[i];

        if (i == max) {
            memcpy(dst + n, "...", 3);
            n += 3;
            break;
        }
        dst[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
    }
    dst[n] = '\0';
}

const char *vn_shown_str(char *dst, size_t dstlen, const char *s, size_t max)
{
    vn_shown(dst, dstlen, s ? s : "", s ? strnlen(s, max + 1) : 0, max);
    return dst;
}

void vn_jpath_append(vn_jpath *p, const char *fmt, ...)
{
    va_list ap;
    int n;
    size_t cap = p->cap && p->cap < sizeof(p->buf) ? p->cap : sizeof(p->buf);

    va_start(ap, fmt);
    n = vsnprintf(p->buf + p->len, cap - p->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        p->len = VN_MIN(p->len + (size_t)n, cap - 1);
}

size_t vn_jpath_push_key(vn_jpath *p, const char *key)
{
    size_t mark = p->len, len = strlen(key);
    char shown[VN_JPATH_MAX];
    bool plain = len > 0 && strspn(key, p->ident) == len &&
                 (p->ident_digit_ok || !(key[0] >= '0' && key[0] <= '9'));

    vn_shown(shown, VN_MIN(sizeof(shown), p->shown_max + 8), key, len, p->shown_max);
    if (plain)
        vn_jpath_append(p, "%s%s", p->len ? "." : "", shown);
    else
        vn_jpath_append(p, "[\"%s\"]", shown);
    return mark;
}

size_t vn_jpath_push_index(vn_jpath *p, size_t i)
{
    size_t mark = p->len;

    vn_jpath_append(p, "[%zu]", i);
    return mark;
}

void vn_jpath_pop(vn_jpath *p, size_t mark)
{
    p->len = mark;
    p->buf[mark] = '\0';
}
