/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad's record of the originals (host/origfile.h) on the real file system: what it writes is
 * read back whole; a record of another run or boot is said to be stale; a name that is not
 * a uuid, a link, a file or directory someone else may write, and what is not a record are
 * refused and left as they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpuset.h"
#include "origfile.h"
#include "tap.h"

#define UUID "0b8c1b4e-5f1a-4c3e-9d2a-6e7f8a9b0c1d"

static char dir[256], sub[300], path[400];
static dom_originals o, got; /* 1 MiB each: off the stack */

static void write_text(const char *file, const char *text, mode_t mode)
{
    int fd;

    (void)unlink(file);
    fd = open(file, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    (void)fchmod(fd, mode);
    close(fd);
}

static bool same(const dom_originals *a, const dom_originals *b)
{
    if (a->saved != b->saved || a->nr_vcpus != b->nr_vcpus ||
        a->emulator_saved != b->emulator_saved ||
        !cpuset_equal(&a->emulator_pin, &b->emulator_pin) || a->numa_saved != b->numa_saved ||
        strcmp(a->nodeset, b->nodeset) != 0 || strcmp(a->host, b->host) != 0)
        return false;
    for (unsigned v = 0; v < a->nr_vcpus; v++)
        if (!cpuset_equal(&a->vcpu_pin[v], &b->vcpu_pin[v]))
            return false;
    return true;
}

static void test_round_trip(void)
{
    struct stat sb;
    char text[512];
    FILE *f;

    o.saved = true;
    o.nr_vcpus = 3;
    snprintf(o.host, sizeof(o.host), "0123456789abcdef0123456789abcdef");
    (void)cpuset_parse("0-3", &o.vcpu_pin[0]);
    (void)cpuset_parse("1", &o.vcpu_pin[1]);
    (void)cpuset_parse("2,5", &o.vcpu_pin[2]);
    o.emulator_saved = true;
    (void)cpuset_parse("0-7", &o.emulator_pin);
    o.numa_saved = true;
    snprintf(o.nodeset, sizeof(o.nodeset), "0-1");
    CHECK(origfile_write(dir, UUID, 7, &o) == 0, "write: the record of run 7 written");
    CHECK(lstat(sub, &sb) == 0 && S_ISDIR(sb.st_mode) && (sb.st_mode & 07777) == 0700 &&
              lstat(path, &sb) == 0 && (sb.st_mode & 07777) == 0600,
          "write: state_dir/originals 0700, the record 0600");
    CHECK(origfile_read(dir, UUID, 7, &got) == 0 && same(&o, &got),
          "read: run 7 gets back what was written (3 vCPUs, emulator, nodeset, host)");
    f = fopen(path, "r");
    text[0] = '\0';
    CHECK(f && fgets(text, sizeof(text), f) && (text[strcspn(text, "\n")] = '\0', true) &&
              !strncmp(text, "vnuma-originals 1 boot=", 23) && strstr(text, " id=7"),
          "the file starts with its run: %s", text);
    if (f)
        fclose(f);
    CHECK(origfile_read(dir, UUID, 8, &got) == -ESTALE && same(&o, &got) &&
              origfile_same(&o, &got) && access(path, F_OK) == 0,
          "another run (8): stale, what it holds returned for the caller to judge, left in place");
    o.nr_vcpus = 2;
    CHECK(!origfile_same(&o, &got), "origfile_same tells a vCPU fewer");
    o.nr_vcpus = 3;
    o.saved = false;
    CHECK(origfile_write(dir, UUID, 7, &o) == 0 && origfile_write(dir, UUID, 7, &o) == 0 &&
              access(path, F_OK) < 0,
          "write of no originals: the record removed (also when there was none)");
    o.saved = true;
}

static void test_other_boot(void)
{
    write_text(path,
               "vnuma-originals 1 boot=00000000-0000-4000-8000-000000000000 id=7\n"
               "<state><original><vcpupin vcpu=\"0\" cpuset=\"1\"/></original></state>\n",
               0600);
    CHECK(origfile_read(dir, UUID, 7, &got) == -ESTALE && got.saved && access(path, F_OK) == 0,
          "another boot's record of the same id: stale");
}

static void test_refused(void)
{
    char target[400];

    CHECK(origfile_write(dir, "../../etc/passwd", 1, &o) == -EINVAL &&
              origfile_read(dir, "../x", 1, &got) == -EINVAL &&
              origfile_remove(dir, "0B8C1B4E-5F1A-4C3E-9D2A-6E7F8A9B0C1D") == -EINVAL &&
              !origfile_uuid_ok("0b8c1b4e-5f1a-4c3e-9d2a-6e7f8a9b0c1") && origfile_uuid_ok(UUID),
          "a name that is not a canonical uuid is refused");
    /* a link to a good record */
    snprintf(target, sizeof(target), "%s/elsewhere", dir);
    CHECK(origfile_write(dir, UUID, 7, &o) == 0 && rename(path, target) == 0 &&
              symlink(target, path) == 0,
          "a link put where the record goes");
    CHECK(origfile_read(dir, UUID, 7, &got) == -EPERM && !got.saved, "a link: refused");
    (void)unlink(path);
    CHECK(rename(target, path) == 0 && chmod(path, 0620) == 0 &&
              origfile_read(dir, UUID, 7, &got) == -EPERM,
          "a record group-writable: refused");
    write_text(path, "vnuma-originals 1 boot=x id=7\n<notstate/>\n", 0600);
    CHECK(origfile_read(dir, UUID, 7, &got) == -EINVAL && !got.saved,
          "a header and no <state>: not a record");
    write_text(path, "<state><original/></state>\n", 0600);
    CHECK(origfile_read(dir, UUID, 7, &got) == -EINVAL && access(path, F_OK) == 0,
          "not a record: refused and left");
    (void)unlink(path);
    CHECK(chmod(sub, 0777) == 0 && origfile_write(dir, UUID, 7, &o) == -EPERM &&
              origfile_read(dir, UUID, 7, &got) == -EPERM,
          "state_dir/originals writable by others: refused");
    (void)rmdir(sub);
    CHECK(symlink("/tmp", sub) == 0 && origfile_write(dir, UUID, 7, &o) == -EPERM,
          "state_dir/originals a link: refused");
    (void)unlink(sub);
}

static bool keep_one(const char *uuid, void *arg)
{
    return strcmp(uuid, arg) == 0;
}

static void test_prune(void)
{
    char other[400];

    CHECK(origfile_write(dir, UUID, 1, &o) == 0 &&
              origfile_write(dir, "11111111-2222-4333-8444-555555555555", 1, &o) == 0,
          "prune: two records");
    snprintf(other, sizeof(other), "%s/.11111111-2222-4333-8444-555555555555.tmp", sub);
    write_text(other, "x", 0600);
    CHECK(origfile_prune(dir, keep_one, (void *)UUID) == 2 && access(path, F_OK) == 0 &&
              access(other, F_OK) < 0,
          "prune: the record of the domain that runs kept, the other and a temporary file gone");
}

int main(void)
{
    snprintf(dir, sizeof(dir), "/tmp/vnuma-origfile.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(sub, sizeof(sub), "%s/originals", dir);
    snprintf(path, sizeof(path), "%s/%s", sub, UUID);
    test_round_trip();
    test_other_boot();
    test_refused();
    test_prune();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "# cannot remove %s\n", dir);
    return tap_done();
}
