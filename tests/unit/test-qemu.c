/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of host/qemu.c: the QMP/HMP reply parsers on replies recorded from QEMU 7.2 through
 * libvirt 9.0 with TCG and with KVM (tests/data/qmp/, kvm-*) and on hand-written malformed
 * ones (tests/data/qmp/bad/). Data files are found below $VN_SRCDIR (default: the current
 * directory, the repo root).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "qemu.h"
#include "tap.h"
#include "testdata.h"
#include "util.h"
#include "virt.h"
#include "virt_libvirt.h"

#define QMP_DIR "tests/data/qmp"

static char *load(const char *rel)
{
    char path[512];

    (void)snprintf(path, sizeof(path), "%s/%s", QMP_DIR, rel);
    return testdata_load(path);
}

/* ---- query-cpus-fast ---- */

typedef struct cpus_want {
    unsigned cpu_index;
    int node_id;
    pid_t thread_id;
} cpus_want;

typedef struct cpus_case {
    const char *file;
    int rc;
    unsigned n;
    cpus_want v[3]; /* first entries expected */
} cpus_case;

static const cpus_case cpus_cases[] = {
    /* recorded */
    {"cpus-fast-two-cell.json", 0, 2, {{0, 0, 5597}, {1, 1, 5598}}},
    {"kvm-cpus-fast-two-cell.json", 0, 2, {{0, 0, 10804}, {1, 1, 10805}}}, /* QEMU 7.2, KVM */
    {"cpus-fast-no-numa.json", 0, 2, {{0, -1, 5611}, {1, -1, 5612}}},
    {"cpus-fast-4g-split.json", 0, 2, {{0, 0, 0}, {1, 1, 0}}},
    {"cpus-fast-eleven.json", 0, 11, {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}}},
    {"error-command-not-found.json", -EINVAL, 0, {{0}}},
    /* hand-written */
    {"bad/cpus-fast-not-object.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-truncated.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-trailing.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-return-object.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-empty.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-no-cpu-index.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-props-thread-id-only.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-thread-id-string.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-thread-id-zero.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-thread-id-huge.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-cpu-index-negative.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-cpu-index-float.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-cpu-index-huge.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-node-id-negative.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-node-id-too-big.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-node-id-null.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-props-array.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-duplicate.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-key-twice.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-entry-number.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-single-quotes.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-deep.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-bad-utf8.json", -EINVAL, 0, {{0}}},
    {"bad/cpus-fast-key-nul.json", -EINVAL, 0, {{0}}},
};

