/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "control.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "loop.h"
#include "model.h"
#include "util.h"
#include "virt.h"

#define CONTROL_JSON_DEPTH        4    /* a request is one flat object */
#define CONTROL_BACKLOG           32   /* pending connections the kernel queues for us */
#define CONTROL_ACCEPT_BURST      32   /* accepts per wake-up, so clients cannot starve the loop */
#define CONTROL_ACCEPT_RETRY_MS   200  /* out of fds: stop accepting for this long */
#define CONTROL_SEND_TIMEOUT_MS   1000 /* one send() of a short refusal or request error */
#define CONTROL_REPLY_DEADLINE_MS 5000 /* the whole of such an error */
/* A reply the client does not read is kept (the loop goes on) this long, then dropped. */
#define CONTROL_DRAIN_DEADLINE_MS 30000
#define CONTROL_ECHO_MAX          64 /* bytes of a client's key or command quoted back */

typedef struct control_client {
    control_server *srv;
    unsigned slot;
    int fd;
    int watch;
    int timer;
    bool deferred; /* the handler answers later (control_reply_done) */
    size_t len, cap;
    char *buf; /* CONTROL_REQUEST_MAX bytes, grown up to CONTROL_XML_LINE_MAX for a long line */
    /* the reply, sent as fast as the client reads it, never waited for on the loop */
    char *out;
    size_t out_len, out_off;
    bool draining; /* waiting for room for the rest of out */
} control_client;

struct control_server {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int fd;
    int watch;       /* -1 while accepting is paused */
    int retry_timer; /* -1 unless accepting is paused */
    dev_t dev;       /* the socket file we created, to unlink only that one */
    ino_t ino;
    const control_command *cmds;
    void *opaque;
    control_client *clients[CONTROL_MAX_CLIENTS];
};

/* Write all of buf. blocking=false: one attempt per chunk with MSG_DONTWAIT (for the short
 * refusals sent on a fresh connection, whose buffer is empty); otherwise the fd is made
 * blocking with a send timeout, bounded overall by CONTROL_REPLY_DEADLINE_MS. */
static int send_all(int fd, const char *buf, size_t len, bool blocking)
{
    int64_t deadline = (int64_t)vn_mono_ms() + CONTROL_REPLY_DEADLINE_MS;

    if (blocking) {
        struct timeval tv = {.tv_sec = CONTROL_SEND_TIMEOUT_MS / 1000,
                             .tv_usec = (CONTROL_SEND_TIMEOUT_MS % 1000) * 1000};
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
            return -errno;
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
            return -errno;
    }
    while (len > 0) {
        ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | (blocking ? 0 : MSG_DONTWAIT));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (blocking && (errno == EAGAIN || errno == EWOULDBLOCK) &&
                (int64_t)vn_mono_ms() < deadline)
                continue;
            return -errno;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Send o as one line. */
static int send_json(int fd, struct json_object *o, bool blocking)
{
    _cleanup_free_ char *line = NULL;
    const char *s;
    size_t n;

    s = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (!s)
        return -ENOMEM;
    line = malloc(n + 1);
    if (!line)
        return -ENOMEM;
    memcpy(line, s, n);
    line[n] = '\n';
    return send_all(fd, line, n + 1, blocking);
}

/* {"error": {"class": errclass, "desc": desc}} as one line. */
static int send_error(int fd, const char *errclass, const char *desc, bool blocking)
{
    _cleanup_json_ struct json_object *o = json_object_new_object();
    struct json_object *e = json_object_new_object();

    if (!o || !e) {
        if (e)
            json_object_put(e);
        return -ENOMEM;
    }
    json_object_object_add(e, "class", json_object_new_string(errclass));
    json_object_object_add(e, "desc", json_object_new_string(desc));
    json_object_object_add(o, "error", e);
    return send_json(fd, o, blocking);
}

__attribute__((format(printf, 2, 3))) static void bad_request(int fd, const char *fmt, ...)
{
    char desc[CONTROL_ERR_MAX];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(desc, sizeof(desc), fmt, ap);
    va_end(ap);
    (void)send_error(fd, "BadRequest", desc, true);
}

/* A client's string, quoted back in an error: at most CONTROL_ECHO_MAX printable ASCII
 * characters, anything else as '?', so that a reply never carries the client's bytes. */
static const char *echo_str(const char *s, char *buf, size_t len)
{
    size_t i;

    for (i = 0; s[i] && i < CONTROL_ECHO_MAX && i + 1 < len; i++)
        buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    buf[i] = '\0';
    return buf;
}

static void client_free(control_client *c)
{
    if (!c)
        return;
    if (c->watch >= 0)
        loop_remove_fd(c->watch);
    if (c->timer >= 0)
        loop_remove_timer(c->timer);
    if (c->fd >= 0)
        (void)close(c->fd);
    if (c->srv && c->srv->clients[c->slot] == c)
        c->srv->clients[c->slot] = NULL;
    free(c->out);
    free(c->buf);
    free(c);
}

/* o as one line into the client's reply (sent by client_finish). 0 or -ENOMEM. */
static int client_queue(control_client *c, struct json_object *o)
{
    size_t n;
    const char *s = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    char *out;

    if (!s || !(out = malloc(n + 1)))
        return -ENOMEM;
    memcpy(out, s, n);
    out[n] = '\n';
    free(c->out);
    c->out = out;
    c->out_len = n + 1;
    c->out_off = 0;
    return 0;
}

/* Send what the client's socket takes now: 1 when the reply is out, 0 when the rest waits
 * for the client to read, -errno when it went away. */
static int client_flush(control_client *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n =
            send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
        c->out_off += (size_t)n;
    }
    return 1;
}

