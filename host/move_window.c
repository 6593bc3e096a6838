/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One window of guest pages moved (move_window.h): a status query, the room check, a move. */
#include "move_window.h"

#include <string.h>

#include "rules.h"
#include "util.h"

#define ACT_RESERVE_SLACK RESERVE_SLACK_BYTES

/* Where a window's pages go, for the room check (room_pages). */
typedef struct move_req {
    int to;             /* kernel node */
    uint64_t page_size; /* the backend's */
    bool hugetlb;       /* room is the target's free huge pages of page_size, not MemFree */
    uint64_t reserve;   /* bytes of MemFree the target keeps (not for hugetlb) */
} move_req;

/* Pages of the window the target has room for: free huge pages of the size, or MemFree
 * above the reserve and its slack. Sets *hit when it is fewer than k. */
static unsigned room_pages(const numa_ops *ops, const move_req *m, unsigned k, bool *hit,
                           uint64_t *free_now)
{
    if (m->hugetlb) {
        long long free_p = ops->node_free_huge ? ops->node_free_huge(m->to, m->page_size) : -1;
        if (free_p >= 0 && (uint64_t)free_p < k) {
            *hit = true;
            *free_now = (uint64_t)free_p * m->page_size;
            return (unsigned)free_p;
        }
        return k;
    }
    long long free_b = ops->node_free(m->to);
    uint64_t floor = m->reserve + ACT_RESERVE_SLACK;
    /* the kernel allocates too while pages migrate (and others use the node): keep a slack
     * above the reserve so the node never dips below it */
    if (free_b >= 0 && (uint64_t)free_b < floor + (uint64_t)k * m->page_size) {
        uint64_t room = (uint64_t)free_b > floor ? (uint64_t)free_b - floor : 0;
        *hit = true;
        *free_now = (uint64_t)free_b;
        return (unsigned)VN_MIN((uint64_t)k, room / m->page_size);
    }
    return k;
}

int move_window_run(const numa_ops *ops, const move_window *w, uint64_t *pos, uint64_t max_bytes,
                    move_window_result *res)
{
    uint64_t ps = w->page_size ? w->page_size : ACT_PAGE_SIZE, npages = w->len / ps, off;
    uint64_t limit = max_bytes / ps; /* pages max_bytes allows */
    uint32_t batch = ps >= ACT_ONE_PAGE_PER_CALL
                         ? 1
                         : VN_MIN(VN_MAX(w->batch, 1u), (uint32_t)LOCK_HOLD_MAX_PAGES);
    void *pages[LOCK_HOLD_MAX_PAGES], *sel[LOCK_HOLD_MAX_PAGES];
    int status[LOCK_HOLD_MAX_PAGES], nodes[LOCK_HOLD_MAX_PAGES];
    unsigned n, k = 0, fit, cut = 0, at[LOCK_HOLD_MAX_PAGES];
    move_req req = {.to = w->to, .page_size = ps, .hugetlb = w->hugetlb, .reserve = w->reserve};
    bool hit = false;
    int r;

    memset(res, 0, sizeof(*res));
    if (npages == 0)
        return 0;
    off = *pos < npages ? *pos : 0;
    n = (unsigned)VN_MIN((uint64_t)batch, npages - off);
    for (unsigned i = 0; i < n; i++)
        pages[i] = (void *)(uintptr_t)(w->hva + (off + i) * ps);
    r = ops->query(w->pid, n, pages, status);
    res->queries++;
    if (r < 0)
        return r;
    for (unsigned i = 0; i < n; i++) {
        bool take = w->from >= 0 ? status[i] == w->from : status[i] >= 0 && status[i] != w->to;
        if (!take)
            continue;
        if (k >= limit) {
            if (!res->wanted_more)
                cut = i; /* the next window starts at the first page left */
            res->wanted_more = true;
            continue;
        }
        at[k] = i;
        sel[k] = pages[i];
        nodes[k] = w->to;
        k++;
    }
    fit = k ? room_pages(ops, &req, k, &hit, &res->target_free) : 0;
    res->reserve_hit = hit;
    if (fit < k) {
        cut = at[fit];
        k = fit;
    }
    if (k) {
        /* a positive return is pages not moved, and the kernel may stop before the end: only
         * a status it wrote counts as moved */
        for (unsigned i = 0; i < k; i++)
            status[i] = ACT_STATUS_UNSET;
        r = ops->move(w->pid, k, sel, nodes, status, w->shared);
        if (r < 0)
            return r;
        if (r > 0) {
            /* Linux stores no status for a batch whose migration failed in part (a
             * long-term pin holds some pages: io_uring, RDMA), moved pages included, and
             * returns how many did not move: ask where the pages are now */
            int q = ops->query(w->pid, k, sel, status);
            res->queries++;
            if (q < 0)
                return q;
        }
        for (unsigned i = 0; i < k; i++) {
            if (status[i] == w->to)
                res->pages_moved++;
            else if (status[i] != ACT_STATUS_UNSET)
                res->pages_unmovable++;
        }
    }
    res->pages_walked = res->wanted_more || res->reserve_hit ? cut : n;
    *pos = (off + res->pages_walked) % npages;
    return 0;
}
