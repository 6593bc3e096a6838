/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Snapshot JSON (docs/snapshot-format.md) to a `snapshot` value.
 *
 * The input is untrusted. Each parse_* function below takes one JSON value,
 * checks it completely (type, range, unknown fields, counts) and writes its
 * out-parameter only on success. The JSON path of the value being checked is
 * kept in snap_ctx.path, so the one place that detects an error also formats
 * it, once, as "ORIGIN: PATH: reason". The values they are built of (numbers,
 * nodes, fields, bindings, CPU lists) are checked by snapshot_values.c.
 *
 * Everything is built into a temporary snapshot that is freed on error, so the
 * caller's *ret is written only when the whole document is valid.
 */
#include "snapshot.h"

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "json.h"
#include "snapshot_values.h"
#include "util.h"

/* The only format version this parser reads. */
#define SNAP_VERSION 1
/* Field limits of the format (docs/snapshot-format.md lists them too). */
#define SNAP_MAX_AGE_PASSES    1000000000u
#define SNAP_MAX_ORDER_BYTES   (1ULL << 50) /* a PiB */
#define SNAP_PRIORITY_MIN      (-100)
#define SNAP_PRIORITY_MAX      100
#define SNAP_MAX_CELL_ID       1023
#define SNAP_MAX_VCPU_ID       4095
#define SNAP_PAGE_SIZE_DEFAULT 4096u
#define SNAP_PAGE_SIZE_MIN     4096u
#define SNAP_PAGE_SIZE_MAX     VN_GIB
#define SNAP_UUID_LEN          36

/* Initial read buffer of snap_load_file() for inputs whose size is unknown. */
#define SNAP_READ_CHUNK (64u * 1024)

/* {"<node>": pages, ...} into pages[node index]; pages * page_size fits and fits on the node. */
static int parse_pages(snap_ctx *c, struct json_object *obj, uint64_t page_size, uint64_t *pages)
{
    struct json_object_iterator it, end;
    int r;

    r = snap_expect_object(c, obj);
    if (r < 0)
        return r;
    it = json_object_iter_begin(obj);
    end = json_object_iter_end(obj);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        const char *key = json_object_iter_peek_name(&it);
        struct json_object *v = json_object_iter_peek_value(&it);
        size_t mark = vn_path_push_key(c, key);
        uint64_t n, bytes;
        int idx = -1;

        r = snap_parse_node_key(c, key, &idx);
        if (r < 0)
            return r;
        r = snap_parse_uint(c, v, UINT64_MAX, &n);
        if (r < 0)
            return r;
        if (__builtin_mul_overflow(n, page_size, &bytes))
            return snap_fail(c, -EINVAL,
                             "%" PRIu64 " pages of %" PRIu64 " bytes overflow a 64-bit byte count",
                             n, page_size);
        if (bytes > c->t->nodes[idx].mem_total)
            return snap_fail(c, -EINVAL,
                             "%" PRIu64 " bytes of pages exceed the %" PRIu64
                             " bytes of host node %s",
                             bytes, c->t->nodes[idx].mem_total, key);
        pages[idx] = n;
        vn_path_pop(c, mark);
    }
    return 0;
}

