/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake host of the unit tests (fakehost.h). */
#include "fakehost.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "loop.h"
#include "topology.h"
#include "util.h"

#define FAKE_HANG_JUMP_S (24 * 3600.0) /* past any timeout vnumad has */
#define FAKE_EVENTS_MAX  64

struct fake_dom {
    bool used;
    char uuid[SNAP_UUID_MAX];
    char name[SNAP_NAME_MAX];
    int id;
    bool running;
    bool job;       /* libvirt runs a job on it */
    char *balancer; /* the operator's <balancer>, NULL: none */
    char *state;    /* vnumad's <state>, NULL: none */
    unsigned nr_vcpus;
    double busy;
    uint64_t cpu_ns[FAKE_MAX_VCPUS];
    vn_cpuset pin[FAKE_MAX_VCPUS];     /* live */
    vn_cpuset defined[FAKE_MAX_VCPUS]; /* the definition's (all CPUs: none) */
    vn_cpuset emulator;
    vn_cpuset emulator_defined; /* the definition's (all CPUs: none) */
    int fail[FAKE_CALL_MAX];
    bool hang[FAKE_CALL_MAX];
    unsigned hanging;
    unsigned calls[FAKE_CALL_MAX];
    fake_hook hook[FAKE_CALL_MAX];
    void *hook_arg[FAKE_CALL_MAX];
};

/* a handle vnumad holds (virt_dom *): its domain and the connection it was made on */
typedef struct fake_handle {
    fake_dom *fd;
    unsigned conn_gen;
} fake_handle;

typedef enum fake_event_kind { FE_LIFECYCLE, FE_METADATA, FE_CLOSED } fake_event_kind;

typedef struct fake_event {
    fake_event_kind kind;
    char uuid[SNAP_UUID_MAX], name[SNAP_NAME_MAX];
    virt_lifecycle ev;
    bool migrated;
} fake_event;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t released;
    char root[64];
    topology topo;
    vn_cpuset all;
    fake_dom doms[FAKE_MAX_DOMS];
    unsigned next_id;
    uint64_t mono_ns;
    bool down;         /* libvirtd stopped */
    unsigned conn_gen; /* the open connection's generation; 0: none open */
    unsigned opened;   /* connections opened */
    virt_callbacks cb; /* the open connection's */
    int pipe[2];       /* events for the loop */
    int watch;
    fake_event events[FAKE_EVENTS_MAX];
    unsigned nr_events;
} fh = {.lock = PTHREAD_MUTEX_INITIALIZER, .released = PTHREAD_COND_INITIALIZER, .watch = -1};

static __thread char fake_error[128];

/* ---- the clock ---- */

/* Moves the clock; each running vCPU's CPU time grows with it. Locked. */
static void clock_move(uint64_t ns)
{
    fh.mono_ns += ns;
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++) {
        fake_dom *fd = &fh.doms[i];
        for (unsigned v = 0; fd->used && fd->running && v < fd->nr_vcpus; v++)
            fd->cpu_ns[v] += (uint64_t)(fd->busy * (double)ns);
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
    clock_move(ns);
    pthread_mutex_unlock(&fh.lock);
}

static const vn_clock_ops fake_clock = {
    .mono_ns = fake_mono_ns, .real_ns = fake_real_ns, .skip = fake_skip};

void fake_clock_advance(double s)
{
    fake_skip((uint64_t)(s * 1e9));
}

/* ---- calls ---- */

/*
 * The common start of a call on a domain: counted, hooked, hung, failed. Returns 0 with the
 * lock held, or -errno without it.
 */
static int call_begin(virt_dom *d, fake_call call, fake_dom **ret)
{
    fake_handle *h = (fake_handle *)d;
    fake_dom *fd = h ? h->fd : NULL;
    fake_hook hook;
    void *arg;

    if (!fd)
        return -EINVAL;
    pthread_mutex_lock(&fh.lock);
    fd->calls[call]++;
    hook = fd->hook[call];
    arg = fd->hook_arg[call];
    pthread_mutex_unlock(&fh.lock);
    if (hook)
        hook(fd, call, arg);
    pthread_mutex_lock(&fh.lock);
    if (fd->hang[call]) {
        fd->hanging++;
        clock_move((uint64_t)(FAKE_HANG_JUMP_S * 1e9));
        while (fd->hang[call])
            pthread_cond_wait(&fh.released, &fh.lock);
        fd->hanging--;
    }
    if (fh.down || h->conn_gen != fh.conn_gen) {
        pthread_mutex_unlock(&fh.lock);
        snprintf(fake_error, sizeof(fake_error), "fake: no connection to libvirtd");
        return -ENOTCONN;
    }
    if (!fd->used || !fd->running) {
        pthread_mutex_unlock(&fh.lock);
        snprintf(fake_error, sizeof(fake_error), "fake: domain is not running");
        return -ESRCH;
    }
    if (fd->fail[call]) {
        int r = fd->fail[call];
        pthread_mutex_unlock(&fh.lock);
        snprintf(fake_error, sizeof(fake_error), "fake: call %d fails: %s", (int)call,
                 strerror(-r));
        return r;
    }
    *ret = fd;
    return 0;
}

