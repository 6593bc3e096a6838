/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int vn_fail(char *err, size_t errlen, int r, const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        (void)vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

bool vn_is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

const char *vn_human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= VN_GIB)
        snprintf(buf, len, "%.1f GiB", (double)b / (double)VN_GIB);
    else if (b >= VN_MIB)
        snprintf(buf, len, "%.1f MiB", (double)b / (double)VN_MIB);
    else
        snprintf(buf, len, "%" PRIu64 " B", b);
    return buf;
}

/* The magnitude of a run of decimal digits filling the whole string, or -EINVAL / -ERANGE. */
static int parse_digits(const char *s, uint64_t *ret)
{
    uint64_t v = 0;

    if (!s || !*s)
        return -EINVAL;
    for (; *s; s++) {
        unsigned d;

        if (*s < '0' || *s > '9')
            return -EINVAL;
        d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *ret = v;
    return 0;
}

int vn_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *ret)
{
    uint64_t v;
    int r = parse_digits(s, &v);

    if (r < 0)
        return r;
    if (v < lo || v > hi)
        return -ERANGE;
    *ret = v;
    return 0;
}

int vn_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *ret)
{
    bool neg = s && s[0] == '-';
    uint64_t mag;
    int64_t v;
    int r = parse_digits(neg ? s + 1 : s, &mag);

    if (r < 0)
        return r;
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
        return -ERANGE;
    v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    if (v < lo || v > hi)
        return -ERANGE;
    *ret = v;
    return 0;
}

int vn_parse_double(const char *v, double lo, double hi, double *out)
{
    char *end;
    double d;

    /* decimal only: strtod would also take "0x1p3", "inf", "nan" and a sign */
    if (!isdigit((unsigned char)v[0]) && !(v[0] == '.' && isdigit((unsigned char)v[1])))
        return -EINVAL;
    if (v[strspn(v, "0123456789.eE+-")] != '\0')
        return -EINVAL;
    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !isfinite(d) || d < lo || d > hi)
        return -EINVAL;
    *out = d;
    return 0;
}
