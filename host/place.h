/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The `place` control command (place.c): the qemu hook's question at the start of an incoming
 * live migration (`vnumactl hook`, docs/fleet.md). The domain's XML in, the same XML out with
 * its cells placed on this host as it is now: live pins, a preferred memory node per cell and
 * a <placed> mark in vnumad's <state>; or the reason it passes unchanged. Nothing is changed
 * on the host: libvirt starts the domain from the XML.
 */
#pragma once

#include <stddef.h>

#include <json-c/json.h>

#include "control.h"

/* The control command (control.h's handler); answers at once (no libvirt, no QEMU call). */
int place_command(void *opaque, const control_request *req, struct json_object **ret,
                  char *errclass, size_t classlen, char *err, size_t errlen);
