/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Framing (newline-terminated lines, 0xFF resynchronisation, a fixed maximum
 * line size) and the per-peer message rate limit. Fixed memory, no
 * allocation, no clock: the caller passes the time.
 */
#include <assert.h>
#include <string.h>

#include "proto.h"

void proto_reader_init(proto_reader *r)
{
    assert(r);
    r->len = 0;
    r->discarding = false;
    r->lines = r->oversize = r->resyncs = 0;
    r->buf[0] = '\0';
}

size_t proto_reader_pending(const proto_reader *r)
{
    return r->discarding ? 0 : r->len;
}

int proto_reader_feed(proto_reader *r, const void *data, size_t len, size_t *ret_used,
                      const char **ret_line, size_t *ret_linelen)
{
    const unsigned char *p = data;

    assert(r && (data || len == 0) && ret_used && ret_line && ret_linelen);
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = p[i];

        if (ch == PROTO_RESYNC_BYTE) {
            /* The peer flushes: whatever came before is dropped, an overlong line too. */
            if (r->len || r->discarding)
                r->resyncs++;
            r->len = 0;
            r->discarding = false;
            continue;
        }
        if (ch == '\n') {
            size_t n = r->len;

            if (r->discarding) {
                r->discarding = false;
                continue;
            }
            r->len = 0;
            if (n && r->buf[n - 1] == '\r')
                n--;
            if (n == 0)
                continue; /* empty line */
            r->buf[n] = '\0';
            r->lines++;
            *ret_used = i + 1;
            *ret_line = r->buf;
            *ret_linelen = n;
            return 1;
        }
        if (r->discarding)
            continue;
        /* Content and its '\n' must fit in PROTO_MAX_LINE bytes. */
        if (r->len + 1 >= PROTO_MAX_LINE) {
            r->len = 0;
            r->discarding = true;
            r->oversize++;
            *ret_used = i + 1;
            return -PROTO_ERR_OVERSIZE;
        }
        r->buf[r->len++] = (char)ch;
    }
    *ret_used = len;
    return 0;
}

void proto_rate_init(proto_rate *rl, uint32_t per_sec, uint32_t burst)
{
    assert(rl && per_sec > 0 && burst > 0);
    memset(rl, 0, sizeof(*rl));
    rl->per_sec = per_sec;
    rl->burst = burst;
    rl->millitokens = (uint64_t)burst * 1000;
}

bool proto_rate_allow(proto_rate *rl, uint64_t now_ms)
{
    uint64_t cap = (uint64_t)rl->burst * 1000;

    if (!rl->started) {
        rl->started = true;
        rl->last_ms = now_ms;
    }
    if (now_ms > rl->last_ms) {
        uint64_t elapsed = now_ms - rl->last_ms;
        /* Refilling from empty takes burst * 1000 / per_sec ms: longer gaps only fill it. */
        uint64_t full = cap / rl->per_sec + 1;

        if (elapsed > full)
            elapsed = full;
        rl->millitokens += elapsed * rl->per_sec;
        if (rl->millitokens > cap)
            rl->millitokens = cap;
    }
    /* A clock that goes back refills nothing, and restarts from there. */
    rl->last_ms = now_ms;
    if (rl->millitokens < 1000) {
        rl->dropped++;
        return false;
    }
    rl->millitokens -= 1000;
    return true;
}
