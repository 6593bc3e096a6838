/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumactl: the administrator's command line. One entry per subcommand in
 * vnumactl_cmds[]; to add a subcommand write a `static int cmd_NAME(int argc,
 * char **argv)` (argv[0] is the subcommand's name, parse with getopt_long,
 * return the exit status) and add a line to the table.
 *
 * The daemon's subcommands (status, decisions, explain, advise, pause,
 * resume, metrics) send one request to vnumad's control socket
 * (docs/control-protocol.md) and print the reply, for people by default, as
 * pretty JSON (the reply's "return" value) with --json.
 *
 * Exit status: 0 success, 1 error (one line "vnumactl: <reason>" on stderr),
 * 2 usage error (usage on stderr).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "clock.h"
#include "control.h"
#include "json.h"
#include "topology.h"
#include "util.h"

#define VNUMACTL_EXIT_OK    0
#define VNUMACTL_EXIT_ERROR 1
#define VNUMACTL_EXIT_USAGE 2

#define VNUMACTL_SOCKET_DEFAULT "/run/vnuma/vnumad.sock"
#define VNUMACTL_REPLY_MAX      (16u * 1024 * 1024) /* bytes of one reply */
#define VNUMACTL_TIMEOUT_MS     30000               /* the whole exchange (advise samples first) */

typedef struct vnumactl_cmd {
    const char *name;
    const char *args;    /* synopsis of the arguments, for usage */
    const char *summary; /* one line, for usage */
    int (*run)(int argc, char **argv);
} vnumactl_cmd;

static int cmd_help(int argc, char **argv);
static int cmd_topology(int argc, char **argv);
static int cmd_status(int argc, char **argv);
static int cmd_decisions(int argc, char **argv);
static int cmd_explain(int argc, char **argv);
static int cmd_advise(int argc, char **argv);
static int cmd_pause(int argc, char **argv);
static int cmd_resume(int argc, char **argv);
static int cmd_metrics(int argc, char **argv);

static const vnumactl_cmd vnumactl_cmds[] = {
    {"topology", "[--input FILE.xml | --synthetic STRING] [--json]",
     "show the host NUMA topology (live host by default) and rule 1's imb_numa_nr per node",
     cmd_topology},
    {"status", "[DOMAIN] [--json] [--socket PATH]",
     "show vnumad's domains: mode, state, agent, per-cell placement (numastat style), counters",
     cmd_status},
    {"decisions", "[DOMAIN] [--json] [--socket PATH]",
     "show the recent decision records, newest first (one domain or all)", cmd_decisions},
    {"explain", "DOMAIN [--json] [--socket PATH]",
     "explain rule by rule why each cell of DOMAIN sits where it sits", cmd_explain},
    {"advise", "DOMAIN [--json] [--socket PATH]",
     "sample DOMAIN now and show the plan vnumad would carry out, without acting", cmd_advise},
    {"pause", "DOMAIN [--json] [--socket PATH]", "stop balancing DOMAIN until resumed", cmd_pause},
    {"resume", "DOMAIN [--json] [--socket PATH]", "balance DOMAIN again", cmd_resume},
    {"metrics", "[--json] [--socket PATH]",
     "print vnumad's metrics in the Prometheus text format (the same as metrics_file)",
     cmd_metrics},
    {"help", "", "show this help", cmd_help},
};

/* The control socket: --socket before the subcommand or in it. */
static const char *socket_path = VNUMACTL_SOCKET_DEFAULT;

static void usage(FILE *f)
{
    fprintf(f, "Usage: vnumactl COMMAND [OPTIONS]\n\nCommands:\n");
    for (size_t i = 0; i < VN_ARRAY_SIZE(vnumactl_cmds); i++)
        fprintf(f, "  %s%s%s\n      %s\n", vnumactl_cmds[i].name, *vnumactl_cmds[i].args ? " " : "",
                vnumactl_cmds[i].args, vnumactl_cmds[i].summary);
    fprintf(f,
            "\nOptions:\n  -h, --help         show this help\n"
            "  --socket PATH      vnumad's control socket (default %s)\n",
            VNUMACTL_SOCKET_DEFAULT);
}

static const vnumactl_cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(vnumactl_cmds); i++)
        if (strcmp(vnumactl_cmds[i].name, name) == 0)
            return &vnumactl_cmds[i];
    return NULL;
}

