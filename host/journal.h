/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The decision journal's file: state_dir/journal.jsonl, one record per line (docs/records.md),
 * appended, rotated by size and reopened on request.
 *
 * Rotation: a line that would take journal.jsonl past max_bytes first moves journal.jsonl to
 * journal.jsonl.1 (and .1 to .2, ... up to .files, the oldest dropped), so the journal never
 * holds more than max_bytes x (files + 1). Reopening (SIGHUP) makes a new journal.jsonl when
 * something else (logrotate) moved it away.
 */
#pragma once

#include <stdint.h>

#define JOURNAL_NAME      "journal.jsonl"
#define JOURNAL_FILES_MAX 100 /* rotated files kept at most (journal_files) */

typedef struct journal_file journal_file;

/* Open (create, mode 0600) dir/journal.jsonl for appending, making dir (0700) if needed:
 * 0 or -errno. */
int journal_open(const char *dir, journal_file **out);

/* Append line and a newline, rotating first when journal.jsonl would pass max_bytes (0: never)
 * keeping `files` rotated files: 0, or -errno when the line could not be written (a failed
 * rotation is also an error, but the line is still appended to the current file). */
int journal_append(journal_file *j, const char *line, uint64_t max_bytes, unsigned files);

/* Close and open journal.jsonl again: 0 or -errno (then nothing is written until a reopen
 * succeeds). */
int journal_reopen(journal_file *j);

/* The size of journal.jsonl as vnumad wrote it since it opened it (with what was there). */
uint64_t journal_bytes(const journal_file *j);

void journal_close(journal_file *j);
