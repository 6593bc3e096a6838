/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a running domain (host/domstatus.h): read bounded, without following a
 * link, parsed as metadata.c parses (no network, no entities, no DTD), and believed only when it
 * is libvirt's (vnumad's user's, written by no one else) and names the domain asked about.
 */
#include <errno.h>
#include <fcntl.h>
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

/* The file at `path` into *buf (malloc'd, NUL-terminated), if it is fit to believe. */
static int read_status(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    _cleanup_free_ char *b = NULL;
    struct stat st;
    size_t got = 0;

    if (fd < 0)
        return errno == ENOENT ? -ESRCH
               : errno == ELOOP
                   ? vn_fail(err, errlen, -EPERM, "libvirt's status file is a symbolic link")
                   : vn_fail(err, errlen, -errno, "cannot open libvirt's status file: %s",
                             strerror(errno));
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
    char path[4096];
    xmlDocPtr doc;
    size_t len = 0;
    int n, r;

    /* libvirt refuses a name with '/'; one that has it is not libvirt's */
    if (!ident->name[0] || strchr(ident->name, '/') || !strcmp(ident->name, ".") ||
        !strcmp(ident->name, ".."))
        return vn_fail(err, errlen, -EINVAL, "not a name libvirt gives a status file");
    if (!dir || !*dir)
        dir = DOMSTATUS_RUN_DIR_DEFAULT;
    n = snprintf(path, sizeof(path), "%s/qemu/%s.xml", dir, ident->name);
    if (n < 0 || (size_t)n >= sizeof(path))
        return vn_fail(err, errlen, -ENAMETOOLONG, "the status file's path is too long");
    r = read_status(path, &buf, &len, err, errlen);
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