static void client_finish(control_client *c);

static void client_writable(int watch, int fd, int events, void *opaque)
{
    (void)watch;
    (void)fd;
    (void)events;
    client_finish(opaque);
}

/* A client that did not read its reply within CONTROL_DRAIN_DEADLINE_MS: dropped. */
static void client_too_slow(int timer, void *opaque)
{
    (void)timer;
    client_free(opaque);
}

/* The request is answered: the client goes once its reply is out. A reply its socket does not
 * take at once waits, watched for room, while the loop goes on (a client that never reads is
 * dropped after CONTROL_DRAIN_DEADLINE_MS). */
static void client_finish(control_client *c)
{
    int r = c->out && c->fd >= 0 ? client_flush(c) : 1;

    if (r != 0) {
        client_free(c);
        return;
    }
    if (c->draining)
        return; /* waiting for room already */
    if (c->watch >= 0)
        loop_remove_fd(c->watch);
    if (c->timer >= 0)
        loop_remove_timer(c->timer);
    c->draining = true;
    c->watch = loop_add_fd(c->fd, LOOP_WRITABLE, client_writable, c);
    c->timer = c->watch >= 0 ? loop_add_timer(CONTROL_DRAIN_DEADLINE_MS, client_too_slow, c) : -1;
    if (c->watch < 0 || c->timer < 0)
        client_free(c);
}

/* The reply to a request: rc 0, result (taken over; NULL: {}), or the handler's error. */
static void client_reply(control_client *c, int rc, struct json_object *result, char *errclass,
                         char *err)
{
    _cleanup_json_ struct json_object *reply = NULL, *res = result;

    errclass[CONTROL_ERRCLASS_MAX - 1] = '\0';
    err[CONTROL_ERR_MAX - 1] = '\0';
    if (rc < 0) {
        (void)send_error(c->fd, errclass[0] ? errclass : "Internal", err[0] ? err : strerror(-rc),
                         true);
        return;
    }
    reply = json_object_new_object();
    if (!reply || (!res && !(res = json_object_new_object()))) {
        (void)send_error(c->fd, "Internal", strerror(ENOMEM), true);
        return;
    }
    json_object_object_add(reply, "return", VN_TAKE_PTR(res));
    if (client_queue(c, reply) < 0)
        (void)send_error(c->fd, "Internal", "cannot serialize the reply", true);
}

