/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of vnumad.conf parsing (host/config.c): every key, and strict errors with file:line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        {"default_mode = sometimes\n", ":1: default_mode: expected off, advise or auto"},
        {"policy_dir = policy.d\n", ":1: policy_dir: expected an absolute path"},
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
        {"pid_file = vnumad.pid\n", "pid_file: expected an absolute path"},
        {"uri = xen:///system\n", ":1: uri: vnumad balances QEMU guests"},
        {"interval = 0\n", ":1: interval: value '0' is not a number from 0.1 to 3600"},
        {"journal_max_mib = 0\n", ":1: journal_max_mib"},
        {"journal_files = 101\n", ":1: journal_files"},
        /* hostile values: overflow, sign, other notations, NaN and infinities, empty */
        {"interval = 1e999\n", ":1: interval: value '1e999' is not a number"},
        {"interval = 1e-999\n", ":1: interval"},
        {"interval = inf\n", ":1: interval"},
        {"interval = -inf\n", ":1: interval"},
        {"interval = NAN\n", ":1: interval"},
        {"interval = 0x10\n", ":1: interval"},
        {"interval = +5\n", ":1: interval"},
        {"interval = 5 5\n", ":1: interval"},
        {"interval = 5,5\n", ":1: interval"},
        {"interval =\n", ":1: interval: value '' is not a number"},
        {"event_delay = -0\n", ":1: event_delay"},
        {"record_heartbeat = 86401\n", ":1: record_heartbeat"},
        {"busy_threshold = .\n", ":1: busy_threshold"},
        {"rate_limit_mib = 18446744073709551616\n", ":1: rate_limit_mib"},
        {"rate_limit_mib = 4294967297\n", ":1: rate_limit_mib"},
        {"rate_limit_mib = 0x10\n", ":1: rate_limit_mib"},
        {"rate_limit_mib = 1.5\n", ":1: rate_limit_mib"},
        {"reserve_mib = 1073741825\n", ":1: reserve_mib"},
        {"early_passes = -1\n", ":1: early_passes"},
        {"move_threads = 0\n", ":1: move_threads"},
        {"move_threads = 17\n", ":1: move_threads"},
        {"move_threads_max = 0\n", ":1: move_threads_max"},
        {"test_holds = maybe\n", ":1: test_holds: expected yes or no, got 'maybe'"},
        {"act_delay_ms = 10\n", ":1: unknown key 'act_delay_ms'"}, /* gone: test_holds */
        /* wrong types, case, whitespace inside keys */
        {"qmp = 2\n", ":1: qmp: expected yes or no, got '2'"},
        {"qmp = YES\n", ":1: qmp: expected yes or no"},
        {"restore_on_exit =\n", ":1: restore_on_exit: expected yes or no, got ''"},
        {"balancer_knobs = maybe\n", ":1: balancer_knobs: expected yes or no, got 'maybe'"},
        {"Interval = 5\n", ":1: unknown key 'Interval'"},
        {"inter val = 5\n", ":1: unknown key 'inter val'"},
        {" = 5\n", ":1: unknown key ''"},
        {"interval = 5#five\n", ":1: interval: value '5#five'"},
        {"[vnumad]\n", ":1: expected 'key = value'"},
        {"socket =\n", ":1: socket: expected an absolute path"},
        {"state_dir = ../../tmp\n", ":1: state_dir: expected an absolute path"},
        {"uri =\n", ":1: uri: expected a local libvirt URI"},
        {"uri = qemu+ext:///system?command=/tmp/x\n", ":1: uri: expected a local libvirt URI"},
        {"uri = qemu+ssh://root@host/system\n", ":1: uri: expected a local libvirt URI"},
        {"uri = qemu+tcp://host/system\n", ":1: uri: expected a local libvirt URI"},
        {"uri = qemu://host/system\n", ":1: uri: expected a local libvirt URI"},
        {"uri = QEMU:///system\n", ":1: uri: expected a local libvirt URI"},
        /* control characters, NUL bytes, bytes that are not UTF-8: never echoed raw */
        {"uri = qemu:///system\x1b[2J\n", ":1: control character 0x1b"},
        {"socket = /run/a\tb.sock\n", ":1: control character 0x09"},
        {"log_level = debug\rinfo\n", ":1: control character 0x0d"},
        {"colour\x7f = red\n", ":1: control character 0x7f"},
        {"log_level = \xff\xfe\n", ":1: log_level: expected err, warning, info or debug, got '?"
                                   "?'"},
        {"\xc3\xa9t\xc3\xa9 = 1\n", ":1: unknown key '?"
                                    "?t?"
                                    "?'"},
    };

    close(fd);
    daemon_config_defaults(&c);
    CHECK(c.interval_s == 5 && c.heartbeat_s == 600 && c.rate_limit_mib == 256 && c.use_qmp &&
              c.restore_on_exit && !c.test_holds && !c.balancer_knobs &&
              !strcmp(c.socket_path, "/run/vnuma/vnumad.sock") &&
              !strcmp(c.state_dir, "/var/lib/vnuma") && !strcmp(c.pid_file, "/run/vnumad.pid") &&
              c.journal_max_bytes == 64ULL << 20 && c.journal_files == 4,
          "documented defaults");
    CHECK(load_text("# vnumad\ninterval = 1.5\nevent_delay=0\nrate_limit_mib = 64\nqmp = no\n"
                    "restore_on_exit = no\nsocket = /tmp/x.sock\nstate_dir = /tmp/vn\n"
                    "uri = qemu:///session\nlog_level = debug\nbusy_threshold = 0.5\n"
                    "reserve_mib = 512\nreserve_percent = 5\nmin_gain = 10\nswitch_margin = 1\n"
                    "early_passes = 2\ntest_holds = yes\nmove_threads = 8\nrecord_heartbeat = 0\n"
                    "move_threads_max = 12\npid_file = /tmp/v.pid\njournal_max_mib = 8\n"
                    "journal_files = 0\nbalancer_knobs = yes\n",
                    &c, err, sizeof(err)) == 0,
          "every key parses (%s)", err);
    CHECK(c.interval_s == 1.5 && c.event_delay_s == 0 && c.rate_limit_mib == 64 && !c.use_qmp &&
              c.balancer_knobs && !c.restore_on_exit && !strcmp(c.socket_path, "/tmp/x.sock") &&
              c.nr_uris == 1 && !strcmp(c.uris[0], "qemu:///session") && c.log_level == 7 &&
              c.decide.busy_threshold == 0.5 && c.decide.reserve_bytes == 512ULL << 20 &&
              c.decide.reserve_fraction == 0.05 && c.decide.min_gain_points == 10 &&
              c.decide.switch_margin == 1 && c.decide.early_passes == 2 && c.test_holds &&
              c.decide.move_threads == 8 && c.heartbeat_s == 0 && c.decide.move_threads_max == 12 &&
              !strcmp(c.pid_file, "/tmp/v.pid") && c.journal_max_bytes == 8ULL << 20 &&
              c.journal_files == 0,
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
    {
        /* NUL bytes: load_text() stops at the first one, so write them with fwrite */
        static const char nul[] = "# fine\ninterval = 1\0 ; rm -rf /\ninterval = 2\n";
        FILE *f = fopen(path, "w");
        fwrite(nul, 1, sizeof(nul) - 1, f);
        fclose(f);
        daemon_config_defaults(&c);
        CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == -EINVAL &&
                  strstr(err, ":2: NUL byte in the line"),
              "a NUL byte in a line is named as such ('%s')", err);
    }
    {
        /* a long value is quoted back short and printable */
        char text[1100];
        memset(text, 0, sizeof(text));
        memcpy(text, "uri = ", 6);
        memset(text + 6, 'u', 1000);
        strcat(text, "\n");
        {
            char want[80] = "'";
            memset(want + 1, 'u', 64);
            strcpy(want + 65, "...'");
            CHECK(load_text(text, &c, err, sizeof(err)) == -EINVAL && strstr(err, ":1: uri") &&
                      strstr(err, want),
                  "a 1000-byte value is refused and quoted as its first 64 bytes ('%s')", err);
        }
        memset(text, 'k', 1030);
        text[1030] = '\0';
        CHECK(load_text(text, &c, err, sizeof(err)) == -EINVAL &&
                  strstr(err, ":1: line longer than 1024 bytes"),
              "a line over 1024 bytes without a newline ('%s')", err);
        memset(text, 'k', 1024);
        text[1024] = '\0';
        CHECK(load_text(text, &c, err, sizeof(err)) == -EINVAL &&
                  strstr(err, ":1: expected 'key = value'"),
              "a line of exactly 1024 bytes is read whole ('%s')", err);
    }
    CHECK(daemon_config_load("/dev/zero", false, &c, err, sizeof(err)) == -EINVAL &&
              strstr(err, "/dev/zero:1: line longer"),
          "an endless file is not read to the end ('%s')", err);
    CHECK(daemon_config_load("/tmp", false, &c, err, sizeof(err)) < 0,
          "a directory is refused ('%s')", err);
    CHECK(load_text("uri = qemu+unix:///system?socket=/run/libvirt/libvirt-sock\n", &c, err,
                    sizeof(err)) == 0 &&
              load_text("uri = test:///default\n", &c, err, sizeof(err)) == 0 && c.nr_uris == 1 &&
              !strcmp(c.uris[0], "test:///default"),
          "local URIs are fine: DRIVER:///PATH, DRIVER+unix:///PATH (%s)", err);
    daemon_config_defaults(&c);
    CHECK(c.nr_uris == 1 && !strcmp(c.uris[0], "qemu:///system") && c.scan_interval_s == 5,
          "one connection by default: qemu:///system; scan_interval 5");
    CHECK(load_text("uri = qemu:///system\n"
                    "uri = qemu+unix:///system?socket=/var/lib/kubelet/pods/*/volumes/"
                    "kubernetes.io~empty-dir/libvirt-runtime/virtqemud-sock\nscan_interval = 2\n",
                    &c, err, sizeof(err)) == 0 &&
              c.nr_uris == 2 && !strcmp(c.uris[0], "qemu:///system") &&
              strstr(c.uris[1], "/pods/*/") && c.scan_interval_s == 2,
          "several uri lines, one with a socket glob, replace the default (%s)", err);
    CHECK(load_text("uri = qemu:///system\nuri = qemu:///system\n", &c, err, sizeof(err)) ==
                  -EINVAL &&
              strstr(err, ":2: uri: 'qemu:///system' given twice"),
          "the same uri twice is refused ('%s')", err);
    CHECK(load_text("uri = qemu+unix:///system?socket=run/sock\n", &c, err, sizeof(err)) ==
                  -EINVAL &&
              strstr(err, "socket= path must be absolute"),
          "a relative socket= path is refused ('%s')", err);
    CHECK(load_text("uri = qemu+unix:///system?socket=/run/a%20b/sock\n", &c, err, sizeof(err)) ==
                  -EINVAL &&
              strstr(err, "socket= path must be absolute"),
          "a socket= path with an escape is refused ('%s')", err);
    CHECK(load_text("scan_interval = 0.5\n", &c, err, sizeof(err)) == -EINVAL &&
              strstr(err, "scan_interval: value '0.5' is not a number from 1 to 3600"),
          "scan_interval below 1 s is refused ('%s')", err);
    {
        char many[2048] = "";
        for (unsigned i = 0; i <= CONFIG_MAX_URIS; i++)
            snprintf(many + strlen(many), sizeof(many) - strlen(many),
                     "uri = qemu+unix:///system?socket=/run/h%u/sock\n", i);
        CHECK(load_text(many, &c, err, sizeof(err)) == -EINVAL && strstr(err, "at most 16 uri"),
              "at most %u uri lines ('%s')", CONFIG_MAX_URIS, err);
    }
    CHECK(load_text("interval = 2 # two seconds\nmetrics_file = /srv/a#b\t# kept\nqmp = # empty\n",
                    &c, err, sizeof(err)) < 0 &&
              strstr(err, ":3: qmp: expected yes or no, got ''"),
          "a '#' after a blank starts a comment, also right after '=' (%s)", err);
    CHECK(load_text("interval = 2 # two seconds\nmetrics_file = /srv/a#b\t# kept\n", &c, err,
                    sizeof(err)) == 0 &&
              c.interval_s == 2 && !strcmp(c.metrics_file, "/srv/a#b"),
          "trailing comments are cut, a '#' inside a value is kept ('%s', %s)", c.metrics_file,
          err);
    CHECK(load_text("interval = 1\r\nqmp = no\r\n", &c, err, sizeof(err)) == 0 &&
              c.interval_s == 1 && !c.use_qmp,
          "CRLF line ends are fine (%s)", err);
    CHECK(load_text("interval = 1\ninterval = 2\n", &c, err, sizeof(err)) == 0 && c.interval_s == 2,
          "a key given twice: the last one wins (start_vnumad and `echo >>` rely on it)");
    {
        /* a file every user may write is refused, whatever it holds */
        daemon_config before;
        FILE *f = fopen(path, "w");
        fputs("interval = 1\n", f);
        fclose(f);
        (void)chmod(path, 0666);
        daemon_config_defaults(&c);
        daemon_config_defaults(&before);
        CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == -EPERM &&
                  strstr(err, "writable by every user (mode 0666)") &&
                  !memcmp(&c, &before, sizeof(c)),
              "a world-writable file is refused ('%s')", err);
        (void)chmod(path, 0664);
        CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == 0 && c.interval_s == 1,
              "mode 0664 is fine (%s)", err);
        if (geteuid() == 0) {
            /* another user's file, or one another group may write, hands the daemon over */
            CHECK(chown(path, 0, 65534) == 0, "the file's group is 65534");
            CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == -EPERM &&
                      strstr(err, "writable by group 65534"),
                  "a file another group may write is refused ('%s')", err);
            (void)chmod(path, 0644);
            CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == 0,
                  "mode 0644 with that group is fine (%s)", err);
            CHECK(chown(path, 65534, 0) == 0, "the file's owner is 65534");
            CHECK(daemon_config_load(path, false, &c, err, sizeof(err)) == -EPERM &&
                      strstr(err, "owned by uid 65534"),
                  "another user's file is refused ('%s')", err);
            (void)chown(path, 0, 0);
        }
        (void)chmod(path, 0600);
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
