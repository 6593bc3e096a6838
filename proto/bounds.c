/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What only the domain can tell: a decoded hint set checked against the
 * domain's vCPUs, guest nodes and guest RAM. The decoder has already checked
 * everything the protocol itself limits; here the lies of a well-formed
 * message are dropped, entry by entry, and counted.
 */
#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "proto.h"

/* [gpa, gpa + length) is covered by the union of ram[]: walk from RAM range to RAM range. */
static bool inside_ram(uint64_t gpa, uint64_t length, const proto_gpa_range *ram, unsigned nr_ram)
{
    uint64_t pos = gpa, end = gpa + length; /* the decoder guarantees no wrap */

    while (pos < end) {
        bool advanced = false;

        for (unsigned i = 0; i < nr_ram && !advanced; i++) {
            uint64_t rend = ram[i].gpa + ram[i].length;

            if (rend < ram[i].gpa) /* a RAM range that wraps: to the end of the space */
                rend = UINT64_MAX;
            if (pos >= ram[i].gpa && pos < rend) {
                pos = rend;
                advanced = true;
            }
        }
        if (!advanced)
            return false;
    }
    return true;
}

/* Note the first drop in err. */
static void note(char *err, size_t errlen, unsigned *dropped, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void note(char *err, size_t errlen, unsigned *dropped, const char *fmt, ...)
{
    va_list ap;

    if (*dropped == 0 && err && errlen) {
        va_start(ap, fmt);
        (void)vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    (*dropped)++;
}

int proto_hints_check_bounds(proto_hints *h, unsigned nr_vcpus, unsigned nr_nodes,
                             const proto_gpa_range *ram, unsigned nr_ram, char *err, size_t errlen)
{
    unsigned dropped = 0;

    assert(h && (ram || nr_ram == 0));
    if (err && errlen)
        err[0] = '\0';
    for (unsigned p = 0; p < h->nr_processes; p++) {
        proto_process *proc = &h->processes[p];
        unsigned keep = 0;

        for (unsigned i = 0; i < proc->nr_vcpus; i++) {
            if (proc->vcpus[i] < nr_vcpus)
                proc->vcpus[keep++] = proc->vcpus[i];
            else
                note(err, errlen, &dropped, "pid %" PRId32 ": vCPU %" PRIu32 " is not below %u",
                     proc->pid, proc->vcpus[i], nr_vcpus);
        }
        proc->nr_vcpus = keep;

        for (unsigned i = nr_nodes; i < proc->nr_node_pages; i++)
            note(err, errlen, &dropped,
                 "pid %" PRId32 ": node_pages for guest node %u, the domain has %u", proc->pid, i,
                 nr_nodes);
        if (proc->nr_node_pages > nr_nodes)
            proc->nr_node_pages = nr_nodes;

        keep = 0;
        for (unsigned i = 0; i < proc->nr_ranges; i++) {
            const proto_range *r = &proc->ranges[i];

            if (inside_ram(r->gpa, r->length, ram, nr_ram))
                proc->ranges[keep++] = *r;
            else
                note(err, errlen, &dropped,
                     "pid %" PRId32 ": range 0x%" PRIx64 "+0x%" PRIx64 " is not inside guest RAM",
                     proc->pid, r->gpa, r->length);
        }
        proc->nr_ranges = keep;
    }
    return (int)dropped;
}
