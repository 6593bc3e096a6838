/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * QEMU's replies through libvirt (qemu.h): QMP query-cpus-fast and query-memdev, HMP
 * "info mtree -f" and "gpa2hva". QEMU's replies pass through libvirt unchanged, and
 * anything not in the shape documented here is refused with a reason rather than
 * guessed at.
 */
#include "qemu.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "model.h"
#include "state.h"
#include "util.h"

/* Largest QMP reply accepted (a 1024-vCPU query-cpus-fast is ~200 KiB). */
#define QMP_REPLY_MAX (4u * 1024 * 1024)
/* Deepest JSON nesting in the replies we read is 4; leave room. */
#define QMP_DEPTH_MAX 16
/* Most memory backends one query-memdev reply may list. */
#define QMP_MEMDEV_MAX 1024
/* Largest HMP "info mtree -f" text accepted. */
#define HMP_TEXT_MAX (16u * 1024 * 1024)
/* Bytes of untrusted text quoted in an error message. */
#define QEMU_SHOWN_MAX 64
#define QEMU_SHOWN_BUF (QEMU_SHOWN_MAX + 8)

/* ---- helpers ---- */

/* Untrusted text for an error message: printable ASCII, at most QEMU_SHOWN_MAX bytes. */
#define shown(buf, s) vn_shown_str((buf), sizeof(buf), (s), QEMU_SHOWN_MAX)

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

/*
 * Parse a QMP reply strictly (depth, size, nothing after the value) and return the
 * top-level object and its "return" member (borrowed from the root). A QMP error reply
 * ({"error":{"class":..,"desc":..}}) is -EINVAL with its class and description in err.
 * Callers use qmp_parse_list().
 */
static int qmp_parse_reply(const char *reply, struct json_object **ret_root,
                           struct json_object **ret_return, char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *ret = NULL, *e = NULL, *cls = NULL, *desc = NULL;
    char b1[QEMU_SHOWN_BUF], b2[QEMU_SHOWN_BUF];
    vn_json_doc doc;
    size_t len;

    if (!reply)
        return vn_fail(err, errlen, -EINVAL, "no reply");
    len = strnlen(reply, QMP_REPLY_MAX + 1);
    if (len > QMP_REPLY_MAX)
        return vn_fail(err, errlen, -EINVAL, "reply longer than %u bytes", QMP_REPLY_MAX);

    switch (vn_json_parse(reply, len, QMP_DEPTH_MAX, &doc)) {
    case VN_JSON_OK:
        root = doc.root;
        break;
    case VN_JSON_E_NOMEM:
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
    case VN_JSON_E_EMPTY:
        return vn_fail(err, errlen, -EINVAL, "empty reply");
    case VN_JSON_E_TRUNCATED:
        return vn_fail(err, errlen, -EINVAL, "truncated reply");
    case VN_JSON_E_TRAILING:
        return vn_fail(err, errlen, -EINVAL, "unexpected data after the reply at byte %zu", doc.at);
    case VN_JSON_E_LENIENT:
    case VN_JSON_E_DUPLICATE:
        return vn_fail(err, errlen, -EINVAL, "malformed reply: %s", doc.why);
    default:
        return vn_fail(err, errlen, -EINVAL, "malformed reply at byte %zu: %s", doc.at, doc.why);
    }
    if (!json_object_is_type(root, json_type_object))
        return vn_fail(err, errlen, -EINVAL, "reply is not a JSON object");

    if (json_object_object_get_ex(root, "error", &e)) {
        if (json_object_is_type(e, json_type_object)) {
            (void)json_object_object_get_ex(e, "class", &cls);
            (void)json_object_object_get_ex(e, "desc", &desc);
        }
        return vn_fail(
            err, errlen, -EINVAL, "QMP error %s: %s",
            shown(b1,
                  json_object_is_type(cls, json_type_string) ? json_object_get_string(cls) : "?"),
            shown(b2, json_object_is_type(desc, json_type_string) ? json_object_get_string(desc)
                                                                  : "?"));
    }
    if (!json_object_object_get_ex(root, "return", &ret))
        return vn_fail(err, errlen, -EINVAL, "reply has no \"return\" member");
    *ret_return = ret;
    *ret_root = VN_TAKE_PTR(root);
    return 0;
}

