/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metadata.h"

#include <errno.h>
#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "xmlsafe.h"

#define META_NS           "urn:vnuma:balancer:1"
#define META_STATE_NS     "urn:vnuma:state:1"
#define META_RATE_MAX     1048576
#define META_PRIORITY_MIN -100
#define META_PRIORITY_MAX 100

/* The element's text, at most META_MAX_BYTES, parsed as any untrusted text (xmlsafe.h). */
static xmlDocPtr meta_read(const char *xml)
{
    return xmlsafe_read(xml, META_MAX_BYTES, "balancer.xml");
}

static bool parse_int(const char *s, long lo, long hi, long *out)
{
    int64_t v;

    if (vn_parse_i64(s, lo, hi, &v) < 0)
        return false;
    *out = (long)v;
    return true;
}

static void invalid(vn_balancer *c, const char *fmt, const char *a, const char *b)
{
    c->valid = false;
    snprintf(c->error, sizeof(c->error), fmt, a, b);
}

/* Attribute values are shown in errors: keep them short and printable. */
static void sanitize(const char *in, char *out, size_t len)
{
    size_t i = 0;

    for (; *in && i + 1 < len; in++)
        out[i++] = (*in >= 0x20 && *in < 0x7f) ? *in : '?';
    out[i] = '\0';
}

static void parse_attrs(xmlNodePtr root, const topology *t, vn_balancer *c)
{
    static const char *const known[] = {"mode", "nodes", "rate", "priority", "realtime", "tier"};
    bool seen[VN_ARRAY_SIZE(known)] = {false};
    bool have_mode = false;

    for (xmlAttrPtr a = root->properties; a && c->valid; a = a->next) {
        _cleanup_(xmlsafe_charp) xmlChar *val = xmlNodeListGetString(root->doc, a->children, 1);
        const char *name = (const char *)a->name, *v = val ? (const char *)val : "";
        char shown[64];
        long n;

        sanitize(v, shown, sizeof(shown));
        /* mode="auto" and vnuma:mode="off" are the same attribute twice */
        for (unsigned k = 0; k < VN_ARRAY_SIZE(known); k++)
            if (!strcmp(name, known[k])) {
                if (seen[k])
                    invalid(c, "duplicate attribute '%s'%s", known[k], "");
                seen[k] = true;
            }
        if (!c->valid)
            break;
        if (a->ns && a->ns->href && strcmp((const char *)a->ns->href, META_NS)) {
            sanitize(name, shown, sizeof(shown));
            invalid(c, "unknown attribute '%s'%s", shown, "");
        } else if (!strcmp(name, "mode")) {
            have_mode = true;
            if (!strcmp(v, "auto"))
                c->mode = VN_MODE_AUTO;
            else if (!strcmp(v, "advise"))
                c->mode = VN_MODE_ADVISE;
            else if (!strcmp(v, "off"))
                c->mode = VN_MODE_OFF;
            else
                invalid(c, "mode: expected auto, advise or off, got '%s'%s", shown, "");
        } else if (!strcmp(name, "nodes")) {
            vn_cpuset set;
            nodeset_zero(&c->allowed_nodes);
            if (cpuset_parse(v, &set) < 0 || cpuset_empty(&set)) {
                invalid(c, "nodes: expected a list of host nodes like 0-1,3, got '%s'%s", shown,
                        "");
                continue;
            }
            CPUSET_FOREACH(node, &set)
            {
                int idx = topo_node_index(t, (unsigned)node);
                char num[16];
                if (idx < 0) {
                    snprintf(num, sizeof(num), "%d", node);
                    invalid(c, "nodes: host node %s does not exist%s", num, "");
                    break;
                }
                nodeset_set(&c->allowed_nodes, (unsigned)idx);
            }
        } else if (!strcmp(name, "rate")) {
            if (!parse_int(v, 1, META_RATE_MAX, &n))
                invalid(c, "rate: expected MiB/s from 1 to 1048576, got '%s'%s", shown, "");
            else
                c->rate_mib = (unsigned)n;
        } else if (!strcmp(name, "realtime")) {
            if (!strcmp(v, "keep"))
                c->move_realtime = false;
            else if (!strcmp(v, "move"))
                c->move_realtime = true;
            else
                invalid(c, "realtime: expected keep or move, got '%s'%s", shown, "");
        } else if (!strcmp(name, "tier")) {
            int m = tier_from_name(v, strlen(v));
            if (m < 0)
                invalid(c, "tier: expected auto, off or cold-first, got '%s'%s", shown, "");
            else
                c->tier = (vn_tier)m;
        } else if (!strcmp(name, "priority")) {
            if (!parse_int(v, META_PRIORITY_MIN, META_PRIORITY_MAX, &n))
                invalid(c, "priority: expected -100 to 100, got '%s'%s", shown, "");
            else
                c->priority = (int)n;
        } else {
            sanitize(name, shown, sizeof(shown));
            invalid(c, "unknown attribute '%s'%s", shown, "");
        }
    }
    if (c->valid && !have_mode)
        invalid(c, "mode is missing (auto, advise or off)%s%s", "", "");
}

