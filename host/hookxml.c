/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The incoming domain's XML, read for its placement and written back with it (hookxml.h). */
#include "hookxml.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "carried.h"
#include "domxml.h"
#include "json.h"
#include "metadata.h"
#include "util.h"
#include "xmlsafe.h"

#define BALANCER_NS "urn:vnuma:balancer:1"
#define STATE_NS    "urn:vnuma:state:1"
#define STATE_KEY   "vnumad" /* the prefix libvirt gives vnumad's element (virt_libvirt.c) */

static void buf_freep(xmlBuffer **b)
{
    if (*b)
        xmlBufferFree(*b);
}

/* The text is the source host's and its tenants' (xmlsafe.h). */
static xmlDoc *read_doc(const char *xml)
{
    return xmlsafe_read(xml, HOOKXML_MAX, "domain.xml");
}

static xmlNode *child(const xmlNode *parent, const char *name)
{
    for (xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0)
            return c;
    return NULL;
}

/* The child of <metadata> in namespace ns, NULL none. */
static xmlNode *meta_element(const xmlNode *root, const char *ns)
{
    for (xmlNode *c = child(root, "metadata") ? child(root, "metadata")->children : NULL; c;
         c = c->next)
        if (c->type == XML_ELEMENT_NODE && c->ns && c->ns->href &&
            xmlStrcmp(c->ns->href, (const xmlChar *)ns) == 0)
            return c;
    return NULL;
}

/*
 * The element as text, with the declarations of the namespaces it uses: libvirt writes a
 * metadata element with its own, an XML rewritten on the way may declare them on <domain>.
 * A copy in a document of its own declares them on its root.
 */
static char *element_text(const xmlNode *n)
{
    _cleanup_(buf_freep) xmlBuffer *b = xmlBufferCreate();
    _cleanup_(xmlsafe_docp) xmlDoc *own = xmlNewDoc((const xmlChar *)"1.0");
    xmlNode *copy = own ? xmlDocCopyNode((xmlNode *)n, own, 1) : NULL;

    if (!b || !copy)
        return NULL;
    xmlDocSetRootElement(own, copy);
    if (xmlNodeDump(b, own, copy, 0, 0) < 0)
        return NULL;
    return strdup((const char *)xmlBufferContent(b));
}

/* Does every element child of n have this name and mode="preferred"? */
static bool all_preferred(const xmlNode *numatune)
{
    for (const xmlNode *c = numatune->children; c; c = c->next) {
        _cleanup_(xmlsafe_charp) xmlChar *mode = NULL;
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrcmp(c->name, (const xmlChar *)"memnode") != 0 &&
            xmlStrcmp(c->name, (const xmlChar *)"memory") != 0)
            return false;
        mode = xmlGetProp(c, (const xmlChar *)"mode");
        if (!mode || xmlStrcmp(mode, (const xmlChar *)"preferred") != 0)
            return false;
    }
    return true;
}

/*
 * Were the vCPU pins of the source's originals no pins at all: every vCPU the same set, and
 * that set the domain's <vcpu cpuset> when it has one? Then the live <vcpupin>s the domain
 * comes with are the source vnumad's, not the operator's.
 */
static bool originals_unpinned(const dom_originals *o, const domxml_info *info)
{
    if (!o->saved || o->nr_vcpus == 0)
        return false;
    for (unsigned v = 1; v < o->nr_vcpus && v < STATE_MAX_VCPUS; v++)
        if (!cpuset_equal(&o->vcpu_pin[v], &o->vcpu_pin[0]))
            return false;
    return !info->has_cpuset || cpuset_equal(&o->vcpu_pin[0], &info->cpuset);
}

/*
 * The busy vCPUs of each cell the source's last decision record counted (the <decision> in the
 * <state> it carries: docs/records.md, carried.h), into busy[cell id]; -1 where it says nothing.
 */
static void carried_busy(const xmlNode *st, int busy[SNAP_MAX_CELLS_PER_DOMAIN])
{
    _cleanup_(xmlsafe_charp) xmlChar *text = NULL;
    _cleanup_free_ carried_info *c = calloc(1, sizeof(*c));

    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        busy[k] = -1;
    text = child(st, "decision") ? xmlNodeGetContent(child(st, "decision")) : NULL;
    if (!text || !c)
        return;
    carried_parse((const char *)text, c);
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        busy[k] = c->cells[k].busy_vcpus;
}