/* A QMP reply whose "return" is an array: the array (borrowed from *ret_root) and its length. */
static int qmp_parse_list(const char *reply, struct json_object **ret_root,
                          struct json_object **ret_arr, size_t *ret_n, char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    struct json_object *arr = NULL;
    int r = qmp_parse_reply(reply, &root, &arr, err, errlen);

    if (r < 0)
        return r;
    if (!json_object_is_type(arr, json_type_array))
        return vn_fail(err, errlen, -EINVAL, "\"return\" is not an array");
    *ret_arr = arr;
    *ret_n = json_object_array_length(arr);
    *ret_root = VN_TAKE_PTR(root);
    return 0;
}

/*
 * qmp_parse_list() with at most `max` entries (`what` names them in the error), and a zeroed
 * array of as many entries of `elem` bytes for the caller to fill (at least one).
 */
static int qmp_parse_list_vec(const char *reply, size_t max, const char *what, size_t elem,
                              struct json_object **ret_root, struct json_object **ret_arr,
                              size_t *ret_n, void **ret_vec, char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    int r = qmp_parse_list(reply, &root, ret_arr, ret_n, err, errlen);

    if (r < 0)
        return r;
    if (*ret_n > max)
        return vn_fail(err, errlen, -EINVAL, "%zu %s, at most %zu handled", *ret_n, what, max);
    *ret_vec = calloc(*ret_n ? *ret_n : 1, elem);
    if (!*ret_vec)
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
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
        return vn_fail(err, errlen, -EINVAL, "%s %u: \"%s\" is not an integer", what, index, key);
    errno = 0;
    x = json_object_get_int64(v);
    if (x < min || x > max || errno == ERANGE ||
        (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX))
        return vn_fail(err, errlen, -EINVAL,
                       "%s %u: \"%s\" out of range (%" PRId64 "..%" PRId64 ")", what, index, key,
                       min, max);
    *ret = x;
    return 0;
}

/* A "qom-path" member into buf (QMP_QOM_PATH_MAX): printable ASCII, shorter than the buffer.
 * -ENOENT when absent. */
