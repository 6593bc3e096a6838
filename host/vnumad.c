/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnumad: the vnuma host daemon.
 *
 *   vnumad [--foreground] [--config FILE]      balance the opted-in libvirt domains
 *   vnumad --check-config [--config FILE]      validate the configuration and exit
 *   vnumad --advise [--topology FILE.xml | --synthetic STRING] --snapshot FILE.json
 *          [--json | --table] [--passes N]     the offline advisor: decide on a saved
 *                                              snapshot, touch nothing
 */
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "decide.h"
#include "detach.h"
#include "hostpolicy.h"
#include "log.h"
#include "plan_apply.h"
#include "privs.h"
#include "record.h"
#include "snapshot.h"
#include "topology.h"
#include "util.h"
#include "version.h"

#define ADVISE_MAX_PASSES 100

typedef enum output_kind {
    OUTPUT_BOTH,
    OUTPUT_JSON,
    OUTPUT_TABLE,
    OUTPUT_MAX,
} output_kind;

static void usage(FILE *f)
{
    fprintf(f, "Usage: vnumad [--foreground] [--config FILE]\n"
               "       vnumad --check-config [--config FILE]\n"
               "       vnumad --advise [--topology FILE.xml | --synthetic STRING] --snapshot "
               "FILE.json [--json | --table] [--passes N]\n"
               "       vnumad --version | --help\n"
               "\n"
               "  --foreground      stay attached, log to stderr (for systemd and tests)\n"
               "  --config FILE     configuration (default " CONFIG_DEFAULT_PATH ")\n"
               "  --check-config    validate the configuration and exit\n"
               "  --advise          decide on a saved snapshot and print the plan; touch nothing\n"
               "  --topology FILE   hwloc XML export of the host (default: this host)\n"
               "  --synthetic STR   hwloc synthetic topology, e.g. \"pack:2 numa:2 core:8 pu:2\"\n"
               "  --snapshot FILE   domains as JSON (docs/snapshot-format.md)\n"
               "  --json            print the plan as JSON only\n"
               "  --table           print the human table only\n"
               "  --passes N        simulate N passes, applying each plan to the snapshot\n"
               "                    (stops once a pass plans nothing for auto domains)\n");
}

static void plan_clearp(plan *p)
{
    plan_clear(p);
}

static void snapshot_clearp(snapshot *s)
{
    snapshot_clear(s);
}

static int print_pass(const topology *t, const plan *p, output_kind out, struct json_object *arr)
{
    if (out != OUTPUT_JSON) {
        printf("== pass %llu ==\n", (unsigned long long)p->pass);
        record_plan_table(t, p, stdout);
    }
    if (out != OUTPUT_TABLE) {
        struct json_object *j = record_plan_json(t, p);
        if (!j)
            return -ENOMEM;
        json_object_array_add(arr, j);
    }
    return 0;
}

static int advise(const topology *t, const char *snap_path, output_kind out, unsigned passes)
{
    _cleanup_(snapshot_clearp) snapshot s = {0};
    struct json_object *arr = json_object_new_array();
    vn_config cfg;
    char err[1024];
    unsigned done = 0;
    bool converged = false;
    int r;

    if (!arr)
        return -ENOMEM;
    config_defaults(&cfg);
    r = snap_load_file(snap_path, t, &s, err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "vnumad: %s\n", err);
        json_object_put(arr);
        return r;
    }
    if (out != OUTPUT_JSON) {
        printf("topology: %s, %u nodes, %u CPUs\nbefore:\n", t->source, t->nr_nodes, t->nr_cpus);
        record_snapshot_table(t, &s, stdout);
    }
    for (done = 0; done < passes; done++) {
        _cleanup_(plan_clearp) plan p = {0};
        snapshot next = {0};
        r = decide(t, &s, &cfg, &p);
        if (r >= 0)
            r = print_pass(t, &p, out, arr);
        if (r < 0)
            break;
        if (passes == 1 || plan_nr_auto_actions(&p) == 0) {
            done++;
            converged = plan_nr_auto_actions(&p) == 0;
            break;
        }
        r = plan_apply(t, &s, &p, &next);
        if (r < 0)
            break;
        snapshot_clear(&s);
        s = next;
    }
    if (r < 0) {
        fprintf(stderr, "vnumad: advise failed: %s\n", strerror(-r));
        json_object_put(arr);
        return r;
    }
    if (out != OUTPUT_JSON && passes > 1) {
        printf("after %u pass%s (%s):\n", done, done == 1 ? "" : "es",
               converged ? "converged: the last pass planned nothing for auto domains"
                         : "not converged yet");
        record_snapshot_table(t, &s, stdout);
    }
    if (out != OUTPUT_TABLE) {
        struct json_object *doc = arr;
        if (passes > 1) {
            doc = json_object_new_object();
            json_object_object_add(doc, "passes", arr);
        } else {
            doc = json_object_get(json_object_array_get_idx(arr, 0));
            json_object_put(arr);
        }
        printf("%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(doc);
    } else {
        json_object_put(arr);
    }
    return 0;
}

