/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host policy through whole passes on the fake host (fakehost.h): vnumad.conf's
 * default_mode and policy_dir's rules put domains without a <balancer> element in balancing
 * (hostpolicy.h, domains.c consider). With default auto, a domain with no element is balanced
 * ("opt_in": "default" in its record and in status), a rule leaves one out by name and one by
 * Nova's flavor, and a mode="off" element is never touched; a SIGHUP that changes the rules and
 * sets default off restores the domain the default took (its pins back, "restored") and takes
 * up the Nova one a rule now puts in auto ("opt_in": "rule FILE:LINE"); an element on it then
 * wins over the rule.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon_drive.h"
#include "domains.h"
#include "record.h"
#include "tap.h"
#include "util.h"

#define OFF "<balancer xmlns=\"urn:vnuma:balancer:1\" mode=\"off\"/>"

/* Nova's block as Nova writes it (nova/virt/libvirt/config.py), with this flavor. */
static char *nova_block(const char *flavor)
{
    char *x = NULL;

    if (asprintf(&x,
                 "<nova:instance xmlns:nova=\"http://openstack.org/xmlns/libvirt/nova/1.1\">"
                 "<nova:package version=\"27.1.0\"/><nova:name>web-1</nova:name>"
                 "<nova:creationTime>2024-05-01 10:00:00</nova:creationTime>"
                 "<nova:flavor name=\"%s\"><nova:memory>2048</nova:memory>"
                 "<nova:disk>20</nova:disk><nova:swap>0</nova:swap>"
                 "<nova:ephemeral>0</nova:ephemeral><nova:vcpus>2</nova:vcpus></nova:flavor>"
                 "<nova:owner><nova:user uuid=\"u-1\">alice</nova:user>"
                 "<nova:project uuid=\"p-1\">demo</nova:project></nova:owner>"
                 "<nova:root type=\"image\" uuid=\"img-1\"/></nova:instance>",
                 flavor) < 0)
        abort();
    return x;
}

static char rules_path[512];

static void write_config(const char *default_mode)
{
    FILE *f = fopen(config_path, "we");

    if (!f)
        abort();
    fprintf(f,
            "interval = 3600\nevent_delay = 0\nqmp = no\nlog_level = %s\n"
            "socket = %s/run/vnumad.sock\nstate_dir = %s/state\n"
            "default_mode = %s\npolicy_dir = %s/policy.d\n",
            getenv("VN_TEST_DEBUG") ? "debug" : "err", fake_host_root(), fake_host_root(),
            default_mode, fake_host_root());
    if (fclose(f) != 0)
        abort();
}

static void write_rules(const char *text)
{
    FILE *f = fopen(rules_path, "we");

    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static const dom_state *state_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) ? domains_find(&dm, uuid) : NULL;
}

static const char *opt_in_of(fake_dom *fd)
{
    const dom_state *st = state_of(fd);

    return st ? st->opt_in : "(not tracked)";
}

/* vnumad never pinned, read the threads of, or wrote the state of the domain */
static bool untouched(fake_dom *fd)
{
    return !is_tracked(fd) && all_pins_are(fd, "0-3") && fake_dom_calls(fd, FAKE_PIN_VCPU) == 0 &&
           fake_dom_calls(fd, FAKE_VCPUS) == 0 && fake_dom_calls(fd, FAKE_STATE_SET) == 0;
}

static bool restored_not_tracked(void *fd)
{
    return not_tracked(fd) && decision_restored(fd);
}

/* the domain's last record was made with what put it in its mode */
static bool record_says(fake_dom *fd, const char *opt_in)
{
    const dom_state *st = state_of(fd);

    return st && st->publish.last_record && strstr(st->publish.last_record->opt_in, opt_in);
}