static int parse_vcpu(snap_ctx *c, struct json_object *obj, uint64_t *vcpu_seen, snap_vcpu *out)
{
    static const char *const known[] = {"id", "busy", "allowed", "pinned", "cpu", "fixed", NULL};
    snap_vcpu vc = {.cpu = -1};
    struct json_object *v = NULL;
    uint64_t id = 0;
    int64_t cpu = -1;
    size_t mark;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "id", true, SNAP_MAX_VCPU_ID, &id);
    if (r < 0)
        return r;
    if (vcpu_seen[id / 64] & (1ULL << (id % 64))) {
        (void)vn_path_push_key(c, "id");
        return snap_fail(c, -EINVAL, "duplicate vCPU id %" PRIu64 " in this domain", id);
    }
    vc.id = (unsigned)id;
    r = snap_field_number(c, obj, "busy", false, 0.0, 1.0, &vc.busy);
    if (r < 0)
        return r;
    r = snap_field_enter(c, obj, "allowed", true, &v, &mark);
    if (r < 0)
        return r;
    r = snap_parse_cpulist(c, v, &vc.allowed);
    if (r < 0)
        return r;
    vn_path_pop(c, mark);
    vc.pinned = vc.allowed;
    r = snap_field_enter(c, obj, "pinned", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, snap_parse_cpulist(c, v, &vc.pinned));
    if (r < 0)
        return r;
    r = snap_field_int(c, obj, "cpu", false, -1, VN_MAX_CPUS - 1, &cpu);
    if (r < 0)
        return r;
    if (cpu >= 0 && !cpuset_isset(&c->t->cpus, (unsigned)cpu)) {
        (void)vn_path_push_key(c, "cpu");
        return snap_fail(c, -EINVAL, "CPU %" PRId64 " is not a CPU of the host topology", cpu);
    }
    vc.cpu = (int)cpu;
    r = snap_field_bool(c, obj, "fixed", false, &vc.fixed);
    if (r < 0)
        return r;
    vcpu_seen[id / 64] |= 1ULL << (id % 64);
    *out = vc;
    return 0;
}

static int parse_hot_range(snap_ctx *c, struct json_object *obj, snap_hot_range *out)
{
    static const char *const known[] = {"gpa", "length", "heat", "shared", NULL};
    snap_hot_range h = {0};
    uint64_t end;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "gpa", true, UINT64_MAX, &h.gpa);
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "length", true, UINT64_MAX, &h.length);
    if (r < 0)
        return r;
    if (h.length == 0 || __builtin_add_overflow(h.gpa, h.length, &end)) {
        (void)vn_path_push_key(c, "length");
        if (h.length == 0)
            return snap_fail(c, -EINVAL, "a hot range cannot be empty");
        return snap_fail(c, -EINVAL, "gpa + length overflows a 64-bit address");
    }
    r = snap_field_number(c, obj, "heat", true, 0.0, 1.0, &h.heat);
    if (r < 0)
        return r;
    r = snap_field_bool(c, obj, "shared", false, &h.shared);
    if (r < 0)
        return r;
    *out = h;
    return 0;
}

static int parse_share(snap_ctx *c, struct json_object *obj, snap_share *out)
{
    static const char *const known[] = {"cell", "weight", NULL};
    snap_share sh = {0};
    uint64_t cell = 0;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "cell", true, SNAP_MAX_CELL_ID, &cell);
    if (r < 0)
        return r;
    sh.cell = (unsigned)cell;
    r = snap_field_number(c, obj, "weight", true, 0.0, 1.0, &sh.weight);
    if (r < 0)
        return r;
    *out = sh;
    return 0;
}

/* Hottest first; equal heat: lower gpa first; stable otherwise (insertion sort, n is small). */
static void sort_hot_ranges(snap_hot_range *h, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        snap_hot_range x = h[i];
        unsigned j = i;

        while (j > 0 &&
               (h[j - 1].heat < x.heat || (h[j - 1].heat == x.heat && h[j - 1].gpa > x.gpa))) {
            h[j] = h[j - 1];
            j--;
        }
        h[j] = x;
    }
}