static void test_cpus_fast(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(cpus_cases); i++) {
        const cpus_case *c = &cpus_cases[i];
        _cleanup_free_ char *text = load(c->file);
        _cleanup_free_ qmp_vcpu *v = NULL;
        char err[256] = "";
        unsigned n = 12345;
        int r;

        if (!CHECK(text, "%s: loaded", c->file))
            continue;
        r = qmp_parse_cpus_fast(text, &v, &n, err, sizeof(err));
        if (c->rc < 0) {
            CHECK(r == c->rc && err[0] && !v && n == 12345, "%s: refused (%d: %s)", c->file, r,
                  err);
            continue;
        }
        if (!CHECK(r == 0 && v && n == c->n, "%s: %u vCPUs (r=%d n=%u %s)", c->file, c->n, r, n,
                   err))
            continue;
        for (unsigned k = 0; k < VN_ARRAY_SIZE(c->v) && k < c->n; k++) {
            const cpus_want *e = &c->v[k];
            CHECK(v[k].cpu_index == e->cpu_index && v[k].node_id == e->node_id &&
                      (e->thread_id == 0 ? v[k].thread_id > 0 : v[k].thread_id == e->thread_id),
                  "%s: entry %u is vCPU %u, node %d, thread %d (got %u, %d, %d)", c->file, k,
                  e->cpu_index, e->node_id, (int)e->thread_id, v[k].cpu_index, v[k].node_id,
                  (int)v[k].thread_id);
        }
    }
    {
        qmp_vcpu *v = NULL;
        unsigned n = 0;
        char err[64] = "";
        CHECK(qmp_parse_cpus_fast(NULL, &v, &n, err, sizeof(err)) == -EINVAL && err[0],
              "cpus-fast: NULL reply refused");
        CHECK(qmp_parse_cpus_fast("", &v, &n, NULL, 0) == -EINVAL, "cpus-fast: empty reply");
        CHECK(qmp_parse_cpus_fast("   \r\n", &v, &n, NULL, 0) == -EINVAL, "cpus-fast: blank reply");
        CHECK(qmp_parse_cpus_fast("null", &v, &n, NULL, 0) == -EINVAL, "cpus-fast: null");
    }
    {
        /* one byte over the size limit, made of whitespace around a valid reply */
        size_t big = 4u * 1024 * 1024 + 1;
        _cleanup_free_ char *s = malloc(big + 64);
        if (s) {
            memset(s, ' ', big + 63);
            memcpy(s, "{\"return\":[{\"cpu-index\":0,\"thread-id\":7}]}", 42);
            s[big + 63] = '\0';
            qmp_vcpu *v = NULL;
            unsigned n = 0;
            char err[128] = "";
            CHECK(qmp_parse_cpus_fast(s, &v, &n, err, sizeof(err)) == -EINVAL,
                  "cpus-fast: reply over 4 MiB refused (%s)", err);
            free(v);
        }
    }
}

/* ---- query-memdev ---- */

typedef struct memdev_case {
    const char *file;
    const char *id;
    int rc;
    uint64_t size;
    bool shared;
} memdev_case;

static const memdev_case memdev_cases[] = {
    {"memdev-two-cell.json", "ram-node0", 0, 64 * VN_MIB, false},
    {"kvm-memdev-two-cell.json", "ram-node0", 0, 64 * VN_MIB, false}, /* QEMU 7.2, KVM */
    {"kvm-memdev-two-cell.json", "ram-node1", 0, 64 * VN_MIB, false},
    {"memdev-two-cell.json", "ram-node1", 0, 64 * VN_MIB, false},
    {"memdev-two-cell.json", "ram-node2", -ENOENT, 0, false},
    {"memdev-two-cell.json", "ram-node", -ENOENT, 0, false},
    {"memdev-no-numa-strict.json", "pc.ram", 0, 128 * VN_MIB, false},
    {"memdev-no-numa-strict.json", "ram-node0", -ENOENT, 0, false},
    {"memdev-4g-split.json", "ram-node0", 0, 3584 * VN_MIB, false},
    {"memdev-4g-split.json", "ram-node1", 0, 512 * VN_MIB, false},
    {"memdev-eleven.json", "ram-node1", 0, 32 * VN_MIB, false},
    {"memdev-eleven.json", "ram-node10", 0, 32 * VN_MIB, false},
    {"error-command-not-found.json", "ram-node0", -EINVAL, 0, false},
    {"cpus-fast-two-cell.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-no-size.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-size-zero.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-size-negative.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-size-string.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-share-int.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-id-int.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-duplicate.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-return-string.json", "ram-node0", -EINVAL, 0, false},
    {"bad/memdev-no-return.json", "ram-node0", -EINVAL, 0, false},
    {"bad/cpus-fast-truncated.json", "ram-node0", -EINVAL, 0, false},
    {"bad/cpus-fast-deep.json", "ram-node0", -EINVAL, 0, false},
};