static void test_policy(void)
{
    daemon_config cfg;
    char err[512] = "", reply[65536], action[32], reason[128];
    fake_dom *plain, *out, *off, *nova;
    char *block;

    snprintf(config_path, sizeof(config_path), "%s/vnumad.conf", fake_host_root());
    snprintf(rules_path, sizeof(rules_path), "%s/policy.d", fake_host_root());
    (void)mkdir(rules_path, 0755);
    snprintf(rules_path, sizeof(rules_path), "%s/policy.d/10-fleet.rules", fake_host_root());
    write_config("auto");
    write_rules("# leave out by name, and Nova's dedicated flavors\n"
                "off name=fake-out\n"
                "off nova.flavor=*.dedicated\n");
    fake_host_config(&cfg);
    if (!CHECK(daemon_config_load(config_path, false, &cfg, err, sizeof(err)) == 0 &&
                   cfg.default_mode == VN_MODE_AUTO,
               "default_mode = auto read (%s)", err))
        return;
    plain = fake_dom_add("fake-plain", 2, NULL);
    out = fake_dom_add("fake-out", 2, NULL);
    off = fake_dom_add("fake-off", 2, OFF);
    nova = fake_dom_add("instance-00000001", 2, NULL);
    block = nova_block("c1.dedicated");
    fake_dom_set_metadata(nova, block);
    free(block);
    fake_dom_set_busy(plain, 1.0);
    fake_dom_set_busy(out, 1.0);
    fake_dom_set_busy(off, 1.0);
    fake_dom_set_busy(nova, 1.0);
    start(&cfg);
    CHECK(run_until(pinned_to_one_node, plain),
          "default auto: a busy domain without an element is balanced");
    (void)run_until(settled, NULL);
    CHECK(!strcmp(opt_in_of(plain), "default") && record_says(plain, "default"),
          "default auto: its state and record say \"default\" (%s)", opt_in_of(plain));
    CHECK(untouched(out), "a rule (name=fake-out) leaves a domain out: never read nor pinned");
    CHECK(untouched(nova), "a rule (nova.flavor=*.dedicated) leaves the Nova instance out");
    CHECK(untouched(off), "an element mode=\"off\" wins over default auto: untouched");
    CHECK(ctl("{\"command\":\"status\"}", reply, sizeof(reply)) &&
              strstr(reply, "\"opt_in\":\"default\""),
          "status says \"opt_in\": \"default\"");

    /* the rules change: default off, Nova's c1 flavors in auto */
    write_rules("auto nova.flavor=c1.*\n");
    write_config("off");
    kill(getpid(), SIGHUP);
    CHECK(run_until(restored_not_tracked, plain),
          "reload, default off: the domain the default took is restored and dropped");
    (void)run_until(settled, NULL);
    CHECK(all_pins_are(plain, "0-3") && !state_has_originals(plain),
          "reload: its original pins are back, no originals left");
    CHECK(last_decision(plain, action, sizeof(action), reason, sizeof(reason)) &&
              !strcmp(action, "restored") && strstr(reason, "host policy"),
          "reload: its <state> says restored by the host policy (%s, %s)", action, reason);
    CHECK(run_until(pinned_to_one_node, nova),
          "reload: the Nova instance a rule now puts in auto is taken up and balanced");
    (void)run_until(settled, NULL);
    CHECK(strstr(opt_in_of(nova), "rule ") && strstr(opt_in_of(nova), "/10-fleet.rules:1") &&
              record_says(nova, "10-fleet.rules:1"),
          "reload: its state and record name the rule (%s)", opt_in_of(nova));
    CHECK(untouched(out) && untouched(off), "reload: the others still untouched");

    /* the element wins over the rule */
    unsigned pins = fake_dom_calls(nova, FAKE_PIN_VCPU);
    fake_dom_set_balancer(nova, OFF);
    fake_event_metadata(nova);
    CHECK(run_until(restored_not_tracked, nova),
          "an element mode=\"off\" wins over the rule: restored and dropped");
    (void)run_until(settled, NULL);
    CHECK(all_pins_are(nova, "0-3"), "element off: its original pins are back");
    pass();
    CHECK(fake_dom_calls(nova, FAKE_PIN_VCPU) == pins + 2 && all_pins_are(nova, "0-3") &&
              not_tracked(nova),
          "element off: the next pass leaves it alone (pin calls %u, were %u + 2 to restore)",
          fake_dom_calls(nova, FAKE_PIN_VCPU), pins);
    stop();
    unlink(rules_path);
}

/* default_mode = auto and no rule: nothing of a domain is read for the policy, every domain
 * without an element is balanced */
static void test_default_only(void)
{
    daemon_config cfg;
    char err[512] = "";
    fake_dom *a;

    snprintf(config_path, sizeof(config_path), "%s/vnumad.conf", fake_host_root());
    write_config("auto");
    write_rules("# no rules\n");
    fake_host_config(&cfg);
    if (!CHECK(daemon_config_load(config_path, false, &cfg, err, sizeof(err)) == 0,
               "default only: config read (%s)", err))
        return;
    a = fake_dom_add("fake-any", 2, NULL);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    CHECK(run_until(pinned_to_one_node, a),
          "default only: a domain without an element is balanced");
    (void)run_until(settled, NULL);
    CHECK(!strcmp(opt_in_of(a), "default"), "default only: by the default (%s)", opt_in_of(a));
    stop();
    unlink(rules_path);
}

int main(void)
{
    fake_host_init(&host);
    test_policy();
    test_default_only();
    return tap_done();
}
