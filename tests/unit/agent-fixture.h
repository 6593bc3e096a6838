/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A fixture tree for the agent's unit tests (test-agent-*.c): a temporary root standing
 * for / (the agent reads ROOT/proc and ROOT/sys) and files written below it.
 */
#pragma once

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The fixture root, "/tmp/vnuma-agent-NAME.XXXXXX" once fixture_root_make() made it. */
static char root[256];

/* Create the fixture root for test program `name`; false when no directory can be made. */
__attribute__((unused)) static bool fixture_root_make(const char *name)
{
    snprintf(root, sizeof(root), "/tmp/vnuma-agent-%s.XXXXXX", name);
    return mkdtemp(root) != NULL;
}

/* Remove the fixture root and everything below it. */
__attribute__((unused)) static void fixture_root_remove(void)
{
    char cmd[300];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    (void)system(cmd);
}

/* Write ROOT/path with content, creating directories. */
__attribute__((unused)) static void put(const char *path, const char *content)
{
    char full[512], dir[512];
    FILE *f;

    snprintf(full, sizeof(full), "%s/%s", root, path);
    for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        snprintf(dir, sizeof(dir), "%.*s", (int)(p - full), full);
        (void)mkdir(dir, 0755);
    }
    f = fopen(full, "w");
    if (!f) {
        perror(full);
        exit(1);
    }
    fputs(content, f);
    fclose(f);
}
