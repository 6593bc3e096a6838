/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What vnumad remembers about each domain between passes, and its own
 * configuration. Plain data; the daemon (host/core.h) owns the values.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "agentlink.h"
#include "carried.h"
#include "cpuset.h"
#include "domxml.h"
#include "model.h"
#include "numa_ops.h"

#define STATE_MAX_VCPUS     DOMXML_MAX_VCPUS
#define STATE_HISTORY       64 /* decision records kept in memory per domain */
#define STATE_ERROR_MAX     256
#define STATE_NODESET_MAX   256
#define STATE_MAX_IOTHREADS 64

struct record_decision;

#define STATE_OPT_IN_MAX 320 /* dom_state.opt_in: HOSTPOLICY_WHERE_MAX */

/* The opt-in element: <vnuma:balancer xmlns:vnuma="urn:vnuma:balancer:1" .../> */
typedef struct vn_balancer {
    vn_mode mode;
    vn_nodeset allowed_nodes; /* topology node indexes; empty = all */
    unsigned rate_mib;        /* per-domain migration rate limit, MiB/s; 0 = host-wide only */
    int priority;             /* -100..100 */
    bool move_realtime;       /* realtime="move": vnumad may re-pin realtime vCPUs too */
    vn_tier tier;             /* tier="auto|off|cold-first": its cells and a lower memory tier */
    bool valid;               /* false: the element is broken, `error` says why */
    char error[STATE_ERROR_MAX];
} vn_balancer;

/* A cell's guest RAM as the QEMU process maps it (cached for the domain's life). */
typedef struct ram_range {
    unsigned cell;
    uint64_t gpa;       /* guest-physical start of the backend's first range */
    uint64_t hva;       /* QEMU virtual address of the backend's start */
    uint64_t size;      /* bytes */
    bool shared;        /* memfd / share=on backend */
    uint64_t page_size; /* bytes per page (sample.c reads it from the mapping); 0 not yet */
    bool hugetlb;       /* hugetlbfs (file or memfd hugetlb=on): huge pages from the pools */
    /* bytes the kernel migrates at once (sample.c with page_size): a transparent huge page for
     * anonymous memory on a host with THP, else page_size */
    uint64_t granule;
} ram_range;

/* What vnumad changed, as it was before the first change (restored on opt-out/exit). */
typedef struct dom_originals {
    bool saved;
    /* machine id of the host they were taken on (<original host=...>); "" when the
     * record has none (older vnumad): taken as this host's */
    char host[SNAP_UUID_MAX];
    unsigned nr_vcpus;
    bool emulator_saved;
    vn_cpuset emulator_pin;
    unsigned nr_iothreads;
    unsigned iothread_id[STATE_MAX_IOTHREADS];
    vn_cpuset iothread_pin[STATE_MAX_IOTHREADS];
    bool numa_saved;
    char nodeset[STATE_NODESET_MAX]; /* restrictive numatune nodeset, kernel node numbers */
    uint64_t memfd_cells;            /* cells whose shared (memfd) backend vnumad gave a policy */
    vn_mempolicy memfd_policy[SNAP_MAX_CELLS_PER_DOMAIN]; /* ... and the policy it had before */
    /* last: originals_set() copies only the nr_vcpus in use (128 KiB in all) */
    vn_cpuset vcpu_pin[STATE_MAX_VCPUS];
} dom_originals;

/* dst = src, touching only the vCPU pins in use (and clearing dst's beyond them): a
 * dom_state's pages past them stay untouched, not resident (domains.c maps each state). */
static inline void originals_set(dom_originals *dst, const dom_originals *src)
{
    unsigned n = src->nr_vcpus < STATE_MAX_VCPUS ? src->nr_vcpus : STATE_MAX_VCPUS;
    unsigned old = dst->nr_vcpus < STATE_MAX_VCPUS ? dst->nr_vcpus : STATE_MAX_VCPUS;

    memcpy(dst, src, offsetof(dom_originals, vcpu_pin) + n * sizeof(src->vcpu_pin[0]));
    if (old > n)
        memset(&dst->vcpu_pin[n], 0, (old - n) * sizeof(dst->vcpu_pin[0]));
}