/* Validate the request line (n bytes, newline excluded), run its command, send the reply. */
static void client_handle(control_client *c, const char *line, size_t n)
{
    _cleanup_json_ struct json_object *req = NULL, *result = NULL;
    const control_command *cmd = NULL;
    const char *command = NULL, *domain = NULL, *stage = NULL, *xml = NULL;
    control_request args;
    char errclass[CONTROL_ERRCLASS_MAX] = "", err[CONTROL_ERR_MAX] = "", echo[CONTROL_ECHO_MAX + 1];
    vn_json_doc doc;
    int r;

    if (memchr(line, '\0', n)) {
        bad_request(c->fd, "request contains a NUL byte");
        return;
    }
    switch (vn_json_parse(line, n, CONTROL_JSON_DEPTH, &doc)) {
    case VN_JSON_OK:
        req = doc.root;
        break;
    case VN_JSON_E_NOMEM:
        (void)send_error(c->fd, "Internal", strerror(ENOMEM), true);
        return;
    default:
        bad_request(c->fd, "request is not one JSON value: %s",
                    doc.error == VN_JSON_E_TRAILING ? "trailing characters" : doc.why);
        return;
    }
    if (!json_object_is_type(req, json_type_object)) {
        bad_request(c->fd, "request is not a JSON object");
        return;
    }
    json_object_object_foreach(req, key, val)
    {
        bool is_command = strcmp(key, "command") == 0, is_stage = strcmp(key, "stage") == 0;
        bool is_xml = strcmp(key, "xml") == 0;
        if (!is_command && !is_stage && !is_xml && strcmp(key, "domain") != 0) {
            bad_request(c->fd, "unknown key '%s' in request", echo_str(key, echo, sizeof(echo)));
            return;
        }
        if (!json_object_is_type(val, json_type_string)) {
            bad_request(c->fd, "'%s' must be a string", key);
            return;
        }
        /* "web1\u0000x" must not be taken for "web1" */
        if (strlen(json_object_get_string(val)) != (size_t)json_object_get_string_len(val)) {
            bad_request(c->fd, "'%s' contains a NUL character", key);
            return;
        }
        if (is_command)
            command = json_object_get_string(val);
        else if (is_stage)
            stage = json_object_get_string(val);
        else if (is_xml)
            xml = json_object_get_string(val);
        else
            domain = json_object_get_string(val);
    }
    if (!command) {
        bad_request(c->fd, "request has no 'command'");
        return;
    }
    for (const control_command *k = c->srv->cmds; k->name; k++)
        if (strcmp(k->name, command) == 0) {
            cmd = k;
            break;
        }
    if (!cmd) {
        bad_request(c->fd, "unknown command '%s'", echo_str(command, echo, sizeof(echo)));
        return;
    }
    /* only the commands that take an XML may be longer than CONTROL_REQUEST_MAX */
    if (!cmd->takes_xml && n + 1 > CONTROL_REQUEST_MAX) {
        bad_request(c->fd, "request longer than %d bytes", CONTROL_REQUEST_MAX);
        return;
    }
    if (xml && !cmd->takes_xml) {
        bad_request(c->fd, "command '%s' takes no xml", cmd->name);
        return;
    }
    if (cmd->takes_xml && (!xml || !*xml || strlen(xml) > CONTROL_XML_MAX)) {
        bad_request(c->fd, "command '%s' needs an xml of 1 to %d bytes", cmd->name,
                    CONTROL_XML_MAX);
        return;
    }
    if (domain && (!*domain || strlen(domain) >= SNAP_NAME_MAX)) {
        bad_request(c->fd, "domain name must be 1 to %d bytes", SNAP_NAME_MAX - 1);
        return;
    }
    if (cmd->needs_domain && !domain) {
        bad_request(c->fd, "command '%s' needs a domain", cmd->name);
        return;
    }
    /* a stage only for the commands that take one (the test holds) */
    if (stage && !cmd->takes_stage) {
        bad_request(c->fd, "command '%s' takes no stage", cmd->name);
        return;
    }
    if (cmd->takes_stage && !stage) {
        bad_request(c->fd, "command '%s' needs a stage", cmd->name);
        return;
    }
    if (stage && (!*stage || strlen(stage) > CONTROL_STAGE_MAX)) {
        bad_request(c->fd, "stage must be 1 to %d bytes", CONTROL_STAGE_MAX);
        return;
    }
    args.domain = domain;
    args.stage = stage;
    args.xml = xml;
    args.client = c;

    r = cmd->fn(c->srv->opaque, &args, &result, errclass, sizeof(errclass), err, sizeof(err));
    if (r == CONTROL_DEFERRED && c->deferred)
        return;
    client_reply(c, r, VN_TAKE_PTR(result), errclass, err);
}

control_reply *control_defer(const control_request *req)
{
    req->client->deferred = true;
    return (control_reply *)req->client;
}

