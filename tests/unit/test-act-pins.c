/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the act stage's pins and originals (host/act_originals.c, host/act_pins.c): which
 * <cputune> pins are the operator's (act_explicit_pins), the bounds a restore keeps
 * (act_restore_pin_ok), and that a thread's affinity is set directly only on a thread of the
 * domain's QEMU (against the real kernel). Pins through libvirt are tested on the real stack:
 * tests/e2e.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "act_originals.h"
#include "act_pins.h"
#include "domxml.h"
#include "state.h"
#include "tap.h"
#include "topology.h"
#include "util.h"

static topology *topo;

/* Which emulator and IOThread pins of a <cputune> are the operator's (act_explicit_pins). */
static void test_explicit_pins(void)
{
    static const char xml[] = "<domain><name>d</name><vcpu>2</vcpu><iothreads>2</iothreads>"
                              "<cputune><emulatorpin cpuset='1'/><iothreadpin iothread='1' "
                              "cpuset='1'/><iothreadpin iothread='2' cpuset='0'/></cputune>"
                              "</domain>";
    static const struct {
        bool persistent, arrived, saved_io2;
        bool emulator;
        unsigned nr_io;
        const char *what;
    } cases[] = {
        {true, false, false, true, 2, "persistent XML: every pin is the operator's"},
        {true, true, false, true, 2, "persistent XML of an arrived domain: this host's definition"},
        {false, false, false, true, 2, "transient, nothing saved: the live pins count"},
        {false, false, true, true, 1, "transient, IOThread 2 saved as original: vnumad's own"},
        {false, true, false, false, 0,
         "transient and arrived from another host: the live pins are the other host's"},
    };
    dom_state *st = calloc(1, sizeof(*st));
    domxml_info x;
    char err[256];

    if (!st || domxml_parse(xml, topo, &x, err, sizeof(err)) < 0) {
        CHECK(false, "the test XML parses: %s", err);
        free(st);
        return;
    }
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(st, 0, sizeof(*st));
        st->arrived = st->def_originals = cases[i].arrived;
        if (cases[i].saved_io2) {
            st->orig.saved = true;
            st->orig.nr_iothreads = 1;
            st->orig.iothread_id[0] = 2;
        }
        act_explicit_pins(st, &x, cases[i].persistent);
        CHECK(st->emulator_explicit == cases[i].emulator &&
                  st->nr_iothread_explicit == cases[i].nr_io,
              "%s (emulator %d, %u IOThreads)", cases[i].what, st->emulator_explicit,
              st->nr_iothread_explicit);
    }
    free(st);
}

/* What a cell's plan moves, as spans of the sample's RAM ranges (act_move_plan, pure). */
/* issue 35: originals read back from metadata anyone with a metadata namespace can forge */
static void test_restore_bounds(void)
{
    vn_cpuset pin, bound, saved = topo->isolated;
    struct {
        const char *pin, *bound;
        bool ok;
        const char *what;
    } cases[] = {
        {"1", "0", false, "a pin outside the definition's <vcpu cpuset='0'> is refused"},
        {"0", "0", true, "the definition's own pin is put back"},
        {"0-1", "0-2", true, "a pin within the definition's CPUs is put back"},
        {"0-1", "0-3", true, "a pin within the host's CPUs (no cpuset) off the isolated ones"},
        {"3", "0-3", false, "a definition that names no CPUs names no isolated one: CPU 3 refused"},
        {"2-3", "0-3", false, "nor a set that reaches one"},
        {"0-3", "0-3", true, "every host CPU (libvirt's default affinity) is put back"},
        {"3", "2-3", true, "a definition that names isolated CPU 3 gives it"},
        {"", "0-3", false, "an empty pin is refused"},
    };

    cpuset_zero(&topo->isolated);
    cpuset_set(&topo->isolated, 3);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cpuset_zero(&pin);
        if (cases[i].pin[0] && cpuset_parse(cases[i].pin, &pin) < 0)
            abort();
        if (cpuset_parse(cases[i].bound, &bound) < 0)
            abort();
        CHECK(act_restore_pin_ok(&pin, &bound, topo) == cases[i].ok,
              "restore: %s (pin %s, bound %s)", cases[i].what, cases[i].pin[0] ? cases[i].pin : "-",
              cases[i].bound);
    }
    topo->isolated = saved;
}

/* A thread's affinity is set directly (act_thread_affinity) only while it is a thread of the
 * domain's QEMU: a vCPU unplugged since the sample may have left its id to another process,
 * and QEMU's thread ids are its own word. Our process plays QEMU, a child the other process. */
static void test_thread_affinity(void)
{
    vn_cpuset one, before, after, mine;
    pid_t self = getpid(), child;

    if (cpuset_get_affinity(self, &mine) < 0 || cpuset_weight(&mine) < 2) {
        printf("# thread affinity: not checked (needs 2 CPUs to tell a pin from none)\n");
        return;
    }
    cpuset_zero(&one);
    cpuset_set(&one, (unsigned)cpuset_first(&mine));
    child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    if (!CHECK(child > 0 && cpuset_get_affinity(child, &before) == 0, "a child process"))
        return;
    int r = act_thread_affinity(self, child, &one);
    CHECK(r == 0 && cpuset_get_affinity(child, &after) == 0 && cpuset_equal(&after, &before),
          "another process's thread id given as a vCPU's: its affinity is left alone (r=%d)", r);
    r = act_thread_affinity(self, self, &one);
    CHECK(r == 1 && cpuset_get_affinity(self, &after) == 0 && cpuset_equal(&after, &one),
          "a thread of the domain's QEMU: its affinity is set (r=%d)", r);
    (void)cpuset_set_affinity(self, &mine);
    kill(child, SIGTERM);
    (void)waitpid(child, NULL, 0);
}

int main(void)
{
    char err[256];

    topo = topo_new();
    if (topo_load(TOPO_SOURCE_SYNTHETIC, "pack:2 numa:1 core:2 pu:1", NULL, topo, err,
                  sizeof(err)) < 0)
        return 1;
    test_explicit_pins();
    test_restore_bounds();
    test_thread_affinity();
    topo_free(topo);
    return tap_done();
}
