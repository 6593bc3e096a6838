/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The only file that includes <libvirt/libvirt.h>: the event loop, the
 * connection with its events, and the domain calls vnumad makes. libvirt's
 * errors are mapped to -errno here (virt.h) and its message kept for the
 * caller's log line.
 */
#include "virt.h"
#include "virt_libvirt.h"

#include <errno.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "connuri.h"
#include "util.h"

#define VIRT_METADATA_URI       "urn:vnuma:balancer:1"
#define VIRT_METADATA_KEY       "vnuma"
#define VIRT_STATE_URI          "urn:vnuma:state:1"
#define VIRT_STATE_KEY          "vnumad"
#define VIRT_KEEPALIVE_INTERVAL 5
#define VIRT_KEEPALIVE_COUNT    3

static __thread char last_error[512];
static uint64_t calls[VIRT_CALL_MAX];

#define COUNT(c) __atomic_fetch_add(&calls[c], 1, __ATOMIC_RELAXED)

const char *virt_call_name(virt_call c)
{
    static const char *const names[VIRT_CALL_MAX] = {
        [VIRT_CALL_LIST] = "list",
        [VIRT_CALL_LOOKUP] = "lookup",
        [VIRT_CALL_IS_ACTIVE] = "is-active",
        [VIRT_CALL_IS_PERSISTENT] = "is-persistent",
        [VIRT_CALL_XML] = "xml",
        [VIRT_CALL_XML_INACTIVE] = "xml-inactive",
        [VIRT_CALL_METADATA_GET] = "metadata-get",
        [VIRT_CALL_STATE_GET] = "state-get",
        [VIRT_CALL_STATE_SET] = "state-set",
        [VIRT_CALL_QMP] = "qmp",
        [VIRT_CALL_HMP] = "hmp",
        [VIRT_CALL_INFO] = "info",
        [VIRT_CALL_VCPUS] = "vcpus",
        [VIRT_CALL_PIN_VCPU] = "pin-vcpu",
        [VIRT_CALL_EMULATOR_GET] = "emulator-get",
        [VIRT_CALL_PIN_EMULATOR] = "pin-emulator",
        [VIRT_CALL_IOTHREADS] = "iothreads",
        [VIRT_CALL_PIN_IOTHREAD] = "pin-iothread",
        [VIRT_CALL_NUMA_GET] = "numa-get",
        [VIRT_CALL_NUMA_SET] = "numa-set",
        [VIRT_CALL_JOB] = "job-info",
        [VIRT_CALL_STATS] = "stats",
    };
    return (unsigned)c < VIRT_CALL_MAX ? names[c] : "unknown";
}

void virt_call_counts(uint64_t out[VIRT_CALL_MAX])
{
    for (unsigned i = 0; i < VIRT_CALL_MAX; i++)
        out[i] = __atomic_load_n(&calls[i], __ATOMIC_RELAXED);
}

static const char *lv_last_error(void)
{
    return last_error;
}

/* Map the thread's last libvirt error to -errno and remember its message. */
static int virt_error(void)
{
    virErrorPtr e = virGetLastError();

    if (!e) {
        snprintf(last_error, sizeof(last_error), "unknown libvirt error");
        return -EIO;
    }
    snprintf(last_error, sizeof(last_error), "%s", e->message ? e->message : "libvirt error");
    /* a system error carries the errno: the QEMU process may just have gone away */
    if (e->code == VIR_ERR_SYSTEM_ERROR && e->int1 == ESRCH)
        return -ESRCH;
    switch (e->code) {
    case VIR_ERR_NO_DOMAIN:
    case VIR_ERR_OPERATION_INVALID: /* domain is not running */
        return -ESRCH;
    case VIR_ERR_NO_DOMAIN_METADATA:
        return -ENOENT;
    case VIR_ERR_NO_CONNECT:
    case VIR_ERR_INVALID_CONN:
    case VIR_ERR_RPC:
    case VIR_ERR_SYSTEM_ERROR:
        if (e->domain == VIR_FROM_RPC || e->code != VIR_ERR_SYSTEM_ERROR)
            return -ENOTCONN;
        return -EIO;
    case VIR_ERR_OPERATION_DENIED:
    case VIR_ERR_AUTH_FAILED:
    case VIR_ERR_NO_SUPPORT:
    case VIR_ERR_OPERATION_UNSUPPORTED:
        return -EPERM;
    case VIR_ERR_INVALID_ARG:
    case VIR_ERR_CONFIG_UNSUPPORTED:
    case VIR_ERR_XML_ERROR:
        return -EINVAL;
    case VIR_ERR_OPERATION_TIMEOUT:
    case VIR_ERR_AGENT_UNRESPONSIVE:
        return -EAGAIN;
    default:
        return -EIO;
    }
}

