/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 2 of the pipeline: sample one running domain into a snap_domain
 * (model.h) for the decide stage. Reads libvirt (virt.h), QMP through libvirt
 * (cells, vCPU threads, guest RAM layout), and the QEMU process's page
 * placement with windowed move_pages queries (numa_ops.h), never one long walk of
 * its address space (rules 4 and 5). QEMU's replies are parsed by qemu.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "numa_ops.h"
#include "state.h"
#include "topology.h"
#include "virt.h"

/*
 * Count the resident pages per kernel node of [hva, hva+len) of process pid, with
 * windowed move_pages queries of at most LOCK_HOLD_MAX_PAGES pages and the stride of
 * rule_lock_hold_walk(). With a stride above 1, one page of each stride is sampled,
 * drawn by rule_lock_hold_page() from `seed` (the daemon changes it every pass), and
 * counts[node] = hits[node] * pages / samples.
 * counts[] is indexed by topology node index. *ret_queries gets the number of
 * move_pages calls made. Returns 0 or -errno (-ESRCH: the process is gone).
 */
int sample_count_pages(const numa_ops *ops, const topology *t, pid_t pid, uint64_t hva,
                       uint64_t len, uint64_t page_size, uint64_t seed,
                       uint64_t counts[VN_MAX_NODES], unsigned *ret_queries);

/*
 * Memory placement changes slowly when nothing moves it, so a settled cell is not
 * counted every pass: after a count that differs from the previous one by at most
 * SAMPLE_SETTLED_PERMILLE of the cell on every node, the cell's next count waits twice
 * as many passes as the last wait, up to SAMPLE_MEM_MAX_WAIT passes (40 s at the
 * default 5 s interval); a different count, a move or pin by vnumad, a new QEMU or a
 * new RAM layout count again at the next pass. Passes in between reuse the last counts.
 */
#define SAMPLE_SETTLED_PERMILLE 20
#define SAMPLE_MEM_MAX_WAIT     8

/* Passes at most between two tries to find a domain's guest memory after a failure. */
#define SAMPLE_RAM_RETRY_MAX 32

/*
 * Passes to wait before the next try to find a domain's guest memory after `failures`
 * earlier failed tries of this QEMU run: 1, 2, 4 ... SAMPLE_RAM_RETRY_MAX. Meanwhile its
 * cells have no page counts (decide: no-memory-info) and its vCPUs are still placed.
 */
unsigned sample_ram_backoff(unsigned failures);

/*
 * The CPUs the cgroup of process pid may use (cpuset.cpus.effective on cgroup v2,
 * cpuset.effective_cpus on v1), one level above libvirt's per-thread groups: for a QEMU
 * process, the domain's machine scope (or its nearest ancestor with the cpuset controller),
 * whatever vnumad's or its emulator's pins are. root
 * is "/" (tests point it at a fixture tree). Returns 0, or -errno when there is no cpuset
 * controller or no such file (the caller then has no bound beyond the XML's).
 */
int sample_cgroup_cpus(const char *root, pid_t pid, vn_cpuset *ret);

/*
 * The host nodes (mask of topology node indexes) process `pid` may have memory on, from its
 * Mems_allowed_list. 0 or -errno (-ESRCH: gone). The sampled domain's allowed nodes are
 * intersected with it.
 */
int sample_mems_allowed(pid_t pid, const topology *t, uint64_t *ret);

/* vnumad moved or pinned something of the domain: count its cells at the next pass. */
void sample_mem_changed(dom_state *st);

/* PID of the running QEMU of domain `name`, from libvirt's pid file. 0 or -errno (-ESRCH: no
 * such file). */
int sample_qemu_pid(const char *name, pid_t *ret);
/* The process (Tgid) of thread tid. 0 or -errno. */
int sample_pid_of_thread(pid_t tid, pid_t *ret);

/* Find the backends of the cells whose shared policy vnumad changed (st->orig.memfd_cells)
 * and the QEMU pid, when no sample of this vnumad has yet (it restarted, and the domain opts
 * out before its first pass): the policies can then be put back. Nothing is asked when a
 * sample found them already. 0 or -errno. */
int sample_locate_backends(virt_dom *d, dom_state *st);

/* The domain's RAM layout changed (a memory device plugged or unplugged): find it again
 * at the next sample (query-memdev, info mtree, query-memory-devices). */
void sample_ram_stale(dom_state *st);

/*
 * The domain's live XML (cached in st, owned by it): read again when sample_xml_stale() was
 * called since, or when it is SAMPLE_XML_REFRESH_S old. 0 or -errno with a reason in err.
 */
#define SAMPLE_XML_REFRESH_S 60.0
int sample_live_xml(virt_dom *d, dom_state *st, double now_s, const char **ret, char *err,
                    size_t errlen);
/* An event (or vnumad's own change) says the live XML changed. */
void sample_xml_stale(dom_state *st);
/* Forget the vCPU threads and cells of this QEMU run (a vCPU was plugged or unplugged). */
void sample_vcpus_stale(dom_state *st);

/*
 * Busy fractions need a window: two readings of each vCPU's CPU time. True when the next
 * sample_domain() would have none behind it (vnumad has not read this QEMU run's vCPUs yet;
 * a changed vCPU count shows only in that sample, which then says busy_unmeasured).
 */
bool sample_needs_window(const dom_state *st);

/* The next sample of the domain sends QEMU monitor commands (it learns this QEMU run's vCPUs
 * or RAM layout, or asks KVM's halt polling): the pass checks first that libvirt runs no job
 * on it, since such a command would wait for the job. */
bool sample_uses_monitor(virt_dom *d, const dom_state *st, bool use_qmp);

/*
 * Opens the window: reads every vCPU's CPU time (and KVM halt polling) as sample_domain()
 * would, so that a sample_domain() at least SAMPLE_MIN_WINDOW_S later has measured busy
 * fractions. 0 or -errno with a reason in err.
 */
#define SAMPLE_MIN_WINDOW_S 1.0
int sample_open_window(virt_dom *d, dom_state *st, bool use_qmp, double now_s, char *err,
                       size_t errlen);

/* A vCPU thread's CPU time (ns; /proc/TID/schedstat, else utime + stime of /proc/TID/stat),
 * the CPU it last ran on and its affinity; `proc` is "/proc" but in tests. 0 or -errno
 * (-ESRCH: no such thread). */
int sample_thread(const char *proc, pid_t tid, uint64_t *cpu_ns, int *cpu, vn_cpuset *affinity);

/*
 * Sample a running domain into *out (cells with vCPUs, busy fractions, allowed CPUs,
 * current pins, memory binding, pages per node). Uses and updates st (cached RAM
 * layout, previous CPU times, counters). use_qmp=false: no monitor commands; the domain
 * is one cell and its memory is not sampled (out->cells[0].pages all zero).
 * Returns 0 or -errno with a reason in err.
 */
int sample_domain(virt_dom *d, dom_state *st, const topology *t, const numa_ops *ops, bool use_qmp,
                  double now_s, snap_domain *out, char *err, size_t errlen);
