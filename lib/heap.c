/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "heap.h"

#include <malloc.h>
#include <stddef.h>

/* defined by the sanitizer runtime when one is linked in (SANITIZE=1), else NULL */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));

uint64_t vn_heap_bytes(void)
{
    struct mallinfo2 mi;

    if (__sanitizer_get_current_allocated_bytes)
        return __sanitizer_get_current_allocated_bytes();
    mi = mallinfo2();
    return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}
