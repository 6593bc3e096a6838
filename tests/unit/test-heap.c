/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lib/heap.c: the heap in use follows what is allocated and freed, in the plain build (glibc's
 * mallinfo2) and in the ASan build (the sanitizer allocator's count). Under valgrind's memcheck
 * (tests/cli/valgrind.sh sets VN_HEAP_UNCOUNTED=1), whose malloc replaces glibc's, it is not
 * counted, and says so.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heap.h"
#include "tap.h"

#define BLOCK (1u << 20)

int main(void)
{
    uint64_t before = 0, held = 0, after = 0;
    char *small = malloc(100), *p = malloc(BLOCK);
    const char *uncounted = getenv("VN_HEAP_UNCOUNTED");
    int r;

    if (!small || !p)
        return 1;
    memset(p, 1, BLOCK);
    if (uncounted && strcmp(uncounted, "1") == 0) {
        r = vn_heap_bytes(&held);
        CHECK(r == -ENODATA, "another allocator than glibc's: not counted (%d, %llu bytes)", r,
              (unsigned long long)held);
        free(p);
        free(small);
        return tap_done();
    }
    free(p);
    r = vn_heap_bytes(&before);
    CHECK(r == 0 && before >= 100, "the heap in use is counted (%d, %llu bytes)", r,
          (unsigned long long)before);
    p = malloc(BLOCK);
    if (!p)
        return 1;
    memset(p, 1, BLOCK);
    (void)vn_heap_bytes(&held);
    CHECK(held >= before + BLOCK, "1 MiB allocated and held shows (%llu -> %llu bytes)",
          (unsigned long long)before, (unsigned long long)held);
    free(p);
    free(small);
    (void)vn_heap_bytes(&after);
    CHECK(after < held && held - after >= BLOCK, "and goes once freed (%llu -> %llu bytes)",
          (unsigned long long)held, (unsigned long long)after);
    return tap_done();
}
