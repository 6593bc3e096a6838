/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Pids across PID namespaces (host/nspid.c), on a fixture /proc: vnumad in namespace A, a
 * libvirt daemon and its QEMU in namespace B (a pod), a process with the same pid there in a
 * third namespace C that must never be taken for B's, malformed and overlong NSpid lines that
 * are passed over, a status file whose NSpid names another process, and a missing thread; then
 * the same calls on this machine's own /proc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nspid.h"
#include "tap.h"

#define NS_A "pid:[4026531836]"
#define NS_B "pid:[4026532100]"
#define NS_C "pid:[4026532200]"

static char root[] = "/tmp/vnuma-nspid-XXXXXX";

/* root/rel with text (its directories made first) */
static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    f = fopen(path, "we");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* process pid of the fixture: its ns/pid link to ns and its status with the NSpid value */
static void proc(int pid, const char *ns, const char *nspid)
{
    char rel[128], path[512], text[512];

    snprintf(rel, sizeof(rel), "proc/%d/status", pid);
    snprintf(text, sizeof(text), "Name:\tp%d\nUmask:\t0022\nNSpid:%s\nUid:\t0\t0\t0\t0\n", pid,
             nspid);
    put(rel, text);
    snprintf(rel, sizeof(rel), "proc/%d/ns/.keep", pid);
    put(rel, "");
    snprintf(path, sizeof(path), "%s/proc/%d/ns/pid", root, pid);
    if (symlink(ns, path) < 0)
        fprintf(stderr, "# cannot link %s\n", path);
}

/* thread tid of process pid: its status under task/ with the NSpid value */
static void task(int pid, int tid, const char *nspid)
{
    char rel[128], text[256];

    snprintf(rel, sizeof(rel), "proc/%d/task/%d/status", pid, tid);
    snprintf(text, sizeof(text), "Name:\tCPU 0/KVM\nNSpid:%s\n", nspid);
    put(rel, text);
}

static void test_parse(void)
{
    pid_t o = 0, i = 0;
    char many[512] = "";

    CHECK(nspid_parse("\t4242\t7\n", &o, &i) == 0 && o == 4242 && i == 7,
          "NSpid 4242 7: here 4242, in its own namespace 7");
    CHECK(nspid_parse("\t99\n", &o, &i) == 0 && o == 99 && i == 99,
          "one field: the same pid in both");
    CHECK(nspid_parse("\t1\t2\t3\n", &o, &i) == 0 && o == 1 && i == 3,
          "three levels: the first and the last");
    CHECK(nspid_parse("\n", &o, &i) == -EINVAL, "no field: malformed");
    CHECK(nspid_parse("\t12\tx7\n", &o, &i) == -EINVAL, "a field that is no number: malformed");
    CHECK(nspid_parse("\t12\t0\n", &o, &i) == -EINVAL, "pid 0: malformed");
    CHECK(nspid_parse("\t12\t-3\n", &o, &i) == -EINVAL, "a negative pid: malformed");
    CHECK(nspid_parse("\t99999999999\n", &o, &i) == -EINVAL, "a pid over 2^31: malformed");
    for (int k = 0; k < NSPID_LEVELS_MAX + 1; k++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "\t%d", k + 1);
    CHECK(nspid_parse(many, &o, &i) == -EINVAL, "%d fields: more than the kernel nests",
          NSPID_LEVELS_MAX + 1);
}