static int call_end(int r)
{
    pthread_mutex_unlock(&fh.lock);
    return r;
}

static const char *fake_last_error(void)
{
    return fake_error;
}

/* ---- the connection ---- */

static void deliver(int watch, int fd, int events, void *opaque)
{
    fake_event ev[FAKE_EVENTS_MAX];
    virt_callbacks cb;
    unsigned n;
    char buf[64];

    (void)watch;
    (void)events;
    (void)opaque;
    while (read(fd, buf, sizeof(buf)) > 0)
        ;
    pthread_mutex_lock(&fh.lock);
    n = fh.nr_events;
    memcpy(ev, fh.events, n * sizeof(ev[0]));
    fh.nr_events = 0;
    cb = fh.cb;
    pthread_mutex_unlock(&fh.lock);
    for (unsigned i = 0; i < n; i++) {
        if (ev[i].kind == FE_CLOSED && cb.closed)
            cb.closed(cb.opaque);
        else if (ev[i].kind == FE_LIFECYCLE && cb.lifecycle)
            cb.lifecycle(cb.opaque, ev[i].uuid, ev[i].name, ev[i].ev, ev[i].migrated);
        else if (ev[i].kind == FE_METADATA && cb.metadata)
            cb.metadata(cb.opaque, ev[i].uuid, ev[i].name);
    }
}

static void queue_event(const fake_event *e)
{
    pthread_mutex_lock(&fh.lock);
    if (fh.conn_gen && fh.nr_events < FAKE_EVENTS_MAX)
        fh.events[fh.nr_events++] = *e;
    pthread_mutex_unlock(&fh.lock);
    if (write(fh.pipe[1], "e", 1) < 0)
        abort();
}

static int fake_open(const char *uri, const virt_callbacks *cb, virt_conn **ret)
{
    (void)uri;
    pthread_mutex_lock(&fh.lock);
    if (fh.down) {
        pthread_mutex_unlock(&fh.lock);
        snprintf(fake_error, sizeof(fake_error), "fake: libvirtd is not running");
        return -ENOTCONN;
    }
    fh.cb = *cb;
    fh.conn_gen = ++fh.opened;
    fh.nr_events = 0;
    pthread_mutex_unlock(&fh.lock);
    if (fh.watch < 0)
        fh.watch = loop_add_fd(fh.pipe[0], LOOP_READABLE, deliver, NULL);
    *ret = (virt_conn *)&fh;
    return 0;
}

static void fake_close(virt_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&fh.lock);
    memset(&fh.cb, 0, sizeof(fh.cb));
    fh.conn_gen = 0;
    fh.nr_events = 0;
    pthread_mutex_unlock(&fh.lock);
}

static int fake_list_running(virt_conn *c, virt_dom_id **ret, size_t *ret_n)
{
    virt_dom_id *ids = calloc(FAKE_MAX_DOMS, sizeof(*ids));
    size_t n = 0;

    (void)c;
    if (!ids)
        return -ENOMEM;
    pthread_mutex_lock(&fh.lock);
    if (fh.down || !fh.conn_gen) {
        pthread_mutex_unlock(&fh.lock);
        free(ids);
        return -ENOTCONN;
    }
    for (unsigned i = 0; i < FAKE_MAX_DOMS; i++) {
        fake_dom *fd = &fh.doms[i];
        if (!fd->used || !fd->running)
            continue;
        snprintf(ids[n].uuid, sizeof(ids[n].uuid), "%s", fd->uuid);
        snprintf(ids[n].name, sizeof(ids[n].name), "%s", fd->name);
        ids[n++].id = fd->id;
    }
    pthread_mutex_unlock(&fh.lock);
    *ret = ids;
    *ret_n = n;
    return 0;
}