static int run_daemon(const char *config_path, bool foreground, bool check_config)
{
    daemon_config cfg;
    char err[1024];
    int r;

    daemon_config_defaults(&cfg);
    if (daemon_config_load(config_path ? config_path : CONFIG_DEFAULT_PATH, !config_path, &cfg, err,
                           sizeof(err)) < 0) {
        fprintf(stderr, "vnumad: %s\n", err);
        return 1;
    }
    if (check_config) {
        const char *path = config_path ? config_path : CONFIG_DEFAULT_PATH;
        if (daemon_config_check_paths(&cfg, err, sizeof(err)) < 0) {
            fprintf(stderr, "vnumad: %s: %s\n", path, err);
            return 1;
        }
        host_policy *policy = NULL;
        if (hostpolicy_load(cfg.policy_dir, !config_policy_dir_named(&cfg), cfg.default_mode,
                            &policy, err, sizeof(err)) < 0) {
            fprintf(stderr, "vnumad: %s\n", err);
            return 1;
        }
        if (!config_path && access(path, F_OK) < 0)
            printf("%s: no such file; the built-in defaults are ok\n", path);
        else
            printf("%s: ok\n", path);
        printf("host policy: default %s, %u rule(s) from %s\n", mode_name(policy->default_mode),
               policy->nr_rules, cfg.policy_dir);
        hostpolicy_free(policy);
        return 0;
    }
    if (geteuid() != 0) {
        fprintf(stderr, "vnumad: must run as root (it pins vCPUs and moves guest memory)\n");
        return 1;
    }
    /* root's other capabilities go before vnumad reads anything of anyone's (host/privs.h) */
    if (privs_drop(err, sizeof(err)) < 0) {
        fprintf(stderr, "vnumad: %s\n", err);
        return 1;
    }
    log_setup(foreground, cfg.log_level);
    /* the terminal waits until vnumad has started or failed to (host/detach.h) */
    if (!foreground && (r = detach_begin()) < 0) {
        fprintf(stderr, "vnumad: cannot detach: %s\n", strerror(-r));
        return 1;
    }
    return daemon_main(&cfg, config_path, !foreground);
}

/* Which invocation an option belongs to: a daemon option on the advisor (or the other way round)
 * would silently do something else than asked (an advisor run that starts the balancer), so
 * every option is checked against the mode the command line asks for. */
enum {
    MODE_DAEMON = 1 << 0,
    MODE_CHECK = 1 << 1,
    MODE_ADVISE = 1 << 2,
};

typedef struct cli_opt {
    int val;
    const char *name;
    unsigned modes; /* the modes it belongs to */
} cli_opt;

static const cli_opt cli_opts[] = {
    {'a', "--advise", MODE_ADVISE},
    {'t', "--topology", MODE_ADVISE},
    {'y', "--synthetic", MODE_ADVISE},
    {'s', "--snapshot", MODE_ADVISE},
    {'j', "--json", MODE_ADVISE},
    {'T', "--table", MODE_ADVISE},
    {'p', "--passes", MODE_ADVISE},
    {'f', "--foreground", MODE_DAEMON},
    {'c', "--config", MODE_DAEMON | MODE_CHECK},
    {'C', "--check-config", MODE_CHECK},
};

/* Options that each choose the same thing: one of them at most. */
static const int cli_exclusive[][2] = {{'t', 'y'}, {'j', 'T'}, {'a', 'C'}};

static const cli_opt *cli_find(int val)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(cli_opts); i++)
        if (cli_opts[i].val == val)
            return &cli_opts[i];
    return NULL;
}

/* 0, or -1 after a usage message: an option given twice, two that exclude each other, or one
 * that does not belong to the mode asked for. */
