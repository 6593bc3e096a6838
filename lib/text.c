/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Text in terminal columns (text.h). */
#include "text.h"

#include <limits.h>
#include <string.h>
#include <wchar.h>

/* n bytes of src (or n '?' when subst) at out[*used], if they fit with the terminator. */
static int put(char *out, size_t len, size_t *used, const char *src, size_t n, int subst)
{
    if (!out)
        return 1;
    if (*used + n + 1 > len)
        return 0;
    if (subst)
        memset(out + *used, '?', n);
    else
        memcpy(out + *used, src, n);
    *used += n;
    out[*used] = '\0';
    return 1;
}

int vn_text_fit(char *out, size_t len, const char *s, int cols, int pad)
{
    size_t used = 0, left = s ? strlen(s) : 0;
    mbstate_t st;
    int width = 0;

    if (out && len)
        out[0] = '\0';
    if (out && !len)
        return 0;
    memset(&st, 0, sizeof(st));
    while (left) {
        wchar_t wc;
        size_t n = mbrtowc(&wc, s, left, &st);
        int w, subst = 0;

        if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
            /* not a character here: one '?' for this byte, and start afresh after it */
            memset(&st, 0, sizeof(st));
            n = 1;
            w = 1;
            subst = 1;
        } else if ((w = wcwidth(wc)) < 0) {
            w = (int)n; /* a control or unprintable character: '?' per byte */
            subst = 1;
        }
        if (w > cols - width || !put(out, len, &used, s, n, subst))
            break;
        width += w;
        s += n;
        left -= n;
    }
    while (pad && width < cols && put(out, len, &used, " ", 1, 0))
        width++;
    return width;
}

int vn_text_width(const char *s)
{
    return vn_text_fit(NULL, 0, s, INT_MAX, 0);
}

/* The code point of the UTF-8 sequence at p (at most n bytes) and its length, or 0 when p does
 * not start a valid one (overlong, a surrogate, past U+10FFFF, cut short). */
static size_t utf8_decode(const unsigned char *p, size_t n, unsigned *cp)
{
    size_t len = p[0] < 0x80                    ? 1
                 : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
                 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
                 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                                : 0;
    unsigned c;

    if (len == 0 || len > n)
        return 0;
    c = len == 1 ? p[0] : p[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) ||
        (len == 4 && (c < 0x10000 || c > 0x10FFFF)))
        return 0;
    *cp = c;
    return len;
}

static int unsafe(unsigned c)
{
    return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
           (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 ||
           c == 0x2029;
}

size_t vn_text_scrub(char *s, bool keep_newlines)
{
    size_t n = s ? strlen(s) : 0, replaced = 0;

    for (size_t i = 0; i < n;) {
        unsigned cp = 0;
        size_t len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
        if (len == 0)
            len = 1; /* an invalid byte: replaced alone, the next one looked at afresh */
        else if (!unsafe(cp) || (keep_newlines && cp == '\n')) {
            i += len;
            continue;
        }
        memset(s + i, '?', len);
        replaced += len;
        i += len;
    }
    return replaced;
}
