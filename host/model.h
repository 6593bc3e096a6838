/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Every node number in these structures is a topology node *index*
 * (0..topology.nr_nodes-1); the kernel's node numbers (os_index) appear only
 * at the edges (JSON in and out, libnuma calls).
 *
 * The values that flow through the pipeline:
 *
 *   topology (topology.h) + snapshot + config  --decide-->  plan
 *
 * A snapshot is what the sample stage saw of the opted-in domains in one pass
 * (or what `vnumad --advise --snapshot FILE.json` reads, see
 * docs/snapshot-format.md). A plan is what the decide stage wants done, every
 * action naming the rule(s) behind it. All of these are plain data: no
 * handles, no I/O.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpuset.h"
#include "topology.h"

/* ---- limits on what one snapshot may hold (also the JSON parser's bounds) ---- */
#define SNAP_MAX_DOMAINS          4096
#define SNAP_MAX_CELLS_PER_DOMAIN 64
#define SNAP_MAX_VCPUS_PER_CELL   1024
#define SNAP_MAX_HOT_RANGES       256
#define SNAP_MAX_SHARES           64
#define SNAP_NAME_MAX             256 /* bytes incl. NUL; libvirt domain names are shorter in practice */
#define SNAP_UUID_MAX             37

typedef enum vn_mode {
    VN_MODE_OFF,    /* not opted in (or mode="off"): never touched, never planned */
    VN_MODE_ADVISE, /* decide and record, never act */
    VN_MODE_AUTO,   /* decide and act */
    VN_MODE_MAX,
} vn_mode;

/* What a domain's cells do with a lower memory tier (the opt-in element's tier="..."). */
typedef enum vn_tier {
    VN_TIER_AUTO,       /* cold memory down when the home node is short of room (hints known) */
    VN_TIER_OFF,        /* never: a lower tier is a node like any other */
    VN_TIER_COLD_FIRST, /* cold memory down even when the home node has room */
    VN_TIER_MAX,
} vn_tier;

/* libvirt <numatune><memory mode=...>; NONE when the domain has no numatune. */
typedef enum vn_mem_mode {
    VN_MEM_NONE,
    VN_MEM_STRICT,
    VN_MEM_RESTRICTIVE,
    VN_MEM_PREFERRED,
    VN_MEM_INTERLEAVE,
    VN_MEM_MAX,
} vn_mem_mode;

/* Why a cell's memory cannot move (never moved; its vCPUs go to it instead): recognised
 * from the domain XML up front, or found when move_pages(2) refused every page it tried. */
typedef enum vn_mem_pin {
    MEM_PIN_NONE,
    MEM_PIN_VFIO,            /* <hostdev> passthrough: the IOMMU maps all guest memory */
    MEM_PIN_LOCKED,          /* <memoryBacking><locked/>: QEMU mlock()s it */
    MEM_PIN_LAUNCH_SECURITY, /* <launchSecurity> (SEV, SEV-SNP, TDX, s390 PV): pinned, encrypted */
    MEM_PIN_REFUSED,         /* move_pages(2) moved none of its pages (a long-term pin) */
    MEM_PIN_MAX,
} vn_mem_pin;

typedef struct vn_mem_binding {
    vn_mem_mode mode;
    vn_nodeset nodes; /* host node indexes */
} vn_mem_binding;

typedef struct snap_vcpu {
    unsigned id;       /* libvirt vCPU number */
    double busy;       /* fraction of one CPU used over the last window, 0..1 */
    vn_cpuset allowed; /* CPUs the domain may use for this vCPU (libvirt/cgroup limit) */
    vn_cpuset pinned;  /* current affinity */
    int cpu;           /* CPU it last ran on, -1 when unknown */
    bool fixed;        /* never re-pinned: a realtime vCPU (<vcpusched> fifo/rr) */
} snap_vcpu;

typedef struct snap_hot_range {
    uint64_t gpa;    /* guest-physical start, bytes */
    uint64_t length; /* bytes */
    double heat;     /* 0..1, from guest hints (smoothed over the hint sets it was seen in) */
    bool shared;     /* touched by processes running in several cells */
    /* rule 3 on hot ranges (hints_follow): how many hint sets before the latest agreed it is hot,
     * in a row (0: only the latest says so); fading: hot in the one before, not in the latest
     * (it becomes cold only when a second set agrees) */
    unsigned agree;
    bool fading;
} snap_hot_range;

typedef struct snap_share {
    unsigned cell; /* id of another cell of the same domain */
    double weight; /* 0..1: how much memory traffic the two cells share */
} snap_share;

