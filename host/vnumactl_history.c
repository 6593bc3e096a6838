/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl history DOMAIN`: a domain's locality and bytes moved per pass over time, from
 * vnumad's decision journal (journal.jsonl in state_dir: one decision record per line,
 * docs/records.md), as two small terminal charts and a table, or as JSON (--json).
 *
 * The journal holds one line per change: a pass that repeats the domain's last "nothing to
 * do" is not written, every pass that moved memory is. So the charts have one column per
 * recorded pass, oldest left. The locality charted is the mean over the cells of what the
 * pass measured before acting (locality_before): what the guest had, not what vnumad
 * expected.
 *
 * The journal is read as untrusted text: lines longer than HISTORY_LINE_MAX, lines that are
 * not JSON objects and records of other domains are skipped.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "ctl_client.h"
#include "journal.h"
#include "json.h"
#include "util.h"
#include "vnumactl_history.h"

#define HISTORY_JOURNAL_DEFAULT "/var/lib/vnuma/journal.jsonl"
#define HISTORY_LINE_MAX        (1024 * 1024)
#define HISTORY_MAX_POINTS      10000 /* the newest records kept */
#define HISTORY_LOC_ROWS        8     /* chart heights */
#define HISTORY_MOVE_ROWS       4
#define HISTORY_TABLE_ROWS      10

typedef struct history_point {
    uint64_t pass;
    char time[32];
    char action[16];
    double locality; /* mean of the cells' locality_before, percent; < 0 none */
    uint64_t moved;  /* bytes */
    struct json_object *rec;
} history_point;

typedef struct history {
    history_point *pts; /* a ring of the newest HISTORY_MAX_POINTS */
    size_t nr, head, skipped;
} history;

static void point_from(history_point *p, struct json_object *rec)
{
    struct json_object *cells = jget(rec, "cells");
    double sum = 0, v;
    unsigned n = 0;

    memset(p, 0, sizeof(*p));
    p->pass = ju64(rec, "pass");
    snprintf(p->time, sizeof(p->time), "%s", jstr(rec, "time", "-"));
    snprintf(p->action, sizeof(p->action), "%s", jstr(rec, "action", "-"));
    ctl_printable_inplace(p->time);
    ctl_printable_inplace(p->action);
    p->moved = ju64(rec, "bytes_moved");
    for (size_t k = 0; k < jlen(cells); k++)
        if (jnum(json_object_array_get_idx(cells, k), "locality_before", &v) && v >= 0 &&
            v <= 100) {
            sum += v;
            n++;
        }
    p->locality = n ? sum / n : -1;
    p->rec = rec;
}

/* The records of `domain` in one journal file, appended to h (oldest first). */
static void history_read_file(FILE *f, const char *domain, history *h)
{
    _cleanup_free_ char *line = NULL;
    size_t cap = 0;
    ssize_t len;

    while ((len = getline(&line, &cap, f)) >= 0) {
        struct json_object *rec;
        history_point *p;
        if (len > HISTORY_LINE_MAX || len < 2) {
            h->skipped++;
            continue;
        }
        rec = json_tokener_parse(line);
        if (!json_object_is_type(rec, json_type_object)) {
            json_object_put(rec);
            h->skipped++;
            continue;
        }
        if (strcmp(jstr(rec, "domain", ""), domain) != 0) {
            json_object_put(rec);
            continue;
        }
        p = &h->pts[(h->head + h->nr) % HISTORY_MAX_POINTS];
        if (h->nr == HISTORY_MAX_POINTS) {
            json_object_put(h->pts[h->head].rec);
            h->head = (h->head + 1) % HISTORY_MAX_POINTS;
        } else {
            h->nr++;
        }
        point_from(p, rec);
    }
}

/* The records of `domain` in the journal at path and in the files vnumad rotated it into
 * (path.N ... path.1, host/journal.h), oldest first: 0, or -errno when path cannot be read. */
static int history_read(const char *path, const char *domain, history *h)
{
    char old[PATH_MAX];
    FILE *f = fopen(path, "re");

    if (!f)
        return -errno;
    h->pts = calloc(HISTORY_MAX_POINTS, sizeof(*h->pts));
    if (!h->pts) {
        fclose(f);
        return -ENOMEM;
    }
    for (unsigned k = JOURNAL_FILES_MAX; k >= 1; k--) {
        FILE *o;
        if (snprintf(old, sizeof(old), "%s.%u", path, k) >= (int)sizeof(old))
            continue;
        o = fopen(old, "re");
        if (!o)
            continue;
        history_read_file(o, domain, h);
        fclose(o);
    }
    history_read_file(f, domain, h);
    fclose(f);
    return 0;
}

static history_point *point(const history *h, size_t i)
{
    return &h->pts[(h->head + i) % HISTORY_MAX_POINTS];
}

static void history_free(history *h)
{
    for (size_t i = 0; i < h->nr; i++)
        json_object_put(point(h, i)->rec);
    free(h->pts);
}

/* A column chart of values[0..n) (one column each, n <= width), `rows` high, from 0 to max,
 * with the y axis labelled by fmt_y. */
static void chart(const double *values, size_t n, double max, unsigned rows,
                  const char *(*fmt_y)(double, char *, size_t))
{
    char label[32];

    for (unsigned r = rows; r >= 1; r--) {
        double level = max * (r - 0.5) / rows; /* a column reaches row r from half of it */
        printf("%9s |", r == rows ? fmt_y(max, label, sizeof(label)) : "");
        for (size_t i = 0; i < n; i++)
            putchar(values[i] < 0 ? ' ' : values[i] >= level && values[i] > 0 ? '#' : ' ');
        putchar('\n');
    }
    printf("%9s +", fmt_y(0, label, sizeof(label)));
    for (size_t i = 0; i < n; i++)
        putchar('-');
    putchar('\n');
}

static const char *fmt_percent(double v, char *buf, size_t len)
{
    snprintf(buf, len, "%.0f%%", v);
    return buf;
}

static const char *fmt_bytes(double v, char *buf, size_t len)
{
    return v <= 0 ? "0" : vn_human_bytes((uint64_t)v, buf, len);
}

static unsigned terminal_width(void)
{
    struct winsize ws;
    const char *cols = getenv("COLUMNS");
    uint64_t c;

    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        return ws.ws_col;
    if (cols && vn_parse_u64(cols, 20, 1000, &c) == 0)
        return (unsigned)c;
    return 80;
}

static void print_text(const char *domain, const char *path, const history *h)
{
    size_t width = terminal_width() - 11, n = VN_MIN(h->nr, width), first = h->nr - n;
    double *loc = calloc(n ? n : 1, sizeof(double)), *moved = calloc(n ? n : 1, sizeof(double));
    double max_moved = 0;
    char b1[32];

    printf("%s: %zu records in %s", domain, h->nr, path);
    if (h->skipped)
        printf(" (%zu unreadable lines skipped)", h->skipped);
    printf("\n");
    if (!h->nr || !loc || !moved) {
        printf("no decision recorded for %s\n", domain);
        free(loc);
        free(moved);
        return;
    }
    printf("%s .. %s, passes %" PRIu64 " .. %" PRIu64 "%s\n\n", point(h, first)->time,
           point(h, h->nr - 1)->time, point(h, first)->pass, point(h, h->nr - 1)->pass,
           first ? " (the newest that fit the terminal)" : "");
    for (size_t i = 0; i < n; i++) {
        loc[i] = point(h, first + i)->locality;
        moved[i] = (double)point(h, first + i)->moved;
        max_moved = VN_MAX(max_moved, moved[i]);
    }
    printf("locality, mean of the cells as measured at each recorded pass\n");
    chart(loc, n, 100, HISTORY_LOC_ROWS, fmt_percent);
    printf("\nbytes moved per recorded pass\n");
    if (max_moved > 0)
        chart(moved, n, max_moved, HISTORY_MOVE_ROWS, fmt_bytes);
    else
        printf("  none in these passes\n");
    printf("\n%-20s %8s %-8s %9s %10s\n", "TIME", "PASS", "ACTION", "LOCALITY", "MOVED");
    for (size_t i = h->nr > HISTORY_TABLE_ROWS ? h->nr - HISTORY_TABLE_ROWS : 0; i < h->nr; i++) {
        const history_point *p = point(h, i);
        char lb[16];
        if (p->locality >= 0)
            snprintf(lb, sizeof(lb), "%.1f%%", p->locality);
        else
            snprintf(lb, sizeof(lb), "-");
        printf("%-20s %8" PRIu64 " %-8s %9s %10s\n", p->time, p->pass, p->action, lb,
               fmt_bytes((double)p->moved, b1, sizeof(b1)));
    }
    free(loc);
    free(moved);
}

static void print_json_history(const char *domain, const char *path, const history *h)
{
    _cleanup_json_ struct json_object *o = json_object_new_object();
    struct json_object *arr = json_object_new_array();

    json_object_object_add(o, "domain", json_object_new_string(domain));
    json_object_object_add(o, "journal", json_object_new_string(path));
    json_object_object_add(o, "skipped_lines", json_object_new_uint64(h->skipped));
    for (size_t i = 0; i < h->nr; i++) {
        const history_point *p = point(h, i);
        struct json_object *e = json_object_new_object(), *cells = json_object_new_array();
        struct json_object *rc = jget(p->rec, "cells");
        json_object_object_add(e, "pass", json_object_new_uint64(p->pass));
        json_object_object_add(e, "time", json_object_new_string(p->time));
        json_object_object_add(e, "action", json_object_new_string(p->action));
        json_object_object_add(e, "locality",
                               p->locality >= 0 ? json_object_new_double(p->locality) : NULL);
        json_object_object_add(e, "bytes_moved", json_object_new_uint64(p->moved));
        for (size_t k = 0; k < jlen(rc); k++) {
            struct json_object *c = json_object_array_get_idx(rc, k),
                               *oc = json_object_new_object();
            double v;
            json_object_object_add(oc, "cell", json_object_new_uint64(ju64(c, "cell")));
            json_object_object_add(oc, "locality_before",
                                   jnum(c, "locality_before", &v) ? json_object_new_double(v)
                                                                  : NULL);
            json_object_object_add(oc, "locality_after",
                                   jnum(c, "locality_after", &v) ? json_object_new_double(v)
                                                                 : NULL);
            json_object_object_add(oc, "bytes_moved",
                                   json_object_new_uint64(ju64(c, "bytes_moved")));
            json_object_array_add(cells, oc);
        }
        json_object_object_add(e, "cells", cells);
        json_object_array_add(arr, e);
    }
    json_object_object_add(o, "records", arr);
    ctl_print_json(o);
}

int vnumactl_history(int argc, char **argv, vnumactl_ctx *ctx)
{
    const char *journal = NULL, *domain;
    const vnumactl_opt extra[] = {{"journal", 0, true, &journal}};
    _cleanup_json_ struct json_object *st = NULL;
    char path[4096], err[512];
    history h = {0};
    bool json = false;
    int r;

    r = vnumactl_options(argc, argv, ctx, &json, extra, 1);
    if (r >= 0)
        return r;
    if (optind + 1 != argc) {
        fprintf(stderr,
                "vnumactl: history: %s\nUsage: vnumactl history DOMAIN [--journal PATH] "
                "[--json] [--socket PATH]\n",
                optind >= argc ? "missing DOMAIN" : "more than one DOMAIN");
        return VNUMACTL_EXIT_USAGE;
    }
    domain = argv[optind];
    /* the running vnumad's journal (its state_dir), else the default one */
    if (!journal) {
        if (ctl_call(ctx->socket, "status", NULL, CTL_TIMEOUT_MS, &st, err, sizeof(err)) == 0 &&
            jstr(st, "journal", NULL))
            journal = jstr(st, "journal", NULL);
        else
            journal = HISTORY_JOURNAL_DEFAULT;
    }
    snprintf(path, sizeof(path), "%s", journal);
    r = history_read(path, domain, &h);
    if (r < 0) {
        fprintf(stderr, "vnumactl: cannot read the journal %s: %s\n", path, strerror(-r));
        return VNUMACTL_EXIT_ERROR;
    }
    if (json) {
        print_json_history(domain, path, &h);
    } else {
        char name[256];
        snprintf(name, sizeof(name), "%s", domain);
        ctl_printable_inplace(name);
        print_text(name, path, &h);
    }
    history_free(&h);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}
