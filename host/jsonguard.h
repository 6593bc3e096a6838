/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What json-c 0.16 lets through even in strict mode, found in the text it
 * accepted: single-quoted strings, and "\u0000" in an object key (the key is
 * silently cut at the NUL, so "pass\u0000x" would count as "pass"). Used by
 * every host parser of untrusted JSON (snapshots, QMP replies).
 */
#pragma once

#include <stddef.h>

/* Offset of the offending character with *why set to the reason, or SIZE_MAX. */
size_t json_find_lenient_syntax(const char *text, size_t len, const char **why);
