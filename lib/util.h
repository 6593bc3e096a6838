/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by every vnuma program (host, agent, protocol): cleanup
 * attributes, array sizes, byte units. Nothing here does I/O. The base library
 * (lib/) depends on no header of host/, agent/ or proto/.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define VN_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define VN_MIN(a, b)     ((a) < (b) ? (a) : (b))
#define VN_MAX(a, b)     ((a) > (b) ? (a) : (b))

static inline void vn_freep(void *p)
{
    free(*(void **)p);
}

static inline void vn_fclosep(FILE **f)
{
    if (*f)
        (void)fclose(*f);
}

static inline void vn_closep(int *fd)
{
    if (*fd >= 0)
        (void)close(*fd);
}

static inline void vn_closedirp(DIR **d)
{
    if (*d)
        (void)closedir(*d);
}

#define _cleanup_(f)       __attribute__((cleanup(f)))
#define _cleanup_free_     _cleanup_(vn_freep)
#define _cleanup_fclose_   _cleanup_(vn_fclosep)
#define _cleanup_close_    _cleanup_(vn_closep)
#define _cleanup_closedir_ _cleanup_(vn_closedirp)

/* Hand a cleanup-owned pointer to the caller: the variable no longer owns it. */
#define VN_TAKE_PTR(p)                                                                             \
    ({                                                                                             \
        __typeof__(p) _tmp_ = (p);                                                                 \
        (p) = NULL;                                                                                \
        _tmp_;                                                                                     \
    })

/*
 * Write a reason into err (when err and errlen are set) and return r, for library-like code
 * that reports errors as a return value plus a reason: `return vn_fail(err, errlen, -EINVAL,
 * "bad cellid '%s'", shown)`.
 */
__attribute__((format(printf, 4, 5))) int vn_fail(char *err, size_t errlen, int r, const char *fmt,
                                                  ...);

/* True when the n bytes at s are all isspace() characters (or n is 0). */
bool vn_is_blank(const char *s, size_t n);

#define VN_GIB (1024ULL * 1024 * 1024)
#define VN_MIB (1024ULL * 1024)

/* "1.5 GiB", "12.0 MiB" or "4096 B" into buf (at least 16 bytes); returns buf. */
const char *vn_human_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * Checked decimal parsing of a whole string: digits only (a leading '-' for the signed
 * one), no sign, space, base prefix or trailing text, within lo..hi. 0, or -EINVAL
 * (not a number) / -ERANGE (outside lo..hi); *ret is written only on success.
 */
int vn_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *ret);
int vn_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *ret);
/* A decimal number in [lo, hi] (digits, a point, an exponent: no sign, hex, inf or nan):
 * 0, or -EINVAL. */
int vn_parse_double(const char *s, double lo, double hi, double *ret);
