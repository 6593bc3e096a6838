/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad.conf's libvirt URIs, their socket globs and the daemons behind them (host/connuri.h).
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "connuri.h"
#include "util.h"

#define GLOB_CHARS "*?["

/* Where the value of uri's socket= parameter starts and its length; NULL when none. */
static const char *socket_param(const char *uri, size_t *len)
{
    const char *q = strchr(uri, '?');

    while (q) {
        q++;
        if (!strncmp(q, "socket=", 7)) {
            q += 7;
            *len = strcspn(q, "&#");
            return q;
        }
        q = strchr(q, '&');
    }
    return NULL;
}

/* A path that reads back the same from a URI: no URI syntax, no escapes, no spaces. */
static bool uri_safe_path(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] <= ' ' || p[i] == 0x7f || strchr("&#%?\"'<>\\", p[i]))
            return false;
    return true;
}

int conn_uri_check(const char *uri, char *why, size_t wlen)
{
    size_t len = 0;
    const char *s = socket_param(uri, &len);

    if (!s)
        return 0;
    if (len == 0 || s[0] != '/' || !uri_safe_path(s, len)) {
        snprintf(why, wlen,
                 "uri: the socket= path must be absolute, without spaces, quotes or any of "
                 "&#%%?<>\\ (got '%.*s')",
                 (int)VN_MIN(len, 200), s);
        return -EINVAL;
    }
    return 0;
}

bool conn_uri_is_pattern(const char *uri)
{
    size_t len = 0;
    const char *s = socket_param(uri, &len);

    for (size_t i = 0; s && i < len; i++)
        if (strchr(GLOB_CHARS, s[i]))
            return true;
    return false;
}

/* The components of path that the pattern's wildcard components matched, joined by '/'. */
static void match_label(const char *pattern, const char *path, char *out, size_t len)
{
    const char *whole = path;
    size_t o = 0;

    out[0] = '\0';
    while (*pattern && *path) {
        size_t pl = strcspn(pattern, "/"), ml = strcspn(path, "/");
        bool wild = false;
        for (size_t i = 0; i < pl; i++)
            wild |= strchr(GLOB_CHARS, pattern[i]) != NULL;
        if (wild && o + ml + 2 < len) {
            if (o)
                out[o++] = '/';
            memcpy(out + o, path, ml);
            o += ml;
            out[o] = '\0';
        }
        pattern += pl + (pattern[pl] == '/');
        path += ml + (path[ml] == '/');
    }
    if (!o)
        snprintf(out, len, "%s", whole);
}

int conn_uri_expand(const char *uri, conn_match *out, unsigned max)
{
    size_t len = 0;
    const char *s = socket_param(uri, &len);
    char pattern[CONN_URI_MAX];
    glob_t g;
    unsigned n = 0;
    int r;

    if (max == 0)
        return 0;
    if (!conn_uri_is_pattern(uri)) {
        memset(&out[0], 0, sizeof(out[0]));
        snprintf(out[0].uri, sizeof(out[0].uri), "%s", uri);
        snprintf(out[0].label, sizeof(out[0].label), "%s", uri);
        if (s)
            snprintf(out[0].socket, sizeof(out[0].socket), "%.*s", (int)len, s);
        return 1;
    }
    if (len >= sizeof(pattern))
        return -ENAMETOOLONG;
    memcpy(pattern, s, len);
    pattern[len] = '\0';
    r = glob(pattern, 0, NULL, &g); /* sorted: the same order at each scan */
    if (r == GLOB_NOMATCH)
        return 0;
    if (r != 0)
        return r == GLOB_NOSPACE ? -ENOMEM : -EIO;
    for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
        const char *p = g.gl_pathv[i];
        size_t pl = strlen(p);
        struct stat sb;
        conn_match *m = &out[n];
        int w;

        if (lstat(p, &sb) < 0 || !S_ISSOCK(sb.st_mode) || !uri_safe_path(p, pl))
            continue;
        memset(m, 0, sizeof(*m));
        w = snprintf(m->uri, sizeof(m->uri), "%.*s%s%s", (int)(s - uri), uri, p, s + len);
        if (w < 0 || (size_t)w >= sizeof(m->uri) || pl >= sizeof(m->socket))
            continue;
        snprintf(m->socket, sizeof(m->socket), "%s", p);
        match_label(pattern, p, m->label, sizeof(m->label));
        m->dev = sb.st_dev;
        m->ino = sb.st_ino;
        n++;
    }
    globfree(&g);
    return (int)n;
}

int conn_uri_daemon(const char *uri, pid_t *ret_pid, uid_t *ret_uid)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct ucred cred;
    socklen_t len = sizeof(cred);
    size_t n = 0;
    const char *s = socket_param(uri, &n);
    int r = 0;

    *ret_pid = 0;
    *ret_uid = 0;
    if (!s)
        return 0;
    if (n == 0 || n >= sizeof(sa.sun_path))
        return -EINVAL;
    memcpy(sa.sun_path, s, n);
    _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        r = -errno;
    else if (cred.pid <= 0)
        r = -ESRCH; /* a daemon in a PID namespace this one does not contain */
    else {
        *ret_pid = cred.pid;
        *ret_uid = cred.uid;
    }
    return r;
}
