/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Whole passes of vnumad's daemon on the fake host (fakehost.h): daemon_start, libvirt's event
 * loop, the workers, the passes, the records, as vnumad runs them, with libvirt, the clock
 * and the host faked. One test per path of the core: opt-in, opt-out and restore, libvirtd
 * lost and back, migration arrival, a domain destroyed mid-pass, a hung QEMU, SIGHUP reload,
 * `vnumactl advise`, a restart that keeps every guest where it is and a stop that restores. Each
 * waits for what it expects (a timeout only says it never happened); none depends on how fast the
 * machine is. The same paths on the real stack: tests/e2e/.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "conns.h"
#include "core.h"
#include "daemon.h"
#include "domains.h"
#include "fakehost.h"
#include "loop.h"
#include "metadata.h"
#include "record.h"
#include "tap.h"

#include "daemon_drive.h"

/* ---- opt-in, and what is not vnumad's ---- */

/* A busy domain that opted in is pinned to one node in the pass its tracking asked for, its
 * originals saved first; one that did not opt in is never read past its <balancer> nor
 * touched. */
static void test_opt_in(void)
{
    daemon_config cfg;
    fake_dom *a, *b;
    char action[32], reason[64];
    static dom_originals o; /* 1 MiB: off the stack */

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    b = fake_dom_add("fake-b", 2, NULL);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_busy(b, 1.0);
    start(&cfg);
    CHECK(run_until(pinned_to_one_node, a),
          "opt-in: a busy domain that opted in is pinned to one node");
    (void)run_until(settled, NULL);
    state_originals(a, &o);
    CHECK(o.saved && o.nr_vcpus == 2 && cpuset_weight(&o.vcpu_pin[0]) == 4,
          "opt-in: its originals (all 4 CPUs) are in its <state> (%d, %u vCPUs)", o.saved,
          o.nr_vcpus);
    CHECK(last_decision(a, action, sizeof(action), reason, sizeof(reason)) &&
              strcmp(action, "acted") == 0,
          "opt-in: its <state> says the pass acted (%s, %s)", action, reason);
    CHECK(!is_tracked(b) && all_pins_are(b, "0-3") && fake_dom_calls(b, FAKE_VCPUS) == 0 &&
              fake_dom_calls(b, FAKE_PIN_VCPU) == 0 && fake_dom_calls(b, FAKE_STATE_SET) == 0,
          "opt-in: a domain without <balancer> is not tracked, read or touched");
    pass();
    CHECK(pinned_to_one_node(a) && fake_dom_calls(b, FAKE_VCPUS) == 0,
          "opt-in: the next pass keeps it there, and still leaves the other alone");
    stop();
}

/* ---- opt-out ---- */

/* Removing <balancer> (or mode="off") gives the domain its original pins back, drops the
 * originals and records "restored"; the domain is no longer tracked. */
static void test_opt_out(const char *how, const char *balancer)
{
    daemon_config cfg;
    fake_dom *a;
    char action[32], reason[64];

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    if (!CHECK(run_until(pinned_to_one_node, a), "opt-out (%s): pinned first", how)) {
        stop();
        return;
    }
    fake_dom_set_balancer(a, balancer);
    fake_event_metadata(a);
    CHECK(run_until(not_tracked, a), "opt-out (%s): the domain is no longer tracked", how);
    (void)run_until(decision_restored, a);
    CHECK(all_pins_are(a, "0-3"), "opt-out (%s): its vCPUs have their original pins back", how);
    CHECK(!state_has_originals(a), "opt-out (%s): no originals are left in its <state>", how);
    CHECK(last_decision(a, action, sizeof(action), reason, sizeof(reason)) &&
              strcmp(action, "restored") == 0 && strstr(reason, "opted out"),
          "opt-out (%s): its <state> says restored (%s, %s)", how, action, reason);
    unsigned pins = fake_dom_calls(a, FAKE_PIN_VCPU);
    pass();
    CHECK(fake_dom_calls(a, FAKE_PIN_VCPU) == pins && all_pins_are(a, "0-3"),
          "opt-out (%s): the next pass leaves it alone", how);
    stop();
}