typedef struct snap_cell {
    unsigned id;
    unsigned nr_vcpus;
    snap_vcpu *vcpus;
    uint64_t page_size; /* bytes per page of the backend */
    /* bytes the kernel migrates at once (0: page_size): a transparent huge page for anonymous
     * memory on a host with THP; a move of one base page in it takes the whole of it */
    uint64_t granule;
    /* resident pages on each node index: nr_nodes entries, the topology's (snap_cell_nodes) */
    unsigned nr_nodes;
    uint64_t *pages;
    vn_mem_pin mem_pinned;  /* the memory cannot move, and why */
    vn_mem_binding binding; /* per-cell memnode binding, or the domain's */
    int last_candidate;     /* node index proposed last pass, -1 none (rule 3) */
    unsigned down_ago;      /* passes since memory of it last went down a tier (1: the last
                             * pass), 0 never or not known (TIER_SETTLE_PASSES) */
    /* bytes of its last memory order the mover had yet to move while the sample was taken
     * (the most of its start and end): the pages counted were on their way */
    uint64_t order_left;
    unsigned nr_hot;
    snap_hot_range *hot; /* hints, hottest first after parsing */
    /* pages of the hot ranges on each node index (nr_nodes entries, in page_size units), as
     * counted (sample_hot.c) or read; NULL: not known (decide takes them spread as the cell) */
    uint64_t *hot_pages;
    unsigned nr_shares;
    snap_share *shares;
} snap_cell;

typedef struct snap_domain {
    char name[SNAP_NAME_MAX];
    char uuid[SNAP_UUID_MAX];
    vn_mode mode;
    int priority;             /* higher is placed first, 0 default, -100..100 */
    vn_tier tier;             /* what its cells do with a lower memory tier */
    vn_nodeset allowed_nodes; /* node indexes; empty = all nodes */
    unsigned age_passes;      /* balancing passes since vnumad first saw the domain */
    int preferred_node;       /* node index it settled on, -1 none yet (rule 3) */
    bool busy_unmeasured;     /* no CPU time window behind the vCPUs' busy: nothing is decided */
    bool hints_pending;       /* its guest agent's first hint set is awaited: no memory moves */
    /* passes since the first hint set of its QEMU run, that pass counted (1: this pass brought
     * it; 0: none yet): rule 3's early passes for hot ranges count from it */
    unsigned hint_passes;
    unsigned nr_cells;
    snap_cell *cells;
} snap_domain;

typedef struct snapshot {
    uint64_t pass; /* pass number */
    unsigned nr_domains;
    snap_domain *domains;
    /* Per node index: free bytes (overrides the topology's), and busy CPUs used
     * by everything vnumad does not manage. */
    bool free_known[VN_MAX_NODES];
    uint64_t free_bytes[VN_MAX_NODES];
    double other_busy[VN_MAX_NODES];
    /* Per node index: free huge pages of each size (override the topology's huge[]); a cell
     * whose page_size is one of them is hugetlb-backed and finds room only there. */
    topo_huge free_huge[VN_MAX_NODES][TOPO_HUGE_SIZES];
} snapshot;

/* The huge page pools of node index n: the snapshot's when it lists any, else the topology's. */
const topo_huge *snapshot_node_huge(const topology *t, const snapshot *s, unsigned n);

/* Gives the cell nr_nodes zeroed page counts (the topology's nodes). 0 or -ENOMEM. */
int snap_cell_nodes(snap_cell *c, unsigned nr_nodes);
/* Gives the cell nr_nodes (its nr_nodes) zeroed hot page counts. 0 or -ENOMEM. */
int snap_cell_hot_nodes(snap_cell *c);

/* Frees everything a snapshot owns (domains, cells, vCPUs) and zeroes it. NULL-safe. */
void snapshot_clear(snapshot *s);

/* Frees everything a domain owns (cells, vCPUs, hot ranges, shares) and zeroes it. NULL-safe. */
void snap_domain_clear(snap_domain *d);

/* Deep copy of a snapshot. Returns 0 or -ENOMEM. */
int snapshot_copy(const snapshot *s, snapshot *ret);

/* ---- configuration the decide stage reads ---- */
typedef struct vn_config {
    double busy_threshold;     /* a vCPU above this fraction of a CPU is busy */
    uint64_t reserve_bytes;    /* free memory each node keeps; never a destination below it */
    double reserve_fraction;   /* ... or this fraction of the node's memory, whichever is larger */
    double min_gain_points;    /* hysteresis: smaller locality gains do not move memory */
    double switch_margin;      /* hysteresis: cost a new home must win by */
    unsigned early_passes;     /* rule 3: early fast migration lasts this many passes */
    unsigned move_threads;     /* mover threads working at once at least (mover.c) */
    unsigned move_threads_max; /* ... at most, when that many CPUs are idle */
} vn_config;

/* The most cells of a domain moving at once (vn_config.move_threads). */
#define ACT_MAX_MOVERS 16