/* Report a bad option of subcommand `cmd` (getopt's optind points past it) and return 2. */
static int usage_error(const char *cmd, char **argv)
{
    const vnumactl_cmd *c = find_cmd(cmd);

    fprintf(stderr, "vnumactl: %s: invalid option or missing argument: '%s'\n", cmd,
            optind > 0 ? argv[optind - 1] : "");
    if (c)
        fprintf(stderr, "Usage: vnumactl %s %s\n", c->name, c->args);
    return VNUMACTL_EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    usage(stdout);
    return VNUMACTL_EXIT_OK;
}

static int cmd_topology(int argc, char **argv)
{
    static const struct option opts[] = {
        {"input", required_argument, NULL, 'i'},
        {"synthetic", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    _cleanup_free_ topology *t = NULL;
    topo_source_kind kind = TOPO_SOURCE_LIVE;
    const char *arg = NULL;
    bool json = false;
    char err[512];
    int c, r;

    while ((c = getopt_long(argc, argv, "+i:s:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
        case 's':
            if (arg) {
                fprintf(stderr, "vnumactl: topology: give only one of --input and --synthetic\n");
                return VNUMACTL_EXIT_USAGE;
            }
            kind = c == 'i' ? TOPO_SOURCE_XML : TOPO_SOURCE_SYNTHETIC;
            arg = optarg;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            printf("Usage: vnumactl topology %s\n", find_cmd("topology")->args);
            return VNUMACTL_EXIT_OK;
        default:
            return usage_error("topology", argv);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vnumactl: topology: unexpected argument '%s'\n", argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }

    t = malloc(sizeof(*t));
    if (!t) {
        fprintf(stderr, "vnumactl: out of memory\n");
        return VNUMACTL_EXIT_ERROR;
    }
    r = topo_load(kind, arg, "/", t, err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "vnumactl: %s\n", err[0] ? err : strerror(-r));
        return VNUMACTL_EXIT_ERROR;
    }
    topo_print(t, json, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}

/* ---- the daemon's subcommands ---- */

/* Wait until fd is ready for `events` or the deadline passes. 0, -ETIMEDOUT or -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int64_t left = deadline - (int64_t)vn_mono_ms();
        int r;
        if (left <= 0)
            return -ETIMEDOUT;
        r = poll(&p, 1, (int)left);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -errno;
    }
}

static void json_printable(struct json_object *o);

/*
 * Send {"command": command, "domain": domain} to vnumad and return the reply's
 * "return" value in *ret (a new reference). On any failure print one line
 * "vnumactl: ..." and return VNUMACTL_EXIT_ERROR.
 */
static int daemon_call(const char *command, const char *domain, struct json_object **ret)
{
    _cleanup_json_ struct json_object *req = json_object_new_object(), *reply = NULL;
    _cleanup_close_ int fd = -1;
    _cleanup_free_ char *buf = NULL, *line = NULL;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct json_object *err = NULL, *desc = NULL, *result = NULL;
    int64_t deadline = (int64_t)vn_mono_ms() + VNUMACTL_TIMEOUT_MS;
    size_t len, off = 0, got = 0, cap = 0;
    const char *s;
    int r;

    if (!req) {
        fprintf(stderr, "vnumactl: out of memory\n");
        return VNUMACTL_EXIT_ERROR;
    }
    json_object_object_add(req, "command", json_object_new_string(command));
    if (domain)
        json_object_object_add(req, "domain", json_object_new_string(domain));
    s = json_object_to_json_string_length(
        req, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
    if (!s || !(line = malloc(len + 1))) {
        fprintf(stderr, "vnumactl: out of memory\n");
        return VNUMACTL_EXIT_ERROR;
    }
    memcpy(line, s, len);
    line[len++] = '\n';
    if (len > CONTROL_REQUEST_MAX) {
        fprintf(stderr, "vnumactl: the request is longer than %d bytes (domain name too long)\n",
                CONTROL_REQUEST_MAX);
        return VNUMACTL_EXIT_ERROR;
    }
    if (strlen(socket_path) >= sizeof(sa.sun_path)) {
        fprintf(stderr, "vnumactl: cannot connect to vnumad at %s: %s\n", socket_path,
                strerror(ENAMETOOLONG));
        return VNUMACTL_EXIT_ERROR;
    }
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fprintf(stderr, "vnumactl: cannot connect to vnumad at %s: %s\n", socket_path,
                strerror(errno));
        return VNUMACTL_EXIT_ERROR;
    }

    /* A refusal (PermissionDenied, busy) may arrive before the request is written:
     * stop writing on EPIPE/ECONNRESET and read what vnumad said. */
    while (off < len) {
        ssize_t n = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (n >= 0) {
            off += (size_t)n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r = wait_fd(fd, POLLOUT, deadline);
            if (r == 0)
                continue;
            errno = -r;
        }
        if (errno == EPIPE || errno == ECONNRESET)
            break;
        fprintf(stderr, "vnumactl: cannot send the request to vnumad at %s: %s\n", socket_path,
                strerror(errno));
        return VNUMACTL_EXIT_ERROR;
    }

    for (;;) {
        ssize_t n;
        if (got + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb;
            if (ncap > VNUMACTL_REPLY_MAX + 1)
                ncap = VNUMACTL_REPLY_MAX + 1;
            if (got + 1 >= ncap) {
                fprintf(stderr, "vnumactl: the reply from vnumad is longer than %u bytes\n",
                        VNUMACTL_REPLY_MAX);
                return VNUMACTL_EXIT_ERROR;
            }
            nb = realloc(buf, ncap);
            if (!nb) {
                fprintf(stderr, "vnumactl: out of memory\n");
                return VNUMACTL_EXIT_ERROR;
            }
            buf = nb;
            cap = ncap;
        }
        n = read(fd, buf + got, cap - 1 - got);
        if (n > 0) {
            got += (size_t)n;
            continue;
        }
        if (n == 0 || errno == ECONNRESET)
            break;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r = wait_fd(fd, POLLIN, deadline);
            if (r == 0)
                continue;
            errno = -r;
        }
        if (errno == ETIMEDOUT)
            fprintf(stderr, "vnumactl: no reply from vnumad at %s within %d s\n", socket_path,
                    VNUMACTL_TIMEOUT_MS / 1000);
        else
            fprintf(stderr, "vnumactl: cannot read the reply from vnumad at %s: %s\n", socket_path,
                    strerror(errno));
        return VNUMACTL_EXIT_ERROR;
    }
    if (got == 0) {
        fprintf(stderr, "vnumactl: vnumad at %s closed the connection without a reply\n",
                socket_path);
        return VNUMACTL_EXIT_ERROR;
    }
    buf[got] = '\0';
    reply = json_tokener_parse(buf);
    if (!reply || !json_object_is_type(reply, json_type_object)) {
        fprintf(stderr, "vnumactl: malformed reply from vnumad\n");
        return VNUMACTL_EXIT_ERROR;
    }
    if (json_object_object_get_ex(reply, "error", &err)) {
        json_printable(err);
        (void)json_object_object_get_ex(err, "desc", &desc);
        fprintf(stderr, "vnumactl: %s\n",
                json_object_is_type(desc, json_type_string) ? json_object_get_string(desc)
                                                            : "vnumad reported an error");
        return VNUMACTL_EXIT_ERROR;
    }
    if (!json_object_object_get_ex(reply, "return", &result)) {
        fprintf(stderr, "vnumactl: malformed reply from vnumad\n");
        return VNUMACTL_EXIT_ERROR;
    }
    *ret = json_object_get(result);
    return VNUMACTL_EXIT_OK;
}

/* ---- text output: no terminal control sequences from domain names ---- */

/* Control characters of s (C0 but the newline, DEL, C1 as UTF-8) replaced by '?' in
 * place; true when something was replaced. A domain name may hold a CR or a tab (libvirt
 * allows them), a reason or a guest's text anything. */
static bool printable_inplace(char *s)
{
    bool changed = false;

    for (unsigned char *p = (unsigned char *)s; *p; p++) {
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f) {
            *p = '?';
            changed = true;
        } else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            /* U+0080..U+009F: two bytes become "??" */
            p[0] = p[1] = '?';
            p++;
            changed = true;
        }
    }
    return changed;
}

/* Every string in the reply made printable (for the human output; --json prints the
 * reply as it is, JSON-escaped). */
static void json_printable(struct json_object *o)
{
    if (json_object_is_type(o, json_type_string)) {
        _cleanup_free_ char *copy = strdup(json_object_get_string(o));
        if (copy && printable_inplace(copy))
            (void)json_object_set_string(o, copy);
    } else if (json_object_is_type(o, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(o); i++)
            json_printable(json_object_array_get_idx(o, i));
    } else if (json_object_is_type(o, json_type_object)) {
        json_object_object_foreach(o, key, val)
        {
            (void)key;
            json_printable(val);
        }
    }
}

/* ---- reading replies leniently: a missing or mistyped field prints as "-" ---- */

static struct json_object *jget(struct json_object *o, const char *key)
{
    struct json_object *v = NULL;

    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
        return NULL;
    return v;
}

static const char *jstr(struct json_object *o, const char *key, const char *def)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : def;
}

static bool jnum(struct json_object *o, const char *key, double *ret)
{
    struct json_object *v = jget(o, key);

    if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
        return false;
    *ret = json_object_get_double(v);
    return true;
}

static uint64_t ju64(struct json_object *o, const char *key)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_int) ? json_object_get_uint64(v) : 0;
}