static void test_memdev(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(memdev_cases); i++) {
        const memdev_case *c = &memdev_cases[i];
        _cleanup_free_ char *text = load(c->file);
        uint64_t size = 777;
        bool shared = true;
        char err[256] = "";
        int r;

        if (!CHECK(text, "%s: loaded", c->file))
            continue;
        r = qmp_parse_memdev(text, c->id, &size, &shared, err, sizeof(err));
        if (c->rc < 0)
            CHECK(r == c->rc && err[0] && size == 777, "%s '%s': refused with %d (%d: %s)", c->file,
                  c->id, c->rc, r, err);
        else
            CHECK(r == 0 && size == c->size && shared == c->shared,
                  "%s '%s': %" PRIu64 " bytes, share=%d (r=%d %" PRIu64 " %d %s)", c->file, c->id,
                  c->size, c->shared, r, size, shared, err);
    }
    CHECK(qmp_parse_memdev("{\"return\":[]}", "ram-node0", NULL, NULL, NULL, 0) == -ENOENT,
          "memdev: empty list, no backend");
    CHECK(qmp_parse_memdev("{\"return\":[{\"id\":\"mem\",\"size\":4096,\"share\":true}]}", "mem",
                           NULL, NULL, NULL, 0) == 0,
          "memdev: NULL outputs allowed");
    {
        bool shared = false;
        uint64_t size = 0;
        CHECK(qmp_parse_memdev("{\"return\":[{\"id\":\"memfd0\",\"size\":8192,\"share\":true}]}",
                               "memfd0", &size, &shared, NULL, 0) == 0 &&
                  shared && size == 8192,
              "memdev: share=true reported");
    }
    CHECK(qmp_parse_memdev("{\"return\":[]}", "", NULL, NULL, NULL, 0) == -EINVAL,
          "memdev: empty id refused");
}

/* ---- info mtree -f ---- */

typedef struct mtree_case {
    const char *file;
    const char *id;
    int rc;
    uint64_t gpa, offset;
} mtree_case;

static const mtree_case mtree_cases[] = {
    /* recorded */
    {"mtree-two-cell.txt", "ram-node0", 0, 0, 0},
    {"mtree-two-cell.txt", "ram-node1", 0, 0x4000000, 0},
    {"mtree-two-cell.txt", "ram-node2", -ENOENT, 0, 0},
    {"mtree-two-cell.txt", "pc.bios", -ENOENT, 0, 0}, /* rom, not ram */
    {"mtree-two-cell.txt", "ram-node", -ENOENT, 0, 0},
    {"mtree-two-cell.txt", "ram-node0 @0000000000100000", -ENOENT, 0, 0},
    {"mtree-no-numa.txt", "pc.ram", 0, 0, 0},
    {"mtree-4g-split.txt", "ram-node0", 0, 0, 0},
    {"mtree-4g-split.txt", "ram-node1", 0, 0x120000000, 0},
    {"mtree-eleven.txt", "ram-node1", 0, 0x2000000, 0},
    {"mtree-eleven.txt", "ram-node10", 0, 0x14000000, 0},
    {"mtree-eleven.txt", "ram-node11", -ENOENT, 0, 0},
    /* hand-written: first ram range of ram-node1 at an offset, rom/nv-ram/smm ignored */
    /* QEMU 7.2 with KVM (this machine): every range ends with the accelerator's name */
    {"kvm-mtree-two-cell.txt", "ram-node0", 0, 0, 0},
    {"kvm-mtree-two-cell.txt", "ram-node1", 0, 0x4000000, 0},
    {"kvm-mtree-two-cell.txt", "ram-node2", -ENOENT, 0, 0},
    {"kvm-mtree-two-cell.txt", "KVM", -ENOENT, 0, 0}, /* the accelerator is not a name */
    /* machine types <= 4.0 (/objects/ID), trailing tokens, nv-ram and romd (not RAM) */
    {"handmade-mtree-tokens.txt", "ram-node0", 0, 0, 0},
    {"handmade-mtree-tokens.txt", "ram-node1", 0, 0x4000000, 0},
    {"handmade-mtree-tokens.txt", "nvdimm0", -ENOENT, 0, 0}, /* nv-ram does not migrate */
    {"handmade-mtree-tokens.txt", "romd-thing", -ENOENT, 0, 0},
    {"handmade-mtree-tokens.txt", "/objects/ram-node0", 0, 0, 0},
    {"bad/mtree-offset-no-name.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-bad-offset-after-accel.txt", "ram-node1", -EINVAL, 0, 0},
    {"handmade-mtree-offset.txt", "ram-node1", 0, 0x4000000, 0x200000},
    {"handmade-mtree-offset.txt", "ram-node12", 0, 0x8000000, 0},
    {"handmade-mtree-offset.txt", "ram-node0", 0, 0, 0},
    {"handmade-mtree-offset.txt", "vga-lowmem", -ENOENT, 0, 0},
    {"bad/mtree-bad-hex.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-no-comma.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-end-before-start.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-bad-offset.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-overflow.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-empty-name.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-unknown-command.txt", "ram-node1", -EINVAL, 0, 0},
    {"bad/mtree-no-system-view.txt", "ram-node1", -EINVAL, 0, 0},
    {"gpa2hva-two-cell-node1.txt", "ram-node1", -EINVAL, 0, 0},
};