/* The operator's pins in the persistent XML: an emulator pin is the operator's and never
 * changed; a vCPU pin is the starting point (docs/operations.md), re-pinned within the
 * domain's bounds and given back on opt-out. Without an emulator pin of the operator's, the
 * emulator goes with the vCPUs and comes back too. */
static void test_operator_pins(void)
{
    daemon_config cfg;
    fake_dom *a, *b;
    char buf[32], emu[32];

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    b = fake_dom_add("fake-b", 2, AUTO);
    fake_dom_define_pin(a, 0, "3");
    fake_dom_define_emulator(a, "3");
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_busy(b, 1.0);
    start(&cfg);
    CHECK(run_until(pinned_to_one_node, a) && run_until(pinned_to_one_node, b),
          "operator pins: both domains are pinned to a node");
    (void)run_until(settled, NULL);
    CHECK(strcmp(fake_dom_emulator(a, emu, sizeof(emu)), "3") == 0 &&
              fake_dom_calls(a, FAKE_PIN_EMULATOR) == 0,
          "operator pins: the emulator the operator pinned to CPU 3 stays there (%s)", emu);
    fake_dom_pin(b, 0, buf, sizeof(buf));
    CHECK(strcmp(fake_dom_emulator(b, emu, sizeof(emu)), buf) == 0,
          "operator pins: an emulator without the operator's pin goes with the vCPUs (%s, %s)", emu,
          buf);
    fake_dom_set_balancer(a, NULL);
    fake_dom_set_balancer(b, NULL);
    fake_event_metadata(a);
    fake_event_metadata(b);
    CHECK(run_until(decision_restored, a) && run_until(decision_restored, b),
          "operator pins: both opt out");
    CHECK(strcmp(fake_dom_pin(a, 0, buf, sizeof(buf)), "3") == 0 &&
              strcmp(fake_dom_pin(a, 1, buf, sizeof(buf)), "0-3") == 0 &&
              strcmp(fake_dom_emulator(a, emu, sizeof(emu)), "3") == 0,
          "operator pins: after the opt-out vCPU 0 and the emulator are on CPU 3 and vCPU 1 on "
          "0-3, as defined");
    CHECK(strcmp(fake_dom_emulator(b, emu, sizeof(emu)), "0-3") == 0,
          "operator pins: the other's emulator is back on 0-3 (%s)", emu);
    stop();
}

/* ---- libvirtd lost and back ---- */

static unsigned connections_before;

static bool not_connected(void *arg)
{
    (void)arg;
    return !conns_connected(&dm);
}

static bool reconnected(void *arg)
{
    (void)arg;
    return conns_connected(&dm) && fake_connections() > connections_before;
}

/* libvirtd stops and starts again: vnumad reconnects (with backoff while it is down), forgets
 * what stopped meanwhile, tracks what opted in meanwhile (no event reached it), and balances on
 * the new connection. */
static void test_reconnect(void)
{
    daemon_config cfg;
    fake_dom *a, *c;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    (void)run_until(pinned_to_one_node, a);
    (void)run_until(settled, NULL);
    connections_before = fake_connections();
    fake_libvirtd_stop();
    CHECK(run_until(not_connected, NULL), "reconnect: vnumad sees the connection lost");
    /* while libvirtd is down: a stops, c starts with <balancer> (no event reaches vnumad) */
    fake_dom_stop(a);
    c = fake_dom_add("fake-c", 2, AUTO);
    fake_dom_set_busy(c, 1.0);
    fake_libvirtd_start();
    CHECK(run_until(reconnected, NULL), "reconnect: vnumad connects again once libvirtd is back");
    CHECK(run_until(is_tracked, c), "reconnect: the domain that opted in meanwhile is tracked");
    CHECK(!is_tracked(a), "reconnect: the domain that stopped meanwhile is forgotten");
    CHECK(run_until(pinned_to_one_node, c),
          "reconnect: the new domain is balanced on the new connection");
    stop();
}

/* ---- migration arrival ---- */

#define OTHER_HOST "ffffffffffffffffffffffffffffffff"

