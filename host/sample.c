/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 2: sample one running domain into a snap_domain.
 *
 * Sources, per pass:
 *   libvirt            vCPU times, current CPU and pinning; live XML (<vcpu cpuset>,
 *                      <numatune><memnode>); the domain's live numatune
 *   QMP query-cpus-fast vCPU -> guest cell (props.node-id)
 *   move_pages queries  pages per host node of each cell's RAM backend, in bounded windows
 *                      with a stride (rules 4 and 5), never for memory bound to one node
 *                      (rule 2)
 * and once per domain start (cached in dom_state.ram[]): where each cell's RAM backend
 * sits in the QEMU process (query-memdev, HMP "info mtree -f", HMP "gpa2hva").
 *
 * The reply parsers are strict: QEMU's replies pass through libvirt unchanged, and
 * anything not in the shape documented here is refused with a reason rather than
 * guessed at.
 */
#include "sample.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "rules.h"
#include "util.h"

/* Largest QMP reply accepted (a 1024-vCPU query-cpus-fast is ~200 KiB). */
#define QMP_REPLY_MAX (4u * 1024 * 1024)
/* Deepest JSON nesting in the replies we read is 4; leave room. */
#define QMP_DEPTH_MAX 16
/* Most memory backends one query-memdev reply may list. */
#define QMP_MEMDEV_MAX 1024
/* Largest HMP "info mtree -f" text accepted. */
#define HMP_TEXT_MAX (16u * 1024 * 1024)
/* Largest live domain XML accepted. */
#define SAMPLE_XML_MAX (16u * 1024 * 1024)
/* Bytes of untrusted text quoted in an error message. */
#define SAMPLE_SHOWN_MAX 64
/* Page size of the RAM backends sampled (hugepage backends are not handled yet). */
#define SAMPLE_PAGE_SIZE 4096u
/* Environment variable that moves libvirt's run directory (tests). */
#define SAMPLE_RUN_DIR_ENV     "VN_LIBVIRT_RUN_DIR"
#define SAMPLE_RUN_DIR_DEFAULT "/run/libvirt"

/* ---- helpers ---- */

static void xml_docp(xmlDoc **doc)
{
    if (*doc)
        xmlFreeDoc(*doc);
}

static void xml_charp(xmlChar **s)
{
    if (*s)
        xmlFree(*s);
}

#define _cleanup_xmlchar_ _cleanup_(xml_charp)

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, int r,
                                                      const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        (void)vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return r;
}

/* Copy untrusted text for an error message: printable ASCII only, at most SAMPLE_SHOWN_MAX. */
static const char *shown(char buf[SAMPLE_SHOWN_MAX + 4], const char *s)
{
    size_t n = 0;

    for (; s && *s && n < SAMPLE_SHOWN_MAX; s++)
        buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    if (s && *s) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    buf[n] = '\0';
    return buf;
}

static bool only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i]))
            return false;
    return true;
}

/* Parse hex digits at *p (no prefix) into *ret; advances *p. -EINVAL: none, -ERANGE: overflow. */
static int parse_hex(const char **p, const char *end, uint64_t *ret)
{
    uint64_t v = 0;
    const char *s = *p;
    int d;

    if (s >= end || !isxdigit((unsigned char)*s))
        return -EINVAL;
    for (; s < end && isxdigit((unsigned char)*s); s++) {
        d = isdigit((unsigned char)*s) ? *s - '0' : (tolower((unsigned char)*s) - 'a' + 10);
        if (v > (UINT64_MAX >> 4))
            return -ERANGE;
        v = (v << 4) | (uint64_t)d;
    }
    *p = s;
    *ret = v;
    return 0;
}

/* Consume the literal `lit` at *p. */
static bool skip_lit(const char **p, const char *end, const char *lit)
{
    size_t n = strlen(lit);

    if ((size_t)(end - *p) < n || memcmp(*p, lit, n) != 0)
        return false;
    *p += n;
    return true;
}

/* ---- QMP replies ---- */

/* json-c's gaps (lib/json.h) in a reply: the reason, or NULL. */
static const char *qmp_lenient_syntax(const char *text, size_t len)
{
    size_t at;
    vn_json_lenient l = vn_json_scan(text, len, &at, NULL);

    return l == VN_JSON_STRICT ? NULL : vn_json_lenient_str(l);
}

/*
 * Parse a QMP reply strictly (depth, size, nothing after the value) and return the
 * top-level object and its "return" member (borrowed from the root). A QMP error reply
 * ({"error":{"class":..,"desc":..}}) is -EINVAL with its class and description in err.
 */
static int qmp_parse_reply(const char *reply, struct json_object **ret_root,
                           struct json_object **ret_return, char *err, size_t errlen)
{
    _cleanup_tokener_ struct json_tokener *tok = NULL;
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *ret = NULL, *e = NULL, *cls = NULL, *desc = NULL;
    char b1[SAMPLE_SHOWN_MAX + 4], b2[SAMPLE_SHOWN_MAX + 4];
    enum json_tokener_error jerr;
    const char *why;
    size_t len, end;

    if (!reply)
        return fail(err, errlen, -EINVAL, "no reply");
    len = strnlen(reply, QMP_REPLY_MAX + 1);
    if (len > QMP_REPLY_MAX)
        return fail(err, errlen, -EINVAL, "reply longer than %u bytes", QMP_REPLY_MAX);
    if (only_space(reply, len))
        return fail(err, errlen, -EINVAL, "empty reply");

