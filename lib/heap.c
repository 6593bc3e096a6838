/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "heap.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>

/* defined by the sanitizer runtime when one is linked in (SANITIZE=1), else NULL */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

int vn_heap_bytes(uint64_t *ret)
{
    struct mallinfo2 mi;

    if (__sanitizer_get_current_allocated_bytes) {
        *ret = __sanitizer_get_current_allocated_bytes();
        return 0;
    }
    mi = mallinfo2();
    if (mi.arena == 0 && mi.hblkhd == 0)
        return -ENODATA; /* glibc's malloc was never called: another allocator answers */
    *ret = (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
    return 0;
}
