/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bytes this process's allocator has handed out and not taken back: what a leak of memory
 * that is still referenced (a table that only grows) makes grow, where LeakSanitizer sees
 * nothing and VmRSS also counts the allocator's caches (and, in an ASan build, its quarantine of
 * freed memory). vnumactl status reports it as heap_bytes.
 */
#pragma once

#include <stdint.h>

/*
 * glibc's mallinfo2() (every arena, and the chunks it mmapped); in an ASan build, the sanitizer
 * allocator's own count (__sanitizer_get_current_allocated_bytes), which replaces glibc's
 * malloc there. 0, or -ENODATA when another allocator replaced glibc's (valgrind's memcheck, a
 * preloaded jemalloc): glibc's arenas are then empty.
 */
int vn_heap_bytes(uint64_t *ret);
