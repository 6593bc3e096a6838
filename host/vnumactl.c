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
#include <locale.h>
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
#include "ctl_client.h"
#include "json.h"
#include "text.h"
#include "topology.h"
#include "topology_print.h"
#include "util.h"
#include "version.h"
#include "vnumactl_common.h"
#include "vnumactl_history.h"
#include "vnumactl_hook.h"
#include "vnumactl_snapshot.h"
#include "vnumactl_top.h"

#define VNUMACTL_SOCKET_DEFAULT "/run/vnuma/vnumad.sock"

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
static int cmd_list(int argc, char **argv);
static int cmd_hold(int argc, char **argv);
static int cmd_release(int argc, char **argv);
static int cmd_holds(int argc, char **argv);
static int cmd_top(int argc, char **argv);
static int cmd_history(int argc, char **argv);
static int cmd_stop(int argc, char **argv);
static int cmd_snapshot(int argc, char **argv);
static int cmd_hook(int argc, char **argv);

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
    {"pause", "DOMAIN | --all [--json] [--socket PATH]",
     "stop balancing DOMAIN (--all: every domain) until resumed; nothing is put back", cmd_pause},
    {"resume", "DOMAIN | --all [--json] [--socket PATH]", "balance DOMAIN (--all: the host) again",
     cmd_resume},
    {"top",
     "[-d SECONDS] [-n ITERATIONS] [--batch] [--sort name|locality|moving|busy|memory] [--socket PATH]",
     "a live view per domain and cell: home node, locality, busy vCPUs, memory per node, "
     "bytes moving and when the move ends, the decision (a table once when not a terminal)",
     cmd_top},
    {"history", "DOMAIN [--journal PATH] [--json] [--socket PATH]",
     "DOMAIN's locality and bytes moved per recorded pass, from vnumad's journal, as terminal "
     "charts",
     cmd_history},
    {"snapshot", "[--output FILE | --table] [--socket PATH]",
     "read every running domain, opted in or not, without changing anything or sending it a "
     "monitor command: the snapshot `vnumad --advise --snapshot` takes (JSON), or --table: each "
     "VM's vCPUs and memory per node",
     cmd_snapshot},
    {"list", "[--socket PATH]",
     "the names of the domains vnumad tracks, one per line (for scripts and shell completion)",
     cmd_list},
    {"stop", "[--keep] [--json] [--socket PATH]",
     "stop vnumad, which puts back what it changed (restore_on_exit); --keep: for a restart "
     "or an upgrade, every guest keeps its placement and the next vnumad takes it over",
     cmd_stop},
    {"metrics", "[--json] [--socket PATH]",
     "print vnumad's metrics in the Prometheus text format (the same as metrics_file)",
     cmd_metrics},
    {"hold", "STAGE [DOMAIN] [--json] [--socket PATH]",
     "tests only (test_holds = yes): park the next pass (or DOMAIN's work) that reaches STAGE "
     "(sample, act, move, record) until release",
     cmd_hold},
    {"release", "[--json] [--socket PATH]", "tests only: let every held pass go on", cmd_release},
    {"holds", "[--json] [--socket PATH]", "tests only: the stages armed and held", cmd_holds},
    {"hook", "NAME OPERATION SUB-OPERATION EXTRA",
     "libvirt's qemu hook (the domain XML on stdin): an incoming migration placed by vnumad",
     cmd_hook},
    {"help", "", "show this help", cmd_help},
};

/* The control socket: --socket before the subcommand or in it. */
static const char *vnumactl_socket = VNUMACTL_SOCKET_DEFAULT;