/* Parse array `key` of obj (0..max entries) into a calloc'ed array of `size`-byte elements. */
static int parse_list(snap_ctx *c, struct json_object *obj, const char *key, size_t max,
                      size_t size, int (*parse_one)(snap_ctx *, struct json_object *, void *),
                      void **ret, unsigned *ret_n)
{
    _cleanup_free_ void *arr = NULL;
    struct json_object *v = NULL;
    size_t n, mark;
    int r;

    r = snap_field_enter(c, obj, key, false, &v, &mark);
    if (r <= 0)
        return r;
    r = snap_expect_array(c, v, 0, max, &n);
    if (r < 0)
        return r;
    if (n > 0) {
        arr = calloc(n, size);
        if (!arr)
            return snap_fail(c, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        size_t imark = vn_path_push_index(c, i);
        r = parse_one(c, json_object_array_get_idx(v, i), (char *)arr + i * size);
        if (r < 0)
            return r;
        vn_path_pop(c, imark);
    }
    vn_path_pop(c, mark);
    *ret = VN_TAKE_PTR(arr);
    *ret_n = (unsigned)n;
    return 0;
}

static int parse_hot_one(snap_ctx *c, struct json_object *v, void *out)
{
    return parse_hot_range(c, v, out);
}

static int parse_share_one(snap_ctx *c, struct json_object *v, void *out)
{
    return parse_share(c, v, out);
}

/* "hints": {"hot_ranges": [...], "hot_pages": {...}, "shares": [...]}; fills cell->hot,
 * hot_pages and shares (cell->page_size known). */
static int parse_hints(snap_ctx *c, struct json_object *obj, snap_cell *cell)
{
    static const char *const known[] = {"hot_ranges", "hot_pages", "shares", NULL};
    struct json_object *v = NULL;
    void *hot = NULL, *shares = NULL;
    unsigned nr_hot = 0, nr_shares = 0;
    size_t mark;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_enter(c, obj, "hot_pages", false, &v, &mark);
    if (r > 0) {
        if (snap_cell_hot_nodes(cell) < 0)
            return snap_fail(c, -ENOMEM, "out of memory");
        r = snap_field_leave(c, mark, parse_pages(c, v, cell->page_size, cell->hot_pages));
    }
    if (r < 0)
        return r;
    r = parse_list(c, obj, "hot_ranges", SNAP_MAX_HOT_RANGES, sizeof(snap_hot_range), parse_hot_one,
                   &hot, &nr_hot);
    if (r < 0)
        return r;
    r = parse_list(c, obj, "shares", SNAP_MAX_SHARES, sizeof(snap_share), parse_share_one, &shares,
                   &nr_shares);
    if (r < 0) {
        free(hot);
        return r;
    }
    sort_hot_ranges(hot, nr_hot);
    cell->hot = hot;
    cell->nr_hot = nr_hot;
    cell->shares = shares;
    cell->nr_shares = nr_shares;
    return 0;
}

/*
 * One cell. *out is zeroed by the caller and owned by the snapshot being
 * built: what is allocated into it is freed by snapshot_clear() on error.
 */
static int parse_cell(snap_ctx *c, struct json_object *obj, const vn_mem_binding *dom_binding,
                      uint64_t *cell_seen, uint64_t *vcpu_seen, snap_cell *out)
{
    static const char *const known[] = {
        "id",    "numatune",      "page_size", "pages",      "last_candidate", "vcpus",
        "hints", "memory_pinned", "down_ago",  "order_left", "move_granule",   NULL};
    struct json_object *v = NULL;
    uint64_t id = 0;
    size_t n, mark;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    if (snap_cell_nodes(out, c->t->nr_nodes) < 0)
        return snap_fail(c, -ENOMEM, "out of memory");
    r = snap_field_uint(c, obj, "id", true, SNAP_MAX_CELL_ID, &id);
    if (r < 0)
        return r;
    if (cell_seen[id / 64] & (1ULL << (id % 64))) {
        (void)vn_path_push_key(c, "id");
        return snap_fail(c, -EINVAL, "duplicate cell id %" PRIu64 " in this domain", id);
    }
    cell_seen[id / 64] |= 1ULL << (id % 64);
    out->id = (unsigned)id;
    out->last_candidate = -1;
    out->binding = *dom_binding;
    out->page_size = SNAP_PAGE_SIZE_DEFAULT;

    r = snap_field_enter(c, obj, "numatune", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, snap_parse_binding(c, v, &out->binding));
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "page_size", false, SNAP_PAGE_SIZE_MAX, &out->page_size);
    if (r < 0)
        return r;
    if (out->page_size < SNAP_PAGE_SIZE_MIN || (out->page_size & (out->page_size - 1))) {
        (void)vn_path_push_key(c, "page_size");
        return snap_fail(c, -EINVAL, "expected a power of two from %u to %llu, got %" PRIu64,
                         SNAP_PAGE_SIZE_MIN, SNAP_PAGE_SIZE_MAX, out->page_size);
    }
    out->granule = out->page_size;
    r = snap_field_uint(c, obj, "move_granule", false, SNAP_PAGE_SIZE_MAX, &out->granule);
    if (r < 0)
        return r;
    if (out->granule < out->page_size || (out->granule & (out->granule - 1))) {
        (void)vn_path_push_key(c, "move_granule");
        return snap_fail(c, -EINVAL,
                         "expected a power of two from the page size to %llu, got %" PRIu64,
                         SNAP_PAGE_SIZE_MAX, out->granule);
    }
    r = snap_field_enter(c, obj, "pages", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, parse_pages(c, v, out->page_size, out->pages));
    if (r < 0)
        return r;
    r = snap_field_node(c, obj, "last_candidate", false, true, &out->last_candidate);
    if (r < 0)
        return r;
    uint64_t ago = 0;
    r = snap_field_uint(c, obj, "down_ago", false, SNAP_MAX_AGE_PASSES, &ago);
    if (r < 0)
        return r;
    out->down_ago = (unsigned)ago;
    r = snap_field_uint(c, obj, "order_left", false, SNAP_MAX_ORDER_BYTES, &out->order_left);
    if (r < 0)
        return r;
    if (json_object_object_get_ex(obj, "memory_pinned", NULL)) {
        int pin = 0;
        r = snap_field_name(c, obj, "memory_pinned", mem_pin_from_name,
                            "\"none\", \"vfio\", \"locked\", \"launch-security\" or \"refused\"",
                            &pin);
        if (r < 0)
            return r;
        out->mem_pinned = (vn_mem_pin)pin;
    }

    r = snap_field_enter(c, obj, "vcpus", true, &v, &mark);
    if (r < 0)
        return r;
    /* none: a memory-only cell (guest memory exposed as a node without CPUs) */
    r = snap_expect_array(c, v, 0, SNAP_MAX_VCPUS_PER_CELL, &n);
    if (r < 0)
        return r;
    out->vcpus = calloc(n, sizeof(*out->vcpus));
    if (!out->vcpus)
        return snap_fail(c, -ENOMEM, "out of memory");
    out->nr_vcpus = (unsigned)n;
    for (size_t i = 0; i < n; i++) {
        size_t imark = vn_path_push_index(c, i);
        r = parse_vcpu(c, json_object_array_get_idx(v, i), vcpu_seen, &out->vcpus[i]);
        if (r < 0)
            return r;
        vn_path_pop(c, imark);
    }
    vn_path_pop(c, mark);

    r = snap_field_enter(c, obj, "hints", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, parse_hints(c, v, out));
    if (r < 0)
        return r;
    return 0;
}

