/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * KVM's halt-polling time through whole passes on the fake host (fakehost.h), QMP on. Under
 * KVM a vCPU's run time includes the time it spins after the guest halted; the sample takes
 * it out, from libvirt's vCPU statistics. It asks for them only when a vCPU ran above
 * busy_threshold since the last sample (below it, the vCPU is idle with or without its
 * polling) or the last reading is a minute old: an idle KVM domain costs no libvirt call per
 * pass. A reading older than the last sample never makes a busy vCPU read as idle. Nor does
 * an unchanged decision record cost calls but its heartbeat (record_heartbeat).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_drive.h"
#include "domains.h"
#include "record.h"
#include "sample.h"
#include "tap.h"

#define CELL_MIB 64

/* The busy vCPUs the domain's last decision record counted, -1 none measured. */
static int busy_vcpus(fake_dom *fd)
{
    char uuid[SNAP_UUID_MAX];
    const dom_state *st;
    const record_decision *r;
    int n = -1;

    if (!fake_dom_uuid(fd, uuid, sizeof(uuid)) || !(st = domains_find(&dm, uuid)) ||
        !(r = st->publish.last_record))
        return -1;
    for (unsigned k = 0; k < r->nr_cells; k++)
        if (r->cells[k].busy_vcpus >= 0)
            n = (n < 0 ? 0 : n) + r->cells[k].busy_vcpus;
    return n;
}

static void test_halt_polling(void)
{
    daemon_config cfg;
    fake_dom *a;
    unsigned c0;

    fake_host_config(&cfg);
    cfg.use_qmp = true;
    /* 2 vCPUs whose memory is where they run: nothing moves, only the sampling is seen */
    a = fake_dom_add("fake-kvm", 2, AUTO);
    fake_dom_memory(a, 1, CELL_MIB, 0);
    /* an idle guest whose vCPUs wake often: all their run time is halt polling */
    fake_dom_set_busy(a, 0.2);
    fake_dom_set_poll(a, 0.2);
    start(&cfg);
    CHECK(run_until(first_pass_done, NULL), "idle: the first pass ran");
    CHECK(busy_vcpus(a) == 0, "idle: the first pass counts no busy vCPU (%d)", busy_vcpus(a));

    c0 = fake_dom_calls(a, FAKE_STATS);
    for (int i = 0; i < 4; i++)
        pass_after(10.0);
    CHECK(c0 > 0 && fake_dom_calls(a, FAKE_STATS) == c0 && busy_vcpus(a) == 0,
          "idle: 4 passes over 40 s under busy_threshold ask no statistics (%u calls, %u before)",
          fake_dom_calls(a, FAKE_STATS), c0);

    /* the guest works a third of a CPU, no polling: the reading to measure from is 40 s old,
     * and the 8 s of polling since it fell before this window (reading it as this window's
     * would take the vCPUs for idle) */
    fake_dom_set_busy(a, 0.3);
    fake_dom_set_poll(a, 0.0);
    pass_after(5.0);
    CHECK(fake_dom_calls(a, FAKE_STATS) == c0 + 1 && busy_vcpus(a) == 2,
          "busy: a vCPU over busy_threshold asks the statistics (%u calls) and an old reading "
          "leaves its work busy (%d busy vCPUs)",
          fake_dom_calls(a, FAKE_STATS) - c0, busy_vcpus(a));

    /* 60% of a CPU of which 50% is polling: 10% of guest work, idle */
    fake_dom_set_busy(a, 0.6);
    fake_dom_set_poll(a, 0.5);
    pass_after(5.0);
    CHECK(fake_dom_calls(a, FAKE_STATS) == c0 + 2 && busy_vcpus(a) == 0,
          "polling: the run time that was halt polling is not guest work (%d busy vCPUs)",
          busy_vcpus(a));

    /* idle again: the reading is refreshed once it is SAMPLE_POLL_REFRESH_S old, not before */
    fake_dom_set_busy(a, 0.1);
    fake_dom_set_poll(a, 0.1);
    pass_after(SAMPLE_POLL_REFRESH_S * 0.4);
    pass_after(SAMPLE_POLL_REFRESH_S * 0.4);
    CHECK(fake_dom_calls(a, FAKE_STATS) == c0 + 2,
          "idle: no statistics asked while the reading is under a minute old (%u calls)",
          fake_dom_calls(a, FAKE_STATS) - c0 - 2);
    pass_after(SAMPLE_POLL_REFRESH_S * 0.4);
    CHECK(fake_dom_calls(a, FAKE_STATS) == c0 + 3 && busy_vcpus(a) == 0,
          "idle: the reading is refreshed when it is a minute old (%u calls)",
          fake_dom_calls(a, FAKE_STATS) - c0 - 2);
    stop();
}

