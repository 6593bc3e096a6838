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
