/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The client side of vnumad's control socket (docs/control-protocol.md), for vnumactl's
 * subcommands: one request, one reply, with a deadline; and lenient readers of the reply
 * (a missing or mistyped field reads as a default), and the text hygiene of what vnumactl
 * prints for people (no terminal control sequences from domain names or guest text).
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "control.h"
#include "ctl_client.h"
#include "json.h"
#include "text.h"
#include "util.h"

static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left = deadline - (int64_t)vn_mono_ms();
        int r;
        if (left <= 0)
            return -ETIMEDOUT;
        r = poll(&p, 1, (int)left);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -errno;
    }
}

int ctl_call(const char *socket_path, const char *command, const char *domain, int timeout_ms,
             struct json_object **ret, char *err_buf, size_t err_len)
{
    return ctl_call_stage(socket_path, command, domain, NULL, timeout_ms, ret, err_buf, err_len);
}

int ctl_call_stage(const char *socket_path, const char *command, const char *domain,
                   const char *stage, int timeout_ms, struct json_object **ret, char *err_buf,
                   size_t err_len)
{
    return ctl_call_xml(socket_path, command, domain, stage, NULL, timeout_ms, ret, err_buf,
                        err_len);
}

int ctl_call_xml(const char *socket_path, const char *command, const char *domain,
                 const char *stage, const char *xml, int timeout_ms, struct json_object **ret,
                 char *err_buf, size_t err_len)
{
    _cleanup_json_ struct json_object *req = json_object_new_object(), *reply = NULL;
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL, *line = NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct json_object *err = NULL, *desc = NULL, *result = NULL;
    int64_t deadline = (int64_t)vn_mono_ms() + timeout_ms;
    size_t len, off = 0, got = 0, cap = 0;
    const char *s;
    int r;

    if (!req) {
        snprintf(err_buf, err_len, "out of memory");
        return -1;
    }
    json_object_object_add(req, "command", json_object_new_string(command));
    if (domain)
        json_object_object_add(req, "domain", json_object_new_string(domain));
    if (stage)
        json_object_object_add(req, "stage", json_object_new_string(stage));
    if (xml)
        json_object_object_add(req, "xml", json_object_new_string(xml));
    s = json_object_to_json_string_length(
        req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    if (!s || !(line = malloc(len + 1))) {
        snprintf(err_buf, err_len, "out of memory");
        return -1;
    }
    memcpy(line, s, len);
    line[len++] = '\n';
    if (len > (xml ? CONTROL_XML_LINE_MAX : CONTROL_REQUEST_MAX)) {
        snprintf(err_buf, err_len, "the request is longer than %d bytes (%s too long)",
                 xml ? CONTROL_XML_LINE_MAX : CONTROL_REQUEST_MAX, xml ? "xml" : "domain name");
        return -1;
    }
    if (strlen(socket_path) >= sizeof(sa.sun_path)) {
        snprintf(err_buf, err_len, "cannot connect to vnumad at %s: %s", socket_path,
                 strerror(ENAMETOOLONG));
        return -1;
    }
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        snprintf(err_buf, err_len, "cannot connect to vnumad at %s: %s", socket_path,
                 strerror(errno));
        return -1;
    }

    /* A refusal (PermissionDenied, busy) may arrive before the request is written:
     * stop writing on EPIPE/ECONNRESET and read what vnumad said. */
    while (off < len) {
        ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (n >= 0) {
            off += (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r = wait_fd(fd, POLLOUT, deadline);
            if (r == 0)
                continue;
            errno = -r;
        }
        if (errno == EPIPE || errno == ECONNRESET)
            break;
        snprintf(err_buf, err_len, "cannot send the request to vnumad at %s: %s", socket_path,
                 strerror(errno));
        return -1;
    }

    for (;;) {
        ssize_t n;
        if (got + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (ncap > CTL_REPLY_MAX + 1)
                ncap = CTL_REPLY_MAX + 1;
            if (got + 1 >= ncap) {
                snprintf(err_buf, err_len, "the reply from vnumad is longer than %u bytes",
                         CTL_REPLY_MAX);
                return -1;
            }
            nb = realloc(buf, ncap);
            if (!nb) {
                snprintf(err_buf, err_len, "out of memory");
                return -1;
            }
            buf = nb;
            cap = ncap;
        }
        n = read(fd, buf + got, cap - 1 - got);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0 || errno == ECONNRESET)
            break;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r = wait_fd(fd, POLLIN, deadline);
            if (r == 0)
                continue;
            errno = -r;
        }
        if (errno == ETIMEDOUT)
            snprintf(err_buf, err_len, "no reply from vnumad at %s within %d s", socket_path,
                     timeout_ms / 1000);
        else
            snprintf(err_buf, err_len, "cannot read the reply from vnumad at %s: %s", socket_path,
                     strerror(errno));
        return -1;
    }
    if (got == 0) {
        snprintf(err_buf, err_len, "vnumad at %s closed the connection without a reply",
                 socket_path);
        return -1;
    }
    buf[got] = '\0';
    reply = json_tokener_parse(buf);
    if (!reply || !json_object_is_type(reply, json_type_object)) {
        snprintf(err_buf, err_len, "malformed reply from vnumad");
        return -1;
    }
    if (json_object_object_get_ex(reply, "error", &err)) {
        ctl_json_printable(err);
        (void)json_object_object_get_ex(err, "desc", &desc);
        snprintf(err_buf, err_len, "%s",
                 json_object_is_type(desc, json_type_string) ? json_object_get_string(desc)
                                                             : "vnumad reported an error");
        return -1;
    }
    if (!json_object_object_get_ex(reply, "return", &result)) {
        snprintf(err_buf, err_len, "malformed reply from vnumad");
        return -1;
    }
    *ret = json_object_get(result);
    return 0;
}

