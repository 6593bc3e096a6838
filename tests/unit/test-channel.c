/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent channel's socket as vnumad opens it (agentlink_connect, host/agentlink.h), against
 * the real kernel: the path comes from the live XML, which is not vnumad's to trust, and vnumad
 * connects as root. A socket this process listens on plays the domain's QEMU; a link in its
 * place, a file, another user's socket and one another process listens on are each refused
 * before a byte is sent. (Before, vnumad connect()ed to whatever the path named and sent its
 * hello.) Then a guest that floods its channel: vnumad reads its byte budget and stops reading
 * for a while, counted (before, it read all it was given, 64 KiB a wake-up, without end).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agentlink.h"
#include "clock.h"
#include "loop.h"
#include "tap.h"

static char dir[] = "/tmp/vnuma-test-channel-XXXXXX";

static void path_of(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

/* A listening socket at dir/name (non-blocking: pending() only looks), or -1. */
static int listen_at(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    path_of(sa.sun_path, sizeof(sa.sun_path), name);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* Whether anyone connected to listening socket fd (a pending connection). */
static bool pending(int fd)
{
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

    if (c < 0)
        return false;
    close(c);
    return true;
}

/* the clock vnumad's budget reads: it moves only when the test moves it */
static uint64_t fake_ns = 1000000000ULL;
static uint64_t fake_mono_ns(void)
{
    return fake_ns;
}
static const vn_clock_ops fake_clock = {.mono_ns = fake_mono_ns, .real_ns = fake_mono_ns};

static void on_closed(void *opaque)
{
    *(bool *)opaque = true;
}

/* As much of "a\n" as the socket takes now. */
static void flood(int fd)
{
    static char junk[32768];

    if (!junk[0])
        for (size_t i = 0; i < sizeof(junk); i += 2)
            junk[i] = 'a', junk[i + 1] = '\n';
    while (write(fd, junk, sizeof(junk)) > 0)
        ;
}

/* A guest writing as fast as it can: vnumad reads AGENTLINK_BYTES_BURST, then stops reading for
 * AGENTLINK_PAUSE_MS, and reads no more than its clock allows after. The clock is the test's:
 * what is read is exact however fast this machine is. */
static void test_flood(void)
{
    agentlink_stats stats = {0};
    bool closed = false;
    agentlink_callbacks cb = {.closed = on_closed, .opaque = &closed};
    agentlink *l = NULL;
    char path[200];
    int lfd, srv = -1;

    vn_clock_use(&fake_clock);
    if (!CHECK(loop_init() == 0, "the event loop"))
        return;
    lfd = listen_at("flood.sock");
    path_of(path, sizeof(path), "flood.sock");
    int r = lfd >= 0 ? agentlink_open(path, 0, getpid(), &cb, &stats, &l) : -1;
    if (r == 0)
        srv = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (!CHECK(r == 0 && srv >= 0, "vnumad connected to the flooding guest's channel (r=%d)", r))
        return;
    for (int i = 0; i < 64 && !stats.throttled && !closed; i++) {
        flood(srv);
        (void)loop_run_once();
    }
    bool paused = CHECK(stats.throttled == 1 && stats.bytes == AGENTLINK_BYTES_BURST && !closed,
                        "flood: vnumad read its burst (%llu bytes) and stopped reading (throttled "
                        "%llu)",
                        (unsigned long long)stats.bytes, (unsigned long long)stats.throttled);
    /* the pause ends (a real second: the loop's timer), no time passed on the budget's clock;
     * without a first pause there is none to end (the checks below fail, nothing waits) */
    while (paused && stats.throttled < 2 && !closed)
        (void)loop_run_once();
    CHECK(stats.throttled == 2 && stats.bytes == AGENTLINK_BYTES_BURST,
          "flood: after the pause, still no budget: nothing more read (%llu bytes), paused again",
          (unsigned long long)stats.bytes);
    fake_ns += 1000000000ULL; /* a second on the budget's clock */
    while (paused && stats.throttled < 3 && !closed) {
        flood(srv);
        (void)loop_run_once();
    }
    CHECK(stats.bytes == AGENTLINK_BYTES_BURST + AGENTLINK_BYTES_PER_S && !closed,
          "flood: a second later, one second's budget more (%llu bytes in all)",
          (unsigned long long)stats.bytes);
    agentlink_close(l);
    close(srv);
    close(lfd);
    vn_clock_use(NULL);
}

/* A peer that never answers the hello (a guest that missed QEMU's "host connected"): the link
 * is given up after AGENTLINK_REPLY_TIMEOUT_S on the clock, and the owner connects anew. */
static void test_hello_timeout(void)
{
    agentlink_stats stats = {0};
    bool closed = false;
    agentlink_callbacks cb = {.closed = on_closed, .opaque = &closed};
    proto_get_hints g = {.interval_ms = 1000, .max_processes = 8, .scan_budget_mib = 256};
    agentlink *l = NULL;
    char path[200];
    int lfd = listen_at("silent.sock"), srv = -1, r;

    vn_clock_use(&fake_clock);
    path_of(path, sizeof(path), "silent.sock");
    r = lfd >= 0 ? agentlink_open(path, 0, getpid(), &cb, &stats, &l) : -1;
    if (r == 0)
        srv = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (!CHECK(r == 0 && srv >= 0, "hello: connected to a peer that will not answer (r=%d)", r))
        return;
    double sent = (double)fake_ns / 1e9;
    r = agentlink_request_hints(l, &g, sent + AGENTLINK_REPLY_TIMEOUT_S - 1);
    CHECK(r == -ENOTCONN && !closed, "hello: still waited for a second before the timeout (r=%d)",
          r);
    r = agentlink_request_hints(l, &g, sent + AGENTLINK_REPLY_TIMEOUT_S);
    CHECK(r == -ETIMEDOUT && closed && strstr(stats.last_error, "no hello reply"),
          "hello: unanswered for %.0f s, the link is given up (r=%d, %s)",
          AGENTLINK_REPLY_TIMEOUT_S, r, stats.last_error);
    agentlink_close(l);
    close(srv);
    close(lfd);
    vn_clock_use(NULL);
}

int main(void)
{
    char path[200], target[200];
    int lfd, fd = -1, r;

    if (!mkdtemp(dir))
        return 1;
    (void)chmod(dir, 0755);

    /* the domain's QEMU: this process */
    lfd = listen_at("qemu.sock");
    CHECK(lfd >= 0, "a listening socket plays QEMU's channel");
    path_of(path, sizeof(path), "qemu.sock");
    r = agentlink_connect(path, 0, getpid(), &fd);
    CHECK(r == 0 && fd >= 0, "QEMU's own socket: connected (r=%d)", r);
    if (fd >= 0)
        close(fd);
    (void)pending(lfd);
    r = agentlink_connect(path, 0, 0, &fd);
    CHECK(r == -ESRCH, "no QEMU known yet: not connected (r=%d)", r);

    /* a link in the socket's place, to QEMU's own socket even */
    path_of(path, sizeof(path), "link.sock");
    path_of(target, sizeof(target), "qemu.sock");
    CHECK(symlink(target, path) == 0, "a symbolic link to it");
    r = agentlink_connect(path, 0, getpid(), &fd);
    CHECK(r == -ELOOP && !pending(lfd), "a link is not followed, nothing connects (r=%d)", r);

    /* the path as the libvirt daemon sees it (a KubeVirt pod's: host/nsroot.h): this process as
     * the daemon, its root is "/"; then a daemon chrooted into dir, whose "/qemu.sock" is the
     * socket and for whom a link to the socket's host path leads nowhere; a gone daemon */
    path_of(path, sizeof(path), "qemu.sock");
    r = agentlink_connect(path, getpid(), getpid(), &fd);
    CHECK(r == 0 && fd >= 0, "through the daemon's root (/proc/%d/root): connected (r=%d)",
          (int)getpid(), r);
    if (fd >= 0)
        close(fd);
    (void)pending(lfd);
    path_of(path, sizeof(path), "link.sock");
    r = agentlink_connect(path, getpid(), getpid(), &fd);
    CHECK(r == -ELOOP && !pending(lfd), "through the daemon's root: a link is not followed (r=%d)",
          r);
    if (geteuid() == 0) {
        int ready[2];
        char c = 0;
        path_of(target, sizeof(target), "qemu.sock");
        path_of(path, sizeof(path), "host-path.sock");
        CHECK(symlink(target, path) == 0 && pipe(ready) == 0,
              "a link to the socket's host path, in the daemon's root");
        pid_t daemon = fork();
        if (daemon == 0) {
            if (chroot(dir) < 0 || write(ready[1], "x", 1) != 1)
                _exit(1);
            pause();
            _exit(0);
        }
        close(ready[1]);
        CHECK(daemon > 0 && read(ready[0], &c, 1) == 1 && c == 'x', "a daemon chrooted in %s", dir);
        close(ready[0]);
        r = agentlink_connect("/qemu.sock", daemon, getpid(), &fd);
        CHECK(r == 0 && fd >= 0, "its /qemu.sock is QEMU's socket: connected (r=%d)", r);
        if (fd >= 0)
            close(fd);
        (void)pending(lfd);
        r = agentlink_connect(target, daemon, getpid(), &fd);
        CHECK(r == -ENOENT && !pending(lfd),
              "the socket's host path, as the daemon sees it: nothing there (r=%d)", r);
        r = agentlink_connect("/host-path.sock", daemon, getpid(), &fd);
        CHECK(r == -ELOOP && !pending(lfd), "a link in its root: not followed (r=%d)", r);
        path_of(path, sizeof(path), "host-dir");
        CHECK(symlink(dir, path) == 0, "a directory link to the socket's host directory");
        r = agentlink_connect("/host-dir/qemu.sock", daemon, getpid(), &fd);
        CHECK(r == -ENOENT && !pending(lfd),
              "through it: the host's directory as the daemon sees it, nothing there (r=%d)", r);
        if (daemon > 0) {
            kill(daemon, SIGTERM);
            (void)waitpid(daemon, NULL, 0);
            r = agentlink_connect("/qemu.sock", daemon, getpid(), &fd);
            CHECK(r == -ESRCH, "the daemon gone: -ESRCH (r=%d)", r);
        }
    } else {
        printf("# a chrooted daemon: not checked (needs root to chroot)\n");
    }

    /* a file */
    path_of(path, sizeof(path), "file");
    FILE *f = fopen(path, "we");
    if (f)
        fclose(f);
    r = agentlink_connect(path, 0, getpid(), &fd);
    CHECK(r == -ENOTSOCK, "a regular file: not a socket (r=%d)", r);

    /* another user's socket (root can make one: chown) */
    if (geteuid() == 0) {
        int ofd = listen_at("other-user.sock");
        path_of(path, sizeof(path), "other-user.sock");
        CHECK(ofd >= 0 && chown(path, 65534, 65534) == 0, "a socket owned by uid 65534");
        r = agentlink_connect(path, 0, getpid(), &fd);
        CHECK(r == -EPERM && !pending(ofd),
              "another user's socket: refused before connecting (r=%d)", r);
        if (ofd >= 0)
            close(ofd);
    } else {
        printf("# another user's socket: not checked (needs root to chown)\n");
    }

    /* a socket another process listens on (a service's, or a process QEMU started) */
    int ready[2];
    CHECK(pipe(ready) == 0, "a pipe");
    pid_t child = fork();
    if (child == 0) {
        char c = 'x';
        int cfd = listen_at("other.sock");
        if (cfd < 0 || write(ready[1], &c, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char c = 0;
    close(ready[1]); /* a child that failed gives EOF, not a wait */
    CHECK(child > 0 && read(ready[0], &c, 1) == 1 && c == 'x', "another process listens");
    path_of(path, sizeof(path), "other.sock");
    r = agentlink_connect(path, 0, getpid(), &fd);
    CHECK(r == -EPERM, "another process's listening socket: refused (r=%d)", r);
    if (child > 0) {
        kill(child, SIGTERM);
        (void)waitpid(child, NULL, 0);
    }

    close(lfd);
    test_flood();
    test_hello_timeout();
    snprintf(path, sizeof(path), "rm -rf '%s'", dir);
    CHECK(system(path) == 0, "fixture removed");
    return tap_done();
}
