/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "journal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "connuri.h"
#include "model.h"
#include "util.h"

#define CONFIG_LINE_MAX 1024
#define CONFIG_ECHO_MAX 64 /* bytes of a bad key or value quoted back in an error */

void daemon_config_defaults(daemon_config *c)
{
    memset(c, 0, sizeof(*c));
    c->interval_s = 5;
    c->event_delay_s = 0.5;
    c->heartbeat_s = 600;
    c->rate_limit_mib = 256;
    c->use_qmp = true;
    c->restore_on_exit = true;
    snprintf(c->socket_path, sizeof(c->socket_path), "/run/vnuma/vnumad.sock");
    snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/vnuma");
    snprintf(c->pid_file, sizeof(c->pid_file), "/run/vnumad.pid");
    c->journal_max_bytes = 64 * VN_MIB;
    c->journal_files = 4;
    snprintf(c->uris[0], sizeof(c->uris[0]), "qemu:///system");
    c->nr_uris = 1;
    c->scan_interval_s = 5;
    snprintf(c->policy_dir, sizeof(c->policy_dir), "%s", CONFIG_DEFAULT_POLICY_DIR);
    c->log_level = 6;
    config_defaults(&c->decide);
}

static int parse_uint(const char *v, unsigned long lo, unsigned long hi, unsigned long *out)
{
    uint64_t u;

    if (vn_parse_u64(v, lo, hi, &u) < 0)
        return -EINVAL;
    *out = (unsigned long)u;
    return 0;
}

static int parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "on"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "off"))
        *out = false;
    else
        return -EINVAL;
    return 0;
}

static int parse_path(const char *v, char *out, size_t len)
{
    if (v[0] != '/' || strlen(v) >= len)
        return -EINVAL;
    snprintf(out, len, "%s", v);
    return 0;
}

/*
 * A local libvirt URI: DRIVER:///PATH or DRIVER+unix:///PATH, no host. vnumad acts
 * on local QEMU processes, and other transports run programs as root: "+ext" runs
 * the URI's command=, "+ssh" and "+libssh" run ssh.
 */
static bool local_uri(const char *v)
{
    size_t n = strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789");

    if (n == 0)
        return false;
    if (!strncmp(v + n, "+unix", 5))
        n += 5;
    return !strncmp(v + n, ":///", 4);
}

/* The reason for a value out of [lo, hi] or not a number, with the range. */
static int bad_range(char *why, size_t wlen, const char *k, const char *shown, double lo, double hi)
{
    snprintf(why, wlen, "%s: value '%s' is not a number from %.15g to %.15g", k, shown, lo, hi);
    return -EINVAL;
}

/* Apply one key; on error writes the reason into why (quoting `shown`, the value made
 * printable). */
