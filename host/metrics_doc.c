/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The metrics table of docs/operations.md (metrics_doc.h): metrics_render() of a sample host
 * with one tracked domain, read back family by family.
 */
#include "metrics_doc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "state.h"
#include "topology.h"
#include "util.h"

#define DOC_LABELS_MAX 8
#define DOC_VALUES_MAX 1024

/* Labels whose values are names, addresses or numbers of the host, not kinds to list. */
static bool label_lists_values(const char *label)
{
    static const char *const own[] = {"domain", "uuid", "cell", "node", "le", "version"};

    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        if (!strcmp(label, own[i]))
            return false;
    return true;
}

typedef struct doc_family {
    char name[128], type[16];
    const char *help; /* into the exposition text */
    size_t help_len;
    unsigned nr_labels;
    struct {
        char name[32];
        char values[DOC_VALUES_MAX]; /* ", "-separated, in order of first appearance */
    } labels[DOC_LABELS_MAX];
} doc_family;

static void add_value(char *values, const char *v, size_t len)
{
    size_t used = strlen(values);
    const char *p = values;

    while ((p = strstr(p, v)) != NULL) { /* already listed? */
        bool starts = p == values || (p >= values + 2 && p[-2] == ',' && p[-1] == ' ');
        bool ends = p[len] == '\0' || p[len] == ',';
        if (starts && ends && !strncmp(p, v, len))
            return;
        p++;
    }
    if (used + len + 3 < DOC_VALUES_MAX)
        (void)snprintf(values + used, DOC_VALUES_MAX - used, "%s%.*s", used ? ", " : "", (int)len,
                       v);
}

/* One sample line's labels, `{a="x",b="y"}` after the metric name, into the family. */
static int read_labels(doc_family *fam, const char *p)
{
    if (*p != '{')
        return 0;
    p++;
    while (*p && *p != '}') {
        const char *eq = strchr(p, '=');
        char name[32], value[256];
        size_t nl, vl = 0;
        unsigned k;

        if (!eq || eq[1] != '"' || (nl = (size_t)(eq - p)) == 0 || nl >= sizeof(name))
            return -EINVAL;
        memcpy(name, p, nl);
        name[nl] = '\0';
        for (p = eq + 2; *p && *p != '"'; p++) {
            if (*p == '\\' && p[1])
                p++;
            if (vl + 1 < sizeof(value))
                value[vl++] = *p;
        }
        if (*p != '"')
            return -EINVAL;
        value[vl] = '\0';
        p += p[1] == ',' ? 2 : 1;
        for (k = 0; k < fam->nr_labels && strcmp(fam->labels[k].name, name); k++)
            ;
        if (k == fam->nr_labels) {
            if (k == DOC_LABELS_MAX)
                return -E2BIG;
            (void)snprintf(fam->labels[k].name, sizeof(fam->labels[k].name), "%s", name);
            fam->labels[k].values[0] = '\0';
            fam->nr_labels++;
        }
        if (label_lists_values(name))
            add_value(fam->labels[k].values, value, vl);
    }
    return 0;
}

static void print_row(FILE *out, const doc_family *fam)
{
    const char *sep = " ";

    fprintf(out, "| `%s` | %s |", fam->name, fam->type);
    for (unsigned k = 0; k < fam->nr_labels; k++)
        if (strcmp(fam->labels[k].name, "le")) { /* a histogram's buckets: not a label to query */
            fprintf(out, "%s%s", sep, fam->labels[k].name);
            sep = ", ";
        }
    fputs(" | ", out);
    for (size_t i = 0; i < fam->help_len; i++) { /* a table cell: no bar, no line break */
        char c = fam->help[i];
        if (c == '|')
            fputs("\\|", out);
        else
            fputc(c == '\n' ? ' ' : c, out);
    }
    for (unsigned k = 0; k < fam->nr_labels; k++)
        if (fam->labels[k].values[0])
            fprintf(out, " `%s`: %s.", fam->labels[k].name, fam->labels[k].values);
    fputs(" |\n", out);
}

