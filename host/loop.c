/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's event loop is libvirt's default event implementation (the one libvirt's own
 * events need): file descriptors and timers registered on it (virt.h's loop_*), with
 * libvirt's flags translated (loop.h).
 */
#include <errno.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdlib.h>

#include "loop.h"

typedef struct loop_fd {
    loop_fd_cb cb;
    void *opaque;
} loop_fd;

typedef struct loop_timer {
    loop_timer_cb cb;
    void *opaque;
} loop_timer;

static int to_vir_events(int ev)
{
    return ((ev & LOOP_READABLE) ? VIR_EVENT_HANDLE_READABLE : 0) |
           ((ev & LOOP_WRITABLE) ? VIR_EVENT_HANDLE_WRITABLE : 0);
}

static void loop_fd_dispatch(int watch, int fd, int events, void *opaque)
{
    loop_fd *f = opaque;
    int ev = ((events & VIR_EVENT_HANDLE_READABLE) ? LOOP_READABLE : 0) |
             ((events & VIR_EVENT_HANDLE_WRITABLE) ? LOOP_WRITABLE : 0) |
             ((events & (VIR_EVENT_HANDLE_HANGUP | VIR_EVENT_HANDLE_ERROR)) ? LOOP_HANGUP : 0);

    f->cb(watch, fd, ev, f->opaque);
}

int loop_add_fd(int fd, int events, loop_fd_cb cb, void *opaque)
{
    loop_fd *f = calloc(1, sizeof(*f));
    int w;

    if (!f)
        return -ENOMEM;
    f->cb = cb;
    f->opaque = opaque;
    w = virEventAddHandle(fd, to_vir_events(events), loop_fd_dispatch, f, free);
    if (w < 0) {
        free(f);
        return -EIO;
    }
    return w;
}

void loop_remove_fd(int watch)
{
    if (watch >= 0)
        (void)virEventRemoveHandle(watch);
}

static void loop_timer_dispatch(int timer, void *opaque)
{
    loop_timer *t = opaque;

    t->cb(timer, t->opaque);
}

int loop_add_timer(int ms, loop_timer_cb cb, void *opaque)
{
    loop_timer *t = calloc(1, sizeof(*t));
    int id;

    if (!t)
        return -ENOMEM;
    t->cb = cb;
    t->opaque = opaque;
    id = virEventAddTimeout(ms, loop_timer_dispatch, t, free);
    if (id < 0) {
        free(t);
        return -EIO;
    }
    return id;
}

void loop_update_timer(int timer, int ms)
{
    if (timer >= 0)
        virEventUpdateTimeout(timer, ms);
}

void loop_remove_timer(int timer)
{
    if (timer >= 0)
        (void)virEventRemoveTimeout(timer);
}

/* libvirt prints errors to stderr unless told not to: vnumad logs them itself. */
static void loop_silent(void *opaque, virErrorPtr err)
{
    (void)opaque;
    (void)err;
}

int loop_init(void)
{
    virSetErrorFunc(NULL, loop_silent);
    return virEventRegisterDefaultImpl() < 0 ? -EIO : 0;
}

int loop_run_once(void)
{
    return virEventRunDefaultImpl() < 0 ? -EIO : 0;
}

const char *loop_last_error(void)
{
    const char *m = virGetLastErrorMessage();

    return m ? m : "libvirt event loop error";
}
