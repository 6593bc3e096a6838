/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU's replies, as libvirt passes them through unchanged: QMP query-cpus-fast and
 * query-memdev, HMP "info mtree -f" and "gpa2hva". Pure parsers: no I/O, no logging.
 *
 * They are strict: anything not in the shape documented here is refused with a reason
 * rather than guessed at. The unit tests feed them replies recorded from QEMU
 * (tests/data/qmp/).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;

/* ---- QMP ---- */

/* Longest QOM path of a vCPU accepted ("/machine/unattached/device[12]",
 * "/machine/peripheral/cpu7"). */
#define QMP_QOM_PATH_MAX 128

typedef struct qmp_vcpu {
    unsigned cpu_index; /* == libvirt vCPU number */
    int node_id;        /* guest cell, -1 when the guest has no NUMA */
    pid_t thread_id;
    char qom_path[QMP_QOM_PATH_MAX]; /* "" when the reply has none */
} qmp_vcpu;

/* query-cpus-fast reply -> *ret (malloc'd, *ret_n entries). 0 or -EINVAL/-ENOMEM; err
 * says what was wrong. */
int qmp_parse_cpus_fast(const char *reply, qmp_vcpu **ret, unsigned *ret_n, char *err,
                        size_t errlen);

/* One memory backend of a query-memdev reply. */
typedef struct qmp_memdev {
    const char *id; /* borrowed from qmp_memdevs.root */
    uint64_t size;
    bool shared;
} qmp_memdev;

/* Every backend of a query-memdev reply; release with qmp_memdevs_clear(). */
typedef struct qmp_memdevs {
    struct json_object *root; /* the parsed reply, which owns the ids */
    qmp_memdev *v;
    size_t n;
} qmp_memdevs;

/* query-memdev reply -> *ret, every backend checked (a string id, listed once; a size; a
 * share flag). 0 or -EINVAL/-ENOMEM with a reason in err; *ret is written only on success. */
int qmp_parse_memdevs(const char *reply, qmp_memdevs *ret, char *err, size_t errlen);

/* Free what qmp_parse_memdevs() allocated; accepts a zeroed qmp_memdevs. */
void qmp_memdevs_clear(qmp_memdevs *m);

/* The backend called `id`, or NULL. */
const qmp_memdev *qmp_memdev_find(const qmp_memdevs *m, const char *id);

/* query-memdev reply: the size and share flag of backend `id` ("ram-node1"). */
int qmp_parse_memdev(const char *reply, const char *id, uint64_t *ret_size, bool *ret_shared,
                     char *err, size_t errlen);

/* One hotplugged (or cold-plugged) memory device of a query-memory-devices reply whose memory
 * is guest RAM: a pc-dimm ("dimm") or a virtio-mem device. NVDIMMs, virtio-pmem and SGX EPC
 * are left out (persistent or special memory, not a cell's RAM to move). */
typedef struct qmp_memdevice {
    char memdev[64]; /* its backend's id ("memdimm0", from "/objects/memdimm0") */
    uint64_t gpa;    /* guest-physical start of the device's memory ("addr", "memaddr") */
    int node;        /* the guest cell it belongs to */
    bool virtio_mem; /* only plugged blocks are resident: the rest reads as not present */
} qmp_memdevice;

/* query-memory-devices reply -> *ret (malloc'd, *ret_n entries; NULL and 0 for none), every
 * entry checked. 0 or -EINVAL/-ENOMEM with a reason in err. */
int qmp_parse_memory_devices(const char *reply, qmp_memdevice **ret, unsigned *ret_n, char *err,
                             size_t errlen);

/* ---- HMP ---- */

/* HMP "info mtree -f": guest-physical start of the first RAM range of backend `id` in
 * the "system" address space, and that range's offset inside the backend. -ENOENT if
 * the backend has no RAM range. Read as QEMU 2.x to 9.x print it: the accelerator name
 * after a range ("KVM") and other trailing tokens are ignored, "nv-ram" is not RAM, and a
 * region named "/objects/ID" (machine types up to 4.0) is backend ID's. */
int hmp_parse_mtree_ram(const char *text, const char *id, uint64_t *ret_gpa, uint64_t *ret_offset);

/* HMP "gpa2hva ADDR" reply -> host virtual address. */
int hmp_parse_gpa2hva(const char *text, uint64_t *ret_hva);
