/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Text in terminal columns, for vnumactl's tables: a domain name is UTF-8 (libvirt allows
 * any printable character) and may be wider or narrower than its bytes. Measured with the C
 * library's mbrtowc() and wcwidth() in the LC_CTYPE locale the program set (vnumactl sets
 * the environment's): in a UTF-8 locale a name keeps its characters, in the C locale each
 * byte it cannot show becomes '?' (as ls(1) shows names). No I/O.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * s cut to at most cols terminal columns, never inside a character, and padded with spaces
 * to cols when pad is set, into out (len bytes, always terminated; a smaller out ends the
 * text earlier). A character the locale cannot show (an invalid byte, a control or other
 * unprintable character) becomes one '?' per byte. Returns the columns written; out may be
 * NULL with len 0 to measure only.
 */
int vn_text_fit(char *out, size_t len, const char *s, int cols, int pad);

/* The terminal columns of s as vn_text_fit() would write it. */
int vn_text_width(const char *s);

/*
 * s made safe to print whatever the reader's terminal and the locale (in place, locale-free: a
 * daemon runs in the C locale): every byte that is not part of valid UTF-8, and every C0 or C1
 * control, DEL, bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)
 * and line or paragraph separator (U+2028, U+2029) becomes '?' (one per byte), newlines too
 * unless keep_newlines. Returns how many bytes it replaced.
 */
size_t vn_text_scrub(char *s, bool keep_newlines);