/* ---- text output: no terminal control sequences from domain names ---- */

/* What a terminal must not get from s (C0 but the newline, DEL, C1, bidirectional controls,
 * bytes that are not UTF-8: vn_text_scrub) replaced by '?' in place; true when something was
 * replaced. A domain name may hold a CR or a tab (libvirt allows them), a reason or a guest's
 * text (a process name) anything. */
bool ctl_printable_inplace(char *s)
{
    return vn_text_scrub(s, true) > 0;
}

/* Every string in the reply made printable (for the human output; --json prints the
 * reply as it is, JSON-escaped). */
void ctl_json_printable(struct json_object *o)
{
    if (json_object_is_type(o, json_type_string)) {
        _cleanup_free_ char *copy = strdup(json_object_get_string(o));
        if (copy && ctl_printable_inplace(copy))
            (void)json_object_set_string(o, copy);
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            ctl_json_printable(json_object_array_get_idx(o, i));
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, val)
        {
            (void)key;
            ctl_json_printable(val);
        }
    }
}

/* ---- reading replies leniently: a missing or mistyped field prints as "-" ---- */

struct json_object *jget(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;

    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v;
}

const char *jstr(struct json_object *o, const char *key, const char *def)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : def;
}

bool jnum(struct json_object *o, const char *key, double *ret)
{
    struct json_object *v = jget(o, key);

    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return false;
    *ret = json_object_get_double(v);
    return true;
}

uint64_t ju64(struct json_object *o, const char *key)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

bool jbool(struct json_object *o, const char *key)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

size_t jlen(struct json_object *a)
{
    return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* An integer field (a node number, a cell id) as text, "-" for null or missing. */
const char *jint_str(struct json_object *o, const char *key, char *buf, size_t len)
{
    struct json_object *v = jget(o, key);

    if (!json_object_is_type(v, json_type_int))
        return "-";
    snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
    return buf;
}

/* An array of strings as "a,b,c" ("-" when empty). */
const char *jlist_str(struct json_object *a, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < jlen(a) && used < len; i++) {
        struct json_object *v = json_object_array_get_idx(a, i);
        int w =
            snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                     json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "?");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf[0] ? buf : "-";
}

void ctl_print_json(struct json_object *o)
{
    const char *s = json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    printf("%s", s ? s : "null");
}