/* Every share names another cell of the domain, each at most once. */
static int check_shares(snap_ctx *c, const snap_domain *d, const uint64_t *cell_seen)
{
    for (unsigned ci = 0; ci < d->nr_cells; ci++) {
        const snap_cell *cell = &d->cells[ci];
        for (unsigned si = 0; si < cell->nr_shares; si++) {
            unsigned other = cell->shares[si].cell;
            const char *reason = NULL;

            if (other == cell->id)
                reason = "a cell cannot share with itself";
            else if (!(cell_seen[other / 64] & (1ULL << (other % 64))))
                reason = "no cell with this id in the domain";
            for (unsigned sj = 0; sj < si && !reason; sj++)
                if (cell->shares[sj].cell == other)
                    reason = "cell listed twice in shares";
            if (reason) {
                (void)vn_path_push_key(c, "cells");
                (void)vn_path_push_index(c, ci);
                vn_path_append(c, ".hints.shares[%u].cell", si);
                return snap_fail(c, -EINVAL, "%s (cell %u)", reason, other);
            }
        }
    }
    return 0;
}

/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", hex digits of either case. */
static bool uuid_valid(const char *s, size_t len)
{
    if (len != SNAP_UUID_LEN)
        return false;
    for (size_t i = 0; i < len; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i]) || s[i] == '\0')
            return false;
    }
    return true;
}

