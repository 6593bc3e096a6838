/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's log: stderr with a priority prefix ("<6>", which journald reads as
 * the level) under --foreground, syslog otherwise. One line per message; never
 * split a message over lines, people grep for them.
 *
 * Repeated errors and warnings are rate-limited: the same message text (after
 * formatting) is written at most LOG_RATE_BURST times per LOG_RATE_WINDOW_S
 * seconds; the rest are counted, and once the window has passed one line says
 * how many were suppressed ("suppressed N messages in the last 60 s: <text>").
 * Info and debug lines (one per decision) are never suppressed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <syslog.h>

#define LOG_RATE_BURST    5  /* the same error or warning at most this often ... */
#define LOG_RATE_WINDOW_S 60 /* ... per this many seconds */
#define LOG_RATE_SLOTS    64 /* distinct messages tracked at once (least recent reused) */

void log_setup(bool foreground, int max_level);
void log_set_level(int max_level);

__attribute__((format(printf, 2, 3))) void log_msg(int level, const char *fmt, ...);

/* Write the "suppressed" lines of windows that have ended (also done on every log_msg()),
 * or of every window when `all` (at exit). */
void log_flush_suppressed(bool all);

/* Messages suppressed by the rate limit since start (for the metrics). */
uint64_t log_suppressed_total(void);

/*
 * s for a quoted field of a log line (domain='%s'): backslash and ' become \\ and \',
 * so a name like "a' action=acted x='" cannot forge fields; control characters are
 * flattened by log_msg() itself. Writes into buf (truncated to len, never in the middle of
 * an escape) and returns it.
 */
const char *log_quote(const char *s, char *buf, size_t len);
/* log_quote(s) into a buffer of the calling expression's own (a domain name's worth, escaped):
 * every name a log line quotes goes through it, so that no name can make a line hold what
 * another line would (decision domain='...'). */
#define LOG_Q_MAX (2 * 256 + 1)
#define LOG_Q(s)  log_quote((s), (char[LOG_Q_MAX]){""}, LOG_Q_MAX)

/* Tests: where foreground lines go (NULL: stderr), and the clock (NULL: CLOCK_MONOTONIC). */
void log_set_stream(FILE *f);
/* Without --foreground, also write errors and warnings to f (NULL: stop): the start of a
 * detaching vnumad, whose terminal waits for it (host/detach.h). */
void log_set_echo(FILE *f);
void log_set_clock(double (*now_s)(void));

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
