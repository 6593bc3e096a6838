/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A `snapshot` value as snapshot JSON (docs/snapshot-format.md, version 1): what snap_parse()
 * reads back into the same value. How `vnumactl snapshot` saves the live host for
 * `vnumad --advise --snapshot`.
 */
#pragma once

#include <json-c/json.h>

#include "model.h"
#include "topology.h"

/* The snapshot as a JSON object (node numbers the kernel's, through t), or NULL when out of
 * memory. Fields at their default are left out. The caller puts the object. */
struct json_object *snapshot_write(const topology *t, const snapshot *s);
