/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon itself: libvirt's event loop, the connection to libvirtd (reconnected with
 * backoff), the pass timers, signals and config reload. The rest of the daemon is in
 * domains.c, pass.c, pass_work.c, publish.c and commands.c, each with its own header; it owns
 * their shared context (core.h) and hands it down (docs/ARCHITECTURE.md "Floors").
 */
#include "daemon.h"
#include "detach.h"
#include "journal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "act_move.h"
#include "clock.h"
#include "commands.h"
#include "config.h"
#include "conflicts.h"
#include "conns.h"
#include "control.h"
#include "core.h"
#include "domains.h"
#include "domains_agent.h"
#include "holds.h"
#include "hostpolicy.h"
#include "log.h"
#include "loop.h"
#include "mover.h"
#include "notify.h"
#include "numa_ops.h"
#include "pass.h"
#include "pass_work.h"
#include "promise.h"
#include "publish.h"
#include "sample.h"
#include "util.h"
#include "virt.h"
#include "workers.h"

/* at shutdown, how long the events' reads still out are waited for */
#define CONSIDER_DRAIN_S 5.0
#define VN_MACHINE_ID    "/etc/machine-id"

/* ---- start-up warnings ---- */

/* Other balancers fighting over the same guests: said once, at start. */
static void warn_host_conflicts(vnumad *dm)
{
    dm->stats.conflicts = conflicts_host("");
    if (dm->stats.conflicts & CONFLICT_NUMA_BALANCING)
        log_warn(
            "Kernel automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing = 1): it moves the same guest pages and threads as vnumad; turn it off with 'sysctl kernel.numa_balancing=0' (docs/operations.md)");
    if (dm->stats.conflicts & CONFLICT_NUMAD)
        log_warn(
            "numad is running: it re-pins and moves whole domains and fights vnumad over opted-in domains; stop it or keep it away from them (docs/operations.md)");
}

static void schedule_pass_soon(vnumad *dm)
{
    dm->pass_due = true;
    loop_update_timer(dm->soon_timer, (int)(dm->cfg.event_delay_s * 1000));
}

/* vnumad.pass_soon: domain tracking asks for a pass soon through it */
static void daemon_pass_soon(vnumad *dm)
{
    schedule_pass_soon(dm);
}

/* ---- the connections' events (conns.h: opaque is the connection) ---- */

/* The domain the event is about, when vnumad tracks it on this connection. */
static dom_state *event_domain(conn_slot *cs, const char *uuid)
{
    dom_state *st = domains_find(cs->dm, uuid);

    return st && st->conn_id == cs->id ? st : NULL;
}

static void on_lifecycle(void *opaque, const char *uuid, const char *name, virt_lifecycle ev,
                         bool migrated)
{
    conn_slot *cs = opaque;
    vnumad *dm = cs->dm;
    dom_state *st = event_domain(cs, uuid);

    if (ev == VIRT_EVENT_STARTED) {
        log_debug("Domain '%s' started%s", LOG_Q(name), migrated ? " (arriving by migration)" : "");
        if (!migrated) {
            /* a restore's memory is all in once it started (libvirt says so after the load) */
            promise_arrived(dm->promises, uuid, dm->pass);
            domains_consider_later(dm, cs->id, uuid);
        } else if (domains_arrived(dm, cs->id, uuid, false)) {
            schedule_pass_soon(dm);
        }
    } else if (ev == VIRT_EVENT_RESUMED && migrated) {
        log_debug("Domain '%s' resumed after its migration here", LOG_Q(name));
        promise_arrived(dm->promises, uuid, dm->pass); /* its memory is all here */
        if (domains_arrived(dm, cs->id, uuid, true))
            schedule_pass_soon(dm);
    } else if (ev == VIRT_EVENT_STOPPED) {
        if (promise_release(dm->promises, uuid, NULL))
            log_info(
                "The room promised to incoming domain '%s' is free again: it stopped (its migration or restore failed, or it was shut down)",
                LOG_Q(name));
        domains_consider_stale(dm, cs->id, uuid);
        if (!st)
            return;
        log_info("Domain '%s' stopped%s; no longer tracked", LOG_Q(name),
                 migrated ? " (migrated away)" : "");
        domains_forget(dm, st);
    }
}

/* A live tunable (vCPU, emulator or IOThread pin, numatune) changed: vnumad's own or
 * another's; the live XML is read again at the next pass. */
static void on_tunable(void *opaque, const char *uuid, const char *name)
{
    dom_state *st = event_domain(opaque, uuid);

    (void)name;
    if (st)
        domains_stale(st, DOM_STALE_XML);
}