static int cli_check(const bool seen[static 128], int twice)
{
    unsigned mode = seen['a'] ? MODE_ADVISE : seen['C'] ? MODE_CHECK : MODE_DAEMON;

    if (twice) {
        fprintf(stderr, "vnumad: %s given twice\n", cli_find(twice)->name);
        return -1;
    }
    for (size_t i = 0; i < VN_ARRAY_SIZE(cli_exclusive); i++)
        if (seen[cli_exclusive[i][0]] && seen[cli_exclusive[i][1]]) {
            fprintf(stderr, "vnumad: %s and %s cannot be combined\n",
                    cli_find(cli_exclusive[i][0])->name, cli_find(cli_exclusive[i][1])->name);
            return -1;
        }
    for (size_t i = 0; i < VN_ARRAY_SIZE(cli_opts); i++) {
        const cli_opt *o = &cli_opts[i];
        if (!seen[o->val] || (o->modes & mode))
            continue;
        if (mode == MODE_DAEMON)
            fprintf(stderr,
                    "vnumad: %s is an option of --advise (the offline advisor); without "
                    "--advise vnumad would start the balancer\n",
                    o->name);
        else
            fprintf(stderr, "vnumad: %s is not an option of %s\n", o->name,
                    mode == MODE_ADVISE ? "--advise" : "--check-config");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"advise", no_argument, NULL, 'a'},
        {"topology", required_argument, NULL, 't'},
        {"synthetic", required_argument, NULL, 'y'},
        {"snapshot", required_argument, NULL, 's'},
        {"json", no_argument, NULL, 'j'},
        {"table", no_argument, NULL, 'T'},
        {"passes", required_argument, NULL, 'p'},
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {"foreground", no_argument, NULL, 'f'},
        {"config", required_argument, NULL, 'c'},
        {"check-config", no_argument, NULL, 'C'},
        {NULL, 0, NULL, 0},
    };
    const char *config_path = NULL;
    bool foreground = false, check_config = false;
    _cleanup_topo_ topology *t = NULL;
    const char *topo_arg = NULL, *snap_path = NULL;
    topo_source_kind kind = TOPO_SOURCE_LIVE;
    output_kind out = OUTPUT_BOTH;
    bool do_advise = false;
    uint64_t passes = 1;
    bool seen[128] = {0};
    int twice = 0;
    char err[1024];
    int c, r;

    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c > 0 && c < 128 && cli_find(c)) {
            if (seen[c] && !twice)
                twice = c;
            seen[c] = true;
        }
        switch (c) {
        case 'a':
            do_advise = true;
            break;
        case 't':
            kind = TOPO_SOURCE_XML;
            topo_arg = optarg;
            break;
        case 'y':
            kind = TOPO_SOURCE_SYNTHETIC;
            topo_arg = optarg;
            break;
        case 's':
            snap_path = optarg;
            break;
        case 'j':
            out = OUTPUT_JSON;
            break;
        case 'T':
            out = OUTPUT_TABLE;
            break;
        case 'p':
            if (vn_parse_u64(optarg, 1, ADVISE_MAX_PASSES, &passes) < 0) {
                fprintf(stderr, "vnumad: --passes: expected 1..%d, got '%s'\n", ADVISE_MAX_PASSES,
                        optarg);
                return 2;
            }
            break;
        case 'f':
            foreground = true;
            break;
        case 'c':
            config_path = optarg;
            break;
        case 'C':
            check_config = true;
            break;
        case 'V':
            printf("vnumad %s\n", VNUMA_VERSION);
            return 0;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "vnumad: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (cli_check(seen, twice) < 0) {
        usage(stderr);
        return 2;
    }
    if (!do_advise)
        return run_daemon(config_path, foreground, check_config);
    if (!snap_path) {
        fprintf(stderr, "vnumad: --advise needs --snapshot FILE.json\n");
        return 2;
    }
    t = topo_new();
    if (!t) {
        fprintf(stderr, "vnumad: out of memory\n");
        return 1;
    }
    r = topo_load(kind, topo_arg, NULL, t, err, sizeof(err));
    if (r < 0) {
        fprintf(stderr, "vnumad: %s\n", err);
        return 1;
    }
    r = advise(t, snap_path, out, (unsigned)passes);
    return r < 0 ? 1 : 0;
}
