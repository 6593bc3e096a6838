/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's other load: per-CPU busy time from /proc/stat between two passes, less the time
 * of the opted-in vCPUs vnumad sampled, per node. This is what VMs that did not opt in and
 * host work use; decide (snapshot.other_busy) counts it against each node's capacity.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "topology.h"

/* What fraction of a CPU the other load on a node must reach to count as one busy CPU. */
#define HOSTLOAD_COUNT_FROM 0.75

typedef struct host_load {
    bool valid;
    uint64_t busy[VN_MAX_CPUS];  /* USER_HZ ticks: user nice system irq softirq steal */
    uint64_t total[VN_MAX_CPUS]; /* ... plus idle and iowait */
} host_load;

/* Read <root>/proc/stat ("/" on a host) into *ret. Returns 0 or -errno. */
int hostload_read(const char *root, host_load *ret);

/*
 * other_busy[n] of the snapshot, from two readings: the busy CPUs of node n between them
 * (counted over its CPUs that are not isolated and that some sampled vCPU may use, i.e. the
 * guests' CPUs, not housekeeping ones) less the busy fractions of the snapshot's vCPUs that
 * ran there, in whole CPUs (a CPU counts from HOSTLOAD_COUNT_FROM), never below 0.
 * Leaves s untouched when either reading is not valid.
 */
void hostload_other_busy(const topology *t, const host_load *prev, const host_load *now,
                         snapshot *s);

/*
 * The same over every CPU of the host that is not isolated, vnumad's domains or not, into
 * out[] (the topology's nr_nodes entries): what a domain that comes to this host meets
 * (place.c), on a host where no opted-in domain runs yet too. 0, or -ENODATA when either
 * reading is not valid (out untouched).
 */
int hostload_other_busy_all(const topology *t, const host_load *prev, const host_load *now,
                            const snapshot *s, double out[VN_MAX_NODES]);

/* The idle CPUs among `cpus` between two readings (the sum of each one's idle share); 0 when
 * either reading is not valid. */
double hostload_idle_cpus(const host_load *prev, const host_load *now, const vn_cpuset *cpus);