/* The memory policy modes of <linux/mempolicy.h> by their number, as <memfd policy=...>
 * names them. */
static const char *const mpol_names[] = {
    "default", "preferred", "bind", "interleave", "local", "preferred-many", "weighted-interleave"};
#define MPOL_FLAGS_MASK                                                                            \
    0xe000 /* MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | ..._NUMA_BALANCING */

/* <memfd cell="K" policy="preferred" nodes="1" flags="0x8000"/>: a backend's policy before
 * vnumad changed it. Returns 0 or -EINVAL. */
static int parse_mempolicy(xmlNodePtr n, vn_mempolicy *ret)
{
    _cleanup_(xmlsafe_charp) xmlChar *policy = xmlGetProp(n, (const xmlChar *)"policy");
    _cleanup_(xmlsafe_charp) xmlChar *nodes = xmlGetProp(n, (const xmlChar *)"nodes");
    _cleanup_(xmlsafe_charp) xmlChar *flags = xmlGetProp(n, (const xmlChar *)"flags");
    vn_mempolicy p = {.mode = -1};
    int f = 0;

    if (!policy)
        return -EINVAL;
    for (unsigned m = 0; m < VN_ARRAY_SIZE(mpol_names); m++)
        if (!strcmp((const char *)policy, mpol_names[m]))
            p.mode = (int)m;
    if (p.mode < 0)
        return -EINVAL;
    if (nodes && *nodes && cpuset_parse((const char *)nodes, &p.nodes) < 0)
        return -EINVAL;
    if (flags) {
        char *end = NULL;
        long v = strtol((const char *)flags, &end, 0);
        if (!end || *end || v < 0 || (v & ~MPOL_FLAGS_MASK))
            return -EINVAL;
        f = (int)v;
    }
    p.mode |= f;
    *ret = p;
    return 0;
}

static int format_mempolicy(xmlNodePtr n, const vn_mempolicy *p)
{
    unsigned mode = (unsigned)p->mode & ~(unsigned)MPOL_FLAGS_MASK;
    char buf[VN_CPULIST_MAX], num[32];

    if (mode >= VN_ARRAY_SIZE(mpol_names))
        return -EINVAL;
    xmlNewProp(n, (const xmlChar *)"policy", (const xmlChar *)mpol_names[mode]);
    if (!cpuset_empty(&p->nodes)) {
        if (cpuset_format(&p->nodes, buf, sizeof(buf)) < 0)
            return -EINVAL;
        xmlNewProp(n, (const xmlChar *)"nodes", (const xmlChar *)buf);
    }
    if ((unsigned)p->mode & MPOL_FLAGS_MASK) {
        snprintf(num, sizeof(num), "0x%x", (unsigned)p->mode & MPOL_FLAGS_MASK);
        xmlNewProp(n, (const xmlChar *)"flags", (const xmlChar *)num);
    }
    return 0;
}

/* A host id as vnumad writes it (a machine id; a UUID would do): hex digits and dashes. */
static bool host_id_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= SNAP_UUID_MAX)
        return false;
    return strspn(s, "0123456789abcdefABCDEF-") == n;
}