static void on_metadata(void *opaque, const char *uuid, const char *name)
{
    conn_slot *cs = opaque;

    (void)name;
    domains_consider_later(cs->dm, cs->id, uuid);
}

static void on_vserport(void *opaque, const char *uuid, const char *name, const char *port,
                        bool open)
{
    conn_slot *cs = opaque;
    vnumad *dm = cs->dm;
    dom_state *st = event_domain(cs, uuid);

    log_debug("Domain '%s' port %s %s", LOG_Q(name), port, open ? "opened" : "closed");
    if (!st)
        return;
    domains_stale(st, DOM_STALE_XML); /* the channel's state in it changed */
    if (!open)
        domains_agent_drop(st);
    else
        schedule_pass_soon(dm); /* its sample reads the XML, then the channel is opened */
}

/* A memory device (pc-dimm, virtio-mem, NVDIMM) came or went: the domain's RAM
 * layout is found again at the next pass, which comes soon. */
static void on_device(void *opaque, const char *uuid, const char *name, const char *alias,
                      bool added)
{
    conn_slot *cs = opaque;
    vnumad *dm = cs->dm;
    dom_state *st = event_domain(cs, uuid);

    if (!st)
        return;
    domains_stale(st, DOM_STALE_XML);
    if (strncmp(alias, "vcpu", 4) == 0) {
        log_info("vCPU %s of '%s' %s", alias, LOG_Q(name), added ? "plugged" : "unplugged");
        domains_stale(st, DOM_STALE_VCPUS);
        schedule_pass_soon(dm);
        return;
    }
    /* libvirt names the device "dimmN"/"virtiomemN" and its backend "memdimmN"; the
     * event may carry either */
    if (!strstr(alias, "dimm") && !strstr(alias, "virtiomem"))
        return;
    log_info("Memory device %s of '%s' %s; finding its memory again", alias, LOG_Q(name),
             added ? "plugged" : "unplugged");
    domains_stale(st, DOM_STALE_RAM);
    schedule_pass_soon(dm);
}

static void on_closed(void *opaque)
{
    conns_lost(opaque);
}

/*
 * Passes come every interval, a whole interval after the last one ended: a pass that takes
 * the interval for sampling alone (a loaded host, many domains) must not turn vnumad into a
 * busy loop. Memory moves do not wait for passes: the mover works its queue between them.
 */
static void reload_config(vnumad *dm);

static void pass_and_rearm(vnumad *dm)
{

    if (dm->in_pass) { /* the loop runs inside a pass: this one comes after it */
        dm->pass_again = true;
        return;
    }
    dm->pass_again = false;
    pass_run(dm);
    loop_update_timer(dm->pass_timer, (int)(dm->cfg.interval_s * 1000));
    if (dm->reload_due) {
        dm->reload_due = false;
        reload_config(dm);
    }
    if (dm->pass_again) /* an event asked for a pass while this one ran */
        schedule_pass_soon(dm);
}

static void on_pass_timer(int timer, void *opaque)
{
    (void)timer;
    pass_and_rearm(opaque);
}

static void on_soon_timer(int timer, void *opaque)
{
    ((vnumad *)opaque)->pass_due = false;
    loop_update_timer(timer, -1);
    pass_and_rearm(opaque); /* the periodic pass counts from here */
}

/* ---- signals ---- */

static void reload_config(vnumad *dm)
{
    daemon_config c = dm->cfg;
    host_policy *policy = NULL;
    char err[512];

    if (!dm->config_path)
        return;
    if (dm->in_pass) { /* the pass's works read the configuration: after it */
        dm->reload_due = true;
        return;
    }
    if (daemon_config_load(dm->config_path, false, &c, err, sizeof(err)) < 0) {
        log_err("Not reloading: %s", err);
        return;
    }
    if (hostpolicy_load(c.policy_dir, !config_policy_dir_named(&c), c.default_mode, &policy, err,
                        sizeof(err)) < 0) {
        log_err("Not reloading: %s", err);
        return;
    }
    /* where vnumad listens and what it connects to stay as started */
    memcpy(c.socket_path, dm->cfg.socket_path, sizeof(c.socket_path));
    memcpy(c.state_dir, dm->cfg.state_dir, sizeof(c.state_dir));
    memcpy(c.pid_file, dm->cfg.pid_file, sizeof(c.pid_file));
    memcpy(c.uris, dm->cfg.uris, sizeof(c.uris));
    c.nr_uris = dm->cfg.nr_uris;
    (void)notify_send("RELOADING=1");
    bool knobs = c.balancer_knobs != dm->cfg.balancer_knobs;
    dm->cfg = c;
    log_set_level(c.log_level);
    holds_enable(c.test_holds);
    mover_set_rate(dm->movers, c.rate_limit_mib);
    loop_update_timer(dm->pass_timer, (int)(c.interval_s * 1000));
    bool policy_changed = !hostpolicy_equal(policy, dm->policy);
    hostpolicy_free(dm->policy);
    dm->policy = policy;
    if (policy_changed)
        log_info("Host policy: default %s, %u rule(s) from %s", mode_name(policy->default_mode),
                 policy->nr_rules, c.policy_dir);
    /* each element read again under the new balancer_knobs; each domain without one under
     * the new policy: one no rule puts in balancing any more is restored as at an opt-out */
    if (knobs || policy_changed)
        conns_relist(dm); /* (a domain taken up is balanced at the pass its read asks for) */
    conns_scan_now(dm);
    log_info("Reloaded %s", dm->config_path);
    (void)notify_send("READY=1");
}