    tok = json_tokener_new_ex(QMP_DEPTH_MAX);
    if (!tok)
        return fail(err, errlen, -ENOMEM, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    root = json_tokener_parse_ex(tok, reply, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue)
        return fail(err, errlen, -EINVAL, "truncated reply");
    if (jerr != json_tokener_success)
        return fail(err, errlen, -EINVAL, "malformed reply at byte %zu: %s", end,
                    json_tokener_error_desc(jerr));
    if (end > len || !only_space(reply + end, len - end))
        return fail(err, errlen, -EINVAL, "unexpected data after the reply at byte %zu", end);
    why = qmp_lenient_syntax(reply, end);
    if (why)
        return fail(err, errlen, -EINVAL, "malformed reply: %s", why);
    if (!json_object_is_type(root, json_type_object))
        return fail(err, errlen, -EINVAL, "reply is not a JSON object");

    if (json_object_object_get_ex(root, "error", &e)) {
        if (json_object_is_type(e, json_type_object)) {
            (void)json_object_object_get_ex(e, "class", &cls);
            (void)json_object_object_get_ex(e, "desc", &desc);
        }
        return fail(
            err, errlen, -EINVAL, "QMP error %s: %s",
            shown(b1,
                  json_object_is_type(cls, json_type_string) ? json_object_get_string(cls) : "?"),
            shown(b2, json_object_is_type(desc, json_type_string) ? json_object_get_string(desc)
                                                                  : "?"));
    }
    if (!json_object_object_get_ex(root, "return", &ret))
        return fail(err, errlen, -EINVAL, "reply has no \"return\" member");
    *ret_return = ret;
    *ret_root = VN_TAKE_PTR(root);
    return 0;
}

/*
 * Integer member `key` of obj in [min, max]. -ENOENT when absent, -EINVAL with a reason
 * when not an integer or out of range.
 */
static int get_int(struct json_object *obj, const char *key, int64_t min, int64_t max,
                   const char *what, unsigned index, int64_t *ret, char *err, size_t errlen)
{
    struct json_object *v = NULL;
    int64_t x;

    if (!json_object_object_get_ex(obj, key, &v))
        return -ENOENT;
    if (!json_object_is_type(v, json_type_int))
        return fail(err, errlen, -EINVAL, "%s %u: \"%s\" is not an integer", what, index, key);
    errno = 0;
    x = json_object_get_int64(v);
    if (x < min || x > max || errno == ERANGE ||
        (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX))
        return fail(err, errlen, -EINVAL, "%s %u: \"%s\" out of range (%" PRId64 "..%" PRId64 ")",
                    what, index, key, min, max);
    *ret = x;
    return 0;
}

int qmp_parse_cpus_fast(const char *reply, qmp_vcpu **ret, unsigned *ret_n, char *err,
                        size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ qmp_vcpu *v = NULL;
    _cleanup_free_ uint8_t *seen = NULL;
    struct json_object *arr = NULL;
    size_t n;
    int r;

    if (!ret || !ret_n)
        return fail(err, errlen, -EINVAL, "no output");
    r = qmp_parse_reply(reply, &root, &arr, err, errlen);
    if (r < 0)
        return r;
    if (!json_object_is_type(arr, json_type_array))
        return fail(err, errlen, -EINVAL, "\"return\" is not an array");
    n = json_object_array_length(arr);
    if (n == 0)
        return fail(err, errlen, -EINVAL, "no vCPUs in the reply");
    if (n > STATE_MAX_VCPUS)
        return fail(err, errlen, -EINVAL, "%zu vCPUs, at most %u handled", n, STATE_MAX_VCPUS);

    v = calloc(n, sizeof(*v));
    seen = calloc(STATE_MAX_VCPUS, 1);
    if (!v || !seen)
        return fail(err, errlen, -ENOMEM, "out of memory");

    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(arr, i), *props = NULL;
        int64_t idx = 0, tid = 0, node = -1;

        if (!json_object_is_type(e, json_type_object))
            return fail(err, errlen, -EINVAL, "vCPU entry %zu is not an object", i);
        r = get_int(e, "cpu-index", 0, STATE_MAX_VCPUS - 1, "vCPU entry", (unsigned)i, &idx, err,
                    errlen);
        if (r == -ENOENT)
            return fail(err, errlen, -EINVAL, "vCPU entry %zu has no \"cpu-index\"", i);
        if (r < 0)
            return r;
        /* The top-level "thread-id" is the host thread; props.thread-id is the SMT thread. */
        r = get_int(e, "thread-id", 1, INT32_MAX, "vCPU", (unsigned)idx, &tid, err, errlen);
        if (r == -ENOENT)
            return fail(err, errlen, -EINVAL, "vCPU %" PRId64 " has no \"thread-id\"", idx);
        if (r < 0)
            return r;
        if (json_object_object_get_ex(e, "props", &props)) {
            if (!json_object_is_type(props, json_type_object))
                return fail(err, errlen, -EINVAL, "vCPU %" PRId64 ": \"props\" is not an object",
                            idx);
            r = get_int(props, "node-id", 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, "vCPU", (unsigned)idx,
                        &node, err, errlen);
            if (r == -ENOENT)
                node = -1;
            else if (r < 0)
                return r;
        }
        if (seen[idx])
            return fail(err, errlen, -EINVAL, "vCPU %" PRId64 " listed twice", idx);
        seen[idx] = 1;
        v[i] =
            (qmp_vcpu){.cpu_index = (unsigned)idx, .node_id = (int)node, .thread_id = (pid_t)tid};
    }
    *ret = VN_TAKE_PTR(v);
    *ret_n = (unsigned)n;
    return 0;
}

typedef struct memdev_info {
    const char *id; /* borrowed from the reply */
    uint64_t size;
    bool shared;
} memdev_info;

/*
 * Every backend of a query-memdev reply, checked. *ret (malloc'd) borrows its ids from
 * *ret_root, which the caller releases after use.
 */