/* query-stats: KVM's halt-polling time per vCPU, matched to query-cpus-fast by QOM path */
/* libvirt 9.0's vCPU statistics of a KVM domain (virsh domstats --vcpu, QEMU 7.2 on this
 * machine's /dev/kvm), the halt-poll counters among the rest */
static void test_vcpu_poll(void)
{
    static const char *const names[] = {
        "vcpu.current",
        "vcpu.0.state",
        "vcpu.0.time",
        "vcpu.0.halt_poll_success_ns.sum",
        "vcpu.0.halt_wait_ns.sum",
        "vcpu.0.halt_poll_fail_ns.sum",
        "vcpu.1.halt_poll_fail_ns.sum",
        "vcpu.1.halt_poll_success_ns.sum",
        "vcpu.1.halt_successful_poll.sum",
        "vcpu.2.halt_poll_success_ns.sum", /* vCPU 2 lacks the fail counter: unknown */
        "vcpu.9.halt_poll_success_ns.sum", /* beyond max: ignored */
        "vcpu.9.halt_poll_fail_ns.sum",
        "vcpu.1.halt_poll_fail_ns.cur", /* not a .sum */
        "vcpu.x.halt_poll_fail_ns.sum",
        NULL,
    };
    static const uint64_t values[] = {2, 1,  5000, 300, 1771470501, 200, 7, 0,
                                      3, 11, 1,    1,   99,         99,  99};
    _Static_assert(VN_ARRAY_SIZE(names) == VN_ARRAY_SIZE(values), "a value per name");
    uint64_t poll[4];
    unsigned found;

    found = virt_vcpu_poll_parse(names, values, VN_ARRAY_SIZE(names), poll, 4);
    CHECK(found == 2 && poll[0] == 500 && poll[1] == 7 && poll[2] == UINT64_MAX &&
              poll[3] == UINT64_MAX,
          "vCPU statistics: success + fail per vCPU, a vCPU with one counter unknown (found %u: "
          "%llu %llu %llu)",
          found, (unsigned long long)poll[0], (unsigned long long)poll[1],
          (unsigned long long)poll[2]);
    found = virt_vcpu_poll_parse(names, values, 3, poll, 4);
    CHECK(found == 0 && poll[0] == UINT64_MAX, "TCG (no KVM statistics): none found");
    {
        static const char *const big[] = {"vcpu.0.halt_poll_success_ns.sum",
                                          "vcpu.0.halt_poll_fail_ns.sum"};
        static const uint64_t huge[] = {UINT64_MAX - 1, 5};
        found = virt_vcpu_poll_parse(big, huge, 2, poll, 1);
        CHECK(found == 0 && poll[0] == UINT64_MAX,
              "counters whose sum overflows are unknown, not wrapped");
    }
}