/* vnumad's <state> the domain carries: its originals, whether it holds <placed>, and the busy
 * vCPUs per cell of its last decision. */
static int carried_state(const xmlNode *root, dom_originals *o, bool *placed,
                         int busy[SNAP_MAX_CELLS_PER_DOMAIN])
{
    xmlNode *st = meta_element(root, STATE_NS);
    _cleanup_free_ char *text = NULL;

    *placed = false;
    memset(o, 0, sizeof(*o));
    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        busy[k] = -1;
    if (!st)
        return 0;
    *placed = child(st, "placed") != NULL;
    carried_busy(st, busy);
    text = element_text(st);
    if (!text)
        return -ENOMEM;
    (void)meta_parse_state(text, o); /* a broken one gives no originals */
    return 0;
}

/* The domain's opt-in: 1 auto, 0 anything else (why says what). */
static int opted_in(const xmlNode *root, const topology *t, vn_balancer *cfg, char *why,
                    size_t whylen)
{
    xmlNode *b = meta_element(root, BALANCER_NS);
    _cleanup_free_ char *text = NULL;

    if (!b)
        return vn_fail(why, whylen, 0, "it did not opt in (no <balancer> element)");
    text = element_text(b);
    if (!text)
        return -ENOMEM;
    if (meta_parse(text, t, cfg, NULL) < 0)
        return -ENOMEM;
    if (!cfg->valid)
        return vn_fail(why, whylen, 0, "its <balancer> element is broken: %s", cfg->error);
    if (cfg->mode != VN_MODE_AUTO)
        return vn_fail(why, whylen, 0, "its mode is %s", mode_name(cfg->mode));
    return 1;
}

/* The cells and vCPUs of the domain, as decide_incoming() takes them. */
static int build_cells(const topology *t, const domxml_info *info, const vn_balancer *cfg,
                       const vn_cpuset *allowed, const int busy[], hook_domain *hd)
{
    snap_domain *d = &hd->d;
    unsigned nr = info->nr_cells ? info->nr_cells : 1;
    uint64_t page = 4096;

    if (info->hugepages)
        page = info->huge_page_bytes ? info->huge_page_bytes : 2ULL * 1024 * 1024;
    d->cells = calloc(nr, sizeof(*d->cells));
    if (!d->cells)
        return -ENOMEM;
    d->nr_cells = nr;
    hd->guest_cells = info->nr_cells > 0;
    for (unsigned k = 0; k < nr; k++) {
        snap_cell *c = &d->cells[k];
        unsigned id = info->nr_cells ? info->cells[k].id : 0, n = 0;

        c->id = id;
        c->page_size = page;
        c->last_candidate = -1;
        hd->cell_bytes[k] = info->nr_cells ? info->cells[k].bytes
                            : info->memory_bytes > info->device_bytes
                                ? info->memory_bytes - info->device_bytes
                                : 0;
        if (snap_cell_nodes(c, t->nr_nodes) < 0)
            return -ENOMEM;
        for (unsigned v = 0; v < info->nr_vcpus; v++)
            n += !info->nr_cells || info->vcpu_cell[v] == id;
        c->vcpus = calloc(n ? n : 1, sizeof(*c->vcpus));
        if (!c->vcpus)
            return -ENOMEM;
        for (unsigned v = 0; v < info->nr_vcpus; v++) {
            snap_vcpu *sv;
            if (info->nr_cells && info->vcpu_cell[v] != id)
                continue;
            sv = &c->vcpus[c->nr_vcpus++];
            sv->id = v;
            /* as many busy as the source counted; all of them when it said nothing */
            sv->busy = busy[id] < 0 || c->nr_vcpus <= (unsigned)busy[id] ? 1.0 : 0.0;
            hd->busy_known |= busy[id] >= 0;
            sv->allowed = *allowed;
            cpuset_zero(&sv->pinned);
            sv->cpu = -1;
            /* a realtime vCPU stays where libvirt puts it (unless the element allows moving) */
            sv->fixed = cpuset_isset(&info->rt_vcpus, v) && !cfg->move_realtime;
            if (sv->fixed)
                sv->pinned = *allowed;
        }
    }
    return 0;
}