/* A domain arrives by live migration with the other host's pins (CPU 1) and the originals
 * that host saved (CPU 1 too): neither is ever put back here. While the migration runs
 * nothing is written; once it finished, this host's originals (its definition: all CPUs) are
 * taken and written; an opt-out gives it those. */
static void test_arrival(void)
{
    daemon_config cfg;
    /* 1 MiB each: static, off the stack */
    static dom_originals foreign = {.saved = true, .nr_vcpus = 2}, o;
    char *state = NULL;
    fake_dom *a;

    fake_host_config(&cfg);
    start(&cfg);
    a = fake_dom_add("fake-arrives", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    snprintf(foreign.host, sizeof(foreign.host), "%s", OTHER_HOST);
    cpuset_set(&foreign.vcpu_pin[0], 1);
    cpuset_set(&foreign.vcpu_pin[1], 1);
    if (meta_format_state(&foreign, NULL, 0, NULL, NULL, &state) < 0)
        abort();
    fake_dom_set_state(a, state);
    free(state);
    fake_dom_set_pin(a, 0, "1");
    fake_dom_set_pin(a, 1, "1");
    fake_dom_set_job(a, true); /* the incoming migration: libvirt's job on the domain */
    unsigned writes = fake_dom_calls(a, FAKE_STATE_SET);
    fake_event_lifecycle(a, VIRT_EVENT_STARTED, true);
    (void)run_until(settled, NULL);
    pass();
    CHECK(is_tracked(a) && fake_dom_calls(a, FAKE_STATE_SET) == writes &&
              fake_dom_calls(a, FAKE_PIN_VCPU) == 0,
          "arrival: tracked, but nothing is written or pinned while the migration runs");
    fake_dom_set_job(a, false);
    fake_event_lifecycle(a, VIRT_EVENT_RESUMED, true);
    (void)run_until(settled, NULL);
    pass();
    CHECK(pinned_to_one_node(a), "arrival: once it runs here the next pass balances it");
    state_originals(a, &o);
    CHECK(o.saved && strcmp(o.host, "0123456789abcdef0123456789abcdef") == 0 &&
              cpuset_weight(&o.vcpu_pin[0]) == 4 && cpuset_weight(&o.vcpu_pin[1]) == 4,
          "arrival: its <state> holds this host's originals (its definition), not the other's "
          "(host %.8s, vCPU 0 on %u CPUs)",
          o.host, cpuset_weight(&o.vcpu_pin[0]));
    fake_dom_set_balancer(a, NULL);
    fake_event_metadata(a);
    (void)run_until(decision_restored, a);
    CHECK(
        all_pins_are(a, "0-3"),
        "arrival: the opt-out gives it this host's definition (0-3), never the other host's CPU 1");
    stop();
}

/* ---- a domain destroyed mid-pass ---- */

/* the hook: the domain is destroyed as vnumad reads its vCPUs (libvirt says so by event) */
static void destroy_now(fake_dom *fd, fake_call call, void *arg)
{
    (void)call;
    (void)arg;
    fake_dom_hook(fd, FAKE_VCPUS, NULL, NULL);
    fake_dom_stop(fd);
    fake_event_lifecycle(fd, VIRT_EVENT_STOPPED, false);
}

/* A domain destroyed while its sample is out: the pass records it gone and goes on with the
 * others; the domain is forgotten once its work is back (freed then, not before). */
static void test_destroyed_mid_pass(void)
{
    daemon_config cfg;
    fake_dom *a, *b;
    char action[32], reason[64];

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    b = fake_dom_add("fake-b", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    fake_dom_set_busy(b, 1.0);
    start(&cfg);
    (void)run_until(settled, NULL);
    fake_dom_set_pin(b, 0, "0-3"); /* moved away by someone: b has something to do */
    fake_dom_set_pin(b, 1, "0-3");
    fake_dom_hook(a, FAKE_VCPUS, destroy_now, NULL);
    uint64_t before = dm.pass;
    pass();
    CHECK(dm.pass == before + 1 && run_until(not_tracked, a),
          "destroyed mid-pass: the pass ends and the domain is forgotten");
    CHECK(pinned_to_one_node(b), "destroyed mid-pass: the other domain is balanced in that pass");
    CHECK(dm.stats.skips[METRICS_SKIP_DOMAIN_GONE] >= 1,
          "destroyed mid-pass: counted as gone (%llu)",
          (unsigned long long)dm.stats.skips[METRICS_SKIP_DOMAIN_GONE]);
    CHECK(!last_decision(a, action, sizeof(action), reason, sizeof(reason)),
          "destroyed mid-pass: nothing is written into a domain that is gone");
    pass();
    CHECK(!is_tracked(a), "destroyed mid-pass: the next pass does not bring it back");
    stop();
}

/* ---- a hung QEMU ---- */

static bool hung_dom(void *fd)
{
    return fake_dom_hung(fd);
}

static bool answers(void *fd)
{
    char uuid[SNAP_UUID_MAX];
    dom_state *st;

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) && (st = domains_find(&dm, uuid)) && !st->busy;
}

/* A domain whose call never returns: the pass gives it up after the domain timeout and ends;
 * the next passes skip it (not answering) without calling it; once the call returns, it is
 * sampled again. */
static void test_hung(void)
{
    daemon_config cfg;
    fake_dom *a;
    unsigned calls;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-hangs", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    (void)run_until(pinned_to_one_node, a);
    (void)run_until(settled, NULL);
    fake_dom_hang(a, FAKE_VCPUS);
    uint64_t skipped = dm.stats.skips[METRICS_SKIP_NOT_ANSWERING];
    pass();
    CHECK(fake_dom_hung(a) && settled(NULL) &&
              dm.stats.skips[METRICS_SKIP_NOT_ANSWERING] == skipped + 1,
          "hung: the pass gives it up as not answering and ends while its call still hangs");
    skipped = dm.stats.skips[METRICS_SKIP_NOT_ANSWERING];
    calls = fake_dom_calls(a, FAKE_VCPUS);
    pass();
    CHECK(dm.stats.skips[METRICS_SKIP_NOT_ANSWERING] == skipped + 1 &&
              fake_dom_calls(a, FAKE_VCPUS) == calls,
          "hung: the next pass skips it as not answering, without a call (skipped %llu -> %llu, "
          "calls %u -> %u)",
          (unsigned long long)skipped,
          (unsigned long long)dm.stats.skips[METRICS_SKIP_NOT_ANSWERING], calls,
          fake_dom_calls(a, FAKE_VCPUS));
    fake_dom_release(a);
    CHECK(run_until(answers, a), "hung: once its call returns the domain is vnumad's again");
    pass();
    CHECK(fake_dom_calls(a, FAKE_VCPUS) > calls, "hung: and the next pass samples it");
    stop();
}

/* ---- SIGHUP ---- */

static void write_config(const char *busy_threshold)
{
    FILE *f = fopen(config_path, "we");

    if (!f)
        abort();
    fprintf(
        f,
        "interval = 3600\nevent_delay = 0\nqmp = no\nlog_level = %s\nsocket = %s/run/vnumad.sock\n"
        "state_dir = %s/state\nbusy_threshold = %s\n",
        getenv("VN_TEST_DEBUG") ? "debug" : "err", fake_host_root(), fake_host_root(),
        busy_threshold);
    if (fclose(f) != 0)
        abort();
}

static bool hup_read(void *arg)
{
    sigset_t pending;

    (void)arg;
    return sigpending(&pending) == 0 && !sigismember(&pending, SIGHUP);
}

static bool threshold_is(void *want)
{
    return dm.cfg.decide.busy_threshold == *(double *)want;
}

/* during a pass: a SIGHUP as vnumad reads the vCPUs, the configuration seen as it pins */
static double threshold_at_pin = -1;

static void hup_now(fake_dom *fd, fake_call call, void *arg)
{
    (void)arg;
    fake_dom_hook(fd, call, NULL, NULL);
    kill(getpid(), SIGHUP);
}

static void note_threshold(fake_dom *fd, fake_call call, void *arg)
{
    (void)fd;
    (void)call;
    (void)arg;
    threshold_at_pin = dm.cfg.decide.busy_threshold;
}

/* SIGHUP reloads the configuration file; a bad one is refused (the running one stays); one
 * that comes during a pass takes effect after it (the pass's works read the configuration). */
static void test_reload(void)
{
    daemon_config cfg;
    char err[256], journal[sizeof(cfg.state_dir) + 32], moved[sizeof(cfg.state_dir) + 32];
    bool moved_ok;
    double want;
    fake_dom *a;

    snprintf(config_path, sizeof(config_path), "%s/vnumad.conf", fake_host_root());
    write_config("0.3");
    fake_host_config(&cfg);
    if (daemon_config_load(config_path, false, &cfg, err, sizeof(err)) < 0) {
        CHECK(0, "reload: the test's configuration loads (%s)", err);
        return;
    }
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    (void)run_until(settled, NULL);
    write_config("0.7");
    snprintf(journal, sizeof(journal), "%s/journal.jsonl", cfg.state_dir);
    snprintf(moved, sizeof(moved), "%s/journal.jsonl.logrotate", cfg.state_dir);
    moved_ok = rename(journal, moved) == 0; /* as logrotate does before its SIGHUP */
    kill(getpid(), SIGHUP);
    want = 0.7;
    CHECK(run_until(threshold_is, &want),
          "reload: SIGHUP reads the file again (busy_threshold 0.7)");
    CHECK(moved_ok && access(journal, F_OK) == 0,
          "reload: and opens a new journal.jsonl where logrotate moved the last one away");
    write_config("7");
    kill(getpid(), SIGHUP);
    CHECK(run_until(hup_read, NULL) && dm.cfg.decide.busy_threshold == 0.7,
          "reload: a bad file is refused and the running configuration stays (%g)",
          dm.cfg.decide.busy_threshold);
    write_config("0.4");
    fake_dom_set_pin(a, 0, "0-3"); /* something to pin in the next pass */
    fake_dom_set_pin(a, 1, "0-3");
    fake_dom_hook(a, FAKE_VCPUS, hup_now, NULL);
    fake_dom_hook(a, FAKE_PIN_VCPU, note_threshold, NULL);
    pass();
    CHECK(threshold_at_pin == 0.7,
          "reload: a SIGHUP during a pass leaves that pass its configuration (%g)",
          threshold_at_pin);
    want = 0.4;
    CHECK(run_until(threshold_is, &want), "reload: and takes effect after the pass (%g)",
          dm.cfg.decide.busy_threshold);
    stop();
}

/* ---- vnumactl advise ---- */

/* the advise's sample parks in its vCPU read until the test lets it go */
static atomic_bool advise_parked, advise_go, advise_on_loop;
static pthread_t loop_thread;

static void park_advise(fake_dom *fd, fake_call call, void *arg)
{
    struct timespec ts = {0, 1000 * 1000};

    (void)arg;
    fake_dom_hook(fd, call, NULL, NULL);
    if (pthread_equal(pthread_self(), loop_thread)) { /* parking here would stop the loop */
        atomic_store(&advise_on_loop, true);
        return;
    }
    atomic_store(&advise_parked, true);
    while (!atomic_load(&advise_go))
        nanosleep(&ts, NULL);
}

static bool parked(void *arg)
{
    (void)arg;
    return atomic_load(&advise_parked);
}

static int last_busy_vcpus(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];
    dom_state *st;

    if (!fake_dom_uuid(fd, uuid, sizeof(uuid)) || !(st = domains_find(&dm, uuid)) ||
        !st->publish.last_record || st->publish.last_record->nr_cells < 1)
        return -1;
    return st->publish.last_record->cells[0].busy_vcpus;
}

