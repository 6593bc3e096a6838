/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/heap.c: the heap in use follows what is allocated and freed, in the plain build (glibc's
 * mallinfo2) and in the ASan build (the sanitizer allocator's count).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "tap.h"

#define BLOCK (1u << 20)

int main(void)
{
    uint64_t before, held, after;
    char *small = malloc(100), *p;

    before = vn_heap_bytes();
    CHECK(small && before >= 100, "the heap in use is counted (%llu bytes)",
          (unsigned long long)before);
    p = malloc(BLOCK);
    if (!p)
        return 1;
    memset(p, 1, BLOCK);
    held = vn_heap_bytes();
    CHECK(held >= before + BLOCK, "1 MiB allocated and held shows (%llu -> %llu bytes)",
          (unsigned long long)before, (unsigned long long)held);
    free(p);
    free(small);
    after = vn_heap_bytes();
    CHECK(after < held && held - after >= BLOCK, "and goes once freed (%llu -> %llu bytes)",
          (unsigned long long)held, (unsigned long long)after);
    return tap_done();
}