/* "balancer": {"mode": ..., "priority": ..., "nodes": [...], "tier": ...} */
static int parse_balancer(snap_ctx *c, struct json_object *obj, snap_domain *d)
{
    static const char *const known[] = {"mode", "priority", "nodes", "tier", NULL};
    struct json_object *v = NULL;
    int64_t prio = 0;
    size_t mark;
    int m, tier = VN_TIER_AUTO, r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    r = snap_field_name(c, obj, "mode", mode_from_name, "\"auto\", \"advise\" or \"off\"", &m);
    if (r < 0)
        return r;
    r = snap_field_int(c, obj, "priority", false, SNAP_PRIORITY_MIN, SNAP_PRIORITY_MAX, &prio);
    if (r < 0)
        return r;
    r = snap_field_enter(c, obj, "nodes", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, snap_parse_node_set(c, v, &d->allowed_nodes));
    if (r < 0)
        return r;
    if (json_object_object_get_ex(obj, "tier", NULL)) {
        r = snap_field_name(c, obj, "tier", tier_from_name, "\"auto\", \"off\" or \"cold-first\"",
                            &tier);
        if (r < 0)
            return r;
    }
    d->mode = (vn_mode)m;
    d->priority = (int)prio;
    d->tier = (vn_tier)tier;
    return 0;
}

/* One domain; *d is zeroed by the caller and owned by the snapshot being built. */
static int parse_domain(snap_ctx *c, struct json_object *obj, snap_domain *d)
{
    static const char *const known[] = {
        "name",           "uuid",        "balancer", "age_passes",
        "preferred_node", "numatune",    "cells",    "busy_unmeasured",
        "hints_pending",  "hint_passes", NULL};
    uint64_t cell_seen[(SNAP_MAX_CELL_ID + 1) / 64] = {0};
    uint64_t vcpu_seen[(SNAP_MAX_VCPU_ID + 1) / 64] = {0};
    vn_mem_binding binding = {.mode = VN_MEM_NONE};
    struct json_object *v = NULL;
    uint64_t age = 0;
    const char *s;
    size_t len, n, mark;
    int r;

    r = snap_expect_fields(c, obj, known);
    if (r < 0)
        return r;
    d->mode = VN_MODE_OFF;
    d->preferred_node = -1;

    r = snap_field_string(c, obj, "name", true, &s, &len, &mark);
    if (r < 0)
        return r;
    if (len == 0 || len >= SNAP_NAME_MAX)
        return snap_fail(c, -EINVAL, "expected 1 to %d bytes, got %zu", SNAP_NAME_MAX - 1, len);
    memcpy(d->name, s, len);
    vn_path_pop(c, mark);

    r = snap_field_string(c, obj, "uuid", false, &s, &len, &mark);
    if (r < 0)
        return r;
    if (r > 0) {
        if (!uuid_valid(s, len))
            return snap_fail(c, -EINVAL,
                             "expected a UUID like \"8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a90\"");
        memcpy(d->uuid, s, len);
        vn_path_pop(c, mark);
    }

    r = snap_field_enter(c, obj, "balancer", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, parse_balancer(c, v, d));
    if (r < 0)
        return r;
    r = snap_field_uint(c, obj, "age_passes", false, SNAP_MAX_AGE_PASSES, &age);
    if (r < 0)
        return r;
    d->age_passes = (unsigned)age;
    r = snap_field_uint(c, obj, "hint_passes", false, SNAP_MAX_AGE_PASSES, &age);
    if (r < 0)
        return r;
    d->hint_passes = (unsigned)age;
    r = snap_field_node(c, obj, "preferred_node", false, true, &d->preferred_node);
    if (r < 0)
        return r;
    r = snap_field_bool(c, obj, "busy_unmeasured", false, &d->busy_unmeasured);
    if (r >= 0)
        r = snap_field_bool(c, obj, "hints_pending", false, &d->hints_pending);
    if (r < 0)
        return r;
    r = snap_field_enter(c, obj, "numatune", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, snap_parse_binding(c, v, &binding));
    if (r < 0)
        return r;

    r = snap_field_enter(c, obj, "cells", true, &v, &mark);
    if (r < 0)
        return r;
    r = snap_expect_array(c, v, 1, SNAP_MAX_CELLS_PER_DOMAIN, &n);
    if (r < 0)
        return r;
    d->cells = calloc(n, sizeof(*d->cells));
    if (!d->cells)
        return snap_fail(c, -ENOMEM, "out of memory");
    d->nr_cells = (unsigned)n;
    for (size_t i = 0; i < n; i++) {
        size_t imark = vn_path_push_index(c, i);
        r = parse_cell(c, json_object_array_get_idx(v, i), &binding, cell_seen, vcpu_seen,
                       &d->cells[i]);
        if (r < 0)
            return r;
        vn_path_pop(c, imark);
    }
    {
        unsigned with_vcpus = 0;
        for (unsigned i = 0; i < d->nr_cells; i++)
            with_vcpus += d->cells[i].nr_vcpus > 0;
        if (!with_vcpus)
            return snap_fail(c, -EINVAL,
                             "no cell has a vCPU (memory-only cells need another "
                             "cell with vCPUs)");
    }
    vn_path_pop(c, mark);
    return check_shares(c, d, cell_seen);
}

