/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake host of the unit tests (fakehost.h): the host tree, the clock, the domains and
 * what the test does to them. The fake libvirt vnumad calls is fakehost_virt.c, its daemons
 * fakehost_daemons.c. */
#include "fakehost.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "fakehost_priv.h"
#include "topology.h"
#include "util.h"

fake_host_state fh = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .released = PTHREAD_COND_INITIALIZER, .watch = -1};

/* ---- the clock ---- */

void fake_clock_move(uint64_t ns)
{
    fh.mono_ns += ns;
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++) {
        fake_dom *fd = &fh.doms[i];
        if (!fd->used || !fd->running)
            continue;
        for (unsigned v = 0; v < fd->nr_vcpus; v++) {
            fd->cpu_ns[v] += (uint64_t)(fd->busy * (double)ns);
            fd->poll_ns[v] += (uint64_t)(fd->poll * (double)ns);
        }
        fake_qemu_sync(fd); /* its threads' schedstat */
    }
}

static uint64_t fake_mono_ns(void)
{
    uint64_t ns;

    pthread_mutex_lock(&fh.lock);
    ns = fh.mono_ns;
    pthread_mutex_unlock(&fh.lock);
    return ns;
}

/* the wall clock: 2026-12-04T00:00:00Z at the start, moving with the monotonic one */
static uint64_t fake_real_ns(void)
{
    return 1796342400ULL * 1000000000ULL + fake_mono_ns();
}

static void fake_skip(uint64_t ns)
{
    pthread_mutex_lock(&fh.lock);
    fake_clock_move(ns);
    pthread_mutex_unlock(&fh.lock);
}

/* vnumad waits on the clock (a pass's CPU time window, the mover's tokens): over at once */
static void fake_wait(uint64_t ns)
{
    pthread_mutex_lock(&fh.lock);
    fh.query_calls_at_wait = fh.query_calls;
    fake_clock_move(ns);
    pthread_mutex_unlock(&fh.lock);
}

static const vn_clock_ops fake_clock = {
    .mono_ns = fake_mono_ns, .real_ns = fake_real_ns, .skip = fake_wait};

void fake_clock_advance(double s)
{
    fake_skip((uint64_t)(s * 1e9));
}

