/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Guest-physical intervals (gparange.h). */
#include "gparange.h"

#include <stdlib.h>

#include "util.h"

static int cmp_iv(const void *a, const void *b)
{
    const gpa_iv *x = a, *y = b;

    return x->start < y->start ? -1 : x->start > y->start;
}

unsigned gpa_merge(gpa_iv *iv, unsigned n)
{
    unsigned w = 0;

    if (n > 1)
        qsort(iv, n, sizeof(*iv), cmp_iv);
    for (unsigned i = 0; i < n; i++) {
        if (w && iv[i].start <= iv[w - 1].end)
            iv[w - 1].end = VN_MAX(iv[w - 1].end, iv[i].end);
        else
            iv[w++] = iv[i];
    }
    return w;
}