/* `vnumactl advise` samples off the loop (the loop serves events while its sample is out)
 * and into its own copy: the next pass measures the busy fractions since the last pass, as if
 * nobody had asked. Here the vCPUs were idle for 9 s, advise came, then they ran 1 s: the
 * pass sees 10 % busy (no busy vCPU at a 0.5 threshold), not the 100 % of the last second. */
static void test_advise(void)
{
    daemon_config cfg;
    ctl_call call = {0};
    pthread_t th;
    fake_dom *a;

    fake_host_config(&cfg);
    cfg.decide.busy_threshold = 0.5;
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    (void)run_until(pinned_to_one_node, a);
    (void)run_until(settled, NULL);
    pass();
    CHECK(last_busy_vcpus(a) == 2, "advise: busy vCPUs before (%d)", last_busy_vcpus(a));
    fake_dom_set_busy(a, 0);
    fake_clock_advance(9.0);
    snprintf(call.request, sizeof(call.request),
             "{\"command\":\"advise\",\"domain\":\"fake-a\"}\n");
    fake_dom_hook(a, FAKE_VCPUS, park_advise, NULL);
    ctl_begin(&call, &th);
    loop_thread = pthread_self();
    CHECK(run_until(parked, NULL) && !atomic_load(&advise_on_loop),
          "advise: its sample reads the domain on a worker, not on the loop");
    ctl_call status = {.request = "{\"command\":\"status\"}\n"};
    pthread_t th2;
    ctl_begin(&status, &th2);
    CHECK(run_until(ctl_done, &status) && strstr(status.reply, "\"return\"") &&
              !atomic_load(&call.done),
          "advise: while its sample is out the loop answers another client (status)");
    pthread_join(th2, NULL);
    atomic_store(&advise_go, true);
    CHECK(run_until(ctl_done, &call) && strstr(call.reply, "\"return\"") &&
              strstr(call.reply, "fake-a"),
          "advise: the reply is the plan for the domain (%.80s)", call.reply);
    pthread_join(th, NULL);
    fake_dom_set_busy(a, 1.0);
    pass_after(1.0);
    int busy_after = last_busy_vcpus(a);
    /* a domain that does not answer: the client hears so once a pass finds the call hung */
    ctl_call hung_call = {0};
    snprintf(hung_call.request, sizeof(hung_call.request),
             "{\"command\":\"advise\",\"domain\":\"fake-a\"}\n");
    fake_dom_hang(a, FAKE_VCPUS);
    ctl_begin(&hung_call, &th);
    (void)run_until(hung_dom, a);
    pass();
    CHECK(run_until(ctl_done, &hung_call) && strstr(hung_call.reply, "\"Busy\"") &&
              strstr(hung_call.reply, "does not answer"),
          "advise: a domain whose call hangs gets Busy, does not answer, once a pass finds it "
          "(%.100s)",
          hung_call.reply);
    pthread_join(th, NULL);
    fake_dom_release(a);
    (void)run_until(answers, a);
    CHECK(busy_after == 0,
          "advise: the next pass measures since the last pass, not since the advise (%d busy "
          "vCPUs)",
          busy_after);
    stop();
}