/* No originals, touching as little as originals_set. */
static inline void originals_clear(dom_originals *o)
{
    unsigned old = o->nr_vcpus < STATE_MAX_VCPUS ? o->nr_vcpus : STATE_MAX_VCPUS;

    memset(o, 0, offsetof(dom_originals, vcpu_pin) + old * sizeof(o->vcpu_pin[0]));
}

/*
 * Where the qemu hook placed an incoming domain's cells on this host before its memory
 * arrived (hookxml.h: <placed host> in vnumad's <state>): read on its arrival, kept in the
 * <state> vnumad writes. A cell listed with its memory has a <memnode mode='preferred'> of
 * that node in its live XML that is vnumad's, not the operator's (sample.c).
 */
typedef struct dom_placed {
    bool valid;
    char host[SNAP_UUID_MAX]; /* machine id of the host that placed it */
    unsigned nr;
    struct {
        unsigned cell; /* guest cell id */
        unsigned node; /* the kernel's node number */
        bool memory;   /* its memory was placed there (a preferred memnode) */
    } cells[SNAP_MAX_CELLS_PER_DOMAIN];
} dom_placed;

typedef struct dom_counters {
    uint64_t passes;       /* passes that sampled the domain */
    uint64_t memory_scans; /* move_pages status queries issued */
    uint64_t pins;         /* vCPU pins applied */
    uint64_t pages_moved;
    uint64_t bytes_moved;
    uint64_t errors;
    uint64_t memory_reuses;             /* cell page counts reused from an earlier pass (settled) */
    uint64_t affinity_fixups;           /* threads whose affinity did not follow a libvirt pin */
    uint64_t memory_discovery_failures; /* passes whose RAM discovery failed (sample.c) */
    uint64_t pages_unmovable;           /* pages move_pages(2) left where they were */
} dom_counters;

/* A hot range of the last hint set a domain's cells followed (dom_sample_cache, hints.c). */
#define HINT_PREV_MAX 512 /* remembered per domain (the hottest) */
typedef struct hint_prev {
    unsigned cell; /* guest cell id */
    unsigned seen; /* snap_hot_range.seen */
    uint64_t gpa, length;
    double heat;
} hint_prev;

/*
 * What sampling caches of a domain for its QEMU run (sample.c, sample_proc.c, ramlayout.c):
 * the process, the RAM layout and the last page counts, the last CPU times, the vCPU threads,
 * the live XML. Owned by a work while the domain is busy, by the loop otherwise.
 */
