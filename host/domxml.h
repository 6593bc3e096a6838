/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the sample stage reads from a domain's live XML (libvirt's virDomainGetXMLDesc): the
 * CPUs its vCPUs may use, each cell's <memnode> binding, and whether its memory is pinned
 * (VFIO passthrough, locked, launch security). Untrusted text, parsed with libxml2 with no
 * network and no entity substitution.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "model.h"
#include "topology.h"

#define DOMXML_MAX_IOTHREAD_PINS 64
/* vCPU numbers below this are mapped to their cell (state.h's STATE_MAX_VCPUS) */
#define DOMXML_MAX_VCPUS 1024
/* vcpu_cell[] of a vCPU no <cell cpus> names */
#define DOMXML_NO_CELL 0xff

/* <cpu><numa><cell id memory unit>: a guest NUMA cell and its boot RAM */
typedef struct domxml_cell {
    unsigned id;
    uint64_t bytes;
    bool has_vcpus;
} domxml_cell;

typedef struct domxml_memnode {
    unsigned cellid;
    vn_mem_binding binding;
} domxml_memnode;

typedef struct domxml_info {
    vn_mem_pin mem_pin; /* why the guest memory cannot move (VFIO, locked, SEV/TDX) */
    bool has_cpuset;
    vn_cpuset cpuset; /* <vcpu cpuset=...>: host CPUs the domain's vCPUs may use */
    /* <numatune><memory>: the whole guest's binding (mode none without a nodeset); with
     * placement='auto' the nodeset is numad's, not in the XML (memory_auto) */
    vn_mem_binding memory;
    bool memory_auto;
    unsigned nr_memnodes;
    domxml_memnode memnodes[SNAP_MAX_CELLS_PER_DOMAIN];
    /* <cputune>: the emulator and IOThread pins the XML sets (the ids of the IOThreads) */
    bool emulator_pinned;
    vn_cpuset rt_vcpus; /* <vcpusched scheduler='fifo'|'rr'>: the realtime vCPUs' ids */
    unsigned nr_iothread_pins;
    unsigned iothread_pins[DOMXML_MAX_IOTHREAD_PINS];
    /* the guest's cells (none without guest NUMA), each vCPU's cell id (DOMXML_NO_CELL: none),
     * <memory> (boot RAM and memory devices) and the memory devices' part of it */
    unsigned nr_cells;
    domxml_cell cells[SNAP_MAX_CELLS_PER_DOMAIN];
    uint8_t vcpu_cell[DOMXML_MAX_VCPUS];
    uint64_t memory_bytes;
    uint64_t device_bytes;
    unsigned nr_vcpus; /* <vcpu>N</vcpu>: the most vCPUs (0: absent) */
    /* <memoryBacking><hugepages>: the guest RAM is hugetlbfs; its first <page size> (0: the
     * host's default size) */
    bool hugepages;
    uint64_t huge_page_bytes;
} domxml_info;

/* <vcpu cpuset>, <numatune><memory> and <memnode>, pinned memory, the <cputune> emulator and
 * IOThread pins, realtime vCPUs, the guest's cells and RAM sizes of a domain XML (at most 16 MiB).
 * Returns 0, or -errno with the reason in err. */
int domxml_parse(const char *xml, const topology *t, domxml_info *ret, char *err, size_t errlen);
