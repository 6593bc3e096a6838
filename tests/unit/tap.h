/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Minimal test harness: each check prints "ok"/"not ok" with a description,
 * and tap_done() prints the closing "N passed, N failed" line and returns the
 * exit status (0 all passed, 1 otherwise). Skips are never counted as passes:
 * a test program that cannot run here exits 77 after saying why.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned tap_passed, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int tap_check(int ok, const char *fmt, ...)
{
    va_list ap;
    printf("%s %u - ", ok ? "ok" : "not ok", tap_passed + tap_failed + 1);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    if (ok)
        tap_passed++;
    else
        tap_failed++;
    return ok;
}

#define CHECK(cond, ...) tap_check(!!(cond), __VA_ARGS__)

__attribute__((unused)) static int tap_done(void)
{
    printf("%u passed, %u failed\n", tap_passed, tap_failed);
    return tap_failed ? 1 : 0;
}

/* The shared topologies directory: $VN_TOPOLOGIES, else ../shared/topologies. */
__attribute__((unused)) static const char *tap_topodir(void)
{
    const char *d = getenv("VN_TOPOLOGIES");
    return d && *d ? d : "../shared/topologies";
}

/*
 * The golden-file check (the one compare helper): `text` against tests/golden/NAME, read from
 * the tree's top as make check runs the tests; with VN_TEST_REGENERATE_OUTPUT=1 in the
 * environment the file is written instead (and the check says so). A difference names the
 * first line that differs, both ways.
 */
__attribute__((unused)) static int tap_golden(const char *name, const char *text)
{
    char path[512], *want = NULL;
    const char *regen = getenv("VN_TEST_REGENERATE_OUTPUT");
    size_t len = 0, cap = 0, n, line = 1, i;
    FILE *f;

    snprintf(path, sizeof(path), "tests/golden/%s", name);
    if (regen && strcmp(regen, "1") == 0) {
        f = fopen(path, "w");
        n = f ? fwrite(text, 1, strlen(text), f) : 0;
        if (f && fclose(f) != 0)
            n = 0;
        return tap_check(n == strlen(text), "%s regenerated (VN_TEST_REGENERATE_OUTPUT=1)", path);
    }
    f = fopen(path, "r");
    if (!f)
        return tap_check(0,
                         "%s equals the golden file (missing: regenerate with "
                         "VN_TEST_REGENERATE_OUTPUT=1)",
                         path);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *p = realloc(want, cap = (cap + 4096) * 2);
            if (!p)
                break;
            want = p;
        }
        n = fread(want + len, 1, cap - len - 1, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    if (!want)
        return tap_check(0, "%s equals the golden file (out of memory)", path);
    want[len] = '\0';
    for (i = 0; want[i] && want[i] == text[i]; i++)
        if (want[i] == '\n')
            line++;
    if (!want[i] && !text[i]) {
        free(want);
        return tap_check(1, "%s equals the golden file", path);
    }
    {
        const char *w = want + i, *g = text + i;
        while (w > want && w[-1] != '\n')
            w--;
        while (g > text && g[-1] != '\n')
            g--;
        tap_check(0,
                  "%s equals the golden file: line %zu is '%.*s', was '%.*s' "
                  "(VN_TEST_REGENERATE_OUTPUT=1 rewrites it)",
                  path, line, (int)strcspn(g, "\n"), g, (int)strcspn(w, "\n"), w);
    }
    free(want);
    return 0;
}
