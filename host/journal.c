/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct journal_file {
    FILE *f; /* NULL after a reopen that failed */
    uint64_t bytes;
    char dir[PATH_MAX];
};

static int path_of(const journal_file *j, unsigned k, char *buf, size_t len)
{
    int n = k ? snprintf(buf, len, "%s/%s.%u", j->dir, JOURNAL_NAME, k)
              : snprintf(buf, len, "%s/%s", j->dir, JOURNAL_NAME);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int open_file(journal_file *j)
{
    char path[PATH_MAX];
    struct stat sb;
    int fd, r;

    r = path_of(j, 0, path, sizeof(path));
    if (r < 0)
        return r;
    fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    if (fstat(fd, &sb) < 0) {
        r = -errno;
        close(fd);
        return r;
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    j->f = fdopen(fd, "a");
    if (!j->f) {
        r = -errno;
        close(fd);
        return r;
    }
    j->bytes = (uint64_t)sb.st_size;
    return 0;
}

int journal_open(const char *dir, journal_file **out)
{
    journal_file *j;
    int r;

    if (strlen(dir) >= sizeof(j->dir))
        return -ENAMETOOLONG;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    j = calloc(1, sizeof(*j));
    if (!j)
        return -ENOMEM;
    snprintf(j->dir, sizeof(j->dir), "%s", dir);
    r = open_file(j);
    if (r < 0) {
        free(j);
        return r;
    }
    *out = j;
    return 0;
}

int journal_reopen(journal_file *j)
{
    if (j->f)
        fclose(j->f);
    j->f = NULL;
    return open_file(j);
}

/* journal.jsonl.(k) -> .(k+1) from the oldest kept, then journal.jsonl -> .1, and a new one. */
static int rotate(journal_file *j, unsigned files)
{
    char from[PATH_MAX], to[PATH_MAX];
    int r = 0;

    if (files > JOURNAL_FILES_MAX)
        files = JOURNAL_FILES_MAX;
    for (unsigned k = files; k >= 1; k--) {
        if (path_of(j, k - 1, from, sizeof(from)) < 0 || path_of(j, k, to, sizeof(to)) < 0)
            return -ENAMETOOLONG;
        if (rename(from, to) < 0 && errno != ENOENT && !r)
            r = -errno;
    }
    if (files == 0) { /* nothing kept: start journal.jsonl afresh */
        if (path_of(j, 0, from, sizeof(from)) < 0)
            return -ENAMETOOLONG;
        if (unlink(from) < 0 && errno != ENOENT && !r)
            r = -errno;
    }
    {
        int o = journal_reopen(j);
        return o < 0 ? o : r;
    }
}

int journal_append(journal_file *j, const char *line, uint64_t max_bytes, unsigned files)
{
    uint64_t len = strlen(line) + 1;
    int r = 0;

    if (max_bytes && j->bytes > 0 && j->bytes + len > max_bytes)
        r = rotate(j, files);
    if (!j->f)
        return r < 0 ? r : -EBADF;
    if (fprintf(j->f, "%s\n", line) < 0 || fflush(j->f) != 0) {
        clearerr(j->f);
        return -EIO;
    }
    j->bytes += len;
    return r;
}

uint64_t journal_bytes(const journal_file *j)
{
    return j->bytes;
}

void journal_close(journal_file *j)
{
    if (!j)
        return;
    if (j->f)
        fclose(j->f);
    free(j);
}