static int get_qom_path(struct json_object *obj, char *buf, const char *what, unsigned index,
                        char *err, size_t errlen)
{
    struct json_object *v = NULL;
    const char *s;
    size_t len;

    if (!json_object_object_get_ex(obj, "qom-path", &v))
        return -ENOENT;
    if (!json_object_is_type(v, json_type_string))
        return vn_fail(err, errlen, -EINVAL, "%s %u: \"qom-path\" is not a string", what, index);
    s = json_object_get_string(v);
    len = (size_t)json_object_get_string_len(v);
    if (len == 0 || len >= QMP_QOM_PATH_MAX)
        return vn_fail(err, errlen, -EINVAL, "%s %u: \"qom-path\" of %zu bytes", what, index, len);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
            return vn_fail(err, errlen, -EINVAL, "%s %u: \"qom-path\" is not printable", what,
                           index);
    memcpy(buf, s, len + 1);
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
        return vn_fail(err, errlen, -EINVAL, "no output");
    r = qmp_parse_list(reply, &root, &arr, &n, err, errlen);
    if (r < 0)
        return r;
    if (n == 0)
        return vn_fail(err, errlen, -EINVAL, "no vCPUs in the reply");
    if (n > STATE_MAX_VCPUS)
        return vn_fail(err, errlen, -EINVAL, "%zu vCPUs, at most %u handled", n, STATE_MAX_VCPUS);

    v = calloc(n, sizeof(*v));
    seen = calloc(STATE_MAX_VCPUS, 1);
    if (!v || !seen)
        return vn_fail(err, errlen, -ENOMEM, "out of memory");

    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(arr, i), *props = NULL;
        int64_t idx = 0, tid = 0, node = -1;

        if (!json_object_is_type(e, json_type_object))
            return vn_fail(err, errlen, -EINVAL, "vCPU entry %zu is not an object", i);
        r = get_int(e, "cpu-index", 0, STATE_MAX_VCPUS - 1, "vCPU entry", (unsigned)i, &idx, err,
                    errlen);
        if (r == -ENOENT)
            return vn_fail(err, errlen, -EINVAL, "vCPU entry %zu has no \"cpu-index\"", i);
        if (r < 0)
            return r;
        /* The top-level "thread-id" is the host thread; props.thread-id is the SMT thread. */
        r = get_int(e, "thread-id", 1, INT32_MAX, "vCPU", (unsigned)idx, &tid, err, errlen);
        if (r == -ENOENT)
            return vn_fail(err, errlen, -EINVAL, "vCPU %" PRId64 " has no \"thread-id\"", idx);
        if (r < 0)
            return r;
        if (json_object_object_get_ex(e, "props", &props)) {
            if (!json_object_is_type(props, json_type_object))
                return vn_fail(err, errlen, -EINVAL, "vCPU %" PRId64 ": \"props\" is not an object",
                               idx);
            r = get_int(props, "node-id", 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, "vCPU", (unsigned)idx,
                        &node, err, errlen);
            if (r == -ENOENT)
                node = -1;
            else if (r < 0)
                return r;
        }
        if (seen[idx])
            return vn_fail(err, errlen, -EINVAL, "vCPU %" PRId64 " listed twice", idx);
        seen[idx] = 1;
        v[i] =
            (qmp_vcpu){.cpu_index = (unsigned)idx, .node_id = (int)node, .thread_id = (pid_t)tid};
        r = get_qom_path(e, v[i].qom_path, "vCPU", (unsigned)idx, err, errlen);
        if (r < 0 && r != -ENOENT)
            return r;
    }
    *ret = VN_TAKE_PTR(v);
    *ret_n = (unsigned)n;
    return 0;
}

int qmp_parse_memdevs(const char *reply, qmp_memdevs *ret, char *err, size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ qmp_memdev *m = NULL;
    void *vec = NULL;
    struct json_object *arr = NULL;
    size_t n;
    int r;

    if (!ret)
        return vn_fail(err, errlen, -EINVAL, "no output");
    r = qmp_parse_list_vec(reply, QMP_MEMDEV_MAX, "memory backends", sizeof(*m), &root, &arr, &n,
                           &vec, err, errlen);
    if (r < 0)
        return r;
    m = vec;

    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(arr, i), *id = NULL, *share = NULL;
        char b[QEMU_SHOWN_BUF];
        int64_t size = 0;

        if (!json_object_is_type(e, json_type_object))
            return vn_fail(err, errlen, -EINVAL, "memory backend %zu is not an object", i);
        if (!json_object_object_get_ex(e, "id", &id) || !json_object_is_type(id, json_type_string))
            return vn_fail(err, errlen, -EINVAL, "memory backend %zu has no string \"id\"", i);
        m[i].id = json_object_get_string(id);
        if (!*m[i].id || strlen(m[i].id) != (size_t)json_object_get_string_len(id))
            return vn_fail(err, errlen, -EINVAL, "memory backend %zu has a bad \"id\"", i);
        r = get_int(e, "size", 1, INT64_MAX - 1, "memory backend", (unsigned)i, &size, err, errlen);
        if (r == -ENOENT)
            return vn_fail(err, errlen, -EINVAL, "memory backend '%s' has no \"size\"",
                           shown(b, m[i].id));
        if (r < 0)
            return r;
        m[i].size = (uint64_t)size;
        if (!json_object_object_get_ex(e, "share", &share) ||
            !json_object_is_type(share, json_type_boolean))
            return vn_fail(err, errlen, -EINVAL, "memory backend '%s' has no boolean \"share\"",
                           shown(b, m[i].id));
        m[i].shared = json_object_get_boolean(share);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m[j].id, m[i].id) == 0)
                return vn_fail(err, errlen, -EINVAL, "memory backend '%s' listed twice",
                               shown(b, m[i].id));
    }
    *ret = (qmp_memdevs){.root = VN_TAKE_PTR(root), .v = VN_TAKE_PTR(m), .n = n};
    return 0;
}

