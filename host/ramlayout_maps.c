/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each guest cell's RAM from /proc/PID/maps and the live XML alone (ramlayout_maps.h). */
#include "ramlayout_maps.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "procmaps.h"
#include "util.h"

/* Unnamed mappings of a cell's size kept for the matching (more: ambiguous anyway). */
#define MAPS_CANDIDATES_MAX 8

typedef struct maps_cell {
    unsigned id;
    uint64_t bytes;
    char token[32]; /* the backend's name: "ram-node3", "pc.ram" */
    /* mappings named after it, merged while contiguous */
    uint64_t start, end;
    bool shared;
    unsigned extents; /* disjoint runs of named mappings: 1 is the cell's RAM */
    /* unnamed mappings of its size followed by a guard page */
    unsigned nr_cand;
    uint64_t cand[MAPS_CANDIDATES_MAX];
    bool cand_shared[MAPS_CANDIDATES_MAX];
} maps_cell;

typedef struct maps_walk {
    maps_cell *cells;
    unsigned nr;
    /* the last unnamed read-write mapping: a candidate if a guard page follows it */
    proc_map prev;
    bool prev_open;
} maps_walk;

/* Whether name holds token as a whole word (not "ram-node1" in "ram-node12"). */
static bool has_token(const char *name, const char *token)
{
    size_t len = strlen(token);

    for (const char *p = strstr(name, token); p; p = strstr(p + 1, token)) {
        bool before = p == name || !isalnum((unsigned char)p[-1]);
        bool after = !isdigit((unsigned char)p[len]) && !isalpha((unsigned char)p[len]);
        if (before && after)
            return true;
    }
    return false;
}

/* An anonymous mapping, or a memfd (QEMU names every memfd backend alike). */
static bool unnamed(const proc_map *m)
{
    return (m->inode == 0 && m->name[0] == '\0') ||
           (m->inode != 0 && strncmp(m->name, "/memfd:memory-backend-memfd", 27) == 0);
}

static void named(maps_walk *w, const proc_map *m)
{
    if (m->inode == 0 || m->name_cut)
        return;
    for (unsigned i = 0; i < w->nr; i++) {
        maps_cell *c = &w->cells[i];
        if (!has_token(m->name, c->token))
            continue;
        if (c->extents && c->end == m->start) {
            c->end = m->end; /* the same file, split into two mappings */
        } else {
            c->extents++;
            c->start = m->start;
            c->end = m->end;
        }
        c->shared |= m->perms[3] == 's';
    }
}

static int on_map(const proc_map *m, void *opaque)
{
    maps_walk *w = opaque;

    /* QEMU leaves one inaccessible page right after a RAM block it maps (its guard page) */
    if (w->prev_open && m->start == w->prev.end && strncmp(m->perms, "---", 3) == 0) {
        uint64_t size = w->prev.end - w->prev.start;
        for (unsigned i = 0; i < w->nr; i++) {
            maps_cell *c = &w->cells[i];
            if (c->bytes != size)
                continue;
            if (c->nr_cand < MAPS_CANDIDATES_MAX) {
                c->cand_shared[c->nr_cand] = w->prev.perms[3] == 's';
                c->cand[c->nr_cand] = w->prev.start;
            }
            c->nr_cand++;
        }
    }
    /* guest RAM is read-write, never executable (TCG's code buffers are rwx, also guarded) */
    w->prev_open = unnamed(m) && (strcmp(m->perms, "rw-p") == 0 || strcmp(m->perms, "rw-s") == 0) &&
                   m->offset == 0;
    if (w->prev_open)
        w->prev = *m;
    named(w, m);
    return 0;
}

/* printf into why[], after what it holds. */
static void say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
    size_t used = strnlen(why, whylen);
    va_list ap;

    if (used + 1 >= whylen)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(why + used, whylen - used, fmt, ap);
    va_end(ap);
}

int ramlayout_maps(const char *root, pid_t pid, const domxml_info *x,
                   ram_range ret[SNAP_MAX_CELLS_PER_DOMAIN], unsigned *ret_nr, char *why,
                   size_t whylen)
{
    maps_cell cells[SNAP_MAX_CELLS_PER_DOMAIN];
    maps_walk w = {.cells = cells};
    unsigned nr = 0;
    int r;

    why[0] = '\0';
    *ret_nr = 0;
    memset(cells, 0, sizeof(cells));
    if (x->nr_cells == 0) {
        cells[0].bytes = x->memory_bytes > x->device_bytes ? x->memory_bytes - x->device_bytes : 0;
        (void)snprintf(cells[0].token, sizeof(cells[0].token), "pc.ram");
        w.nr = 1;
    }
    for (unsigned i = 0; i < x->nr_cells; i++) {
        cells[i].id = x->cells[i].id;
        cells[i].bytes = x->cells[i].bytes;
        (void)snprintf(cells[i].token, sizeof(cells[i].token), "ram-node%u", x->cells[i].id);
        w.nr++;
    }
    r = procmaps_walk(root, pid, 0, PROCMAPS_ALL, on_map, &w);
    if (r < 0 && r != -ENOENT)
        return r;

    for (unsigned i = 0; i < w.nr; i++) {
        maps_cell *c = &cells[i];
        unsigned same = 0;

        if (c->extents == 1) {
            ret[nr++] = (ram_range){.cell = c->id,
                                    .gpa = RAM_GPA_UNKNOWN,
                                    .hva = c->start,
                                    .size = c->end - c->start,
                                    .shared = c->shared};
            continue;
        }
        if (c->extents > 1) {
            say(why, whylen, "%scell %u: %u separate mappings named %s", why[0] ? "; " : "", c->id,
                c->extents, c->token);
            continue;
        }
        for (unsigned k = 0; k < w.nr; k++)
            same += cells[k].extents == 0 && cells[k].bytes == c->bytes;
        if (c->bytes && same == 1 && c->nr_cand == 1) {
            ret[nr++] = (ram_range){.cell = c->id,
                                    .gpa = RAM_GPA_UNKNOWN,
                                    .hva = c->cand[0],
                                    .size = c->bytes,
                                    .shared = c->cand_shared[0]};
            continue;
        }
        if (same > 1) {
            bool first = true;
            for (unsigned k = 0; k < i; k++)
                first &= !(cells[k].extents == 0 && cells[k].bytes == c->bytes);
            if (!first)
                continue; /* said with the first cell of its size */
            say(why, whylen, "%scells", why[0] ? "; " : "");
            for (unsigned k = i; k < w.nr; k++)
                if (cells[k].extents == 0 && cells[k].bytes == c->bytes)
                    say(why, whylen, "%s %u", k == i ? "" : ",", cells[k].id);
            say(why, whylen,
                ": %u of %" PRIu64 " MiB in %u unnamed mappings, which is which only QEMU's "
                "monitor tells",
                same, c->bytes >> 20, c->nr_cand);
        } else {
            say(why, whylen, "%scell %u: %u unnamed mappings of its %" PRIu64 " MiB",
                why[0] ? "; " : "", c->id, c->nr_cand, c->bytes >> 20);
        }
    }
    *ret_nr = nr;
    return 0;
}
