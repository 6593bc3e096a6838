/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libvirt's status file of a domain (host/domstatus.c):
 *   - the host's own libvirt ($VN_LIBVIRT_RUN_DIR): the pid of the domain and run the file
 *     names, from a file only libvirt's user may write, never through a link;
 *   - a daemon reached through a socket, on a fixture /proc: root's daemon in a PID namespace of
 *     its own (a KubeVirt root launcher) and a session daemon of uid 107 (a non-root launcher,
 *     XDG_RUNTIME_DIR=/var/run, /var/run a link to /run in its root): the file found in the
 *     daemon's root where libvirt keeps it, its pid mapped to the process of the daemon's
 *     namespace that has it (never the one with that pid in a third namespace), refused when
 *     another user owns the file, when the daemon's environment names a path with '..', when
 *     a link in the daemon's root points at a valid file outside it, when a session daemon
 *     names a process of another user.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domstatus.h"
#include "tap.h"

/* status file `name`.xml in dir/qemu with text, mode */
static void put_status(const char *dir, const char *name, const char *text, mode_t mode)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof(path), "%s/qemu/%s.xml", dir, name);
    (void)unlink(path);
    f = fopen(path, "we");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    (void)chmod(path, mode);
}

/* libvirt's status file (host/domstatus.h): the QEMU pid, believed only for the domain and run it
 * names, from a file only libvirt's user may write, never through a link. */
static void test_status_file(void)
{
    const char *u1 = "11111111-2222-3333-4444-555555555555";
    const char *u2 = "99999999-2222-3333-4444-555555555555";
    char dir[] = "/tmp/vnuma-test-run-XXXXXX", path[600], text[512], err[256] = "";
    virt_dom_id a = {.id = 7}, b = {.id = 8};
    pid_t pid = 0;

    if (!mkdtemp(dir))
        return;
    snprintf(path, sizeof(path), "%s/qemu", dir);
    (void)mkdir(path, 0700);
    (void)setenv("VN_LIBVIRT_RUN_DIR", dir, 1);
    snprintf(a.uuid, sizeof(a.uuid), "%s", u1);
    snprintf(a.name, sizeof(a.name), "x'y");
    snprintf(b.uuid, sizeof(b.uuid), "%s", u2);
    snprintf(b.name, sizeof(b.name), "x&apos;y");
    snprintf(text, sizeof(text),
             "<!-- auto -->\n<domstatus state='running' pid='4001'>\n  <vcpus><vcpu id='0' "
             "pid='4002'/></vcpus>\n  <domain type='kvm' id='7'>\n    <name>x&apos;y</name>\n"
             "    <uuid>%s</uuid>\n  </domain>\n</domstatus>\n",
             u1);
    put_status(dir, "x'y", text, 0600);

    int r = domstatus_qemu_pid("/", &a, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 4001, "x'y: the pid of its status file (%d, %s)", (int)pid, err);
    pid = 0;
    r = domstatus_qemu_pid("/", &b, &pid, err, sizeof(err));
    CHECK(r == -ESRCH && pid == 0, "x&apos;y: no status file of its own, x'y's is not read (%d)",
          r);
    /* the same file planted under the other name (libvirt names its pid file so) */
    put_status(dir, "x&apos;y", text, 0600);
    err[0] = '\0';
    r = domstatus_qemu_pid("/", &b, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0 && strstr(err, "another domain's"),
          "x&apos;y: a status file naming another uuid is refused (%d: %s)", r, err);
    a.id = 9;
    r = domstatus_qemu_pid("/", &a, &pid, err, sizeof(err));
    CHECK(r == -ESRCH && pid == 0,
          "x'y: a status file of an earlier run is not this run's (%d: %s)", r, err);
    a.id = 7;
    put_status(dir, "x'y", text, 0620);
    r = domstatus_qemu_pid("/", &a, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0, "a group-writable status file is refused (%d: %s)", r, err);
    put_status(dir, "x'y", text, 0600);
    snprintf(path, sizeof(path), "%s/qemu/x&apos;y.xml", dir);
    (void)unlink(path);
    char target[600];
    snprintf(target, sizeof(target), "%s/qemu/x'y.xml", dir);
    CHECK(symlink(target, path) == 0, "a link planted under x&apos;y");
    snprintf(b.uuid, sizeof(b.uuid), "%s", u1);
    b.id = 7;
    r = domstatus_qemu_pid("/", &b, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0, "a status file that is a link is not followed (%d: %s)", r, err);
    (void)unlink(path);
    put_status(dir, "x&apos;y",
               "<!DOCTYPE d [<!ENTITY p '4001'>]><domstatus pid='&p;'><domain id='7'>"
               "<uuid>11111111-2222-3333-4444-555555555555</uuid></domain></domstatus>",
               0600);
    r = domstatus_qemu_pid("/", &b, &pid, err, sizeof(err));
    CHECK(r == -EINVAL && pid == 0, "a DTD with entities is not a status file (%d: %s)", r, err);
    snprintf(b.name, sizeof(b.name), "../x'y");
    r = domstatus_qemu_pid("/", &b, &pid, err, sizeof(err));
    CHECK(r == -EINVAL && pid == 0, "a name with '/' is refused (%d)", r);
    (void)unsetenv("VN_LIBVIRT_RUN_DIR");
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    CHECK(system(path) == 0, "fixture removed");
}

