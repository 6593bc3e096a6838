/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Between the fake host's files (fakehost.h): fakehost.c (the host, the clock, the domains and
 * what the test does to them), fakehost_daemons.c (the libvirt daemons, their connections and
 * events) and fakehost_virt.c (the fake libvirt's calls on domains vnumad makes).
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
#define FAKE_MAX_CONNS   16 /* connections open at once, to all the daemons */
#define FAKE_URI_MAX     256
#define FAKE_DEFAULT_URI "qemu:///system" /* the default daemon's (vnumad's default uri) */

typedef enum fake_event_kind { FE_LIFECYCLE, FE_METADATA, FE_CLOSED } fake_event_kind;

typedef struct fake_event {
    fake_event_kind kind;
    char uuid[SNAP_UUID_MAX], name[SNAP_NAME_MAX];
    virt_lifecycle ev;
    bool migrated;
    /* the connection it is for (fake_conn index and generation): queued once per connection
     * open to the daemon, delivered only while that connection is open */
    unsigned conn, gen;
} fake_event;

/* A libvirt daemon (fakehost_daemons.c): the system libvirtd, or a pod's virtqemud. */
struct fake_daemon {
    bool used;
    char uri[FAKE_URI_MAX];             /* what vnumad opens it by */
    bool down;                          /* stopped: opens fail, its connections are dead */
    unsigned run;                       /* its starts: a connection of an earlier run is dead */
    bool hung;                          /* stopped by SIGSTOP: every call on it blocks */
    unsigned hanging;                   /* calls blocked on it now */
    unsigned opened;                    /* connections opened to it */
    fake_event events[FAKE_EVENTS_MAX]; /* for vnumad's loop, held while it is hung */
    unsigned nr_events;
};

/* A connection vnumad opened (virt_conn *) */
typedef struct fake_conn {
    bool open; /* until vnumad closes it */
    fake_daemon *daemon;
    unsigned run; /* the daemon's run it was opened in */
    unsigned gen; /* fh.opened when it was opened: handles and events name it by this */
    virt_callbacks cb;
} fake_conn;

struct fake_dom {
    bool used;
    fake_daemon *daemon; /* the libvirt daemon that runs it */
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
    fake_conn *conn;
    unsigned gen; /* conn's generation then */
} fake_handle;

typedef struct fake_host_state {
    pthread_mutex_t lock;
    pthread_cond_t released;
    char root[64];
    topology topo;
    vn_cpuset all;
    fake_dom doms[FAKE_MAX_DOMS];
    unsigned next_id;
    uint64_t mono_ns;
    fake_daemon daemons[FAKE_MAX_DAEMONS]; /* [0]: the default one, at FAKE_DEFAULT_URI */
    fake_conn conns[FAKE_MAX_CONNS];
    unsigned opened; /* connections opened, to all the daemons */
    int pipe[2];     /* events for the loop */
    int watch;
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

/* The daemons and their connections (fakehost_daemons.c). */
/* The default daemon up with no domain, every other one gone, no connection (fakehost.c's
 * reset and init). Called with fh.lock. */
void fake_daemons_reset(void);
/* An event from daemon d for vnumad's loop, to each connection open to it (delivered by the
 * watch on fh.pipe on the loop's next iteration, once d is not hung). */
void fake_queue_event(fake_daemon *d, const fake_event *e);
/* While d is hung (SIGSTOP), the calling thread blocks; the fake clock jumps past any timeout
 * of vnumad's when it starts to. Called with fh.lock (released while it waits). */
void fake_daemon_wait(fake_daemon *d);
/* Whether handle h's connection is alive: open, and its daemon up in the run it was opened in.
 * Called with fh.lock. */
bool fake_handle_alive(const fake_handle *h);
/* vnumad's connections (virt_ops open, close, list_running and dom_open). */
int fake_conn_open(const char *uri, const virt_callbacks *cb, virt_conn **ret);
void fake_conn_close(virt_conn *c);
int fake_conn_list_running(virt_conn *c, virt_dom_id **ret, size_t *ret_n);
int fake_conn_dom_open(virt_conn *c, const char *uuid, virt_dom **ret);
/* What the last failed call of this thread said (virt_ops last_error). */
const char *fake_last_error(void);
/* Sets it (printf-like). */
void fake_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