/* Free memory kept above a node's reserve when planning and carrying out moves: the
 * kernel allocates too while pages migrate, and other tenants use the node (measured in
 * the proving ground: a move that stopped exactly at the reserve left the node 2 MiB
 * below it a moment later). */
#define RESERVE_SLACK_BYTES (16ULL * 1024 * 1024)

/* Passes after memory of a cell went down to its lower tier during which none of it comes
 * back in bulk (only as hot ranges): room that the same pass's moves freed at home must not
 * send it up again at once (no page moves twice in the window). */
#define TIER_SETTLE_PASSES 10

/* The documented defaults (docs/ARCHITECTURE.md). */
void config_defaults(vn_config *c);

/* ---- the plan ---- */

/* Rules and reasons a plan can name. Keep rule_name() in model.c in sync. */
typedef enum vn_rule {
    RULE_ALLOWED_IMBALANCE, /* rule 1 */
    RULE_CPUSET_SKIP,       /* rule 2 */
    RULE_EARLY_MIGRATION,   /* rule 3, first passes */
    RULE_TWO_STAGE_FILTER,  /* rule 3, later */
    RULE_SCAN_BUDGET,       /* rule 4 */
    RULE_LOCK_HOLD,         /* rule 5 */
    RULE_LOCALITY,          /* objective: vCPUs and memory of a cell on one node */
    RULE_PREFER_VCPU_MOVE,  /* objective: move vCPUs rather than memory */
    RULE_SHARED_PROXIMITY,  /* objective: cells that share go near each other */
    RULE_CPU_CAPACITY,      /* objective: a node's CPUs are not oversubscribed */
    RULE_FREE_MEM_RESERVE,  /* objective: never a destination below its reserve */
    RULE_ALLOWED_CPUS,      /* objective: never outside the vCPU's allowed set */
    RULE_HYSTERESIS,        /* objective: small gains move nothing */
    RULE_HOT_FIRST,         /* guest hints: hot ranges first */
    RULE_WIDE_CELL,         /* more busy vCPUs than one node holds: spans the nearest nodes */
    RULE_LOWER_TIER,        /* cold memory on the home node's lower tier (hot on the home) */
    RULE_MAX,
} vn_rule;

typedef uint32_t vn_rules; /* bitmask of 1u << vn_rule */
#define RULE_BIT(r) (1u << (r))

/* Why a cell got no action. */
typedef enum vn_reason {
    REASON_NONE,               /* the cell has actions */
    REASON_ALREADY_LOCAL,      /* vCPUs and memory are where they should be */
    REASON_CPUSET_SKIP,        /* rule 2: memory bound to one node, nothing to do */
    REASON_HYSTERESIS,         /* a better place exists but the gain is too small */
    REASON_SINGLE_HOST_NODE,   /* only one node could hold the cell, and it is there */
    REASON_FILTER_PENDING,     /* rule 3: memory waits for a second agreeing sample */
    REASON_NO_ROOM,            /* no node has room above its free-memory reserve */
    REASON_NO_FEASIBLE_NODE,   /* no node satisfies the allowed CPUs / nodes */
    REASON_NO_MEMORY_INFO,     /* no resident pages known for the cell */
    REASON_MEMORY_PINNED,      /* the memory cannot move and the vCPUs are with it already */
    REASON_NUMATUNE_PREFERRED, /* numatune mode='preferred' elsewhere: memory is not moved off it */
    REASON_UNMEASURED,         /* the vCPUs' busy fractions were not measured yet: no action */
    REASON_TIERED,             /* hot memory home, cold on the lower tier: nothing to move */
    REASON_HINTS_PENDING,      /* the guest agent's first hint set is awaited: memory waits */
    REASON_ORDER_IN_FLIGHT,    /* a tiered cell's last order is still being worked: it goes on */
    REASON_MAX,
} vn_reason;

typedef struct plan_pin {
    unsigned vcpu;  /* libvirt vCPU number */
    vn_cpuset cpus; /* new affinity */
    vn_rules rules;
} plan_pin;

typedef struct plan_move {
    int from_node;      /* node index, -1 for "every node but the target" (hot range) */
    int to_node;        /* node index */
    uint64_t bytes;     /* bytes to move (estimate for hot ranges) */
    uint64_t gpa;       /* hot range start, when is_range */
    uint64_t length;    /* hot range length, when is_range */
    bool is_range;      /* a guest-physical range from hints, else bulk from from_node */
    bool cold;          /* bulk of the cell's cold memory only: pages outside its hot ranges
                         * (the cell's is_range moves) */
    double gain_points; /* expected locality gain, percentage points of the cell */
    vn_rules rules;
} plan_move;

/* A guest-physical range, bytes. */
typedef struct plan_range {
    uint64_t gpa, length;
} plan_range;