int hookxml_read(const char *xml, const topology *t, hook_domain *ret, char *why, size_t whylen)
{
    _cleanup_(xmlsafe_docp) xmlDoc *doc = read_doc(xml);
    _cleanup_free_ dom_originals *orig = NULL;
    _cleanup_free_ domxml_info *info = NULL;
    _cleanup_(xmlsafe_charp) xmlChar *type = NULL, *name = NULL, *uuid = NULL;
    xmlNode *root, *numatune, *cputune;
    vn_balancer cfg;
    vn_cpuset host, allowed;
    bool placed = false, pins = false;
    int busy[SNAP_MAX_CELLS_PER_DOMAIN];
    char err[256];
    int r;

    memset(ret, 0, sizeof(*ret));
    if (whylen)
        why[0] = '\0';
    if (!doc || !(root = xmlDocGetRootElement(doc)) ||
        xmlStrcmp(root->name, (const xmlChar *)"domain") != 0)
        return vn_fail(why, whylen, -EINVAL, "not a domain XML of at most %u bytes", HOOKXML_MAX);
    type = xmlGetProp(root, (const xmlChar *)"type");
    if (!type ||
        (xmlStrcmp(type, (const xmlChar *)"kvm") && xmlStrcmp(type, (const xmlChar *)"qemu")))
        return vn_fail(why, whylen, 0, "not a QEMU domain");
    r = opted_in(root, t, &cfg, why, whylen);
    if (r <= 0)
        return r;

    orig = calloc(1, sizeof(*orig));
    info = calloc(1, sizeof(*info));
    if (!orig || !info)
        return -ENOMEM;
    r = carried_state(root, orig, &placed, busy);
    if (r < 0)
        return r;
    /* never the operator's memory policy or pins: only what a vnumad placed or pinned */
    numatune = child(root, "numatune");
    if (numatune && child(numatune, "memnode") == NULL && child(numatune, "memory") == NULL)
        numatune = NULL;
    if (numatune && !(placed && all_preferred(numatune)))
        return vn_fail(why, whylen, 0, "its <numatune> is the operator's");
    r = domxml_parse(xml, t, info, err, sizeof(err));
    if (r < 0)
        return vn_fail(why, whylen, 0, "its XML is not one vnumad reads: %s", err);
    cputune = child(root, "cputune");
    pins = cputune && child(cputune, "vcpupin") != NULL;
    if (child(cputune, "emulatorpin")) {
        _cleanup_(xmlsafe_charp) xmlChar *set =
            xmlGetProp(child(cputune, "emulatorpin"), (const xmlChar *)"cpuset");
        /* a vnumad's: the source's balancer saved the original, or a hook placed it */
        ret->emulator =
            (orig->saved && orig->emulator_saved) || placed ? HOOK_EMU_VNUMAD : HOOK_EMU_OPERATOR;
        if (ret->emulator == HOOK_EMU_OPERATOR &&
            (!set || cpuset_parse((const char *)set, &ret->emulator_pin) < 0))
            return vn_fail(why, whylen, 0, "its <emulatorpin> is not one vnumad reads");
    }
    if (pins && !placed && !originals_unpinned(orig, info))
        return vn_fail(why, whylen, 0, "its <vcpupin>s are the operator's");
    if (info->memory_auto)
        return vn_fail(why, whylen, 0, "its memory placement is numad's (placement='auto')");
    if (!info->nr_vcpus)
        return vn_fail(why, whylen, 0, "it has no <vcpu> count");

    cpuset_zero(&host);
    for (unsigned n = 0; n < t->nr_nodes; n++)
        cpuset_or(&host, &host, &t->nodes[n].cpus);
    allowed = host;
    if (info->has_cpuset)
        cpuset_and(&allowed, &allowed, &info->cpuset);
    cpuset_andnot(&allowed, &allowed, &t->isolated);
    if (cpuset_empty(&allowed))
        return vn_fail(why, whylen, 0, "its <vcpu cpuset> has no CPU of this host vnumad pins to");
    ret->allowed = allowed;

    name = xmlNodeGetContent(child(root, "name"));
    uuid = xmlNodeGetContent(child(root, "uuid"));
    snprintf(ret->d.name, sizeof(ret->d.name), "%s", name ? (const char *)name : "");
    snprintf(ret->d.uuid, sizeof(ret->d.uuid), "%s", uuid ? (const char *)uuid : "");
    ret->d.mode = VN_MODE_AUTO;
    ret->d.priority = cfg.priority;
    ret->d.tier = cfg.tier;
    ret->d.allowed_nodes = cfg.allowed_nodes;
    ret->d.preferred_node = -1;
    r = build_cells(t, info, &cfg, &allowed, busy, ret);
    if (r < 0) {
        hookxml_clear(ret);
        return r;
    }
    return 1;
}