typedef struct dom_sample_cache {
    pid_t pid; /* QEMU process, in vnumad's PID namespace (sample_find_qemu) */
    /* the libvirt daemon the domain was reached through at the last sample (virt_dom_id's
     * daemon_pid; 0: the host's own libvirt): the paths in its XML (the agent channel's socket)
     * are in that daemon's root */
    pid_t daemon_pid;
    /* whether QEMU process ns_pid runs in a PID namespace other than vnumad's (a KubeVirt
     * pod's): the thread ids it reports are then its namespace's, mapped to vnumad's
     * (sample_vcpus.c, nspid.h). Told once per process: for another pid, told again */
    pid_t ns_pid;
    bool ns_other;
    vn_nodeset
        mems_allowed; /* node indexes QEMU may have memory on (Mems_allowed); empty unknown */
    uint64_t rss_counted_kib; /* QEMU's VmRSS at the last page count (sample.h); 0 unknown */
    int ram_for_id;           /* libvirt id the RAM layout belongs to */
    /* RAM discovery that failed for this QEMU run (sample.c): how often, the age_passes
     * before which it is not tried again, and why (shown by vnumactl status) */
    unsigned ram_failures;
    unsigned ram_retry_age;
    char ram_error[STATE_ERROR_MAX];
    unsigned ram_gen;     /* bumped each time ram[] is found anew (the mover follows it) */
    unsigned nr_ram;      /* ranges in ram[]: */
    unsigned nr_ram_boot; /* ram[0..nr_ram_boot-1]: the boot RAM of each cell with vCPUs, in
                           * cell order; then memory-only cells' and memory devices' ranges */
    ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    /* ram[] was found in the process's maps, not asked of QEMU (ramlayout_ensure_maps), at
     * read ram_maps_gen of the live XML */
    bool ram_from_maps;
    uint64_t ram_maps_gen;
    /* the last page counts of each ram[] cell, and when to count again (sample.h) */
    bool mem_valid[SNAP_MAX_CELLS_PER_DOMAIN];
    uint8_t mem_wait[SNAP_MAX_CELLS_PER_DOMAIN];    /* passes from one count to the next */
    uint8_t mem_skipped[SNAP_MAX_CELLS_PER_DOMAIN]; /* passes since the last count */
    uint64_t mem_pages[SNAP_MAX_CELLS_PER_DOMAIN][VN_MAX_NODES]; /* nr_nodes of each are used */
    /* counts taken when the window opened (sample_open_window), for the sample that closes
     * it: of the domain's sampled passes (dom_counters.passes) + 1, 0 none */
    uint64_t mem_fresh_pass;
    uint64_t mem_fresh;   /* the ram[] ranges (bit per index) those counts are of */
    double prev_sample_s; /* monotonic time of the last sample */
    unsigned nr_prev;
    uint64_t prev_cpu_ns[STATE_MAX_VCPUS];
    /* KVM halt-polling time of each vCPU at its last reading (UINT64_MAX unknown), which is
     * older than the last sample when samples in between had no vCPU busy enough to ask
     * (sample.c, poll_needed); the vCPU's CPU time at that reading; when it was taken. And
     * whether this QEMU reports it: 1 yes, 0 not asked yet, -1 and -2 missed once and twice,
     * -3 no (TCG, QEMU < 7.1: not asked again in this run) */
    uint64_t prev_poll_ns[STATE_MAX_VCPUS];
    uint64_t poll_cpu_ns[STATE_MAX_VCPUS];
    double poll_at_s;
    int kvm_poll;
    /* vCPU thread ids (query-cpus-fast, in vnumad's PID namespace), 0 unknown */
    pid_t vcpu_tid[STATE_MAX_VCPUS];
    /* The vCPUs of this QEMU run from one query-cpus-fast (sample.c): number, guest cell,
     * thread, QOM path; read again on a new run, a vCPU hot(un)plug or a thread gone. Each
     * pass then reads the threads' CPU time, CPU and affinity from /proc, not libvirt. */
    int vcpus_for_id; /* libvirt id they belong to; -1 none */
    unsigned nr_qv;
    struct qmp_vcpu *qv;
    /* The live XML, cached (sample_live_xml): read again when an event says it changed
     * (tunable, device, lifecycle, metadata, agent port), after vnumad acted, and at least
     * every SAMPLE_XML_REFRESH_S */
    char *xml;
    double xml_at_s;
    uint64_t xml_gen; /* counts the reads (0: none yet) */
    /* the XML parsed (sample.c, live_xml_info), and the read it was parsed from (0: none):
     * an idle pass parses nothing */
    domxml_info xml_info;
    uint64_t xml_info_gen;
    /* the cpuset file that bounds the QEMU process (sample_cgroup_cpus), found for process
     * cg_pid at XML read cg_gen: looked up again for another process or XML read */
    char cg_file[1024];
    pid_t cg_pid;
    uint64_t cg_gen;
    bool bound_logged; /* the cgroup bound of this QEMU run was logged (sample.c) */
    vn_cpuset bound;   /* ... and what it was */
    /* the hot ranges of the hint set the cells followed last (hints_follow): rule 3's two
     * observations of a range before it changes tier */
    uint64_t hints_seq; /* that hint set's seq, 0 none */
    /* age_passes + 1 of the pass that followed the QEMU run's first hint set (0: none yet) */
    unsigned hints_first_pass;
    unsigned nr_hint_prev;
    hint_prev hint_prev[HINT_PREV_MAX];
} dom_sample_cache;

