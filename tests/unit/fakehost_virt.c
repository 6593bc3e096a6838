/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fake libvirt of the fake host (fakehost.h): the virt_ops vnumad calls, its calls on
 * domains (the daemons, their connections and events: fakehost_daemons.c). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakehost_priv.h"

/* ---- calls ---- */

/*
 * The common start of a call on a domain: counted, hooked, hung (the call, or the domain's
 * daemon), failed. Returns 0 with the lock held, or -errno without it.
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
        fake_clock_move((uint64_t)(FAKE_HANG_JUMP_S * 1e9));
        while (fd->hang[call])
            pthread_cond_wait(&fh.released, &fh.lock);
        fd->hanging--;
    }
    fake_daemon_wait(h->conn->daemon);
    if (!fake_handle_alive(h)) {
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: no connection to libvirtd");
        return -ENOTCONN;
    }
    if (!fd->used || !fd->running || fd->daemon != h->conn->daemon) {
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: domain is not running");
        return -ESRCH;
    }
    if (fd->fail[call]) {
        int r = fd->fail[call];
        pthread_mutex_unlock(&fh.lock);
        fake_set_error("fake: call %d fails: %s", (int)call, strerror(-r));
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

/* ---- handles ---- */

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
    memset(ret, 0, sizeof(*ret)); /* (daemon_pid 0: the host's own libvirt) */
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
    fake_dom *fd;
    int r = call_begin(d, FAKE_STATS, &fd);

    if (r < 0)
        return r;
    *found = 0; /* TCG's statistics have no halt polling */
    for (unsigned v = 0; fd->kvm && v < fd->nr_vcpus && v < max; v++) {
        poll_ns[v] = fd->poll_ns[v];
        (*found)++;
    }
    return call_end(0);
}

/* The domain's XML: the live pins and <numatune> (live) or the definition's. Locked. */
static char *domain_xml(const fake_dom *fd, bool live)
{
    char *xml = NULL, pins[FAKE_MAX_VCPUS * 64] = "", meta[4096] = "", id[32] = "", mem[1024];
    char channel[512] = "";
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
    snprintf(meta, sizeof(meta), "%s%s", fd->balancer ? fd->balancer : "",
             fd->meta_extra ? fd->meta_extra : "");
    if (live)
        snprintf(id, sizeof(id), " id='%d'", fd->id);
    fake_qemu_xml(fd, mem, sizeof(mem));
    if (live && fd->channel)
        snprintf(channel, sizeof(channel),
                 "<channel type='unix'><source mode='bind' path='%s/channel/%s.agent'/>"
                 "<target type='virtio' name='org.vnuma.agent.0' state='disconnected'/>"
                 "</channel>",
                 fh.root, fd->name);
    if (asprintf(&xml,
                 "<domain type='kvm'%s><name>%s</name><uuid>%s</uuid>"
                 "%s<vcpu placement='static'>%u</vcpu>"
                 "%s%s%s%s<os><type arch='x86_64' machine='pc'>hvm</type></os>"
                 "<metadata>%s</metadata><devices>"
                 "<emulator>/usr/bin/qemu-system-x86_64</emulator>%s</devices></domain>",
                 id, fd->name, fd->uuid, mem, fd->nr_vcpus, pins[0] ? "<cputune>" : "", pins,
                 pins[0] ? "</cputune>" : "", live && fd->numatune ? fd->numatune : "", meta,
                 channel) < 0)
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
    fake_set_error("fake: not on the fake host");
    return call_end(-EPERM);
}

static int fake_qmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    fake_dom *fd;
    int r = call_begin(d, FAKE_QMP, &fd);

    if (r < 0)
        return r;
    r = fake_qemu_qmp(fd, cmd, ret_reply);
    if (r < 0)
        fake_set_error("fake: QMP %s", strerror(-r));
    return call_end(r);
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
    fake_qemu_sync(fd);
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
    fake_dom *fd;
    int r = call_begin(d, FAKE_HMP, &fd);

    if (r < 0)
        return r;
    r = fake_qemu_hmp(fd, cmd, ret_reply);
    if (r < 0)
        fake_set_error("fake: HMP %s", strerror(-r));
    return call_end(r);
}

const virt_ops fake_virt = {
    .last_error = fake_last_error,
    .open = fake_conn_open,
    .close = fake_conn_close,
    .list_running = fake_conn_list_running,
    .dom_open = fake_conn_dom_open,
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
