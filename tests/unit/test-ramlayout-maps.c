/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/ramlayout_maps.c and host/procmaps.c: each guest cell's RAM found without
 * QEMU's monitor, from /proc/PID/maps and the live XML. The maps and XML in tests/data/maps/
 * were recorded from QEMU 7.2 under libvirt 9.0 (TCG) on this project's test machine:
 *   anon   two cells of 64 MiB, anonymous (memory-backend-ram): equal, not told apart
 *   memfd  the same with <source type='memfd'/> shared: every memfd is "memory-backend-memfd"
 *   huge   2 MiB hugetlbfs: QEMU names each file after its backend (qemu_back_mem.ram-node0.X)
 *   uneq   anonymous cells of 64 and 96 MiB: each the only mapping of its size with a guard
 *   flat   no guest NUMA: one 128 MiB "pc.ram"
 * and hand-written maps for what a hostile QEMU could show. Data files are found below
 * $VN_SRCDIR (default: the current directory, the repo root).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domxml.h"
#include "procmaps.h"
#include "ramlayout_maps.h"
#include "tap.h"
#include "testdata.h"
#include "util.h"

#define PID 4242

static char root[] = "/tmp/vnuma-test-maps-XXXXXX";
static topology topo;

/* The fixture process's maps. */
static void put_maps(const char *text)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/proc/%d/maps", root, PID);
    f = fopen(path, "we");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static bool parse(const char *xml, domxml_info *x)
{
    char err[256];

    if (!xml || domxml_parse(xml, &topo, x, err, sizeof(err)) < 0) {
        printf("# %s\n", xml ? err : "no XML");
        return false;
    }
    return true;
}

/* A recorded domain: its cells' ranges (n), why the rest were not found. */
static int recorded(const char *name, domxml_info *x, ram_range *ram, unsigned *n, char *why,
                    size_t whylen)
{
    char rel[128];
    _cleanup_free_ char *maps = NULL, *xml = NULL;

    snprintf(rel, sizeof(rel), "tests/data/maps/%s.maps", name);
    maps = testdata_load(rel);
    snprintf(rel, sizeof(rel), "tests/data/maps/%s.xml", name);
    xml = testdata_load(rel);
    if (!maps || !parse(xml, x))
        return -ENOENT;
    put_maps(maps);
    return ramlayout_maps(root, PID, x, ram, n, why, whylen);
}

static void test_recorded(void)
{
    ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    char why[512];
    domxml_info x;
    unsigned n = 99;
    int r;

    r = recorded("anon", &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && x.nr_cells == 2 && x.cells[0].bytes == 64 << 20 && x.vcpu_cell[0] == 0 &&
              x.vcpu_cell[1] == 1 && x.vcpu_cell[2] == DOMXML_NO_CELL,
          "anon: the XML's two cells of 64 MiB, vCPU 0 in cell 0 and 1 in cell 1");
    CHECK(
        r == 0 && n == 0 &&
            strcmp(
                why,
                "cells 0, 1: 2 of 64 MiB in 2 unnamed mappings, which is which only QEMU's monitor tells") ==
                0,
        "anon: two equal anonymous cells are not told apart (%u found: %s)", n, why);

    r = recorded("memfd", &x, ram, &n, why, sizeof(why));
    CHECK(
        r == 0 && n == 0 &&
            strcmp(
                why,
                "cells 0, 1: 2 of 64 MiB in 2 unnamed mappings, which is which only QEMU's monitor tells") ==
                0,
        "memfd: every memfd is named memory-backend-memfd: not told apart (%u: %s)", n, why);

    r = recorded("huge", &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 2 && !why[0] && ram[0].cell == 0 && ram[0].hva == 0x7f9ba3e00000ULL &&
              ram[0].size == 64 << 20 && ram[1].cell == 1 && ram[1].hva == 0x7f9b9fc00000ULL &&
              ram[1].gpa == RAM_GPA_UNKNOWN && ram[0].page_size == 0,
          "huge: each cell by its hugetlbfs file's name (%u found%s%s)", n, why[0] ? ": " : "",
          why);

    r = recorded("uneq", &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 2 && !why[0] && ram[0].cell == 0 && ram[0].hva == 0x7f04dbe00000ULL &&
              ram[0].size == 64 << 20 && ram[1].cell == 1 && ram[1].hva == 0x7f04d5c00000ULL &&
              ram[1].size == 96 << 20 && !ram[0].shared,
          "uneq: cells of 64 and 96 MiB each by its size and guard page (%u found%s%s)", n,
          why[0] ? ": " : "", why);

    r = recorded("flat", &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && x.nr_cells == 0 && n == 1 && ram[0].cell == 0 && ram[0].size == 128 << 20,
          "flat: a guest without NUMA is one cell 0 of <memory> (%u found%s%s)", n,
          why[0] ? ": " : "", why);
}

#define XML_CELLS(c0, c1)                                                                          \
    "<domain><memory unit='KiB'>" c0 "</memory><cpu><numa><cell id='0' cpus='0' memory='" c0       \
    "' unit='KiB'/><cell id='1' cpus='1' memory='" c1 "' unit='KiB'/></numa></cpu></domain>"

