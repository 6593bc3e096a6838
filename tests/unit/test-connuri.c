/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad.conf's libvirt URIs (host/connuri.c): the socket= parameter checked, a glob in it
 * expanded over real unix sockets in a directory of the test's, each match a concrete URI with
 * the label its wildcard components matched; a symbolic link to a socket, a regular file and a
 * path a URI cannot carry are no connections.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "connuri.h"
#include "tap.h"

static char dir[64];

/* A listening unix socket at dir/rel (its parent made first). */
static void sock_at(const char *rel)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char parent[256];
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, rel);
    snprintf(parent, sizeof(parent), "%s", sa.sun_path);
    *strrchr(parent, '/') = '\0';
    (void)mkdir(parent, 0755);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1) < 0)
        fprintf(stderr, "# cannot make socket %s\n", sa.sun_path);
}

int main(void)
{
    char uri[256], want[256], why[256] = "", path[256], target[256];
    conn_match m[8];
    int n;

    snprintf(dir, sizeof(dir), "/tmp/vn-connuri-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    sock_at("h2/libvirt-sock");
    sock_at("h1/libvirt-sock");
    sock_at("h3/other-sock");
    snprintf(path, sizeof(path), "%s/h4", dir);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/h4/libvirt-sock", dir); /* a link to h1's socket */
    snprintf(target, sizeof(target), "%s/h1/libvirt-sock", dir);
    CHECK(symlink(target, path) == 0, "a symbolic link to h1's socket as h4's");
    snprintf(path, sizeof(path), "%s/h5", dir);
    (void)mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/h5/libvirt-sock", dir);
    fclose(fopen(path, "w"));
    sock_at("h&6/libvirt-sock");

    CHECK(conn_uri_check("qemu:///system", why, sizeof(why)) == 0, "a URI without socket=");
    CHECK(!conn_uri_is_pattern("qemu:///system") &&
              !conn_uri_is_pattern("qemu+unix:///system?socket=/run/libvirt/libvirt-sock") &&
              conn_uri_is_pattern("qemu+unix:///system?socket=/run/*/sock") &&
              conn_uri_is_pattern("qemu+unix:///system?mode=direct&socket=/run/h[12]/s"),
          "a glob only in socket= makes a pattern");
    CHECK(conn_uri_check("qemu+unix:///system?socket=relative/sock", why, sizeof(why)) == -EINVAL &&
              strstr(why, "must be absolute"),
          "a relative socket= path is refused (%s)", why);
    CHECK(conn_uri_check("qemu+unix:///system?socket=/run/x%2Fy", why, sizeof(why)) == -EINVAL,
          "an escaped socket= path is refused");

    n = conn_uri_expand("qemu:///system", m, 8);
    CHECK(n == 1 && !strcmp(m[0].uri, "qemu:///system") && !strcmp(m[0].label, "qemu:///system") &&
              !m[0].socket[0],
          "a plain URI is its own connection, labelled by itself");

    snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s/*/libvirt-sock", dir);
    n = conn_uri_expand(uri, m, 8);
    CHECK(n == 2,
          "the glob matches h1 and h2's sockets only (%d): not h3's other name, not the "
          "link, not the regular file, not the path with '&'",
          n);
    snprintf(want, sizeof(want), "qemu+unix:///system?socket=%s/h1/libvirt-sock", dir);
    CHECK(n >= 1 && !strcmp(m[0].uri, want) && !strcmp(m[0].label, "h1") && m[0].ino != 0,
          "h1 first, its concrete URI and label (%s, %s)", n >= 1 ? m[0].uri : "",
          n >= 1 ? m[0].label : "");
    CHECK(n >= 2 && !strcmp(m[1].label, "h2") && strstr(m[1].socket, "/h2/libvirt-sock"),
          "h2 second (%s)", n >= 2 ? m[1].label : "");
    CHECK(conn_uri_expand(uri, m, 1) == 1, "at most max matches");

    snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s/h*/*-sock&mode=legacy", dir);
    n = conn_uri_expand(uri, m, 8);
    CHECK(n == 3 && !strcmp(m[2].label, "h3/other-sock") && strstr(m[2].uri, "&mode=legacy"),
          "two wildcard components make a two-part label; the parameters after socket= stay "
          "(%d: %s)",
          n, n == 3 ? m[2].uri : "");
    snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s/none-*/sock", dir);
    CHECK(conn_uri_expand(uri, m, 8) == 0, "a glob that matches nothing: no connection");

    /* the daemon behind a socket: the kernel's word (SO_PEERCRED); the sockets are this
     * process's */
    pid_t dpid = -1;
    uid_t duid = 1;
    snprintf(uri, sizeof(uri), "qemu+unix:///session?socket=%s/h1/libvirt-sock&mode=direct", dir);
    int r = conn_uri_daemon(uri, &dpid, &duid);
    CHECK(r == 0 && dpid == getpid() && duid == geteuid(),
          "the daemon listening on socket=: this process, pid %d uid %u (r=%d)", (int)dpid,
          (unsigned)duid, r);
    r = conn_uri_daemon("qemu:///system", &dpid, &duid);
    CHECK(r == 0 && dpid == 0 && duid == 0, "no socket= names no daemon: pid 0");
    snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s/none/sock", dir);
    r = conn_uri_daemon(uri, &dpid, &duid);
    CHECK(r == -ENOENT && dpid == 0, "a socket that is not there: -ENOENT (%d)", r);

    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    (void)system(path);
    return tap_done();
}
