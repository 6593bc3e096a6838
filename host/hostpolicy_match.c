/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host policy: what the rules look at in a domain's XML, and the first rule that matches
 * (hostpolicy_match.h). The XML is untrusted (tenants name their VMs, and a fleet manager copies
 * their data into it: docs/security.md): its size is bounded before parsing, libxml2 reads it
 * without network, entities or DTD, and a value longer than HOSTPOLICY_VALUE_MAX matches no
 * glob (a truncated one could match what the whole does not).
 */
#include "hostpolicy_match.h"

#include <errno.h>
#include <fnmatch.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

#include "cpuset.h"
#include "hookxml.h"
#include "util.h"
#include "xmlsafe.h"

#define NOVA_NS_PREFIX  "http://openstack.org/xmlns/libvirt/nova/" /* 1.0, 1.1, 1.2 */
#define KUBEVIRT_NS     "http://kubevirt.io"
#define SHAPE_MAX_VCPUS 4096

/* At most HOOKXML_MAX bytes (a domain's XML), parsed as any untrusted text (xmlsafe.h). */
static xmlDoc *read_doc(const char *xml)
{
    return xmlsafe_read(xml, HOOKXML_MAX, "domain.xml");
}

static bool named(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* The first child element `name` of parent (in namespace ns_prefix when not NULL: an href
 * starting with it; else in none). */
static const xmlNode *child(const xmlNode *parent, const char *name, const char *ns_prefix)
{
    for (const xmlNode *c = parent ? parent->children : NULL; c; c = c->next) {
        if (!named(c, name))
            continue;
        if (!ns_prefix && !c->ns)
            return c;
        if (ns_prefix && c->ns && c->ns->href &&
            !strncmp((const char *)c->ns->href, ns_prefix, strlen(ns_prefix)))
            return c;
    }
    return NULL;
}

/* A child in the namespace of its parent (Nova's children are nova:..., KubeVirt's take the
 * default namespace of their parent). */
static const xmlNode *child_ns(const xmlNode *parent, const char *name)
{
    const char *ns = parent && parent->ns ? (const char *)parent->ns->href : NULL;

    for (const xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
        if (named(c, name) && c->ns && ns && c->ns->href && !strcmp((const char *)c->ns->href, ns))
            return c;
    return NULL;
}

/* A value as a fact: set only when it fits whole. */
static void fact(hp_facts *f, hp_key k, const xmlChar *v)
{
    if (!v || strlen((const char *)v) > HOSTPOLICY_VALUE_MAX)
        return;
    snprintf(f->value[k], sizeof(f->value[k]), "%s", (const char *)v);
    f->has[k] = true;
}

static void fact_prop(hp_facts *f, hp_key k, const xmlNode *n, const char *attr)
{
    _cleanup_(xmlsafe_charp) xmlChar *v = n ? xmlGetProp(n, (const xmlChar *)attr) : NULL;

    fact(f, k, v);
}

/* <nova:instance>: <nova:flavor name=...>, <nova:owner><nova:project uuid=...>NAME, and
 * <nova:root type="image" uuid=...> (a volume-backed instance has no image). */
static void nova_facts(const xmlNode *inst, hp_facts *f)
{
    const xmlNode *owner = child_ns(inst, "owner"), *project = child_ns(owner, "project");
    const xmlNode *root = child_ns(inst, "root");

    f->has[HP_NOVA] = true;
    fact_prop(f, HP_NOVA_FLAVOR, child_ns(inst, "flavor"), "name");
    fact_prop(f, HP_NOVA_PROJECT, project, "uuid");
    if (project) {
        _cleanup_(xmlsafe_charp) xmlChar *name = xmlNodeGetContent(project);
        if (name && strlen((const char *)name) <= HOSTPOLICY_VALUE_MAX) {
            snprintf(f->project_name, sizeof(f->project_name), "%s", (const char *)name);
            f->has_project_name = true;
        }
    }
    if (root) {
        _cleanup_(xmlsafe_charp) xmlChar *type = xmlGetProp(root, (const xmlChar *)"type");
        if (type && !strcmp((const char *)type, "image"))
            fact_prop(f, HP_NOVA_IMAGE, root, "uuid");
    }
}

/* <kubevirt xmlns="http://kubevirt.io"><uid>: a VMI. virt-launcher names its domain
 * NAMESPACE_NAME (a namespace has no '_'). */
static void kubevirt_facts(const xmlNode *kv, const char *domain_name, hp_facts *f)
{
    const xmlNode *uid = child_ns(kv, "uid");
    const char *us = domain_name ? strchr(domain_name, '_') : NULL;

    f->has[HP_KUBEVIRT] = true;
    if (uid) {
        _cleanup_(xmlsafe_charp) xmlChar *v = xmlNodeGetContent(uid);
        fact(f, HP_KUBEVIRT_UID, v);
    }
    if (us && us != domain_name && us[1] && (size_t)(us - domain_name) <= HOSTPOLICY_VALUE_MAX) {
        snprintf(f->value[HP_KUBEVIRT_NAMESPACE], sizeof(f->value[0]), "%.*s",
                 (int)(us - domain_name), domain_name);
        f->has[HP_KUBEVIRT_NAMESPACE] = true;
        fact(f, HP_KUBEVIRT_NAME, (const xmlChar *)us + 1);
    }
}

/*
 * `dedicated`: <cputune> pins every vCPU of <vcpu>N</vcpu> (each 0..N-1 exactly once) to one
 * CPU, and no two to the same one: Nova's hw:cpu_policy=dedicated, KubeVirt's
 * dedicatedCpuPlacement.
 */
static bool dedicated_shape(const xmlNode *root)
{
    const xmlNode *vcpu = child(root, "vcpu", NULL), *cputune = child(root, "cputune", NULL);
    _cleanup_(xmlsafe_charp) xmlChar *text = vcpu ? xmlNodeGetContent(vcpu) : NULL;
    uint8_t seen[SHAPE_MAX_VCPUS] = {0};
    vn_cpuset used = {0};
    uint64_t n, pinned = 0;

    if (!text || vn_parse_u64((const char *)text, 1, SHAPE_MAX_VCPUS, &n) < 0 || !cputune)
        return false;
    for (const xmlNode *c = cputune->children; c; c = c->next) {
        _cleanup_(xmlsafe_charp) xmlChar *id = NULL, *set = NULL;
        vn_cpuset s;
        uint64_t v;
        if (!named(c, "vcpupin"))
            continue;
        id = xmlGetProp(c, (const xmlChar *)"vcpu");
        set = xmlGetProp(c, (const xmlChar *)"cpuset");
        if (!id || !set || vn_parse_u64((const char *)id, 0, n - 1, &v) < 0 || seen[v])
            return false;
        if (cpuset_parse((const char *)set, &s) < 0 || cpuset_weight(&s) != 1)
            return false;
        for (unsigned cpu = 0; cpu < VN_MAX_CPUS; cpu++)
            if (cpuset_isset(&s, cpu)) {
                if (cpuset_isset(&used, cpu))
                    return false;
                cpuset_set(&used, cpu);
                break;
            }
        seen[v] = 1;
        pinned++;
    }
    return pinned == n;
}

int hostpolicy_facts(const char *live_xml, const char *shape_xml, hp_facts *ret)
{
    _cleanup_(xmlsafe_docp) xmlDoc *doc = live_xml ? read_doc(live_xml) : NULL;
    _cleanup_(xmlsafe_docp) xmlDoc *shape = shape_xml ? read_doc(shape_xml) : NULL;
    const xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL, *name, *meta;
    hp_facts f;

    memset(&f, 0, sizeof(f));
    if (!root || !named(root, "domain")) {
        *ret = f;
        return -EINVAL;
    }
    name = child(root, "name", NULL);
    if (name) {
        _cleanup_(xmlsafe_charp) xmlChar *v = xmlNodeGetContent(name);
        fact(&f, HP_NAME, v);
    }
    meta = child(root, "metadata", NULL);
    const xmlNode *inst = child(meta, "instance", NOVA_NS_PREFIX);
    if (inst)
        nova_facts(inst, &f);
    const xmlNode *kv = child(meta, "kubevirt", KUBEVIRT_NS);
    if (kv && !strcmp((const char *)kv->ns->href, KUBEVIRT_NS))
        kubevirt_facts(kv, f.has[HP_NAME] ? f.value[HP_NAME] : NULL, &f);
    /* the shape from the definition; a transient domain's from the live XML */
    const xmlNode *sroot = shape ? xmlDocGetRootElement(shape) : NULL;
    if (sroot && named(sroot, "domain"))
        f.has[HP_DEDICATED] = dedicated_shape(sroot);
    *ret = f;
    return 0;
}

/* No flags: '*' matches '/' and a leading '.', as an operator reading "name=*" expects. */
static bool glob_ok(const char *glob, const char *value)
{
    return fnmatch(glob, value, 0) == 0;
}

static bool match_one(const hp_match *m, const hp_facts *f)
{
    switch (m->key) {
    case HP_NOVA:
    case HP_KUBEVIRT:
    case HP_DEDICATED:
        return f->has[m->key];
    case HP_NOVA_PROJECT:
        return (f->has[m->key] && glob_ok(m->glob, f->value[m->key])) ||
               (f->has_project_name && glob_ok(m->glob, f->project_name));
    default:
        return f->has[m->key] && glob_ok(m->glob, f->value[m->key]);
    }
}

vn_mode hostpolicy_decide(const host_policy *p, const hp_facts *f, const char **ret_where)
{
    *ret_where = "default";
    if (!p)
        return VN_MODE_OFF;
    for (unsigned i = 0; i < p->nr_rules; i++) {
        const hp_rule *r = &p->rules[i];
        bool all = true;
        for (unsigned k = 0; k < r->nr && all; k++)
            all = match_one(&r->m[k], f);
        if (all) {
            *ret_where = r->where;
            return r->mode;
        }
    }
    return p->default_mode;
}