/* A TCG domain (statistics without halt polling) is asked three times, then never again. */
static void test_tcg(void)
{
    daemon_config cfg;
    fake_dom *a;

    fake_host_config(&cfg);
    cfg.use_qmp = true;
    a = fake_dom_add("fake-tcg", 2, AUTO);
    fake_dom_memory(a, 1, CELL_MIB, 0);
    fake_dom_set_busy(a, 1.0);
    start(&cfg);
    CHECK(run_until(first_pass_done, NULL), "tcg: the first pass ran");
    for (int i = 0; i < 5; i++)
        pass();
    CHECK(fake_dom_calls(a, FAKE_STATS) == 3 && busy_vcpus(a) == 2,
          "tcg: asked 3 times in 6 passes of busy vCPUs (%u), run time taken as it is (%d busy)",
          fake_dom_calls(a, FAKE_STATS), busy_vcpus(a));
    stop();
}

/* Libvirt calls of an idle domain's passes besides the statistics: the record's heartbeat. */
static unsigned record_calls(fake_dom *a)
{
    return fake_dom_calls(a, FAKE_STATE_SET) + fake_dom_calls(a, FAKE_JOB) +
           fake_dom_calls(a, FAKE_QMP);
}

/* An idle domain's record, unchanged, is written again (QOM object, <state>) only as the
 * heartbeat: after record_heartbeat (600 s by default), never with 0. */
static void test_heartbeat(void)
{
    daemon_config cfg;
    fake_dom *a;
    unsigned w0, c0;

    for (int never = 0; never < 2; never++) {
        fake_host_config(&cfg);
        cfg.use_qmp = true;
        if (never)
            cfg.heartbeat_s = 0;
        a = fake_dom_add("fake-idle", 2, AUTO);
        fake_dom_memory(a, 1, CELL_MIB, 0);
        fake_dom_set_busy(a, 0.05);
        start(&cfg);
        CHECK(run_until(first_pass_done, NULL), "heartbeat: the first pass ran");
        pass();
        w0 = fake_dom_calls(a, FAKE_STATE_SET);
        c0 = record_calls(a);
        for (int i = 0; i < 11; i++)
            pass_after(50.0); /* 550 s: no heartbeat yet */
        CHECK(w0 > 0 && fake_dom_calls(a, FAKE_STATE_SET) == w0 && record_calls(a) == c0,
              "heartbeat%s: an unchanged record is not written again in 550 s (%u writes, %u "
              "calls)",
              never ? " 0" : "", fake_dom_calls(a, FAKE_STATE_SET) - w0, record_calls(a) - c0);
        for (int i = 0; i < (never ? 100 : 2); i++)
            pass_after(50.0);
        if (never)
            CHECK(fake_dom_calls(a, FAKE_STATE_SET) == w0,
                  "heartbeat 0: not written again in 5550 s (%u writes)",
                  fake_dom_calls(a, FAKE_STATE_SET) - w0);
        else
            CHECK(fake_dom_calls(a, FAKE_STATE_SET) == w0 + 1,
                  "heartbeat: written again once 600 s passed (%u writes)",
                  fake_dom_calls(a, FAKE_STATE_SET) - w0);
        stop();
    }
}

int main(void)
{
    fake_host_init(&host);
    test_halt_polling();
    test_tcg();
    test_heartbeat();
    return tap_done();
}
