/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of host/conflicts.c on fixture /proc trees: kernel.numa_balancing values, a numad
 * process, and libvirt placement='auto' in domain XML. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conflicts.h"
#include "tap.h"

static char root[] = "/tmp/vnuma-test-conflicts-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(void)
{
    static const struct {
        const char *value;
        unsigned want;
    } nb[] = {{"0\n", 0},
              {"1\n", CONFLICT_NUMA_BALANCING},
              {"2\n", 0},
              {"3\n", CONFLICT_NUMA_BALANCING},
              {"junk\n", 0}};
    static const struct {
        const char *xml;
        bool want;
    } px[] = {
        {"<domain><vcpu placement='static'>2</vcpu></domain>", false},
        {"<domain><vcpu placement='auto'>2</vcpu></domain>", true},
        {"<domain><vcpu>2</vcpu><numatune><memory mode='strict' placement='auto'/></numatune>"
         "</domain>",
         true},
        {"<domain><vcpu>2</vcpu><numatune><memory mode='strict' nodeset='0'/></numatune>"
         "</domain>",
         false},
        {"<domain><metadata><x placement='auto'/></metadata></domain>", false},
        {"not xml", false},
    };
    char cmd[600];

    if (!mkdtemp(root)) {
        printf("cannot create a temporary directory\n");
        return 77;
    }
    CHECK(conflicts_host("/nonexistent-root") == 0, "no /proc at all: no conflicts");
    for (size_t i = 0; i < sizeof(nb) / sizeof(nb[0]); i++) {
        put("proc/sys/kernel/numa_balancing", nb[i].value);
        CHECK(conflicts_host(root) == nb[i].want, "numa_balancing = %.*s", 4, nb[i].value);
    }
    put("proc/sys/kernel/numa_balancing", "0\n");
    put("proc/1/comm", "systemd\n");
    put("proc/42/comm", "numad-helper\n");
    CHECK(conflicts_host(root) == 0, "no process named exactly numad");
    put("proc/4242/comm", "numad\n");
    put("proc/sys/kernel/numa_balancing", "1\n");
    CHECK(conflicts_host(root) == (CONFLICT_NUMAD | CONFLICT_NUMA_BALANCING),
          "numad running and numa_balancing on: both found");
    for (size_t i = 0; i < sizeof(px) / sizeof(px[0]); i++)
        CHECK(conflicts_placement_auto(px[i].xml) == px[i].want, "placement case %zu: %s", i,
              px[i].want ? "auto" : "not auto");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    (void)!system(cmd);
    return tap_done();
}