static void test_fixture(void)
{
    char ns[NSPID_NS_MAX], path[600], text[5000];
    pid_t p = 0;
    int r;

    if (!mkdtemp(root)) {
        CHECK(0, "fixture directory");
        return;
    }
    put("proc/self/ns/.keep", "");
    snprintf(path, sizeof(path), "%s/proc/self/ns/pid", root);
    CHECK(symlink(NS_A, path) == 0, "fixture: vnumad in namespace A");
    proc(10, NS_A, "\t10");     /* a process of vnumad's namespace */
    proc(20, NS_B, "\t20\t1");  /* the pod's libvirt daemon, pid 1 there */
    proc(40, NS_C, "\t40\t7");  /* pid 7 of a third namespace */
    proc(30, NS_B, "\t30\t7");  /* the pod's QEMU, pid 7 there */
    proc(50, NS_B, "\t50\t8x"); /* malformed */
    proc(51, NS_B, "\t51\t9");  /* NSpid ... */
    proc(52, NS_B, "\t99\t11"); /* ... naming another process than its directory */
    proc(53, NS_C, "\t53\t12"); /* pid 12: only in the third namespace */
    proc(54, NS_B, "");         /* an empty NSpid */
    proc(55, NS_B, "\t55\t13");
    snprintf(text, sizeof(text), "Name:\tlong\nGroups:\t");
    for (int k = 0; k < 600; k++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d ", 1000 + k);
    snprintf(text + strlen(text), sizeof(text) - strlen(text), "\nNSpid:\t56\t14\n");
    put("proc/56/status", text);
    put("proc/56/ns/.keep", "");
    snprintf(path, sizeof(path), "%s/proc/56/ns/pid", root);
    CHECK(symlink(NS_B, path) == 0, "fixture: a process with a status line over 4 KiB");
    put("proc/notapid/status", "NSpid:\t7\n");

    CHECK(nspid_ns(root, 0, ns, sizeof(ns)) == 0 && !strcmp(ns, NS_A), "vnumad's namespace: %s",
          ns);
    CHECK(nspid_ns(root, 30, ns, sizeof(ns)) == 0 && !strcmp(ns, NS_B), "pid 30's: %s", ns);
    CHECK(nspid_ns(root, 77, ns, sizeof(ns)) == -ESRCH, "no process 77: -ESRCH");
    CHECK(nspid_other(root, 20) == 1, "the daemon is in another namespace than vnumad");
    CHECK(nspid_other(root, 10) == 0, "process 10 is in vnumad's");
    CHECK(nspid_other(root, 77) == -ESRCH, "a gone process: -ESRCH");

    r = nspid_find(root, NS_B, 7, &p);
    CHECK(r == 0 && p == 30,
          "pid 7 of the pod's namespace is process 30, not 40 (pid 7 of a third namespace): %d",
          (int)p);
    p = 0;
    r = nspid_find(root, NS_C, 7, &p);
    CHECK(r == 0 && p == 40, "pid 7 of the third namespace is 40");
    CHECK(nspid_find(root, NS_B, 12, &p) == -ESRCH,
          "pid 12 only in a third namespace: none in the pod's (-ESRCH)");
    CHECK(nspid_find(root, NS_B, 8, &p) == -ESRCH, "a malformed NSpid line is passed over");
    CHECK(nspid_find(root, NS_B, 11, &p) == -ESRCH,
          "an NSpid that names another process than its directory is passed over");
    r = nspid_find(root, NS_B, 13, &p);
    CHECK(r == 0 && p == 55,
          "the processes after a malformed or empty line are still found (13: %d)", (int)p);
    r = nspid_find(root, NS_B, 14, &p);
    CHECK(r == 0 && p == 56, "NSpid after a line longer than the read buffer: found (%d)", (int)p);
    r = nspid_find(root, NS_B, 1, &p);
    CHECK(r == 0 && p == 20, "pid 1 of the pod: its daemon");
    CHECK(nspid_find(root, NS_A, 7, &p) == -ESRCH, "no pid 7 in vnumad's namespace");
    CHECK(nspid_find(root, NS_B, 0, &p) == -EINVAL, "pid 0: no such pid");

    task(30, 30, "\t30\t7");
    task(30, 31, "\t31\t8");
    task(30, 32, "\t32\t9z"); /* malformed */
    task(30, 33, "\t34\t10"); /* names another thread */
    task(30, 35, "\t35\t11");
    task(40, 41, "\t41\t8"); /* the third namespace's thread 8 */
    r = nspid_task(root, 30, 8, &p);
    CHECK(r == 0 && p == 31, "QEMU's thread 8 (in its namespace) is thread 31 here");
    r = nspid_task(root, 30, 7, &p);
    CHECK(r == 0 && p == 30, "its main thread, 7 there, is 30");
    CHECK(nspid_task(root, 30, 9, &p) == -ESRCH, "a malformed task NSpid is passed over");
    CHECK(nspid_task(root, 30, 10, &p) == -ESRCH,
          "a task NSpid naming another thread is passed over");
    r = nspid_task(root, 30, 11, &p);
    CHECK(r == 0 && p == 35, "a thread after those is found");
    CHECK(nspid_task(root, 30, 12, &p) == -ESRCH, "a thread id none of its threads has: -ESRCH");
    CHECK(nspid_task(root, 30, 41, &p) == -ESRCH,
          "another process's thread (41 here) is not one of QEMU's");
    CHECK(nspid_task(root, 77, 8, &p) == -ESRCH, "a gone process has no thread: -ESRCH");
    snprintf(path, sizeof(path), "rm -rf '%s'", root);
    CHECK(system(path) == 0, "fixture removed");
}

/* This machine's /proc: this process is itself in its own namespace, and its main thread. */
static void test_live(void)
{
    char ns[NSPID_NS_MAX];
    pid_t p = 0, self = getpid();
    int r;

    CHECK(nspid_other("/", self) == 0, "live: this process is in vnumad's (its own) namespace");
    CHECK(nspid_ns("/", 0, ns, sizeof(ns)) == 0 && !strncmp(ns, "pid:[", 5),
          "live: /proc/self/ns/pid is %s", ns);
    r = nspid_find("/", ns, self, &p);
    CHECK(r == 0 && p == self, "live: pid %d of this namespace is this process (%d)", (int)self,
          (int)p);
    CHECK(nspid_task("/", self, self, &p) == 0 && p == self, "live: its main thread");
}

int main(void)
{
    test_parse();
    test_fixture();
    test_live();
    return tap_done();
}
