/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's log: stderr with a priority prefix ("<6>", which journald reads as
 * the level) under --foreground, syslog otherwise. One line per message; never
 * split a message over lines, people grep for them.
 */
#pragma once

#include <stdbool.h>
#include <syslog.h>

void log_setup(bool foreground, int max_level);
void log_set_level(int max_level);

__attribute__((format(printf, 2, 3))) void log_msg(int level, const char *fmt, ...);

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
