/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a running domain (host/domstatus.h): read bounded, without following a
 * link, parsed as metadata.c parses (no network, no entities, no DTD), and believed only when it
 * is libvirt's (its daemon's user's, written by no one else) and names the domain asked about;
 * the pid in it mapped from the daemon's PID namespace (nspid.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "domstatus.h"
#include "nspid.h"
#include "nsroot.h"
#include "util.h"

/* Environment variable that moves libvirt's run directory (tests). */
#define DOMSTATUS_RUN_DIR_ENV     "VN_LIBVIRT_RUN_DIR"
#define DOMSTATUS_RUN_DIR_DEFAULT "/run/libvirt"

static void xml_freep(xmlChar **s)
{
    if (*s)
        xmlFree(*s);
}
#define _cleanup_xml_ __attribute__((cleanup(xml_freep)))

/* A directory the daemon's environment names, fit to build a path on: absolute, without a ".."
 * component, short enough. (Read in the daemon's root: it is only ever the daemon's own.) */
static bool env_dir_ok(const char *v)
{
    size_t len = strlen(v);

    if (v[0] != '/' || len >= DOMSTATUS_ENV_DIR_MAX)
        return false;
    for (const char *p = v; (p = strstr(p, "..")); p += 2)
        if ((p == v || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
            return false;
    return true;
}

/*
 * Where a session daemon (one not running as root) keeps its domains' status files, as it sees
 * it: libvirt's QEMU driver puts an unprivileged driver's state in $XDG_RUNTIME_DIR/libvirt/
 * qemu/run (src/qemu/qemu_conf.c, virQEMUDriverConfigNew), GLib's runtime directory falling
 * back to its cache directory ($XDG_CACHE_HOME, else $HOME/.cache) when XDG_RUNTIME_DIR is not
 * set or empty. Taken from the daemon's environment at its start (root/proc/PID/environ, its
 * first DOMSTATUS_ENV_MAX bytes). 0, or -errno with the reason in err.
 */
static int session_state_dir(const char *root, const virt_dom_id *ident, char *out, size_t len,
                             char *err, size_t errlen)
{
    static const char *const keys[] = {"XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=", "HOME="};
    const char *val[VN_ARRAY_SIZE(keys)] = {NULL};
    const int pid = (int)ident->daemon_pid;
    _cleanup_free_ char *env = malloc(DOMSTATUS_ENV_MAX + 1);
    char path[PATH_MAX];
    size_t got = 0;
    int n;

    if (!env)
        return -ENOMEM;
    (void)snprintf(path, sizeof(path), "%s/proc/%d/environ", root, pid);
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return -ESRCH; /* the daemon is gone: its connection drops */
    if (fd < 0)
        return vn_fail(err, errlen, -EPERM,
                       "cannot read the environment of the libvirt daemon (pid %d): %s", pid,
                       strerror(errno));
    while (got < DOMSTATUS_ENV_MAX) {
        ssize_t r = read(fd, env + got, DOMSTATUS_ENV_MAX - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    env[got] = '\0';
    /* NUL-separated NAME=VALUE; the first of a name is the one getenv() finds */
    for (size_t i = 0; i < got; i += strlen(env + i) + 1)
        for (size_t k = 0; k < VN_ARRAY_SIZE(keys); k++)
            if (!val[k] && !strncmp(env + i, keys[k], strlen(keys[k])))
                val[k] = env + i + strlen(keys[k]);
    for (size_t k = 0; k < VN_ARRAY_SIZE(keys); k++) {
        if (!val[k] || !val[k][0])
            continue; /* GLib takes an empty value as none */
        if (!env_dir_ok(val[k]))
            return vn_fail(err, errlen, -EPERM,
                           "the libvirt daemon (pid %d) has %s'%.200s', not an absolute path "
                           "without '..'",
                           pid, keys[k], val[k]);
        n = snprintf(out, len, "%s%s/libvirt/qemu/run", val[k], k == 2 ? "/.cache" : "");
        if (n < 0 || (size_t)n >= len)
            return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
        return 0;
    }
    return vn_fail(err, errlen, -EPERM,
                   "the libvirt daemon (pid %d) runs as uid %u (a session daemon) without "
                   "XDG_RUNTIME_DIR, XDG_CACHE_HOME or HOME in its environment: its status "
                   "files cannot be found",
                   pid, (unsigned)ident->daemon_uid);
}

/*
 * The status file of ident's domain. The host's own libvirt (no daemon_pid): in `dir`. A daemon
 * reached through a socket: in its root (nsroot.h), in the run directory it sees: root's
 * daemon is libvirt's privileged one, whatever its URI's path (a privileged QEMU driver takes
 * "/session" for "/system"), with its files in /run/libvirt/qemu; any other user's is a
 * session daemon (session_state_dir). An fd, or -errno.
 */
static int open_status(const char *root, const virt_dom_id *ident, const char *dir, char *err,
                       size_t errlen)
{
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    char path[4096], state[PATH_MAX];
    int n, fd;

    if (ident->daemon_pid <= 0) {
        n = snprintf(path, sizeof(path), "%s/qemu/%s.xml", dir, ident->name);
        if (n < 0 || (size_t)n >= sizeof(path))
            return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
        fd = open(path, flags);
        return fd < 0 ? -errno : fd;
    }
    if (ident->daemon_uid == 0) {
        (void)snprintf(state, sizeof(state), "/run/libvirt/qemu");
    } else {
        int r = session_state_dir(root, ident, state, sizeof(state), err, errlen);
        if (r < 0)
            return r;
    }
    n = snprintf(path, sizeof(path), "%s/%s.xml", state, ident->name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
    fd = nsroot_open(root, ident->daemon_pid, path, flags);
    return fd == -ESRCH ? vn_fail(err, errlen, fd, "the libvirt daemon (pid %d) is gone",
                                  (int)ident->daemon_pid)
                        : fd;
}

/* The status file open as fd into *buf (malloc'd, NUL-terminated), if it is fit to believe: a
 * regular file of uid `owner` that no one else may write. */
static int read_status(int ofd, uid_t owner, char **buf, size_t *len, char *err, size_t errlen)
{
    _cleanup_close_ int fd = ofd;
    _cleanup_free_ char *b = NULL;
    struct stat st;
    size_t got = 0;

    if (fd < 0)
        return fd == -ENOENT ? -ESRCH
               : fd == -ELOOP
                   ? vn_fail(err, errlen, -EPERM, "libvirt's status file is a symbolic link")
                   : vn_fail(err, errlen, fd, "cannot open libvirt's status file: %s",
                             strerror(-fd));
    if (fstat(fd, &st) < 0)
        return vn_fail(err, errlen, -errno, "cannot stat libvirt's status file: %s",
                       strerror(errno));
    if (!S_ISREG(st.st_mode) || st.st_uid != owner || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return vn_fail(err, errlen, -EPERM,
                       "libvirt's status file is not a regular file of uid %u that only it "
                       "may write (uid %u, mode %04o)",
                       (unsigned)owner, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    if ((uint64_t)st.st_size > DOMSTATUS_MAX_BYTES)
        return vn_fail(err, errlen, -EINVAL, "libvirt's status file is over %u MiB",
                       DOMSTATUS_MAX_BYTES >> 20);
    b = malloc((size_t)st.st_size + 1);
    if (!b)
        return -ENOMEM;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return vn_fail(err, errlen, -errno, "cannot read libvirt's status file: %s",
                           strerror(errno));
        if (n == 0)
            break; /* shorter than it was: libvirt rewrote it; the parse tells */
        got += (size_t)n;
    }
    b[got] = '\0';
    *buf = VN_TAKE_PTR(b);
    *len = got;
    return 0;
}

static xmlNodePtr child_named(xmlNodePtr n, const char *name)
{
    for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0)
            return c;
    return NULL;
}

/* <domstatus pid='P'><domain id='I'><uuid>U</uuid>: P when I and U are ident's. */
static int status_pid(xmlDocPtr doc, const virt_dom_id *ident, pid_t *ret, char *err, size_t errlen)
{
    xmlNodePtr root = xmlDocGetRootElement(doc), dom, uuid;
    _cleanup_xml_ xmlChar *pid = NULL, *id = NULL, *u = NULL;
    int64_t p, i;

    if (!root || xmlStrcmp(root->name, (const xmlChar *)"domstatus") != 0 ||
        !(dom = child_named(root, "domain")) || !(uuid = child_named(dom, "uuid")))
        return vn_fail(err, errlen, -EINVAL, "libvirt's status file has no <domstatus><domain>");
    pid = xmlGetNoNsProp(root, (const xmlChar *)"pid");
    id = xmlGetNoNsProp(dom, (const xmlChar *)"id");
    u = xmlNodeGetContent(uuid);
    if (!pid || vn_parse_i64((const char *)pid, 1, INT32_MAX, &p) < 0)
        return vn_fail(err, errlen, -EINVAL, "libvirt's status file has no valid pid");
    if (!u || strcasecmp((const char *)u, ident->uuid) != 0)
        return vn_fail(err, errlen, -EPERM,
                       "libvirt's status file under this name is another "
                       "domain's (another uuid)");
    if (!id || vn_parse_i64((const char *)id, 0, INT32_MAX, &i) < 0 || i != ident->id)
        return vn_fail(err, errlen, -ESRCH,
                       "libvirt's status file is of another run of the domain (not id %d)",
                       ident->id);
    *ret = (pid_t)p;
    return 0;
}

/* The real uid of process pid (root/proc/PID/status), or -errno (-ESRCH: gone). */
static long process_uid(const char *root, pid_t pid)
{
    char path[PATH_MAX], line[256];
    unsigned long real;

    (void)snprintf(path, sizeof(path), "%s/proc/%d/status", root, (int)pid);
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? -ESRCH : -errno;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "Uid: %lu", &real) == 1)
            return real <= UINT32_MAX ? (long)real : -EINVAL;
    return -EINVAL;
}

/*
 * The QEMU pid a daemon reached through a socket wrote (`inner`, as its PID namespace sees it)
 * as this host's pid. In the daemon's own PID namespace (a KubeVirt pod's), it is the process
 * of that namespace with that pid there (nspid.h): the daemon names at most another process of
 * its own namespace. A daemon of another user than root (a session daemon) starts its QEMU as
 * itself: a process of another user is not its QEMU, whatever it wrote.
 */
static int daemon_pid_here(const char *root, const virt_dom_id *ident, pid_t inner, pid_t *ret,
                           char *err, size_t errlen)
{
    char ns[NSPID_NS_MAX];
    pid_t pid = inner;
    long uid;
    int r = nspid_other(root, ident->daemon_pid);

    if (r < 0)
        return -ESRCH; /* the daemon is gone: its connection drops */
    if (r > 0) {
        r = nspid_ns(root, ident->daemon_pid, ns, sizeof(ns));
        if (r < 0)
            return -ESRCH;
        r = nspid_find(root, ns, inner, &pid);
        if (r < 0)
            return vn_fail(err, errlen, -ESRCH,
                           "no process has pid %d in the PID namespace of the libvirt daemon "
                           "(pid %d, %s)",
                           (int)inner, (int)ident->daemon_pid, ns);
    }
    if (ident->daemon_uid != 0) {
        uid = process_uid(root, pid);
        if (uid == -ESRCH)
            return vn_fail(err, errlen, -ESRCH, "its QEMU (pid %d) is gone", (int)pid);
        if (uid < 0 || (uid_t)uid != ident->daemon_uid)
            return vn_fail(err, errlen, -EPERM,
                           "libvirt's status file names pid %d, a process of uid %ld, not of "
                           "the session daemon's uid %u",
                           (int)pid, uid, (unsigned)ident->daemon_uid);
    }
    *ret = pid;
    return 0;
}

int domstatus_qemu_pid(const char *root, const virt_dom_id *ident, pid_t *ret, char *err,
                       size_t errlen)
{
    const char *dir = getenv(DOMSTATUS_RUN_DIR_ENV);
    _cleanup_free_ char *buf = NULL;
    xmlDocPtr doc;
    size_t len = 0;
    pid_t pid = 0;
    int fd, r;

    /* libvirt refuses a name with '/'; one that has it is not libvirt's */
    if (!ident->name[0] || strchr(ident->name, '/') || !strcmp(ident->name, ".") ||
        !strcmp(ident->name, ".."))
        return vn_fail(err, errlen, -EINVAL, "not a name libvirt gives a status file");
    if (!dir || !*dir)
        dir = DOMSTATUS_RUN_DIR_DEFAULT;
    fd = open_status(root, ident, dir, err, errlen);
    if (fd == -EPERM || fd == -ENAMETOOLONG || fd == -ESRCH)
        return fd;
    r = read_status(fd, ident->daemon_pid > 0 ? ident->daemon_uid : geteuid(), &buf, &len, err,
                    errlen);
    if (r < 0)
        return r;
    doc = xmlReadMemory(buf, (int)len, "status.xml", "UTF-8",
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc || doc->intSubset || doc->extSubset) {
        xmlFreeDoc(doc);
        return vn_fail(err, errlen, -EINVAL, "libvirt's status file does not parse");
    }
    r = status_pid(doc, ident, &pid, err, errlen);
    xmlFreeDoc(doc);
    if (r < 0)
        return r;
    if (ident->daemon_pid > 0 && (r = daemon_pid_here(root, ident, pid, &pid, err, errlen)) < 0)
        return r;
    *ret = pid;
    return 0;
}