static int memdev_parse_all(const char *reply, struct json_object **ret_root, memdev_info **ret,
                            size_t *ret_n, char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ memdev_info *m = NULL;
    struct json_object *arr = NULL;
    size_t n;
    int r;

    r = qmp_parse_reply(reply, &root, &arr, err, errlen);
    if (r < 0)
        return r;
    if (!json_object_is_type(arr, json_type_array))
        return fail(err, errlen, -EINVAL, "\"return\" is not an array");
    n = json_object_array_length(arr);
    if (n > QMP_MEMDEV_MAX)
        return fail(err, errlen, -EINVAL, "%zu memory backends, at most %u handled", n,
                    QMP_MEMDEV_MAX);
    m = calloc(n ? n : 1, sizeof(*m));
    if (!m)
        return fail(err, errlen, -ENOMEM, "out of memory");

    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(arr, i), *id = NULL, *share = NULL;
        char b[SAMPLE_SHOWN_MAX + 4];
        int64_t size = 0;

        if (!json_object_is_type(e, json_type_object))
            return fail(err, errlen, -EINVAL, "memory backend %zu is not an object", i);
        if (!json_object_object_get_ex(e, "id", &id) || !json_object_is_type(id, json_type_string))
            return fail(err, errlen, -EINVAL, "memory backend %zu has no string \"id\"", i);
        m[i].id = json_object_get_string(id);
        if (!*m[i].id || strlen(m[i].id) != (size_t)json_object_get_string_len(id))
            return fail(err, errlen, -EINVAL, "memory backend %zu has a bad \"id\"", i);
        r = get_int(e, "size", 1, INT64_MAX - 1, "memory backend", (unsigned)i, &size, err, errlen);
        if (r == -ENOENT)
            return fail(err, errlen, -EINVAL, "memory backend '%s' has no \"size\"",
                        shown(b, m[i].id));
        if (r < 0)
            return r;
        m[i].size = (uint64_t)size;
        if (!json_object_object_get_ex(e, "share", &share) ||
            !json_object_is_type(share, json_type_boolean))
            return fail(err, errlen, -EINVAL, "memory backend '%s' has no boolean \"share\"",
                        shown(b, m[i].id));
        m[i].shared = json_object_get_boolean(share);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m[j].id, m[i].id) == 0)
                return fail(err, errlen, -EINVAL, "memory backend '%s' listed twice",
                            shown(b, m[i].id));
    }
    *ret = VN_TAKE_PTR(m);
    *ret_n = n;
    *ret_root = VN_TAKE_PTR(root);
    return 0;
}

int qmp_parse_memdev(const char *reply, const char *id, uint64_t *ret_size, bool *ret_shared,
                     char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ memdev_info *m = NULL;
    char b[SAMPLE_SHOWN_MAX + 4];
    size_t n = 0;
    int r;

    if (!id || !*id)
        return fail(err, errlen, -EINVAL, "no backend id");
    r = memdev_parse_all(reply, &root, &m, &n, err, errlen);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].id, id) == 0) {
            if (ret_size)
                *ret_size = m[i].size;
            if (ret_shared)
                *ret_shared = m[i].shared;
            return 0;
        }
    return fail(err, errlen, -ENOENT, "no memory backend '%s'", shown(b, id));
}

/* ---- HMP replies ---- */

/* Next line of [*p, end) without its "\n" or "\r\n"; false at the end. */
static bool next_line(const char **p, const char *end, const char **ret_s, const char **ret_e)
{
    const char *s = *p, *e;

    if (s >= end)
        return false;
    e = memchr(s, '\n', (size_t)(end - s));
    *p = e ? e + 1 : end;
    if (!e)
        e = end;
    while (e > s && e[-1] == '\r')
        e--;
    *ret_s = s;
    *ret_e = e;
    return true;
}

static bool line_is(const char *s, const char *e, const char *lit)
{
    return (size_t)(e - s) == strlen(lit) && memcmp(s, lit, (size_t)(e - s)) == 0;
}

static bool line_ends_with(const char *s, const char *e, const char *lit)
{
    size_t n = strlen(lit);
    return (size_t)(e - s) >= n && memcmp(e - n, lit, n) == 0;
}

/*
 * One range line of a flat view:
 *   "  START-END (prio P, TYPE): NAME"  or  "... NAME @OFFSET"
 * Writes its fields (name as [ret_name, ret_name_end)) on success.
 */
static int mtree_parse_range(const char *s, const char *e, uint64_t *ret_start, uint64_t *ret_end,
                             const char **ret_type, size_t *ret_type_len, const char **ret_name,
                             size_t *ret_name_len, uint64_t *ret_off)
{
    const char *p = s, *type, *name, *name_end, *at;
    uint64_t start, last, off = 0;
    unsigned digits;

    if (!skip_lit(&p, e, "  ") || parse_hex(&p, e, &start) < 0 || !skip_lit(&p, e, "-") ||
        parse_hex(&p, e, &last) < 0 || !skip_lit(&p, e, " (prio "))
        return -EINVAL;
    (void)skip_lit(&p, e, "-"); /* priorities are signed */
    if (p >= e || !isdigit((unsigned char)*p))
        return -EINVAL;
    for (digits = 0; p < e && isdigit((unsigned char)*p); p++)
        if (++digits > 20)
            return -EINVAL;
    if (!skip_lit(&p, e, ", "))
        return -EINVAL;
    type = p;
    while (p < e && *p != ')')
        p++;
    if (p == type || !skip_lit(&p, e, "): "))
        return -EINVAL;
    if (last < start)
        return -EINVAL;
    *ret_type = type;
    *ret_type_len = (size_t)(p - 3 - type);

    name = p;
    name_end = e;
    /* optional " @OFFSET" at the end of the line */
    for (at = e; at > name && isxdigit((unsigned char)at[-1]); at--)
        ;
    if (at < e && at - name >= 2 && at[-1] == '@' && at[-2] == ' ') {
        const char *q = at;
        if (parse_hex(&q, e, &off) < 0 || q != e)
            return -EINVAL;
        name_end = at - 2;
    }
    if (name_end == name || memmem(name, (size_t)(name_end - name), " @", 2))
        return -EINVAL; /* empty, or a malformed " @OFFSET" */
    *ret_start = start;
    *ret_end = last;
    *ret_name = name;
    *ret_name_len = (size_t)(name_end - name);
    *ret_off = off;
    return 0;
}