/* ---- a daemon reached through a socket, on a fixture /proc ---- */

#define NS_HOST    "pid:[4026531836]"
#define NS_POD     "pid:[4026532100]"
#define NS_SESSION "pid:[4026532300]"
#define NS_THIRD   "pid:[4026532200]"
#define UUID       "11111111-2222-3333-4444-555555555555"
#define QEMU_UID   107

static char top[] = "/tmp/vnuma-domstatus-XXXXXX";
static char root[600];

/* top/rel with text (its directories made first), mode; owned by uid unless it is -1 */
static void put(const char *rel, const char *text, mode_t mode, int uid)
{
    char path[800], cmd[900];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", top, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    (void)unlink(path);
    f = fopen(path, "we");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    (void)chmod(path, mode);
    if (uid >= 0 && chown(path, (uid_t)uid, (gid_t)uid) < 0)
        printf("# cannot chown %s to %d\n", path, uid);
}

static void link_at(const char *target, const char *rel)
{
    char path[800];

    snprintf(path, sizeof(path), "%s/%s", top, rel);
    (void)unlink(path);
    if (symlink(target, path) < 0)
        printf("# cannot link %s\n", path);
}

/* process pid of the fixture host: in namespace ns with NSpid value nspid, of user uid */
static void proc(int pid, const char *ns, const char *nspid, int uid)
{
    char rel[128], text[256];

    snprintf(rel, sizeof(rel), "host/proc/%d/status", pid);
    snprintf(text, sizeof(text), "Name:\tp%d\nNSpid:%s\nUid:\t%d\t%d\t%d\t%d\n", pid, nspid, uid,
             uid, uid, uid);
    put(rel, text, 0644, -1);
    snprintf(rel, sizeof(rel), "host/proc/%d/ns/pid", pid);
    snprintf(text, sizeof(text), "host/proc/%d/ns/.keep", pid);
    put(text, "", 0644, -1);
    link_at(ns, rel);
}

/* a status file naming pid, at rel, mode 0600, of uid */
static void status_at(const char *rel, int pid, int uid)
{
    char text[512];

    snprintf(text, sizeof(text),
             "<domstatus state='running' pid='%d'>\n  <domain type='kvm' id='3'>\n"
             "    <name>dom</name>\n    <uuid>" UUID "</uuid>\n  </domain>\n</domstatus>\n",
             pid);
    put(rel, text, 0600, uid);
}

/* the environment of daemon pid: vars NUL-separated, as /proc/PID/environ has it */
static void environ_of(int pid, const char *const *vars, unsigned n)
{
    char path[800];
    FILE *f;

    snprintf(path, sizeof(path), "%s/host/proc/%d/environ", top, pid);
    f = fopen(path, "we");
    for (unsigned i = 0; f && i < n; i++)
        fwrite(vars[i], 1, strlen(vars[i]) + 1, f);
    if (f)
        fclose(f);
}

