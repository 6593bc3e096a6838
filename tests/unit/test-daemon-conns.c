/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Several libvirt connections through whole passes on the fake host (fakehost.h: its daemons,
 * each opened by its URI; host/conns.h): the same name on both of two daemons (both balanced,
 * each by its own decision; NAME@LABEL finds each); one daemon down (its domain kept and
 * skipped, the other's balanced, then reconnected); one hung as vnumad starts (its open blocks
 * a worker, never vnumad's start, the control socket or the other connection); a socket glob
 * (a connection per socket, one appears and is connected, one goes and its domain with it, each
 * named by what the glob matched).
 */
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "conntab.h"
#include "daemon_drive.h"
#include "domains.h"
#include "tap.h"

#define URI_A "qemu:///system" /* the default daemon's */
#define URI_B "qemu+unix:///system?socket=/run/vnuma-test/b/libvirt-sock"
#define URI_C "qemu+unix:///system?socket=/run/vnuma-test/c/libvirt-sock"
#define OFF   "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>"

/* ---- what vnumad has ---- */

/* vnumad's connection to uri, or NULL. */
static conn_slot *conn_to(const char *uri)
{
    for (unsigned i = 0; i < dm.nr_conns; i++)
        if (!strcmp(dm.conns[i]->m.uri, uri))
            return dm.conns[i];
    return NULL;
}

static bool conn_up(void *uri)
{
    const conn_slot *cs = conn_to(uri);

    return cs && cs->connected;
}

static bool conn_down(void *uri)
{
    return !conn_up(uri);
}

static bool conn_gone(void *uri)
{
    return !conn_to(uri);
}

static dom_state *state_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) ? domains_find(&dm, uuid) : NULL;
}

/* The URI of the connection vnumad tracks the domain on ("" when untracked or none). */
static const char *tracked_uri(fake_dom *fd)
{
    const dom_state *st = state_of(fd);
    const conn_slot *cs = st ? conns_find(&dm, st->conn_id) : NULL;

    return cs ? cs->m.uri : "";
}

/* The domain is pinned somewhere else than vnumad put it (all CPUs), as an operator might. */
static void repin_away(fake_dom *fd)
{
    for (unsigned v = 0; v < fake_dom_nr_vcpus(fd); v++)
        fake_dom_set_pin(fd, v, "0-3");
}

static bool both_pinned(fake_dom *a, fake_dom *b)
{
    return run_until(pinned_to_one_node, a) && run_until(pinned_to_one_node, b);
}

static void config_uris(daemon_config *cfg, const char *const *uris, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        snprintf(cfg->uris[i], sizeof(cfg->uris[i]), "%s", uris[i]);
    cfg->nr_uris = n;
    cfg->uris_given = true;
}

/* The two plain uri lines A and B, a busy domain in auto on each (vnumad not started). */
static void two_daemons(daemon_config *cfg, fake_daemon **ret_b, fake_dom **a, fake_dom **b,
                        const char *name_a, const char *name_b)
{
    static const char *const uris[] = {URI_A, URI_B};

    fake_host_config(cfg);
    config_uris(cfg, uris, 2);
    *ret_b = fake_daemon_add(URI_B);
    *a = fake_dom_add(name_a, 2, AUTO);
    *b = fake_dom_add_on(*ret_b, name_b, 2, AUTO);
    fake_dom_set_busy(*a, 1.0);
    fake_dom_set_busy(*b, 1.0);
}

static void start_two(daemon_config *cfg, fake_daemon **ret_b, fake_dom **a, fake_dom **b,
                      const char *name_a, const char *name_b)
{
    two_daemons(cfg, ret_b, a, b, name_a, name_b);
    start(cfg);
}

/* ---- status ---- */

static bool status_answers(void)
{
    char reply[65536];

    return ctl("{\"command\":\"status\"}", reply, sizeof(reply)) && strstr(reply, "\"return\"");
}

/* ---- 2. the same name on both ---- */

