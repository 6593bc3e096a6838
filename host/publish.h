/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of a pass (publish.c): history, journal, QEMU, metadata, log, metrics file.
 * Below the pass and domain tracking; the record's write on a worker is submitted through
 * vnumad.submit_write, which the pass hands down.
 */
#pragma once

#include "core.h"

/* The record of one domain in one pass, everywhere it goes: history, journal, log line,
 * action counters, and (d not NULL) the QEMU object and the live metadata. */
void publish_record(vnumad *dm, virt_dom *d, dom_state *st, const record_ctx *rc,
                    const plan_domain *pd, const act_result *res);

/* publish_record() of a record with no plan: this pass, now, `action` for `reason`. */
void publish_record_simple(vnumad *dm, virt_dom *d, dom_state *st, const char *action,
                           const char *reason);

/* Write the originals and (json not NULL) the record into the live metadata; 0, or -1 when
 * it could not be written (logged; the callers count it). */
int publish_metadata(virt_dom *d, dom_state *st, uint64_t pass, const char *time, const char *json);

/* The record into QEMU (use_qmp) and the live metadata, on a worker (vnumad.submit_write);
 * 0, or -1 when the metadata could not be written. */
int publish_write(virt_dom *d, dom_state *st, bool use_qmp, const char *json, uint64_t pass,
                  const char *time);

/* The metrics exposition (host/metrics.c) of the current state, or NULL (out of memory);
 * the caller frees it. */
char *publish_metrics_text(vnumad *dm);

/* After every pass: flush suppressed log lines, write the metrics file (if configured). */
void publish_metrics(vnumad *dm);