static bool jbool(struct json_object *o, const char *key)
{
    struct json_object *v = jget(o, key);

    return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

static size_t jlen(struct json_object *a)
{
    return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* An integer field (a node number, a cell id) as text, "-" for null or missing. */
static const char *jint_str(struct json_object *o, const char *key, char *buf, size_t len)
{
    struct json_object *v = jget(o, key);

    if (!json_object_is_type(v, json_type_int))
        return "-";
    snprintf(buf, len, "%" PRId64, json_object_get_int64(v));
    return buf;
}

/* An array of strings as "a,b,c" ("-" when empty). */
static const char *jlist_str(struct json_object *a, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < jlen(a) && used < len; i++) {
        struct json_object *v = json_object_array_get_idx(a, i);
        int w =
            snprintf(buf + used, len - used, "%s%s", used ? "," : "",
                     json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "?");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf[0] ? buf : "-";
}

static void print_json(struct json_object *o)
{
    const char *s = json_object_to_json_string_ext(
        o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
    printf("%s\n", s ? s : "null");
}

/* The host nodes named as keys of a cell's "memory" and "vcpus" objects, sorted. */
static unsigned status_nodes(struct json_object *cells, unsigned *nodes, unsigned max)
{
    static const char *const maps[] = {"memory", "vcpus"};
    unsigned nr = 0;

    for (size_t k = 0; k < jlen(cells); k++)
        for (size_t m = 0; m < VN_ARRAY_SIZE(maps); m++) {
            struct json_object *map = jget(json_object_array_get_idx(cells, k), maps[m]);
            if (!json_object_is_type(map, json_type_object))
                continue;
            json_object_object_foreach(map, key, val)
            {
                char *end;
                unsigned long n;
                unsigned i;
                (void)val;
                errno = 0;
                n = strtoul(key, &end, 10);
                if (errno || end == key || *end || n > 1000000)
                    continue;
                for (i = 0; i < nr && nodes[i] < n; i++)
                    ;
                if ((i < nr && nodes[i] == n) || nr == max)
                    continue;
                memmove(&nodes[i + 1], &nodes[i], (nr - i) * sizeof(*nodes));
                nodes[i] = (unsigned)n;
                nr++;
            }
        }
    return nr;
}

/* One domain of `status`: a header line, a numastat-style table of its cells, counters. */
static void print_status_domain(struct json_object *d)
{
    struct json_object *agent = jget(d, "agent"), *cells = jget(d, "cells");
    struct json_object *cnt = jget(d, "counters");
    unsigned nodes[VN_MAX_NODES], nr;
    char head[32], b1[32];
    double hint;

    printf("%s: mode %s, paused %s, state %s, error %s, agent %s", jstr(d, "name", "?"),
           jstr(d, "mode", "-"), jbool(d, "paused") ? "yes" : "no", jstr(d, "state", "-"),
           jstr(d, "error", "-"), jbool(agent, "connected") ? "connected" : "not connected");
    if (jnum(agent, "hint_age_s", &hint))
        printf(" (last hint %.1f s ago)", hint);
    else
        printf(" (no hint yet)");
    printf(", age %" PRIu64 " passes\n", ju64(d, "age_passes"));

    nr = status_nodes(cells, nodes, VN_ARRAY_SIZE(nodes));
    printf("  %4s", "cell");
    for (unsigned i = 0; i < nr; i++) {
        snprintf(head, sizeof(head), "node%u MiB", nodes[i]);
        printf(" %12s", head);
    }
    for (unsigned i = 0; i < nr; i++) {
        snprintf(head, sizeof(head), "node%u vCPUs", nodes[i]);
        printf(" %12s", head);
    }
    printf(" %9s %7s %6s %s\n", "locality", "target", "pages", "memory");
    for (size_t k = 0; k < jlen(cells); k++) {
        struct json_object *c = json_object_array_get_idx(cells, k);
        struct json_object *mem = jget(c, "memory"), *vc = jget(c, "vcpus");
        double loc;
        printf("  %4s", jint_str(c, "cell", b1, sizeof(b1)));
        for (unsigned i = 0; i < nr; i++) {
            snprintf(head, sizeof(head), "%u", nodes[i]);
            printf(" %12.1f", (double)ju64(mem, head) / (double)VN_MIB);
        }
        for (unsigned i = 0; i < nr; i++) {
            snprintf(head, sizeof(head), "%u", nodes[i]);
            printf(" %12" PRIu64, ju64(vc, head));
        }
        if (jnum(c, "locality", &loc))
            printf(" %8.1f%%", loc);
        else
            printf(" %9s", "-");
        printf(" %7s", jint_str(c, "target_node", b1, sizeof(b1)));
        /* the page size, and whether the memory may move */
        uint64_t ps = ju64(c, "page_size");
        if (ps >= VN_GIB)
            printf(" %5" PRIu64 "G", ps / (uint64_t)VN_GIB);
        else if (ps >= VN_MIB)
            printf(" %5" PRIu64 "M", ps / (uint64_t)VN_MIB);
        else
            printf(" %5" PRIu64 "K", ps / 1024);
        const char *pin = jstr(c, "memory_pinned", "none");
        printf(" %s\n", strcmp(pin, "none") ? pin : "movable");
    }
    if (jlen(cells) == 0)
        printf("  (no cells known yet)\n");
    printf("  counters: passes %" PRIu64 ", memory scans %" PRIu64 ", pins %" PRIu64
           ", pages moved %" PRIu64 ", bytes moved %s, errors %" PRIu64 "\n",
           ju64(cnt, "passes"), ju64(cnt, "memory_scans"), ju64(cnt, "pins"),
           ju64(cnt, "pages_moved"), vn_human_bytes(ju64(cnt, "bytes_moved"), b1, sizeof(b1)),
           ju64(cnt, "errors"));
}

static void print_status(struct json_object *r)
{
    struct json_object *doms = jget(r, "domains");

    printf("vnumad: pass %" PRIu64 ", libvirt %s, %zu domain%s\n", ju64(r, "pass"),
           jbool(r, "connected") ? "connected" : "not connected", jlen(doms),
           jlen(doms) == 1 ? "" : "s");
    for (size_t i = 0; i < jlen(doms); i++) {
        printf("\n");
        print_status_domain(json_object_array_get_idx(doms, i));
    }
}

/* One decision record (docs/records.md) on one line. */
static void print_record(struct json_object *rec)
{
    struct json_object *cells = jget(rec, "cells");
    const char *reason = jstr(rec, "reason", NULL), *error = jstr(rec, "error", NULL);
    char b1[32], b2[32], b3[32], rules[512];

    printf("%s pass %s %s %s", jstr(rec, "time", "-"), jint_str(rec, "pass", b1, sizeof(b1)),
           jstr(rec, "domain", "?"), jstr(rec, "action", "-"));
    if (reason && strcmp(reason, "ok") != 0)
        printf(" (%s)", reason);
    printf(":");
    for (size_t k = 0; k < jlen(cells); k++) {
        struct json_object *c = json_object_array_get_idx(cells, k);
        printf("%s cell %s: node %s -> %s %s (rules %s)", k ? ";" : "",
               jint_str(c, "cell", b1, sizeof(b1)), jint_str(c, "node", b2, sizeof(b2)),
               jint_str(c, "target", b3, sizeof(b3)), jstr(c, "reason", "-"),
               jlist_str(jget(c, "rules"), rules, sizeof(rules)));
    }
    if (jlen(cells) == 0)
        printf(" no cells");
    printf("; moved %s", vn_human_bytes(ju64(rec, "bytes_moved"), b1, sizeof(b1)));
    if (error)
        printf("; error: %s", error);
    printf("\n");
}

static void print_decisions(struct json_object *r)
{
    struct json_object *recs = jget(r, "decisions");

    for (size_t i = 0; i < jlen(recs); i++)
        print_record(json_object_array_get_idx(recs, i));
    if (jlen(recs) == 0)
        printf("no decisions recorded yet\n");
}

static void print_explain(struct json_object *r)
{
    struct json_object *lines = jget(r, "lines"), *rec = jget(r, "record");

    for (size_t i = 0; i < jlen(lines); i++) {
        struct json_object *l = json_object_array_get_idx(lines, i);
        printf("%s\n", json_object_is_type(l, json_type_string) ? json_object_get_string(l) : "?");
    }
    if (json_object_is_type(rec, json_type_object)) {
        printf("latest decision: ");
        print_record(rec);
    } else {
        printf("latest decision: none recorded yet\n");
    }
}

/* The plan (record_plan_json()) in the table of `vnumad --advise --table`. */
static void print_advise(struct json_object *r)
{
    struct json_object *doms = jget(r, "domains");
    unsigned actions = 0;
    char id[32], cur[32], tgt[32], bytes[32], rules[512], loc[48];

    printf("%-20s %4s %-6s %4s %6s %16s %4s %10s  %s\n", "DOMAIN", "CELL", "MODE", "NOW", "TARGET",
           "LOCALITY", "PINS", "MOVE", "DECISION");
    for (size_t i = 0; i < jlen(doms); i++) {
        struct json_object *d = json_object_array_get_idx(doms, i), *cells = jget(d, "cells");
        for (size_t k = 0; k < jlen(cells); k++) {
            struct json_object *c = json_object_array_get_idx(cells, k);
            struct json_object *pins = jget(c, "pins"), *moves = jget(c, "moves");
            double before = 0, after = 0;
            uint64_t b = 0;
            for (size_t m = 0; m < jlen(moves); m++)
                if (!jget(json_object_array_get_idx(moves, m), "gpa"))
                    b += ju64(json_object_array_get_idx(moves, m), "bytes");
            (void)jnum(c, "locality_before", &before);
            (void)jnum(c, "locality_after", &after);
            snprintf(loc, sizeof(loc), "%3.0f%% -> %3.0f%%", before, after);
            printf("%-20.20s %4s %-6s %4s %6s %16s %4zu %10s  %s: %s\n", jstr(d, "name", "?"),
                   jint_str(c, "cell", id, sizeof(id)), jstr(d, "mode", "-"),
                   jint_str(c, "current_node", cur, sizeof(cur)),
                   jint_str(c, "target_node", tgt, sizeof(tgt)), loc, jlen(pins),
                   b ? vn_human_bytes(b, bytes, sizeof(bytes)) : "-", jstr(c, "reason", "-"),
                   jlist_str(jget(c, "rules"), rules, sizeof(rules)));
            for (size_t m = 0; m < jlen(pins); m++) {
                struct json_object *p = json_object_array_get_idx(pins, m);
                printf("    pin vcpu %s -> cpus %s\n", jint_str(p, "vcpu", cur, sizeof(cur)),
                       jstr(p, "cpus", "-"));
            }
            for (size_t m = 0; m < jlen(moves); m++) {
                struct json_object *mv = json_object_array_get_idx(moves, m);
                double gain = 0;
                (void)jnum(mv, "gain_points", &gain);
                if (jget(mv, "gpa"))
                    printf("    move hot range gpa 0x%" PRIx64 "+0x%" PRIx64 " -> node %s first\n",
                           ju64(mv, "gpa"), ju64(mv, "length"),
                           jint_str(mv, "to_node", tgt, sizeof(tgt)));
                else
                    printf("    move %s node %s -> node %s (+%.1f points)\n",
                           vn_human_bytes(ju64(mv, "bytes"), bytes, sizeof(bytes)),
                           jint_str(mv, "from_node", cur, sizeof(cur)),
                           jint_str(mv, "to_node", tgt, sizeof(tgt)), gain);
            }
            actions += (unsigned)(jlen(pins) + jlen(moves));
        }
    }
    printf("%u actions\n", actions);
}

/* The exposition text as it is (it ends with a newline). */
static void print_metrics(struct json_object *r)
{
    fputs(jstr(r, "text", ""), stdout);
}

static void print_paused(struct json_object *r)
{
    printf("%s %s\n", jstr(r, "domain", "?"), jbool(r, "paused") ? "paused" : "resumed");
}

/*
 * The shared shape of the daemon's subcommands: options --json, --socket PATH,
 * --help; `domain_arg` 1: an optional positional DOMAIN, 2: a required one.
 */
static int daemon_cmd(int argc, char **argv, int domain_arg, void (*print)(struct json_object *))
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"socket", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    _cleanup_json_ struct json_object *result = NULL;
    const char *name = argv[0], *domain = NULL;
    bool json = false;
    int c, r;

    while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
        switch (c) {
        case 'j':
            json = true;
            break;
        case 'S':
            socket_path = optarg;
            break;
        case 'h':
            printf("Usage: vnumactl %s %s\n", name, find_cmd(name)->args);
            return VNUMACTL_EXIT_OK;
        default:
            return usage_error(name, argv);
        }
    }
    if (optind < argc && domain_arg > 0)
        domain = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "vnumactl: %s: unexpected argument '%s'\n", name, argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }
    if (domain_arg == 2 && !domain) {
        fprintf(stderr, "vnumactl: %s: missing DOMAIN\nUsage: vnumactl %s %s\n", name, name,
                find_cmd(name)->args);
        return VNUMACTL_EXIT_USAGE;
    }
    r = daemon_call(name, domain, &result);
    if (r != VNUMACTL_EXIT_OK)
        return r;
    if (json) {
        print_json(result);
    } else {
        json_printable(result);
        print(result);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "vnumactl: cannot write the output\n");
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
}

