/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Snapshot JSON (docs/snapshot-format.md) to a `snapshot` value, with json-c.
 * The input is treated as untrusted: every field is type- and range-checked,
 * unknown fields are refused, counts are bounded by the SNAP_MAX_* limits of
 * model.h, and an error names the file and the JSON path of the bad field.
 */
#pragma once

#include <stddef.h>

#include "model.h"
#include "topology.h"

/* Bytes of snapshot JSON accepted at most. */
#define SNAP_MAX_FILE_BYTES (64u * 1024 * 1024)
/* JSON nesting depth accepted at most. */
#define SNAP_MAX_DEPTH 16

/*
 * Parse len bytes of JSON text. `origin` names the source in errors (a file
 * name). Node numbers in the JSON are the kernel's (os_index) and must exist in
 * t; they are stored as topology node indexes. Returns 0 and fills *ret (free
 * it with snapshot_clear), or -EINVAL (bad content) / -E2BIG (over a limit) /
 * -ENOMEM, with "ORIGIN: PATH: reason" in err. *ret is untouched on error.
 */
int snap_parse(const char *text, size_t len, const char *origin, const topology *t, snapshot *ret,
               char *err, size_t errlen);

/* Read and parse a file; the same contract as snap_parse, plus -errno of open/read. */
int snap_load_file(const char *path, const topology *t, snapshot *ret, char *err, size_t errlen);
