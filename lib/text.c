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
