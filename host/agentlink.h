/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host end of a domain's vnuma-agent channel (org.vnuma.agent.0): a
 * non-blocking Unix socket to QEMU's chardev, on the daemon's event loop,
 * speaking proto/ (docs/PROTOCOL.md). Everything read is hostile input:
 * framed by proto_reader (bounded buffer), rate-limited per domain, decoded
 * strictly, counted per error kind, and handed over only when fully valid.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto.h"

/* Bytes read from one channel per event-loop wakeup at most (fairness between domains). */
#define AGENTLINK_READ_BUDGET (64u * 1024)
/* What a guest may write on its channel: a hint set is one line of at most PROTO_MAX_LINE bytes,
 * asked for once a pass. Past the burst, vnumad stops reading the channel for
 * AGENTLINK_PAUSE_MS (the guest's writes then wait on it, not vnumad's loop on the guest) and
 * counts it (throttled); what a flood costs vnumad is bounded by this rate, however fast the
 * guest writes. */
#define AGENTLINK_BYTES_PER_S (256u * 1024)
#define AGENTLINK_BYTES_BURST (4u * PROTO_MAX_LINE)
#define AGENTLINK_PAUSE_MS    1000
/* A request unanswered for this long is given up (the agent may be busy or gone). */
#define AGENTLINK_REPLY_TIMEOUT_S 10.0

typedef struct agentlink_stats {
    uint64_t connects;
    uint64_t hint_sets;             /* valid hint sets received */
    uint64_t errors[PROTO_ERR_MAX]; /* refused input by kind */
    uint64_t agent_errors;          /* error replies from the agent */
    uint64_t dropped_entries;       /* entries outside the domain's bounds */
    uint64_t bytes;                 /* bytes read */
    uint64_t throttled;             /* times reading stopped: over AGENTLINK_BYTES_PER_S */
    char last_error[256];
} agentlink_stats;

typedef struct agentlink_callbacks {
    /* a valid hint set; ownership of *h passes to the callee (proto_hints_free) */
    void (*hints)(void *opaque, proto_hints *h);
    /* the hello exchange finished */
    void (*ready)(void *opaque, const proto_hello_reply *hello);
    /* the channel closed or failed: the link must be closed by the owner */
    void (*closed)(void *opaque);
    void *opaque;
} agentlink_callbacks;

typedef struct agentlink agentlink;

/*
 * The agent channel's socket path in a domain's live XML, and whether the guest
 * has the port open (target state='connected'). -ENOENT when the domain has no
 * org.vnuma.agent.0 unix channel.
 */
int agentlink_find_channel(const char *domxml, char *path, size_t len, bool *ret_connected);

/*
 * Connect to the channel socket at `path` (from the live XML: whoever can write the domain's XML,
 * or QEMU after an escape, may point it or swap it elsewhere) as root, only if it is a socket and
 * not a symbolic link, owned by the user `peer` (the domain's QEMU) runs as, and `peer` is the
 * process listening on it (SO_PEERCRED). `daemon`: the libvirt daemon that wrote the path, when
 * it is reached through a socket (virt_dom_id.daemon_pid): the path is as it sees it, in its
 * mount namespace (a KubeVirt pod's), and is looked up in its root, every link resolved inside
 * it (nsroot.h); 0: the host's own libvirt, the path is the host's. The connected socket into
 * *ret. 0; -ELOOP: a link; -ENOTSOCK; -EPERM: another user's socket or another process listens;
 * -ESRCH: peer or daemon unknown or gone; another -errno.
 */
int agentlink_connect(const char *path, pid_t daemon, pid_t peer, int *ret);
/* agentlink_connect() to the channel of the domain whose QEMU is `qemu` (its daemon `daemon`),
 * then send the hello; stats is owned by the caller and outlives the link. */
int agentlink_open(const char *path, pid_t daemon, pid_t qemu, const agentlink_callbacks *cb,
                   agentlink_stats *stats, agentlink **ret);
void agentlink_close(agentlink *l);
bool agentlink_ready(const agentlink *l);

/* Ask for hints (no-op while a request is outstanding and not timed out). 0 or -errno.
 * A hello unanswered for AGENTLINK_REPLY_TIMEOUT_S fails the link (the closed callback
 * runs) and gives -ETIMEDOUT: the owner opens a new one. */
int agentlink_request_hints(agentlink *l, const proto_get_hints *g, double now_s);