/* What the act stage keeps of a domain's moves for its QEMU run (pass.c from the mover's
 * progress, act_backend.c). */
typedef struct dom_mover {
    /* ram[] ranges move_pages(2) moved none of the pages of (a long-term pin: io_uring
     * buffers, RDMA): never tried again for this QEMU run, their vCPUs go to them; the mover
     * found them (mover_take) */
    uint64_t mem_refused;
    unsigned ram_gen;                           /* the sample's RAM layout mem_refused belongs to */
    int memfd_bound[SNAP_MAX_CELLS_PER_DOMAIN]; /* kernel node + 1 a shared backend is bound to */
} dom_mover;

/* What publishing keeps of a domain (publish.c): where its records went and its history. */
typedef struct dom_published {
    bool qom_created; /* the vnuma-decision object exists */
    /* the gist of the record last written into QEMU and the live metadata, and when: a
     * record that repeats it is written again only as a heartbeat */
    char pub_key[160];
    double pub_at_s;
    /* the last decision record (host/record.h), NULL before the first: the journal's
     * duplicate check and vnumactl explain read it */
    struct record_decision *last_record;
    unsigned nr_history; /* ring of compact JSON decision records */
    unsigned history_head;
    char *history[STATE_HISTORY];
} dom_published;

/* The domain's guest agent (domains.c, agentlink.c). */
typedef struct dom_guest {
    bool connected;         /* the guest opened org.vnuma.agent.0 */
    struct agentlink *link; /* the channel to vnuma-agent, NULL if none */
    bool link_closed;       /* the channel failed: close it next pass */
    agentlink_stats stats;  /* what came over the channel */
    proto_hints *hints;     /* the latest valid hint set, or NULL */
    double hints_at_s;      /* monotonic time it arrived */
    /* the hint set a sample work reads on a worker (domains_hints_lend), and that set once a
     * newer one replaced it: freed when the work gives it back, never under it */
    const proto_hints *hints_lent;
    proto_hints *hints_retired;
    /* a set that arrived while a work held the domain: its bounds are checked against the
     * domain's RAM layout and vCPUs, which the work may be rewriting, once the work is done
     * (domains_hints_settle) */
    proto_hints *hints_unchecked;
    double unchecked_at_s;
    uint64_t no_channel_gen; /* the read of the live XML that had no open channel (0: none) */
    uint64_t refused_gen;    /* the read of the live XML whose channel socket was refused */
    bool channel_defined;    /* that XML has the agent's channel (the guest may open it later) */
} dom_guest;

/*
 * A tracked domain. Domain tracking (domains.c) owns the identity, the opt-in and the holds;
 * each part below says whose it is.
 */