/* ---- a restart leaves every guest where it is, a stop restores ---- */

static stop_kind restart_job(char *why, size_t len)
{
    snprintf(why, len, "a fake restart job");
    return STOP_RESTART;
}

static stop_kind stop_job(char *why, size_t len)
{
    snprintf(why, len, "a fake stop job");
    return STOP_STOP;
}

static bool quitting(void *arg)
{
    (void)arg;
    return dm.quit;
}

/* The SIGTERM of a restart job (systemd) and `vnumactl stop --keep` restore nothing: the
 * vCPUs keep vnumad's pins and the domain its saved originals, and the next vnumad pins
 * nothing again. The SIGTERM of a stop job puts the first originals back. */
static void test_restart(void)
{
    daemon_config cfg;
    char pin0[32], now[32], reply[512];
    unsigned pins;
    fake_dom *a;

    fake_host_config(&cfg);
    cfg.restore_on_exit = true;
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    host.stop_kind = restart_job;
    start(&cfg);
    if (!CHECK(run_until(pinned_to_one_node, a), "restart: pinned first")) {
        host.stop_kind = NULL;
        stop();
        return;
    }
    fake_dom_pin(a, 0, pin0, sizeof(pin0));
    kill(getpid(), SIGTERM);
    CHECK(run_until(quitting, NULL), "restart: SIGTERM ends the loop");
    stop_vnumad();
    CHECK(all_pins_are(a, pin0) && state_has_originals(a),
          "restart: the SIGTERM of a restart job restores nothing (pins %s) and the originals "
          "stay saved",
          fake_dom_pin(a, 0, now, sizeof(now)));

    host.stop_kind = stop_job;
    pins = fake_dom_calls(a, FAKE_PIN_VCPU);
    start(&cfg);
    pass();
    pass();
    CHECK(fake_dom_calls(a, FAKE_PIN_VCPU) == pins && all_pins_are(a, pin0),
          "restart: the next vnumad pins nothing again (%u pin calls)",
          fake_dom_calls(a, FAKE_PIN_VCPU) - pins);
    CHECK(ctl("{\"command\": \"stop-keep\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"keep\":true") && dm.quit,
          "restart: vnumactl stop --keep is answered and stops vnumad (%s)", reply);
    stop_vnumad();
    CHECK(all_pins_are(a, pin0) && state_has_originals(a),
          "restart: vnumactl stop --keep restores nothing either");

    start(&cfg);
    pass();
    kill(getpid(), SIGTERM);
    CHECK(run_until(quitting, NULL), "stop: SIGTERM ends the loop");
    stop_vnumad();
    CHECK(all_pins_are(a, "0-3") && !state_has_originals(a),
          "stop: the SIGTERM of a stop job puts the first originals back (pins %s)",
          fake_dom_pin(a, 0, now, sizeof(now)));
    host.stop_kind = NULL;
    fake_host_reset();
}

