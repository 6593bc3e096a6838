/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Several libvirt connections through whole passes on the fake host (fakehost.h: its daemons,
 * each opened by its URI; host/conns.h): two uri lines, a domain on each, both balanced, each
 * on its own connection, and status lists both; the same name on both (NAME@LABEL finds each);
 * the same UUID on both (the first found balanced, the other left alone, and the other's
 * STOPPED event forgets nothing); one daemon down (its domain kept and skipped, the other's
 * balanced, then reconnected); one hung as by SIGSTOP (its calls and its open block a worker,
 * never the passes, the control socket or the other connection; also when it is hung as
 * vnumad starts); a socket glob (a connection per socket, one appears and is connected, one
 * goes and its domain with it, each named by what the glob matched); a stop restores every
 * domain of every connection up and skips the one whose daemon is down; a reload that changes
 * the host policy reconsiders the domains of every connection.
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

/* every connection vnumad has is up, and nothing is out */
static bool all_up(void *arg)
{
    (void)arg;
    return dm.nr_conns && conns_connected(&dm) == dm.nr_conns && settled(NULL);
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

static bool restored_not_tracked(void *fd)
{
    return not_tracked(fd) && decision_restored(fd);
}

/* vnumad never pinned nor wrote the domain */
static bool untouched(fake_dom *fd)
{
    return all_pins_are(fd, "0-3") && fake_dom_calls(fd, FAKE_PIN_VCPU) == 0 &&
           fake_dom_calls(fd, FAKE_STATE_SET) == 0;
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

/* vnumactl status's "connections" (a new reference; NULL: no answer). */
static json_object *status_connections(void)
{
    static char reply[65536];
    json_object *o, *r, *c = NULL;

    if (!ctl("{\"command\":\"status\"}", reply, sizeof(reply)) || !(o = json_tokener_parse(reply)))
        return NULL;
    if (json_object_object_get_ex(o, "return", &r) &&
        json_object_object_get_ex(r, "connections", &c))
        json_object_get(c);
    json_object_put(o);
    return c;
}

/* The status entry of the connection to uri has this label, is up and has n domains. */
static bool status_has(json_object *conns, const char *uri, const char *label, int n)
{
    for (size_t i = 0; conns && i < json_object_array_length(conns); i++) {
        json_object *c = json_object_array_get_idx(conns, i), *u, *l, *up, *d;
        if (json_object_object_get_ex(c, "uri", &u) && !strcmp(json_object_get_string(u), uri))
            return json_object_object_get_ex(c, "label", &l) &&
                   !strcmp(json_object_get_string(l), label) &&
                   json_object_object_get_ex(c, "connected", &up) && json_object_get_boolean(up) &&
                   json_object_object_get_ex(c, "domains", &d) && json_object_get_int(d) == n;
    }
    return false;
}

static bool status_answers(void)
{
    char reply[65536];

    return ctl("{\"command\":\"status\"}", reply, sizeof(reply)) && strstr(reply, "\"return\"");
}

/* ---- 1. two uri lines ---- */

static void test_two_lines(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b;
    json_object *conns;

    start_two(&cfg, &db, &a, &b, "fake-a", "fake-b");
    CHECK(both_pinned(a, b), "two lines: the domain of each daemon is balanced");
    (void)run_until(settled, NULL);
    CHECK(!strcmp(tracked_uri(a), URI_A) && !strcmp(tracked_uri(b), URI_B),
          "two lines: each domain is on its own connection (%s, %s)", tracked_uri(a),
          tracked_uri(b));
    CHECK(fake_daemon_connections(fake_daemon_default()) == 1 && fake_daemon_connections(db) == 1,
          "two lines: one connection opened to each daemon");
    conns = status_connections();
    CHECK(conns && json_object_array_length(conns) == 2 && status_has(conns, URI_A, URI_A, 1) &&
              status_has(conns, URI_B, URI_B, 1),
          "two lines: status lists 2 connections, each up with 1 domain (%s)",
          conns ? json_object_to_json_string(conns) : "no answer");
    json_object_put(conns);
    /* B's event reaches vnumad on B's connection: B's domain opts out */
    fake_dom_set_balancer(b, OFF);
    fake_event_metadata(b);
    CHECK(run_until(restored_not_tracked, b) && all_pins_are(b, "0-3") && state_of(a),
          "two lines: B's domain opts out by B's event (restored, dropped); A's stays");
    stop();
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

/* ---- 3. the same UUID on both ---- */

static void test_same_uuid(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b, *kept, *left;
    char kept_uri[256];

    two_daemons(&cfg, &db, &a, &b, "fake-a", "fake-b");
    fake_dom_set_uuid(b, a);
    start(&cfg);
    (void)run_until(all_up, NULL);
    pass();
    kept = !strcmp(tracked_uri(a), URI_A) ? a : b;
    left = kept == a ? b : a;
    snprintf(kept_uri, sizeof(kept_uri), "%s", kept == a ? URI_A : URI_B);
    CHECK(!strcmp(tracked_uri(kept), kept_uri) && pinned_to_one_node(kept),
          "same uuid: the domain found first is tracked and balanced (on %s)", tracked_uri(a));
    CHECK(untouched(left), "same uuid: the other is left alone (pins %u, writes %u)",
          fake_dom_calls(left, FAKE_PIN_VCPU), fake_dom_calls(left, FAKE_STATE_SET));

    /* the other stops: its daemon's STOPPED event is not the tracked one's */
    fake_dom_stop(left);
    fake_event_lifecycle(left, VIRT_EVENT_STOPPED, false);
    (void)run_until(events_read, NULL);
    (void)run_until(settled, NULL);
    CHECK(!strcmp(tracked_uri(kept), kept_uri),
          "same uuid: the other's STOPPED event (its own daemon's) does not forget the one "
          "tracked");
    /* ... and starts again: found second, left alone again */
    fake_dom_start(left);
    fake_event_lifecycle(left, VIRT_EVENT_STARTED, false);
    (void)run_until(events_read, NULL);
    (void)run_until(settled, NULL);
    repin_away(kept);
    pass();
    CHECK(!strcmp(tracked_uri(kept), kept_uri) && pinned_to_one_node(kept),
          "same uuid: the tracked one stays on its connection and is still balanced");
    CHECK(untouched(left), "same uuid: the other, started again, is still left alone (pins %u)",
          fake_dom_calls(left, FAKE_PIN_VCPU));
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

static bool hung(void *db)
{
    return fake_daemon_hung(db);
}

/* no work on the domain is out */
static bool answers(void *fd)
{
    const dom_state *st = state_of(fd);

    return st && !st->busy;
}

static void test_daemon_hung(void)
{
    daemon_config cfg;
    fake_daemon *db;
    fake_dom *a, *b;

    start_two(&cfg, &db, &a, &b, "fake-a", "fake-b");
    (void)both_pinned(a, b);
    (void)run_until(settled, NULL);

    /* its calls block */
    fake_daemon_hang(db);
    repin_away(a);
    pass();
    CHECK(fake_daemon_hung(db) && settled(NULL) && pinned_to_one_node(a),
          "hung: the pass ends while B's call blocks, and balances A's domain");
    CHECK(status_answers(), "hung: the control socket answers (status)");
    uint64_t skipped = dm.stats.skips[METRICS_SKIP_NOT_ANSWERING];
    unsigned calls_b = fake_dom_calls(b, FAKE_VCPUS);
    repin_away(a);
    pass();
    CHECK(pinned_to_one_node(a) && dm.stats.skips[METRICS_SKIP_NOT_ANSWERING] == skipped + 1 &&
              fake_dom_calls(b, FAKE_VCPUS) == calls_b,
          "hung: the next pass balances A's domain again, skips B's (not answering) without a "
          "call");
    fake_daemon_release(db);
    CHECK(run_until(answers, b), "hung: released, B's call returns: its domain answers again");
    repin_away(b);
    pass();
    CHECK(pinned_to_one_node(b), "hung: and B's domain is balanced again");

    /* its open blocks: B stops, comes back stopped (SIGSTOP) */
    fake_daemon_stop(db);
    (void)run_until(conn_down, URI_B);
    fake_daemon_hang(db);
    fake_daemon_start(db);
    fake_clock_advance(30.0); /* past the reconnect's backoff */
    CHECK(run_until(hung, db) && !conn_up(URI_B), "hung: vnumad's open of B blocks");
    CHECK(status_answers(), "hung open: the control socket answers (status)");
    repin_away(a);
    pass();
    CHECK(pinned_to_one_node(a), "hung open: passes go on, A's domain balanced");
    fake_daemon_release(db);
    CHECK(run_until(conn_up, URI_B), "hung open: released, vnumad is connected to B");
    (void)run_until(settled, NULL);
    repin_away(b);
    pass();
    CHECK(pinned_to_one_node(b) && !strcmp(tracked_uri(b), URI_B),
          "hung open: B's domain is balanced again");
    stop();
}

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

/* ---- 7. restore on exit ---- */

static void test_restore_on_exit(void)
{
    static const char *const uris[] = {URI_A, URI_B, URI_C};
    daemon_config cfg;
    fake_daemon *db, *dc;
    fake_dom *a, *b, *c;

    fake_host_config(&cfg);
    config_uris(&cfg, uris, 3);
    db = fake_daemon_add(URI_B);
    dc = fake_daemon_add(URI_C);
    a = fake_dom_add("fake-a", 2, AUTO);
    b = fake_dom_add_on(db, "fake-b", 2, AUTO);
    c = fake_dom_add_on(dc, "fake-c", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_busy(b, 1.0);
    fake_dom_set_busy(c, 1.0);
    start(&cfg);
    CHECK(both_pinned(a, b) && run_until(pinned_to_one_node, c),
          "restore: the domains of the three daemons are balanced");
    (void)run_until(settled, NULL);
    fake_daemon_stop(dc);
    (void)run_until(conn_down, URI_C);
    unsigned pins_c = fake_dom_calls(c, FAKE_PIN_VCPU), lookups_c = fake_dom_calls(c, FAKE_LOOKUP);
    stop_vnumad();
    CHECK(all_pins_are(a, "0-3") && decision_restored(a) && all_pins_are(b, "0-3") &&
              decision_restored(b),
          "restore: vnumad stopped, the domains of both connections up have their pins back");
    CHECK(pinned_to_one_node(c) && fake_dom_calls(c, FAKE_PIN_VCPU) == pins_c &&
              fake_dom_calls(c, FAKE_LOOKUP) == lookups_c,
          "restore: the domain whose daemon is down is not touched, nor looked up");
    fake_host_reset();
}

/* ---- 8. a reload ---- */

static void write_config(const char *default_mode)
{
    FILE *f = fopen(config_path, "we");

    if (!f)
        abort();
    fprintf(f,
            "interval = 3600\nevent_delay = 0\nqmp = no\nlog_level = %s\n"
            "socket = %s/run/vnumad.sock\nstate_dir = %s/state\n"
            "default_mode = %s\npolicy_dir = %s/policy.d\nuri = %s\nuri = %s\n",
            getenv("VN_TEST_DEBUG") ? "debug" : "err", fake_host_root(), fake_host_root(),
            default_mode, fake_host_root(), URI_A, URI_B);
    if (fclose(f) != 0)
        abort();
}

static void test_reload(void)
{
    daemon_config cfg;
    char err[512] = "", dir[300];
    fake_daemon *db;
    fake_dom *a, *b;

    snprintf(dir, sizeof(dir), "%s/policy.d", fake_host_root());
    (void)mkdir(dir, 0755);
    snprintf(config_path, sizeof(config_path), "%s/vnumad.conf", fake_host_root());
    write_config("auto");
    fake_host_config(&cfg);
    if (!CHECK(daemon_config_load(config_path, false, &cfg, err, sizeof(err)) == 0 &&
                   cfg.nr_uris == 2,
               "reload: the config with two uri lines and default_mode auto is read (%s)", err))
        return;
    db = fake_daemon_add(URI_B);
    a = fake_dom_add("fake-a", 2, NULL);
    b = fake_dom_add_on(db, "fake-b", 2, NULL);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_busy(b, 1.0);
    start(&cfg);
    CHECK(both_pinned(a, b), "reload: default auto balances the domains of both connections");
    (void)run_until(settled, NULL);
    write_config("off");
    kill(getpid(), SIGHUP);
    CHECK(run_until(restored_not_tracked, a) && run_until(restored_not_tracked, b),
          "reload: default off, the domains of both connections are restored and dropped");
    (void)run_until(settled, NULL);
    CHECK(all_pins_are(a, "0-3") && all_pins_are(b, "0-3"),
          "reload: both have their original pins back");
    stop();
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* (a crash shows after which check) */
    fake_host_init(&host);
    test_two_lines();
    test_same_name();
    test_same_uuid();
    test_daemon_down();
    test_daemon_hung();
    test_start_hung();
    test_glob();
    test_restore_on_exit();
    test_reload();
    return tap_done();
}