/* Why a cell's memory is placed on two tiers. */
typedef enum vn_tier_why {
    TIER_WHY_NONE,       /* one tier: all of it goes home */
    TIER_WHY_HOME_SHORT, /* the home node has no room for all of it (tier="auto") */
    TIER_WHY_COLD_FIRST, /* the domain asks for its cold memory down (tier="cold-first") */
    TIER_WHY_SETTLING,   /* some went down within TIER_SETTLE_PASSES: it does not come up yet */
    TIER_WHY_MAX,
} vn_tier_why;

/* A cell's memory on its home node and its lower tier (decide_tier.c), bytes. */
typedef struct plan_tier {
    vn_tier_why why;
    bool hints;        /* the guest said what is hot (else: the cell is uniformly warm) */
    uint64_t hot;      /* its hot set (hot ranges' pages) */
    uint64_t hot_home; /* ... of it on the home node now */
    uint64_t home;     /* of the cell on the home node now */
    uint64_t lower;    /* ... on the lower tier now */
    uint64_t demote;   /* cold memory the plan moves from the home node down */
    uint64_t down;     /* memory the plan moves from other nodes down */
} plan_tier;

typedef struct plan_cell {
    unsigned cell_id;
    int current_node;       /* node index where the cell mostly is now, -1 spread/unknown */
    int target_node;        /* node index chosen, -1 none */
    int candidate_node;     /* feed back as last_candidate next pass (rule 3) */
    int lower_tier;         /* node index of the target's nearest lower memory tier, -1 none */
    double locality_before; /* percent, busy-weighted share of memory local to its vCPU */
    double locality_after;  /* percent, expected once the plan is done */
    int busy_vcpus;         /* the cell's vCPUs decide counted busy, -1 not measured */
    unsigned nr_pins;
    plan_pin *pins;
    unsigned nr_moves;
    plan_move *moves;     /* in priority order */
    uint32_t batch_pages; /* rule 5: pages per move_pages call */
    bool cpu_overcommit;  /* no allowed node had CPUs to spare: placed on the least bad */
    vn_nodeset span;      /* wide cell: node indexes its vCPUs and memory spread over, else empty */
    plan_tier tier;       /* its memory on two tiers: what and why (tier.why NONE: one) */
    bool keep_order;      /* no new order: the mover goes on with the last one (act) */
    unsigned nr_hot;      /* a tiered cell's hot ranges, moving or not: cold moves leave */
    plan_range *hot;      /* ... them alone (act_move_plan) */
    vn_mem_pin mem_pinned; /* the cell's memory cannot move (snap_cell), and why */
    uint64_t page_size;    /* the cell's (snap_cell) */
    vn_rules rules;        /* every rule that shaped this cell's decision */
    vn_reason reason;      /* why nothing happens, REASON_NONE when actions exist */
} plan_cell;

typedef struct plan_domain {
    char name[SNAP_NAME_MAX];
    /* its domain's index in the snapshot decide was given (names are unique in a snapshot
     * file, not on a host with several libvirt daemons: the pass matches by this) */
    unsigned input;
    vn_mode mode;
    unsigned nr_cells;
    plan_cell *cells;
} plan_domain;

typedef struct plan {
    uint64_t pass;
    unsigned nr_domains;
    plan_domain *domains;
} plan;

/* Frees everything a plan owns and zeroes it. NULL-safe. */
void plan_clear(plan *p);
/* Frees one domain's cells, pins and moves and zeroes them. NULL-safe. */
void plan_domain_clear(plan_domain *pd);

/* Number of actions (pins + moves) in the plan. */
unsigned plan_nr_actions(const plan *p);

/* Actions of domains in auto mode: what the act stage would carry out. Advise
 * domains plan the same advice every pass, so convergence is measured on these. */
unsigned plan_nr_auto_actions(const plan *p);

/* ---- names ---- */

/* Stable kebab-case names used in records, logs and JSON ("allowed-imbalance"); "unknown"
 * for a value out of range. */
const char *rule_name(vn_rule r);
const char *reason_name(vn_reason r);
const char *mode_name(vn_mode m);
const char *mem_mode_name(vn_mem_mode m);
const char *mem_pin_name(vn_mem_pin p); /* "none", "vfio", "locked", "launch-security", "refused" */
const char *tier_name(vn_tier t);       /* "auto", "off", "cold-first" */
const char *tier_why_name(vn_tier_why w); /* "one-tier", "home-short", "cold-first", "settling" */

/* The len bytes at s as a mode_name() / mem_mode_name(), or -1 when no mode has that name. */
int mode_from_name(const char *s, size_t len);
int mem_mode_from_name(const char *s, size_t len);
int mem_pin_from_name(const char *s, size_t len);
int tier_from_name(const char *s, size_t len);
