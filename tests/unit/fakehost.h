/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fake host of the unit tests: vnumad's whole daemon (host/daemon.h) runs on it in one
 * process, in milliseconds and deterministically, with no libvirtd, QEMU or second NUMA node.
 *
 *   libvirt    a virt_ops table (host/virt.h): domains with their XML, <balancer>, <state>
 *              and live <numatune> elements, the guest agent's channel (no agent on it: its
 *              port closed), vCPUs (CPU time, pins), emulator pins; lifecycle
 *              and metadata events delivered on vnumad's loop as libvirt's are; libvirtd stopped
 *              and started; any call failed with an errno, hung until released, or hooked
 *   daemons    several libvirt daemons (the system libvirtd, a KubeVirt pod's virtqemud), each
 *              opened by its URI, with its own domains, lookups, lists and events; one stopped
 *              and started, or hung as by SIGSTOP (every call on it blocks until released).
 *              Their QEMUs share the host tree, as the host's own libvirt's do (two domains of
 *              one name have one status file: with QMP off vnumad only looks there for a bound)
 *   the clock  a fake vn_clock_ops (lib/clock.h): it moves when the test moves it, and when
 *              vnumad waits out a CPU time window; each vCPU's CPU time grows with it at the
 *              busy fraction the test set, so the busy vnumad measures is exact
 *   the host   a synthetic two-node topology (node 0: CPUs 0-1, node 1: CPUs 2-3) and a host
 *              tree (/proc/stat with no other load, each node's meminfo, a machine id)
 *
 *   QEMU       each domain's process in the tree (pid file, status, maps, vCPU threads'
 *              schedstat, stat, status), and with fake_dom_memory() its guest cells and the
 *              host node of every page: the monitor answers query-cpus-fast, query-memdev,
 *              info mtree and gpa2hva, and a fake numa_ops moves pages and counts free memory
 *
 * fake_host_config() turns QMP off: a domain is then one cell whose vCPUs vnumad pins, as
 * libvirt alone shows it. A test that turns it on gives each domain memory. Everything here is
 * called from the test's thread, which runs vnumad's loop, except the fake libvirt calls (vnumad's
 * workers make them) and the hooks (on the thread of the call).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "cpuset.h"
#include "daemon.h"
#include "virt.h"

#define FAKE_MAX_DOMS    8
#define FAKE_MAX_VCPUS   8
#define FAKE_MAX_DAEMONS 8

/* The calls of the fake libvirt, for failures, hangs, hooks and counts. */
typedef enum fake_call {
    FAKE_OPEN,
    FAKE_LIST,
    FAKE_LOOKUP,
    FAKE_IDENT,
    FAKE_JOB,
    FAKE_XML,
    FAKE_XML_INACTIVE,
    FAKE_METADATA,
    FAKE_STATE_GET,
    FAKE_STATE_SET,
    FAKE_VCPUS,
    FAKE_PIN_VCPU,
    FAKE_EMULATOR_PIN,
    FAKE_PIN_EMULATOR,
    FAKE_NUMA_GET,
    FAKE_QMP,
    FAKE_HMP,
    FAKE_STATS, /* libvirt's vCPU statistics (KVM's halt polling) */
    FAKE_OTHER, /* IOThreads, nodeset: what these domains are never asked */
    FAKE_CALL_MAX,
} fake_call;

typedef struct fake_dom fake_dom;
typedef struct fake_daemon fake_daemon;
typedef void (*fake_hook)(fake_dom *fd, fake_call call, void *arg);

/* Install the fake libvirt and clock, write the host tree; *host is what daemon_start takes.
 * Once per process. */
void fake_host_init(daemon_host *host);
/* The fake host's tree (a directory under /tmp, removed at exit). */
const char *fake_host_root(void);
/* A daemon configuration for the fake host: QMP off, its socket, state and config file in
 * the tree, every pass run by the test (long interval, no event delay). */
void fake_host_config(daemon_config *cfg);
/* Forget every domain and every daemon but the default one, and undo every failure, hang and
 * hook (between tests). */
void fake_host_reset(void);

/* ---- domains ---- */

/* A running domain with nr_vcpus vCPUs pinned nowhere (all host CPUs), persistent, with this
 * <balancer> element (NULL: none) and no <state>, on the default daemon. No event is sent. */
fake_dom *fake_dom_add(const char *name, unsigned nr_vcpus, const char *balancer);
/* A domain as fake_dom_add() makes it, on daemon d. */
fake_dom *fake_dom_add_on(fake_daemon *d, const char *name, unsigned nr_vcpus,
                          const char *balancer);
/* The domain is d's from now on: d's lists show it, lookups on d's connections find it, its
 * events come from d. A handle made on another daemon's connection no longer reaches it. */
void fake_dom_set_daemon(fake_dom *fd, fake_daemon *d);
/* The domain's UUID is `as`'s from now on (a tenant chose its VM's UUID). */
void fake_dom_set_uuid(fake_dom *fd, const fake_dom *as);
/* The domain's uuid into buf (false: too small); its number of vCPUs. */
bool fake_dom_uuid(fake_dom *fd, char *buf, size_t len);
unsigned fake_dom_nr_vcpus(fake_dom *fd);
/* The operator's pin of vCPU v in the domain's definition (and live, as at its start). */
void fake_dom_define_pin(fake_dom *fd, unsigned v, const char *cpus);
/* The operator's emulator pin in the domain's definition (and live). */
void fake_dom_define_emulator(fake_dom *fd, const char *cpus);
/* The live emulator pin as a list, into buf. */
const char *fake_dom_emulator(fake_dom *fd, char *buf, size_t len);
/* The live pin of vCPU v now ("0-3"), as another host or the operator set it. */
void fake_dom_set_pin(fake_dom *fd, unsigned v, const char *cpus);
/* The live pin of vCPU v as a list ("0-1"), into buf. */
const char *fake_dom_pin(fake_dom *fd, unsigned v, char *buf, size_t len);
/* Each vCPU's busy fraction from now on (its CPU time grows by busy x the clock's moves). */
void fake_dom_set_busy(fake_dom *fd, double busy);
/* The domain runs under KVM: libvirt's vCPU statistics give each vCPU's halt-polling time,
 * which grows by poll x the clock's moves from now on, as part of its CPU time (poll <= the
 * busy fraction). Without it the statistics have none (TCG). */
void fake_dom_set_poll(fake_dom *fd, double poll);
/* The operator's <balancer> element replaced (NULL: removed). No event is sent. */
void fake_dom_set_balancer(fake_dom *fd, const char *xml);
/* vnumad's <state> element replaced (NULL: removed), as another host's vnumad left it. */
void fake_dom_set_state(fake_dom *fd, const char *xml);
/* The live XML's <numatune> element replaced (NULL: removed), as the operator or the qemu hook
 * wrote it into the XML the domain started from (the definition has none). No event is sent. */
void fake_dom_set_numatune(fake_dom *fd, const char *xml);
/* Other blocks in the domain's <metadata> (NULL: none), live and in its definition, as a fleet
 * manager writes them (Nova's <nova:instance>, KubeVirt's <kubevirt>). No event is sent. */
void fake_dom_set_metadata(fake_dom *fd, const char *xml);
/* The live XML has the guest agent's channel (a unix org.vnuma.agent.0) or no longer, its port
 * closed (state='disconnected'): vnumad knows the guest may send hints and opens nothing. No
 * agent talks on it (no event is sent). */
void fake_dom_set_agent_channel(fake_dom *fd, bool defined);
/* vnumad's <state> element as vnumad last wrote it (NULL: none); the caller frees it. */
char *fake_dom_state(fake_dom *fd);
/* libvirt runs a job on the domain (an incoming migration, a save) or no longer. */
void fake_dom_set_job(fake_dom *fd, bool running);
/* The domain stops (every call on it fails with -ESRCH) / starts again with a new id. */
void fake_dom_stop(fake_dom *fd);
void fake_dom_start(fake_dom *fd);
/* How many times vnumad made `call` on the domain. */
unsigned fake_dom_calls(fake_dom *fd, fake_call call);
/* `call` on the domain fails with r (-errno) from now on; 0: it works again. */
void fake_dom_fail(fake_dom *fd, fake_call call, int r);
/* `call` on the domain hangs (a QEMU or libvirtd that does not answer): it blocks until
 * fake_dom_release(), and the fake clock jumps an hour ahead when it starts (it has hung past
 * any timeout of vnumad's). fake_dom_hung() says whether a call is hanging now. */
void fake_dom_hang(fake_dom *fd, fake_call call);
bool fake_dom_hung(fake_dom *fd);
void fake_dom_release(fake_dom *fd);
/* fn(fd, call, arg) at each `call` on the domain, before it does anything (on the calling
 * thread; NULL: no hook). */
void fake_dom_hook(fake_dom *fd, fake_call call, fake_hook fn, void *arg);

/* ---- events, libvirtd, clock ---- */

/* An event, delivered to vnumad on its loop's next iteration (as libvirt's). */
void fake_event_lifecycle(fake_dom *fd, virt_lifecycle ev, bool migrated);
void fake_event_metadata(fake_dom *fd);
/* The default daemon stops (fake_daemon_stop) / starts again (fake_daemon_start). */
void fake_libvirtd_stop(void);
void fake_libvirtd_start(void);

/* ---- libvirt daemons (fakehost_daemons.c) ---- */

/* The daemon every domain is on unless the test says otherwise: the system libvirtd, opened by
 * vnumad's default uri (qemu:///system). */
fake_daemon *fake_daemon_default(void);
/* A daemon answering at uri: vnumad's open of exactly that URI reaches it (a glob's
 * connection: the concrete URI vnumad builds, ...?socket=/DIR/h1/sock); an open of a URI no
 * daemon has fails. Up, with no domain; until fake_host_reset(). */
fake_daemon *fake_daemon_add(const char *uri);
/* The daemon stops: each connection open to it gets its close callback and is dead (every
 * call through it fails with -ENOTCONN, also after the daemon is back); opens of its URI fail
 * until fake_daemon_start(). */
void fake_daemon_stop(fake_daemon *d);
void fake_daemon_start(fake_daemon *d);
/* The daemon hangs (SIGSTOP): an open of its URI, a list or lookup on its connections and every
 * call on its domains blocks until fake_daemon_release() (SIGCONT), and the fake clock jumps
 * past any timeout of vnumad's when a call starts to block; its events wait as well.
 * fake_daemon_hung() says whether a call is blocked on it now. */
void fake_daemon_hang(fake_daemon *d);
bool fake_daemon_hung(fake_daemon *d);
void fake_daemon_release(fake_daemon *d);
/* Events queued for vnumad's loop and not read yet (a hung daemon's, held, too). */
unsigned fake_events_queued(void);
/* Connections vnumad opened to the daemon so far; how many of them are open now (not closed by
 * vnumad, whether alive or dead). */
unsigned fake_daemon_connections(fake_daemon *d);
unsigned fake_daemon_open_now(fake_daemon *d);

/* ---- guest memory (with cfg.use_qmp) ---- */

/* The domain's guest gets nr_cells NUMA cells (0: no guest NUMA, one range) of mib MiB each,
 * its vCPUs split across them in order, every page on host node `node`. Once per domain. */
void fake_dom_memory(fake_dom *fd, unsigned nr_cells, unsigned mib, unsigned node);
/* Its RAM is hugetlbfs files QEMU names after each backend ("..._objects_ram-node1.Xa3b9Q"),
 * shared, in maps: a cell's RAM is then known without the monitor (else anonymous, every cell of
 * one size: which is which only the monitor says). */
void fake_dom_hugetlbfs(fake_dom *fd);
/* A hostile QEMU: its query-cpus-fast gives vCPU v the thread of vCPU ov of domain `other`. */
void fake_dom_report_tid(fake_dom *fd, unsigned v, const fake_dom *other, unsigned ov);
/* Its QEMU runs in a PID namespace of its own (a KubeVirt pod's): /proc shows its ns/pid and
 * NSpid lines with its ids there, inner_base for the process and inner_base + 1 + v for vCPU v's
 * thread, the ids its monitor reports; 0: the host's namespace again. */
void fake_dom_pidns(fake_dom *fd, pid_t inner_base);
/* libvirt's status file under fd's name names `other` (its uuid, run id and QEMU pid), as a
 * file planted or left there would; NULL: fd's own again. */
void fake_dom_forge_status(fake_dom *fd, const fake_dom *other);
/* QEMU's resident memory grows by kib (the guest touched memory; no page moves). */
void fake_dom_touch(fake_dom *fd, uint64_t kib);
/* Pages of guest cell `cell` on host node `node` now. */
uint64_t fake_dom_pages_on(fake_dom *fd, unsigned cell, unsigned node);
/* Node n has `bytes` free from now on (node_free and its meminfo); pages vnumad moves in or
 * out change it. */
void fake_node_set_free(unsigned n, uint64_t bytes);
/* The least node n had free after a page moved in, since fake_node_set_free() (or the start). */
uint64_t fake_node_min_free(unsigned n);
/* move_pages(2) move calls made on the fake host so far. */
unsigned fake_move_calls(void);
/* The guest-physical address of the first page of the domain vnumad moved to another node into
 * *ret_gpa; false: none moved yet. */
bool fake_dom_first_moved(fake_dom *fd, uint64_t *ret_gpa);
/* Page queries (move_pages without nodes) made in all, and made when vnumad last waited on
 * the clock (the end of a pass's CPU time window, or the mover waiting for tokens). */
void fake_query_calls(unsigned *total, unsigned *at_wait);

/* How many connections vnumad has opened, to all the daemons. */
unsigned fake_connections(void);
/* The fake clock moves s seconds ahead. */
void fake_clock_advance(double s);