/* SIGHUP: a journal.jsonl that logrotate moved away is made anew (host/journal.h) */
static void reopen_journal(vnumad *dm)
{
    int r;

    if (!dm->journal) {
        r = journal_open(dm->cfg.state_dir, &dm->journal);
    } else {
        r = journal_reopen(dm->journal);
    }
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_JOURNAL]++;
        log_warn("Cannot reopen the journal in %s: %s; decisions are kept in memory only",
                 dm->cfg.state_dir, strerror(-r));
    }
}

/* SIGTERM under systemd: a stop job restores, a restart job keeps (stopkind.h) */
static void note_stop_kind(vnumad *dm, uint32_t signo)
{
    const char *name = signo == SIGTERM ? "SIGTERM" : "SIGINT";
    char why[256] = "";
    stop_kind k = STOP_UNKNOWN;

    if (signo == SIGTERM && dm->stop_kind && !dm->exit_keeps)
        k = dm->stop_kind(why, sizeof(why));
    if (k == STOP_RESTART)
        dm->exit_keeps = true;
    if (dm->exit_keeps)
        log_info("Received %s for a restart%s%s%s: every domain keeps its placement and its saved "
                 "originals",
                 name, why[0] ? " (" : "", why, why[0] ? ")" : "");
    else
        log_info("Received %s; finishing%s%s%s", name, why[0] ? " (" : "", why, why[0] ? ")" : "");
}

static void on_signal(int watch, int fd, int events, void *opaque)
{
    vnumad *dm = opaque;
    struct signalfd_siginfo si;

    (void)watch;
    (void)events;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGHUP) {
            reopen_journal(dm);
            reload_config(dm);
        } else {
            note_stop_kind(dm, si.ssi_signo);
            dm->quit = true;
            (void)holds_release(); /* a pass a test parked finishes, then vnumad stops */
        }
    }
}

/* ---- main ---- */

/*
 * This host's id, stamped on the originals vnumad saves (host/metadata.h): the machine id,
 * stable across reboots and daemon restarts. Not libvirt's host UUID: without SMBIOS (some
 * clouds, nested hosts) libvirtd makes up a new one at each start, and vnumad would take its
 * own originals for another host's after a libvirtd restart.
 */
static void read_host_id(vnumad *dm, const char *path)
{
    _cleanup_fclose_ FILE *f = fopen(path, "re");
    char line[64] = "";

    if (!f || !fgets(line, sizeof(line), f) || strlen(line) != 33 || line[32] != '\n' ||
        strspn(line, "0123456789abcdef") != 32) {
        log_warn(
            "Cannot read a machine id from %s: originals saved on another host are recognised only when the domain arrives by live migration",
            path);
        return;
    }
    _Static_assert(sizeof(dm->host_id) > 32, "a machine id is 32 hex digits");
    memcpy(dm->host_id, line, 32);
    dm->host_id[32] = '\0';
}

static void shutdown_restore(vnumad *dm)
{
    if (!dm->cfg.restore_on_exit || dm->exit_keeps)
        return;
    for (size_t i = 0; i < dm->nr_doms; i++) {
        dom_state *st = dm->doms[i];
        virt_dom *d = NULL;
        if (st->busy && st->orig.saved) {
            log_warn("Not restoring '%s': it does not answer (a call to it has not returned)",
                     LOG_Q(st->name));
            continue;
        }
        if (!st->orig.saved)
            continue;
        if (!conns_virt(dm, st->conn_id)) {
            log_warn("Not restoring '%s': its libvirt daemon (%s) is not connected",
                     LOG_Q(st->name), conns_label(dm, st->conn_id));
            continue;
        }
        int r = virt_dom_open(conns_virt(dm, st->conn_id), st->uuid, &d);
        if (r < 0) {
            /* a daemon that stopped answering (libvirt's keepalive gave up on the call): its
             * other domains are not waited for again */
            if (r != -ESRCH && conns_find(dm, st->conn_id))
                conns_find(dm, st->conn_id)->connected = false;
            continue;
        }
        domains_restore(dm, d, st, "vnumad stopped");
        virt_dom_free(d);
    }
}

