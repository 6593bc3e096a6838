/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Everything vnumad asks of the virtualization host, behind one small interface: the
 * connection and its events, and the domain calls the sample, act and record stages need.
 * virt.c sends each call to the implementation in use (virt_ops below): libvirt's
 * (virt_libvirt.c, the only file that includes <libvirt/libvirt.h> but the event loop's) or a
 * test's fake host. Every call returns 0 or -errno:
 *   -ESRCH    the domain is gone or not running
 *   -ENOENT   no such metadata / object
 *   -ENOTCONN the connection to libvirtd is lost (reconnect)
 *   -EPERM    libvirt refused (permission, unsupported on this domain)
 *   -EINVAL   libvirt rejected the arguments
 *   -EIO      anything else; virt_last_error() has libvirt's message
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpuset.h"
#include "model.h"

/* ---- connection ---- */

typedef enum virt_lifecycle {
    VIRT_EVENT_STARTED, /* booted, restored, or arrived by live migration (detail says) */
    VIRT_EVENT_STOPPED, /* shut off, destroyed, crashed, saved, migrated away */
    VIRT_EVENT_RESUMED, /* resumed (after an incoming migration: detail says) */
    VIRT_EVENT_OTHER,   /* suspended, defined, ... */
    VIRT_EVENT_MAX,
} virt_lifecycle;

typedef struct virt_callbacks {
    void (*lifecycle)(void *opaque, const char *uuid, const char *name, virt_lifecycle ev,
                      bool migrated);
    void (*metadata)(void *opaque, const char *uuid, const char *name);
    /* a live tunable changed (libvirt TUNABLE: pins, numatune, ...), by anyone */
    void (*tunable)(void *opaque, const char *uuid, const char *name);
    /* QMP VSERPORT_CHANGE: a guest opened or closed a virtio-serial port */
    void (*vserport)(void *opaque, const char *uuid, const char *name, const char *port_id,
                     bool open);
    /* a device was hot(un)plugged (libvirt DEVICE_ADDED / DEVICE_REMOVED), by its alias */
    void (*device)(void *opaque, const char *uuid, const char *name, const char *alias, bool added);
    /* the connection to libvirtd is gone: call virt_close() and reconnect */
    void (*closed)(void *opaque);
    void *opaque;
} virt_callbacks;

typedef struct virt_conn virt_conn;

/* Open uri (NULL: qemu:///system), set keepalive, register every event above. */
int virt_open(const char *uri, const virt_callbacks *cb, virt_conn **ret);
/* Deregister and close. NULL-safe. */
void virt_close(virt_conn *c);
/* libvirt's message for the last failed call of this thread ("" if none). */
const char *virt_last_error(void);

/* ---- domains ---- */

typedef struct virt_dom virt_dom;

typedef struct virt_dom_id {
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    int id; /* libvirt's id of the running domain (changes on every start) */
    /* the libvirt daemon behind the connection, when it was reached through a socket= path
     * (its status files are read in its own root, its pids mapped from its PID namespace:
     * domstatus.h); 0: the host's own libvirt */
    pid_t daemon_pid;
    /* its user (SO_PEERCRED, as daemon_pid): root's daemon keeps libvirt's system layout, any
     * other a session daemon's, and only this user may have written its files */
    uid_t daemon_uid;
} virt_dom_id;

/* Running domains. *ret is malloc'd; free() it. */
int virt_list_running(virt_conn *c, virt_dom_id **ret, size_t *ret_n);
int virt_dom_open(virt_conn *c, const char *uuid, virt_dom **ret);
void virt_dom_free(virt_dom *d);
/* Another reference to the same domain handle (no libvirt call); free it with virt_dom_free. */
int virt_dom_ref(virt_dom *d, virt_dom **ret);
int virt_dom_ident(virt_dom *d, virt_dom_id *ret);
/* Is the domain still running? (false also when libvirt cannot tell) */
bool virt_dom_active(virt_dom *d);

/* Whether libvirt runs a job on the domain now (migration, save, dump, snapshot:
 * virDomainGetJobInfo; libvirt 9.0's virDomainGetControlInfo says "ok" during such jobs).
 * While one runs, every call that changes the domain waits for it (libvirt's job lock). */
int virt_dom_job(virt_dom *d, bool *ret_running);

/*
 * Each vCPU's halt-polling time under KVM (poll_ns[N] for vCPU number N < max, ns,
 * cumulative; UINT64_MAX unknown) from libvirt's vCPU statistics (virDomainListGetStats,
 * VIR_DOMAIN_STATS_VCPU: libvirt reads KVM's through QEMU's query-stats under a query job,
 * which a migration allows, and NOWAIT: never waits for another job). *found: the vCPUs that
 * had both counters (0: TCG, a QEMU without query-stats, or a job that kept them out).
 */
int virt_dom_vcpu_poll(virt_dom *d, uint64_t *poll_ns, unsigned max, unsigned *found);

/* Live XML of the domain (malloc'd). */
int virt_dom_xml(virt_dom *d, char **ret);
/* Has the domain a persistent configuration (defined, not only created)? */
bool virt_dom_persistent(virt_dom *d);
/* The persistent configuration's XML (malloc'd): what the operator defined, without the
 * live changes (vnumad's pins are live only). */
int virt_dom_xml_inactive(virt_dom *d, char **ret);
/* Live <balancer> element of urn:vnuma:balancer:1 (malloc'd), -ENOENT when absent. vnumad
 * never writes it: it is the operator's. */
int virt_metadata_get(virt_dom *d, char **ret);
/* vnumad's own live <state> element of urn:vnuma:state:1 (host/metadata.h): read
 * (malloc'd, -ENOENT when absent) and replaced whole. Writing it raises no METADATA_CHANGE
 * callback: only the operator's element's changes reach virt_callbacks.metadata. */
int virt_state_get(virt_dom *d, char **ret);
int virt_state_set(virt_dom *d, const char *xml);

/* QMP command (JSON) or HMP command line through libvirt; reply malloc'd. Marks the
 * domain tainted (custom-monitor) the first time. */
int virt_qmp(virt_dom *d, const char *cmd, char **ret_reply);
int virt_hmp(virt_dom *d, const char *cmd, char **ret_reply);

typedef struct virt_vcpu {
    unsigned number;
    uint64_t cpu_time_ns;
    int cpu;            /* current host CPU */
    vn_cpuset affinity; /* current pinning */
} virt_vcpu;

/* Live vCPU information; *ret is malloc'd with *ret_n entries. */
int virt_vcpus(virt_dom *d, virt_vcpu **ret, unsigned *ret_n);
int virt_pin_vcpu(virt_dom *d, unsigned vcpu, const vn_cpuset *cpus);
int virt_emulator_pin(virt_dom *d, vn_cpuset *ret);
int virt_pin_emulator(virt_dom *d, const vn_cpuset *cpus);

/* IOThreads of the domain: ids and current pins; arrays malloc'd with *ret_n entries. */
int virt_iothreads(virt_dom *d, unsigned **ret_ids, vn_cpuset **ret_pins, unsigned *ret_n);
int virt_pin_iothread(virt_dom *d, unsigned id, const vn_cpuset *cpus);

/* Live numatune of the domain: mode and nodeset (Linux list of kernel node numbers). */
int virt_numa_get(virt_dom *d, vn_mem_mode *ret_mode, char *nodeset, size_t len);
/* Change the live nodeset (works for mode restrictive only, libvirt refuses otherwise). */
int virt_numa_set_nodeset(virt_dom *d, const char *nodeset);

/* ---- the implementation ---- */

/*
 * What vnumad asks of the virtualization host, as a table (as numa_ops is for the kernel):
 * libvirt's (virt_libvirt_ops, virt.c: the default) or a test's fake host. Each member does what
 * the virt_* function of the same name says above; the virt_* functions call the table in use
 * (virt_ops.c).
 */
typedef struct virt_ops {
    const char *(*last_error)(void);
    int (*open)(const char *uri, const virt_callbacks *cb, virt_conn **ret);
    void (*close)(virt_conn *c);
    int (*list_running)(virt_conn *c, virt_dom_id **ret, size_t *ret_n);
    int (*dom_open)(virt_conn *c, const char *uuid, virt_dom **ret);
    int (*dom_ref)(virt_dom *d, virt_dom **ret);
    void (*dom_free)(virt_dom *d);
    int (*dom_ident)(virt_dom *d, virt_dom_id *ret);
    bool (*dom_active)(virt_dom *d);
    int (*dom_job)(virt_dom *d, bool *ret_running);
    int (*dom_vcpu_poll)(virt_dom *d, uint64_t *poll_ns, unsigned max, unsigned *found);
    int (*dom_xml)(virt_dom *d, char **ret);
    bool (*dom_persistent)(virt_dom *d);
    int (*dom_xml_inactive)(virt_dom *d, char **ret);
    int (*metadata_get)(virt_dom *d, char **ret);
    int (*state_get)(virt_dom *d, char **ret);
    int (*state_set)(virt_dom *d, const char *xml);
    int (*qmp)(virt_dom *d, const char *cmd, char **ret_reply);
    int (*hmp)(virt_dom *d, const char *cmd, char **ret_reply);
    int (*vcpus)(virt_dom *d, virt_vcpu **ret, unsigned *ret_n);
    int (*pin_vcpu)(virt_dom *d, unsigned vcpu, const vn_cpuset *cpus);
    int (*emulator_pin)(virt_dom *d, vn_cpuset *ret);
    int (*pin_emulator)(virt_dom *d, const vn_cpuset *cpus);
    int (*iothreads)(virt_dom *d, unsigned **ret_ids, vn_cpuset **ret_pins, unsigned *ret_n);
    int (*pin_iothread)(virt_dom *d, unsigned id, const vn_cpuset *cpus);
    int (*numa_get)(virt_dom *d, vn_mem_mode *ret_mode, char *nodeset, size_t len);
    int (*numa_set_nodeset)(virt_dom *d, const char *nodeset);
} virt_ops;

/* Every virt_* call goes to `ops` from now on (NULL: libvirt's again). Before any connection
 * is opened: a handle belongs to the implementation that made it. */
void virt_use(const virt_ops *ops);