/* The exposition text, family by family, as table rows. */
static int print_rows(FILE *out, const char *text)
{
    _cleanup_free_ doc_family *fam = calloc(1, sizeof(*fam));
    bool open = false;

    if (!fam)
        return -ENOMEM;
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);

        if (!strncmp(line, "# HELP ", 7)) {
            const char *name = line + 7, *sp = memchr(name, ' ', len - 7);
            if (!sp || (size_t)(sp - name) >= sizeof(fam->name))
                return -EINVAL;
            if (open)
                print_row(out, fam);
            memset(fam, 0, sizeof(*fam));
            memcpy(fam->name, name, (size_t)(sp - name));
            fam->help = sp + 1;
            fam->help_len = len - (size_t)(sp + 1 - line);
            open = true;
        } else if (!strncmp(line, "# TYPE ", 7) && open) {
            const char *type = line + 7 + strlen(fam->name) + 1;
            if (type < line + len)
                (void)snprintf(fam->type, sizeof(fam->type), "%.*s", (int)(line + len - type),
                               type);
        } else if (open && !strncmp(line, fam->name, strlen(fam->name))) {
            const char *p = line + strlen(fam->name);
            while (*p == '_' || (*p >= 'a' && *p <= 'z')) /* _bucket, _sum, _count */
                p++;
            if (read_labels(fam, p) < 0)
                return -EINVAL;
        }
        line += len + (eol != NULL);
    }
    if (open)
        print_row(out, fam);
    return 0;
}

/* The sample host's domains, one per state a domain's series can show. */
#define DOC_DOMS 5

/* The sample host: two nodes, a pass counted, domains in every mode and state, the first with
 * a cell and a hint set, so that every family and label value the code writes has a series. */
int metrics_doc_table(FILE *out)
{
    _cleanup_topo_ topology *t = topo_new();
    _cleanup_free_ dom_state *st = calloc(DOC_DOMS, sizeof(*st));
    _cleanup_free_ char *text = NULL;
    static proto_hints hints;
    metrics_host h = {0};
    dom_state *doms[DOC_DOMS];
    char err[256];
    int r;

    if (!t || !st)
        return -ENOMEM;
    r = topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, t, err, sizeof(err));
    if (r < 0)
        return r;
    for (unsigned i = 0; i < DOC_DOMS; i++) {
        (void)snprintf(st[i].name, sizeof(st[i].name), "vm%u", i);
        (void)snprintf(st[i].uuid, sizeof(st[i].uuid), "00000000-0000-0000-0000-%012u", i);
        st[i].cfg.valid = i != 1;
        st[i].cfg.mode = (vn_mode)(VN_MODE_MAX - 1 - i % VN_MODE_MAX);
        st[i].permanent_error = i == 2;
        st[i].paused = i == 3;
        st[i].id = i == 4 ? -1 : (int)i + 1;
        doms[i] = &st[i];
    }
    st[0].nr_view = 1;
    st[0].view[0].target = 0;
    st[0].guest.hints = &hints;
    metrics_observe(&h.pass_seconds, 0.1);
    r = metrics_render(&h, t, doms, DOC_DOMS, 0, &text);
    if (r < 0)
        return r;
    fputs(METRICS_DOC_BEGIN
          ": generated by build/metrics-doc from host/metrics.c; do not edit. "
          "Change the code, then run `make metrics-doc`; test-metrics fails while they differ "
          "-->\n",
          out);
    fputs("| metric | type | labels | meaning |\n|---|---|---|---|\n", out);
    r = print_rows(out, text);
    fputs(METRICS_DOC_END "\n", out);
    return r < 0 ? r : ferror(out) ? -EIO : 0;
}

int metrics_doc_splice(const char *doc, const char *table, char **ret)
{
    const char *begin = strstr(doc, METRICS_DOC_BEGIN), *end;
    size_t head, tail_at;

    if (!begin || (begin != doc && begin[-1] != '\n'))
        return -ENOENT;
    end = strstr(begin, METRICS_DOC_END);
    if (!end)
        return -ENOENT;
    end += strlen(METRICS_DOC_END);
    if (*end == '\n')
        end++;
    head = (size_t)(begin - doc);
    tail_at = (size_t)(end - doc);
    if (asprintf(ret, "%.*s%s%s", (int)head, doc, table, doc + tail_at) < 0)
        return -ENOMEM;
    return 0;
}