static int compare_domain_names(const void *a, const void *b)
{
    const snap_domain *x = *(const snap_domain *const *)a, *y = *(const snap_domain *const *)b;
    int r = strcmp(x->name, y->name);

    return r ? r : (x > y) - (x < y);
}

/* Domain names are unique; the error names the first duplicate in input order. */
static int check_domain_names(snap_ctx *c, const snapshot *s)
{
    _cleanup_free_ const snap_domain **sorted = NULL;
    char shown[SNAP_SHOWN_MAX + 8];
    size_t dup = SIZE_MAX, first = 0;

    if (s->nr_domains < 2)
        return 0;
    sorted = calloc(s->nr_domains, sizeof(*sorted));
    if (!sorted)
        return snap_fail(c, -ENOMEM, "out of memory");
    for (unsigned i = 0; i < s->nr_domains; i++)
        sorted[i] = &s->domains[i];
    qsort(sorted, s->nr_domains, sizeof(*sorted), compare_domain_names);
    for (unsigned i = 1; i < s->nr_domains; i++) {
        size_t idx = (size_t)(sorted[i] - s->domains);
        if (strcmp(sorted[i]->name, sorted[i - 1]->name) == 0 && idx < dup) {
            /* sorted[i - 1] is the run's first occurrence only when it differs from its
             * predecessor; walk back to it for the message. */
            unsigned j = i - 1;
            while (j > 0 && strcmp(sorted[j - 1]->name, sorted[i]->name) == 0)
                j--;
            dup = idx;
            first = (size_t)(sorted[j] - s->domains);
        }
    }
    if (dup == SIZE_MAX)
        return 0;
    copy_shown(shown, sizeof(shown), s->domains[dup].name, strlen(s->domains[dup].name));
    (void)vn_path_push_key(c, "domains");
    (void)vn_path_push_index(c, dup);
    (void)vn_path_push_key(c, "name");
    return snap_fail(c, -EINVAL, "duplicate domain name \"%s\" (also domains[%zu])", shown, first);
}

/* "free_hugepages": {"<page size in bytes>": free pages, ...} of one host node */
static int parse_free_huge(snap_ctx *c, struct json_object *obj, const topo_node *tn,
                           topo_huge out[TOPO_HUGE_SIZES])
{
    topo_huge tmp[TOPO_HUGE_SIZES] = {0};
    unsigned nr = 0;
    int r;

    r = snap_expect_object(c, obj);
    if (r < 0)
        return r;
    json_object_object_foreach(obj, key, val)
    {
        size_t mark = vn_path_push_key(c, key);
        uint64_t size = 0, pages = 0;

        if (vn_parse_u64(key, SNAP_PAGE_SIZE_MIN, SNAP_PAGE_SIZE_MAX, &size) < 0 ||
            (size & (size - 1)))
            return snap_fail(c, -EINVAL,
                             "expected a page size in bytes, a power of two from %u to %llu",
                             SNAP_PAGE_SIZE_MIN, SNAP_PAGE_SIZE_MAX);
        if (nr >= TOPO_HUGE_SIZES)
            return snap_fail(c, -E2BIG, "more than %u huge page sizes", TOPO_HUGE_SIZES);
        r = snap_parse_uint(c, val, tn->mem_total / size, &pages);
        if (r < 0)
            return r;
        for (unsigned i = 0; i < nr; i++)
            if (tmp[i].page_size == size)
                return snap_fail(c, -EINVAL, "page size listed twice");
        tmp[nr++] = (topo_huge){.page_size = size, .free_pages = pages};
        vn_path_pop(c, mark);
    }
    memcpy(out, tmp, sizeof(tmp));
    return 0;
}

