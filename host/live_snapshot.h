/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl snapshot` (live_snapshot.c): every running domain of the host, opted in or not,
 * read the way an advise domain is (no monitor command, nothing changed: sample.h), two
 * readings of its vCPUs a window apart, saved as a snapshot (docs/snapshot-format.md) that
 * `vnumad --advise --snapshot` takes, with a per-VM view of the same readings.
 */
#pragma once

#include <stddef.h>

#include <json-c/json.h>

#include "control.h"

/* The control command (control.h's handler): always deferred to a worker. */
int live_snapshot_command(void *opaque, const control_request *req, struct json_object **ret,
                          char *errclass, size_t classlen, char *err, size_t errlen);
