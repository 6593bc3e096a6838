/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The clocks vnuma reads: CLOCK_MONOTONIC for intervals, CLOCK_REALTIME for records. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in seconds, milliseconds, nanoseconds. */
double vn_mono_s(void);
uint64_t vn_mono_ms(void);
uint64_t vn_mono_ns(void);

/* CLOCK_REALTIME in seconds since the epoch. */
double vn_real_s(void);

/*
 * Where the clocks are read: the kernel's (the default), or a test's fake clock (the fake host
 * of the unit tests, tests/unit/fakehost.h), which moves only when the test or a wait of
 * vnumad's moves it.
 */
typedef struct vn_clock_ops {
    uint64_t (*mono_ns)(void);
    uint64_t (*real_ns)(void);
    /* jump ns ahead (a fake clock); NULL: the clock runs by itself */
    void (*skip)(uint64_t ns);
} vn_clock_ops;

/* Every reading of the clocks comes from ops from now on (NULL: the kernel's again). */
void vn_clock_use(const vn_clock_ops *ops);

/*
 * A wait of s seconds that only needs the clock to have moved (a CPU time window): true when
 * the clock in use is a fake one that jumped s ahead here, false when the caller must wait
 * for real (the kernel's clock).
 */
bool vn_clock_skip(double s);

/* CLOCK_REALTIME as ISO 8601 UTC, "2026-12-01T13:18:35Z", into buf (at least 21 bytes). */
void vn_iso_time(char *buf, size_t len);
