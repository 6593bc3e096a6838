/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics table of docs/operations.md, generated from what metrics_render() writes for
 * a sample host: one row per family with its type, its labels and its HELP text, and the
 * values of each label that names a kind (action, reason, rule, call, kind, mode, state).
 * `make metrics-doc` writes it into the document; test-metrics fails while they differ.
 */
#pragma once

#include <stdio.h>

/* The lines that open and close the generated table in the document. */
#define METRICS_DOC_BEGIN "<!-- BEGIN metrics table"
#define METRICS_DOC_END   "<!-- END metrics table -->"

/* Write the table, its opening and closing lines included, to out. 0 or a negative errno. */
int metrics_doc_table(FILE *out);

/* doc with the text from its METRICS_DOC_BEGIN line to its METRICS_DOC_END line (both
 * included) replaced by table, in *ret (free it). -ENOENT when doc has no such pair. */
int metrics_doc_splice(const char *doc, const char *table, char **ret);
