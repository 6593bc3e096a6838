/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * port: the agent's virtio-serial port. Found through the udev link
 * /dev/virtio-ports/NAME or, where no udev runs (an initramfs), by scanning
 * /sys/class/virtio-ports/vportNpM/name. With no host client connected a read
 * returns EOF (0) and poll() reports POLLHUP: the caller backs off and tries
 * again; the port stays open.
 */
#pragma once

#include <stddef.h>

#define PORT_NAME "org.vnuma.agent.0"

/* The device of the port named `name` below root ("" for /): 0 and the path, or -ENOENT. */
int port_find(const char *root, const char *name, char *path, size_t len);

/* Open the device read-write, non-blocking: the fd or -errno (-EBUSY: another opener). */
int port_open(const char *path);

/*
 * Write all of buf to the non-blocking fd within timeout_ms. 0, -ETIMEDOUT,
 * or -errno (-EPIPE, -ENODEV: no host client; the reply is lost).
 */
int port_write_all(int fd, const char *buf, size_t len, int timeout_ms);
