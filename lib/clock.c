/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "clock.h"

#include <time.h>

static uint64_t kernel_ns(clockid_t id)
{
    struct timespec ts;

    (void)clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t kernel_mono_ns(void)
{
    return kernel_ns(CLOCK_MONOTONIC);
}

static uint64_t kernel_real_ns(void)
{
    return kernel_ns(CLOCK_REALTIME);
}

static const vn_clock_ops kernel_clock = {.mono_ns = kernel_mono_ns, .real_ns = kernel_real_ns};
static const vn_clock_ops *clock_ops = &kernel_clock;

void vn_clock_use(const vn_clock_ops *ops)
{
    clock_ops = ops ? ops : &kernel_clock;
}

bool vn_clock_skip(double s)
{
    if (!clock_ops->skip)
        return false;
    clock_ops->skip(s > 0 ? (uint64_t)(s * 1e9) : 0);
    return true;
}

double vn_mono_s(void)
{
    return (double)clock_ops->mono_ns() / 1e9;
}

uint64_t vn_mono_ns(void)
{
    return clock_ops->mono_ns();
}

uint64_t vn_mono_ms(void)
{
    return vn_mono_ns() / 1000000ULL;
}

double vn_real_s(void)
{
    return (double)clock_ops->real_ns() / 1e9;
}

void vn_iso_time(char *buf, size_t len)
{
    uint64_t ns = clock_ops->real_ns();
    time_t sec = (time_t)(ns / 1000000000ULL);
    struct tm tm;

    gmtime_r(&sec, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