/* ---- connection ---- */

struct virt_conn {
    virConnectPtr conn;
    virt_callbacks cb;
    int cb_lifecycle, cb_metadata, cb_qmp, cb_added, cb_removed, cb_tunable;
    bool close_registered;
    pid_t daemon_pid; /* the daemon listening on the URI's socket= path (0: none named) */
    uid_t daemon_uid; /* ... and its user */
};

struct virt_dom {
    virDomainPtr dom;
    pid_t daemon_pid; /* its connection's */
    uid_t daemon_uid;
};

static void dom_ids(virDomainPtr dom, char *uuid, const char **name)
{
    if (virDomainGetUUIDString(dom, uuid) < 0)
        uuid[0] = '\0';
    *name = virDomainGetName(dom);
    if (!*name)
        *name = "";
}

static int on_lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
    virt_conn *c = opaque;
    char uuid[VIR_UUID_STRING_BUFLEN];
    const char *name;
    virt_lifecycle ev = VIRT_EVENT_OTHER;
    bool migrated = false;

    (void)conn;
    dom_ids(dom, uuid, &name);
    if (event == VIR_DOMAIN_EVENT_STARTED) {
        ev = VIRT_EVENT_STARTED;
        migrated = detail == VIR_DOMAIN_EVENT_STARTED_MIGRATED;
    } else if (event == VIR_DOMAIN_EVENT_STOPPED) {
        ev = VIRT_EVENT_STOPPED;
        migrated = detail == VIR_DOMAIN_EVENT_STOPPED_MIGRATED;
    } else if (event == VIR_DOMAIN_EVENT_RESUMED) {
        ev = VIRT_EVENT_RESUMED;
        /* the incoming migration finished (or post-copy runs the guest here now) */
        migrated = detail == VIR_DOMAIN_EVENT_RESUMED_MIGRATED ||
                   detail == VIR_DOMAIN_EVENT_RESUMED_POSTCOPY;
    }
    if (c->cb.lifecycle)
        c->cb.lifecycle(c->cb.opaque, uuid, name, ev, migrated);
    return 0;
}

static void on_metadata(virConnectPtr conn, virDomainPtr dom, int type, const char *nsuri,
                        void *opaque)
{
    virt_conn *c = opaque;
    char uuid[VIR_UUID_STRING_BUFLEN];
    const char *name;

    (void)conn;
    if (type != VIR_DOMAIN_METADATA_ELEMENT || !nsuri || strcmp(nsuri, VIRT_METADATA_URI) != 0)
        return;
    dom_ids(dom, uuid, &name);
    if (c->cb.metadata)
        c->cb.metadata(c->cb.opaque, uuid, name);
}

static void on_tunable(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params,
                       int nparams, void *opaque)
{
    virt_conn *c = opaque;
    char uuid[VIR_UUID_STRING_BUFLEN];
    const char *name;

    (void)conn;
    (void)params;
    (void)nparams;
    dom_ids(dom, uuid, &name);
    if (c->cb.tunable)
        c->cb.tunable(c->cb.opaque, uuid, name);
}

