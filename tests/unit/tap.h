/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Minimal test harness: each check prints "ok"/"not ok" with a description,
 * and tap_done() prints the closing "N passed, N failed" line and returns the
 * exit status (0 all passed, 1 otherwise). Skips are never counted as passes:
 * a test program that cannot run here exits 77 after saying why.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned tap_passed, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int tap_check(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("%s %u - ", ok ? "ok" : "not ok", tap_passed + tap_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (ok)
        tap_passed++;
    else
        tap_failed++;
    return ok;
}

#define CHECK(cond, ...) tap_check(!!(cond), __VA_ARGS__)

__attribute__((unused)) static int tap_done(void)
{
    printf("%u passed, %u failed\n", tap_passed, tap_failed);
    return tap_failed ? 1 : 0;
}

/* The shared topologies directory: $VN_TOPOLOGIES, else ../shared/topologies. */
__attribute__((unused)) static const char *tap_topodir(void)
{
    const char *d = getenv("VN_TOPOLOGIES");
    return d && *d ? d : "../shared/topologies";
}
