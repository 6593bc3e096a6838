/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metrics-doc: the metrics table of docs/operations.md, generated from host/metrics.c
 * (metrics_doc.h). Without an argument it prints the table; with DOC it replaces the table in
 * DOC. `make metrics-doc` runs it on docs/operations.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_doc.h"
#include "util.h"

int main(int argc, char **argv)
{
    _cleanup_free_ char *table = NULL, *doc = NULL, *out = NULL;
    size_t table_len = 0, doc_len = 0;
    char tmp[4096];
    FILE *f;
    int r;

    if (argc > 2) {
        fprintf(stderr, "usage: metrics-doc [DOC]\n");
        return 2;
    }
    f = open_memstream(&table, &table_len);
    r = f ? metrics_doc_table(f) : -ENOMEM;
    if (f && fclose(f) != 0 && r == 0)
        r = -ENOMEM;
    if (r < 0) {
        fprintf(stderr, "metrics-doc: cannot generate the table: %s\n", strerror(-r));
        return 1;
    }
    if (argc == 1)
        return fputs(table, stdout) < 0 || fflush(stdout) != 0;
    f = fopen(argv[1], "re");
    if (!f || getdelim(&doc, &doc_len, '\0', f) < 0) {
        fprintf(stderr, "metrics-doc: cannot read %s\n", argv[1]);
        if (f)
            fclose(f);
        return 1;
    }
    fclose(f);
    r = metrics_doc_splice(doc, table, &out);
    if (r < 0) {
        fprintf(stderr, "metrics-doc: %s has no '%s' ... '%s' lines to replace\n", argv[1],
                METRICS_DOC_BEGIN, METRICS_DOC_END);
        return 1;
    }
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= sizeof(tmp) ||
        !(f = fopen(tmp, "we"))) {
        fprintf(stderr, "metrics-doc: cannot write %s.tmp\n", argv[1]);
        return 1;
    }
    if (fputs(out, f) < 0 || fclose(f) != 0 || rename(tmp, argv[1]) < 0) {
        fprintf(stderr, "metrics-doc: cannot write %s\n", argv[1]);
        (void)unlink(tmp);
        return 1;
    }
    return 0;
}
