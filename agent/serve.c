/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * serve: requests in, replies out, through proto/ (see serve.h).
 */
#include "serve.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util.h"
#include "version.h"

void serve_init(serve *s, unsigned nr_nodes, unsigned nr_vcpus, const char *heat, bool hot_ranges,
                serve_hints_fn fn, void *userdata)
{
    memset(s, 0, sizeof(*s));
    s->nr_nodes = nr_nodes;
    s->nr_vcpus = nr_vcpus;
    s->caps = PROTO_CAP_BIT(PROTO_CAP_NODE_PAGES);
    if (hot_ranges)
        s->caps |= PROTO_CAP_BIT(PROTO_CAP_HOT_RANGES);
    snprintf(s->agent, sizeof(s->agent), "vnuma-agent %s heat=%s", VNUMA_VERSION, heat);
    s->hints = fn;
    s->userdata = userdata;
    s->cfg = collect_cfg_clamp((collect_cfg){.scan_budget_mib = AG_DEFAULT_BUDGET_MIB});
}

void serve_reset(serve *s)
{
    s->version = 0;
}

void serve_to_proto(serve *s, const ag_hints *h, proto_hints *out)
{
    unsigned nodes = VN_MIN(h->nr_nodes, PROTO_MAX_NODES);

    memset(out, 0, sizeof(*out));
    out->seq = h->seq;
    out->uptime_ms = h->uptime_ms;
    out->processes = s->procs;
    out->nr_processes = VN_MIN(h->nr_procs, (uint32_t)AG_HINT_MAX_PROCS);
    for (unsigned i = 0; i < out->nr_processes; i++) {
        const ag_proc_hint *p = &h->procs[i];
        proto_process *q = &s->procs[i];

        memset(q, 0, sizeof(*q));
        q->pid = (int32_t)p->pid;
        proto_sanitize_comm(q->comm, p->comm);
        q->vcpus = (uint32_t *)p->vcpus;
        q->nr_vcpus = VN_MIN(p->nr_vcpus, PROTO_MAX_PROC_VCPUS);
        q->node_pages = (uint64_t *)p->node_pages;
        q->nr_node_pages = nodes;
        q->ranges = s->ranges[i];
        q->nr_ranges = VN_MIN(p->nr_ranges, PROTO_MAX_PROC_RANGES);
        for (unsigned k = 0; k < q->nr_ranges; k++)
            s->ranges[i][k] = (proto_range){
                .gpa = p->ranges[k].gpa,
                .length = p->ranges[k].length,
                .heat = VN_MIN(p->ranges[k].heat, PROTO_MAX_HEAT),
            };
    }
}

static int reply_error(serve *s, uint32_t id, int perr, const char *desc, char **ret_reply,
                       size_t *ret_len)
{
    s->errors++;
    if (proto_encode_error(id, proto_error_class((proto_error)perr), desc, ret_reply, ret_len) < 0)
        return -ENOMEM;
    return 0;
}

static int reply_hints(serve *s, uint32_t id, char **ret_reply, size_t *ret_len)
{
    const ag_hints *h = NULL;
    proto_hints wire;
    int r = s->hints(s->userdata, &s->cfg, &h);

    if (r < 0 || !h) {
        char desc[128];
        snprintf(desc, sizeof(desc), "collection failed: %s", strerror(-r));
        return reply_error(s, id, PROTO_ERR_NOMEM, desc, ret_reply, ret_len);
    }
    serve_to_proto(s, h, &wire);
    /* too big for one line: report fewer processes (the coldest go first) */
    for (;;) {
        r = proto_encode_hints_reply(id, &wire, ret_reply, ret_len);
        if (r != -PROTO_ERR_OVERSIZE || wire.nr_processes == 0)
            break;
        wire.nr_processes--;
    }
    if (r == -PROTO_ERR_NOMEM)
        return -ENOMEM;
    if (r < 0)
        return reply_error(s, id, -r, "cannot encode the hint set", ret_reply, ret_len);
    return 0;
}

int serve_line(serve *s, const char *line, size_t len, char **ret_reply, size_t *ret_len)
{
    proto_request req;
    uint32_t id = 0;
    char err[256] = "";
    int r;

    s->requests++;
    r = proto_decode_request(line, len, s->version, &req, &id, err, sizeof(err));
    if (r < 0)
        return reply_error(s, id, -r, err, ret_reply, ret_len);
    switch (req.msg) {
    case PROTO_MSG_HELLO: {
        proto_hello_reply h = {0};
        unsigned v = proto_choose_version(req.hello.versions);

        if (v == 0)
            return reply_error(s, req.id, PROTO_ERR_VERSION, "no common protocol version",
                               ret_reply, ret_len);
        s->version = v;
        h.version = v;
        snprintf(h.agent, sizeof(h.agent), "%s", s->agent);
        h.caps = s->caps & proto_known_caps();
        h.nodes = s->nr_nodes;
        h.vcpus = s->nr_vcpus;
        r = proto_encode_hello_reply(req.id, &h, ret_reply, ret_len);
        break;
    }
    case PROTO_MSG_GET_HINTS:
        s->cfg = collect_cfg_clamp((collect_cfg){
            .interval_ms = req.get_hints.interval_ms,
            .max_processes = req.get_hints.max_processes,
            .scan_budget_mib = req.get_hints.scan_budget_mib,
        });
        r = reply_hints(s, req.id, ret_reply, ret_len);
        break;
    default:
        return reply_error(s, req.id, PROTO_ERR_COMMAND, "unknown command", ret_reply, ret_len);
    }
    if (r == -PROTO_ERR_NOMEM || r == -ENOMEM)
        return -ENOMEM;
    if (r < 0)
        return reply_error(s, req.id, -r, "cannot encode the reply", ret_reply, ret_len);
    s->last_reply_len = *ret_len;
    return 0;
}