static int cmd_status(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 1, print_status);
}

static int cmd_decisions(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 1, print_decisions);
}

static int cmd_explain(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 2, print_explain);
}

static int cmd_advise(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 2, print_advise);
}

static int cmd_pause(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 2, print_paused);
}

static int cmd_resume(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 2, print_paused);
}

static int cmd_metrics(int argc, char **argv)
{
    return daemon_cmd(argc, argv, 0, print_metrics);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"socket", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    const vnumactl_cmd *cmd;
    int c;

    opterr = 0; /* our messages name the subcommand and use one line */
    /* '+': stop at the subcommand, its options are its own */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VNUMACTL_EXIT_OK;
        case 'S':
            socket_path = optarg;
            break;
        default:
            fprintf(stderr, "vnumactl: invalid option or missing argument '%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return VNUMACTL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "vnumactl: missing command\n");
        usage(stderr);
        return VNUMACTL_EXIT_USAGE;
    }
    cmd = find_cmd(argv[optind]);
    if (!cmd) {
        fprintf(stderr, "vnumactl: unknown command '%s'\n", argv[optind]);
        usage(stderr);
        return VNUMACTL_EXIT_USAGE;
    }

    argc -= optind;
    argv += optind;
    optind = 0; /* glibc: start the subcommand's getopt afresh at argv[1] */
    return cmd->run(argc, argv);
}
