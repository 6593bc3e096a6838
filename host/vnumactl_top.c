/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl top`: a live view of vnumad's domains, one row per guest cell, like esxtop's
 * NUMA screen: home node, locality, busy vCPUs, memory per host node, bytes still to move
 * and an estimate of when the move ends, the latest decision. It asks vnumad for `status`
 * every refresh (docs/control-protocol.md) and draws with ncurses; when stdout is not a
 * terminal (or with --batch) it prints the table once and exits.
 *
 * The move estimate: the bytes of a cell vnumad is moving (its decision is "act") that are
 * not on its home node (or, for a wide cell, outside the nodes it spans), over the rate its
 * domain moved at between the last two refreshes, or, before two refreshes or while
 * nothing moved, over the domain's migration budget (rate_mib).
 */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ctl_client.h"
#include "nodeset.h"
#include "text.h"
#include "util.h"
#include "vnumactl_top.h"

#define TOP_MAX_NODES   VN_MAX_NODES
#define TOP_MAX_ROWS    4096
#define TOP_TIMEOUT_MS  5000
#define TOP_NAME_MIN    12 /* the domain column: the longest name, between these */
#define TOP_NAME_MAX    40
#define TOP_NODE_W      7 /* a memory-per-node column */
#define TOP_DETAIL_ROWS 4 /* below the table: at least this many lines for the picked domain */

typedef enum { SORT_NAME, SORT_LOCALITY, SORT_MOVING, SORT_BUSY, SORT_MEMORY, SORT_MAX } top_sort;
static const char *const sort_names[SORT_MAX] = {"name", "locality", "moving", "busy", "memory"};

typedef struct top_row {
    const char *domain; /* into the status reply, kept while the rows are */
    const char *uuid;
    const char *reason; /* the cell's latest decision, "-" none */
    struct json_object *dom;
    unsigned cell;
    int home;        /* kernel node number, -1 none */
    char span[24];   /* "0-1" for a wide cell, else "" */
    double locality; /* percent, < 0 unknown */
    int busy;        /* busy vCPUs, -1 not measured */
    unsigned vcpus;  /* vCPUs of the cell */
    uint64_t mem[TOP_MAX_NODES];
    uint64_t mem_total;
    uint64_t moving;  /* bytes still to move, 0 none */
    double eta_s;     /* < 0 unknown */
    double hot_home;  /* a cell on two tiers: percent of its hot set on its home node, < 0 none */
    const char *tier; /* ... and why ("home-short"), NULL none */
} top_row;

/* The domains' moved-bytes counters at the last refresh, for their rate. */
typedef struct top_prev {
    char uuid[40];
    uint64_t bytes;
    double at_s;
    double rate;   /* bytes/s over the last span measured */
    bool measured; /* a span has been measured (top runs long enough): rate means something */
} top_prev;

typedef struct top_view {
    struct json_object *status; /* the latest reply (printable) */
    top_row *rows;
    unsigned nr_rows;
    unsigned nodes[TOP_MAX_NODES]; /* kernel node numbers in the reply, sorted */
    unsigned nr_nodes;
    top_prev *prev;
    unsigned nr_prev;
    int name_w; /* the longest domain name, TOP_NAME_MIN..TOP_NAME_MAX */
    top_sort sort;
    bool reverse;
    char picked[40]; /* uuid of the picked domain, "" none */
    unsigned picked_cell;
    char err[512];      /* the last failure, "" none */
    const char *socket; /* vnumad's control socket (vnumactl_ctx, --socket) */
} top_view;

/* Bytes as at most 6 characters: "0", "512K", "1.5M", "23G". */
static const char *short_bytes(uint64_t b, char *buf, size_t len)
{
    static const char units[] = "KMGTPE";
    double v = (double)b;
    int u = -1;

    if (b < 1024) {
        snprintf(buf, len, "%" PRIu64, b);
        return buf;
    }
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
    return buf;
}

static const char *short_duration(double s, char *buf, size_t len)
{
    if (s < 0)
        snprintf(buf, len, "?");
    else if (s < 100)
        snprintf(buf, len, "%.0fs", ceil(s));
    else if (s < 6000)
        snprintf(buf, len, "%.0fm", ceil(s / 60));
    else
        snprintf(buf, len, "%.0fh", ceil(s / 3600));
    return buf;
}

static int parse_node(const char *s, unsigned *n)
{
    uint64_t v;

    if (vn_parse_u64(s, 0, 1u << 20, &v) < 0)
        return -1;
    *n = (unsigned)v;
    return 0;
}

static int node_index(const top_view *v, unsigned node)
{
    for (unsigned i = 0; i < v->nr_nodes; i++)
        if (v->nodes[i] == node)
            return (int)i;
    return -1;
}

/* The nodes named as keys of the cells' "memory" objects, into v->nodes (sorted). */
static void collect_nodes(top_view *v, struct json_object *doms)
{
    v->nr_nodes = 0;
    for (size_t i = 0; i < jlen(doms); i++) {
        struct json_object *cells = jget(json_object_array_get_idx(doms, i), "cells");
        for (size_t k = 0; k < jlen(cells); k++) {
            struct json_object *mem = jget(json_object_array_get_idx(cells, k), "memory");
            if (!json_object_is_type(mem, json_type_object))
                continue;
            json_object_object_foreach(mem, key, val)
            {
                unsigned n, at;
                (void)val;
                if (parse_node(key, &n) < 0 || node_index(v, n) >= 0 ||
                    v->nr_nodes == TOP_MAX_NODES)
                    continue;
                for (at = 0; at < v->nr_nodes && v->nodes[at] < n; at++)
                    ;
                memmove(&v->nodes[at + 1], &v->nodes[at], (v->nr_nodes - at) * sizeof(unsigned));
                v->nodes[at] = n;
                v->nr_nodes++;
            }
        }
    }
}

/* The domain's move rate (bytes/s): its moved-bytes counter over at least `span` seconds
 * (vnumad moves once a pass: a shorter span reads 0 or a pass's burst), the last measured
 * rate in between. */
static double domain_rate(top_view *v, const char *uuid, uint64_t bytes, double now, double span)
{
    for (unsigned i = 0; i < v->nr_prev; i++) {
        top_prev *p = &v->prev[i];
        if (strcmp(p->uuid, uuid) != 0)
            continue;
        if (bytes < p->bytes || now < p->at_s) { /* vnumad restarted: counters from 0 */
            p->bytes = bytes;
            p->at_s = now;
            p->rate = 0;
        } else if (now - p->at_s >= span) {
            p->rate = (double)(bytes - p->bytes) / (now - p->at_s);
            p->measured = true;
            p->bytes = bytes;
            p->at_s = now;
        }
        return p->rate;
    }
    {
        top_prev *np = realloc(v->prev, (v->nr_prev + 1) * sizeof(*np));
        if (!np)
            return 0;
        v->prev = np;
        memset(&np[v->nr_prev], 0, sizeof(*np));
        snprintf(np[v->nr_prev].uuid, sizeof(np[v->nr_prev].uuid), "%s", uuid);
        np[v->nr_prev].bytes = bytes;
        np[v->nr_prev].at_s = now;
        v->nr_prev++;
    }
    return 0;
}

/* One row per cell of the reply's domains. */
static void build_rows(top_view *v, double now)
{
    struct json_object *doms = jget(v->status, "domains");
    unsigned nr = 0;

    collect_nodes(v, doms);
    v->name_w = TOP_NAME_MIN;
    for (size_t i = 0; i < jlen(doms); i++) {
        struct json_object *d = json_object_array_get_idx(doms, i);
        nr += (unsigned)jlen(jget(d, "cells"));
        v->name_w = VN_MAX(v->name_w, VN_MIN(vn_text_width(jstr(d, "name", "?")), TOP_NAME_MAX));
    }
    nr = VN_MIN(nr, (unsigned)TOP_MAX_ROWS);
    free(v->rows);
    v->rows = calloc(nr ? nr : 1, sizeof(*v->rows));
    v->nr_rows = 0;
    if (!v->rows)
        return;
    for (size_t i = 0; i < jlen(doms); i++) {
        struct json_object *d = json_object_array_get_idx(doms, i), *cells = jget(d, "cells");
        const char *mode = jstr(d, "mode", "-");
        double interval = 0, budget = (double)ju64(d, "rate_mib") * VN_MIB, loc, rate;
        bool acts = strcmp(mode, "auto") == 0 && !jbool(d, "paused");
        unsigned first = v->nr_rows;
        uint64_t remaining = 0;

        (void)jnum(v->status, "interval_s", &interval);
        rate = domain_rate(v, jstr(d, "uuid", ""), ju64(jget(d, "counters"), "bytes_moved"), now,
                           VN_MAX(3.0, 2 * interval));

        for (size_t k = 0; k < jlen(cells) && v->nr_rows < nr; k++) {
            struct json_object *c = json_object_array_get_idx(cells, k);
            struct json_object *mem = jget(c, "memory"), *vc = jget(c, "vcpus");
            struct json_object *span = jget(c, "span_nodes");
            top_row *r = &v->rows[v->nr_rows++];
            uint64_t home_bytes = 0;
            double busy;
            size_t used = 0;

            r->dom = d;
            r->domain = jstr(d, "name", "?");
            r->uuid = jstr(d, "uuid", "");
            r->cell = (unsigned)ju64(c, "cell");
            r->home = json_object_is_type(jget(c, "target_node"), json_type_int)
                          ? (int)json_object_get_int(jget(c, "target_node"))
                          : -1;
            r->locality = jnum(c, "locality", &loc) ? loc : -1;
            r->busy = jnum(c, "busy_vcpus", &busy) ? (int)busy : -1;
            r->reason = jstr(c, "reason", "-");
            r->hot_home = -1;
            r->tier = NULL;
            if (jget(c, "tier")) {
                struct json_object *tr = jget(c, "tier");
                uint64_t hot = ju64(tr, "hot_bytes");
                r->tier = jstr(tr, "why", "?");
                if (hot)
                    r->hot_home = 100.0 * (double)ju64(tr, "hot_home_bytes") / (double)hot;
            }
            for (size_t s = 0; s < jlen(span) && used < sizeof(r->span); s++)
                used +=
                    (size_t)snprintf(r->span + used, sizeof(r->span) - used, "%s%d", s ? "," : "",
                                     json_object_get_int(json_object_array_get_idx(span, s)));
            json_object_object_foreach(mem, key, val)
            {
                unsigned n;
                int at;
                bool home;
                if (parse_node(key, &n) < 0 || (at = node_index(v, n)) < 0)
                    continue;
                r->mem[at] = json_object_get_uint64(val);
                r->mem_total += r->mem[at];
                home = r->home == (int)n;
                for (size_t s = 0; s < jlen(span); s++)
                    home |= json_object_get_int(json_object_array_get_idx(span, s)) == (int)n;
                if (home)
                    home_bytes += r->mem[at];
            }
            json_object_object_foreach(vc, vkey, vval)
            {
                (void)vkey;
                r->vcpus += (unsigned)json_object_get_int(vval);
            }
            r->eta_s = -1;
            if (json_object_is_type(jget(c, "mover_left_bytes"), json_type_int))
                r->moving = ju64(c, "mover_left_bytes"); /* the mover's queue for the cell */
            else if (acts && r->home >= 0 && strcmp(r->reason, "act") == 0 &&
                     !strcmp(jstr(c, "memory_pinned", "none"), "none"))
                r->moving = r->mem_total - home_bytes; /* a vnumad before the mover */
            remaining += r->moving;
        }
        /* the cells of a domain move together, sharing its rate: each ends with the last */
        for (unsigned k = first; k < v->nr_rows; k++)
            if (v->rows[k].moving)
                v->rows[k].eta_s = rate > 0     ? (double)remaining / rate
                                   : budget > 0 ? (double)remaining / budget
                                                : -1;
    }
}

static int cmp_rows(const top_row *a, const top_row *b, top_sort s)
{
    int r = 0;

    switch (s) {
    case SORT_LOCALITY: /* the least local first */
        r = a->locality < b->locality ? -1 : a->locality > b->locality;
        break;
    case SORT_MOVING: /* the most to move first */
        r = a->moving > b->moving ? -1 : a->moving < b->moving;
        break;
    case SORT_BUSY:
        r = a->busy > b->busy ? -1 : a->busy < b->busy;
        break;
    case SORT_MEMORY:
        r = a->mem_total > b->mem_total ? -1 : a->mem_total < b->mem_total;
        break;
    default:
        break;
    }
    if (!r)
        r = strcmp(a->domain, b->domain);
    if (!r)
        r = a->cell < b->cell ? -1 : a->cell > b->cell;
    return r;
}

static top_view *sort_view; /* qsort has no context argument */
static int cmp_rows_q(const void *a, const void *b)
{
    int r = cmp_rows(a, b, sort_view->sort);
    return sort_view->reverse ? -r : r;
}

/* Ask vnumad again: 0, or -1 with v->err set (the last rows stay). */
static int top_fetch(top_view *v)
{
    struct json_object *st = NULL;

    if (ctl_call(v->socket, "status", NULL, TOP_TIMEOUT_MS, &st, v->err, sizeof(v->err)) < 0)
        return -1;
    v->err[0] = '\0';
    ctl_json_printable(st); /* no terminal control sequences from names or reasons */
    json_object_put(v->status);
    v->status = st;
    build_rows(v, vn_mono_s());
    sort_view = v;
    qsort(v->rows, v->nr_rows, sizeof(*v->rows), cmp_rows_q);
    return 0;
}

/* The columns but the domain's and the memory's, each with the space before it: CELL, HOME,
 * LOCAL, BUSY, HOT, MOVING, ETA, and the least room the decision gets ("DECISION"). */
#define TOP_FIXED_W ((1 + 4) + 3 * (1 + 5) + (1 + 4) + (1 + 7) + (1 + 5) + (1 + 8))

/* How many memory-per-node columns fit in `width` (0: one MEMORY column instead), and the
 * domain column's width in *name_w: the longest name, narrowed to what fits. */
static unsigned node_columns(const top_view *v, int width, int *name_w)
{
    int nodes_w = (int)v->nr_nodes * (TOP_NODE_W + 1);
    unsigned ncols =
        v->nr_nodes > 1 && width - TOP_FIXED_W - TOP_NAME_MIN >= nodes_w ? v->nr_nodes : 0;

    if (!ncols)
        nodes_w = TOP_NODE_W + 1;
    *name_w = VN_MAX(TOP_NAME_MIN, VN_MIN(v->name_w, width - TOP_FIXED_W - nodes_w));
    return ncols;
}

/* line (len bytes) cut to at most `width` terminal columns (0: no limit), never inside a
 * character: a name may be UTF-8 (lib/text.h). */
static void cut_columns(char *line, size_t len, int width)
{
    char tmp[1024];

    if (width <= 0 || !len)
        return;
    (void)vn_text_fit(tmp, VN_MIN(len, sizeof(tmp)), line, width, 0);
    memcpy(line, tmp, strlen(tmp) + 1);
}

/* The column heads, or one row, as a line of at most `width` columns (0: no limit). */
static void format_line(const top_view *v, const top_row *r, unsigned ncols, int name_w, int width,
                        char *out, size_t len)
{
    char b[32], b2[32], name[TOP_NAME_MAX * 4 + 1];
    size_t used = 0;

#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (used < len)                                                                            \
            used += (size_t)snprintf(out + used, len - used, __VA_ARGS__);                         \
    } while (0)
    if (!r) {
        PUT("%-*s %4s %5s %5s %5s", name_w, "DOMAIN", "CELL", "HOME", "LOCAL", "BUSY");
        for (unsigned i = 0; i < ncols; i++) {
            snprintf(b, sizeof(b), "MEM@%u", v->nodes[i]);
            PUT(" %*s", TOP_NODE_W, b);
        }
        if (!ncols)
            PUT(" %*s", TOP_NODE_W, "MEMORY");
        PUT(" %4s %7s %5s %s", "HOT", "MOVING", "ETA", "DECISION");
    } else {
        if (r->busy >= 0)
            snprintf(b, sizeof(b), "%d/%u", r->busy, r->vcpus);
        else
            snprintf(b, sizeof(b), "-/%u", r->vcpus);
        if (r->span[0])
            snprintf(b2, sizeof(b2), "%s", r->span);
        else if (r->home >= 0)
            snprintf(b2, sizeof(b2), "%d", r->home);
        else
            snprintf(b2, sizeof(b2), "-");
        (void)vn_text_fit(name, sizeof(name), r->domain, name_w, 1); /* columns, not bytes */
        PUT("%s %4u %5.5s", name, r->cell, b2);
        if (r->locality >= 0)
            PUT(" %4.0f%%", r->locality);
        else
            PUT(" %5s", "-");
        PUT(" %5s", b);
        for (unsigned i = 0; i < ncols; i++)
            PUT(" %*s", TOP_NODE_W, short_bytes(r->mem[i], b, sizeof(b)));
        if (!ncols)
            PUT(" %*s", TOP_NODE_W, short_bytes(r->mem_total, b, sizeof(b)));
        if (r->hot_home >= 0)
            PUT(" %3.0f%%", r->hot_home);
        else
            PUT(" %4s", "-");
        PUT(" %7s", r->moving ? short_bytes(r->moving, b, sizeof(b)) : "-");
        PUT(" %5s", r->moving ? short_duration(r->eta_s, b2, sizeof(b2)) : "-");
        PUT(" %s", r->reason);
    }
#undef PUT
    cut_columns(out, len, width);
}

/* The first line: vnumad's pass, libvirt, domains, budget, the moves' rate. */
static void format_head(const top_view *v, char *out, size_t len)
{
    double rate = 0, interval = 0;
    bool measured = false;
    char b[32];

    for (unsigned i = 0; i < v->nr_prev; i++) {
        rate += v->prev[i].rate;
        measured |= v->prev[i].measured;
    }
    (void)jnum(v->status, "interval_s", &interval);
    struct json_object *mv = jget(v->status, "mover");
    double eta = -1;
    char q[32], e[32];
    if (mv) { /* the mover measures its own rate: no need to wait for two refreshes */
        rate = (double)ju64(mv, "rate_bytes_s");
        measured = true;
        (void)jnum(mv, "eta_s", &eta);
    }
    /* the rate needs a few seconds of counters: "?" until then, not a false 0 */
    int n = snprintf(out, len,
                     "vnumad pass %" PRIu64 ", libvirt %s, %zu domains, every %gs, budget %" PRIu64
                     "M/s, moving %s/s",
                     ju64(v->status, "pass"), jbool(v->status, "connected") ? "up" : "DOWN",
                     jlen(jget(v->status, "domains")), interval, ju64(v->status, "rate_limit_mib"),
                     measured || !v->nr_prev ? short_bytes((uint64_t)rate, b, sizeof(b)) : "?");
    if (mv && ju64(mv, "orders") && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, ", queue %s in %" PRIu64 " cells, done in %s",
                 short_bytes(ju64(mv, "left_bytes"), q, sizeof(q)), ju64(mv, "orders"),
                 eta >= 0 ? short_duration(eta, e, sizeof(e)) : "?");
}

/* The picked domain's details as up to `max` lines (detail[i], width chars). */
static unsigned format_detail(const top_view *v, const top_row *r, int width, char lines[][512],
                              unsigned max)
{
    struct json_object *d = r->dom, *agent = jget(d, "agent"), *last = jget(d, "last_decision");
    struct json_object *cells = jget(d, "cells");
    unsigned n = 0;
    char b[32];

    if (!max)
        return 0;
    snprintf(lines[n++], 512,
             "%s: mode %s%s, state %s, agent %s, budget %" PRIu64 " MiB/s, moved %s in all",
             r->domain, jstr(d, "mode", "-"), jbool(d, "paused") ? " (paused)" : "",
             jstr(d, "state", "-"), jbool(agent, "connected") ? "connected" : "none",
             ju64(d, "rate_mib"),
             short_bytes(ju64(jget(d, "counters"), "bytes_moved"), b, sizeof(b)));
    for (size_t k = 0; k < jlen(cells) && n < max; k++) {
        struct json_object *c = json_object_array_get_idx(cells, k);
        struct json_object *mem = jget(c, "memory"), *vc = jget(c, "vcpus");
        size_t used = (size_t)snprintf(lines[n], 512, "  cell %" PRIu64 ":", ju64(c, "cell"));
        for (unsigned i = 0; i < v->nr_nodes && used < 512; i++) {
            char key[16];
            snprintf(key, sizeof(key), "%u", v->nodes[i]);
            used += (size_t)snprintf(lines[n] + used, 512 - used, "  node%u %s %" PRIu64 " vCPU",
                                     v->nodes[i], short_bytes(ju64(mem, key), b, sizeof(b)),
                                     ju64(vc, key));
        }
        struct json_object *tr = jget(c, "tier");
        if (tr && used < 512) /* two tiers: why, and the lower one */
            (void)snprintf(lines[n] + used, 512 - used, "  tiers: %s, lower node %" PRIu64,
                           jstr(tr, "why", "?"), ju64(tr, "lower_node"));
        n++;
    }
    if (n < max) {
        if (json_object_is_type(last, json_type_object))
            snprintf(lines[n++], 512, "  last: pass %" PRIu64 " %s %s (%s)%s%s", ju64(last, "pass"),
                     jstr(last, "time", "-"), jstr(last, "action", "-"), jstr(last, "reason", "-"),
                     jstr(last, "error", NULL) ? ": " : "", jstr(last, "error", ""));
        else
            snprintf(lines[n++], 512, "  last: no decision yet");
    }
    for (unsigned i = 0; i < n; i++)
        cut_columns(lines[i], 512, width);
    return n;
}

/* Not a terminal: the head and the table, once, at full width. */
static int print_once(top_view *v)
{
    char line[1024];
    unsigned ncols;

    if (top_fetch(v) < 0) {
        fprintf(stderr, "vnumactl: %s\n", v->err);
        return VNUMACTL_EXIT_ERROR;
    }
    ncols = v->nr_nodes > 1 ? v->nr_nodes : 0;
    format_head(v, line, sizeof(line));
    printf("%s\n", line);
    format_line(v, NULL, ncols, v->name_w, 0, line, sizeof(line));
    printf("%s\n", line);
    for (unsigned i = 0; i < v->nr_rows; i++) {
        format_line(v, &v->rows[i], ncols, v->name_w, 0, line, sizeof(line));
        printf("%s\n", line);
    }
    if (!v->nr_rows)
        printf("(no opted-in domain)\n");
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}

static int picked_row(const top_view *v)
{
    for (unsigned i = 0; i < v->nr_rows; i++)
        if (!strcmp(v->rows[i].uuid, v->picked) && v->rows[i].cell == v->picked_cell)
            return (int)i;
    return v->nr_rows ? 0 : -1;
}

static void pick(top_view *v, int i)
{
    if (!v->nr_rows)
        return;
    i = i < 0 ? 0 : i >= (int)v->nr_rows ? (int)v->nr_rows - 1 : i;
    snprintf(v->picked, sizeof(v->picked), "%s", v->rows[i].uuid);
    v->picked_cell = v->rows[i].cell;
}

/* One screen line at row y: text cut to the w columns of the terminal (addnstr counts bytes). */
static void put_line(int y, const char *text, int w)
{
    char line[1024];

    (void)vn_text_fit(line, sizeof(line), text, w, 0);
    mvaddstr(y, 0, line);
}

static void draw(top_view *v)
{
    int h, w, sel, top = 0, table_h;
    char line[1024], detail[8][512];
    unsigned ncols, nd;
    int name_w;

    getmaxyx(stdscr, h, w);
    erase();
    ncols = node_columns(v, w, &name_w);
    format_head(v, line, sizeof(line));
    put_line(0, line, w);
    snprintf(line, sizeof(line), "sort: %s%s | keys: up/down pick, s sort, r reverse, q quit",
             sort_names[v->sort], v->reverse ? " (reversed)" : "");
    put_line(1, v->err[0] ? v->err : line, w);
    format_line(v, NULL, ncols, name_w, w, line, sizeof(line));
    attron(A_REVERSE);
    put_line(2, line, w);
    for (int x = vn_text_width(line); x < w; x++)
        mvaddch(2, x, ' ');
    attroff(A_REVERSE);

    sel = picked_row(v);
    table_h = h - 3 - (TOP_DETAIL_ROWS + 1);
    if (table_h < 1)
        table_h = h - 3;
    if (sel >= table_h)
        top = sel - table_h + 1;
    for (int i = 0; i < table_h && top + i < (int)v->nr_rows; i++) {
        format_line(v, &v->rows[top + i], ncols, name_w, w, line, sizeof(line));
        if (top + i == sel)
            attron(A_BOLD | A_UNDERLINE);
        put_line(3 + i, line, w);
        if (top + i == sel)
            attroff(A_BOLD | A_UNDERLINE);
    }
    if (!v->nr_rows)
        put_line(3, "(no opted-in domain)", w);
    if (sel >= 0 && h - 3 - table_h > 1) {
        nd =
            format_detail(v, &v->rows[sel], w, detail,
                          VN_MIN((unsigned)(h - 3 - table_h - 1), (unsigned)VN_ARRAY_SIZE(detail)));
        for (unsigned i = 0; i < nd; i++)
            put_line(3 + table_h + 1 + (int)i, detail[i], w);
    }
    refresh();
}

static int run_live(top_view *v, double delay_s, long iterations)
{
    double next = vn_mono_s() + delay_s;
    long done = 1; /* vnumactl_top fetched the first view */

    if (!initscr()) {
        fprintf(stderr, "vnumactl: cannot set up the terminal\n");
        return VNUMACTL_EXIT_ERROR;
    }
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    timeout(100);
    pick(v, 0);
    draw(v);
    if (iterations == 1)
        goto out;
    for (;;) {
        int ch;
        if (vn_mono_s() >= next) {
            (void)top_fetch(v);
            next = vn_mono_s() + delay_s;
            if (!v->picked[0])
                pick(v, 0);
            draw(v);
            if (iterations > 0 && ++done >= iterations)
                break;
        }
        ch = getch();
        if (ch == ERR)
            continue;
        if (ch == 'q' || ch == 'Q')
            break;
        switch (ch) {
        case KEY_UP:
        case 'k':
            pick(v, picked_row(v) - 1);
            break;
        case KEY_DOWN:
        case 'j':
            pick(v, picked_row(v) + 1);
            break;
        case 's':
            v->sort = (top_sort)((v->sort + 1) % SORT_MAX);
            break;
        case 'n':
            v->sort = SORT_NAME;
            break;
        case 'l':
            v->sort = SORT_LOCALITY;
            break;
        case 'm':
            v->sort = SORT_MOVING;
            break;
        case 'b':
            v->sort = SORT_BUSY;
            break;
        case 'r':
            v->reverse = !v->reverse;
            break;
        case ' ':
            next = 0; /* refresh now */
            continue;
        default:
            continue; /* KEY_RESIZE and the rest: redrawn below */
        }
        sort_view = v;
        qsort(v->rows, v->nr_rows, sizeof(*v->rows), cmp_rows_q);
        draw(v);
    }
out:
    endwin();
    return VNUMACTL_EXIT_OK;
}

/* A value top's options do not take: said, with the usage line; 2. */
static int bad_value(const vnumactl_ctx *ctx, const char *opt, const char *value, const char *want)
{
    fprintf(stderr, "vnumactl: top: %s '%s': %s\nUsage: vnumactl top %s\n", opt, value, want,
            ctx->args);
    return VNUMACTL_EXIT_USAGE;
}

int vnumactl_top(int argc, char **argv, vnumactl_ctx *ctx)
{
    const char *delay_s = NULL, *iterations_s = NULL, *batch_s = NULL, *sort_s = NULL;
    const vnumactl_opt extra[] = {
        {"delay", 'd', true, &delay_s},
        {"iterations", 'n', true, &iterations_s},
        {"batch", 'b', false, &batch_s},
        {"sort", 0, true, &sort_s},
    };
    top_view v = {.sort = SORT_NAME};
    double delay = 2;
    long iterations = 0;
    bool batch;
    int r;

    r = vnumactl_options(argc, argv, ctx, NULL, extra, VN_ARRAY_SIZE(extra));
    if (r >= 0)
        return r;
    v.socket = ctx->socket;
    if (delay_s && vn_parse_double(delay_s, 0.2, 3600, &delay) < 0)
        return bad_value(ctx, "--delay", delay_s, "seconds from 0.2 to 3600");
    if (iterations_s) {
        uint64_t n;
        if (vn_parse_u64(iterations_s, 1, 1000000, &n) < 0)
            return bad_value(ctx, "--iterations", iterations_s, "a count from 1 to 1000000");
        iterations = (long)n;
    }
    batch = batch_s != NULL;
    if (sort_s) {
        unsigned k;
        for (k = 0; k < SORT_MAX && strcmp(sort_s, sort_names[k]); k++)
            ;
        if (k == SORT_MAX)
            return bad_value(ctx, "--sort", sort_s, "name, locality, moving, busy or memory");
        v.sort = (top_sort)k;
    }
    if (optind < argc) {
        fprintf(stderr, "vnumactl: top: unexpected argument '%s'\n", argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }
    if (batch || !isatty(STDOUT_FILENO)) {
        r = print_once(&v);
    } else {
        /* see vnumad is there before the screen is taken */
        if (top_fetch(&v) < 0) {
            fprintf(stderr, "vnumactl: %s\n", v.err);
            r = VNUMACTL_EXIT_ERROR;
        } else {
            r = run_live(&v, delay, iterations);
        }
    }
    json_object_put(v.status);
    free(v.rows);
    free(v.prev);
    return r;
}