/* The CPUs of the nodes pd places cells on, within what the vCPUs may use. */
static void placed_cpus(const topology *t, const hook_domain *hd, const plan_domain *pd,
                        vn_cpuset *out)
{
    cpuset_zero(out);
    for (unsigned k = 0; k < pd->nr_cells; k++)
        if (pd->cells[k].target_node >= 0)
            cpuset_or(out, out, &t->nodes[pd->cells[k].target_node].cpus);
    cpuset_and(out, out, &hd->allowed);
}

bool hookxml_emulator_fits(const topology *t, const hook_domain *hd, const plan_domain *pd,
                           char *why, size_t whylen)
{
    for (unsigned k = 0; hd->emulator == HOOK_EMU_OPERATOR && k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        vn_cpuset node;
        if (pc->target_node < 0 || !pc->nr_moves)
            continue;
        cpuset_and(&node, &t->nodes[pc->target_node].cpus, &hd->allowed);
        if (!cpuset_subset(&node, &hd->emulator_pin)) {
            snprintf(why, whylen,
                     "its <emulatorpin> is the operator's and leaves out CPUs of node %u, where "
                     "cell %u would be allocated",
                     t->nodes[pc->target_node].os_index, pc->cell_id);
            return false;
        }
    }
    return true;
}

void hookxml_clear(hook_domain *hd)
{
    if (!hd)
        return;
    snap_domain_clear(&hd->d);
    memset(hd, 0, sizeof(*hd));
}

/* Remove every element child of parent named name. */
static void drop_children(xmlNode *parent, const char *name)
{
    xmlNode *c = parent ? parent->children : NULL;

    while (c) {
        xmlNode *next = c->next;
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
        c = next;
    }
}

static xmlNode *child_or_new(xmlNode *parent, const char *name)
{
    xmlNode *c = child(parent, name);
    return c ? c : xmlNewChild(parent, NULL, (const xmlChar *)name, NULL);
}

static int set_uint(xmlNode *n, const char *attr, unsigned v)
{
    char b[16];
    snprintf(b, sizeof(b), "%u", v);
    return xmlNewProp(n, (const xmlChar *)attr, (const xmlChar *)b) ? 0 : -ENOMEM;
}

/* <vcpupin vcpu cpuset> for every pin of the plan, in <cputune>; a vnumad's <emulatorpin>
 * onto the placed nodes' CPUs. */
static int write_pins(const topology *t, xmlNode *root, const hook_domain *hd,
                      const plan_domain *pd)
{
    xmlNode *cputune = child_or_new(root, "cputune");

    if (!cputune)
        return -ENOMEM;
    drop_children(cputune, "vcpupin");
    if (hd->emulator == HOOK_EMU_VNUMAD) {
        xmlNode *e = child(cputune, "emulatorpin");
        vn_cpuset cpus;
        char set[VN_CPULIST_MAX];
        placed_cpus(t, hd, pd, &cpus);
        if (e && !cpuset_empty(&cpus)) {
            if (cpuset_format(&cpus, set, sizeof(set)) < 0)
                return -ENOSPC;
            if (!xmlSetProp(e, (const xmlChar *)"cpuset", (const xmlChar *)set))
                return -ENOMEM;
        }
    }
    for (unsigned k = 0; k < pd->nr_cells; k++)
        for (unsigned i = 0; i < pd->cells[k].nr_pins; i++) {
            const plan_pin *p = &pd->cells[k].pins[i];
            char set[VN_CPULIST_MAX];
            xmlNode *n;
            if (cpuset_format(&p->cpus, set, sizeof(set)) < 0)
                return -ENOSPC;
            n = xmlNewChild(cputune, NULL, (const xmlChar *)"vcpupin", NULL);
            if (!n || set_uint(n, "vcpu", p->vcpu) < 0 ||
                !xmlNewProp(n, (const xmlChar *)"cpuset", (const xmlChar *)set))
                return -ENOMEM;
        }
    return 0;
}