int hmp_parse_mtree_ram(const char *text, const char *id, uint64_t *ret_gpa, uint64_t *ret_offset)
{
    const char *p, *end, *s, *e;
    bool in_system = false, saw_system = false, found = false;
    uint64_t best_gpa = UINT64_MAX, best_off = 0;
    size_t len, idlen;

    if (!text || !id || !*id)
        return -EINVAL;
    len = strnlen(text, HMP_TEXT_MAX + 1);
    if (len > HMP_TEXT_MAX)
        return -EINVAL;
    idlen = strlen(id);
    p = text;
    end = text + len;

    while (next_line(&p, end, &s, &e)) {
        uint64_t start, last, off;
        const char *type, *name;
        size_t type_len, name_len;

        if (e - s >= 10 && memcmp(s, "FlatView #", 10) == 0) {
            in_system = false;
            continue;
        }
        /* The flat view of the "system" root: either header line says so. */
        if (line_is(s, e, " Root memory region: system") ||
            (e - s > 5 && memcmp(s, " AS \"", 5) == 0 && line_ends_with(s, e, ", root: system"))) {
            in_system = saw_system = true;
            continue;
        }
        if (!in_system)
            continue;
        /* Inside the view, a line "  <hexdigit>..." must be a range line. */
        if (e - s < 3 || s[0] != ' ' || s[1] != ' ' || !isxdigit((unsigned char)s[2]))
            continue;
        if (mtree_parse_range(s, e, &start, &last, &type, &type_len, &name, &name_len, &off) < 0)
            return -EINVAL;
        if (type_len != 3 || memcmp(type, "ram", 3) != 0)
            continue;
        if (name_len != idlen || memcmp(name, id, idlen) != 0)
            continue;
        if (!found || start < best_gpa) {
            best_gpa = start;
            best_off = off;
            found = true;
        }
    }
    if (!saw_system)
        return -EINVAL;
    if (!found)
        return -ENOENT;
    if (ret_gpa)
        *ret_gpa = best_gpa;
    if (ret_offset)
        *ret_offset = best_off;
    return 0;
}

int hmp_parse_gpa2hva(const char *text, uint64_t *ret_hva)
{
    const char *p, *end, *q;
    uint64_t gpa, hva;
    size_t len;

    if (!text)
        return -EINVAL;
    len = strnlen(text, 4096 + 1);
    if (len > 4096)
        return -EINVAL;
    p = text;
    end = text + len;
    while (p < end && isspace((unsigned char)*p))
        p++;
    if (skip_lit(&p, end, "No memory is mapped at address"))
        return -ENOENT;
    if (!skip_lit(&p, end, "Host virtual address for 0x") || parse_hex(&p, end, &gpa) < 0 ||
        !skip_lit(&p, end, " ("))
        return -EINVAL;
    /* region name, up to the last ") is 0x" on the line */
    q = NULL;
    for (const char *c = p; c < end && *c != '\n' && *c != '\r'; c++)
        if ((size_t)(end - c) >= 7 && memcmp(c, ") is 0x", 7) == 0)
            q = c;
    if (!q || q == p)
        return -EINVAL;
    p = q + 7;
    if (parse_hex(&p, end, &hva) < 0 || !only_space(p, (size_t)(end - p)))
        return -EINVAL;
    if (ret_hva)
        *ret_hva = hva;
    return 0;
}

/* ---- page counting ---- */

int sample_count_pages(const numa_ops *ops, const topology *t, pid_t pid, uint64_t hva,
                       uint64_t len, uint64_t page_size, uint64_t seed,
                       uint64_t counts[VN_MAX_NODES], unsigned *ret_queries)
{
    _cleanup_free_ void **pages = NULL;
    _cleanup_free_ int *status = NULL;
    uint64_t hits[VN_MAX_NODES] = {0};
    uint64_t region_pages, sampled;
    unsigned queries = 0;
    rule_walk w;

    if (!ops || !ops->query || !t || !counts || pid <= 0 || page_size == 0 ||
        (page_size & (page_size - 1)) || hva > UINT64_MAX - len || hva + len > UINTPTR_MAX)
        return -EINVAL;

    region_pages = len / page_size + (len % page_size != 0);
    w = rule_lock_hold_walk(region_pages);
    if (region_pages == 0 || w.nr_windows == 0) {
        memset(counts, 0, sizeof(hits));
        if (ret_queries)
            *ret_queries = 0;
        return 0;
    }
    sampled = (region_pages + w.stride_pages - 1) / w.stride_pages;

    pages = calloc(w.window_pages, sizeof(*pages));
    status = calloc(w.window_pages, sizeof(*status));
    if (!pages || !status)
        return -ENOMEM;

    for (uint64_t first = 0; first < sampled; first += w.window_pages) {
        unsigned long n = (unsigned long)VN_MIN((uint64_t)w.window_pages, sampled - first);
        int r;

        for (unsigned long i = 0; i < n; i++) {
            uint64_t page = rule_lock_hold_page(&w, region_pages, seed, first + i);
            pages[i] = (void *)(uintptr_t)(hva + page * page_size);
            status[i] = -ENOENT;
        }
        r = ops->query(pid, n, pages, status);
        queries++;
        if (r < 0)
            return r;
        if (ops->resolve_faulted) {
            /* Linux 6.1 answers -EFAULT for present pages that automatic NUMA balancing
             * made PROT_NONE: ask pagemap for their frames instead */
            bool faulted = false;
            for (unsigned long i = 0; i < n && !faulted; i++)
                faulted = status[i] == -EFAULT;
            if (faulted && (r = ops->resolve_faulted(pid, n, pages, status)) < 0)
                return r;
        }
        for (unsigned long i = 0; i < n; i++) {
            int node;

            if (status[i] < 0)
                continue; /* not present (-ENOENT), not mapped (-EFAULT), ... */
            node = topo_node_index(t, (unsigned)status[i]);
            if (node >= 0)
                hits[node]++;
        }
    }
    /* each sample stands for pages / samples pages (exactly 1 without a stride) */
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        counts[n] = w.stride_pages == 1
                        ? hits[n]
                        : (uint64_t)((unsigned __int128)hits[n] * region_pages / sampled);
    if (ret_queries)
        *ret_queries = queries;
    return 0;
}

/* ---- the live domain XML ---- */