int daemon_start(vnumad *dm, const daemon_config *cfg, const char *config_path,
                 const daemon_host *host)
{
    char perr[512];
    sigset_t mask;
    int r;

    memset(dm, 0, sizeof(*dm));
    dm->pass_soon = daemon_pass_soon;
    dm->cfg = *cfg;
    dm->config_path = config_path;
    r = hostpolicy_load(cfg->policy_dir, !config_policy_dir_named(cfg), cfg->default_mode,
                        &dm->policy, perr, sizeof(perr));
    if (r < 0) {
        log_err("Cannot read the host policy: %s", perr);
        return r;
    }
    dm->topo = host->topo;
    dm->numa = host->numa;
    dm->stop_kind = host->stop_kind;
    dm->root = host->root;
    dm->sigfd = dm->sig_watch = dm->pool_watch = -1;
    dm->conns_timer = dm->pass_timer = dm->soon_timer = dm->tick_timer = -1;
    log_info("Host topology: %u NUMA node(s), %u CPUs", dm->topo->nr_nodes, dm->topo->nr_cpus);
    read_host_id(dm, host->machine_id);
    r = loop_init();
    if (r < 0) {
        log_err("Cannot start the event loop: %s", loop_last_error());
        return r;
    }
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    dm->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (dm->sigfd < 0 ||
        (dm->sig_watch = loop_add_fd(dm->sigfd, LOOP_READABLE, on_signal, dm)) < 0) {
        log_err("Cannot watch signals: %s", strerror(errno));
        return -EIO;
    }
    r = journal_open(dm->cfg.state_dir, &dm->journal);
    if (r < 0) {
        dm->stats.errors[METRICS_ERR_JOURNAL]++;
        log_warn("Cannot open the journal in %s: %s; decisions are kept in memory only",
                 dm->cfg.state_dir, strerror(-r));
    }
    dm->host_paused = commands_host_paused_at_start(dm);
    if (dm->host_paused)
        log_warn("Balancing is paused host-wide (%s/paused, vnumactl pause --all): nothing is "
                 "pinned or moved until vnumactl resume --all",
                 dm->cfg.state_dir);
    dm->promises = promise_table_new();
    if (!dm->promises) {
        log_err("Cannot start: out of memory");
        return -ENOMEM;
    }
    r = control_open(dm->cfg.socket_path, commands_table, dm, &dm->ctl);
    if (r < 0) {
        log_err("Cannot listen on %s: %s", dm->cfg.socket_path, strerror(-r));
        return r;
    }
    r = mover_start(&dm->movers, dm->topo, dm->numa, dm->cfg.decide.move_threads,
                    dm->cfg.decide.move_threads_max, dm->cfg.rate_limit_mib);
    if (r < 0) {
        log_err("Cannot start the mover's threads: %s", strerror(-r));
        return r;
    }
    r = pass_init(dm);
    if (r < 0) {
        log_err("Cannot start the worker threads: %s", strerror(-r));
        return r;
    }
    dm->pass_timer = loop_add_timer((int)(dm->cfg.interval_s * 1000), on_pass_timer, dm);
    dm->soon_timer = loop_add_timer(-1, on_soon_timer, dm);
    if (dm->pass_timer < 0 || dm->soon_timer < 0) {
        log_err("Cannot create timers");
        return -EIO;
    }
    log_info("vnumad started: interval %.1f s, migration limit %u MiB/s, QMP %s, socket %s",
             dm->cfg.interval_s, dm->cfg.rate_limit_mib, dm->cfg.use_qmp ? "on" : "off",
             dm->cfg.socket_path);
    if (!dm->cfg.use_qmp)
        log_warn(
            "QMP is off: no monitor command; the cells are the live XML's, and a cell's RAM is "
            "known only where QEMU's maps tell it apart (hugetlbfs files, cells of unequal size): "
            "other cells have their vCPUs placed, their memory neither counted nor moved; no "
            "guest agent hints");
    holds_enable(dm->cfg.test_holds);
    if (dm->cfg.test_holds)
        log_warn(
            "test_holds = yes: vnumactl hold can park a pass (for tests, never in production)");
    warn_host_conflicts(dm);
    /* systemd (Type=notify): ready once vnumactl can reach us; libvirtd may come later */
    r = notify_send("READY=1");
    if (r < 0)
        log_warn("Cannot tell systemd that vnumad is ready: %s", strerror(-r));
    virt_callbacks events = {.lifecycle = on_lifecycle,
                             .metadata = on_metadata,
                             .tunable = on_tunable,
                             .vserport = on_vserport,
                             .device = on_device,
                             .closed = on_closed};
    if (conns_start(dm, &events) < 0) {
        log_err("Cannot create timers");
        return -EIO;
    }
    return 0;
}

