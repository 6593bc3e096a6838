/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit tests' data files (tests/data/), found below $VN_SRCDIR (default: the current
 * directory, the repo root): a file's text, and each example snapshot with its topology.
 */
#pragma once

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "util.h"

static inline const char *testdata_dir(void)
{
    const char *src = getenv("VN_SRCDIR");
    return src && *src ? src : ".";
}

/* The text of a file of the source tree (rel: "tests/data/..."), NUL-ended and
 * malloc'd; NULL (said on stderr) when it cannot be read. */
static inline char *testdata_load(const char *rel)
{
    char path[4096];
    _cleanup_fclose_ FILE *f = NULL;
    char *buf;
    long n;

    (void)snprintf(path, sizeof(path), "%s/%s", testdata_dir(), rel);
    f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
        return NULL;
    buf = malloc((size_t)n + 1);
    if (!buf)
        return NULL;
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* fn(base, topology path, snapshot path, arg) for each tests/data/topologies/BASE.xml and
 * its example tests/data/snapshots/BASE.json; the number of topologies (0: none found, a
 * failed check). */
static inline size_t testdata_each_example(void (*fn)(const char *base, const char *topo,
                                                      const char *snap, void *arg),
                                           void *arg)
{
    char pattern[4096];
    glob_t g = {0};
    size_t n;

    (void)snprintf(pattern, sizeof(pattern), "%s/tests/data/topologies/*.xml", testdata_dir());
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        CHECK(0, "no topologies found with %s (run from the source tree or set VN_SRCDIR)",
              pattern);
        globfree(&g);
        return 0;
    }
    for (size_t i = 0; i < g.gl_pathc; i++) {
        char base[1024], snap[4096], *dot;
        (void)snprintf(base, sizeof(base), "%s", strrchr(g.gl_pathv[i], '/') + 1);
        dot = strrchr(base, '.');
        if (dot)
            *dot = '\0';
        (void)snprintf(snap, sizeof(snap), "%s/tests/data/snapshots/%s.json", testdata_dir(), base);
        fn(base, g.gl_pathv[i], snap, arg);
    }
    n = g.gl_pathc;
    globfree(&g);
    return n;
}