static fake_handle *handle_new(fake_dom *fd)
{
    fake_handle *h = calloc(1, sizeof(*h));

    if (h) {
        h->fd = fd;
        h->conn_gen = fh.conn_gen;
    }
    return h;
}

static int fake_dom_open(virt_conn *c, const char *uuid, virt_dom **ret)
{
    fake_handle *h = NULL;

    (void)c;
    pthread_mutex_lock(&fh.lock);
    for (unsigned i = 0; i < FAKE_MAX_DOMS && !h; i++) {
        fake_dom *fd = &fh.doms[i];
        if (fd->used && strcmp(fd->uuid, uuid) == 0) {
            fd->calls[FAKE_LOOKUP]++;
            if (fh.down || !fh.conn_gen) {
                pthread_mutex_unlock(&fh.lock);
                return -ENOTCONN;
            }
            h = handle_new(fd);
        }
    }
    pthread_mutex_unlock(&fh.lock);
    if (!h)
        return -ESRCH;
    *ret = (virt_dom *)h;
    return 0;
}

static int fake_dom_ref(virt_dom *d, virt_dom **ret)
{
    fake_handle *h = calloc(1, sizeof(*h));

    if (!h)
        return -ENOMEM;
    *h = *(fake_handle *)d;
    *ret = (virt_dom *)h;
    return 0;
}

static void fake_dom_free_handle(virt_dom *d)
{
    free(d);
}

/* ---- domain calls ---- */

static int fake_ident(virt_dom *d, virt_dom_id *ret)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_IDENT, &fd);

    if (r < 0)
        return r;
    snprintf(ret->uuid, sizeof(ret->uuid), "%s", fd->uuid);
    snprintf(ret->name, sizeof(ret->name), "%s", fd->name);
    ret->id = fd->id;
    return call_end(0);
}

static bool fake_active(virt_dom *d)
{
    fake_dom *fd;

    if (call_begin(d, FAKE_IDENT, &fd) < 0)
        return false;
    call_end(0);
    return true;
}

static int fake_job(virt_dom *d, bool *ret_running)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_JOB, &fd);

    if (r < 0)
        return r;
    *ret_running = fd->job;
    return call_end(0);
}

static int fake_vcpu_poll(virt_dom *d, uint64_t *poll_ns, unsigned max, unsigned *found)
{
    (void)d;
    (void)poll_ns;
    (void)max;
    *found = 0; /* not KVM's statistics: TCG's */
    return 0;
}

/* The domain's XML: the live pins (live) or the definition's. Locked. */
static char *domain_xml(const fake_dom *fd, bool live)
{
    char *xml = NULL, pins[FAKE_MAX_VCPUS * 64] = "", meta[1024] = "", id[32] = "";
    size_t used = 0;

    for (unsigned v = 0; v < fd->nr_vcpus; v++) {
        const vn_cpuset *p = live ? &fd->pin[v] : &fd->defined[v];
        char list[48];
        if (cpuset_equal(p, &fh.all))
            continue;
        (void)cpuset_format(p, list, sizeof(list));
        used += (size_t)snprintf(pins + used, sizeof(pins) - used,
                                 "<vcpupin vcpu='%u' cpuset='%s'/>", v, list);
    }
    if (!live && !cpuset_equal(&fd->emulator_defined, &fh.all)) {
        char list[48];
        (void)cpuset_format(&fd->emulator_defined, list, sizeof(list));
        used +=
            (size_t)snprintf(pins + used, sizeof(pins) - used, "<emulatorpin cpuset='%s'/>", list);
    }
    if (fd->balancer)
        snprintf(meta, sizeof(meta), "%s", fd->balancer);
    if (live)
        snprintf(id, sizeof(id), " id='%d'", fd->id);
    if (asprintf(&xml,
                 "<domain type='kvm'%s><name>%s</name><uuid>%s</uuid>"
                 "<memory unit='KiB'>131072</memory><vcpu placement='static'>%u</vcpu>"
                 "%s%s%s<os><type arch='x86_64' machine='pc'>hvm</type></os>"
                 "<metadata>%s</metadata><devices>"
                 "<emulator>/usr/bin/qemu-system-x86_64</emulator></devices></domain>",
                 id, fd->name, fd->uuid, fd->nr_vcpus, pins[0] ? "<cputune>" : "", pins,
                 pins[0] ? "</cputune>" : "", meta) < 0)
        return NULL;
    return xml;
}