/* "nodes": [{"node": N, "free_bytes": B, "other_busy": X, "free_hugepages": {...}}, ...] */
static int parse_host_nodes(snap_ctx *c, struct json_object *arr, snapshot *s)
{
    static const char *const known[] = {"node", "free_bytes", "other_busy", "free_hugepages", NULL};
    vn_nodeset seen = {.nw = 0};
    size_t n;
    int r;

    r = snap_expect_array(c, arr, 0, VN_MAX_NODES, &n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++) {
        size_t mark = vn_path_push_index(c, i);
        struct json_object *obj = json_object_array_get_idx(arr, i);
        const topo_node *tn;
        uint64_t free_bytes = 0;
        double busy = 0;
        int idx = -1;

        r = snap_expect_fields(c, obj, known);
        if (r < 0)
            return r;
        r = snap_field_node(c, obj, "node", true, false, &idx);
        if (r < 0)
            return r;
        tn = &c->t->nodes[idx];
        if (nodeset_isset(&seen, (unsigned)idx)) {
            (void)vn_path_push_key(c, "node");
            return snap_fail(c, -EINVAL, "host node %u listed twice", tn->os_index);
        }
        nodeset_set(&seen, (unsigned)idx);
        r = snap_field_uint(c, obj, "free_bytes", false, tn->mem_total, &free_bytes);
        if (r < 0)
            return r;
        if (r > 0) {
            s->free_known[idx] = true;
            s->free_bytes[idx] = free_bytes;
        }
        r = snap_field_number(c, obj, "other_busy", false, 0.0, (double)tn->nr_cpus, &busy);
        if (r < 0)
            return r;
        s->other_busy[idx] = busy;
        {
            struct json_object *h = NULL;
            size_t hmark;
            r = snap_field_enter(c, obj, "free_hugepages", false, &h, &hmark);
            if (r > 0)
                r = snap_field_leave(c, hmark, parse_free_huge(c, h, tn, s->free_huge[idx]));
            if (r < 0)
                return r;
        }
        vn_path_pop(c, mark);
    }
    return 0;
}

static int parse_root(snap_ctx *c, struct json_object *root, snapshot *s)
{
    static const char *const known[] = {"version", "pass", "nodes", "domains", NULL};
    struct json_object *v = NULL;
    int64_t version = 0;
    size_t n, mark;
    int r;

    r = snap_expect_object(c, root);
    if (r < 0)
        return r;
    /* The version first: a newer document may well have fields this parser does not know. */
    r = snap_field_int(c, root, "version", true, 0, INT32_MAX, &version);
    if (r < 0)
        return r;
    if (version != SNAP_VERSION) {
        (void)vn_path_push_key(c, "version");
        return snap_fail(c, -EINVAL,
                         "unsupported version %" PRId64 " (this vnuma reads version %d)", version,
                         SNAP_VERSION);
    }
    r = snap_check_fields(c, root, known);
    if (r < 0)
        return r;
    r = snap_field_uint(c, root, "pass", false, UINT64_MAX, &s->pass);
    if (r < 0)
        return r;
    r = snap_field_enter(c, root, "nodes", false, &v, &mark);
    if (r > 0)
        r = snap_field_leave(c, mark, parse_host_nodes(c, v, s));
    if (r < 0)
        return r;

    r = snap_field_enter(c, root, "domains", true, &v, &mark);
    if (r < 0)
        return r;
    r = snap_expect_array(c, v, 0, SNAP_MAX_DOMAINS, &n);
    if (r < 0)
        return r;
    if (n > 0) {
        s->domains = calloc(n, sizeof(*s->domains));
        if (!s->domains)
            return snap_fail(c, -ENOMEM, "out of memory");
        s->nr_domains = (unsigned)n;
    }
    for (size_t i = 0; i < n; i++) {
        size_t imark = vn_path_push_index(c, i);
        r = parse_domain(c, json_object_array_get_idx(v, i), &s->domains[i]);
        if (r < 0)
            return r;
        vn_path_pop(c, imark);
    }
    vn_path_pop(c, mark);
    return check_domain_names(c, s);
}