typedef struct xml_memnode {
    unsigned cellid;
    vn_mem_binding binding;
} xml_memnode;

typedef struct xml_info {
    bool has_cpuset;
    vn_cpuset cpuset; /* <vcpu cpuset=...>: host CPUs the domain's vCPUs may use */
    unsigned nr_memnodes;
    xml_memnode memnodes[SNAP_MAX_CELLS_PER_DOMAIN];
} xml_info;

static int mem_mode_parse(const char *s, vn_mem_mode *ret)
{
    static const char *const names[VN_MEM_MAX] = {
        [VN_MEM_STRICT] = "strict",
        [VN_MEM_RESTRICTIVE] = "restrictive",
        [VN_MEM_PREFERRED] = "preferred",
        [VN_MEM_INTERLEAVE] = "interleave",
    };

    for (unsigned m = 0; m < VN_MEM_MAX; m++)
        if (names[m] && strcmp(s, names[m]) == 0) {
            *ret = (vn_mem_mode)m;
            return 0;
        }
    return -EINVAL;
}

/* A Linux list of kernel node numbers -> bitmask of topology node indexes (numbers the
 * topology does not know are ignored). */
static int nodeset_to_mask(const topology *t, const char *list, uint64_t *ret)
{
    vn_cpuset set;
    uint64_t mask = 0;
    int r;

    r = cpuset_parse(list, &set);
    if (r < 0)
        return r;
    for (int n = cpuset_first(&set); n >= 0; n = cpuset_next(&set, n)) {
        int idx = topo_node_index(t, (unsigned)n);
        if (idx >= 0 && idx < 64)
            mask |= 1ULL << idx;
    }
    *ret = mask;
    return 0;
}

static const xmlNode *xml_child(const xmlNode *parent, const char *name)
{
    for (const xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0)
            return c;
    return NULL;
}

static int xml_memnode_parse(const topology *t, const xmlNode *n, xml_memnode *ret, char *err,
                             size_t errlen)
{
    _cleanup_xmlchar_ xmlChar *cellid = xmlGetProp(n, (const xmlChar *)"cellid");
    _cleanup_xmlchar_ xmlChar *mode = xmlGetProp(n, (const xmlChar *)"mode");
    _cleanup_xmlchar_ xmlChar *nodeset = xmlGetProp(n, (const xmlChar *)"nodeset");
    char b[SAMPLE_SHOWN_MAX + 4];
    xml_memnode m = {0};
    char *endp = NULL;
    unsigned long id;

    if (!cellid || !nodeset)
        return fail(err, errlen, -EINVAL, "<memnode> without cellid or nodeset");
    errno = 0;
    id = strtoul((const char *)cellid, &endp, 10);
    if (errno || endp == (char *)cellid || *endp || id >= SNAP_MAX_CELLS_PER_DOMAIN)
        return fail(err, errlen, -EINVAL, "<memnode> with a bad cellid '%s'",
                    shown(b, (const char *)cellid));
    m.cellid = (unsigned)id;
    m.binding.mode = VN_MEM_STRICT; /* libvirt's default mode */
    if (mode && mem_mode_parse((const char *)mode, &m.binding.mode) < 0)
        return fail(err, errlen, -EINVAL, "<memnode cellid='%u'> with an unknown mode '%s'",
                    m.cellid, shown(b, (const char *)mode));
    if (nodeset_to_mask(t, (const char *)nodeset, &m.binding.nodes) < 0)
        return fail(err, errlen, -EINVAL, "<memnode cellid='%u'> with a bad nodeset '%s'", m.cellid,
                    shown(b, (const char *)nodeset));
    *ret = m;
    return 0;
}

/* <vcpu cpuset> and <numatune><memnode> of the live XML. */
static int xml_parse_domain(const char *xml, const topology *t, xml_info *ret, char *err,
                            size_t errlen)
{
    _cleanup_(xml_docp) xmlDoc *doc = NULL;
    const xmlNode *root, *vcpu, *numatune;
    xml_info info = {0};
    size_t len;
    int r;

    len = strnlen(xml, SAMPLE_XML_MAX + 1);
    if (len > SAMPLE_XML_MAX)
        return fail(err, errlen, -EINVAL, "domain XML longer than %u bytes", SAMPLE_XML_MAX);
    /* No network, no entity substitution, no messages on stderr. */
    doc = xmlReadMemory(xml, (int)len, "domain.xml", NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc)
        return fail(err, errlen, -EINVAL, "the domain XML does not parse");
    root = xmlDocGetRootElement(doc);
    if (!root || xmlStrcmp(root->name, (const xmlChar *)"domain") != 0)
        return fail(err, errlen, -EINVAL, "the domain XML has no <domain> root");

    vcpu = xml_child(root, "vcpu");
    if (vcpu) {
        _cleanup_xmlchar_ xmlChar *cpuset = xmlGetProp(vcpu, (const xmlChar *)"cpuset");
        char b[SAMPLE_SHOWN_MAX + 4];

        if (cpuset) {
            r = cpuset_parse((const char *)cpuset, &info.cpuset);
            if (r < 0)
                return fail(err, errlen, r, "bad <vcpu cpuset='%s'>",
                            shown(b, (const char *)cpuset));
            info.has_cpuset = true;
        }
    }

    numatune = xml_child(root, "numatune");
    for (const xmlNode *c = numatune ? numatune->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"memnode") != 0)
            continue;
        if (info.nr_memnodes >= SNAP_MAX_CELLS_PER_DOMAIN)
            return fail(err, errlen, -E2BIG, "more than %u <memnode> elements",
                        SNAP_MAX_CELLS_PER_DOMAIN);
        r = xml_memnode_parse(t, c, &info.memnodes[info.nr_memnodes], err, errlen);
        if (r < 0)
            return r;
        info.nr_memnodes++;
    }
    *ret = info;
    return 0;
}

/* ---- the QEMU process ---- */