void daemon_pass_now(vnumad *dm)
{
    pass_and_rearm(dm);
}

static void on_drain_tick(int timer, void *opaque)
{
    (void)timer;
    (void)opaque;
}

/* The works still out (a record's write after an opt-out outside a pass): their done() runs,
 * or timeout_s passes (a hung domain's work stays out). */
static void drain_works(vnumad *dm, double timeout_s)
{
    double end = vn_mono_s() + timeout_s;
    int t = loop_add_timer(100, on_drain_tick, NULL); /* a wake-up to look at the clock */

    while (workers_out(dm->pool) && vn_mono_s() < end)
        if (loop_run_once() < 0)
            break;
    if (t >= 0)
        loop_remove_timer(t);
}

void daemon_stop(vnumad *dm)
{
    (void)notify_send("STOPPING=1");
    /* no memory moves from here on: the pins are put back next */
    mover_stop(dm->movers);
    dm->movers = NULL;
    if (dm->pool) {
        pass_drain(dm, shutdown_restore);
        domains_consider_drain(dm, CONSIDER_DRAIN_S);
        drain_works(dm, CONSIDER_DRAIN_S);
    }
    control_close(dm->ctl);
    dm->ctl = NULL;
    conns_stop(dm);
    for (size_t i = 0; i < dm->nr_doms; i++)
        if (!dm->doms[i]->busy) /* one with a work still out stays: the process is ending */
            domains_state_free(dm->doms[i]);
    dm->nr_doms = 0;
    workers_stop(dm->pool);
    dm->pool = NULL;
    journal_close(dm->journal);
    dm->journal = NULL;
    promise_table_free(dm->promises);
    dm->promises = NULL;
    hostpolicy_free(dm->policy);
    dm->policy = NULL;
    /* what the loop watches for this daemon (a test starts the next one in the same process) */
    int timers[] = {dm->pass_timer, dm->soon_timer, dm->tick_timer};
    for (size_t i = 0; i < VN_ARRAY_SIZE(timers); i++)
        if (timers[i] >= 0)
            loop_remove_timer(timers[i]);
    if (dm->sig_watch >= 0)
        loop_remove_fd(dm->sig_watch);
    if (dm->pool_watch >= 0)
        loop_remove_fd(dm->pool_watch);
    if (dm->sigfd >= 0)
        close(dm->sigfd);
    log_flush_suppressed(true);
    log_info("vnumad stopped");
}

int daemon_main(const daemon_config *cfg, const char *config_path, bool detached)
{
    daemon_host host = {.numa = &numa_libnuma,
                        .root = "/",
                        .machine_id = VN_MACHINE_ID,
                        .stop_kind = stopkind_systemd};
    _cleanup_topo_ topology *topo = topo_new();
    vnumad dm;
    char err[512];
    int r;

    if (!topo)
        return 1;
    r = topo_load(TOPO_SOURCE_LIVE, NULL, NULL, topo, err, sizeof(err));
    if (r < 0) {
        log_err("Cannot read the host topology: %s", err);
        return 1;
    }
    host.topo = topo;
    if (daemon_start(&dm, cfg, config_path, &host) < 0)
        return 1;
    /* listening, and connected or retrying: the terminal that started us may go */
    if (detached && detach_done(cfg->pid_file, err, sizeof(err)) < 0) {
        log_err("Cannot detach: %s", err);
        daemon_stop(&dm);
        detach_remove_pidfile(cfg->pid_file); /* written before the step that failed */
        return 1;
    }
    while (!dm.quit) {
        r = loop_run_once();
        if (r < 0) {
            log_err("Event loop failed: %s", loop_last_error());
            break;
        }
    }
    daemon_stop(&dm);
    if (detached)
        detach_remove_pidfile(cfg->pid_file);
    return r < 0 ? 1 : 0;
}