static void usage(FILE *f)
{
    fprintf(f, "Usage: vnumactl COMMAND [OPTIONS]\n\nCommands:\n");
    for (size_t i = 0; i < VN_ARRAY_SIZE(vnumactl_cmds); i++)
        fprintf(f, "  %s%s%s\n      %s\n", vnumactl_cmds[i].name, *vnumactl_cmds[i].args ? " " : "",
                vnumactl_cmds[i].args, vnumactl_cmds[i].summary);
    fprintf(f,
            "\nOptions:\n  -h, --help         show this help\n"
            "  --version          print the version and exit\n"
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

/* What a subcommand is handed: the socket so far, its name and usage line. */
static vnumactl_ctx cmd_ctx(const char *cmd)
{
    const vnumactl_cmd *c = find_cmd(cmd);

    return (vnumactl_ctx){.socket = vnumactl_socket, .name = cmd, .args = c ? c->args : ""};
}

/* Report a bad option of subcommand `cmd` (getopt's optind points past it) and return 2. */
static int usage_error(const char *cmd, char **argv)
{
    vnumactl_ctx ctx = cmd_ctx(cmd);

    return vnumactl_usage_error(&ctx, argv);
}

static int cmd_top(int argc, char **argv)
{
    vnumactl_ctx ctx = cmd_ctx("top");

    return vnumactl_top(argc, argv, &ctx);
}

static int cmd_snapshot(int argc, char **argv)
{
    vnumactl_ctx ctx = cmd_ctx("snapshot");

    return vnumactl_snapshot(argc, argv, &ctx);
}

static int cmd_hook(int argc, char **argv)
{
    vnumactl_ctx ctx = cmd_ctx("hook");

    return vnumactl_hook(argc, argv, &ctx);
}

static int cmd_history(int argc, char **argv)
{
    vnumactl_ctx ctx = cmd_ctx("history");

    return vnumactl_history(argc, argv, &ctx);
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
    _cleanup_topo_ topology *t = NULL;
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

    t = topo_new();
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

/* The daemon's reply, or one line "vnumactl: <why>" on stderr and VNUMACTL_EXIT_ERROR. */
static int daemon_call(const char *command, const char *domain, const char *stage,
                       struct json_object **ret)
{
    char err[512];

    if (ctl_call_stage(vnumactl_socket, command, domain, stage, CTL_TIMEOUT_MS, ret, err,
                       sizeof(err)) < 0) {
        fprintf(stderr, "vnumactl: %s\n", err);
        return VNUMACTL_EXIT_ERROR;
    }
    return VNUMACTL_EXIT_OK;
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

/* One domain of `status`: a header line, a numastat-style table of its cells, counters. Its name
 * is NAME@CONNECTION when another domain of `doms` has the same name (two libvirt daemons). */
static void print_status_domain(struct json_object *d, struct json_object *doms)
{
    struct json_object *agent = jget(d, "agent"), *cells = jget(d, "cells");
    struct json_object *cnt = jget(d, "counters");
    unsigned nodes[VN_MAX_NODES], nr;
    char head[32], b1[32];
    double hint;

    const char *opt_in = jstr(d, "opt_in", "");

    /* what put it in its mode (the element, a host policy rule, the default) when said */
    const char *name = jstr(d, "name", "?"), *conn = jstr(d, "connection", "");
    unsigned same = 0;
    for (size_t i = 0; i < jlen(doms); i++)
        same += !strcmp(jstr(json_object_array_get_idx(doms, i), "name", ""), name);
    printf("%s%s%s: mode %s%s%s%s, paused %s, state %s, error %s, agent %s", name,
           same > 1 && conn[0] ? "@" : "", same > 1 ? conn : "", jstr(d, "mode", "-"),
           opt_in[0] ? " (" : "", opt_in, opt_in[0] ? ")" : "", jbool(d, "paused") ? "yes" : "no",
           jstr(d, "state", "-"), jstr(d, "error", "-"),
           jbool(agent, "connected") ? "connected" : "not connected");
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

    struct json_object *conns = jget(r, "connections");
    unsigned up = 0;
    char many[48] = "";

    for (size_t i = 0; i < jlen(conns); i++)
        up += jbool(json_object_array_get_idx(conns, i), "connected");
    if (jlen(conns) > 1)
        snprintf(many, sizeof(many), " (%u of %zu connections up)", up, jlen(conns));
    printf("vnumad: pass %" PRIu64 ", libvirt %s%s, %zu domain%s%s\n", ju64(r, "pass"),
           jbool(r, "connected") ? "connected" : "not connected", many, jlen(doms),
           jlen(doms) == 1 ? "" : "s",
           jbool(r, "paused") ? ", paused host-wide (vnumactl resume --all)" : "");
    for (size_t i = 0; i < jlen(doms); i++) {
        printf("\n");
        print_status_domain(json_object_array_get_idx(doms, i), doms);
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
    char id[32], cur[32], tgt[32], bytes[32], rules[512], loc[48], name[96];

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
            (void)vn_text_fit(name, sizeof(name), jstr(d, "name", "?"), 20, 1);
            printf("%s %4s %-6s %4s %6s %16s %4zu %10s  %s: %s\n", name,
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

/* One name a line; a newline in a name (libvirt allows it) would make two. */
static void print_names(struct json_object *r)
{
    struct json_object *doms = jget(r, "domains");

    for (size_t i = 0; i < jlen(doms); i++) {
        _cleanup_free_ char *name = strdup(jstr(json_object_array_get_idx(doms, i), "name", "?"));
        if (!name)
            continue;
        for (char *p = name; *p; p++)
            if (*p == '\n')
                *p = '?';
        printf("%s\n", name);
    }
}

static void print_paused(struct json_object *r)
{
    printf("%s %s\n", jstr(r, "domain", "?"), jbool(r, "paused") ? "paused" : "resumed");
}

/*
 * The shared shape of the daemon's subcommands: options --json, --socket PATH,
 * --help; `domain_arg` 1: an optional positional DOMAIN, 2: a required one; `request` the
 * control command sent (NULL: the subcommand's name).
 */
/* domain_arg: 0 none, 1 an optional DOMAIN, 2 a DOMAIN, 3 a STAGE and an optional DOMAIN */
static int daemon_cmd(int argc, char **argv, const char *request, int domain_arg,
                      void (*print)(struct json_object *))
{
    _cleanup_json_ struct json_object *result = NULL;
    const char *name = argv[0], *domain = NULL, *stage = NULL;
    vnumactl_ctx ctx = cmd_ctx(name);
    bool json = false;
    int r;

    r = vnumactl_options(argc, argv, &ctx, &json, NULL, 0);
    if (r >= 0)
        return r;
    vnumactl_socket = ctx.socket;
    if (optind < argc && domain_arg == 3)
        stage = argv[optind++];
    if (optind < argc && domain_arg > 0)
        domain = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "vnumactl: %s: unexpected argument '%s'\n", name, argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }
    if ((domain_arg == 2 && !domain) || (domain_arg == 3 && !stage)) {
        fprintf(stderr, "vnumactl: %s: missing %s\nUsage: vnumactl %s %s\n", name,
                domain_arg == 3 ? "STAGE" : "DOMAIN", name, find_cmd(name)->args);
        return VNUMACTL_EXIT_USAGE;
    }
    r = daemon_call(request ? request : name, domain, stage, &result);
    if (r != VNUMACTL_EXIT_OK)
        return r;
    if (json) {
        ctl_print_json(result);
    } else {
        ctl_json_printable(result);
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
    return daemon_cmd(argc, argv, NULL, 1, print_status);
}

static int cmd_decisions(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 1, print_decisions);
}

static int cmd_explain(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 2, print_explain);
}

static int cmd_advise(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 2, print_advise);
}

static void print_host_paused(struct json_object *r)
{
    printf("balancing %s host-wide (%d domain(s) tracked)\n",
           jbool(r, "paused") ? "paused" : "resumed", json_object_get_int(jget(r, "domains")));
}

/* pause|resume DOMAIN, or --all: the whole host (nothing pinned, moved or restored) */
static int pause_cmd(int argc, char **argv)
{
    _cleanup_json_ struct json_object *result = NULL;
    const char *all = NULL, *name = argv[0];
    const vnumactl_opt extra[] = {{"all", 0, false, &all}};
    vnumactl_ctx ctx = cmd_ctx(name);
    char request[16];
    bool json = false;
    int r;

    r = vnumactl_options(argc, argv, &ctx, &json, extra, VN_ARRAY_SIZE(extra));
    if (r >= 0)
        return r;
    if (!all) {
        optind = 0;
        return daemon_cmd(argc, argv, NULL, 2, print_paused);
    }
    vnumactl_socket = ctx.socket;
    if (optind < argc) {
        fprintf(stderr, "vnumactl: %s: --all takes no DOMAIN (got '%s')\n", name, argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }
    snprintf(request, sizeof(request), "%s-all", name);
    r = daemon_call(request, NULL, NULL, &result);
    if (r != VNUMACTL_EXIT_OK)
        return r;
    if (json)
        ctl_print_json(result);
    else
        print_host_paused(result);
    return VNUMACTL_EXIT_OK;
}

static int cmd_pause(int argc, char **argv)
{
    return pause_cmd(argc, argv);
}

static int cmd_resume(int argc, char **argv)
{
    return pause_cmd(argc, argv);
}

static int cmd_list(int argc, char **argv)
{
    return daemon_cmd(argc, argv, "status", 0, print_names);
}

static int cmd_metrics(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 0, print_metrics);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"socket", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    const vnumactl_cmd *cmd;
    int c;

    /* names are measured and shown in the terminal's character set (lib/text.h); only
     * LC_CTYPE: numbers keep the C locale's '.' in tables, JSON and metrics */
    (void)setlocale(LC_CTYPE, "");
    opterr = 0; /* our messages name the subcommand and use one line */
    /* '+': stop at the subcommand, its options are its own */
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            usage(stdout);
            return VNUMACTL_EXIT_OK;
        case 'V':
            printf("vnumactl %s\n", VNUMA_VERSION);
            return VNUMACTL_EXIT_OK;
        case 'S':
            vnumactl_socket = optarg;
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

/* The test holds: "armed: act; held: act (pass 7); times: sample 0 act 1 move 0 record 0" */
static void print_holds(struct json_object *r)
{
    struct json_object *armed = jget(r, "armed"), *held = jget(r, "held"),
                       *times = jget(r, "times");

    printf("enabled: %s\narmed:", jbool(r, "enabled") ? "yes" : "no");
    for (size_t i = 0; i < jlen(armed); i++)
        printf(" %s", json_object_get_string(json_object_array_get_idx(armed, i)));
    printf("\nheld:");
    for (size_t i = 0; i < jlen(held); i++) {
        struct json_object *h = json_object_array_get_idx(held, i);
        char pass[32];
        printf(" %s (pass %s,", jstr(h, "stage", "?"), jint_str(h, "pass", pass, sizeof(pass)));
        for (size_t k = 0; k < jlen(jget(h, "domains")); k++)
            printf(" '%s'",
                   json_object_get_string(json_object_array_get_idx(jget(h, "domains"), k)));
        printf(")");
    }
    printf("\ntimes held:");
    if (json_object_is_type(times, json_type_object)) {
        json_object_object_foreach(times, key, val) printf(" %s %d", key, json_object_get_int(val));
    }
    printf("\n");
}

static void print_stopping(struct json_object *r)
{
    printf("vnumad stops%s\n", jbool(r, "keep") ? "; every guest keeps its placement" : "");
}

static int cmd_stop(int argc, char **argv)
{
    _cleanup_json_ struct json_object *result = NULL;
    const char *keep = NULL;
    const vnumactl_opt extra[] = {{"keep", 0, false, &keep}};
    vnumactl_ctx ctx = cmd_ctx(argv[0]);
    bool json = false;
    int r;

    r = vnumactl_options(argc, argv, &ctx, &json, extra, VN_ARRAY_SIZE(extra));
    if (r >= 0)
        return r;
    vnumactl_socket = ctx.socket;
    if (optind < argc) {
        fprintf(stderr, "vnumactl: stop: unexpected argument '%s'\n", argv[optind]);
        return VNUMACTL_EXIT_USAGE;
    }
    r = daemon_call(keep ? "stop-keep" : "stop", NULL, NULL, &result);
    if (r != VNUMACTL_EXIT_OK)
        return r;
    if (json)
        ctl_print_json(result);
    else
        print_stopping(result);
    return VNUMACTL_EXIT_OK;
}

static int cmd_hold(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 3, print_holds);
}

static int cmd_release(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 0, print_holds);
}

static int cmd_holds(int argc, char **argv)
{
    return daemon_cmd(argc, argv, NULL, 0, print_holds);
}
