/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where a cell's hot memory is (sample_hot.h). */
#include "sample_hot.h"

#include <errno.h>

#include "gparange.h"
#include "sample.h"
#include "util.h"

/* The cell's hot ranges inside RAM range r, whole pages of it, merged, as QEMU addresses. */
static unsigned hot_pieces(const snap_cell *cell, const ram_range *r, uint64_t ps,
                           sample_piece *out)
{
    gpa_iv iv[SNAP_MAX_HOT_RANGES];
    unsigned n = 0;

    for (unsigned h = 0; h < cell->nr_hot && n < SNAP_MAX_HOT_RANGES; h++) {
        const snap_hot_range *hr = &cell->hot[h];
        uint64_t s = VN_MAX(hr->gpa, r->gpa), e;
        if (hr->length > UINT64_MAX - hr->gpa)
            continue;
        e = VN_MIN(hr->gpa + hr->length, r->gpa + r->size);
        if (s >= e)
            continue;
        /* outward to the range's pages: a page any hot byte is in is hot */
        s = r->gpa + (s - r->gpa) / ps * ps;
        e = r->gpa + VN_MIN((e - r->gpa + ps - 1) / ps * ps, r->size);
        iv[n++] = (gpa_iv){s, e};
    }
    n = gpa_merge(iv, n);
    for (unsigned i = 0; i < n; i++)
        out[i] =
            (sample_piece){.hva = r->hva + (iv[i].start - r->gpa), .len = iv[i].end - iv[i].start};
    return n;
}

int sample_hot_pages(const numa_ops *ops, const topology *t, const dom_sample_cache *sc,
                     uint64_t seed, snap_domain *sd, unsigned *queries)
{
    sample_piece pieces[SNAP_MAX_HOT_RANGES];

    for (unsigned k = 0; k < sd->nr_cells; k++) {
        snap_cell *cell = &sd->cells[k];
        if (!cell->nr_hot || !cell->page_size || cell->nr_nodes != t->nr_nodes)
            continue;
        if (snap_cell_hot_nodes(cell) < 0)
            return -ENOMEM;
        for (unsigned ri = 0; ri < sc->nr_ram; ri++) {
            const ram_range *r = &sc->ram[ri];
            uint64_t counts[VN_MAX_NODES], ps = r->page_size ? r->page_size : cell->page_size;
            unsigned n, q = 0;
            int rc;
            if (r->cell != cell->id || !(n = hot_pieces(cell, r, ps, pieces)))
                continue;
            rc = sample_count_pieces(ops, t, sc->pid, pieces, n, ps, seed, counts, &q);
            *queries += q;
            if (rc < 0)
                return rc;
            for (unsigned nd = 0; nd < t->nr_nodes; nd++)
                cell->hot_pages[nd] +=
                    ps == cell->page_size
                        ? counts[nd]
                        : (uint64_t)((unsigned __int128)counts[nd] * ps / cell->page_size);
        }
    }
    return 0;
}