int qmp_parse_memory_devices(const char *reply, qmp_memdevice **ret, unsigned *ret_n, char *err,
                             size_t errlen)
{
    _cleanup_json_ struct json_object *root = NULL;
    _cleanup_free_ qmp_memdevice *v = NULL;
    struct json_object *arr = NULL;
    void *vec = NULL;
    unsigned k = 0;
    size_t n;
    int r;

    if (!ret || !ret_n)
        return vn_fail(err, errlen, -EINVAL, "no output");
    r = qmp_parse_list_vec(reply, QMP_MEMDEV_MAX, "memory devices", sizeof(*v), &root, &arr, &n,
                           &vec, err, errlen);
    if (r < 0)
        return r;
    v = vec;
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_array_get_idx(arr, i), *type = NULL, *data = NULL;
        struct json_object *memdev = NULL;
        const char *t, *md;
        bool vmem;
        int64_t gpa = 0, node = 0;

        if (!json_object_is_type(e, json_type_object) ||
            !json_object_object_get_ex(e, "type", &type) ||
            !json_object_is_type(type, json_type_string) ||
            !json_object_object_get_ex(e, "data", &data) ||
            !json_object_is_type(data, json_type_object))
            return vn_fail(err, errlen, -EINVAL,
                           "memory device %zu is not an object with a string \"type\" and "
                           "object \"data\"",
                           i);
        t = json_object_get_string(type);
        vmem = strcmp(t, "virtio-mem") == 0;
        if (strcmp(t, "dimm") != 0 && !vmem)
            continue; /* nvdimm, virtio-pmem, sgx-epc: not a cell's RAM */
        r = get_int(data, vmem ? "memaddr" : "addr", 0, INT64_MAX - 1, "memory device", (unsigned)i,
                    &gpa, err, errlen);
        if (r == -ENOENT)
            return vn_fail(err, errlen, -EINVAL, "memory device %zu has no address", i);
        if (r < 0)
            return r;
        r = get_int(data, "node", 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, "memory device", (unsigned)i,
                    &node, err, errlen);
        if (r == -ENOENT)
            return vn_fail(err, errlen, -EINVAL, "memory device %zu has no \"node\"", i);
        if (r < 0)
            return r;
        if (!json_object_object_get_ex(data, "memdev", &memdev) ||
            !json_object_is_type(memdev, json_type_string))
            return vn_fail(err, errlen, -EINVAL, "memory device %zu has no string \"memdev\"", i);
        md = json_object_get_string(memdev);
        if (strncmp(md, "/objects/", strlen("/objects/")) == 0)
            md += strlen("/objects/");
        if (!*md || strlen(md) >= sizeof(v[k].memdev) || strchr(md, '/') ||
            strlen(json_object_get_string(memdev)) != (size_t)json_object_get_string_len(memdev))
            return vn_fail(err, errlen, -EINVAL, "memory device %zu has a bad \"memdev\"", i);
        snprintf(v[k].memdev, sizeof(v[k].memdev), "%s", md);
        v[k].gpa = (uint64_t)gpa;
        v[k].node = (int)node;
        v[k].virtio_mem = vmem;
        k++;
    }
    *ret = k ? VN_TAKE_PTR(v) : NULL;
    *ret_n = k;
    return 0;
}

void qmp_memdevs_clear(qmp_memdevs *m)
{
    if (!m)
        return;
    if (m->root)
        (void)json_object_put(m->root);
    free(m->v);
    *m = (qmp_memdevs){0};
}

