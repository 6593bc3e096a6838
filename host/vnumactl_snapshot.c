/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `vnumactl snapshot`: vnumad reads every running domain (opted in or not) without a monitor
 * command and changes nothing (live_snapshot.c); this prints its snapshot JSON, or with
 * --table the per-VM view: each cell's vCPUs and memory per host node.
 */
#include "vnumactl_snapshot.h"

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ctl_client.h"
#include "json.h"
#include "util.h"

/* "0:2 1:1" of an object {"0": 2, "1": 1}, values divided by div; "-" when empty. */
static const char *per_node(struct json_object *o, uint64_t div, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, v)
        {
            int n = snprintf(buf + used, len - used, "%s%s:%llu", used ? " " : "", key,
                             (unsigned long long)((uint64_t)json_object_get_int64(v) / div));
            if (n < 0 || (size_t)n >= len - used)
                break;
            used += (size_t)n;
        }
    }
    return buf[0] ? buf : "-";
}

static void print_table(struct json_object *r)
{
    struct json_object *view = jget(r, "view"), *left = jget(r, "left_out");
    char vc[256], mem[256], name[256];

    printf("%-24s %-6s %4s %5s %6s  %-16s %s\n", "DOMAIN", "MODE", "CELL", "VCPUS", "BUSY",
           "VCPUS PER NODE", "MEMORY PER NODE (MiB)");
    for (size_t i = 0; i < jlen(view); i++) {
        struct json_object *d = json_object_array_get_idx(view, i), *cells = jget(d, "cells");
        snprintf(name, sizeof(name), "%s", jstr(d, "name", "?"));
        for (size_t c = 0; c < jlen(cells); c++) {
            struct json_object *x = json_object_array_get_idx(cells, c);
            double busy = 0;
            (void)jnum(x, "busy", &busy);
            printf("%-24s %-6s %4llu %5llu %6.2f  %-16s %s\n", c ? "" : name,
                   c ? "" : jstr(d, "mode", "?"), (unsigned long long)ju64(x, "cell"),
                   (unsigned long long)ju64(x, "nr_vcpus"), busy,
                   per_node(jget(x, "vcpus"), 1, vc, sizeof(vc)),
                   per_node(jget(x, "memory"), 1024 * 1024, mem, sizeof(mem)));
        }
        if (jstr(d, "memory_error", NULL))
            printf("  %s: memory not counted: %s\n", name, jstr(d, "memory_error", ""));
    }
    for (size_t i = 0; i < jlen(left); i++) {
        struct json_object *x = json_object_array_get_idx(left, i);
        printf("  %s: left out: %s\n", jstr(x, "name", "?"), jstr(x, "reason", ""));
    }
}

int vnumactl_snapshot(int argc, char **argv, vnumactl_ctx *ctx)
{
    const char *table = NULL, *output = NULL;
    const vnumactl_opt extra[] = {{"table", 0, false, &table}, {"output", 'o', true, &output}};
    _cleanup_json_ struct json_object *r = NULL;
    _cleanup_fclose_ FILE *f = NULL;
    char err[512];
    int rc;

    rc = vnumactl_options(argc, argv, ctx, NULL, extra, VN_ARRAY_SIZE(extra));
    if (rc >= 0)
        return rc;
    if (optind < argc) {
        fprintf(stderr,
                "vnumactl: snapshot: unexpected argument '%s'\nUsage: vnumactl snapshot %s\n",
                argv[optind], ctx->args);
        return VNUMACTL_EXIT_USAGE;
    }
    if (table && output) {
        fprintf(stderr, "vnumactl: snapshot: --table shows the view, --output saves the snapshot: "
                        "one or the other\n");
        return VNUMACTL_EXIT_USAGE;
    }
    if (ctl_call(ctx->socket, "snapshot", NULL, CTL_TIMEOUT_MS, &r, err, sizeof(err)) < 0) {
        fprintf(stderr, "vnumactl: %s\n", err);
        return VNUMACTL_EXIT_ERROR;
    }
    if (table) {
        ctl_json_printable(r);
        print_table(r);
    } else {
        struct json_object *left = jget(r, "left_out"), *view = jget(r, "view");
        const char *text = json_object_to_json_string_ext(
            jget(r, "snapshot"), JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (output && !(f = fopen(output, "we"))) {
            fprintf(stderr, "vnumactl: snapshot: cannot write %s: %s\n", output, strerror(errno));
            return VNUMACTL_EXIT_ERROR;
        }
        if (fprintf(f ? f : stdout, "%s\n", text) < 0 || (f && fflush(f) != 0)) {
            fprintf(stderr, "vnumactl: snapshot: cannot write the snapshot\n");
            return VNUMACTL_EXIT_ERROR;
        }
        ctl_json_printable(r);
        fprintf(stderr, "vnumactl: snapshot: %zu domain(s)%s%s\n", jlen(view),
                output ? " saved in " : "", output ? output : "");
        for (size_t i = 0; i < jlen(view); i++) {
            struct json_object *d = json_object_array_get_idx(view, i);
            if (jstr(d, "memory_error", NULL))
                fprintf(stderr, "vnumactl: snapshot: %s: memory not counted: %s\n",
                        jstr(d, "name", "?"), jstr(d, "memory_error", ""));
        }
        for (size_t i = 0; i < jlen(left); i++) {
            struct json_object *x = json_object_array_get_idx(left, i);
            fprintf(stderr, "vnumactl: snapshot: %s left out: %s\n", jstr(x, "name", "?"),
                    jstr(x, "reason", ""));
        }
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}