/* QMP events: only VSERPORT_CHANGE {"id": "channel0", "open": true} is of interest. */
static void on_qmp(virConnectPtr conn, virDomainPtr dom, const char *event, long long seconds,
                   unsigned int micros, const char *details, void *opaque)
{
    virt_conn *c = opaque;
    char uuid[VIR_UUID_STRING_BUFLEN], id[128] = "";
    const char *name, *p;
    bool open;

    (void)conn;
    (void)seconds;
    (void)micros;
    if (!event || strcmp(event, "VSERPORT_CHANGE") != 0 || !details || !c->cb.vserport)
        return;
    /* details is QEMU's JSON; the daemon re-parses when it needs more than this */
    open = strstr(details, "\"open\":true") || strstr(details, "\"open\": true");
    p = strstr(details, "\"id\"");
    if (p && (p = strchr(p + 4, '"'))) {
        size_t n = strcspn(p + 1, "\"");
        snprintf(id, sizeof(id), "%.*s", (int)VN_MIN(n, sizeof(id) - 1), p + 1);
    }
    dom_ids(dom, uuid, &name);
    c->cb.vserport(c->cb.opaque, uuid, name, id, open);
}

static void on_device(virt_conn *c, virDomainPtr dom, const char *alias, bool added)
{
    char uuid[VIR_UUID_STRING_BUFLEN];
    const char *name;

    if (!alias || !c->cb.device)
        return;
    dom_ids(dom, uuid, &name);
    c->cb.device(c->cb.opaque, uuid, name, alias, added);
}

static void on_device_added(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque)
{
    (void)conn;
    on_device(opaque, dom, alias, true);
}

static void on_device_removed(virConnectPtr conn, virDomainPtr dom, const char *alias, void *opaque)
{
    (void)conn;
    on_device(opaque, dom, alias, false);
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
    virt_conn *c = opaque;

    (void)conn;
    (void)reason;
    if (c->cb.closed)
        c->cb.closed(c->cb.opaque);
}

static void lv_close(virt_conn *c);

static int lv_open(const char *uri, const virt_callbacks *cb, virt_conn **ret)
{
    virt_conn *c = calloc(1, sizeof(*c));
    int r;

    if (!c)
        return -ENOMEM;
    c->cb = *cb;
    c->cb_lifecycle = c->cb_metadata = c->cb_qmp = c->cb_added = c->cb_removed = c->cb_tunable = -1;
    c->conn = virConnectOpen(uri ? uri : "qemu:///system");
    if (!c->conn) {
        r = virt_error();
        free(c);
        return r == -ESRCH ? -ENOTCONN : r;
    }
    if (virConnectSetKeepAlive(c->conn, VIRT_KEEPALIVE_INTERVAL, VIRT_KEEPALIVE_COUNT) < 0)
        goto error;
    if (virConnectRegisterCloseCallback(c->conn, on_close, c, NULL) < 0)
        goto error;
    c->close_registered = true;
    c->cb_lifecycle =
        virConnectDomainEventRegisterAny(c->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                         VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), c, NULL);
    c->cb_metadata =
        virConnectDomainEventRegisterAny(c->conn, NULL, VIR_DOMAIN_EVENT_ID_METADATA_CHANGE,
                                         VIR_DOMAIN_EVENT_CALLBACK(on_metadata), c, NULL);
    c->cb_added =
        virConnectDomainEventRegisterAny(c->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_ADDED,
                                         VIR_DOMAIN_EVENT_CALLBACK(on_device_added), c, NULL);
    c->cb_removed =
        virConnectDomainEventRegisterAny(c->conn, NULL, VIR_DOMAIN_EVENT_ID_DEVICE_REMOVED,
                                         VIR_DOMAIN_EVENT_CALLBACK(on_device_removed), c, NULL);
    c->cb_tunable = virConnectDomainEventRegisterAny(
        c->conn, NULL, VIR_DOMAIN_EVENT_ID_TUNABLE, VIR_DOMAIN_EVENT_CALLBACK(on_tunable), c, NULL);
    if (c->cb_lifecycle < 0 || c->cb_metadata < 0 || c->cb_added < 0 || c->cb_removed < 0 ||
        c->cb_tunable < 0)
        goto error;
    /* Event registration does not taint domains (only monitor commands do). */
    c->cb_qmp = virConnectDomainQemuMonitorEventRegister(c->conn, NULL, "VSERPORT_CHANGE", on_qmp,
                                                         c, NULL, 0);
    /* (after the open: the daemon that answered it, or one that took its place since, whose
     * connection then drops) */
    r = conn_uri_daemon(uri ? uri : "", &c->daemon_pid, &c->daemon_uid);
    if (r < 0) {
        snprintf(last_error, sizeof(last_error), "cannot tell the daemon behind the socket: %s",
                 strerror(-r));
        lv_close(c);
        return r;
    }
    *ret = c;
    return 0;
