/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's event loop (loop.c): libvirt's default event implementation, the one libvirt's own
 * events need. File descriptors and timers are registered on it; one thread runs it.
 */
#pragma once

#define LOOP_READABLE 1
#define LOOP_WRITABLE 2
#define LOOP_HANGUP   4

typedef void (*loop_fd_cb)(int watch, int fd, int events, void *opaque);
typedef void (*loop_timer_cb)(int timer, void *opaque);

/* Register libvirt's default event loop (and keep libvirt from printing its errors: vnumad
 * logs them). Call once, before virt_open(). 0 or -EIO (loop_last_error says why). */
int loop_init(void);
/* Run one iteration (blocks until an fd or timer fires). 0 or -EIO. */
int loop_run_once(void);
/* What the last failure of the loop said. */
const char *loop_last_error(void);
/* Watch fd for LOOP_* events. Returns a watch id >= 0 or -errno. */
int loop_add_fd(int fd, int events, loop_fd_cb cb, void *opaque);
void loop_remove_fd(int watch);
/* A timer firing every ms milliseconds (-1: disabled, 0: at the next iteration). */
int loop_add_timer(int ms, loop_timer_cb cb, void *opaque);
void loop_update_timer(int timer, int ms);
void loop_remove_timer(int timer);
