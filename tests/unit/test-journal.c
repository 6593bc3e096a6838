/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of host/journal.c: appending, rotation by size (the oldest file dropped, the total
 * bounded), a restart that continues a journal, reopening after logrotate moved the file, no
 * rotated file kept, and a symlink where the journal should be. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "tap.h"

static char dir[64];

static char *path(const char *suffix)
{
    static char buf[4][128];
    static unsigned n;
    char *p = buf[n++ % 4];

    snprintf(p, sizeof(buf[0]), "%s/%s%s", dir, JOURNAL_NAME, suffix);
    return p;
}

static long size_of(const char *p)
{
    struct stat sb;

    return stat(p, &sb) < 0 ? -1 : (long)sb.st_size;
}

/* the first line of file p, or "" */
static const char *first_line(const char *p)
{
    static char line[128];
    FILE *f = fopen(p, "r");

    line[0] = '\0';
    if (f) {
        if (!fgets(line, sizeof(line), f))
            line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
    return line;
}

/* 20 lines of 10 bytes ("line-NNNN\n") through a 35-byte journal keeping 2 rotated files */
static void test_rotation(void)
{
    journal_file *j = NULL;
    char line[24];
    int r, errs = 0;
    long total;

    CHECK(journal_open(dir, &j) == 0, "open makes %s", path(""));
    for (int i = 0; i < 20 && j; i++) {
        snprintf(line, sizeof(line), "line-%04d", i);
        r = journal_append(j, line, 35, 2);
        errs += r < 0;
    }
    CHECK(errs == 0, "20 appends, no error (%d)", errs);
    /* 3 lines per file: 18-19 in journal.jsonl, 15-17 in .1, 12-14 in .2, nothing older */
    CHECK(!strcmp(first_line(path("")), "line-0018") && size_of(path("")) == 20,
          "journal.jsonl holds the newest lines (first '%s', %ld bytes)", first_line(path("")),
          size_of(path("")));
    CHECK(!strcmp(first_line(path(".1")), "line-0015") && size_of(path(".1")) == 30,
          "journal.jsonl.1 the ones before ('%s', %ld bytes)", first_line(path(".1")),
          size_of(path(".1")));
    CHECK(!strcmp(first_line(path(".2")), "line-0012"), "journal.jsonl.2 the oldest kept ('%s')",
          first_line(path(".2")));
    CHECK(access(path(".3"), F_OK) < 0, "no journal.jsonl.3: 2 files are kept");
    total = size_of(path("")) + size_of(path(".1")) + size_of(path(".2"));
    CHECK(total <= 35 * 3, "the journal holds at most max x (files + 1) bytes (%ld)", total);
    journal_close(j);

    /* a restart continues the file and its size: the next line that does not fit rotates */
    j = NULL;
    r = journal_open(dir, &j);
    CHECK(r == 0 && journal_bytes(j) == 20, "a reopened journal counts what is in it (%llu bytes)",
          r == 0 ? (unsigned long long)journal_bytes(j) : 0ULL);
    if (r < 0)
        return;
    r = journal_append(j, "line-0020", 35, 2);
    r = r < 0 ? r : journal_append(j, "line-0021", 35, 2);
    {
        char now[32], one[32];
        snprintf(now, sizeof(now), "%s", first_line(path("")));
        snprintf(one, sizeof(one), "%s", first_line(path(".1")));
        CHECK(r == 0 && !strcmp(now, "line-0021") && !strcmp(one, "line-0018"),
              "and rotates when the next line does not fit (journal '%s', .1 '%s')", now, one);
    }
    journal_close(j);
}

/* logrotate moved journal.jsonl away (then sends SIGHUP): the reopen makes a new one */
static void test_reopen(void)
{
    journal_file *j = NULL;
    char moved[160];

    snprintf(moved, sizeof(moved), "%s/rotated-by-logrotate", dir);
    if (journal_open(dir, &j) < 0) {
        CHECK(0, "open for the reopen test");
        return;
    }
    CHECK(rename(path(""), moved) == 0, "journal.jsonl moved away");
    journal_append(j, "after-move", 0, 4);
    CHECK(!strcmp(first_line(moved), "line-0021"),
          "before the reopen lines still go to the moved file");
    {
        bool ok = journal_reopen(j) == 0 && journal_append(j, "after-reopen", 0, 4) == 0;
        char now[32];
        snprintf(now, sizeof(now), "%s", first_line(path("")));
        CHECK(ok && !strcmp(now, "after-reopen") && journal_bytes(j) == 13,
              "after the reopen a new journal.jsonl gets the next line ('%s')", now);
    }
    /* no rotated file kept: the journal starts afresh */
    {
        int r;
        unlink(path(".1"));
        unlink(path(".2"));
        r = journal_append(j, "0123456789", 20, 0);
        long sz = size_of(path(""));
        CHECK(r == 0 && !strcmp(first_line(path("")), "0123456789") && sz == 11 &&
                  access(path(".1"), F_OK) < 0,
              "journal_files 0: a full journal starts afresh, nothing kept (%ld bytes)", sz);
    }
    journal_close(j);
}

/* state_dir is root's, but a link planted at journal.jsonl is never followed */
static void test_symlink(void)
{
    journal_file *j = NULL;
    char target[160];
    int r;

    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    unlink(path(""));
    if (symlink(target, path("")) < 0) {
        CHECK(0, "symlink for the test: %s", strerror(errno));
        return;
    }
    r = journal_open(dir, &j);
    CHECK(r == -ELOOP && access(target, F_OK) < 0,
          "a symlink at journal.jsonl is refused (%s), nothing created through it", strerror(-r));
    journal_close(j);
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/vn-journal-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_rotation();
    test_reopen();
    test_symlink();
    {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", dir);
    }
    return tap_done();
}