error:
    r = virt_error();
    lv_close(c);
    return r;
}

static void lv_close(virt_conn *c)
{
    if (!c)
        return;
    if (c->conn) {
        /* on a dead connection these fail; that is fine */
        if (c->cb_lifecycle >= 0)
            (void)virConnectDomainEventDeregisterAny(c->conn, c->cb_lifecycle);
        if (c->cb_metadata >= 0)
            (void)virConnectDomainEventDeregisterAny(c->conn, c->cb_metadata);
        if (c->cb_qmp >= 0)
            (void)virConnectDomainQemuMonitorEventDeregister(c->conn, c->cb_qmp);
        if (c->cb_added >= 0)
            (void)virConnectDomainEventDeregisterAny(c->conn, c->cb_added);
        if (c->cb_removed >= 0)
            (void)virConnectDomainEventDeregisterAny(c->conn, c->cb_removed);
        if (c->cb_tunable >= 0)
            (void)virConnectDomainEventDeregisterAny(c->conn, c->cb_tunable);
        if (c->close_registered)
            (void)virConnectUnregisterCloseCallback(c->conn, on_close);
        (void)virConnectClose(c->conn);
    }
    free(c);
}

/* ---- domains ---- */

static int lv_list_running(virt_conn *c, virt_dom_id **ret, size_t *ret_n)
{
    virDomainPtr *doms = NULL;
    virt_dom_id *out;
    int n = (COUNT(VIRT_CALL_LIST),
             virConnectListAllDomains(c->conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE));
    size_t k = 0;

    if (n < 0)
        return virt_error();
    out = calloc(n ? (size_t)n : 1, sizeof(*out));
    if (!out) {
        for (int i = 0; i < n; i++)
            virDomainFree(doms[i]);
        free(doms);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        const char *name;
        dom_ids(doms[i], out[k].uuid, &name);
        snprintf(out[k].name, sizeof(out[k].name), "%s", name);
        out[k].id = (int)virDomainGetID(doms[i]);
        out[k].daemon_pid = c->daemon_pid;
        out[k].daemon_uid = c->daemon_uid;
        if (out[k].uuid[0])
            k++;
        virDomainFree(doms[i]);
    }
    free(doms);
    *ret = out;
    *ret_n = k;
    return 0;
}

static int lv_dom_open(virt_conn *c, const char *uuid, virt_dom **ret)
{
    virt_dom *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    COUNT(VIRT_CALL_LOOKUP);
    d->dom = virDomainLookupByUUIDString(c->conn, uuid);
    if (!d->dom) {
        int r = virt_error();
        free(d);
        return r;
    }
    d->daemon_pid = c->daemon_pid;
    d->daemon_uid = c->daemon_uid;
    *ret = d;
    return 0;
}

static int lv_dom_ref(virt_dom *d, virt_dom **ret)
{
    virt_dom *r = calloc(1, sizeof(*r));

    if (!r)
        return -ENOMEM;
    if (virDomainRef(d->dom) < 0) {
        free(r);
        return virt_error();
    }
    r->dom = d->dom;
    r->daemon_pid = d->daemon_pid;
    r->daemon_uid = d->daemon_uid;
    *ret = r;
    return 0;
}

static void lv_dom_free(virt_dom *d)
{
    if (!d)
        return;
    if (d->dom)
        virDomainFree(d->dom);
    free(d);
}

