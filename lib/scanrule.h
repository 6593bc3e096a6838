/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the guest agent's scanner shares with the host's sampler, from ../shared/RULES.md:
 * rule 4 (every region gets a bounded number of unconditional scans, so regions only other
 * threads use are never starved) and rule 5's window (one move_pages() or pagemap read
 * covers at most LOCK_HOLD_MAX_PAGES pages). Pure; host/rules.h has the rest of the rules.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Rule 5: pages one move_pages() call (status query or move) covers at most. */
#define LOCK_HOLD_MAX_PAGES 4096

/* Window size of one scan, as the kernel's numa_balancing_scan_size_mb default. */
#define SCAN_SIZE_DEFAULT (256ULL * 1024 * 1024)

/*
 * Unconditional scans a region of `region_bytes` may get: 1/2 * size / scan
 * size, at least 1 (a region smaller than two windows still gets one).
 */
uint64_t rule_scan_budget(uint64_t region_bytes, uint64_t scan_bytes);

/*
 * Should a region be scanned this pass? `touched`: someone running now used
 * it (the cheap, usual filter); `scans_done`: unconditional scans it has had.
 * An untouched region is scanned while it is within its budget, so regions
 * only other threads use are never starved.
 */
bool rule_scan_region(bool touched, uint64_t scans_done, uint64_t region_bytes,
                      uint64_t scan_bytes);
