/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "scanrule.h"

#include "util.h"

/*
 * Rule 4 (seed 000, Raghavendra K T): a scanner that only looks at regions the
 * current thread touched starves regions other threads use
 * (numa01_THREAD_ALLOC -35%). Every region gets up to
 * 1/2 * region_size / scan_size unconditional scans, counted per region.
 */
uint64_t rule_scan_budget(uint64_t region_bytes, uint64_t scan_bytes)
{
    uint64_t budget;

    if (scan_bytes == 0)
        scan_bytes = SCAN_SIZE_DEFAULT;
    budget = region_bytes / scan_bytes / 2;
    return VN_MAX(1ULL, budget);
}

bool rule_scan_region(bool touched, uint64_t scans_done, uint64_t region_bytes, uint64_t scan_bytes)
{
    if (touched)
        return true;
    return scans_done < rule_scan_budget(region_bytes, scan_bytes);
}