const qmp_memdev *qmp_memdev_find(const qmp_memdevs *m, const char *id)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].id, id) == 0)
            return &m->v[i];
    return NULL;
}

int qmp_parse_memdev(const char *reply, const char *id, uint64_t *ret_size, bool *ret_shared,
                     char *err, size_t errlen)
{
    _cleanup_(qmp_memdevs_clear) qmp_memdevs m = {0};
    const qmp_memdev *mi;
    char b[QEMU_SHOWN_BUF];
    int r;

    if (!id || !*id)
        return vn_fail(err, errlen, -EINVAL, "no backend id");
    r = qmp_parse_memdevs(reply, &m, err, errlen);
    if (r < 0)
        return r;
    mi = qmp_memdev_find(&m, id);
    if (!mi)
        return vn_fail(err, errlen, -ENOENT, "no memory backend '%s'", shown(b, id));
    if (ret_size)
        *ret_size = mi->size;
    if (ret_shared)
        *ret_shared = mi->shared;
    return 0;
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
 * One range line of a flat view. The part up to the name has kept its shape since QEMU 2.x:
 *   "  START-END (prio P, TYPE): NAME[ @OFFSET][ MORE...]"
 * After it, QEMU appends what it likes: an offset in the region (" @0000000000100000"),
 * the accelerator that maps the range (" KVM", since 6.1 under KVM), " [disabled]", and
 * perhaps more in later versions. So the tail is read as tokens: the first is the name,
 * a token "@HEX" is the offset (a malformed one makes the line invalid), any other token
 * is ignored. Writes its fields (name as [ret_name, ret_name + ret_name_len)) on success.
 */
static int mtree_parse_range(const char *s, const char *e, uint64_t *ret_start, uint64_t *ret_end,
                             const char **ret_type, size_t *ret_type_len, const char **ret_name,
                             size_t *ret_name_len, uint64_t *ret_off)
{
    const char *p = s, *type, *name, *tok;
    uint64_t start, last, off = 0;
    unsigned digits;
    size_t name_len;

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
    while (p < e && *p != ' ')
        p++;
    name_len = (size_t)(p - name);
    if (name_len == 0 || name[0] == '@')
        return -EINVAL; /* no name, or an offset where the name should be */
    while (p < e) {
        while (p < e && *p == ' ')
            p++;
        tok = p;
        while (p < e && *p != ' ')
            p++;
        if (tok < p && *tok == '@') {
            const char *q = tok + 1;
            if (parse_hex(&q, p, &off) < 0 || q != p)
                return -EINVAL;
        }
    }
    *ret_start = start;
    *ret_end = last;
    *ret_name = name;
    *ret_name_len = name_len;
    *ret_off = off;
    return 0;
}

/* Is a flat-view range of TYPE guest RAM vnumad may sample and move? "ram" only: not
 * "nv-ram" (non-volatile: a pmem file backend, whose pages do not migrate), "rom", "romd" or
 * "i/o". */
static bool mtree_type_is_ram(const char *type, size_t len)
{
    return len == 3 && memcmp(type, "ram", 3) == 0;
}

/* Does a range's region NAME belong to backend ID? Its own name, or "/objects/ID": machine
 * types up to 4.0 name the RAM blocks of file and memfd backends by their QOM path. */
static bool mtree_name_is(const char *name, size_t len, const char *id, size_t idlen)
{
    static const char prefix[] = "/objects/";
    const size_t plen = sizeof(prefix) - 1;

    if (len == idlen && memcmp(name, id, idlen) == 0)
        return true;
    return len == plen + idlen && memcmp(name, prefix, plen) == 0 &&
           memcmp(name + plen, id, idlen) == 0;
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
        if (!mtree_type_is_ram(type, type_len) || !mtree_name_is(name, name_len, id, idlen))
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
    if (parse_hex(&p, end, &hva) < 0 || !vn_is_blank(p, (size_t)(end - p)))
        return -EINVAL;
    if (ret_hva)
        *ret_hva = hva;
    return 0;
}
