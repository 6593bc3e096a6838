/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a tenant's data in the domain XML can make vnumad do (docs/security.md): whoever may
 * write any metadata namespace (a tenant's data through a fleet manager) can write vnumad's
 * <balancer> and <state> elements. Whole passes on the fake host (fakehost.h):
 *   - what a restore puts back comes from vnumad's own record (host/origfile.h), never from the
 *     metadata (the same against the real libvirtd: tests/e2e/forged-originals.sh);
 *   - the operator-only knobs of <balancer> (host/policy.h) are not applied unless vnumad.conf
 *     says balancer_knobs = yes, and a SIGHUP that says so applies them at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon_drive.h"
#include "domains.h"
#include "metrics.h"
#include "origfile.h"
#include "tap.h"

/* Originals on CPU 1 for both vCPUs, as a <state> stamped with machine id `machine`: within the
 * domain's definition (all 4 CPUs), so the restore's bound check alone would put them back. */
static void forged_state(char *buf, size_t len, const char *machine)
{
    snprintf(buf, len,
             "<state><original host=\"%s\"><vcpupin vcpu=\"0\" cpuset=\"1\"/>"
             "<vcpupin vcpu=\"1\" cpuset=\"1\"/><emulatorpin cpuset=\"1\"/></original></state>",
             machine);
}

static void record_path(fake_dom *fd, char *buf, size_t len)
{
    char uuid[64];

    (void)fake_dom_uuid(fd, uuid, sizeof(uuid));
    snprintf(buf, len, "%s/originals/%s", dm.cfg.state_dir, uuid);
}

static bool decided(void *fd)
{
    char action[32], reason[64];

    return last_decision(fd, action, sizeof(action), reason, sizeof(reason));
}

/* vnumad started on the fake host and the busy domain `a` balanced (pinned to one node, every
 * work in); false, vnumad stopped, when it never was (the check says `what`). */
static bool start_balanced(const daemon_config *cfg, fake_dom *a, const char *what)
{
    start(cfg);
    if (!CHECK(run_until(pinned_to_one_node, a), "%s", what)) {
        stop();
        return false;
    }
    (void)run_until(settled, NULL);
    return true;
}

/* A forged <state> on a domain vnumad balances: the opt-out puts back what vnumad recorded (all
 * 4 CPUs), not the forged CPU 1. Before the record, vnumad put the forged pins back. */
static void test_forged_state(void)
{
    daemon_config cfg;
    char state[512], path[512], dir[512];
    struct stat sb, dsb;
    fake_dom *a;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    if (!start_balanced(&cfg, a, "forged <state>: balanced first"))
        return;
    record_path(a, path, sizeof(path));
    snprintf(dir, sizeof(dir), "%s/originals", dm.cfg.state_dir);
    CHECK(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 07777) == 0600 &&
              lstat(dir, &dsb) == 0 && S_ISDIR(dsb.st_mode) && (dsb.st_mode & 07777) == 0700,
          "record: state_dir/originals/UUID, 0600 in a 0700 directory");
    forged_state(state, sizeof(state), dm.host_id);
    fake_dom_set_state(a, state);
    fake_dom_set_balancer(a, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>");
    fake_event_metadata(a);
    CHECK(run_until(not_tracked, a) && run_until(decision_restored, a),
          "forged <state>: the opt-out restores");
    CHECK(all_pins_are(a, "0-3"),
          "forged <state>: the recorded originals are put back (all CPUs), not the forged CPU 1");
    CHECK(lstat(path, &sb) < 0 && errno == ENOENT,
          "forged <state>: the record is gone once put back");
    stop();
}

typedef struct read_since {
    fake_dom *fd;
    unsigned reads; /* its <balancer> element read this many times before */
} read_since;

/* vnumad read the domain's element again, and is done with what it read */
static bool read_again(void *arg)
{
    read_since *rs = arg;

    return fake_dom_calls(rs->fd, FAKE_METADATA) > rs->reads && settled(NULL);
}

/* A domain that never opted in, given a forged <state> and a <balancer mode="off"> carrying an
 * <original> (vnumad 0.1.0's place for them): vnumad has no record of changing it, so nothing of
 * it is touched. Before the record, both were put back (within its definition). */
static void test_never_opted_in(void)
{
    daemon_config cfg;
    char state[512];
    fake_dom *b;

    fake_host_config(&cfg);
    b = fake_dom_add("fake-b", 2, NULL);
    fake_dom_set_pin(b, 0, "2");
    fake_dom_set_pin(b, 1, "2");
    start(&cfg);
    (void)run_until(settled, NULL);
    forged_state(state, sizeof(state), dm.host_id);
    fake_dom_set_state(b, state);
    fake_dom_set_balancer(b, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\">"
                             "<original><vcpupin vcpu=\"0\" cpuset=\"1\"/>"
                             "<vcpupin vcpu=\"1\" cpuset=\"1\"/></original></balancer>");
    read_since rs = {b, fake_dom_calls(b, FAKE_METADATA)};
    fake_event_metadata(b);
    CHECK(run_until(read_again, &rs), "never opted in: vnumad read its element after the event");
    (void)run_until(settled, NULL);
    pass();
    CHECK(all_pins_are(b, "2") && fake_dom_calls(b, FAKE_PIN_VCPU) == 0 &&
              fake_dom_calls(b, FAKE_PIN_EMULATOR) == 0 && !is_tracked(b),
          "never opted in: forged originals in <state> and in <balancer> are not put back (%u pin "
          "calls)",
          fake_dom_calls(b, FAKE_PIN_VCPU));
    stop();
}

/* The live metadata says a vnumad changed the domain (this host's <original> on CPU 1), and
 * vnumad has no record (its state_dir was wiped, or an older vnumad kept originals only there):
 * vnumad takes the definition's pins as the originals, and the opt-out puts those back. */
static void test_no_record(void)
{
    daemon_config cfg;
    char state[512], path[512];
    fake_dom *a;

    fake_host_config(&cfg);
    cfg.restore_on_exit = false;
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    if (!start_balanced(&cfg, a, "no record: balanced first"))
        return;
    char pin0[32], pin1[32];
    (void)fake_dom_pin(a, 0, pin0, sizeof(pin0));
    (void)fake_dom_pin(a, 1, pin1, sizeof(pin1));
    stop_vnumad();
    record_path(a, path, sizeof(path));
    CHECK(unlink(path) == 0, "no record: vnumad stopped (pins kept), its record removed");
    forged_state(state, sizeof(state), dm.host_id);
    fake_dom_set_state(a, state);
    unsigned pins = fake_dom_calls(a, FAKE_PIN_VCPU);
    start(&cfg);
    (void)run_until(settled, NULL);
    pass();
    char now0[32], now1[32];
    CHECK(fake_dom_calls(a, FAKE_PIN_VCPU) == pins &&
              !strcmp(fake_dom_pin(a, 0, now0, sizeof(now0)), pin0) &&
              !strcmp(fake_dom_pin(a, 1, now1, sizeof(now1)), pin1),
          "no record: the restarted vnumad pins nothing (%u pin calls; %s %s, were %s %s)",
          fake_dom_calls(a, FAKE_PIN_VCPU) - pins, now0, now1, pin0, pin1);
    fake_dom_set_balancer(a, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>");
    fake_event_metadata(a);
    CHECK(run_until(not_tracked, a) && run_until(decision_restored, a),
          "no record: the opt-out restores");
    CHECK(all_pins_are(a, "0-3"),
          "no record: the definition's pins are put back (all CPUs), not the metadata's CPU 1");
    stop();
}

/* A record of another QEMU run of the domain (its running id) is stale: removed, never applied. */
static void test_stale_record(void)
{
    daemon_config cfg;
    static dom_originals o = {.saved = true, .nr_vcpus = 2}, got; /* 1 MiB: off the stack */
    char uuid[64];
    fake_dom *a;
    int id;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    (void)fake_dom_uuid(a, uuid, sizeof(uuid));
    (void)cpuset_parse("1", &o.vcpu_pin[0]);
    (void)cpuset_parse("1", &o.vcpu_pin[1]);
    (void)mkdir(cfg.state_dir, 0700);
    CHECK(origfile_write(cfg.state_dir, uuid, 999999, &o) == 0,
          "stale record: one of another run (id 999999) written");
    if (!start_balanced(&cfg, a, "stale record: balanced"))
        return;
    id = domains_find(&dm, uuid) ? domains_find(&dm, uuid)->id : -1;
    CHECK(origfile_read(cfg.state_dir, uuid, id, &got) == 0 && got.nr_vcpus == 2 &&
              cpuset_weight(&got.vcpu_pin[0]) == 4,
          "stale record: replaced by this run's (id %d: all 4 CPUs)", id);
    fake_dom_set_balancer(a, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>");
    fake_event_metadata(a);
    (void)run_until(decision_restored, a);
    CHECK(all_pins_are(a, "0-3"), "stale record: the opt-out puts back this run's originals");
    stop();
}

/* The domain saved (its QEMU gone, its live metadata in the image) and restored: a new run
 * that brings back the same <state> takes over the record of the run before, and the opt-out
 * puts back the pins from before vnumad (vCPU 0 on CPU 1, vCPU 1 on CPU 0). A restore whose
 * <state> is not the record's (written meanwhile) gets no record: the definition's pins. */
static void test_save_restore(void)
{
    daemon_config cfg;
    char *saved, p0[32], p1[32], forged[512];
    fake_dom *a;

    for (int forge = 0; forge <= 1; forge++) {
        const char *tag = forge ? "restore, <state> changed" : "restore";
        fake_host_config(&cfg);
        a = fake_dom_add("fake-a", 2, AUTO);
        fake_dom_set_busy(a, 1.0);
        fake_dom_set_pin(a, 0, "1");
        fake_dom_set_pin(a, 1, "0");
        char what[64];
        snprintf(what, sizeof(what), "%s: balanced first", tag);
        if (!start_balanced(&cfg, a, what))
            return;
        saved = fake_dom_state(a);
        (void)fake_dom_pin(a, 0, p0, sizeof(p0));
        (void)fake_dom_pin(a, 1, p1, sizeof(p1));
        fake_dom_stop(a);
        fake_event_lifecycle(a, VIRT_EVENT_STOPPED, false);
        CHECK(run_until(not_tracked, a), "%s: saved, no longer tracked", tag);
        fake_dom_start(a);
        forged_state(forged, sizeof(forged), dm.host_id);
        fake_dom_set_state(a, forge ? forged : saved);
        free(saved);
        fake_dom_set_pin(a, 0, p0);
        fake_dom_set_pin(a, 1, p1);
        fake_event_lifecycle(a, VIRT_EVENT_STARTED, false);
        CHECK(run_until(is_tracked, a), "%s: tracked again (a new run, pins %s %s)", tag, p0, p1);
        (void)run_until(settled, NULL);
        fake_dom_set_balancer(a, "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>");
        fake_event_metadata(a);
        CHECK(run_until(decision_restored, a), "%s: the opt-out restores", tag);
        char now0[32], now1[32];
        (void)fake_dom_pin(a, 0, now0, sizeof(now0));
        (void)fake_dom_pin(a, 1, now1, sizeof(now1));
        if (!forge)
            CHECK(!strcmp(now0, "1") && !strcmp(now1, "0"),
                  "%s: the record of the run before is taken over: the pins from before vnumad "
                  "(%s %s)",
                  tag, now0, now1);
        else
            CHECK(!strcmp(now0, "0-3") && !strcmp(now1, "0-3"),
                  "%s: the record goes, the definition's pins come back (%s %s), not the "
                  "metadata's CPU 1",
                  tag, now0, now1);
        stop();
    }
}

/* Records of domains that do not run, and what is not a record, go when vnumad starts. */
static void test_prune(void)
{
    daemon_config cfg;
    static dom_originals o = {.saved = true, .nr_vcpus = 1};
    char dir[512], tmp[600], other[600];
    fake_dom *a;

    fake_host_config(&cfg);
    a = fake_dom_add("fake-a", 2, AUTO);
    (void)a;
    (void)cpuset_parse("0", &o.vcpu_pin[0]);
    CHECK(origfile_write(cfg.state_dir, "00000000-0000-4000-8000-999999999999", 1, &o) == 0,
          "prune: a record of a domain that does not run");
    snprintf(dir, sizeof(dir), "%s/originals", cfg.state_dir);
    snprintf(tmp, sizeof(tmp), "%s/.00000000-0000-4000-8000-999999999999.tmp", dir);
    snprintf(other, sizeof(other), "%s/notes", dir);
    (void)close(open(tmp, O_WRONLY | O_CREAT, 0600));
    (void)close(open(other, O_WRONLY | O_CREAT, 0600));
    start(&cfg);
    (void)run_until(settled, NULL);
    char path[600];
    snprintf(path, sizeof(path), "%s/00000000-0000-4000-8000-999999999999", dir);
    CHECK(access(tmp, F_OK) < 0 && access(other, F_OK) < 0 && access(path, F_OK) < 0,
          "prune: the record of a domain that does not run, a temporary file and a stranger are "
          "gone");
    stop();
}

/* The record cannot be written (state_dir/originals is writable by others: not vnumad's own):
 * nothing is changed, the pass says why, and it acts once the record can be written. */
static void test_unrecordable(void)
{
    daemon_config cfg;
    char dir[512];
    fake_dom *a;

    fake_host_config(&cfg);
    snprintf(dir, sizeof(dir), "%s/originals", cfg.state_dir);
    (void)mkdir(dir, 0700);
    (void)chmod(dir, 0777);
    a = fake_dom_add("fake-a", 2, AUTO);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    (void)run_until(decided, a);
    (void)run_until(settled, NULL);
    pass();
    CHECK(fake_dom_calls(a, FAKE_PIN_VCPU) == 0 && all_pins_are(a, "0-3") &&
              dm.stats.errors[METRICS_ERR_ACT_TRANSIENT] > 0,
          "unrecordable: nothing pinned while the originals cannot be recorded (%u pin calls, "
          "%llu transient errors)",
          fake_dom_calls(a, FAKE_PIN_VCPU),
          (unsigned long long)dm.stats.errors[METRICS_ERR_ACT_TRANSIENT]);
    (void)chmod(dir, 0700);
    pass();
    CHECK(run_until(pinned_to_one_node, a),
          "unrecordable: balanced once the record can be written");
    stop();
}

static void write_config(bool knobs)
{
    FILE *f = fopen(config_path, "we");

    if (!f)
        abort();
    fprintf(f,
            "interval = 3600\nevent_delay = 0\nqmp = no\nlog_level = %s\n"
            "socket = %s/run/vnumad.sock\nstate_dir = %s/state\n%s",
            getenv("VN_TEST_DEBUG") ? "debug" : "err", fake_host_root(), fake_host_root(),
            knobs ? "balancer_knobs = yes\n" : "");
    if (fclose(f) != 0)
        abort();
}

static const vn_balancer *cfg_of(fake_dom *fd)
{
    char uuid[64];
    const dom_state *st;

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) && (st = domains_find(&dm, uuid)) ? &st->cfg
                                                                                   : NULL;
}

/* the reload read balancer_knobs = yes, and the domain's element again under it */
static bool knobs_applied(void *fd)
{
    const vn_balancer *c = cfg_of(fd);

    return dm.cfg.balancer_knobs && c && c->priority == 50 && c->move_realtime;
}

/* A tenant's element asks for priority 50 (ahead of every other domain for the move budget),
 * realtime="move" and its own rate: by default the first two are not applied, the rate (it only
 * slows the domain itself) is; with balancer_knobs = yes (a SIGHUP) all three are, at once, and
 * a priority below 0 always is. Before, all three were applied whoever wrote them. */
static void test_knobs(void)
{
    daemon_config cfg;
    char err[256] = "";
    const vn_balancer *c;
    fake_dom *a, *b;

    snprintf(config_path, sizeof(config_path), "%s/vnumad.conf", fake_host_root());
    write_config(false);
    fake_host_config(&cfg);
    if (!CHECK(daemon_config_load(config_path, false, &cfg, err, sizeof(err)) == 0 &&
                   !cfg.balancer_knobs,
               "knobs: balancer_knobs is no unless said (%s)", err))
        return;
    a = fake_dom_add("fake-a", 2,
                     "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"auto\" priority=\"50\" "
                     "realtime=\"move\" rate=\"8\"/>");
    b = fake_dom_add("fake-b", 2,
                     "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"auto\" priority=\"-20\"/>");
    start(&cfg);
    (void)run_until(settled, NULL);
    c = cfg_of(a);
    CHECK(c && c->valid && c->priority == 0 && !c->move_realtime && c->rate_mib == 8,
          "knobs: priority 50 and realtime=\"move\" not applied, rate 8 is (priority %d, "
          "realtime %s, rate %u)",
          c ? c->priority : -1, c && c->move_realtime ? "move" : "keep", c ? c->rate_mib : 0);
    c = cfg_of(b);
    CHECK(c && c->priority == -20, "knobs: a priority below 0 is applied (%d)",
          c ? c->priority : 0);
    write_config(true);
    kill(getpid(), SIGHUP);
    CHECK(run_until(knobs_applied, a), "knobs: balancer_knobs = yes and a SIGHUP: applied at once");
    stop();
}

int main(void)
{
    fake_host_init(&host);
    test_forged_state();
    test_never_opted_in();
    test_no_record();
    test_stale_record();
    test_save_restore();
    test_prune();
    test_unrecordable();
    test_knobs();
    return tap_done();
}