static int fake_xml(virt_dom *d, char **ret)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_XML, &fd);

    if (r < 0)
        return r;
    *ret = domain_xml(fd, true);
    return call_end(*ret ? 0 : -ENOMEM);
}

static bool fake_persistent(virt_dom *d)
{
    (void)d;
    return true;
}

static int fake_xml_inactive(virt_dom *d, char **ret)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_XML_INACTIVE, &fd);

    if (r < 0)
        return r;
    *ret = domain_xml(fd, false);
    return call_end(*ret ? 0 : -ENOMEM);
}

static int element_get(virt_dom *d, fake_call call, char **ret)
{
    fake_dom *fd;
    int r = call_begin(d, call, &fd);
    const char *e;

    if (r < 0)
        return r;
    e = call == FAKE_METADATA ? fd->balancer : fd->state;
    if (!e)
        return call_end(-ENOENT);
    *ret = strdup(e);
    return call_end(*ret ? 0 : -ENOMEM);
}

static int fake_metadata_get(virt_dom *d, char **ret)
{
    return element_get(d, FAKE_METADATA, ret);
}

static int fake_state_get(virt_dom *d, char **ret)
{
    return element_get(d, FAKE_STATE_GET, ret);
}

static int fake_state_set(virt_dom *d, const char *xml)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_STATE_SET, &fd);
    char *copy;

    if (r < 0)
        return r;
    copy = strdup(xml);
    if (!copy)
        return call_end(-ENOMEM);
    free(fd->state);
    fd->state = copy;
    return call_end(0);
}

static int fake_other(virt_dom *d)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_OTHER, &fd);

    if (r < 0)
        return r;
    snprintf(fake_error, sizeof(fake_error), "fake: not on the fake host");
    return call_end(-EPERM);
}

static int fake_qmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    (void)cmd;
    (void)ret_reply;
    return fake_other(d);
}

static int fake_vcpus(virt_dom *d, virt_vcpu **ret, unsigned *ret_n)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_VCPUS, &fd);
    virt_vcpu *v;

    if (r < 0)
        return r;
    v = calloc(fd->nr_vcpus, sizeof(*v));
    if (!v)
        return call_end(-ENOMEM);
    for (unsigned i = 0; i < fd->nr_vcpus; i++) {
        v[i].number = i;
        v[i].cpu_time_ns = fd->cpu_ns[i];
        v[i].affinity = fd->pin[i];
        v[i].cpu = cpuset_first(&fd->pin[i]);
    }
    *ret = v;
    *ret_n = fd->nr_vcpus;
    return call_end(0);
}

static int fake_pin_vcpu(virt_dom *d, unsigned vcpu, const vn_cpuset *cpus)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_PIN_VCPU, &fd);

    if (r < 0)
        return r;
    if (vcpu >= fd->nr_vcpus || cpuset_empty(cpus) || !cpuset_subset(cpus, &fh.all))
        return call_end(-EINVAL);
    fd->pin[vcpu] = *cpus;
    return call_end(0);
}

static int fake_emulator_pin(virt_dom *d, vn_cpuset *ret)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_EMULATOR_PIN, &fd);

    if (r < 0)
        return r;
    *ret = fd->emulator;
    return call_end(0);
}

static int fake_pin_emulator(virt_dom *d, const vn_cpuset *cpus)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_PIN_EMULATOR, &fd);

    if (r < 0)
        return r;
    if (cpuset_empty(cpus) || !cpuset_subset(cpus, &fh.all))
        return call_end(-EINVAL);
    fd->emulator = *cpus;
    return call_end(0);
}

static int fake_iothreads(virt_dom *d, unsigned **ret_ids, vn_cpuset **ret_pins, unsigned *ret_n)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_OTHER, &fd);

    if (r < 0)
        return r;
    *ret_ids = NULL;
    *ret_pins = NULL;
    *ret_n = 0; /* none */
    return call_end(0);
}

static int fake_pin_iothread(virt_dom *d, unsigned id, const vn_cpuset *cpus)
{
    (void)id;
    (void)cpus;
    return fake_other(d);
}

