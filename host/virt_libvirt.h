/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's implementation of virt.h (virt_libvirt.c): the table, the calls it made by kind,
 * and the parsing of libvirt's vCPU statistics.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "virt.h"

extern const virt_ops virt_libvirt_ops;

/* ---- call counters ---- */

/* Every libvirt call vnumad makes, counted by kind (vnuma_libvirt_calls_total{call}): the
 * cost of a pass in libvirtd and the QEMU monitors, which a test keeps at its minimum. */
typedef enum virt_call {
    VIRT_CALL_LIST,          /* virConnectListAllDomains */
    VIRT_CALL_LOOKUP,        /* virDomainLookupByUUIDString */
    VIRT_CALL_IS_ACTIVE,     /* virDomainIsActive */
    VIRT_CALL_IS_PERSISTENT, /* virDomainIsPersistent */
    VIRT_CALL_XML,           /* virDomainGetXMLDesc, live */
    VIRT_CALL_XML_INACTIVE,  /* virDomainGetXMLDesc, persistent */
    VIRT_CALL_METADATA_GET,  /* virDomainGetMetadata, the operator's <balancer> */
    VIRT_CALL_STATE_GET,     /* virDomainGetMetadata, vnumad's <state> */
    VIRT_CALL_STATE_SET,     /* virDomainSetMetadata, vnumad's <state> */
    VIRT_CALL_QMP,           /* virDomainQemuMonitorCommand, QMP */
    VIRT_CALL_HMP,           /* virDomainQemuMonitorCommand, HMP */
    VIRT_CALL_INFO,          /* virDomainGetInfo */
    VIRT_CALL_VCPUS,         /* virDomainGetVcpus */
    VIRT_CALL_PIN_VCPU,      /* virDomainPinVcpuFlags */
    VIRT_CALL_EMULATOR_GET,  /* virDomainGetEmulatorPinInfo */
    VIRT_CALL_PIN_EMULATOR,  /* virDomainPinEmulator */
    VIRT_CALL_IOTHREADS,     /* virDomainGetIOThreadInfo */
    VIRT_CALL_PIN_IOTHREAD,  /* virDomainPinIOThread */
    VIRT_CALL_NUMA_GET,      /* virDomainGetNumaParameters (two calls each time) */
    VIRT_CALL_NUMA_SET,      /* virDomainSetNumaParameters */
    VIRT_CALL_JOB,           /* virDomainGetJobInfo */
    VIRT_CALL_STATS,         /* virDomainListGetStats, the vCPU group (KVM's halt polling) */
    VIRT_CALL_MAX,
} virt_call;

/* The call's name in the metrics ("qmp", "xml", ...). */
const char *virt_call_name(virt_call c);
/* Calls made so far, by kind (all threads). */
void virt_call_counts(uint64_t out[VIRT_CALL_MAX]);

/* The parsing of virt_dom_vcpu_poll: "vcpu.N.halt_poll_success_ns.sum" plus
 * "vcpu.N.halt_poll_fail_ns.sum" of n names and values into poll_ns; returns *found. */
unsigned virt_vcpu_poll_parse(const char *const *names, const uint64_t *values, size_t n,
                              uint64_t *poll_ns, unsigned max);