/* domstatus_qemu_pid of domain "dom" (id 3) of the daemon pid, uid: r, and *pid and err */
static int ask(int daemon, int uid, pid_t *pid, char *err, size_t errlen)
{
    virt_dom_id id = {.id = 3, .daemon_pid = daemon, .daemon_uid = (uid_t)uid};

    snprintf(id.uuid, sizeof(id.uuid), UUID);
    snprintf(id.name, sizeof(id.name), "dom");
    *pid = 0;
    err[0] = '\0';
    return domstatus_qemu_pid(root, &id, pid, err, errlen);
}

static void test_daemon(void)
{
    const char *sys_file = "host/proc/20/root/run/libvirt/qemu/dom.xml";
    const char *ses_file = "host/proc/21/root/run/libvirt/qemu/run/dom.xml";
    char err[512], target[800];
    pid_t pid;
    int r;

    if (!mkdtemp(top)) {
        CHECK(0, "fixture directory");
        return;
    }
    snprintf(root, sizeof(root), "%s/host", top);
    put("host/proc/self/ns/.keep", "", 0644, -1);
    link_at(NS_HOST, "host/proc/self/ns/pid");
    proc(10, NS_HOST, "\t10", 0);              /* a host process of root's */
    proc(11, NS_HOST, "\t11", QEMU_UID);       /* a session daemon in the host's namespace */
    proc(33, NS_HOST, "\t33", QEMU_UID);       /* ... and its QEMU */
    proc(20, NS_POD, "\t20\t1", 0);            /* root's daemon in a pod: pid 1 there */
    proc(30, NS_POD, "\t30\t7", QEMU_UID);     /* its QEMU: pid 7 there */
    proc(40, NS_THIRD, "\t40\t7", 0);          /* pid 7 of a third namespace */
    proc(41, NS_THIRD, "\t41\t12", 0);         /* pid 12: only there */
    proc(21, NS_SESSION, "\t21\t1", QEMU_UID); /* a session daemon in a pod of its own */
    proc(31, NS_SESSION, "\t31\t7", QEMU_UID);
    proc(32, NS_SESSION, "\t32\t5", 0); /* a process of root's in that pod */

    if (geteuid() != 0) {
        printf("# not root: the files of root's and uid %d cannot be made; the daemon cases are "
               "not run\n",
               QEMU_UID);
        return;
    }
    /* root's daemon (a root launcher): /run/libvirt/qemu in its root, whatever its URI */
    status_at(sys_file, 7, 0);
    r = ask(20, 0, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 30,
          "root's daemon in a pod: pid 7 there is process 30 here, not 40 (pid 7 of a third "
          "namespace) (%d, %d %s)",
          r, (int)pid, err);
    status_at(sys_file, 12, 0);
    r = ask(20, 0, &pid, err, sizeof(err));
    CHECK(r == -ESRCH && pid == 0, "a pid only a third namespace has: none (%d: %s)", r, err);
    status_at(sys_file, 7, QEMU_UID);
    r = ask(20, 0, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0 && strstr(err, "uid 0"),
          "root's daemon, a status file of uid %d: refused (%d: %s)", QEMU_UID, r, err);
    status_at(sys_file, 7, 0);
    snprintf(target, sizeof(target), "%s/%s", top, sys_file);
    (void)chmod(target, 0620);
    r = ask(20, 0, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0, "a group-writable status file: refused (%d: %s)", r, err);
    status_at(sys_file, 7, 0);
    r = ask(77, 0, &pid, err, sizeof(err));
    CHECK(r == -ESRCH, "a daemon that is gone: -ESRCH (%d: %s)", r, err);

    /* a link in the daemon's root to a valid file of root's outside it stays inside */
    status_at("outside/libvirt/qemu/dom.xml", 7, 0); /* (pid 7 of the pod is a process) */
    snprintf(target, sizeof(target), "%s/outside/libvirt", top);
    put("host/proc/22/root/run/.keep", "", 0644, -1);
    link_at(target, "host/proc/22/root/run/libvirt");
    proc(22, NS_POD, "\t22\t2", 0);
    r = ask(22, 0, &pid, err, sizeof(err));
    CHECK(r == -ESRCH && pid == 0,
          "its /run/libvirt a link to a host directory with a valid status file: resolved in "
          "its root, nothing there (%d, %d)",
          r, (int)pid);
    snprintf(target, sizeof(target), "%s/outside/libvirt/qemu/dom.xml", top);
    put("host/proc/23/root/run/libvirt/qemu/.keep", "", 0644, -1);
    link_at(target, "host/proc/23/root/run/libvirt/qemu/dom.xml");
    proc(23, NS_POD, "\t23\t3", 0);
    r = ask(23, 0, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0 && strstr(err, "symbolic link"),
          "a status file that is a link: refused (%d: %s)", r, err);

    /* a daemon in vnumad's namespace: its pid is this host's */
    status_at("host/proc/10/root/run/libvirt/qemu/dom.xml", 4001, 0);
    r = ask(10, 0, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 4001, "root's daemon in vnumad's namespace: the pid as written (%d)",
          (int)pid);

    /* a session daemon (a non-root launcher): $XDG_RUNTIME_DIR/libvirt/qemu/run, its user's */
    const char *env[] = {"PATH=/usr/bin", "XDG_RUNTIME_DIR=/var/run", "HOME=/home/qemu"};
    environ_of(21, env, 3);
    put("host/proc/21/root/var/.keep", "", 0644, -1);
    link_at("/run", "host/proc/21/root/var/run");
    status_at(ses_file, 7, QEMU_UID);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 31,
          "session daemon: XDG_RUNTIME_DIR=/var/run, /var/run -> /run in its root: pid 7 there "
          "is 31 (%d, %d %s)",
          r, (int)pid, err);
    status_at(ses_file, 7, 0);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0, "session daemon, a status file of root's: refused (%d: %s)", r,
          err);
    status_at(ses_file, 5, QEMU_UID);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0 && strstr(err, "uid 0"),
          "session daemon naming a process of root's in its pod: refused (%d: %s)", r, err);
    const char *dotdot[] = {"XDG_RUNTIME_DIR=/var/../etc"};
    environ_of(21, dotdot, 1);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM && strstr(err, "'..'"), "XDG_RUNTIME_DIR with '..': refused (%d: %s)", r,
          err);
    const char *relative[] = {"XDG_RUNTIME_DIR=var/run"};
    environ_of(21, relative, 1);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM, "a relative XDG_RUNTIME_DIR: refused (%d: %s)", r, err);
    const char *cache[] = {"XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=/var/run/kubevirt-private"};
    environ_of(21, cache, 2);
    status_at("host/proc/21/root/run/kubevirt-private/libvirt/qemu/run/dom.xml", 7, QEMU_UID);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 31,
          "an empty XDG_RUNTIME_DIR: GLib's cache directory, XDG_CACHE_HOME "
          "(%d: %s)",
          r, err);
    const char *home[] = {"HOME=/home/qemu"};
    environ_of(21, home, 1);
    status_at("host/proc/21/root/home/qemu/.cache/libvirt/qemu/run/dom.xml", 7, QEMU_UID);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 31, "no XDG variable: $HOME/.cache (%d: %s)", r, err);
    environ_of(21, NULL, 0);
    r = ask(21, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM && strstr(err, "XDG_RUNTIME_DIR"),
          "an empty environment: no place to look, said (%d: %s)", r, err);

    /* a session daemon in vnumad's namespace names only its own user's processes */
    environ_of(11, env, 3);
    status_at("host/proc/11/root/var/run/libvirt/qemu/run/dom.xml", 10, QEMU_UID);
    r = ask(11, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == -EPERM && pid == 0,
          "a session daemon in vnumad's namespace naming root's process 10: refused (%d: %s)", r,
          err);
    status_at("host/proc/11/root/var/run/libvirt/qemu/run/dom.xml", 33, QEMU_UID);
    r = ask(11, QEMU_UID, &pid, err, sizeof(err));
    CHECK(r == 0 && pid == 33, "... naming its own QEMU, 33: taken (%d: %s)", r, err);

    snprintf(target, sizeof(target), "rm -rf '%s'", top);
    CHECK(system(target) == 0, "fixture removed");
}

int main(void)
{
    test_status_file();
    test_daemon();
    return tap_done();
}