static void parse_original(xmlNodePtr orig, dom_originals *o)
{
    _cleanup_(xmlsafe_charp) xmlChar *host = xmlGetProp(orig, (const xmlChar *)"host");

    memset(o, 0, sizeof(*o));
    /* a host attribute vnumad cannot have written names no host: "another host" */
    if (host)
        snprintf(o->host, sizeof(o->host), "%s",
                 host_id_ok((const char *)host) ? (const char *)host : "?");
    for (xmlNodePtr n = orig->children; n; n = n->next) {
        _cleanup_(xmlsafe_charp) xmlChar *set = NULL;
        _cleanup_(xmlsafe_charp) xmlChar *vc = NULL;
        vn_cpuset cs;
        long v;

        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (!strcmp((const char *)n->name, "vcpupin")) {
            set = xmlGetProp(n, (const xmlChar *)"cpuset");
            vc = xmlGetProp(n, (const xmlChar *)"vcpu");
            if (set && vc && parse_int((const char *)vc, 0, STATE_MAX_VCPUS - 1, &v) &&
                cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs)) {
                o->vcpu_pin[v] = cs;
                if ((unsigned)v + 1 > o->nr_vcpus)
                    o->nr_vcpus = (unsigned)v + 1;
                o->saved = true;
            }
        } else if (!strcmp((const char *)n->name, "emulatorpin")) {
            set = xmlGetProp(n, (const xmlChar *)"cpuset");
            if (set && cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs)) {
                o->emulator_pin = cs;
                o->emulator_saved = true;
                o->saved = true;
            }
        } else if (!strcmp((const char *)n->name, "iothreadpin")) {
            set = xmlGetProp(n, (const xmlChar *)"cpuset");
            vc = xmlGetProp(n, (const xmlChar *)"iothread");
            if (set && vc && o->nr_iothreads < STATE_MAX_IOTHREADS &&
                parse_int((const char *)vc, 1, 1 << 30, &v) &&
                cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs)) {
                o->iothread_id[o->nr_iothreads] = (unsigned)v;
                o->iothread_pin[o->nr_iothreads++] = cs;
                o->saved = true;
            }
        } else if (!strcmp((const char *)n->name, "memfd")) {
            vc = xmlGetProp(n, (const xmlChar *)"cell");
            if (vc && parse_int((const char *)vc, 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, &v)) {
                vn_mempolicy pol = {0};
                /* an element vnumad cannot read back restores the default (as before 0.1.0
                 * saved every backend's policy: it only bound backends that had none) */
                if (parse_mempolicy(n, &pol) < 0)
                    pol = (vn_mempolicy){0};
                o->memfd_policy[v] = pol;
                o->memfd_cells |= 1ULL << v;
                o->saved = true;
            }
        } else if (!strcmp((const char *)n->name, "numatune")) {
            set = xmlGetProp(n, (const xmlChar *)"nodeset");
            if (set && strlen((const char *)set) < sizeof(o->nodeset) &&
                cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs)) {
                snprintf(o->nodeset, sizeof(o->nodeset), "%s", (const char *)set);
                o->numa_saved = true;
                o->saved = true;
            }
        }
    }
}

/*
 * The children: vnumad's <original> (at most one: two cannot both be the
 * pinning to put back) and <decision> (any number; rewritten as one). Any
 * other element is the operator's mistake (a nested <balancer>, an
 * <xi:include>) and makes the element invalid; text, CDATA and comments are
 * ignored (and dropped when vnumad rewrites the element).
 */
static void parse_children(xmlNodePtr root, vn_balancer *c, dom_originals *ret_orig)
{
    bool have_orig = false;

    for (xmlNodePtr n = root->children; n; n = n->next) {
        char shown[64];

        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (n->ns && (!n->ns->href || strcmp((const char *)n->ns->href, META_NS))) {
            sanitize((const char *)n->name, shown, sizeof(shown));
            if (c->valid)
                invalid(c, "unknown element <%s> (namespace%s)", shown, " not ours");
        } else if (!strcmp((const char *)n->name, "original")) {
            if (have_orig && c->valid)
                invalid(c, "more than one <original>%s%s", "", "");
            else if (!have_orig && ret_orig)
                parse_original(n, ret_orig); /* the first one is kept to be restored */
            have_orig = true;
        } else if (strcmp((const char *)n->name, "decision") != 0) {
            sanitize((const char *)n->name, shown, sizeof(shown));
            if (c->valid)
                invalid(c, "unknown element <%s>%s", shown, "");
        }
    }
}

int meta_parse(const char *xml, const topology *t, vn_balancer *ret_cfg, dom_originals *ret_orig)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = meta_read(xml);
    vn_balancer c = {.mode = VN_MODE_OFF, .valid = true};
    xmlNodePtr root;

    if (ret_orig)
        memset(ret_orig, 0, sizeof(*ret_orig));
    if (!doc) {
        invalid(&c, "the <balancer> element is not well-formed XML (or carries a DTD)%s%s", "", "");
        *ret_cfg = c;
        return 0;
    }
    root = xmlDocGetRootElement(doc);
    /* libvirt hands the element back without a namespace or in ours */
    if (!root || strcmp((const char *)root->name, "balancer") != 0 ||
        (root->ns && (!root->ns->href || strcmp((const char *)root->ns->href, META_NS)))) {
        invalid(&c, "expected a <balancer> element in namespace %s%s", META_NS, "");
        *ret_cfg = c;
        return 0;
    }
    parse_attrs(root, t, &c);
    parse_children(root, &c, ret_orig);
    if (!c.valid)
        c.mode = VN_MODE_OFF;
    *ret_cfg = c;
    return 0;
}