void control_reply_done(control_reply *reply, int rc, struct json_object *result,
                        const char *errclass, const char *err)
{
    control_client *c = (control_client *)reply;
    char class_buf[CONTROL_ERRCLASS_MAX], err_buf[CONTROL_ERR_MAX];

    snprintf(class_buf, sizeof(class_buf), "%s", errclass ? errclass : "");
    snprintf(err_buf, sizeof(err_buf), "%s", err ? err : "");
    if (c->fd >= 0)
        client_reply(c, rc, result, class_buf, err_buf);
    else if (result)
        json_object_put(result);
    client_finish(c);
}

static void client_readable(int watch, int fd, int events, void *opaque)
{
    control_client *c = opaque;

    (void)watch;
    (void)events; /* hang-ups and errors show up as read() results */
    for (;;) {
        ssize_t n;
        char *nl;

        if (c->len == c->cap) {
            /* a line longer than the short requests': the place command's XML (the bound is
             * checked again against the command once it is known) */
            size_t cap = c->cap * 4 < CONTROL_XML_LINE_MAX ? c->cap * 4 : CONTROL_XML_LINE_MAX;
            char *nb = c->cap < CONTROL_XML_LINE_MAX ? realloc(c->buf, cap) : NULL;
            if (!nb) {
                bad_request(fd, "request longer than %d bytes", CONTROL_XML_LINE_MAX);
                break;
            }
            c->buf = nb;
            c->cap = cap;
        }
        n = read(fd, c->buf + c->len, c->cap - c->len);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return;
            break;
        }
        if (n == 0) {
            if (c->len > 0)
                bad_request(fd, "request is not terminated by a newline");
            break;
        }
        nl = memchr(c->buf + c->len, '\n', (size_t)n);
        c->len += (size_t)n;
        if (nl) {
            client_handle(c, c->buf, (size_t)(nl - c->buf));
            if (c->deferred) { /* answered later: nothing more is read, no timeout */
                loop_remove_fd(c->watch);
                loop_remove_timer(c->timer);
                c->watch = c->timer = -1;
                return;
            }
            break;
        }
    }
    client_finish(c);
}

static void client_timeout(int timer, void *opaque)
{
    control_client *c = opaque;

    (void)timer;
    (void)send_error(c->fd, "BadRequest", "no request line within 2 seconds", false);
    client_free(c);
}

static void server_accept(int watch, int fd, int events, void *opaque);

/* Accepting was paused for lack of fds: try again. */
static void server_resume(int timer, void *opaque)
{
    control_server *s = opaque;
    int w = loop_add_fd(s->fd, LOOP_READABLE, server_accept, s);

    if (w < 0)
        return; /* the timer fires again */
    s->watch = w;
    loop_remove_timer(timer);
    s->retry_timer = -1;
}

static void server_pause(control_server *s)
{
    int t = loop_add_timer(CONTROL_ACCEPT_RETRY_MS, server_resume, s);

    if (t < 0)
        return; /* keep listening: better a busy loop than a dead socket */
    loop_remove_fd(s->watch);
    s->watch = -1;
    s->retry_timer = t;
}

/* Take on a new connection: root only, at most CONTROL_MAX_CLIENTS at a time. */
static void server_add_client(control_server *s, int fd)
{
    struct ucred cr;
    socklen_t crlen = sizeof(cr);
    control_client *c;
    unsigned slot;

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0 || crlen != sizeof(cr)) {
        (void)close(fd);
        return;
    }
    if (cr.uid != 0) {
        (void)send_error(fd, "PermissionDenied", "only root may use the vnumad control socket",
                         false);
        (void)close(fd);
        return;
    }
    for (slot = 0; slot < CONTROL_MAX_CLIENTS && s->clients[slot]; slot++)
        ;
    if (slot == CONTROL_MAX_CLIENTS) {
        (void)send_error(fd, "Internal", "vnumad is busy: too many control clients", false);
        (void)close(fd);
        return;
    }
    c = calloc(1, sizeof(*c));
    if (c && !(c->buf = malloc(CONTROL_REQUEST_MAX))) {
        free(c);
        c = NULL;
    }
    if (!c) {
        (void)close(fd);
        return;
    }
    c->cap = CONTROL_REQUEST_MAX;
    c->srv = s;
    c->slot = slot;
    c->fd = fd;
    c->timer = -1;
    c->watch = loop_add_fd(fd, LOOP_READABLE, client_readable, c);
    if (c->watch >= 0)
        c->timer = loop_add_timer(CONTROL_TIMEOUT_MS, client_timeout, c);
    if (c->watch < 0 || c->timer < 0) {
        c->srv = NULL;
        client_free(c);
        return;
    }
    s->clients[slot] = c;
}