static int config_set(daemon_config *c, const char *k, const char *v, const char *shown, char *why,
                      size_t wlen)
{
    unsigned long u;
    double d;

    if (!strcmp(k, "interval")) {
        if (vn_parse_double(v, 0.1, 3600, &c->interval_s) < 0)
            return bad_range(why, wlen, k, shown, 0.1, 3600);
    } else if (!strcmp(k, "event_delay")) {
        if (vn_parse_double(v, 0, 60, &c->event_delay_s) < 0)
            return bad_range(why, wlen, k, shown, 0, 60);
    } else if (!strcmp(k, "record_heartbeat")) {
        if (vn_parse_double(v, 0, 86400, &c->heartbeat_s) < 0)
            return bad_range(why, wlen, k, shown, 0, 86400);
    } else if (!strcmp(k, "rate_limit_mib")) {
        if (parse_uint(v, 1, 1048576, &u) < 0)
            return bad_range(why, wlen, k, shown, 1, 1048576);
        c->rate_limit_mib = (unsigned)u;
    } else if (!strcmp(k, "journal_max_mib")) {
        if (parse_uint(v, 1, 1048576, &u) < 0)
            return bad_range(why, wlen, k, shown, 1, 1048576);
        c->journal_max_bytes = u * VN_MIB;
    } else if (!strcmp(k, "journal_files")) {
        if (parse_uint(v, 0, JOURNAL_FILES_MAX, &u) < 0)
            return bad_range(why, wlen, k, shown, 0, JOURNAL_FILES_MAX);
        c->journal_files = (unsigned)u;
    } else if (!strcmp(k, "qmp")) {
        if (parse_bool(v, &c->use_qmp) < 0)
            goto boolean;
    } else if (!strcmp(k, "balancer_knobs")) {
        if (parse_bool(v, &c->balancer_knobs) < 0)
            goto boolean;
    } else if (!strcmp(k, "restore_on_exit")) {
        if (parse_bool(v, &c->restore_on_exit) < 0)
            goto boolean;
    } else if (!strcmp(k, "socket")) {
        if (parse_path(v, c->socket_path, sizeof(c->socket_path)) < 0)
            goto path;
    } else if (!strcmp(k, "state_dir")) {
        if (parse_path(v, c->state_dir, sizeof(c->state_dir)) < 0)
            goto path;
    } else if (!strcmp(k, "uri")) {
        if (!local_uri(v) || strlen(v) >= sizeof(c->uris[0])) {
            snprintf(
                why, wlen,
                "uri: expected a local libvirt URI (DRIVER:///PATH or DRIVER+unix:///PATH), got '%s'",
                shown);
            return -EINVAL;
        }
        /* vnumad reads QEMU's threads and memory; libvirt's test driver is for tests */
        if (strncmp(v, "qemu:", 5) && strncmp(v, "qemu+", 5) && strncmp(v, "test:", 5) &&
            strncmp(v, "test+", 5)) {
            snprintf(why, wlen,
                     "uri: vnumad balances QEMU guests: expected a qemu URI (qemu:///system), "
                     "got '%s'",
                     shown);
            return -EINVAL;
        }
        unsigned n = c->uris_given ? c->nr_uris : 0; /* the first line replaces the default */
        for (unsigned i = 0; i < n; i++)
            if (!strcmp(c->uris[i], v)) {
                snprintf(why, wlen, "uri: '%s' given twice", shown);
                return -EINVAL;
            }
        if (n >= CONFIG_MAX_URIS) {
            snprintf(why, wlen, "uri: at most %u uri lines (a socket glob in one matches many)",
                     CONFIG_MAX_URIS);
            return -EINVAL;
        }
        if (conn_uri_check(v, why, wlen) < 0)
            return -EINVAL;
        snprintf(c->uris[n], sizeof(c->uris[0]), "%s", v);
        c->nr_uris = n + 1;
        c->uris_given = true;
    } else if (!strcmp(k, "scan_interval")) {
        if (vn_parse_double(v, 1, 3600, &c->scan_interval_s) < 0)
            return bad_range(why, wlen, k, shown, 1, 3600);
    } else if (!strcmp(k, "default_mode")) {
        int m = mode_from_name(v, strlen(v));
        if (m < 0) {
            snprintf(why, wlen, "default_mode: expected off, advise or auto, got '%s'", shown);
            return -EINVAL;
        }
        c->default_mode = (vn_mode)m;
    } else if (!strcmp(k, "policy_dir")) {
        if (parse_path(v, c->policy_dir, sizeof(c->policy_dir)) < 0)
            goto path;
    } else if (!strcmp(k, "log_level")) {
        static const char *const names[] = {"err", "warning", "info", "debug"};
        static const int levels[] = {3, 4, 6, 7};
        unsigned i;
        for (i = 0; i < VN_ARRAY_SIZE(names); i++)
            if (!strcmp(v, names[i]))
                break;
        if (i == VN_ARRAY_SIZE(names)) {
            snprintf(why, wlen, "log_level: expected err, warning, info or debug, got '%s'", shown);
            return -EINVAL;
        }
        c->log_level = levels[i];
    } else if (!strcmp(k, "pid_file")) {
        /* empty: no pid file */
        if (!v[0])
            c->pid_file[0] = '\0';
        else if (parse_path(v, c->pid_file, sizeof(c->pid_file)) < 0)
            goto path;
    } else if (!strcmp(k, "metrics_file")) {
        /* empty: no metrics file */
        if (!v[0])
            c->metrics_file[0] = '\0';
        else if (parse_path(v, c->metrics_file, sizeof(c->metrics_file)) < 0)
            goto path;
    } else if (!strcmp(k, "test_holds")) {
        if (parse_bool(v, &c->test_holds) < 0)
            goto boolean;
    } else if (!strcmp(k, "busy_threshold")) {
        if (vn_parse_double(v, 0.01, 1, &c->decide.busy_threshold) < 0)
            return bad_range(why, wlen, k, shown, 0.01, 1);
    } else if (!strcmp(k, "reserve_mib")) {
        if (parse_uint(v, 0, 1 << 30, &u) < 0)
            return bad_range(why, wlen, k, shown, 0, 1 << 30);
        c->decide.reserve_bytes = (uint64_t)u * VN_MIB;
    } else if (!strcmp(k, "reserve_percent")) {
        if (vn_parse_double(v, 0, 50, &d) < 0)
            return bad_range(why, wlen, k, shown, 0, 50);
        c->decide.reserve_fraction = d / 100.0;
    } else if (!strcmp(k, "min_gain")) {
        if (vn_parse_double(v, 0, 100, &c->decide.min_gain_points) < 0)
            return bad_range(why, wlen, k, shown, 0, 100);
    } else if (!strcmp(k, "switch_margin")) {
        if (vn_parse_double(v, 0, 10, &c->decide.switch_margin) < 0)
            return bad_range(why, wlen, k, shown, 0, 10);
    } else if (!strcmp(k, "early_passes")) {
        if (parse_uint(v, 0, 1000, &u) < 0)
            return bad_range(why, wlen, k, shown, 0, 1000);
        c->decide.early_passes = (unsigned)u;
    } else if (!strcmp(k, "move_threads")) {
        if (parse_uint(v, 1, ACT_MAX_MOVERS, &u) < 0)
            return bad_range(why, wlen, k, shown, 1, ACT_MAX_MOVERS);
        c->decide.move_threads = (unsigned)u;
    } else if (!strcmp(k, "move_threads_max")) {
        if (parse_uint(v, 1, ACT_MAX_MOVERS, &u) < 0)
            return bad_range(why, wlen, k, shown, 1, ACT_MAX_MOVERS);
        c->decide.move_threads_max = (unsigned)u;
    } else {
        snprintf(why, wlen, "unknown key '%s'", k); /* k is printable: checked by the caller */
        return -EINVAL;
    }
    return 0;
boolean:
    snprintf(why, wlen, "%s: expected yes or no, got '%s'", k, shown);
    return -EINVAL;
path:
    snprintf(why, wlen, "%s: expected an absolute path, got '%s'", k, shown);
    return -EINVAL;
}