static int add_pin(xmlNodePtr parent, const char *elem, int vcpu, const vn_cpuset *s)
{
    const char *idattr = strcmp(elem, "iothreadpin") == 0 ? "iothread" : "vcpu";
    char buf[VN_CPULIST_MAX], num[16];
    xmlNodePtr n;

    if (cpuset_format(s, buf, sizeof(buf)) < 0)
        return -ENOSPC;
    n = xmlNewChild(parent, NULL, (const xmlChar *)elem, NULL);
    if (!n)
        return -ENOMEM;
    if (vcpu >= 0) {
        snprintf(num, sizeof(num), "%d", vcpu);
        xmlNewProp(n, (const xmlChar *)idattr, (const xmlChar *)num);
    }
    xmlNewProp(n, (const xmlChar *)"cpuset", (const xmlChar *)buf);
    return 0;
}

/* <placed host><cell id node memory/>...</placed>: nothing of it when anything is off. */
static void parse_placed(xmlNodePtr pl, dom_placed *p)
{
    _cleanup_(xmlsafe_charp) xmlChar *host = xmlGetProp(pl, (const xmlChar *)"host");
    dom_placed v = {.valid = true};

    if (!host || !host_id_ok((const char *)host))
        return;
    snprintf(v.host, sizeof(v.host), "%s", (const char *)host);
    for (xmlNodePtr n = pl->children; n; n = n->next) {
        long id, node, mem;
        if (n->type != XML_ELEMENT_NODE)
            continue;
        _cleanup_(xmlsafe_charp) xmlChar *a = xmlGetProp(n, (const xmlChar *)"id");
        _cleanup_(xmlsafe_charp) xmlChar *b = xmlGetProp(n, (const xmlChar *)"node");
        _cleanup_(xmlsafe_charp) xmlChar *c = xmlGetProp(n, (const xmlChar *)"memory");
        if (strcmp((const char *)n->name, "cell") || v.nr >= SNAP_MAX_CELLS_PER_DOMAIN || !a ||
            !b || !c || !parse_int((const char *)a, 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, &id) ||
            !parse_int((const char *)b, 0, VN_MAX_NODES - 1, &node) ||
            !parse_int((const char *)c, 0, 1, &mem))
            return;
        for (unsigned k = 0; k < v.nr; k++)
            if (v.cells[k].cell == (unsigned)id)
                return;
        v.cells[v.nr].cell = (unsigned)id;
        v.cells[v.nr].node = (unsigned)node;
        v.cells[v.nr].memory = mem == 1;
        v.nr++;
    }
    *p = v;
}

int meta_parse_placed(const char *xml, dom_placed *ret)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = meta_read(xml);
    xmlNodePtr root;

    memset(ret, 0, sizeof(*ret));
    if (!doc || !(root = xmlDocGetRootElement(doc)) || strcmp((const char *)root->name, "state") ||
        (root->ns && (!root->ns->href || strcmp((const char *)root->ns->href, META_STATE_NS))))
        return -EINVAL;
    for (xmlNodePtr n = root->children; n; n = n->next)
        if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "placed")) {
            parse_placed(n, ret);
            break;
        }
    return 0;
}

char *meta_state_decision(const char *xml)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = meta_read(xml);
    xmlNodePtr root;

    if (!doc || !(root = xmlDocGetRootElement(doc)) || strcmp((const char *)root->name, "state") ||
        (root->ns && (!root->ns->href || strcmp((const char *)root->ns->href, META_STATE_NS))))
        return NULL;
    for (xmlNodePtr n = root->children; n; n = n->next)
        if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "decision")) {
            xmlChar *text = xmlNodeGetContent(n);
            char *ret = text ? strdup((const char *)text) : NULL;
            xmlFree(text);
            return ret;
        }
    return NULL;
}

