/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libvirt's qemu hook: an incoming domain placed by vnumad before its memory arrives. */
#include "vnumactl_hook.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "control.h"
#include "ctl_client.h"
#include "hookxml.h"
#include "json.h"
#include "util.h"

/*
 * All of stdin, read to its end (libvirt writes the whole XML: a hook that stops reading
 * would have it fail on a broken pipe); its first `max` bytes kept. NULL when it was longer or
 * could not be read.
 */
static char *read_all(size_t max)
{
    size_t len = 0, cap = 64 * 1024;
    char *buf = malloc(cap + 1), drain[4096];
    bool over = false;

    for (;;) {
        ssize_t n;
        if (!over && len == cap) {
            size_t ncap = cap * 2 > max ? max : cap * 2;
            char *nb = ncap > cap && buf ? realloc(buf, ncap + 1) : NULL;
            if (nb) {
                buf = nb;
                cap = ncap;
            } else {
                over = true;
            }
        }
        if (!buf)
            over = true;
        n = over ? read(STDIN_FILENO, drain, sizeof(drain))
                 : read(STDIN_FILENO, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n < 0)
                over = true;
            break;
        }
        if (!over)
            len += (size_t)n;
    }
    if (over) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/*
 * vnumad did not answer: the XML passes, without a placement an earlier host's hook wrote
 * into it (its nodes may not exist here, and libvirt would refuse the domain: hookxml.h).
 */
static int pass_unplaced(const char *xml, const char *err)
{
    _cleanup_free_ char *out = NULL;

    if (hookxml_unplace(xml, &out) < 0 || !out) {
        fprintf(stderr, "vnuma hook: the incoming XML passes unchanged: %s\n", err);
        return VNUMACTL_EXIT_OK;
    }
    fprintf(stderr,
            "vnuma hook: the incoming XML passes without the placement of an earlier "
            "host: %s\n",
            err);
    fputs(out, stdout);
    (void)fflush(stdout);
    return VNUMACTL_EXIT_OK;
}

int vnumactl_hook(int argc, char **argv, const vnumactl_ctx *ctx)
{
    _cleanup_json_ struct json_object *r = NULL;
    _cleanup_free_ char *xml = NULL;
    const char *out;
    char err[512];

    /* NAME OPERATION SUB-OPERATION EXTRA, as libvirt passes them: never parsed as options (a
     * domain name may begin with '-') */
    xml = read_all(CONTROL_XML_MAX);
    if (argc != 5 || (strcmp(argv[2], "migrate") != 0 && strcmp(argv[2], "restore") != 0) ||
        strcmp(argv[3], "begin") != 0)
        return VNUMACTL_EXIT_OK;
    if (!xml || !*xml || strlen(xml) > CONTROL_XML_MAX) {
        fprintf(stderr, "vnuma hook: the incoming XML passes unchanged: %s\n",
                xml ? "it holds a NUL byte or is empty" : "longer than vnumad takes");
        return VNUMACTL_EXIT_OK;
    }
    if (ctl_call_xml(ctx->socket, "place", NULL, NULL, xml, VNUMACTL_HOOK_TIMEOUT_MS, &r, err,
                     sizeof(err)) < 0)
        return pass_unplaced(xml, err);
    out = jstr(r, "xml", NULL);
    if (!jbool(r, "placed"))
        fprintf(stderr, "vnuma hook: the incoming XML passes %s: %s\n",
                out ? "without the placement of an earlier host" : "unchanged",
                jstr(r, "why", "vnumad placed nothing"));
    if (!out)
        return VNUMACTL_EXIT_OK;
    fputs(out, stdout);
    (void)fflush(stdout);
    return VNUMACTL_EXIT_OK;
}