typedef struct dom_state {
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    int id; /* libvirt id when last seen running; -1 after it stopped */
    /* the libvirt connection it runs on (conns.h: a connection's id, never reused; 0 none) */
    unsigned conn_id;
    vn_balancer cfg;
    /* what put it in its mode: "element", "rule FILE:LINE" or "default" (hostpolicy.h) */
    char opt_in[STATE_OPT_IN_MAX];
    bool paused;            /* vnumactl pause */
    bool permanent_error;   /* stop touching the domain until it restarts */
    bool placement_auto;    /* libvirt placement='auto' (numad-driven): warned once, in metrics */
    bool placement_checked; /* ... checked (domains.c warn_placement_auto) */
    char error[STATE_ERROR_MAX];

    /* the pass's: the domain's age and where decide placed it (rule 3) */
    unsigned age_passes;
    int preferred_node; /* topology node index, -1 none */
    int last_candidate[SNAP_MAX_CELLS_PER_DOMAIN];
    /* the age_passes + 1 of the last pass that moved memory of each cell down a tier, 0 none */
    unsigned down_at[SNAP_MAX_CELLS_PER_DOMAIN];

    /* the domain's libvirt handle for this QEMU run on this connection (pass.c), NULL none:
     * looked up once, not every pass */
    struct virt_dom *dom;

    dom_sample_cache sample; /* sampling's */
    dom_mover mover;         /* the mover's */

    /* the originals and the operator's pins (act_originals.c) */
    dom_originals orig;
    dom_placed placed; /* the qemu hook's placement of its arrival here (valid: there was one) */
    /* the hot ranges of the source host's last decision, brought by an arrival (carried.h):
     * its first passes follow them until its guest agent's first hint set (pass.c); NULL none.
     * Read by a sample work, freed only while none is out */
    carried_info *carried;
    bool carried_used;   /* the pass's sample followed them (its record says "hints": "carried") */
    bool orig_unwritten; /* orig changed since the last <state> write: the next record goes out */
    bool orig_recorded;  /* orig is what vnumad's record of them holds (origfile.h) */
    /* This QEMU run came from another host (live migration, or originals another host
     * saved): its live pins are that host's, so its originals are taken from this host's
     * definition of it (act_operator_pins) before any change. Cleared by a restore. */
    bool arrived;
    /* Its originals are this host's definition of it, taken like an arrival's: it arrived, or
     * its live metadata says a vnumad changed it and vnumad has no record of it (origfile.h:
     * the live pins may be that vnumad's). Cleared by a restore. */
    bool def_originals;
    char host_id[SNAP_UUID_MAX]; /* this host's machine id ("" unknown), for orig.host */
    /* The operator's emulator and IOThread pins in this QEMU run (act_operator_pins): the
     * <cputune> of the persistent XML; vnumad never changes or restores them */
    bool cputune_known;
    bool emulator_explicit;
    unsigned nr_iothread_explicit;
    unsigned iothread_explicit[STATE_MAX_IOTHREADS];

    dom_counters count;    /* everyone's counters, for status and the metrics */
    dom_published publish; /* publishing's */
    dom_guest guest;       /* the guest agent's */

    /* Work on the domain is in flight (pass.c): the pass holds it (sampled, acted on) and
     * each work on a worker thread holds it too; while busy, the worker threads own the
     * sampling and acting parts, and the loop defers what would change or free the state
     * (orphan: forgotten, freed when no longer busy; reconsider: its <balancer> changed, read
     * again then). */
    unsigned busy;
    bool orphan;
    bool reconsider;
    unsigned stale_pending;  /* DOM_STALE_*: an event said so while busy (domains_stale) */
    unsigned reconsider_how; /* ... as the strongest arrival an event asked for (domains.c) */
    double hung_since_s;     /* a work on it went late (no answer); 0 none */

    /* what the last pass saw, for vnumactl status (pass.c writes it) */
    uint64_t view_pass;
    unsigned nr_view;
    struct {
        unsigned cell;
        int target;            /* node index, -1 none */
        bool cpu_overcommit;   /* placed with more busy vCPUs than cores to spare */
        vn_nodeset span;       /* wide cell: node indexes it spans, else empty */
        double locality;       /* percent */
        uint64_t page_size;    /* bytes per page of its memory */
        vn_mem_pin mem_pinned; /* memory that cannot move, and why */
        unsigned nr_hot;       /* guest-hint hot ranges decide got, */
        snap_hot_range hot[4]; /* the first (hottest) ones */
        /* per node index, the topology's nr_nodes entries (last: a pass writes only those) */
        uint16_t vcpus[VN_MAX_NODES]; /* vCPUs pinned within each node */
        uint64_t mem[VN_MAX_NODES];   /* bytes on each node */
    } view[SNAP_MAX_CELLS_PER_DOMAIN];
} dom_state;

/*
 * What the sample stage reads of a domain beside its own cache (sample_input_of): who it is,
 * its opt-in, what the pass decided for it last, and the mover's refused ranges. Sampling
 * writes only its cache (dom_sample_cache) and the domain's counters.
 */