static int lv_dom_ident(virt_dom *d, virt_dom_id *ret)
{
    virt_dom_id id;
    const char *name;
    unsigned int vid;

    dom_ids(d->dom, id.uuid, &name);
    snprintf(id.name, sizeof(id.name), "%s", name);
    vid = virDomainGetID(d->dom);
    id.id = vid == (unsigned int)-1 ? -1 : (int)vid;
    id.daemon_pid = d->daemon_pid;
    id.daemon_uid = d->daemon_uid;
    if (id.id < 0)
        return -ESRCH;
    *ret = id;
    return 0;
}

static bool lv_dom_active(virt_dom *d)
{
    COUNT(VIRT_CALL_IS_ACTIVE);
    return virDomainIsActive(d->dom) == 1;
}

static int lv_dom_job(virt_dom *d, bool *ret_running)
{
    virDomainJobInfo info;

    COUNT(VIRT_CALL_JOB);
    if (virDomainGetJobInfo(d->dom, &info) < 0)
        return virt_error();
    *ret_running = info.type == VIR_DOMAIN_JOB_BOUNDED || info.type == VIR_DOMAIN_JOB_UNBOUNDED;
    return 0;
}

unsigned virt_vcpu_poll_parse(const char *const *names, const uint64_t *values, size_t n,
                              uint64_t *poll_ns, unsigned max)
{
    _cleanup_free_ uint8_t *have = calloc(max ? max : 1, 1); /* bit 0 success, bit 1 fail */
    unsigned found = 0;

    for (unsigned i = 0; i < max; i++)
        poll_ns[i] = 0;
    for (size_t i = 0; have && i < n; i++) {
        char kind[32], tail[8];
        unsigned v;
        int bit;
        if (!names[i] || sscanf(names[i], "vcpu.%u.%31[a-z_].%7s", &v, kind, tail) != 3 ||
            v >= max || strcmp(tail, "sum") != 0)
            continue;
        bit = !strcmp(kind, "halt_poll_success_ns") ? 1
              : !strcmp(kind, "halt_poll_fail_ns")  ? 2
                                                    : 0;
        if (!bit || (have[v] & bit) || values[i] > UINT64_MAX - 1 - poll_ns[v])
            continue;
        have[v] |= (uint8_t)bit;
        poll_ns[v] += values[i];
    }
    for (unsigned i = 0; i < max; i++) {
        if (have && have[i] == 3)
            found++;
        else
            poll_ns[i] = UINT64_MAX;
    }
    return found;
}

static int lv_dom_vcpu_poll(virt_dom *d, uint64_t *poll_ns, unsigned max, unsigned *found)
{
    virDomainPtr doms[] = {d->dom, NULL};
    virDomainStatsRecordPtr *recs = NULL;
    const char **names = NULL;
    uint64_t *values = NULL;
    size_t k = 0;
    int n, r = 0;

    COUNT(VIRT_CALL_STATS);
    *found = 0;
    n = virDomainListGetStats(doms, VIR_DOMAIN_STATS_VCPU, &recs,
                              VIR_CONNECT_GET_ALL_DOMAINS_STATS_NOWAIT);
    if (n < 0)
        return virt_error();
    if (n > 0 && recs[0]->nparams > 0) {
        names = calloc((size_t)recs[0]->nparams, sizeof(*names));
        values = calloc((size_t)recs[0]->nparams, sizeof(*values));
        if (!names || !values) {
            r = -ENOMEM;
            goto out;
        }
        for (int i = 0; i < recs[0]->nparams; i++) {
            const virTypedParameter *p = &recs[0]->params[i];
            if (p->type != VIR_TYPED_PARAM_ULLONG)
                continue;
            names[k] = p->field;
            values[k++] = p->value.ul;
        }
    }
    *found = virt_vcpu_poll_parse(names, values, k, poll_ns, max);
out:
    free(names);
    free(values);
    virDomainStatsRecordListFree(recs);
    return r;
}

static int lv_dom_xml(virt_dom *d, char **ret)
{
    char *x;

    COUNT(VIRT_CALL_XML);
    x = virDomainGetXMLDesc(d->dom, 0);

    if (!x)
        return virt_error();
    *ret = x;
    return 0;
}