static void test_same_name(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b;

    start_two(&cfg, &db, &a, &b, "fake-same", "fake-same");
    CHECK(both_pinned(a, b) && state_of(a) && state_of(b) && state_of(a) != state_of(b),
          "same name: both domains are tracked and balanced");
    (void)run_until(settled, NULL);
    CHECK(domains_find_by_name(&dm, "fake-same@" URI_A) == state_of(a) &&
              domains_find_by_name(&dm, "fake-same@" URI_B) == state_of(b),
          "same name: NAME@LABEL finds each on its own connection");
    stop();
}

/* ---- 4. one daemon down ---- */

static bool reconnected_b(void *db)
{
    return conn_up(URI_B) && fake_daemon_connections(db) == 2;
}

static void test_daemon_down(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b;

    start_two(&cfg, &db, &a, &b, "fake-a", "fake-b");
    (void)both_pinned(a, b);
    (void)run_until(settled, NULL);
    fake_daemon_stop(db);
    CHECK(run_until(conn_down, URI_B) && conn_up(URI_A),
          "down: vnumad sees B's connection lost, A's still up");
    CHECK(state_of(b) && !strcmp(tracked_uri(b), URI_B),
          "down: B's domain is still tracked, on B's connection");
    uint64_t skipped = dm.stats.skips[METRICS_SKIP_NOT_ANSWERING];
    unsigned calls_b = fake_dom_calls(b, FAKE_VCPUS);
    repin_away(a);
    pass();
    CHECK(pinned_to_one_node(a), "down: the next pass balances A's domain again");
    CHECK(dm.stats.skips[METRICS_SKIP_NOT_ANSWERING] == skipped + 1 &&
              fake_dom_calls(b, FAKE_VCPUS) == calls_b,
          "down: B's domain is skipped as not answering, without a call (skips %llu -> %llu)",
          (unsigned long long)skipped,
          (unsigned long long)dm.stats.skips[METRICS_SKIP_NOT_ANSWERING]);
    fake_daemon_start(db);
    fake_clock_advance(30.0); /* past the reconnect's backoff */
    CHECK(run_until(reconnected_b, db), "down: B is back and vnumad connects to it again");
    (void)run_until(settled, NULL);
    repin_away(b);
    pass();
    CHECK(pinned_to_one_node(b) && !strcmp(tracked_uri(b), URI_B),
          "down: B's domain is balanced again on its new connection");
    stop();
}

/* ---- 5. one daemon hung ---- */

/* B is hung when vnumad starts: its open blocks a worker, never vnumad's start. A watchdog
 * releases B after WATCHDOG_S real seconds if the test has not (a start that waits for B
 * returns only then). */
#define WATCHDOG_S 20

static pthread_mutex_t watchdog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watchdog_cond = PTHREAD_COND_INITIALIZER;
static bool watchdog_off, watchdog_fired;

static void *watchdog(void *db)
{
    struct timespec end;

    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += WATCHDOG_S;
    pthread_mutex_lock(&watchdog_lock);
    while (!watchdog_off && pthread_cond_timedwait(&watchdog_cond, &watchdog_lock, &end) == 0)
        ;
    watchdog_fired = !watchdog_off;
    pthread_mutex_unlock(&watchdog_lock);
    fake_daemon_release(db);
    return NULL;
}

static bool fired(void)
{
    bool f;

    pthread_mutex_lock(&watchdog_lock);
    f = watchdog_fired;
    pthread_mutex_unlock(&watchdog_lock);
    return f;
}

static void test_start_hung(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b;
    pthread_t t;

    two_daemons(&cfg, &db, &a, &b, "fake-a", "fake-b");
    fake_daemon_hang(db);
    watchdog_off = watchdog_fired = false;
    if (pthread_create(&t, NULL, watchdog, db) != 0)
        abort();
    start(&cfg);
    CHECK(!fired(), "hung at start: vnumad's start does not wait for B's open");
    CHECK(run_until(pinned_to_one_node, a) && !fired(),
          "hung at start: A's domain is balanced while B's open blocks");
    CHECK(status_answers() && !fired(), "hung at start: the control socket answers (status)");
    CHECK(!conn_up(URI_B) && !fired(), "hung at start: B is not connected");
    pthread_mutex_lock(&watchdog_lock);
    watchdog_off = true;
    pthread_cond_signal(&watchdog_cond);
    pthread_mutex_unlock(&watchdog_lock);
    pthread_join(t, NULL); /* (it releases B) */
    CHECK(run_until(conn_up, URI_B) && run_until(pinned_to_one_node, b),
          "hung at start: released, B is connected and its domain balanced");
    stop();
}

