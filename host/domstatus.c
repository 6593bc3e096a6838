/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a running domain (host/domstatus.h): read bounded, without following a
 * link, parsed as metadata.c parses (no network, no entities, no DTD), and believed only when it
 * is libvirt's (vnumad's user's, written by no one else) and names the domain asked about.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "domstatus.h"
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

/*
 * The status file of `name` in the run directory of the libvirt daemon `daemon` (a pid: its
 * /run/libvirt as it sees it, through /proc/PID/root, every link resolved inside that root
 * (openat2 RESOLVE_IN_ROOT), so that whoever can write there names nothing outside it), or
 * `dir` (the host's own libvirt). An fd, or -errno.
 */
static int open_status(pid_t daemon, const char *dir, const char *name, char *err, size_t errlen)
{
    const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    char path[4096];
    int n, fd;

    if (daemon <= 0) {
        n = snprintf(path, sizeof(path), "%s/qemu/%s.xml", dir, name);
        if (n < 0 || (size_t)n >= sizeof(path))
            return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
        fd = open(path, flags);
        return fd < 0 ? -errno : fd;
    }
    char root[64], own[64], theirs[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)daemon);
    n = (int)readlink(path, theirs, sizeof(theirs) - 1);
    int m = (int)readlink("/proc/self/ns/pid", own, sizeof(own) - 1);
    if (n <= 0 || m <= 0)
        return -ESRCH; /* the daemon is gone: its connection drops */
    theirs[n] = own[m] = '\0';
    if (strcmp(theirs, own) != 0)
        return vn_fail(err, errlen, -EPERM,
                       "the libvirt daemon (pid %d) runs in a PID namespace of its own: the "
                       "pids it writes are not this host's",
                       (int)daemon);
    snprintf(root, sizeof(root), "/proc/%d/root", (int)daemon);
    _cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -ESRCH;
    n = snprintf(path, sizeof(path), "run/libvirt/qemu/%s.xml", name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
    struct open_how how = {.flags = (uint64_t)flags,
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    fd = (int)syscall(SYS_openat2, rfd, path, &how, sizeof(how));
    return fd < 0 ? -errno : fd;
}

/* The status file open as fd into *buf (malloc'd, NUL-terminated), if it is fit to believe. */
static int read_status(int ofd, char **buf, size_t *len, char *err, size_t errlen)
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
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return vn_fail(err, errlen, -EPERM,
                       "libvirt's status file is not a regular file of uid %u that only it "
                       "may write (uid %u, mode %04o)",
                       (unsigned)geteuid(), (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
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

int domstatus_qemu_pid(const virt_dom_id *ident, pid_t *ret, char *err, size_t errlen)
{
    const char *dir = getenv(DOMSTATUS_RUN_DIR_ENV);
    _cleanup_free_ char *buf = NULL;
    xmlDocPtr doc;
    size_t len = 0;
    int fd, r;

    /* libvirt refuses a name with '/'; one that has it is not libvirt's */
    if (!ident->name[0] || strchr(ident->name, '/') || !strcmp(ident->name, ".") ||
        !strcmp(ident->name, ".."))
        return vn_fail(err, errlen, -EINVAL, "not a name libvirt gives a status file");
    if (!dir || !*dir)
        dir = DOMSTATUS_RUN_DIR_DEFAULT;
    fd = open_status(ident->daemon_pid, dir, ident->name, err, errlen);
    if (fd == -EPERM || fd == -ENAMETOOLONG)
        return fd;
    r = read_status(fd, &buf, &len, err, errlen);
    if (r < 0)
        return r;
    doc = xmlReadMemory(buf, (int)len, "status.xml", "UTF-8",
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc || doc->intSubset || doc->extSubset) {
        xmlFreeDoc(doc);
        return vn_fail(err, errlen, -EINVAL, "libvirt's status file does not parse");
    }
    r = status_pid(doc, ident, ret, err, errlen);
    xmlFreeDoc(doc);
    return r;
}