static void server_accept(int watch, int fd, int events, void *opaque)
{
    control_server *s = opaque;

    (void)watch;
    (void)events;
    for (unsigned i = 0; i < CONTROL_ACCEPT_BURST; i++) {
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                server_pause(s);
            return;
        }
        server_add_client(s, cfd);
    }
}

/* Create the parent directory of path (0700) when it is missing. */
static int ensure_parent(const char *path)
{
    char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
    const char *slash = strrchr(path, '/');
    struct stat st;

    if (!slash || slash == path)
        return 0;
    if ((size_t)(slash - path) >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = '\0';
    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno != EEXIST)
        return -errno;
    /* an existing directory: the socket in it is the daemon's door, so the directory itself
     * (not a link to one) must be this user's or root's, and no one else may write it (who
     * could swap the socket for another, or the path for a link) */
    if (lstat(dir, &st) < 0)
        return -errno;
    if (S_ISLNK(st.st_mode))
        return -ELOOP;
    if (!S_ISDIR(st.st_mode))
        return -ENOTDIR;
    if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return -EPERM;
    return 0;
}

/* path exists: refuse anything but a socket nobody answers on, and remove that. */
static int remove_stale(const char *path, const struct sockaddr_un *sa)
{
    _cleanup_close_ int fd = -1;
    struct stat st;

    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
        return -EADDRINUSE;
    if (errno != ECONNREFUSED && errno != ENOENT)
        return -errno;
    if (unlink(path) < 0 && errno != ENOENT)
        return -errno;
    return 0;
}

int control_open(const char *path, const control_command *cmds, void *opaque, control_server **ret)
{
    _cleanup_free_ control_server *s = NULL;
    _cleanup_close_ int fd = -1;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    int r;

    if (!path || !*path || !cmds || !ret)
        return -EINVAL;
    if (strlen(path) >= sizeof(sa.sun_path))
        return -ENAMETOOLONG;
    memcpy(sa.sun_path, path, strlen(path) + 1);

    s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    memcpy(s->path, path, strlen(path) + 1);
    s->cmds = cmds;
    s->opaque = opaque;
    s->watch = -1;
    s->retry_timer = -1;

    r = ensure_parent(path);
    if (r < 0)
        return r;
    r = remove_stale(path, &sa);
    if (r < 0)
        return r;
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return -errno;
    /* before listen(): nobody can connect while the mode is still the umask's */
    if (fchmodat(AT_FDCWD, path, 0600, AT_SYMLINK_NOFOLLOW) < 0 || lstat(path, &st) < 0) {
        r = -errno; /* (a link in the socket's place is not chmod-ed; unlink removes the link) */
        (void)unlink(path);
        return r;
    }
    if (!S_ISSOCK(st.st_mode))
        return -EEXIST;
    if (listen(fd, CONTROL_BACKLOG) < 0) {
        r = -errno;
        (void)unlink(path);
        return r;
    }
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->watch = loop_add_fd(fd, LOOP_READABLE, server_accept, s);
    if (s->watch < 0) {
        (void)unlink(path);
        return s->watch;
    }
    s->fd = fd;
    fd = -1;
    *ret = VN_TAKE_PTR(s);
    return 0;
}

void control_close(control_server *s)
{
    struct stat st;

    if (!s)
        return;
    for (unsigned i = 0; i < CONTROL_MAX_CLIENTS; i++) {
        control_client *c = s->clients[i];
        if (c && c->deferred) { /* its handler's work frees it (control_reply_done) */
            (void)close(c->fd);
            c->fd = -1;
            c->srv = NULL;
            continue;
        }
        client_free(c);
    }
    if (s->watch >= 0)
        loop_remove_fd(s->watch);
    if (s->retry_timer >= 0)
        loop_remove_timer(s->retry_timer);
    (void)close(s->fd);
    if (lstat(s->path, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
        (void)unlink(s->path);
    free(s);
}
