/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vnuma-agent: the guest side of vnuma. Runs inside the guest and answers
 * vnumad's requests on the virtio-serial port org.vnuma.agent.0 with
 * per-process access hints (collect.c, scan.c) in the protocol of proto/
 * (serve.c).
 *
 * The loop: find and open the port (retry every second until it exists);
 * read requests; while a host is connected and has asked for hints, collect
 * every interval_ms it asked for; when the host closes its side (read gives
 * EOF, poll gives POLLHUP) stop collecting, back off a second, and wait for
 * the next session, which starts with a hello again.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "collect.h"
#include "port.h"
#include "proto.h"
#include "scan.h"
#include "serve.h"
#include "util.h"
#include "version.h"

#define BACKOFF_MS       1000
#define WRITE_TIMEOUT_MS 5000

typedef struct agent {
    const char *root;
    const char *port_path; /* --port: use this device instead of finding it */
    collector coll;
    ag_hints hints;
    bool have_hints;
    bool collecting;  /* a host asked for hints in this session */
    uint64_t next_ms; /* next background collection */
    uint64_t last_ms; /* last collection */
    bool verbose;
    uint64_t collections;
    uint64_t collect_ns; /* time spent collecting */
} agent;

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    va_list ap;

    fputs("vnuma-agent: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int agent_collect(agent *a, const collect_cfg *cfg)
{
    uint64_t t0 = vn_mono_ns();
    int r = collector_run(&a->coll, cfg, t0 / 1000000ULL, &a->hints);

    a->collect_ns += vn_mono_ns() - t0;
    if (r < 0)
        return r;
    a->collections++;
    a->have_hints = true;
    a->last_ms = t0 / 1000000ULL;
    a->next_ms = a->last_ms + cfg->interval_ms;
    if (a->verbose)
        logf_("collection %" PRIu64 ": %u processes, %u windows, %" PRIu64 " MiB, %" PRIu64
              " samples, %u soft-dirty clears, %u errors, %.1f ms",
              a->hints.seq, a->hints.nr_procs, a->coll.last_stats.windows,
              a->coll.last_stats.bytes >> 20, a->coll.last_stats.samples,
              a->coll.last_stats.softdirty_clears, a->coll.last_stats.errors,
              (double)(vn_mono_ns() - t0) / 1e6);
    return 0;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (!stop_requested && nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* serve.c's callback: the latest hint set, collected now when it is older than half an
 * interval. The first request of a session primes the heat, waits AG_PRIME_MS and collects:
 * its hint set already tells hot from cold (collector_prime). */
static int agent_hints(void *userdata, const collect_cfg *cfg, const ag_hints **ret)
{
    agent *a = userdata;
    uint64_t now = vn_mono_ms();

    if (!a->collecting && a->coll.heat != SCAN_HEAT_RESIDENCY) {
        int r = collector_prime(&a->coll, cfg, now);
        if (r < 0)
            return r;
        if (a->verbose)
            logf_("primed the heat: the first hint set follows in %d ms", AG_PRIME_MS);
        sleep_ms(AG_PRIME_MS);
        now = vn_mono_ms();
    }
    if (!a->collecting || !a->have_hints || now - a->last_ms >= cfg->interval_ms / 2) {
        int r = agent_collect(a, cfg);
        if (r < 0)
            return r;
    }
    a->collecting = true;
    a->next_ms = a->last_ms + cfg->interval_ms;
    *ret = &a->hints;
    return 0;
}

/* One session on an open port, until the host goes away (0) or a stop (1). */
static int agent_session(agent *a, serve *s, int fd)
{
    _cleanup_free_ proto_reader *rd = malloc(sizeof(*rd));
    char buf[4096];

    if (!rd)
        return -ENOMEM;
    proto_reader_init(rd);
    serve_reset(s);
    a->collecting = false;
    while (!stop_requested) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int timeout = -1, pr;
        ssize_t n;

        if (a->collecting) {
            uint64_t now = vn_mono_ms();
            timeout = a->next_ms > now ? (int)VN_MIN(a->next_ms - now, 60000ULL) : 0;
        }
        pr = poll(&p, 1, timeout);
        if (pr < 0 && errno != EINTR)
            return -errno;
        if (pr <= 0) {
            if (a->collecting && vn_mono_ms() >= a->next_ms)
                (void)agent_collect(a, &s->cfg);
            continue;
        }
        /* No host client: POLLIN|POLLHUP and read() gives 0. POLLHUP alone: the port was
         * hot-unplugged, and read() gives ENODEV: reopen (the port may come back). */
        n = read(fd, buf, sizeof(buf));
        if (n == 0)
            return 0;
        if (n < 0) {
            if ((errno == EAGAIN || errno == EINTR) && (p.revents & POLLIN))
                continue;
            if (errno == EAGAIN || errno == EINTR)
                return 0; /* hung up with nothing to read: no host client */
            return -errno;
        }
        for (size_t off = 0; off < (size_t)n;) {
            const char *line = NULL;
            size_t used = 0, linelen = 0;
            _cleanup_free_ char *reply = NULL;
            size_t rlen = 0;
            int fr = proto_reader_feed(rd, buf + off, (size_t)n - off, &used, &line, &linelen);

            off += used;
            if (fr == -PROTO_ERR_OVERSIZE) {
                logf_("dropping a request longer than %u bytes", PROTO_MAX_LINE);
                continue;
            }
            if (fr != 1)
                continue;
            if (serve_line(s, line, linelen, &reply, &rlen) < 0) {
                logf_("out of memory answering a request");
                continue;
            }
            if (a->verbose)
                logf_("request %.*s -> %zu bytes", (int)VN_MIN(linelen, (size_t)200), line, rlen);
            fr = port_write_all(fd, reply, rlen, WRITE_TIMEOUT_MS);
            if (fr < 0) {
                logf_("Failed to send a reply of %zu bytes: %s", rlen, strerror(-fr));
                return 0;
            }
        }
    }
    return 1;
}

static int agent_run(agent *a, serve *s)
{
    bool said_missing = false, said_nohost = false;
    char path[600];

    while (!stop_requested) {
        _cleanup_close_ int fd = -1;
        int r;

        if (a->port_path)
            snprintf(path, sizeof(path), "%s", a->port_path);
        else if (port_find(a->root, PORT_NAME, path, sizeof(path)) < 0) {
            if (!said_missing)
                logf_("no virtio-serial port named %s yet; retrying every second", PORT_NAME);
            said_missing = true;
            sleep_ms(BACKOFF_MS);
            continue;
        }
        fd = port_open(path);
        if (fd < 0) {
            if (!said_missing)
                logf_("Failed to open %s: %s; retrying every second", path, strerror(-fd));
            said_missing = true;
            sleep_ms(BACKOFF_MS);
            continue;
        }
        if (said_missing || !said_nohost)
            logf_("using %s", path);
        said_missing = false;
        /* Sessions on this fd: each ends when the host closes its side. */
        while (!stop_requested) {
            r = agent_session(a, s, fd);
            if (r == 1)
                break;
            if (r < 0) {
                logf_("Failed to read %s: %s; reopening", path, strerror(-r));
                break;
            }
            if (a->collecting || !said_nohost)
                logf_("host side not connected; waiting for it (%" PRIu64
                      " collections so far, %.1f ms CPU in them)",
                      a->collections, (double)a->collect_ns / 1e6);
            said_nohost = true;
            a->collecting = false;
            sleep_ms(BACKOFF_MS);
        }
        if (!stop_requested)
            sleep_ms(BACKOFF_MS);
    }
    return 0;
}

/* --once: collect twice, interval apart, and print the hint set as the protocol's reply. */
static int agent_once(agent *a, serve *s, const collect_cfg *cfg)
{
    _cleanup_free_ char *line = NULL;
    proto_hints wire;
    size_t len = 0;
    int r;

    r = agent_collect(a, cfg);
    if (r < 0)
        return r;
    sleep_ms(cfg->interval_ms);
    r = agent_collect(a, cfg);
    if (r < 0)
        return r;
    serve_to_proto(s, &a->hints, &wire);
    r = proto_encode_hints_reply(1, &wire, &line, &len);
    if (r < 0) {
        logf_("Failed to encode the hint set: %s", proto_error_name((proto_error)-r));
        return -EINVAL;
    }
    fputs(line, stdout);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: vnuma-agent [OPTIONS]\n"
            "  --find-port          print the port's device and exit\n"
            "  --once               collect twice (one interval apart), print the hint set\n"
            "  --port PATH          use this device instead of finding %s\n"
            "  --root DIR           read /proc, /sys and /dev below DIR (tests)\n"
            "  --heat METHOD        auto (default), page-idle, soft-dirty, residency\n"
            "  --interval MS, --max-processes N, --budget-mib MIB   (--once only;\n"
            "                       the host's request sets them otherwise)\n"
            "  --verbose            log every request and collection\n"
            "  --version\n",
            PORT_NAME);
}

static int parse_u32(const char *s, uint32_t *ret)
{
    uint64_t v;

    if (vn_parse_u64(s, 0, UINT32_MAX, &v) < 0)
        return -EINVAL;
    *ret = (uint32_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    enum { OPT_ONCE = 256, OPT_PORT, OPT_HEAT, OPT_INTERVAL, OPT_MAXP, OPT_BUDGET, OPT_VERSION };
    static const struct option opts[] = {
        {"find-port", no_argument, NULL, 'f'},
        {"once", no_argument, NULL, OPT_ONCE},
        {"port", required_argument, NULL, OPT_PORT},
        {"root", required_argument, NULL, 'r'},
        {"heat", required_argument, NULL, OPT_HEAT},
        {"interval", required_argument, NULL, OPT_INTERVAL},
        {"max-processes", required_argument, NULL, OPT_MAXP},
        {"budget-mib", required_argument, NULL, OPT_BUDGET},
        {"verbose", no_argument, NULL, 'v'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static agent a;
    static serve s;
    collect_cfg cfg = {0};
    const char *heat_opt = "auto";
    scan_heat heat;
    char path[600];
    int c, find = 0, once = 0, r;

    a.root = "";
    while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            find = 1;
            break;
        case OPT_ONCE:
            once = 1;
            break;
        case OPT_PORT:
            a.port_path = optarg;
            break;
        case 'r':
            a.root = optarg;
            break;
        case OPT_HEAT:
            heat_opt = optarg;
            break;
        case OPT_INTERVAL:
        case OPT_MAXP:
        case OPT_BUDGET: {
            uint32_t v;
            if (parse_u32(optarg, &v) < 0) {
                logf_("invalid number '%s'", optarg);
                return 2;
            }
            if (c == OPT_INTERVAL)
                cfg.interval_ms = v;
            else if (c == OPT_MAXP)
                cfg.max_processes = v;
            else
                cfg.scan_budget_mib = v;
            break;
        }
        case 'v':
            a.verbose = true;
            break;
        case OPT_VERSION:
            printf("vnuma-agent %s\n", VNUMA_VERSION);
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
        logf_("unexpected argument '%s'", argv[optind]);
        usage(stderr);
        return 2;
    }
    if (find) {
        if (port_find(a.root, PORT_NAME, path, sizeof(path)) < 0) {
            logf_("no virtio-serial port named %s", PORT_NAME);
            return 1;
        }
        printf("%s\n", path);
        return 0;
    }
    if (strcmp(heat_opt, "auto") == 0)
        heat = scan_detect_heat(a.root);
    else if (strcmp(heat_opt, "page-idle") == 0)
        heat = SCAN_HEAT_IDLE;
    else if (strcmp(heat_opt, "soft-dirty") == 0)
        heat = SCAN_HEAT_SOFTDIRTY;
    else if (strcmp(heat_opt, "residency") == 0)
        heat = SCAN_HEAT_RESIDENCY;
    else {
        logf_("unknown heat method '%s'", heat_opt);
        return 2;
    }
    r = collector_init(&a.coll, a.root, &scan_ops_linux, heat);
    if (r < 0) {
        logf_("Failed to read the guest topology below '%s/': %s", a.root, strerror(-r));
        return 1;
    }
    serve_init(&s, a.coll.nr_nodes, a.coll.nr_cpus, scan_heat_name(heat), geteuid() == 0,
               agent_hints, &a);
    if (once) {
        if (cfg.scan_budget_mib == 0)
            cfg.scan_budget_mib = AG_DEFAULT_BUDGET_MIB;
        cfg = collect_cfg_clamp(cfg);
        r = agent_once(&a, &s, &cfg);
        collector_free(&a.coll);
        return r < 0 ? 1 : 0;
    }
    {
        struct sigaction sa = {.sa_handler = on_signal};
        (void)sigaction(SIGTERM, &sa, NULL);
        (void)sigaction(SIGINT, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
    }
    logf_("%s: %u nodes, %u CPUs, heat method %s", s.agent, a.coll.nr_nodes, a.coll.nr_cpus,
          scan_heat_name(heat));
    r = agent_run(&a, &s);
    collector_free(&a.coll);
    logf_("stopping after %" PRIu64 " collections (%.1f ms CPU in them)", a.collections,
          (double)a.collect_ns / 1e6);
    return r < 0 ? 1 : 0;
}