/* The <numatune> of the plan: a preferred <memnode> (or <memory>) per cell with memory placed. */
static int write_numatune(const topology *t, xmlNode *root, const hook_domain *hd,
                          const plan_domain *pd)
{
    xmlNode *old = child(root, "numatune"), *nt;

    if (old) { /* a vnumad's (hookxml_read passed no other) */
        xmlUnlinkNode(old);
        xmlFreeNode(old);
    }
    nt = xmlNewChild(root, NULL, (const xmlChar *)"numatune", NULL);
    if (!nt)
        return -ENOMEM;
    for (unsigned k = 0; k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        xmlNode *n;
        if (!pc->nr_moves || pc->moves[0].to_node < 0)
            continue;
        n = xmlNewChild(nt, NULL, (const xmlChar *)(hd->guest_cells ? "memnode" : "memory"), NULL);
        if (!n || (hd->guest_cells && set_uint(n, "cellid", pc->cell_id) < 0) ||
            !xmlNewProp(n, (const xmlChar *)"mode", (const xmlChar *)"preferred") ||
            set_uint(n, "nodeset", t->nodes[pc->moves[0].to_node].os_index) < 0)
            return -ENOMEM;
    }
    if (!nt->children) {
        xmlUnlinkNode(nt);
        xmlFreeNode(nt);
    }
    return 0;
}

/* <placed host> with each placed cell's node, in vnumad's <state> (made when missing). */
static int write_placed(const topology *t, xmlNode *root, const plan_domain *pd, const char *host)
{
    xmlNode *meta = child_or_new(root, "metadata"), *st, *placed;

    if (!meta)
        return -ENOMEM;
    st = meta_element(root, STATE_NS);
    if (!st) {
        xmlNs *ns;
        st = xmlNewChild(meta, NULL, (const xmlChar *)"state", NULL);
        if (!st || !(ns = xmlNewNs(st, (const xmlChar *)STATE_NS, (const xmlChar *)STATE_KEY)))
            return -ENOMEM;
        xmlSetNs(st, ns);
    }
    drop_children(st, "placed");
    placed = xmlNewChild(st, NULL, (const xmlChar *)"placed", NULL);
    if (!placed || (host[0] && !xmlNewProp(placed, (const xmlChar *)"host", (const xmlChar *)host)))
        return -ENOMEM;
    for (unsigned k = 0; k < pd->nr_cells; k++) {
        const plan_cell *pc = &pd->cells[k];
        xmlNode *c;
        if (pc->target_node < 0)
            continue;
        c = xmlNewChild(placed, NULL, (const xmlChar *)"cell", NULL);
        if (!c || set_uint(c, "id", pc->cell_id) < 0 ||
            set_uint(c, "node", t->nodes[pc->target_node].os_index) < 0 ||
            set_uint(c, "memory", pc->nr_moves ? 1 : 0) < 0)
            return -ENOMEM;
    }
    return 0;
}

int hookxml_write(const char *xml, const topology *t, const hook_domain *hd, const plan_domain *pd,
                  const char *host_id, char **ret)
{
    _cleanup_(xmlsafe_docp) xmlDoc *doc = read_doc(xml);
    xmlNode *root;
    xmlChar *out = NULL;
    bool any = false;
    int len = 0, r;

    *ret = NULL;
    if (!doc || !(root = xmlDocGetRootElement(doc)))
        return -EINVAL;
    for (unsigned k = 0; k < pd->nr_cells; k++)
        any |= pd->cells[k].target_node >= 0;
    if (!any)
        return 0;
    if ((r = write_pins(t, root, hd, pd)) < 0 || (r = write_numatune(t, root, hd, pd)) < 0 ||
        (r = write_placed(t, root, pd, host_id)) < 0)
        return r;
    xmlDocDumpMemory(doc, &out, &len);
    if (!out)
        return -ENOMEM;
    *ret = strndup((const char *)out, (size_t)len);
    xmlFree(out);
    return *ret ? 0 : -ENOMEM;
}