static bool lv_dom_persistent(virt_dom *d)
{
    COUNT(VIRT_CALL_IS_PERSISTENT);
    return virDomainIsPersistent(d->dom) == 1;
}

static int lv_dom_xml_inactive(virt_dom *d, char **ret)
{
    char *x;

    COUNT(VIRT_CALL_XML_INACTIVE);
    x = virDomainGetXMLDesc(d->dom, VIR_DOMAIN_XML_INACTIVE);

    if (!x)
        return virt_error();
    *ret = x;
    return 0;
}

/* One element of the live metadata, by its namespace URI, counted as `call`. */
static int metadata_element(virt_dom *d, const char *uri, virt_call call, char **ret)
{
    char *x;

    COUNT(call);
    x = virDomainGetMetadata(d->dom, VIR_DOMAIN_METADATA_ELEMENT, uri, VIR_DOMAIN_AFFECT_LIVE);
    if (!x)
        return virt_error();
    *ret = x;
    return 0;
}

static int lv_metadata_get(virt_dom *d, char **ret)
{
    return metadata_element(d, VIRT_METADATA_URI, VIRT_CALL_METADATA_GET, ret);
}

static int lv_state_get(virt_dom *d, char **ret)
{
    return metadata_element(d, VIRT_STATE_URI, VIRT_CALL_STATE_GET, ret);
}

static int lv_state_set(virt_dom *d, const char *xml)
{
    COUNT(VIRT_CALL_STATE_SET);
    if (virDomainSetMetadata(d->dom, VIR_DOMAIN_METADATA_ELEMENT, xml, VIRT_STATE_KEY,
                             VIRT_STATE_URI, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    return 0;
}

static int monitor(virt_dom *d, const char *cmd, unsigned int flags, char **ret_reply)
{
    char *reply = NULL;

    COUNT(flags ? VIRT_CALL_HMP : VIRT_CALL_QMP);
    if (virDomainQemuMonitorCommand(d->dom, cmd, &reply, flags) < 0) {
        virErrorPtr e = virGetLastError();
        /* QMP's own errors come back in the reply: a failure here is the monitor itself
         * breaking under the command ("Unable to read from monitor: Connection reset by
         * peer", "End of file from qemu monitor"): QEMU is exiting, the domain is gone */
        bool monitor_io = e && e->domain == VIR_FROM_QEMU &&
                          (e->code == VIR_ERR_SYSTEM_ERROR || e->code == VIR_ERR_OPERATION_FAILED);
        int r = virt_error();

        if (r != -ESRCH && (monitor_io || virDomainIsActive(d->dom) == 0))
            r = -ESRCH;
        return r;
    }
    *ret_reply = reply;
    return 0;
}

static int lv_qmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    return monitor(d, cmd, 0, ret_reply);
}

static int lv_hmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    return monitor(d, cmd, VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP, ret_reply);
}

static void map_to_cpuset(const unsigned char *map, int maplen, vn_cpuset *out)
{
    cpuset_zero(out);
    for (int i = 0; i < maplen * 8 && i < VN_MAX_CPUS; i++)
        if (VIR_CPU_USABLE(map, maplen, 0, i))
            cpuset_set(out, (unsigned)i);
}

static int cpuset_to_map(const vn_cpuset *s, unsigned char **ret, int *ret_len)
{
    int maplen = VIR_CPU_MAPLEN(VN_MAX_CPUS);
    unsigned char *map = calloc((size_t)maplen, 1);

    if (!map)
        return -ENOMEM;
    CPUSET_FOREACH(cpu, s)
    VIR_USE_CPU(map, cpu);
    *ret = map;
    *ret_len = maplen;
    return 0;
}

