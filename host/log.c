/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "log.h"
#include "clock.h"
#include "text.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define LOG_LINE_MAX  2048
#define LOG_KEEP_TEXT 200 /* bytes of a suppressed message repeated in its summary line */

/* One rate-limited message: its text's hash, the window it is in, what was held back. */
typedef struct log_slot {
    uint64_t hash; /* 0: free */
    double window_start;
    double last_seen;
    unsigned count;      /* written in this window */
    uint64_t suppressed; /* held back in this window */
    int level;
    char text[LOG_KEEP_TEXT + 1];
} log_slot;

static bool log_foreground = true;
static int log_max = LOG_INFO;
static FILE *log_stream;
static FILE *log_echo; /* detached but still starting: errors and warnings also here */
static double (*log_clock)(void);
static log_slot log_slots[LOG_RATE_SLOTS];
static uint64_t log_suppressed;
/* lines come from the loop and from the pass's worker threads (host/workers.c) */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"emerg",   "alert",  "crit", "err",
                                          "warning", "notice", "info", "debug"};

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

void log_set_echo(FILE *f)
{
    pthread_mutex_lock(&log_lock);
    log_echo = f;
    pthread_mutex_unlock(&log_lock);
}

void log_set_stream(FILE *f)
{
    log_stream = f;
}

void log_set_clock(double (*now_s)(void))
{
    log_clock = now_s;
}

uint64_t log_suppressed_total(void)
{
    return log_suppressed;
}

static double log_now(void)
{
    return log_clock ? log_clock() : vn_mono_s();
}

static void log_write(int level, const char *text)
{
    if (log_foreground) {
        FILE *f = log_stream ? log_stream : stderr;
        fprintf(f, "<%d>vnumad: %s: %s\n", level, level_names[level & 7], text);
        fflush(f);
    } else {
        syslog(level, "%s", text);
        if (log_echo && level <= LOG_WARNING) {
            fprintf(log_echo, "vnumad: %s: %s\n", level_names[level & 7], text);
            fflush(log_echo);
        }
    }
}

/* FNV-1a; 0 is kept for "free slot". */
static uint64_t log_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1;
}

static void log_summary(log_slot *s)
{
    char line[LOG_LINE_MAX];

    if (!s->suppressed)
        return;
    snprintf(line, sizeof(line), "suppressed %llu messages in the last %d s: %s",
             (unsigned long long)s->suppressed, LOG_RATE_WINDOW_S, s->text);
    s->suppressed = 0;
    log_write(s->level, line);
}

static void log_flush_locked(bool all);

void log_flush_suppressed(bool all)
{
    pthread_mutex_lock(&log_lock);
    log_flush_locked(all);
    pthread_mutex_unlock(&log_lock);
}

static void log_flush_locked(bool all)
{
    double now = log_now();

    for (unsigned i = 0; i < LOG_RATE_SLOTS; i++) {
        log_slot *s = &log_slots[i];
        if (!s->hash || !(all || now - s->window_start >= LOG_RATE_WINDOW_S))
            continue;
        log_summary(s);
        if (!all)
            s->hash = 0; /* the window is over: the message starts afresh next time */
    }
}

/* true: write the message now; false: it is over its rate and was counted. */
static bool log_rate_allow(int level, const char *text, double now)
{
    uint64_t h = log_hash(text);
    log_slot *s = NULL, *victim = &log_slots[0];

    for (unsigned i = 0; i < LOG_RATE_SLOTS; i++) {
        if (log_slots[i].hash == h) {
            s = &log_slots[i];
            break;
        }
        if (!log_slots[i].hash)
            victim = &log_slots[i];
        else if (victim->hash && log_slots[i].last_seen < victim->last_seen)
            victim = &log_slots[i];
    }
    if (!s) {
        /* a new message; reusing the least recent slot reports what it held back first */
        s = victim;
        log_summary(s);
        memset(s, 0, sizeof(*s));
        s->hash = h;
        s->window_start = now;
        s->level = level;
        snprintf(s->text, sizeof(s->text), "%.*s", LOG_KEEP_TEXT, text);
    }
    s->last_seen = now;
    if (s->count < LOG_RATE_BURST) {
        s->count++;
        return true;
    }
    s->suppressed++;
    log_suppressed++;
    return false;
}

void log_msg(int level, const char *fmt, ...)
{
    char buf[LOG_LINE_MAX];
    va_list ap;

    if (level > log_max)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    /* a domain name, a guest's or libvirt's text could carry a line break, a terminal escape
     * (C0 or C1), bytes that are not UTF-8 or a bidirectional control that shows the line in
     * another order: one message on one line, none of those in it */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    (void)vn_text_scrub(buf, false);
    pthread_mutex_lock(&log_lock);
    log_flush_locked(false);
    if (level > LOG_WARNING || log_rate_allow(level, buf, log_now()))
        log_write(level, buf);
    pthread_mutex_unlock(&log_lock);
}

const char *log_quote(const char *s, char *buf, size_t len)
{
    size_t i = 0;

    if (len == 0)
        return "";
    for (; s && *s && i + 2 < len; s++) {
        if (*s == '\\' || *s == '\'')
            buf[i++] = '\\';
        buf[i++] = *s;
    }
    buf[i] = '\0';
    return buf;
}