/* ---- the host ---- */

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(void)
{
    if (fh.root[0])
        (void)nftw(fh.root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *rel, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", fh.root, rel);
    for (char *p = path + strlen(fh.root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        (void)mkdir(path, 0700);
        *p = '/';
    }
    f = fopen(path, "we");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

void fake_host_init(daemon_host *host)
{
    char err[256];

    snprintf(fh.root, sizeof(fh.root), "/tmp/vnuma-fakehost.XXXXXX");
    if (!mkdtemp(fh.root) || pipe2(fh.pipe, O_NONBLOCK | O_CLOEXEC) < 0)
        abort();
    atexit(remove_tree);
    /* no other load: the same counters at every reading */
    write_file("proc/stat", "cpu  400 0 400 8000 0 0 0 0 0 0\n"
                            "cpu0 100 0 100 2000 0 0 0 0 0 0\n"
                            "cpu1 100 0 100 2000 0 0 0 0 0 0\n"
                            "cpu2 100 0 100 2000 0 0 0 0 0 0\n"
                            "cpu3 100 0 100 2000 0 0 0 0 0 0\n");
    for (unsigned n = 0; n < FAKE_NODES; n++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "sys/devices/system/node/node%u/meminfo", n);
        write_file(rel, "");
        fh.node_free[n] = fh.min_free[n] = FAKE_NODE_FREE;
        fake_node_sync(n);
    }
    write_file("etc/machine-id", "0123456789abcdef0123456789abcdef\n");
    write_file("run/libvirt/qemu/.keep", ""); /* the fake QEMUs' pid files (fakehost_qemu.c) */
    write_file("proc/.keep", "");
    write_file("proc/self/ns/.keep", ""); /* vnumad's PID namespace (nspid.h) */
    char self[256];
    snprintf(self, sizeof(self), "%s/proc/self/ns/pid", fh.root);
    if (symlink(FAKE_HOST_PIDNS, self) < 0)
        abort();
    char run[128];
    snprintf(run, sizeof(run), "%s/run/libvirt", fh.root);
    setenv("VN_LIBVIRT_RUN_DIR", run, 1);
    if (topo_load(TOPO_SOURCE_SYNTHETIC, "numa:2 core:2 pu:1", NULL, &fh.topo, err, sizeof(err)) <
            0 ||
        topo_refresh_free(&fh.topo, fh.root) < 0) {
        fprintf(stderr, "fakehost: %s\n", err);
        abort();
    }
    fh.all = fh.topo.cpus;
    fh.mono_ns = 1000ULL * 1000000000ULL;
    pthread_mutex_lock(&fh.lock);
    fake_daemons_reset();
    pthread_mutex_unlock(&fh.lock);
    vn_clock_use(&fake_clock);
    virt_use(&fake_virt);
    static char machine_id[128];
    snprintf(machine_id, sizeof(machine_id), "%s/etc/machine-id", fh.root);
    *host = (daemon_host){
        .topo = &fh.topo, .numa = &fake_numa, .root = fh.root, .machine_id = machine_id};
}

const char *fake_host_root(void)
{
    return fh.root;
}

void fake_host_config(daemon_config *cfg)
{
    daemon_config_defaults(cfg);
    cfg->use_qmp = false;
    cfg->interval_s = 3600; /* the test runs every pass (daemon_pass_now) */
    cfg->event_delay_s = 0; /* an event that changed something: a pass at the next iteration */
    cfg->log_level = getenv("VN_TEST_DEBUG") ? 7 : 3;
    snprintf(cfg->socket_path, sizeof(cfg->socket_path), "%s/run/vnumad.sock", fh.root);
    snprintf(cfg->state_dir, sizeof(cfg->state_dir), "%s/state", fh.root);
    (void)mkdir(cfg->state_dir, 0700);
}

void fake_host_reset(void)
{
    pthread_mutex_lock(&fh.lock);
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++) {
        free(fh.doms[i].balancer);
        free(fh.doms[i].state);
        free(fh.doms[i].numatune);
        free(fh.doms[i].meta_extra);
        free(fh.doms[i].page_node);
        if (fh.doms[i].hanging)
            abort(); /* a test left a call hanging */
        if (fh.doms[i].used) {
            fh.doms[i].used = false;
            fake_qemu_sync(&fh.doms[i]); /* its files go */
        }
    }
    memset(fh.doms, 0, sizeof(fh.doms));
    fh.move_calls = 0;
    fh.query_calls = fh.query_calls_at_wait = 0;
    for (unsigned n = 0; n < FAKE_NODES; n++) {
        fh.node_free[n] = fh.min_free[n] = FAKE_NODE_FREE;
        fake_node_sync(n);
    }
    fake_daemons_reset();
    pthread_mutex_unlock(&fh.lock);
    /* vnumad's records of the originals go with the domains they were of */
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s/state/originals", fh.root);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            (void)unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
}

/* ---- domains ---- */

fake_dom *fake_dom_add(const char *name, unsigned nr_vcpus, const char *balancer)
{
    return fake_dom_add_on(fake_daemon_default(), name, nr_vcpus, balancer);
}

fake_dom *fake_dom_add_on(fake_daemon *d, const char *name, unsigned nr_vcpus, const char *balancer)
{
    fake_dom *fd = NULL;

    pthread_mutex_lock(&fh.lock);
    for (unsigned i = 0; i < FAKE_MAX_DOMS && !fd; i++)
        if (!fh.doms[i].used)
            fd = &fh.doms[i];
    if (!fd || nr_vcpus == 0 || nr_vcpus > FAKE_MAX_VCPUS)
        abort();
    memset(fd, 0, sizeof(*fd));
    fd->used = true;
    fd->daemon = d;
    snprintf(fd->name, sizeof(fd->name), "%s", name);
    snprintf(fd->uuid, sizeof(fd->uuid), "00000000-0000-4000-8000-%012u",
             (unsigned)(fd - fh.doms) + 1);
    fd->id = (int)++fh.next_id;
    fd->running = true;
    fd->nr_vcpus = nr_vcpus;
    fd->balancer = balancer ? strdup(balancer) : NULL;
    for (unsigned v = 0; v < nr_vcpus; v++)
        fd->pin[v] = fd->defined[v] = fh.all;
    fd->emulator = fd->emulator_defined = fh.all;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
    return fd;
}

bool fake_dom_uuid(fake_dom *fd, char *buf, size_t len)
{
    return (size_t)snprintf(buf, len, "%s", fd->uuid) < len;
}

unsigned fake_dom_nr_vcpus(fake_dom *fd)
{
    return fd->nr_vcpus;
}

void fake_dom_set_daemon(fake_dom *fd, fake_daemon *d)
{
    pthread_mutex_lock(&fh.lock);
    fd->daemon = d;
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_set_uuid(fake_dom *fd, const fake_dom *as)
{
    pthread_mutex_lock(&fh.lock);
    memcpy(fd->uuid, as->uuid, sizeof(fd->uuid));
    fake_qemu_sync(fd); /* its status file names it */
    pthread_mutex_unlock(&fh.lock);
}

static vn_cpuset parse_cpus(const char *cpus)
{
    vn_cpuset s;

    if (cpuset_parse(cpus, &s) < 0)
        abort();
    return s;
}

void fake_dom_define_pin(fake_dom *fd, unsigned v, const char *cpus)
{
    pthread_mutex_lock(&fh.lock);
    fd->defined[v] = fd->pin[v] = parse_cpus(cpus);
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_define_emulator(fake_dom *fd, const char *cpus)
{
    pthread_mutex_lock(&fh.lock);
    fd->emulator_defined = fd->emulator = parse_cpus(cpus);
    pthread_mutex_unlock(&fh.lock);
}

const char *fake_dom_emulator(fake_dom *fd, char *buf, size_t len)
{
    pthread_mutex_lock(&fh.lock);
    (void)cpuset_format(&fd->emulator, buf, len);
    pthread_mutex_unlock(&fh.lock);
    return buf;
}

void fake_dom_set_pin(fake_dom *fd, unsigned v, const char *cpus)
{
    pthread_mutex_lock(&fh.lock);
    fd->pin[v] = parse_cpus(cpus);
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

const char *fake_dom_pin(fake_dom *fd, unsigned v, char *buf, size_t len)
{
    pthread_mutex_lock(&fh.lock);
    (void)cpuset_format(&fd->pin[v], buf, len);
    pthread_mutex_unlock(&fh.lock);
    return buf;
}

void fake_dom_set_busy(fake_dom *fd, double busy)
{
    pthread_mutex_lock(&fh.lock);
    fd->busy = busy;
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_set_poll(fake_dom *fd, double poll)
{
    pthread_mutex_lock(&fh.lock);
    fd->kvm = true;
    fd->poll = poll;
    pthread_mutex_unlock(&fh.lock);
}

static void set_element(char **e, const char *xml)
{
    pthread_mutex_lock(&fh.lock);
    free(*e);
    *e = xml ? strdup(xml) : NULL;
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_set_balancer(fake_dom *fd, const char *xml)
{
    set_element(&fd->balancer, xml);
}

void fake_dom_set_state(fake_dom *fd, const char *xml)
{
    set_element(&fd->state, xml);
}

void fake_dom_set_numatune(fake_dom *fd, const char *xml)
{
    set_element(&fd->numatune, xml);
}

void fake_dom_set_metadata(fake_dom *fd, const char *xml)
{
    set_element(&fd->meta_extra, xml);
}

void fake_dom_set_agent_channel(fake_dom *fd, bool defined)
{
    pthread_mutex_lock(&fh.lock);
    fd->channel = defined;
    pthread_mutex_unlock(&fh.lock);
}

char *fake_dom_state(fake_dom *fd)
{
    char *s;

    pthread_mutex_lock(&fh.lock);
    s = fd->state ? strdup(fd->state) : NULL;
    pthread_mutex_unlock(&fh.lock);
    return s;
}

void fake_dom_set_job(fake_dom *fd, bool running)
{
    pthread_mutex_lock(&fh.lock);
    fd->job = running;
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_stop(fake_dom *fd)
{
    pthread_mutex_lock(&fh.lock);
    fd->running = false;
    free(fd->state); /* live metadata goes with the QEMU run */
    fd->state = NULL;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_start(fake_dom *fd)
{
    pthread_mutex_lock(&fh.lock);
    fd->running = true;
    fd->id = (int)++fh.next_id;
    for (unsigned v = 0; v < fd->nr_vcpus; v++) {
        fd->pin[v] = fd->defined[v];
        fd->cpu_ns[v] = 0;
        fd->poll_ns[v] = 0;
    }
    fd->emulator = fd->emulator_defined;
    fake_qemu_sync(fd);
    pthread_mutex_unlock(&fh.lock);
}

unsigned fake_dom_calls(fake_dom *fd, fake_call call)
{
    unsigned n;

    pthread_mutex_lock(&fh.lock);
    n = fd->calls[call];
    pthread_mutex_unlock(&fh.lock);
    return n;
}

void fake_dom_fail(fake_dom *fd, fake_call call, int r)
{
    pthread_mutex_lock(&fh.lock);
    fd->fail[call] = r;
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_hang(fake_dom *fd, fake_call call)
{
    pthread_mutex_lock(&fh.lock);
    fd->hang[call] = true;
    pthread_mutex_unlock(&fh.lock);
}

bool fake_dom_hung(fake_dom *fd)
{
    bool h;

    pthread_mutex_lock(&fh.lock);
    h = fd->hanging > 0;
    pthread_mutex_unlock(&fh.lock);
    return h;
}

void fake_dom_release(fake_dom *fd)
{
    pthread_mutex_lock(&fh.lock);
    memset(fd->hang, 0, sizeof(fd->hang));
    pthread_cond_broadcast(&fh.released);
    pthread_mutex_unlock(&fh.lock);
}

void fake_dom_hook(fake_dom *fd, fake_call call, fake_hook fn, void *arg)
{
    pthread_mutex_lock(&fh.lock);
    fd->hook[call] = fn;
    fd->hook_arg[call] = arg;
    pthread_mutex_unlock(&fh.lock);
}

/* ---- events ---- */

void fake_event_lifecycle(fake_dom *fd, virt_lifecycle ev, bool migrated)
{
    fake_event e = {.kind = FE_LIFECYCLE, .ev = ev, .migrated = migrated};

    snprintf(e.uuid, sizeof(e.uuid), "%s", fd->uuid);
    snprintf(e.name, sizeof(e.name), "%s", fd->name);
    fake_queue_event(fd->daemon, &e);
}

void fake_event_metadata(fake_dom *fd)
{
    fake_event e = {.kind = FE_METADATA};

    snprintf(e.uuid, sizeof(e.uuid), "%s", fd->uuid);
    snprintf(e.name, sizeof(e.name), "%s", fd->name);
    fake_queue_event(fd->daemon, &e);
}