int meta_parse_state(const char *xml, dom_originals *ret_orig)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = meta_read(xml);
    xmlNodePtr root;

    memset(ret_orig, 0, sizeof(*ret_orig));
    if (!doc || !(root = xmlDocGetRootElement(doc)) || strcmp((const char *)root->name, "state") ||
        (root->ns && (!root->ns->href || strcmp((const char *)root->ns->href, META_STATE_NS))))
        return -EINVAL;
    for (xmlNodePtr n = root->children; n; n = n->next)
        if (n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, "original")) {
            parse_original(n, ret_orig);
            break;
        }
    return 0;
}

/* <placed host><cell id node memory/>...</placed> under root. */
static int format_placed(xmlNodePtr root, const dom_placed *p)
{
    xmlNodePtr pl = xmlNewChild(root, NULL, (const xmlChar *)"placed", NULL);
    char num[16];

    if (!pl || !xmlNewProp(pl, (const xmlChar *)"host", (const xmlChar *)p->host))
        return -ENOMEM;
    for (unsigned k = 0; k < p->nr && k < SNAP_MAX_CELLS_PER_DOMAIN; k++) {
        xmlNodePtr c = xmlNewChild(pl, NULL, (const xmlChar *)"cell", NULL);
        if (!c)
            return -ENOMEM;
        snprintf(num, sizeof(num), "%u", p->cells[k].cell);
        xmlNewProp(c, (const xmlChar *)"id", (const xmlChar *)num);
        snprintf(num, sizeof(num), "%u", p->cells[k].node);
        xmlNewProp(c, (const xmlChar *)"node", (const xmlChar *)num);
        xmlNewProp(c, (const xmlChar *)"memory", (const xmlChar *)(p->cells[k].memory ? "1" : "0"));
    }
    return 0;
}

int meta_format_state(const dom_originals *orig, const dom_placed *placed, uint64_t pass,
                      const char *time, const char *record_json, char **ret)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = xmlNewDoc((const xmlChar *)"1.0");
    xmlNodePtr root, n;
    xmlBufferPtr buf;
    char num[32];
    int r = 0;

    if (!doc || !(root = xmlNewNode(NULL, (const xmlChar *)"state")))
        return -ENOMEM;
    xmlDocSetRootElement(doc, root);
    if (orig && orig->saved) {
        xmlNodePtr o = xmlNewChild(root, NULL, (const xmlChar *)"original", NULL);
        if (!o)
            return -ENOMEM;
        if (host_id_ok(orig->host))
            xmlNewProp(o, (const xmlChar *)"host", (const xmlChar *)orig->host);
        for (unsigned v = 0; v < orig->nr_vcpus && r == 0; v++)
            if (!cpuset_empty(&orig->vcpu_pin[v]))
                r = add_pin(o, "vcpupin", (int)v, &orig->vcpu_pin[v]);
        if (r == 0 && orig->emulator_saved)
            r = add_pin(o, "emulatorpin", -1, &orig->emulator_pin);
        for (unsigned i = 0; i < orig->nr_iothreads && r == 0; i++)
            r = add_pin(o, "iothreadpin", (int)orig->iothread_id[i], &orig->iothread_pin[i]);
        for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN && r == 0; k++)
            if (orig->memfd_cells & (1ULL << k)) {
                n = xmlNewChild(o, NULL, (const xmlChar *)"memfd", NULL);
                if (!n)
                    return -ENOMEM;
                snprintf(num, sizeof(num), "%u", k);
                xmlNewProp(n, (const xmlChar *)"cell", (const xmlChar *)num);
                r = format_mempolicy(n, &orig->memfd_policy[k]);
            }
        if (r == 0 && orig->numa_saved) {
            n = xmlNewChild(o, NULL, (const xmlChar *)"numatune", NULL);
            if (!n)
                return -ENOMEM;
            xmlNewProp(n, (const xmlChar *)"nodeset", (const xmlChar *)orig->nodeset);
        }
        if (r < 0)
            return r;
    }
    if (placed && placed->valid && host_id_ok(placed->host) &&
        (r = format_placed(root, placed)) < 0)
        return r;
    if (record_json) {
        /* xmlNewTextChild escapes the JSON text */
        n = xmlNewTextChild(root, NULL, (const xmlChar *)"decision", (const xmlChar *)record_json);
        if (!n)
            return -ENOMEM;
        snprintf(num, sizeof(num), "%" PRIu64, pass);
        xmlNewProp(n, (const xmlChar *)"pass", (const xmlChar *)num);
        xmlNewProp(n, (const xmlChar *)"time", (const xmlChar *)time);
    }
    buf = xmlBufferCreate();
    if (!buf)
        return -ENOMEM;
    if (xmlNodeDump(buf, doc, root, 0, 0) < 0) {
        xmlBufferFree(buf);
        return -ENOMEM;
    }
    *ret = strdup((const char *)xmlBufferContent(buf));
    xmlBufferFree(buf);
    return *ret ? 0 : -ENOMEM;
}

