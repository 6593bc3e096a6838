/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the fake host's files (fakehost.h): fakehost.c (the host, the clock, the domains and
 * what the test does to them) and fakehost_virt.c (the fake libvirt vnumad calls).
 */
#pragma once

#include <pthread.h>
#include <stdint.h>

#include "fakehost.h"
#include "numa_ops.h"
#include "topology.h"

#define FAKE_HANG_JUMP_S (24 * 3600.0) /* past any timeout vnumad has */
#define FAKE_NODES       2u
#define FAKE_PAGE        4096ULL
#define FAKE_NODE_BYTES  (8ULL << 30) /* each node's MemTotal */
#define FAKE_NODE_FREE   (6ULL << 30) /* ... and its MemFree before any guest memory */
#define FAKE_EVENTS_MAX  64

struct fake_dom {
    bool used;
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    int id;
    bool running;
    bool job;         /* libvirt runs a job on it */
    char *balancer;   /* the operator's <balancer>, NULL: none */
    char *state;      /* vnumad's <state>, NULL: none */
    char *numatune;   /* the live XML's <numatune>, NULL: none */
    char *meta_extra; /* other blocks in <metadata> (a fleet manager's), NULL: none */
    bool channel;     /* the live XML has the agent's channel, the guest's port closed */
    unsigned nr_vcpus;
    double busy;
    uint64_t cpu_ns[FAKE_MAX_VCPUS];
    bool kvm;    /* libvirt's vCPU statistics give halt-polling time */
    double poll; /* of busy, the part that is halt polling */
    uint64_t poll_ns[FAKE_MAX_VCPUS];
    vn_cpuset pin[FAKE_MAX_VCPUS];     /* live */
    vn_cpuset defined[FAKE_MAX_VCPUS]; /* the definition's (all CPUs: none) */
    vn_cpuset emulator;
    vn_cpuset emulator_defined; /* the definition's (all CPUs: none) */
    int fail[FAKE_CALL_MAX];
    bool hang[FAKE_CALL_MAX];
    unsigned hanging;
    unsigned calls[FAKE_CALL_MAX];
    fake_hook hook[FAKE_CALL_MAX];
    void *hook_arg[FAKE_CALL_MAX];
    /* the fake QEMU's guest memory (fakehost_qemu.c), NULL page_node: none, no monitor */
    unsigned nr_cells; /* guest NUMA cells; 0: none (one "pc.ram") */
    uint64_t cell_bytes;
    uint8_t *page_node; /* the host node of each page, the cells' in order */
    uint64_t nr_pages;
    uint64_t rss_extra_kib; /* QEMU's VmRSS beyond the guest's pages (fake_dom_touch) */
    bool hugetlbfs;         /* its RAM is hugetlbfs files named after the backends */
    bool moved_any;         /* a page of it moved to another node (fake_dom_first_moved) */
    uint64_t first_moved;   /* ... the first one's guest-physical address */
    /* a hostile QEMU (fake_dom_report_tid): the thread id query-cpus-fast gives for each vCPU
     * (0: its own); a forged status file (fake_dom_forge_status): the domain it names */
    pid_t reported_tid[FAKE_MAX_VCPUS];
    const struct fake_dom *status_of;
    /* its QEMU runs in a PID namespace of its own (fake_dom_pidns): there its pid is pidns_base
     * and vCPU v's thread pidns_base + 1 + v, the ids its monitor reports; 0: the host's */
    pid_t pidns_base;
};

/* a handle vnumad holds (virt_dom *): its domain and the connection it was made on */
typedef struct fake_handle {
    fake_dom *fd;
    unsigned conn_gen;
} fake_handle;

typedef enum fake_event_kind { FE_LIFECYCLE, FE_METADATA, FE_CLOSED } fake_event_kind;

typedef struct fake_event {
    fake_event_kind kind;
    char uuid[SNAP_UUID_MAX], name[SNAP_NAME_MAX];
    virt_lifecycle ev;
    bool migrated;
} fake_event;

typedef struct fake_host_state {
    pthread_mutex_t lock;
    pthread_cond_t released;
    char root[64];
    topology topo;
    vn_cpuset all;
    fake_dom doms[FAKE_MAX_DOMS];
    unsigned next_id;
    uint64_t mono_ns;
    bool down;         /* libvirtd stopped */
    unsigned conn_gen; /* the open connection's generation; 0: none open */
    unsigned opened;   /* connections opened */
    virt_callbacks cb; /* the open connection's */
    int pipe[2];       /* events for the loop */
    int watch;
    fake_event events[FAKE_EVENTS_MAX];
    unsigned nr_events;
    uint64_t node_free[FAKE_NODES]; /* bytes (node_free, meminfo) */
    uint64_t min_free[FAKE_NODES];  /* the lowest node_free[] a page move left */
    unsigned move_calls;            /* move_pages(2) moves made */
    unsigned query_calls;           /* move_pages(2) queries (no nodes) made */
    unsigned query_calls_at_wait;   /* ... when vnumad last waited on the clock */
} fake_host_state;

/* The fake host's state: one per process, under fh.lock (fakehost.c owns it). */
extern fake_host_state fh;

/* Moves the fake clock; each running vCPU's CPU time grows with it. Called with fh.lock. */
void fake_clock_move(uint64_t ns);
/* An event for vnumad's loop (delivered by the fake libvirt's watch on fh.pipe). */
void fake_queue_event(const fake_event *e);
/* The fake libvirt (fakehost_virt.c). */
extern const virt_ops fake_virt;

/* The fake QEMU (fakehost_qemu.c), all called with fh.lock. Its pid; its files in the tree
 * written again (after its vCPUs' CPU time, pins or running changed); node n's meminfo
 * written again; the monitor's reply to cmd (-EPERM: the domain has no fake memory). */
pid_t fake_qemu_pid(const fake_dom *fd);
/* The PID namespace the fake host's processes are in, as /proc/PID/ns/pid names it. */
#define FAKE_HOST_PIDNS "pid:[4026531836]"
void fake_qemu_sync(fake_dom *fd);
/* The guest's <memory> and <cpu><numa> cells for its live XML, into buf. */
void fake_qemu_xml(const fake_dom *fd, char *buf, size_t len);
void fake_node_sync(unsigned n);
int fake_qemu_qmp(fake_dom *fd, const char *cmd, char **ret_reply);
int fake_qemu_hmp(fake_dom *fd, const char *cmd, char **ret_reply);
/* The kernel's page moves and free memory (fakehost_qemu.c). */
extern const numa_ops fake_numa;