static void test_mtree(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(mtree_cases); i++) {
        const mtree_case *c = &mtree_cases[i];
        _cleanup_free_ char *text = load(c->file);
        uint64_t gpa = 777, off = 777;
        int r;

        if (!CHECK(text, "%s: loaded", c->file))
            continue;
        r = hmp_parse_mtree_ram(text, c->id, &gpa, &off);
        if (c->rc < 0)
            CHECK(r == c->rc && gpa == 777 && off == 777, "%s '%s': %d (got %d)", c->file, c->id,
                  c->rc, r);
        else
            CHECK(r == 0 && gpa == c->gpa && off == c->offset,
                  "%s '%s': gpa 0x%" PRIx64 " offset 0x%" PRIx64 " (r=%d 0x%" PRIx64 " 0x%" PRIx64
                  ")",
                  c->file, c->id, c->gpa, c->offset, r, gpa, off);
    }
    {
        /* the same text without carriage returns parses the same */
        _cleanup_free_ char *text = load("mtree-two-cell.txt");
        uint64_t gpa = 0, off = 1;
        size_t k = 0;
        for (size_t j = 0; text && text[j]; j++)
            if (text[j] != '\r')
                text[k++] = text[j];
        if (text)
            text[k] = '\0';
        CHECK(text && hmp_parse_mtree_ram(text, "ram-node1", &gpa, &off) == 0 && gpa == 0x4000000 &&
                  off == 0,
              "mtree: LF-only line ends");
    }
    CHECK(hmp_parse_mtree_ram(NULL, "ram-node0", NULL, NULL) == -EINVAL, "mtree: NULL text");
    CHECK(hmp_parse_mtree_ram("", "ram-node0", NULL, NULL) == -EINVAL, "mtree: empty text");
    CHECK(hmp_parse_mtree_ram("FlatView #0\n", "", NULL, NULL) == -EINVAL, "mtree: empty id");
}

/* ---- gpa2hva ---- */

typedef struct gpa2hva_case {
    const char *file;
    int rc;
    uint64_t hva;
} gpa2hva_case;

static const gpa2hva_case gpa2hva_cases[] = {
    {"gpa2hva-two-cell-node1.txt", 0, 0x7fe0a3c00000},
    {"kvm-gpa2hva-two-cell-node1.txt", 0, 0x7fa873c00000}, /* QEMU 7.2, KVM */
    {"gpa2hva-two-cell-node0.txt", 0, 0x7fe0a7e00000},
    {"gpa2hva-4g-split-node1.txt", 0, 0x7fa133c00000},
    {"gpa2hva-4g-split-node0-high.txt", 0, 0x7fa213e00000},
    {"gpa2hva-unmapped.txt", -ENOENT, 0},
    {"gpa2hva-usage.txt", -EINVAL, 0},
    {"bad/gpa2hva-empty.txt", -EINVAL, 0},
    {"bad/gpa2hva-lowercase.txt", -EINVAL, 0},
    {"bad/gpa2hva-no-hva.txt", -EINVAL, 0},
    {"bad/gpa2hva-no-parens.txt", -EINVAL, 0},
    {"bad/gpa2hva-overflow.txt", -EINVAL, 0},
    {"bad/gpa2hva-trailing.txt", -EINVAL, 0},
    {"mtree-two-cell.txt", -EINVAL, 0},
};

