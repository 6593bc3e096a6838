/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of vnumad.conf parsing (host/config.c): every key, and strict errors with file:line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tap.h"

static char path[] = "/tmp/vnuma-test-config-XXXXXX";

static int load_text(const char *text, daemon_config *c, char *err, size_t len)
{
    FILE *f = fopen(path, "w");

    fputs(text, f);
    fclose(f);
    daemon_config_defaults(c);
    return daemon_config_load(path, false, c, err, len);
}

int main(void)
{
    daemon_config c;
    char err[512] = "";
    int fd = mkstemp(path);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"colour = red\n", ":1: unknown key 'colour'"},
        {"# c\n\ninterval = 0\n", ":3: interval: value '0' is not a number"},
        {"interval = 5s\n", ":1: interval"},
        {"interval = nan\n", ":1: interval"},
        {"rate_limit_mib = -1\n", "rate_limit_mib"},
        {"rate_limit_mib = 99999999999999999999\n", "rate_limit_mib"},
        {"qmp = maybe\n", "qmp: expected yes or no"},
        {"socket = relative/path\n", "socket: expected an absolute path"},
        {"log_level = loud\n", "log_level: expected err, warning, info or debug"},
        {"just words\n", ":1: expected 'key = value'"},
        {"reserve_percent = 80\n", "reserve_percent"},
        {"busy_threshold = 2\n", "busy_threshold"},
        {"metrics_file = vnuma.prom\n", "metrics_file: expected an absolute path"},
    };

    close(fd);
    daemon_config_defaults(&c);
    CHECK(c.interval_s == 5 && c.rate_limit_mib == 256 && c.use_qmp && c.restore_on_exit &&
              !strcmp(c.socket_path, "/run/vnuma/vnumad.sock") &&
              !strcmp(c.state_dir, "/var/lib/vnuma"),
          "documented defaults");
    CHECK(load_text("# vnumad\ninterval = 1.5\nevent_delay=0\nrate_limit_mib = 64\nqmp = no\n"
                    "restore_on_exit = no\nsocket = /tmp/x.sock\nstate_dir = /tmp/vn\n"
                    "uri = qemu:///session\nlog_level = debug\nbusy_threshold = 0.5\n"
                    "reserve_mib = 512\nreserve_percent = 5\nmin_gain = 10\nswitch_margin = 1\n"
                    "early_passes = 2\nact_delay_ms = 10\n",
                    &c, err, sizeof(err)) == 0,
          "every key parses (%s)", err);
    CHECK(c.interval_s == 1.5 && c.event_delay_s == 0 && c.rate_limit_mib == 64 && !c.use_qmp &&
              !c.restore_on_exit && !strcmp(c.socket_path, "/tmp/x.sock") &&
              !strcmp(c.uri, "qemu:///session") && c.log_level == 7 &&
              c.decide.busy_threshold == 0.5 && c.decide.reserve_bytes == 512ULL << 20 &&
              c.decide.reserve_fraction == 0.05 && c.decide.min_gain_points == 10 &&
              c.decide.switch_margin == 1 && c.decide.early_passes == 2 && c.act_delay_ms == 10,
          "... with the values given");
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        daemon_config before;
        int r;
        daemon_config_defaults(&before);
        r = load_text(bad[i].text, &c, err, sizeof(err));
        CHECK(r == -EINVAL && strstr(err, path) && strstr(err, bad[i].want) &&
                  !memcmp(&c, &before, sizeof(c)),
              "bad case %u -> '%s', config unchanged", i, err);
    }
    daemon_config_defaults(&c);
    CHECK(c.metrics_file[0] == '\0', "metrics_file is off by default");
    CHECK(load_text("metrics_file = /var/lib/prometheus/node-exporter/vnuma.prom\n", &c, err,
                    sizeof(err)) == 0 &&
              !strcmp(c.metrics_file, "/var/lib/prometheus/node-exporter/vnuma.prom"),
          "metrics_file takes an absolute path");
    CHECK(load_text("metrics_file = /x.prom\nmetrics_file =\n", &c, err, sizeof(err)) == 0 &&
              c.metrics_file[0] == '\0',
          "an empty metrics_file turns it off");
    {
        /* the shipped dist/vnumad.conf: valid as it is, and with every key uncommented it
         * gives exactly the documented defaults */
        daemon_config def;
        char cmd[512];
        daemon_config_defaults(&def);
        daemon_config_defaults(&c);
        err[0] = '\0';
        CHECK(daemon_config_load("dist/vnumad.conf", false, &c, err, sizeof(err)) == 0 &&
                  !memcmp(&c, &def, sizeof(c)),
              "dist/vnumad.conf parses to the defaults (%s)", err);
        snprintf(cmd, sizeof(cmd),
                 "sed -E 's/^#([a-z_]+ =)/\\1/' dist/vnumad.conf | "
                 "grep -v '^metrics_file = /' > %s",
                 path);
        CHECK(system(cmd) == 0, "uncomment every key of dist/vnumad.conf");
        daemon_config_defaults(&c);
        err[0] = '\0';
        CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == 0 &&
                  !memcmp(&c, &def, sizeof(c)),
              "every key uncommented: still exactly the defaults (%s)", err);
    }
    daemon_config_defaults(&c);
    CHECK(daemon_config_load("/nonexistent/vnumad.conf", true, &c, err, sizeof(err)) == 0,
          "a missing default file is fine");
    CHECK(daemon_config_load("/nonexistent/vnumad.conf", false, &c, err, sizeof(err)) == -ENOENT &&
              strstr(err, "/nonexistent/vnumad.conf"),
          "a missing named file is an error: %s", err);
    unlink(path);
    return tap_done();
}
