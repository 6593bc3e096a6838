/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The domain XML of an incoming live migration, as libvirt's qemu hook hands it over
 * (`migrate begin`, docs/fleet.md): what vnumad takes from it to place the domain's cells
 * before its memory arrives (hookxml_read), and the same XML with the placement written in
 * (hookxml_write): live <vcpupin>s, a <memnode mode='preferred'> per cell and a <placed>
 * child of vnumad's <state>, so that the arriving domain is recognised as placed. Untrusted
 * text (the source host's, and whatever its tenants and operator wrote into it), parsed with
 * libxml2 with no network, no entities and no DTD.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "topology.h"

/* Largest domain XML the hook passes on to vnumad (a bigger one passes through unchanged). */
#define HOOKXML_MAX (1024u * 1024)

/* An incoming domain, as decide_incoming() takes it. */
typedef struct hook_domain {
    snap_domain d; /* its cells and vCPUs (hookxml_clear) */
    uint64_t cell_bytes[SNAP_MAX_CELLS_PER_DOMAIN];
    bool guest_cells;  /* <cpu><numa> cells; else one cell 0 of every vCPU and the boot RAM */
    bool busy_known;   /* the source's last decision said how many vCPUs of a cell were busy
                        * (its <decision> in the <state> it carries); else every vCPU is */
    vn_cpuset allowed; /* CPUs its vCPUs may use here: <vcpu cpuset> (or all), not isolated */
    /* <cputune><emulatorpin>: none, a vnumad's (the source's balancer pinned it, or a hook
     * placed it: replaced by the placed nodes' CPUs), or the operator's (emulator_pin: QEMU's
     * preallocation runs on the CPUs of each cell's node, which must be inside it) */
    enum { HOOK_EMU_NONE, HOOK_EMU_VNUMAD, HOOK_EMU_OPERATOR } emulator;
    vn_cpuset emulator_pin;
} hook_domain;

/*
 * Read an incoming domain's XML. Returns 1 and fills *ret when vnumad is to place it; 0 when
 * it passes unchanged, with the reason in why (it did not opt in with mode="auto", its
 * <numatune> or its <vcpupin>s are the operator's, it has no vCPU this host may run, ...);
 * -EINVAL when the XML is broken (why says how), -ENOMEM.
 */
int hookxml_read(const char *xml, const topology *t, hook_domain *ret, char *why, size_t whylen);

/*
 * The XML with the placement pd (decide_incoming on hd) written in: every <vcpupin> replaced
 * by pd's pins, a vnumad's <emulatorpin> by the CPUs of the placed cells' nodes, the <numatune> by
 * a <memnode cellid mode='preferred' nodeset> per cell with a memory move (a <memory
 * mode='preferred'> without guest cells), and <placed host=host_id> with each cell's node in
 * vnumad's <state> (created when missing). 0 and a malloc'd XML in *ret; 0 with *ret NULL when the
 * plan places nothing; -EINVAL, -ENOMEM.
 */
int hookxml_write(const char *xml, const topology *t, const hook_domain *hd, const plan_domain *pd,
                  const char *host_id, char **ret);

/*
 * Whether the operator's <emulatorpin> (hd->emulator) lets QEMU allocate each placed cell's
 * memory: libvirt preallocates a cell bound to a node on that node's CPUs, which must be
 * within the emulator's. True for no or a vnumad's emulator pin; false with the reason in why.
 */
bool hookxml_emulator_fits(const topology *t, const hook_domain *hd, const plan_domain *pd,
                           char *why, size_t whylen);

/*
 * The XML with a qemu hook's earlier placement taken out, for an incoming domain vnumad does
 * not place here (it passes through, vnumad did not answer): the placement names another
 * host's nodes and CPUs, and libvirt refuses to start a domain whose <numatune> names a node
 * this host lacks, which would fail the migration. Taken out, only when vnumad's <state>
 * holds a valid <placed>: each <memnode mode='preferred'> (or <memory>) of a cell it lists with
 * that node, the <numatune> when nothing else is left in it, every <vcpupin> (a placed
 * domain's are vnumad's), a vnumad's <emulatorpin> put back to the carried original (removed
 * when that was none), and the <placed> itself. 0 and a malloc'd XML in *ret, or *ret NULL when
 * there is nothing to take out; -EINVAL (not a domain XML), -ENOMEM.
 */
int hookxml_unplace(const char *xml, char **ret);

/* Frees what hookxml_read allocated. NULL-safe. */
void hookxml_clear(hook_domain *hd);