/* `vnumactl pause --all`: no domain is pinned or moved, their records say so, a restarted
 * vnumad is still paused (state_dir/paused); `resume --all` balances again. */
static void test_host_pause(void)
{
    daemon_config cfg;
    char reply[512], action[32], reason[64], mark[sizeof(cfg.state_dir) + 16];
    fake_dom *a, *b;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    CHECK(run_until(pinned_to_one_node, a), "host pause: a busy domain is pinned before");
    CHECK(ctl("{\"command\": \"pause-all\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"paused\":true"),
          "host pause: vnumactl pause --all is answered (%s)", reply);
    snprintf(mark, sizeof(mark), "%s/paused", cfg.state_dir);
    b = fake_dom_add("fake-b", 2, AUTO); /* arrives while paused */
    fake_dom_set_busy(b, 1.0);
    fake_event_lifecycle(b, VIRT_EVENT_STARTED, false);
    (void)run_until(is_tracked, b);
    pass();
    pass();
    CHECK(fake_dom_calls(b, FAKE_PIN_VCPU) == 0 && all_pins_are(b, "0-3"),
          "host pause: a busy domain that arrives is not pinned (%u pin calls)",
          fake_dom_calls(b, FAKE_PIN_VCPU));
    CHECK(last_decision(b, action, sizeof(action), reason, sizeof(reason)) &&
              !strcmp(action, "skipped") && !strcmp(reason, "paused: host-wide"),
          "host pause: its record says so (%s, %s)", action, reason);
    CHECK(pinned_to_one_node(a), "host pause: the domain pinned before keeps its pins");
    cfg.restore_on_exit = false; /* a restart of vnumad, as far as the pins go */
    stop_vnumad();
    CHECK(access(mark, F_OK) == 0, "host pause: state_dir/paused is there");
    start(&cfg);
    pass();
    CHECK(dm.host_paused && fake_dom_calls(b, FAKE_PIN_VCPU) == 0,
          "host pause: a restarted vnumad is still paused");
    CHECK(ctl("{\"command\": \"resume-all\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"paused\":false") && access(mark, F_OK) < 0,
          "host pause: vnumactl resume --all is answered and the mark is gone (%s)", reply);
    pass(); /* the next pass, as the interval brings it */
    CHECK(run_until(pinned_to_one_node, b), "host pause: after resume --all the domain is pinned");
    stop();
}

int main(void)
{
    fake_host_init(&host);
    test_opt_in();
    test_opt_out("element removed", NULL);
    test_opt_out("mode off", "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>");
    test_operator_pins();
    test_reconnect();
    test_arrival();
    test_destroyed_mid_pass();
    test_hung();
    test_reload();
    test_advise();
    test_restart();
    test_host_pause();
    return tap_done();
}
