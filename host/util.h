/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Small helpers shared by every vnuma module: cleanup attributes, array sizes,
 * checked integer parsing. Nothing here does I/O.
 */
#pragma once

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

#define _cleanup_(f)     __attribute__((cleanup(f)))
#define _cleanup_free_   _cleanup_(vn_freep)
#define _cleanup_fclose_ _cleanup_(vn_fclosep)
#define _cleanup_close_  _cleanup_(vn_closep)

/* Hand a cleanup-owned pointer to the caller: the variable no longer owns it. */
#define VN_TAKE_PTR(p)                                                                             \
    ({                                                                                             \
        __typeof__(p) _tmp_ = (p);                                                                 \
        (p) = NULL;                                                                                \
        _tmp_;                                                                                     \
    })

#define VN_GIB (1024ULL * 1024 * 1024)
#define VN_MIB (1024ULL * 1024)
