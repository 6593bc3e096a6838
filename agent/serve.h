/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve: the agent's side of the protocol. One request line in, one reply
 * line out, through proto/'s codec (the only JSON codec of vnuma). Knows
 * nothing of ports or clocks: hint sets come from a callback.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "collect.h"
#include "proto.h"

/* Fresh enough hints for the host's request (collects when needed). 0 or -errno. */
typedef int (*serve_hints_fn)(void *userdata, const collect_cfg *cfg, const ag_hints **ret);

typedef struct serve {
    unsigned version; /* negotiated, 0 before a hello */
    uint64_t caps;    /* what this agent fills */
    unsigned nr_nodes, nr_vcpus;
    char agent[PROTO_MAX_AGENT + 1];
    serve_hints_fn hints;
    void *userdata;
    collect_cfg cfg; /* the host's last request */
    uint64_t requests, errors;
    size_t last_reply_len;
    /* the wire copy of a hint set: points into these arrays */
    proto_process procs[AG_HINT_MAX_PROCS];
    proto_range ranges[AG_HINT_MAX_PROCS][AG_HINT_MAX_RANGES];
} serve;

/* Set up: heat names the agent's heat method in its version string; hot_ranges: pagemap
 * PFNs are readable (root in the guest). */
void serve_init(serve *s, unsigned nr_nodes, unsigned nr_vcpus, const char *heat, bool hot_ranges,
                serve_hints_fn fn, void *userdata);

/* The host went away: the next session starts with a hello again. */
void serve_reset(serve *s);

/*
 * Handle one request line: *ret_reply is a malloc'd line ending in '\n' (free it),
 * always set on 0 (error replies too). -ENOMEM only.
 */
int serve_line(serve *s, const char *line, size_t len, char **ret_reply, size_t *ret_len);

/* A hint set in the wire form, pointing into s (valid until the next call). */
void serve_to_proto(serve *s, const ag_hints *h, proto_hints *out);