/* PID of the running QEMU of domain `name`, from libvirt's pid file. */
static int sample_read_pid(const char *name, pid_t *ret)
{
    const char *dir = getenv(SAMPLE_RUN_DIR_ENV);
    _cleanup_fclose_ FILE *f = NULL;
    char path[PATH_MAX], buf[32] = "", *endp = NULL;
    long v;
    int n;

    if (!name || !*name || strchr(name, '/'))
        return -EINVAL;
    if (!dir || !*dir)
        dir = SAMPLE_RUN_DIR_DEFAULT;
    n = snprintf(path, sizeof(path), "%s/qemu/%s.pid", dir, name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return -ENAMETOOLONG;
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    if (!fgets(buf, sizeof(buf), f))
        return -EINVAL;
    errno = 0;
    v = strtol(buf, &endp, 10);
    if (errno || endp == buf || !only_space(endp, strlen(endp)) || v <= 0 || v > INT32_MAX)
        return -EINVAL;
    *ret = (pid_t)v;
    return 0;
}

/* The process of vCPU thread `tid` (its Tgid), when libvirt's pid file is not where
 * sample_read_pid() looks: libvirt 9.0 names it after an escaped name for some names
 * (' and " become &apos; and &quot;), so the vCPU threads query-cpus-fast gave are asked. */
static int sample_pid_of_thread(pid_t tid, pid_t *ret)
{
    _cleanup_fclose_ FILE *f = NULL;
    char path[64], line[128];
    long v = 0;

    if (tid <= 0)
        return -ESRCH;
    (void)snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
    f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Tgid: %ld", &v) == 1)
            break;
    if (v <= 0 || v > INT32_MAX)
        return -ESRCH;
    *ret = (pid_t)v;
    return 0;
}

/* ---- RAM layout ---- */

/*
 * Locate each cell's RAM backend inside the QEMU process: query-memdev (size, share),
 * "info mtree -f" (its first guest-physical range and the offset of that range in the
 * backend), "gpa2hva" (the host address of that range). Writes ret[0..nr_cells-1].
 */
static int ram_locate(virt_dom *d, const unsigned *cell_ids, unsigned nr_cells, bool guest_numa,
                      ram_range *ret, char *err, size_t errlen)
{
    _cleanup_free_ char *memdev = NULL;
    _cleanup_free_ char *mtree = NULL;
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ memdev_info *m = NULL;
    size_t nr_m = 0;
    int r;

    r = virt_qmp(d, "{\"execute\":\"query-memdev\"}", &memdev);
    if (r < 0)
        return fail(err, errlen, r, "query-memdev failed: %s", virt_last_error());
    r = memdev_parse_all(memdev, &root, &m, &nr_m, err, errlen);
    if (r < 0)
        return r;
    r = virt_hmp(d, "info mtree -f", &mtree);
    if (r < 0)
        return fail(err, errlen, r, "HMP info mtree failed: %s", virt_last_error());

    for (unsigned c = 0; c < nr_cells; c++) {
        _cleanup_free_ char *reply = NULL;
        char id[32], cmd[64], b[SAMPLE_SHOWN_MAX + 4];
        const memdev_info *mi = NULL;
        uint64_t gpa, off, hva;

        if (guest_numa) {
            (void)snprintf(id, sizeof(id), "ram-node%u", cell_ids[c]);
            for (size_t i = 0; i < nr_m && !mi; i++)
                if (strcmp(m[i].id, id) == 0)
                    mi = &m[i];
        } else {
            /* QEMU names the RAM of a guest without NUMA after the machine ("pc.ram" on
             * pc and q35); take that, or the only backend there is. */
            for (size_t i = 0; i < nr_m && !mi; i++)
                if (strcmp(m[i].id, "pc.ram") == 0)
                    mi = &m[i];
            if (!mi && nr_m == 1)
                mi = &m[0];
        }
        if (!mi)
            return fail(err, errlen, -ENOENT, "no memory backend for guest cell %u", cell_ids[c]);
        r = hmp_parse_mtree_ram(mtree, mi->id, &gpa, &off);
        if (r < 0)
            return fail(err, errlen, r, "memory backend '%s' not found in info mtree",
                        shown(b, mi->id));
        (void)snprintf(cmd, sizeof(cmd), "gpa2hva 0x%" PRIx64, gpa);
        r = virt_hmp(d, cmd, &reply);
        if (r < 0)
            return fail(err, errlen, r, "HMP gpa2hva failed: %s", virt_last_error());
        r = hmp_parse_gpa2hva(reply, &hva);
        if (r < 0)
            return fail(err, errlen, r, "unexpected gpa2hva reply '%s'", shown(b, reply));
        if (hva < off || hva - off > UINT64_MAX - mi->size)
            return fail(err, errlen, -EINVAL, "memory backend '%s' at an impossible address",
                        shown(b, mi->id));
        ret[c] = (ram_range){
            .cell = cell_ids[c],
            .gpa = gpa,
            .hva = hva - off,
            .size = mi->size,
            .shared = mi->shared,
        };
    }
    return 0;
}

/* ---- sample_domain ---- */

/* After a count of ram[] cell c: wait longer before the next one when it is settled. */
static void mem_settle(dom_state *st, unsigned c, unsigned nr_nodes, uint64_t cell_pages,
                       const uint64_t pages[VN_MAX_NODES])
{
    bool settled = st->mem_valid[c];

    for (unsigned n = 0; n < nr_nodes && settled; n++) {
        uint64_t a = pages[n], b = st->mem_pages[c][n];
        settled = (a > b ? a - b : b - a) * 1000 <= cell_pages * SAMPLE_SETTLED_PERMILLE;
    }
    st->mem_wait[c] = settled ? (uint8_t)VN_MIN(2u * VN_MAX(st->mem_wait[c], 1u),
                                                (unsigned)SAMPLE_MEM_MAX_WAIT)
                              : 1;
    st->mem_skipped[c] = 0;
    st->mem_valid[c] = true;
    memcpy(st->mem_pages[c], pages, sizeof(st->mem_pages[c]));
}

void sample_mem_changed(dom_state *st)
{
    memset(st->mem_valid, 0, sizeof(st->mem_valid));
}

static void snap_domain_freep(snap_domain *dom)
{
    for (unsigned c = 0; c < dom->nr_cells && dom->cells; c++) {
        free(dom->cells[c].vcpus);
        free(dom->cells[c].hot);
        free(dom->cells[c].shares);
    }
    free(dom->cells);
    dom->cells = NULL;
    dom->nr_cells = 0;
}

/* True when rule 2 applies: memory bound to exactly one node. */
static bool binding_pins_memory(const vn_mem_binding *b)
{
    return (b->mode == VN_MEM_STRICT || b->mode == VN_MEM_RESTRICTIVE) &&
           rule_binding_single_node(b) >= 0;
}

/* CPUs every vCPU may use: <vcpu cpuset> (else all) within the topology, within the
 * balancer's allowed nodes when set. */
static vn_cpuset allowed_cpus(const topology *t, const xml_info *x, uint64_t allowed_nodes)
{
    vn_cpuset a = t->cpus, nodes;

    if (x->has_cpuset)
        cpuset_and(&a, &a, &x->cpuset);
    if (allowed_nodes) {
        cpuset_zero(&nodes);
        for (unsigned n = 0; n < t->nr_nodes && n < 64; n++)
            if (allowed_nodes & (1ULL << n))
                cpuset_or(&nodes, &nodes, &t->nodes[n].cpus);
        cpuset_and(&a, &a, &nodes);
    }
    return a;
}

static int domain_binding(virt_dom *d, const topology *t, vn_mem_binding *ret, char *err,
                          size_t errlen)
{
    char nodeset[STATE_NODESET_MAX] = "", b[SAMPLE_SHOWN_MAX + 4];
    vn_mem_binding bind = {.mode = VN_MEM_NONE};
    vn_mem_mode mode = VN_MEM_NONE;
    int r;

    r = virt_numa_get(d, &mode, nodeset, sizeof(nodeset));
    if (r < 0)
        return fail(err, errlen, r, "reading the numatune failed: %s", virt_last_error());
    if (nodeset[0]) {
        r = nodeset_to_mask(t, nodeset, &bind.nodes);
        if (r < 0)
            return fail(err, errlen, r, "bad numatune nodeset '%s'", shown(b, nodeset));
        bind.mode = mode;
    }
    /* An empty nodeset binds nothing, whatever mode libvirt reports. */
    *ret = bind;
    return 0;
}

int sample_domain(virt_dom *d, dom_state *st, const topology *t, const numa_ops *ops, bool use_qmp,
                  double now_s, snap_domain *out, char *err, size_t errlen)
{
    _cleanup_(snap_domain_freep) snap_domain dom = {0};
    _cleanup_free_ virt_vcpu *vcpus = NULL;
    _cleanup_free_ qmp_vcpu *qv = NULL;
    _cleanup_free_ char *xml = NULL;
    _cleanup_free_ char *reply = NULL;
    _cleanup_free_ int *cell_of = NULL;
    unsigned nr_vcpus = 0, nr_qv = 0, nr_cells = 0, cell_ids[SNAP_MAX_CELLS_PER_DOMAIN];
    uint64_t cell_mask = 0;
    bool guest_numa = false, first, ram_valid;
    vn_mem_binding dom_bind;
    virt_dom_id ident;
    xml_info x = {0};
    vn_cpuset allowed;
    double dt;
    int r;

    if (!d || !st || !t || !out || (use_qmp && (!ops || !ops->query)))
        return fail(err, errlen, -EINVAL, "bad arguments");

    r = virt_dom_ident(d, &ident);
    if (r < 0)
        return fail(err, errlen, r, "identifying the domain failed: %s", virt_last_error());
    r = virt_vcpus(d, &vcpus, &nr_vcpus);
    if (r < 0)
        return fail(err, errlen, r, "reading the vCPUs failed: %s", virt_last_error());
    if (nr_vcpus == 0)
        return fail(err, errlen, -EINVAL, "the domain reports no vCPUs");
    if (nr_vcpus > STATE_MAX_VCPUS)
        return fail(err, errlen, -E2BIG, "%u vCPUs, at most %u handled", nr_vcpus, STATE_MAX_VCPUS);
    for (unsigned i = 0; i < nr_vcpus; i++)
        if (vcpus[i].number >= STATE_MAX_VCPUS)
            return fail(err, errlen, -E2BIG, "vCPU number %u, at most %u handled", vcpus[i].number,
                        STATE_MAX_VCPUS - 1);

    r = virt_dom_xml(d, &xml);
    if (r < 0)
        return fail(err, errlen, r, "reading the live XML failed: %s", virt_last_error());
    r = xml_parse_domain(xml, t, &x, err, errlen);
    if (r < 0)
        return r;
    r = domain_binding(d, t, &dom_bind, err, errlen);
    if (r < 0)
        return r;

    /* vCPU -> cell: the guest's node-id from QMP, or one cell 0 */
    cell_of = calloc(nr_vcpus, sizeof(*cell_of));
    if (!cell_of)
        return fail(err, errlen, -ENOMEM, "out of memory");
    if (use_qmp) {
        r = virt_qmp(d, "{\"execute\":\"query-cpus-fast\"}", &reply);
        if (r < 0)
            return fail(err, errlen, r, "query-cpus-fast failed: %s", virt_last_error());
        r = qmp_parse_cpus_fast(reply, &qv, &nr_qv, err, errlen);
        if (r < 0)
            return r;
        for (unsigned i = 0; i < nr_vcpus; i++) {
            bool found = false;
            for (unsigned j = 0; j < nr_qv && !found; j++)
                if (qv[j].cpu_index == vcpus[i].number) {
                    cell_of[i] = qv[j].node_id < 0 ? 0 : qv[j].node_id;
                    if (vcpus[i].number < STATE_MAX_VCPUS)
                        st->vcpu_tid[vcpus[i].number] = qv[j].thread_id;
                    guest_numa |= qv[j].node_id >= 0;
                    found = true;
                }
            if (!found)
                return fail(err, errlen, -EAGAIN,
                            "vCPU %u is not in query-cpus-fast (vCPUs changed while sampling)",
                            vcpus[i].number);
        }
    }
    for (unsigned i = 0; i < nr_vcpus; i++)
        cell_mask |= 1ULL << cell_of[i];
    for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
        if (cell_mask & (1ULL << c))
            cell_ids[nr_cells++] = c;

    /* busy fractions: CPU time over wall time since the previous sample */
    dt = now_s - st->prev_sample_s;
    first = st->nr_prev == 0 || st->nr_prev != nr_vcpus || !(dt > 0);
    allowed = allowed_cpus(t, &x, st->cfg.allowed_nodes);

    dom.cells = calloc(nr_cells, sizeof(*dom.cells));
    if (!dom.cells)
        return fail(err, errlen, -ENOMEM, "out of memory");
    dom.nr_cells = nr_cells;
    for (unsigned c = 0; c < nr_cells; c++) {
        snap_cell *cell = &dom.cells[c];
        unsigned n = 0;

        for (unsigned i = 0; i < nr_vcpus; i++)
            n += (unsigned)cell_of[i] == cell_ids[c];
        cell->vcpus = calloc(n, sizeof(*cell->vcpus));
        if (!cell->vcpus)
            return fail(err, errlen, -ENOMEM, "out of memory");
        cell->id = cell_ids[c];
        cell->page_size = SAMPLE_PAGE_SIZE;
        cell->last_candidate = st->last_candidate[cell_ids[c]];
        cell->binding = dom_bind;
        if (use_qmp)
            for (unsigned k = 0; k < x.nr_memnodes; k++)
                if (x.memnodes[k].cellid == cell_ids[c])
                    cell->binding = x.memnodes[k].binding;

        for (unsigned i = 0; i < nr_vcpus; i++) {
            const virt_vcpu *v = &vcpus[i];
            snap_vcpu *sv;
            double busy = 0;

            if ((unsigned)cell_of[i] != cell_ids[c])
                continue;
            if (!first && v->cpu_time_ns >= st->prev_cpu_ns[v->number])
                busy = (double)(v->cpu_time_ns - st->prev_cpu_ns[v->number]) / (dt * 1e9);
            sv = &cell->vcpus[cell->nr_vcpus++];
            sv->id = v->number;
            sv->busy = busy < 0 ? 0 : busy > 1 ? 1 : busy;
            sv->allowed = allowed;
            sv->pinned = v->affinity;
            sv->cpu = v->cpu;
        }
    }

    /* memory: where each cell's RAM is, then its pages per node */
    if (use_qmp) {
        ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];

        ram_valid = st->ram_for_id == ident.id && st->nr_ram == nr_cells;
        for (unsigned c = 0; ram_valid && c < nr_cells; c++)
            ram_valid = st->ram[c].cell == cell_ids[c];
        if (!ram_valid) {
            r = ram_locate(d, cell_ids, nr_cells, guest_numa, ram, err, errlen);
            if (r < 0)
                return r;
            memcpy(st->ram, ram, nr_cells * sizeof(ram[0]));
            memset(st->mem_valid, 0, sizeof(st->mem_valid));
            memset(st->move_resume, 0, sizeof(st->move_resume));
            st->nr_ram = nr_cells;
            st->ram_for_id = ident.id;
            st->pid = 0; /* a new QEMU process: read its pid again */
        }

        for (unsigned c = 0; c < nr_cells; c++) {
            snap_cell *cell = &dom.cells[c];
            const ram_range *rr = &st->ram[c];
            unsigned q = 0;

            if (binding_pins_memory(&cell->binding)) {
                /* Rule 2 (cpuset skip): no page can move, so none is looked at. */
                int node = rule_binding_single_node(&cell->binding);
                cell->pages[node] = rr->size / SAMPLE_PAGE_SIZE;
                continue;
            }
            if (st->pid <= 0) {
                r = sample_read_pid(ident.name, &st->pid);
                if (r == -ESRCH && use_qmp && nr_vcpus > 0 && vcpus[0].number < STATE_MAX_VCPUS)
                    r = sample_pid_of_thread(st->vcpu_tid[vcpus[0].number], &st->pid);
                if (r < 0)
                    return fail(err, errlen, r, "reading the QEMU pid of '%s' failed: %s",
                                ident.name, strerror(-r));
            }
            if (st->mem_valid[c] && st->mem_skipped[c] + 1 < st->mem_wait[c]) {
                /* settled: the last counts stand (sample.h) */
                memcpy(cell->pages, st->mem_pages[c], sizeof(cell->pages));
                st->mem_skipped[c]++;
                st->count.memory_reuses++;
                continue;
            }
            r = sample_count_pages(ops, t, st->pid, rr->hva, rr->size, SAMPLE_PAGE_SIZE,
                                   st->count.passes * 0x9e3779b97f4a7c15ULL, cell->pages, &q);
            st->count.memory_scans += q;
            if (r < 0)
                return fail(err, errlen, r, "page query of guest cell %u failed: %s", cell->id,
                            strerror(-r));
            mem_settle(st, c, t->nr_nodes, rr->size / SAMPLE_PAGE_SIZE, cell->pages);
        }
    }

    /* everything read: fill in the domain and remember this sample */
    (void)snprintf(dom.name, sizeof(dom.name), "%s", st->name);
    (void)snprintf(dom.uuid, sizeof(dom.uuid), "%s", st->uuid);
    dom.mode = st->cfg.mode;
    dom.priority = st->cfg.priority;
    dom.allowed_nodes = st->cfg.allowed_nodes;
    dom.age_passes = st->age_passes;
    dom.preferred_node = st->preferred_node;

    for (unsigned i = 0; i < nr_vcpus; i++)
        st->prev_cpu_ns[vcpus[i].number] = vcpus[i].cpu_time_ns;
    st->nr_prev = nr_vcpus;
    st->prev_sample_s = now_s;

    *out = dom;
    dom = (snap_domain){0};
    return 0;
}