typedef struct sample_input {
    const char *name;
    const char *uuid;
    const vn_balancer *cfg;
    unsigned age_passes;
    int preferred_node;        /* topology node index, -1 none */
    const int *last_candidate; /* per guest cell id (rule 3's two-stage filter) */
    const unsigned *down_at;   /* per guest cell id (dom_state.down_at), NULL none */
    uint64_t mem_refused;      /* the mover's refused ranges (bit per ram[] index) ... */
    unsigned mem_refused_gen;  /* ... of this RAM layout (dom_sample_cache.ram_gen) */
    uint64_t passes;           /* the domain's passes: seeds the sampled page queries */
    const dom_placed *placed;  /* the qemu hook's placement here (its memnodes are vnumad's) */
} sample_input;

static inline sample_input sample_input_of(const dom_state *st)
{
    return (sample_input){.name = st->name,
                          .uuid = st->uuid,
                          .cfg = &st->cfg,
                          .age_passes = st->age_passes,
                          .preferred_node = st->preferred_node,
                          .last_candidate = st->last_candidate,
                          .down_at = st->down_at,
                          .mem_refused = st->mover.mem_refused,
                          .mem_refused_gen = st->mover.ram_gen,
                          .passes = st->count.passes,
                          .placed = &st->placed};
}

/* What an event makes stale (domains_stale): the live XML, the vCPU threads, the RAM layout. */
#define DOM_STALE_XML   1u
#define DOM_STALE_VCPUS 2u
#define DOM_STALE_RAM   4u

/* New originals of this host (taken before a change): written into <state> with the next record. */
static inline void originals_take(dom_state *st, const dom_originals *o)
{
    originals_set(&st->orig, o);
    st->orig_unwritten = true;
    st->orig_recorded = false;
}

/* No originals any more (restored, or another host's): <state> is written without them. */
static inline void originals_drop(dom_state *st)
{
    originals_clear(&st->orig);
    st->orig_unwritten = true;
    st->orig_recorded = false;
}

/* uri lines in vnumad.conf */
#define CONFIG_MAX_URIS 16

/* vnumad.conf (docs/operations.md); defaults from daemon_config_defaults(). */
typedef struct daemon_config {
    double interval_s;    /* interval = 5 */
    double event_delay_s; /* event_delay = 0.5: a pass this soon after an event */
    double heartbeat_s;   /* record_heartbeat = 600: an unchanged record written again; 0 never */
    unsigned rate_limit_mib;    /* rate_limit_mib = 256: host-wide migration, MiB/s */
    bool use_qmp;               /* qmp = yes */
    bool balancer_knobs;        /* balancer_knobs = no: <balancer>'s priority > 0, realtime="move"
                                   (policy.h) */
    bool restore_on_exit;       /* restore_on_exit = yes */
    char socket_path[108];      /* socket = /run/vnuma/vnumad.sock */
    char state_dir[256];        /* state_dir = /var/lib/vnuma */
    uint64_t journal_max_bytes; /* journal_max_mib = 64: journal.jsonl rotated past this */
    unsigned journal_files;     /* journal_files = 4: rotated journals kept (.1 ... .N) */
    char pid_file[256];         /* pid_file = /run/vnumad.pid: written when detached; empty: none */
    /* uri = qemu:///system, given once per connection (conns.h); a socket= glob in one is a
     * connection per matching socket. The first uri line of the file replaces the default. */
    char uris[CONFIG_MAX_URIS][256];
    unsigned nr_uris;
    bool uris_given;        /* a uri line was read (the default is gone) */
    double scan_interval_s; /* scan_interval = 5: the socket globs looked through again */
    int log_level;          /* log_level = info (err=3 warning=4 info=6 debug=7) */
    bool test_holds;        /* test_holds = no: vnumactl hold may park a pass (host/holds.h) */
    char metrics_file[256]; /* metrics_file = (empty: off): Prometheus text, written each pass */
    vn_config decide;       /* busy_threshold, reserve_mib, reserve_percent, min_gain, ... */
    vn_mode default_mode;   /* default_mode = off: a domain no rule and no element speaks for */
    char policy_dir[256];   /* policy_dir = /etc/vnuma/policy.d: *.rules (hostpolicy.h) */
} daemon_config;
