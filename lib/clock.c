/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "clock.h"

#include <time.h>

static struct timespec now(clockid_t id)
{
    struct timespec ts;

    (void)clock_gettime(id, &ts);
    return ts;
}

double vn_mono_s(void)
{
    struct timespec ts = now(CLOCK_MONOTONIC);

    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t vn_mono_ns(void)
{
    struct timespec ts = now(CLOCK_MONOTONIC);

    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t vn_mono_ms(void)
{
    return vn_mono_ns() / 1000000ULL;
}

double vn_real_s(void)
{
    struct timespec ts = now(CLOCK_REALTIME);

    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void vn_iso_time(char *buf, size_t len)
{
    struct timespec ts = now(CLOCK_REALTIME);
    struct tm tm;

    gmtime_r(&ts.tv_sec, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