/* s made printable for an error message: at most CONFIG_ECHO_MAX bytes, anything but
 * printable ASCII as '?' (the message goes to a terminal or the log). */
static void config_echo(const char *s, char *out, size_t len)
{
    size_t i;

    for (i = 0; s[i] && i < CONFIG_ECHO_MAX && i + 4 < len; i++)
        out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i] && i + 3 < len)
        out[i++] = '.', out[i++] = '.', out[i++] = '.';
    out[i] = '\0';
}

/* The first control character (a byte below 0x20 or DEL) in s, or NULL. */
static const char *find_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return s;
    return NULL;
}

static char *trim(char *s)
{
    char *e;

    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* The directory of `path` into dir (path is absolute). */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash && slash != path ? (size_t)(slash - path) : 1;

    snprintf(dir, len, "%.*s", (int)(n < len ? n : len - 1), path);
}

/* dir is a directory this process may write into (as root; any user: that it exists), or
 * with !write that it exists: 0, or -errno with the reason in err */
static int check_dir(const char *key, const char *dir, bool write, char *err, size_t errlen)
{
    struct stat st;

    if (stat(dir, &st) < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: directory %s: %s", key, dir, strerror(e));
        return -e;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s is not a directory", key, dir);
        return -ENOTDIR;
    }
    if (write && geteuid() == 0 && access(dir, W_OK) < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: directory %s is not writable: %s", key, dir, strerror(e));
        return -e;
    }
    return 0;
}

/* dir is a writable directory, or absent with a writable parent (vnumad makes it) */
static int dir_or_parent(const char *key, const char *dir, char *err, size_t errlen)
{
    char up[PATH_MAX];
    struct stat st;

    if (stat(dir, &st) == 0)
        return check_dir(key, dir, true, err, errlen);
    dir_of(dir, up, sizeof(up));
    return check_dir(key, up, true, err, errlen);
}