static void test_crafted(void)
{
    ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    char why[512], line[2048], maps[4096];
    domxml_info x;
    unsigned n;
    int r;

    /* 64 and 96 MiB; the 64 MiB one without QEMU's guard page is not guest RAM */
    if (!parse(XML_CELLS("65536", "98304"), &x))
        return;
    put_maps("7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
             "7f0004000000-7f0004001000 rw-p 00000000 00:00 0 \n"
             "7f0010000000-7f0016000000 rw-p 00000000 00:00 0 \n"
             "7f0016000000-7f0016001000 ---p 00000000 00:00 0 \n");
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 1 && ram[0].cell == 1 && strstr(why, "cell 0: 0 unnamed mappings"),
          "no guard page after it: not taken for a cell (%u found: %s)", n, why);

    /* executable (TCG's code buffer) of the right size: not guest RAM */
    put_maps("7f0000000000-7f0004000000 rwxp 00000000 00:00 0 \n"
             "7f0004000000-7f0004001000 ---p 00000000 00:00 0 \n");
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 0, "an executable mapping is never guest RAM (%u found)", n);

    /* two named mappings of one backend: the cell is in neither */
    put_maps("7f0000000000-7f0004000000 rw-s 00000000 00:2f 11   /dev/hugepages/q/qemu_back_mem."
             "ram-node0.AAAAAA (deleted)\n"
             "7f0008000000-7f000c000000 rw-s 00000000 00:2f 12   /dev/hugepages/q/qemu_back_mem."
             "ram-node0.BBBBBB (deleted)\n");
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 0 && strstr(why, "cell 0: 2 separate mappings named ram-node0"),
          "two separate mappings named ram-node0: ambiguous (%s)", why);

    /* one named backend split into two contiguous mappings, and ram-node10 is not ram-node1 */
    put_maps("7f0000000000-7f0002000000 rw-p 00000000 00:2f 11   /h/qemu_back_mem.ram-node0.A\n"
             "7f0002000000-7f0004000000 rw-p 02000000 00:2f 11   /h/qemu_back_mem.ram-node0.A\n"
             "7f0008000000-7f000e000000 rw-p 00000000 00:2f 13   /h/qemu_back_mem.ram-node10.C\n");
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 1 && ram[0].cell == 0 && ram[0].size == 64 << 20 && strstr(why, "cell 1:"),
          "a backend split in two mappings is one range; ram-node10 is not cell 1 (%u: %s)", n,
          why);

    /* A crafted file name longer than a line buffer: read in pieces, its tail would be a
     * mapping of its own (anonymous, the cell's size, before a real guard page) */
    int k = snprintf(line, sizeof(line), "7f0100000000-7f0100001000 r--p 00000000 08:01 77 /tmp/");
    while (k < 512 - 1)
        line[k++] = 'x';
    line[k] = '\0';
    snprintf(maps, sizeof(maps),
             "%s7f0000000000-7f0004000000 rw-p 00000000 00:00 0 \n"
             "7f0004000000-7f0004001000 ---p 00000000 00:00 0 \n",
             line);
    put_maps(maps);
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == 0 && n == 0,
          "a file name that holds a mapping line is a name, not a mapping (%u "
          "found)",
          n);

    /* maps of a process that is gone */
    char path[512];
    snprintf(path, sizeof(path), "%s/proc/%d/maps", root, PID);
    (void)unlink(path);
    r = ramlayout_maps(root, PID, &x, ram, &n, why, sizeof(why));
    CHECK(r == -ESRCH, "a process that is gone: -ESRCH (r=%d)", r);
}

static void test_xml(void)
{
    domxml_info x;
    char err[256];

    CHECK(parse("<domain><memory unit='GiB'>2</memory><devices><memory model='dimm'><target>"
                "<size unit='MiB'>512</size><node>0</node></target></memory></devices></domain>",
                &x) &&
              x.memory_bytes == 2ULL << 30 && x.device_bytes == 512ULL << 20 && x.nr_cells == 0,
          "<memory> and memory devices in libvirt's units");
    CHECK(domxml_parse("<domain><memory unit='parsecs'>2</memory></domain>", &topo, &x, err,
                       sizeof(err)) == -EINVAL,
          "an unknown unit is refused (%s)", err);
    CHECK(domxml_parse("<domain><memory unit='TiB'>99999999</memory></domain>", &topo, &x, err,
                       sizeof(err)) == -EINVAL,
          "a size that overflows is refused (%s)", err);
    CHECK(domxml_parse("<domain><cpu><numa><cell id='0' cpus='0-1' memory='1'/><cell id='1' "
                       "cpus='1' memory='1'/></numa></cpu></domain>",
                       &topo, &x, err, sizeof(err)) == -EINVAL,
          "a vCPU in two cells is refused (%s)", err);
    CHECK(domxml_parse("<domain><cpu><numa><cell id='64' cpus='0' memory='1'/></numa></cpu>"
                       "</domain>",
                       &topo, &x, err, sizeof(err)) == -EINVAL,
          "a cell id beyond 63 is refused (%s)", err);
    CHECK(parse("<domain><cpu><numa><cell id='0' cpus='0' memory='1024'/><cell id='1' "
                "memory='2048'/></numa></cpu></domain>",
                &x) &&
              x.nr_cells == 2 && x.cells[0].has_vcpus && !x.cells[1].has_vcpus &&
              x.cells[1].bytes == 2048 * 1024,
          "a memory-only cell (no cpus): KiB when no unit");
}

int main(void)
{
    char err[256], path[512];

    if (!mkdtemp(root) || topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, &topo,
                                    err, sizeof(err)) < 0)
        return 1;
    snprintf(path, sizeof(path), "%s/proc", root);
    (void)mkdir(path, 0700);
    snprintf(path, sizeof(path), "%s/proc/%d", root, PID);
    (void)mkdir(path, 0700);
    test_recorded();
    test_crafted();
    test_xml();
    snprintf(path, sizeof(path), "%s/proc/%d/maps", root, PID);
    (void)unlink(path);
    snprintf(path, sizeof(path), "%s/proc/%d", root, PID);
    (void)rmdir(path);
    snprintf(path, sizeof(path), "%s/proc", root);
    (void)rmdir(path);
    (void)rmdir(root);
    return tap_done();
}