/* ---- 6. a socket glob ---- */

static char sock_dir[80]; /* (a socket's path fits in sun_path) */

static void sock_uri(const char *label, char *buf, size_t len)
{
    snprintf(buf, len, "qemu+unix:///system?socket=%s/%.8s/sock", sock_dir, label);
}

/* A unix socket listening at DIR/label/sock (a daemon's, as the glob sees it). */
static int sock_make(const char *label)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[96];
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    snprintf(dir, sizeof(dir), "%s/%.8s", sock_dir, label);
    (void)mkdir(dir, 0700);
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
        abort();
    return fd;
}

static bool label_is(fake_dom *fd, const char *label)
{
    const dom_state *st = state_of(fd);

    return st && !strcmp(conns_label(&dm, st->conn_id), label);
}

static void test_glob(void)
{
    daemon_config cfg;
    char uri[3][256], glob[256], path[300];
    fake_dom *dom[3];
    fake_daemon *d[3];
    int fd[3];
    static const char *const label[] = {"h1", "h2", "h3"};

    snprintf(sock_dir, sizeof(sock_dir), "%.64s/sockets", fake_host_root());
    (void)mkdir(sock_dir, 0700);
    for (int i = 0; i < 3; i++)
        sock_uri(label[i], uri[i], sizeof(uri[i]));
    snprintf(glob, sizeof(glob), "qemu+unix:///system?socket=%s/*/sock", sock_dir);
    fake_host_config(&cfg);
    const char *uris[] = {glob};
    config_uris(&cfg, uris, 1);
    cfg.scan_interval_s = 1;
    for (int i = 0; i < 2; i++) {
        char name[32];
        fd[i] = sock_make(label[i]);
        d[i] = fake_daemon_add(uri[i]);
        snprintf(name, sizeof(name), "fake-%s", label[i]);
        dom[i] = fake_dom_add_on(d[i], name, 2, AUTO);
        fake_dom_set_busy(dom[i], 1.0);
    }
    start(&cfg);
    CHECK(both_pinned(dom[0], dom[1]), "glob: the domains behind both sockets are balanced");
    CHECK(label_is(dom[0], "h1") && label_is(dom[1], "h2") && !strcmp(tracked_uri(dom[0]), uri[0]),
          "glob: each connection is named by what the glob matched (h1, h2), its URI the "
          "socket's");

    /* a third socket appears: connected at the next scan */
    fd[2] = sock_make("h3");
    d[2] = fake_daemon_add(uri[2]);
    dom[2] = fake_dom_add_on(d[2], "fake-h3", 2, AUTO);
    fake_dom_set_busy(dom[2], 1.0);
    fake_clock_advance(cfg.scan_interval_s);
    CHECK(run_until(conn_up, uri[2]) && run_until(pinned_to_one_node, dom[2]) &&
              label_is(dom[2], "h3"),
          "glob: a new socket h3 is found at the next scan, connected, its domain balanced");

    /* h2's socket goes: its connection is dropped and its domain no longer tracked */
    (void)run_until(settled, NULL);
    snprintf(path, sizeof(path), "%s/h2/sock", sock_dir);
    unlink(path);
    close(fd[1]);
    fake_clock_advance(cfg.scan_interval_s);
    CHECK(run_until(conn_gone, uri[1]) && !state_of(dom[1]),
          "glob: h2's socket removed: its connection is dropped, its domain no longer tracked");
    CHECK(fake_daemon_open_now(d[1]) == 0, "glob: vnumad closed its connection to h2");
    CHECK(state_of(dom[0]) && state_of(dom[2]) && conn_up(uri[0]) && conn_up(uri[2]),
          "glob: h1 and h3 stay");
    stop();
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%.8s/sock", sock_dir, label[i]);
        unlink(path);
        if (i != 1)
            close(fd[i]);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* (a crash shows after which check) */
    fake_host_init(&host);
    test_same_name();
    test_daemon_down();
    test_start_hung();
    test_glob();
    return tap_done();
}