static void test_gpa2hva(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(gpa2hva_cases); i++) {
        const gpa2hva_case *c = &gpa2hva_cases[i];
        _cleanup_free_ char *text = load(c->file);
        uint64_t hva = 777;
        int r;

        if (!CHECK(text, "%s: loaded", c->file))
            continue;
        r = hmp_parse_gpa2hva(text, &hva);
        if (c->rc < 0)
            CHECK(r == c->rc && hva == 777, "%s: %d (got %d)", c->file, c->rc, r);
        else
            CHECK(r == 0 && hva == c->hva, "%s: 0x%" PRIx64 " (r=%d 0x%" PRIx64 ")", c->file,
                  c->hva, r, hva);
    }
    CHECK(hmp_parse_gpa2hva(NULL, NULL) == -EINVAL, "gpa2hva: NULL");
    {
        uint64_t hva = 0;
        /* a region name with parentheses in it */
        CHECK(hmp_parse_gpa2hva("Host virtual address for 0x0 (a (b)) is 0x1000\n", &hva) == 0 &&
                  hva == 0x1000,
              "gpa2hva: name with parentheses");
    }
}

/* query-memory-devices of QEMU 7.2 (a pc-dimm in cell 1, a virtio-mem device in cell 0), and
 * what must be refused or left out. */
static void test_memory_devices(void)
{
    _cleanup_free_ char *real = load("memory-devices-dimm-virtio-mem.json");
    _cleanup_free_ qmp_memdevice *v = NULL;
    unsigned n = 0;
    char err[256];
    int r;

    r = qmp_parse_memory_devices(real, &v, &n, err, sizeof(err));
    CHECK(r == 0 && n == 2 && !strcmp(v[0].memdev, "memdimm0") && v[0].gpa == 4294967296ULL &&
              v[0].node == 1 && !v[0].virtio_mem && !strcmp(v[1].memdev, "memvmem0") &&
              v[1].gpa == 4429185024ULL && v[1].node == 0 && v[1].virtio_mem,
          "QEMU 7.2: a pc-dimm of backend memdimm0 at 4 GiB in cell 1, a virtio-mem device of "
          "memvmem0 in cell 0 (r=%d %s)",
          r, r ? err : "");
    free(v);
    v = NULL;
    r = qmp_parse_memory_devices("{\"return\": [{\"type\": \"nvdimm\", \"data\": {\"memdev\": "
                                 "\"/objects/nv0\", \"addr\": 1, \"node\": 0}}, {\"type\": "
                                 "\"virtio-pmem\", \"data\": {}}]}",
                                 &v, &n, err, sizeof(err));
    CHECK(r == 0 && n == 0 && !v, "NVDIMM and virtio-pmem are left out (not a cell's RAM)");
    static const struct {
        const char *json, *want;
    } bad[] = {
        {"{\"return\": [{\"type\": \"dimm\"}]}", "is not an object with"},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"node\": 0, \"memdev\": \"m\"}}]}",
         "has no address"},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": 0, \"memdev\": \"m\"}}]}",
         "has no \"node\""},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": 0, \"node\": 64, "
         "\"memdev\": \"m\"}}]}",
         "\"node\" out of range"},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": -1, \"node\": 0, "
         "\"memdev\": \"m\"}}]}",
         "\"addr\" out of range"},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": 0, \"node\": 0}}]}",
         "has no string \"memdev\""},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": 0, \"node\": 0, "
         "\"memdev\": \"/objects/a/b\"}}]}",
         "has a bad \"memdev\""},
        {"{\"return\": [{\"type\": \"dimm\", \"data\": {\"addr\": 0, \"node\": 0, "
         "\"memdev\": \"/objects/\"}}]}",
         "has a bad \"memdev\""},
        {"{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"x\"}}", "x"},
    };
    for (size_t i = 0; i < VN_ARRAY_SIZE(bad); i++) {
        v = NULL;
        err[0] = '\0';
        r = qmp_parse_memory_devices(bad[i].json, &v, &n, err, sizeof(err));
        CHECK(r == -EINVAL && strstr(err, bad[i].want) && !v,
              "bad memory device %zu refused: %s (want ...%s...)", i, err, bad[i].want);
        free(v);
    }
}

int main(void)
{
    test_memory_devices();
    test_cpus_fast();
    test_memdev();
    test_vcpu_poll();
    test_mtree();
    test_gpa2hva();
    return tap_done();
}