static int lv_vcpus(virt_dom *d, virt_vcpu **ret, unsigned *ret_n)
{
    virDomainInfo info;
    _cleanup_free_ virVcpuInfoPtr vi = NULL;
    _cleanup_free_ unsigned char *maps = NULL;
    int maplen = VIR_CPU_MAPLEN(VN_MAX_CPUS), n;
    virt_vcpu *out;

    COUNT(VIRT_CALL_INFO);
    if (virDomainGetInfo(d->dom, &info) < 0)
        return virt_error();
    if (info.nrVirtCpu == 0 || info.nrVirtCpu > 4096)
        return -EINVAL;
    vi = calloc(info.nrVirtCpu, sizeof(*vi));
    maps = calloc(info.nrVirtCpu, (size_t)maplen);
    if (!vi || !maps)
        return -ENOMEM;
    COUNT(VIRT_CALL_VCPUS);
    n = virDomainGetVcpus(d->dom, vi, (int)info.nrVirtCpu, maps, maplen);
    if (n < 0)
        return virt_error();
    out = calloc(n ? (size_t)n : 1, sizeof(*out));
    if (!out)
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        out[i].number = vi[i].number;
        out[i].cpu_time_ns = vi[i].cpuTime;
        out[i].cpu = vi[i].cpu;
        map_to_cpuset(VIR_GET_CPUMAP(maps, maplen, i), maplen, &out[i].affinity);
    }
    *ret = out;
    *ret_n = (unsigned)n;
    return 0;
}

