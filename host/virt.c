/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The virt_* calls (virt.h), each to the implementation in use: libvirt's unless a test chose
 * its own (virt_use). */
#include "virt.h"

#include "virt_libvirt.h"

static const virt_ops *ops = &virt_libvirt_ops;

void virt_use(const virt_ops *o)
{
    ops = o ? o : &virt_libvirt_ops;
}

const char *virt_last_error(void)
{
    return ops->last_error();
}

int virt_open(const char *uri, const virt_callbacks *cb, virt_conn **ret)
{
    return ops->open(uri, cb, ret);
}

void virt_close(virt_conn *c)
{
    ops->close(c);
}

int virt_list_running(virt_conn *c, virt_dom_id **ret, size_t *ret_n)
{
    return ops->list_running(c, ret, ret_n);
}

int virt_dom_open(virt_conn *c, const char *uuid, virt_dom **ret)
{
    return ops->dom_open(c, uuid, ret);
}

int virt_dom_ref(virt_dom *d, virt_dom **ret)
{
    return ops->dom_ref(d, ret);
}

void virt_dom_free(virt_dom *d)
{
    ops->dom_free(d);
}

int virt_dom_ident(virt_dom *d, virt_dom_id *ret)
{
    return ops->dom_ident(d, ret);
}

bool virt_dom_active(virt_dom *d)
{
    return ops->dom_active(d);
}

int virt_dom_job(virt_dom *d, bool *ret_running)
{
    return ops->dom_job(d, ret_running);
}

int virt_dom_vcpu_poll(virt_dom *d, uint64_t *poll_ns, unsigned max, unsigned *found)
{
    return ops->dom_vcpu_poll(d, poll_ns, max, found);
}

int virt_dom_xml(virt_dom *d, char **ret)
{
    return ops->dom_xml(d, ret);
}

bool virt_dom_persistent(virt_dom *d)
{
    return ops->dom_persistent(d);
}

int virt_dom_xml_inactive(virt_dom *d, char **ret)
{
    return ops->dom_xml_inactive(d, ret);
}

int virt_metadata_get(virt_dom *d, char **ret)
{
    return ops->metadata_get(d, ret);
}

int virt_state_get(virt_dom *d, char **ret)
{
    return ops->state_get(d, ret);
}

int virt_state_set(virt_dom *d, const char *xml)
{
    return ops->state_set(d, xml);
}

int virt_qmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    return ops->qmp(d, cmd, ret_reply);
}

int virt_hmp(virt_dom *d, const char *cmd, char **ret_reply)
{
    return ops->hmp(d, cmd, ret_reply);
}

int virt_vcpus(virt_dom *d, virt_vcpu **ret, unsigned *ret_n)
{
    return ops->vcpus(d, ret, ret_n);
}

int virt_pin_vcpu(virt_dom *d, unsigned vcpu, const vn_cpuset *cpus)
{
    return ops->pin_vcpu(d, vcpu, cpus);
}

int virt_emulator_pin(virt_dom *d, vn_cpuset *ret)
{
    return ops->emulator_pin(d, ret);
}

int virt_pin_emulator(virt_dom *d, const vn_cpuset *cpus)
{
    return ops->pin_emulator(d, cpus);
}

int virt_iothreads(virt_dom *d, unsigned **ret_ids, vn_cpuset **ret_pins, unsigned *ret_n)
{
    return ops->iothreads(d, ret_ids, ret_pins, ret_n);
}

int virt_pin_iothread(virt_dom *d, unsigned id, const vn_cpuset *cpus)
{
    return ops->pin_iothread(d, id, cpus);
}

int virt_numa_get(virt_dom *d, vn_mem_mode *ret_mode, char *nodeset, size_t len)
{
    return ops->numa_get(d, ret_mode, nodeset, len);
}

int virt_numa_set_nodeset(virt_dom *d, const char *nodeset)
{
    return ops->numa_set_nodeset(d, nodeset);
}