bool meta_originals_foreign(const dom_originals *o, const char *host)
{
    return o->saved && o->host[0] && host && host[0] && strcmp(o->host, host) != 0;
}

/* The <vcpupin vcpu=N cpuset=...> children of <cputune>: the first pin of each vCPU
 * below nr_vcpus, into ret->vcpu_pin[] (entries without one stay empty). */
static void defined_vcpupins(xmlNodePtr cputune, unsigned nr_vcpus, dom_originals *ret)
{
    for (xmlNodePtr n = cputune->children; n; n = n->next) {
        _cleanup_(xmlsafe_charp) xmlChar *vc = NULL;
        _cleanup_(xmlsafe_charp) xmlChar *set = NULL;
        vn_cpuset cs;
        long v;

        if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "vcpupin") != 0)
            continue;
        vc = xmlGetProp(n, (const xmlChar *)"vcpu");
        set = xmlGetProp(n, (const xmlChar *)"cpuset");
        if (vc && set && parse_int((const char *)vc, 0, (long)nr_vcpus - 1, &v) &&
            cpuset_empty(&ret->vcpu_pin[v]) && cpuset_parse((const char *)set, &cs) == 0 &&
            !cpuset_empty(&cs))
            ret->vcpu_pin[v] = cs;
    }
}

int meta_defined_originals(const char *xml, bool defined, const vn_cpuset *host_cpus,
                           unsigned nr_vcpus, dom_originals *ret, vn_cpuset *ret_default)
{
    _cleanup_(xmlsafe_docp) xmlDocPtr doc = meta_read(xml);
    xmlNodePtr root;
    dom_originals *o;
    vn_cpuset def = *host_cpus;

    if (!doc || !(root = xmlDocGetRootElement(doc)) || strcmp((const char *)root->name, "domain"))
        return -EINVAL;
    o = calloc(1, sizeof(*o));
    if (!o)
        return -ENOMEM;
    nr_vcpus = VN_MIN(nr_vcpus, (unsigned)STATE_MAX_VCPUS);
    for (xmlNodePtr n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE)
            continue;
        if (!strcmp((const char *)n->name, "vcpu")) {
            /* <vcpu cpuset=...>: where libvirt puts every thread the XML does not pin */
            _cleanup_(xmlsafe_charp) xmlChar *set = xmlGetProp(n, (const xmlChar *)"cpuset");
            vn_cpuset cs;
            if (set && cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs))
                def = cs;
        } else if (defined && !strcmp((const char *)n->name, "cputune")) {
            defined_vcpupins(n, nr_vcpus, o);
        } else if (defined && !strcmp((const char *)n->name, "numatune")) {
            for (xmlNodePtr m = n->children; m; m = m->next) {
                _cleanup_(xmlsafe_charp) xmlChar *mode = NULL;
                _cleanup_(xmlsafe_charp) xmlChar *set = NULL;
                vn_cpuset cs;
                if (m->type != XML_ELEMENT_NODE || strcmp((const char *)m->name, "memory"))
                    continue;
                mode = xmlGetProp(m, (const xmlChar *)"mode");
                set = xmlGetProp(m, (const xmlChar *)"nodeset");
                /* the only nodeset vnumad changes (act.c set_restrictive_nodeset) */
                if (mode && set && !strcmp((const char *)mode, "restrictive") &&
                    strlen((const char *)set) < sizeof(o->nodeset) &&
                    cpuset_parse((const char *)set, &cs) == 0 && !cpuset_empty(&cs)) {
                    snprintf(o->nodeset, sizeof(o->nodeset), "%s", (const char *)set);
                    o->numa_saved = true;
                }
            }
        }
    }
    for (unsigned v = 0; v < nr_vcpus; v++)
        if (cpuset_empty(&o->vcpu_pin[v]))
            o->vcpu_pin[v] = def;
    o->nr_vcpus = nr_vcpus;
    o->saved = true;
    *ret = *o;
    *ret_default = def;
    free(o);
    return 0;
}