static int fake_numa_get(virt_dom *d, vn_mem_mode *ret_mode, char *nodeset, size_t len)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_NUMA_GET, &fd);

    if (r < 0)
        return r;
    *ret_mode = VN_MEM_NONE;
    if (len)
        nodeset[0] = '\0';
    return call_end(0);
}

static int fake_numa_set(virt_dom *d, const char *nodeset)
{
    (void)nodeset;
    return fake_other(d);
}

static int fake_hmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    (void)cmd;
    (void)ret_reply;
    return fake_other(d);
}

static const virt_ops fake_virt = {
    .last_error = fake_last_error,
    .open = fake_open,
    .close = fake_close,
    .list_running = fake_list_running,
    .dom_open = fake_dom_open,
    .dom_ref = fake_dom_ref,
    .dom_free = fake_dom_free_handle,
    .dom_ident = fake_ident,
    .dom_active = fake_active,
    .dom_job = fake_job,
    .dom_vcpu_poll = fake_vcpu_poll,
    .dom_xml = fake_xml,
    .dom_persistent = fake_persistent,
    .dom_xml_inactive = fake_xml_inactive,
    .metadata_get = fake_metadata_get,
    .state_get = fake_state_get,
    .state_set = fake_state_set,
    .qmp = fake_qmp,
    .hmp = fake_hmp,
    .vcpus = fake_vcpus,
    .pin_vcpu = fake_pin_vcpu,
    .emulator_pin = fake_emulator_pin,
    .pin_emulator = fake_pin_emulator,
    .iothreads = fake_iothreads,
    .pin_iothread = fake_pin_iothread,
    .numa_get = fake_numa_get,
    .numa_set_nodeset = fake_numa_set,
};

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
    for (unsigned n = 0; n < 2; n++) {
        char rel[64], text[128];
        snprintf(rel, sizeof(rel), "sys/devices/system/node/node%u/meminfo", n);
        snprintf(text, sizeof(text), "Node %u MemTotal: 8388608 kB\nNode %u MemFree: 6291456 kB\n",
                 n, n);
        write_file(rel, text);
    }
    write_file("etc/machine-id", "0123456789abcdef0123456789abcdef\n");
    write_file("run/libvirt/qemu/.keep", ""); /* no pid file: no QEMU process to read */
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
    vn_clock_use(&fake_clock);
    virt_use(&fake_virt);
    static char machine_id[128];
    snprintf(machine_id, sizeof(machine_id), "%s/etc/machine-id", fh.root);
    *host = (daemon_host){
        .topo = &fh.topo, .numa = &numa_libnuma, .root = fh.root, .machine_id = machine_id};
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
        if (fh.doms[i].hanging)
            abort(); /* a test left a call hanging */
    }
    memset(fh.doms, 0, sizeof(fh.doms));
    fh.down = false;
    fh.nr_events = 0;
    pthread_mutex_unlock(&fh.lock);
}

/* ---- domains ---- */

fake_dom *fake_dom_add(const char *name, unsigned nr_vcpus, const char *balancer)
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
    }
    fd->emulator = fd->emulator_defined;
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

/* ---- events, libvirtd ---- */

void fake_event_lifecycle(fake_dom *fd, virt_lifecycle ev, bool migrated)
{
    fake_event e = {.kind = FE_LIFECYCLE, .ev = ev, .migrated = migrated};

    snprintf(e.uuid, sizeof(e.uuid), "%s", fd->uuid);
    snprintf(e.name, sizeof(e.name), "%s", fd->name);
    queue_event(&e);
}

void fake_event_metadata(fake_dom *fd)
{
    fake_event e = {.kind = FE_METADATA};

    snprintf(e.uuid, sizeof(e.uuid), "%s", fd->uuid);
    snprintf(e.name, sizeof(e.name), "%s", fd->name);
    queue_event(&e);
}

void fake_libvirtd_stop(void)
{
    fake_event e = {.kind = FE_CLOSED};

    queue_event(&e);
    pthread_mutex_lock(&fh.lock);
    fh.down = true;
    pthread_mutex_unlock(&fh.lock);
}

void fake_libvirtd_start(void)
{
    pthread_mutex_lock(&fh.lock);
    fh.down = false;
    pthread_mutex_unlock(&fh.lock);
}

unsigned fake_connections(void)
{
    unsigned n;

    pthread_mutex_lock(&fh.lock);
    n = fh.opened;
    pthread_mutex_unlock(&fh.lock);
    return n;
}
