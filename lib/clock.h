/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The clocks vnuma reads: CLOCK_MONOTONIC for intervals, CLOCK_REALTIME for records. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC in seconds, milliseconds, nanoseconds. */
double vn_mono_s(void);
uint64_t vn_mono_ms(void);
uint64_t vn_mono_ns(void);

/* CLOCK_REALTIME in seconds since the epoch. */
double vn_real_s(void);

/* CLOCK_REALTIME as ISO 8601 UTC, "2026-12-01T13:18:35Z", into buf (at least 21 bytes). */
void vn_iso_time(char *buf, size_t len);