/* Is n a preferred <memnode> (or, without guest cells, <memory>) the placement p wrote? */
static bool placed_memnode(const xmlNode *n, const dom_placed *p)
{
    _cleanup_(xmlsafe_charp) xmlChar *mode = xmlGetProp(n, (const xmlChar *)"mode");
    _cleanup_(xmlsafe_charp) xmlChar *set = xmlGetProp(n, (const xmlChar *)"nodeset");
    _cleanup_(xmlsafe_charp) xmlChar *cell = xmlGetProp(n, (const xmlChar *)"cellid");
    bool memory = xmlStrcmp(n->name, (const xmlChar *)"memory") == 0;
    uint64_t id = 0, node;

    if (!memory && xmlStrcmp(n->name, (const xmlChar *)"memnode") != 0)
        return false;
    if (!mode || xmlStrcmp(mode, (const xmlChar *)"preferred") != 0 || !set ||
        vn_parse_u64((const char *)set, 0, VN_MAX_NODES - 1, &node) < 0)
        return false;
    if (!memory &&
        (!cell || vn_parse_u64((const char *)cell, 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, &id) < 0))
        return false;
    for (unsigned k = 0; k < p->nr; k++)
        if (p->cells[k].memory && p->cells[k].cell == (unsigned)id &&
            p->cells[k].node == (unsigned)node)
            return true;
    return false;
}

/* A vnumad's <emulatorpin> (saved in the carried originals) put back to what it was. */
static int unplace_emulator(xmlNode *cputune, const dom_originals *o)
{
    xmlNode *e = child(cputune, "emulatorpin");
    char set[VN_CPULIST_MAX];

    if (!e || !o->saved || !o->emulator_saved)
        return 0;
    if (cpuset_empty(&o->emulator_pin)) {
        xmlUnlinkNode(e);
        xmlFreeNode(e);
        return 0;
    }
    if (cpuset_format(&o->emulator_pin, set, sizeof(set)) < 0)
        return -ENOSPC;
    return xmlSetProp(e, (const xmlChar *)"cpuset", (const xmlChar *)set) ? 0 : -ENOMEM;
}

int hookxml_unplace(const char *xml, char **ret)
{
    _cleanup_(xmlsafe_docp) xmlDoc *doc = read_doc(xml);
    _cleanup_free_ dom_originals *orig = calloc(1, sizeof(*orig));
    _cleanup_free_ char *text = NULL;
    dom_placed p;
    xmlNode *root, *st, *numatune, *cputune;
    xmlChar *out = NULL;
    int len = 0, r;

    *ret = NULL;
    if (!orig)
        return -ENOMEM;
    if (!doc || !(root = xmlDocGetRootElement(doc)) ||
        xmlStrcmp(root->name, (const xmlChar *)"domain") != 0)
        return -EINVAL;
    st = meta_element(root, STATE_NS);
    if (!st || !child(st, "placed"))
        return 0;
    text = element_text(st);
    if (!text)
        return -ENOMEM;
    if (meta_parse_placed(text, &p) < 0 || !p.valid)
        return 0; /* a broken one names nothing vnumad wrote */
    (void)meta_parse_state(text, orig);

    numatune = child(root, "numatune");
    for (xmlNode *c = numatune ? numatune->children : NULL, *next; c; c = next) {
        next = c->next;
        if (c->type == XML_ELEMENT_NODE && placed_memnode(c, &p)) {
            xmlUnlinkNode(c);
            xmlFreeNode(c);
        }
    }
    if (numatune && !child(numatune, "memnode") && !child(numatune, "memory")) {
        xmlUnlinkNode(numatune);
        xmlFreeNode(numatune);
    }
    cputune = child(root, "cputune");
    drop_children(cputune, "vcpupin");
    if (cputune && (r = unplace_emulator(cputune, orig)) < 0)
        return r;
    if (cputune && !xmlFirstElementChild(cputune)) {
        xmlUnlinkNode(cputune);
        xmlFreeNode(cputune);
    }
    drop_children(st, "placed");

    xmlDocDumpMemory(doc, &out, &len);
    if (!out)
        return -ENOMEM;
    *ret = strndup((const char *)out, (size_t)len);
    xmlFree(out);
    return *ret ? 0 : -ENOMEM;
}