static int lv_pin_vcpu(virt_dom *d, unsigned vcpu, const vn_cpuset *cpus)
{
    _cleanup_free_ unsigned char *map = NULL;
    int maplen, r = cpuset_to_map(cpus, &map, &maplen);

    if (r < 0)
        return r;
    COUNT(VIRT_CALL_PIN_VCPU);
    if (virDomainPinVcpuFlags(d->dom, vcpu, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    return 0;
}

static int lv_emulator_pin(virt_dom *d, vn_cpuset *ret)
{
    int maplen = VIR_CPU_MAPLEN(VN_MAX_CPUS);
    _cleanup_free_ unsigned char *map = calloc((size_t)maplen, 1);

    if (!map)
        return -ENOMEM;
    COUNT(VIRT_CALL_EMULATOR_GET);
    if (virDomainGetEmulatorPinInfo(d->dom, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    map_to_cpuset(map, maplen, ret);
    return 0;
}

static int lv_pin_emulator(virt_dom *d, const vn_cpuset *cpus)
{
    _cleanup_free_ unsigned char *map = NULL;
    int maplen, r = cpuset_to_map(cpus, &map, &maplen);

    if (r < 0)
        return r;
    COUNT(VIRT_CALL_PIN_EMULATOR);
    if (virDomainPinEmulator(d->dom, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    return 0;
}

static int lv_iothreads(virt_dom *d, unsigned **ret_ids, vn_cpuset **ret_pins, unsigned *ret_n)
{
    virDomainIOThreadInfoPtr *info = NULL;
    unsigned *ids;
    vn_cpuset *pins;
    int n = (COUNT(VIRT_CALL_IOTHREADS),
             virDomainGetIOThreadInfo(d->dom, &info, VIR_DOMAIN_AFFECT_LIVE));

    if (n < 0)
        return virt_error();
    ids = calloc(n ? (size_t)n : 1, sizeof(*ids));
    pins = calloc(n ? (size_t)n : 1, sizeof(*pins));
    for (int i = 0; i < n; i++) {
        if (ids && pins) {
            ids[i] = info[i]->iothread_id;
            map_to_cpuset(info[i]->cpumap, info[i]->cpumaplen, &pins[i]);
        }
        virDomainIOThreadInfoFree(info[i]);
    }
    free(info);
    if (!ids || !pins) {
        free(ids);
        free(pins);
        return -ENOMEM;
    }
    *ret_ids = ids;
    *ret_pins = pins;
    *ret_n = (unsigned)n;
    return 0;
}

static int lv_pin_iothread(virt_dom *d, unsigned id, const vn_cpuset *cpus)
{
    _cleanup_free_ unsigned char *map = NULL;
    int maplen, r = cpuset_to_map(cpus, &map, &maplen);

    if (r < 0)
        return r;
    COUNT(VIRT_CALL_PIN_IOTHREAD);
    if (virDomainPinIOThread(d->dom, id, map, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    return 0;
}

static int lv_numa_get(virt_dom *d, vn_mem_mode *ret_mode, char *nodeset, size_t len)
{
    virTypedParameterPtr params = NULL;
    int nparams = 0, mode = -1;
    const char *set = "";

    COUNT(VIRT_CALL_NUMA_GET);
    if (virDomainGetNumaParameters(d->dom, NULL, &nparams, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    params = calloc(nparams ? (size_t)nparams : 1, sizeof(*params));
    if (!params)
        return -ENOMEM;
    if (virDomainGetNumaParameters(d->dom, params, &nparams, VIR_DOMAIN_AFFECT_LIVE) < 0) {
        int r = virt_error();
        free(params);
        return r;
    }
    for (int i = 0; i < nparams; i++) {
        if (strcmp(params[i].field, VIR_DOMAIN_NUMA_MODE) == 0 &&
            params[i].type == VIR_TYPED_PARAM_INT)
            mode = params[i].value.i;
        else if (strcmp(params[i].field, VIR_DOMAIN_NUMA_NODESET) == 0 &&
                 params[i].type == VIR_TYPED_PARAM_STRING && params[i].value.s)
            set = params[i].value.s;
    }
    snprintf(nodeset, len, "%s", set);
    /* libvirt reports mode strict when no numatune was given; an empty nodeset says "none" */
    switch (mode) {
    case VIR_DOMAIN_NUMATUNE_MEM_STRICT:
        *ret_mode = nodeset[0] ? VN_MEM_STRICT : VN_MEM_NONE;
        break;
    case VIR_DOMAIN_NUMATUNE_MEM_PREFERRED:
        *ret_mode = VN_MEM_PREFERRED;
        break;
    case VIR_DOMAIN_NUMATUNE_MEM_INTERLEAVE:
        *ret_mode = VN_MEM_INTERLEAVE;
        break;
#ifdef VIR_DOMAIN_NUMATUNE_MEM_RESTRICTIVE
    case VIR_DOMAIN_NUMATUNE_MEM_RESTRICTIVE:
        *ret_mode = VN_MEM_RESTRICTIVE;
        break;
#endif
    default:
        *ret_mode = VN_MEM_NONE;
        break;
    }
    virTypedParamsFree(params, nparams);
    return 0;
}

static int lv_numa_set_nodeset(virt_dom *d, const char *nodeset)
{
    virTypedParameter p;

    memset(&p, 0, sizeof(p));
    snprintf(p.field, sizeof(p.field), "%s", VIR_DOMAIN_NUMA_NODESET);
    p.type = VIR_TYPED_PARAM_STRING;
    p.value.s = (char *)nodeset;
    COUNT(VIRT_CALL_NUMA_SET);
    if (virDomainSetNumaParameters(d->dom, &p, 1, VIR_DOMAIN_AFFECT_LIVE) < 0)
        return virt_error();
    return 0;
}

/* libvirt's implementation of virt_ops (virt.h): every virt_* call of the daemon. */
const virt_ops virt_libvirt_ops = {
    .last_error = lv_last_error,
    .open = lv_open,
    .close = lv_close,
    .list_running = lv_list_running,
    .dom_open = lv_dom_open,
    .dom_ref = lv_dom_ref,
    .dom_free = lv_dom_free,
    .dom_ident = lv_dom_ident,
    .dom_active = lv_dom_active,
    .dom_job = lv_dom_job,
    .dom_vcpu_poll = lv_dom_vcpu_poll,
    .dom_xml = lv_dom_xml,
    .dom_persistent = lv_dom_persistent,
    .dom_xml_inactive = lv_dom_xml_inactive,
    .metadata_get = lv_metadata_get,
    .state_get = lv_state_get,
    .state_set = lv_state_set,
    .qmp = lv_qmp,
    .hmp = lv_hmp,
    .vcpus = lv_vcpus,
    .pin_vcpu = lv_pin_vcpu,
    .emulator_pin = lv_emulator_pin,
    .pin_emulator = lv_pin_emulator,
    .iothreads = lv_iothreads,
    .pin_iothread = lv_pin_iothread,
    .numa_get = lv_numa_get,
    .numa_set_nodeset = lv_numa_set_nodeset,
};