/* "line L, column C" of byte offset `off` in text, as the path of a syntax error. */
static void path_set_position(snap_ctx *c, const char *text, size_t off)
{
    size_t line = 1, col = 1;

    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    vn_path_pop(c, 0);
    vn_path_append(c, "line %zu, column %zu", line, col);
}

int snap_parse(const char *text, size_t len, const char *origin, const topology *t, snapshot *ret,
               char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_(snapshot_clear) snapshot tmp = {0};
    snap_ctx c = {.origin = origin ? origin : "snapshot",
                  .t = t,
                  .err = err,
                  .errlen = errlen,
                  .path = SNAP_CTX_PATH};
    vn_json_doc doc;
    int r;

    assert(t && ret && (text || len == 0));
    if (len > SNAP_MAX_FILE_BYTES)
        return snap_fail(&c, -E2BIG, "input is %zu bytes, at most %u accepted", len,
                         SNAP_MAX_FILE_BYTES);
    switch (vn_json_parse(text, len, SNAP_MAX_DEPTH, &doc)) {
    case VN_JSON_OK:
        root = doc.root;
        break;
    case VN_JSON_E_EMPTY:
        return snap_fail(&c, -EINVAL, "empty input");
    case VN_JSON_E_NOMEM:
        return snap_fail(&c, -ENOMEM, "out of memory");
    case VN_JSON_E_DEPTH:
        path_set_position(&c, text, doc.at);
        return snap_fail(&c, -E2BIG, "nesting deeper than %d levels", SNAP_MAX_DEPTH);
    case VN_JSON_E_TRAILING:
        path_set_position(&c, text, doc.at);
        return snap_fail(&c, -EINVAL, "unexpected data after the top-level value");
    case VN_JSON_E_DUPLICATE:
        return snap_fail(&c, -EINVAL, "%s", doc.why);
    default: /* where json-c or the scan stopped, and why */
        path_set_position(&c, text, doc.at);
        return snap_fail(&c, -EINVAL, "%s", doc.why);
    }

    r = parse_root(&c, root, &tmp);
    if (r < 0)
        return r;
    *ret = tmp;
    memset(&tmp, 0, sizeof(tmp));
    return 0;
}

int snap_load_file(const char *path, const topology *t, snapshot *ret, char *err, size_t errlen)
{
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL;
    snap_ctx c = {.origin = path, .t = t, .err = err, .errlen = errlen, .path = SNAP_CTX_PATH};
    size_t len = 0, cap;
    struct stat st;
    int r;

    assert(path && t && ret);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        r = -errno;
        return snap_fail(&c, r, "cannot open: %s", strerror(-r));
    }
    if (fstat(fd, &st) < 0) {
        r = -errno;
        return snap_fail(&c, r, "cannot stat: %s", strerror(-r));
    }
    if (S_ISDIR(st.st_mode))
        return snap_fail(&c, -EISDIR, "is a directory");
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > SNAP_MAX_FILE_BYTES)
        return snap_fail(&c, -E2BIG, "file is %jd bytes, at most %u accepted", (intmax_t)st.st_size,
                         SNAP_MAX_FILE_BYTES);
    /* Read one byte more than the limit, so an input that grew (or a pipe) is caught too. */
    cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : SNAP_READ_CHUNK;
    buf = malloc(cap);
    if (!buf)
        return snap_fail(&c, -ENOMEM, "out of memory");
    for (;;) {
        ssize_t n;

        if (len == cap) {
            size_t ncap = VN_MIN(cap * 2, (size_t)SNAP_MAX_FILE_BYTES + 1);
            char *nbuf;

            if (ncap == cap)
                return snap_fail(&c, -E2BIG, "input is over %u bytes", SNAP_MAX_FILE_BYTES);
            nbuf = realloc(buf, ncap);
            if (!nbuf)
                return snap_fail(&c, -ENOMEM, "out of memory");
            buf = nbuf;
            cap = ncap;
        }
        n = read(fd, buf + len, cap - len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            r = -errno;
            return snap_fail(&c, r, "cannot read: %s", strerror(-r));
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > SNAP_MAX_FILE_BYTES)
        return snap_fail(&c, -E2BIG, "input is over %u bytes", SNAP_MAX_FILE_BYTES);
    return snap_parse(buf, len, path, t, ret, err, errlen);
}
