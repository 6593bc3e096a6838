/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static bool log_foreground = true;
static int log_max = LOG_INFO;

void log_setup(bool foreground, int max_level)
{
    log_foreground = foreground;
    log_max = max_level;
    if (!foreground)
        openlog("vnumad", LOG_PID, LOG_DAEMON);
}

void log_set_level(int max_level)
{
    log_max = max_level;
}

void log_msg(int level, const char *fmt, ...)
{
    static const char *const names[] = {"emerg",   "alert",  "crit", "err",
                                        "warning", "notice", "info", "debug"};
    char buf[2048];
    va_list ap;

    if (level > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    /* a domain name could carry a newline: keep one message on one line */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (log_foreground) {
        fprintf(stderr, "<%d>vnumad: %s: %s\n", level, names[level & 7], buf);
        fflush(stderr);
    } else {
        syslog(level, "%s", buf);
    }
}
