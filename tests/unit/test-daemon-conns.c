/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Several libvirt connections through whole passes on the fake host (fakehost.h: its daemons,
 * each opened by its URI; host/conns.h): the same name on both of two daemons (both balanced,
 * each by its own decision; NAME@LABEL finds each).
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

static dom_state *state_of(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];

    return fake_dom_uuid(fd, uuid, sizeof(uuid)) ? domains_find(&dm, uuid) : NULL;
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

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* (a crash shows after which check) */
    fake_host_init(&host);
    test_same_name();
    return tap_done();
}