int daemon_config_check_paths(const daemon_config *c, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    int r;

    if (c->metrics_file[0]) {
        dir_of(c->metrics_file, dir, sizeof(dir));
        if ((r = check_dir("metrics_file", dir, true, err, errlen)) < 0)
            return r;
    }
    if (c->pid_file[0]) {
        dir_of(c->pid_file, dir, sizeof(dir));
        /* written only when detached: under systemd (--foreground) its directory may be
         * read-only (ProtectSystem=strict), where ExecStartPre runs this check */
        if ((r = check_dir("pid_file", dir, false, err, errlen)) < 0)
            return r;
    }
    /* the socket's directory and state_dir: there already, or made in their parent */
    dir_of(c->socket_path, dir, sizeof(dir));
    if ((r = dir_or_parent("socket", dir, err, errlen)) < 0)
        return r;
    return dir_or_parent("state_dir", c->state_dir, err, errlen);
}

/* Cut a trailing comment off a value: a '#' at its start or after a blank ("interval = 2  #
 * seconds"); a '#' inside a word ("/srv/a#b") is kept. */
static void strip_comment(char *v)
{
    for (char *p = v; *p; p++)
        if (*p == '#' && (p == v || *(p - 1) == ' ' || *(p - 1) == '\t')) {
            *p = '\0';
            return;
        }
}

ssize_t config_read_line(FILE *f, char *buf, size_t size)
{
    size_t n = 0;
    int ch;

    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (n + 1 >= size)
            return -E2BIG;
        buf[n++] = (char)ch;
    }
    if (ch == EOF && n == 0)
        return -1;
    buf[n] = '\0';
    return (ssize_t)n;
}

int config_file_trusted(FILE *f, const char *path, char *err, size_t errlen)
{
    struct stat st;

    /* vnumad runs as root: a file another user may write would hand them the daemon (as
     * sshd's StrictModes: owned by root or vnumad's user, writable by no one else but root's
     * group) */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IWOTH)) {
        snprintf(err, errlen, "%s: writable by every user (mode %04o); refusing it (chmod o-w)",
                 path, (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid != 0 &&
        st.st_uid != geteuid()) {
        snprintf(err, errlen, "%s: owned by uid %u, not root; refusing it (chown root)", path,
                 (unsigned)st.st_uid);
        return -EPERM;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IWGRP) &&
        st.st_gid != 0) {
        snprintf(err, errlen,
                 "%s: writable by group %u (mode %04o); refusing it (chmod g-w, or chgrp root)",
                 path, (unsigned)st.st_gid, (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return 0;
}

int daemon_config_load(const char *path, bool optional, daemon_config *c, char *err, size_t errlen)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[CONFIG_LINE_MAX + 1], why[512], shown[CONFIG_ECHO_MAX + 4];
    daemon_config tmp = *c;
    unsigned lineno = 0;
    ssize_t n;
    int r;

    if (!f) {
        if (errno == ENOENT && optional)
            return 0;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -errno;
    }
    if ((r = config_file_trusted(f, path, err, errlen)) < 0)
        return r;
    while ((n = config_read_line(f, line, sizeof(line))) != -1) {
        const char *ctl;
        char *s, *eq, *k, *v;
        lineno++;
        if (n == -E2BIG) {
            snprintf(err, errlen, "%s:%u: line longer than %d bytes", path, lineno,
                     CONFIG_LINE_MAX);
            return -EINVAL;
        }
        if (strlen(line) != (size_t)n) {
            snprintf(err, errlen, "%s:%u: NUL byte in the line", path, lineno);
            return -EINVAL;
        }
        s = trim(line);
        if (!*s || *s == '#')
            continue;
        eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%u: expected 'key = value'", path, lineno);
            return -EINVAL;
        }
        *eq = '\0';
        k = trim(s);
        strip_comment(eq + 1);
        v = trim(eq + 1);
        ctl = find_control(k) ? find_control(k) : find_control(v);
        if (ctl) {
            snprintf(err, errlen, "%s:%u: control character 0x%02x in the line", path, lineno,
                     (unsigned char)*ctl);
            return -EINVAL;
        }
        config_echo(k, shown, sizeof(shown));
        if (strcmp(shown, k) != 0) {
            snprintf(err, errlen, "%s:%u: unknown key '%s'", path, lineno, shown);
            return -EINVAL;
        }
        config_echo(v, shown, sizeof(shown));
        if (config_set(&tmp, k, v, shown, why, sizeof(why)) < 0) {
            snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
            return -EINVAL;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error", path);
        return -EIO;
    }
    tmp.uris_given = false; /* (a file read after this one replaces the uri lines again) */
    *c = tmp;
    return 0;
}
