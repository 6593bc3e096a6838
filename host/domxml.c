/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The live domain XML, as the sample stage reads it (domxml.h). */
#include "domxml.h"

#include <errno.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

/* Largest live domain XML accepted. */
#define DOMXML_MAX (16u * 1024 * 1024)
/* Bytes of untrusted text quoted in an error message. */
#define DOMXML_SHOWN_MAX 64
#define DOMXML_SHOWN_BUF (DOMXML_SHOWN_MAX + 8)

static void xml_docp(xmlDoc **doc)
{
    if (*doc)
        xmlFreeDoc(*doc);
}

static void xml_charp(xmlChar **s)
{
    if (*s)
        xmlFree(*s);
}

#define _cleanup_xmlchar_ _cleanup_(xml_charp)

/* Untrusted text for an error message: printable ASCII, at most DOMXML_SHOWN_MAX bytes. */
#define shown(buf, s) vn_shown_str((buf), sizeof(buf), (s), DOMXML_SHOWN_MAX)

static const xmlNode *xml_child(const xmlNode *parent, const char *name)
{
    for (const xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE && xmlStrcmp(c->name, (const xmlChar *)name) == 0)
            return c;
    return NULL;
}

static int xml_memnode_parse(const topology *t, const xmlNode *n, domxml_memnode *ret, char *err,
                             size_t errlen)
{
    _cleanup_xmlchar_ xmlChar *cellid = xmlGetProp(n, (const xmlChar *)"cellid");
    _cleanup_xmlchar_ xmlChar *mode = xmlGetProp(n, (const xmlChar *)"mode");
    _cleanup_xmlchar_ xmlChar *nodeset = xmlGetProp(n, (const xmlChar *)"nodeset");
    char b[DOMXML_SHOWN_BUF];
    domxml_memnode m = {0};
    char *endp = NULL;
    unsigned long id;
    int mm;

    if (!cellid || !nodeset)
        return vn_fail(err, errlen, -EINVAL, "<memnode> without cellid or nodeset");
    errno = 0;
    id = strtoul((const char *)cellid, &endp, 10);
    if (errno || endp == (char *)cellid || *endp || id >= SNAP_MAX_CELLS_PER_DOMAIN)
        return vn_fail(err, errlen, -EINVAL, "<memnode> with a bad cellid '%s'",
                       shown(b, (const char *)cellid));
    m.cellid = (unsigned)id;
    /* the modes of libvirt's <memnode>: mem_mode_name()'s but "none" */
    mm = mode ? mem_mode_from_name((const char *)mode, strlen((const char *)mode)) : VN_MEM_STRICT;
    if (mm < 0 || mm == VN_MEM_NONE)
        return vn_fail(err, errlen, -EINVAL, "<memnode cellid='%u'> with an unknown mode '%s'",
                       m.cellid, shown(b, (const char *)mode));
    m.binding.mode = (vn_mem_mode)mm;
    if (topo_nodelist_parse(t, (const char *)nodeset, &m.binding.nodes) < 0)
        return vn_fail(err, errlen, -EINVAL, "<memnode cellid='%u'> with a bad nodeset '%s'",
                       m.cellid, shown(b, (const char *)nodeset));
    *ret = m;
    return 0;
}

/*
 * Whether the domain's memory is pinned, from its XML: VFIO passthrough (<hostdev
 * mode='subsystem' type='pci'|'mdev'>, <interface type='hostdev'>: the IOMMU maps all guest
 * memory, pinned for the device's life), <memoryBacking><locked/> (mlock), <launchSecurity>
 * (SEV, SEV-SNP, TDX, s390 PV: pinned and encrypted). Such memory is never moved.
 */
static vn_mem_pin xml_mem_pin(const xmlNode *root)
{
    const xmlNode *devices = xml_child(root, "devices");

    for (const xmlNode *c = devices ? devices->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrcmp(c->name, (const xmlChar *)"hostdev") == 0) {
            _cleanup_xmlchar_ xmlChar *mode = xmlGetProp(c, (const xmlChar *)"mode");
            _cleanup_xmlchar_ xmlChar *type = xmlGetProp(c, (const xmlChar *)"type");
            if ((!mode || xmlStrcmp(mode, (const xmlChar *)"subsystem") == 0) && type &&
                (xmlStrcmp(type, (const xmlChar *)"pci") == 0 ||
                 xmlStrcmp(type, (const xmlChar *)"mdev") == 0))
                return MEM_PIN_VFIO;
        } else if (xmlStrcmp(c->name, (const xmlChar *)"interface") == 0) {
            _cleanup_xmlchar_ xmlChar *type = xmlGetProp(c, (const xmlChar *)"type");
            if (type && xmlStrcmp(type, (const xmlChar *)"hostdev") == 0)
                return MEM_PIN_VFIO;
        }
    }
    if (xml_child(xml_child(root, "memoryBacking"), "locked"))
        return MEM_PIN_LOCKED;
    if (xml_child(root, "launchSecurity"))
        return MEM_PIN_LAUNCH_SECURITY;
    return MEM_PIN_NONE;
}

/* <cputune><emulatorpin> and <iothreadpin iothread='N'>: pins the operator set; <vcpusched>
 * fifo/rr: realtime vCPUs. */
static int xml_cputune(const xmlNode *root, domxml_info *info, char *err, size_t errlen)
{
    const xmlNode *cputune = xml_child(root, "cputune");

    for (const xmlNode *c = cputune ? cputune->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE)
            continue;
        if (xmlStrcmp(c->name, (const xmlChar *)"emulatorpin") == 0) {
            info->emulator_pinned = true;
        } else if (xmlStrcmp(c->name, (const xmlChar *)"vcpusched") == 0) {
            /* realtime vCPUs: the operator placed each one; never re-pinned (decide.c) */
            _cleanup_xmlchar_ xmlChar *sched = xmlGetProp(c, (const xmlChar *)"scheduler");
            _cleanup_xmlchar_ xmlChar *ids = xmlGetProp(c, (const xmlChar *)"vcpus");
            vn_cpuset set;
            char b[DOMXML_SHOWN_BUF];
            if (!sched || (xmlStrcmp(sched, (const xmlChar *)"fifo") != 0 &&
                           xmlStrcmp(sched, (const xmlChar *)"rr") != 0))
                continue; /* batch, idle, other: ordinary vCPUs */
            if (!ids || cpuset_parse((const char *)ids, &set) < 0 || cpuset_empty(&set))
                return vn_fail(err, errlen, -EINVAL, "bad <vcpusched vcpus='%s'>",
                               ids ? shown(b, (const char *)ids) : "");
            cpuset_or(&info->rt_vcpus, &info->rt_vcpus, &set);
        } else if (xmlStrcmp(c->name, (const xmlChar *)"iothreadpin") == 0) {
            _cleanup_xmlchar_ xmlChar *id = xmlGetProp(c, (const xmlChar *)"iothread");
            char b[DOMXML_SHOWN_BUF];
            uint64_t v;
            if (!id || vn_parse_u64((const char *)id, 0, UINT32_MAX, &v) < 0)
                return vn_fail(err, errlen, -EINVAL, "bad <iothreadpin iothread='%s'>",
                               id ? shown(b, (const char *)id) : "");
            if (info->nr_iothread_pins >= DOMXML_MAX_IOTHREAD_PINS)
                return vn_fail(err, errlen, -E2BIG, "more than %u <iothreadpin> elements",
                               DOMXML_MAX_IOTHREAD_PINS);
            info->iothread_pins[info->nr_iothread_pins++] = (unsigned)v;
        }
    }
    return 0;
}

/* <numatune><memory mode nodeset placement>: what virDomainGetNumaParameters reports, read
 * from the live XML (which libvirt updates on a live numatune change). */
static int xml_numatune_memory(const topology *t, const xmlNode *numatune, domxml_info *info,
                               char *err, size_t errlen)
{
    const xmlNode *m = numatune ? xml_child(numatune, "memory") : NULL;
    char b[DOMXML_SHOWN_BUF];
    int mm;

    info->memory = (vn_mem_binding){.mode = VN_MEM_NONE};
    if (!m)
        return 0;
    _cleanup_xmlchar_ xmlChar *mode = xmlGetProp(m, (const xmlChar *)"mode");
    _cleanup_xmlchar_ xmlChar *nodeset = xmlGetProp(m, (const xmlChar *)"nodeset");
    _cleanup_xmlchar_ xmlChar *placement = xmlGetProp(m, (const xmlChar *)"placement");
    info->memory_auto = placement && xmlStrcmp(placement, (const xmlChar *)"auto") == 0;
    if (!nodeset || !nodeset[0])
        return 0; /* an empty nodeset binds nothing, whatever the mode */
    mm = mode ? mem_mode_from_name((const char *)mode, strlen((const char *)mode)) : VN_MEM_STRICT;
    if (mm < 0 || mm == VN_MEM_NONE)
        return vn_fail(err, errlen, -EINVAL, "<numatune><memory> with an unknown mode '%s'",
                       shown(b, (const char *)mode));
    if (topo_nodelist_parse(t, (const char *)nodeset, &info->memory.nodes) < 0)
        return vn_fail(err, errlen, -EINVAL, "<numatune><memory> with a bad nodeset '%s'",
                       shown(b, (const char *)nodeset));
    info->memory.mode = (vn_mem_mode)mm;
    return 0;
}

/*
 * A libvirt size: the element's text or attribute `value` in `unit` (libvirt's scaled units:
 * b/bytes, KB, k/KiB, MB, M/MiB, GB, G/GiB, TB, T/TiB; KiB when absent), in bytes. 0 or -EINVAL.
 */
static int xml_size(const char *value, const char *unit, uint64_t *ret)
{
    static const struct {
        const char *name;
        uint64_t scale;
    } units[] = {
        {"b", 1},
        {"bytes", 1},
        {"KB", 1000},
        {"k", 1024},
        {"KiB", 1024},
        {"MB", 1000 * 1000},
        {"M", 1024 * 1024},
        {"MiB", 1024 * 1024},
        {"GB", 1000 * 1000 * 1000},
        {"G", 1024ULL * 1024 * 1024},
        {"GiB", 1024ULL * 1024 * 1024},
        {"TB", 1000ULL * 1000 * 1000 * 1000},
        {"T", 1024ULL * 1024 * 1024 * 1024},
        {"TiB", 1024ULL * 1024 * 1024 * 1024},
    };
    uint64_t v, scale = 0;

    if (!value || vn_parse_u64(value, 0, UINT64_MAX, &v) < 0)
        return -EINVAL;
    for (size_t i = 0; i < VN_ARRAY_SIZE(units) && !scale; i++)
        if (strcmp(unit ? unit : "KiB", units[i].name) == 0)
            scale = units[i].scale;
    if (!scale || __builtin_mul_overflow(v, scale, ret))
        return -EINVAL;
    return 0;
}

/* <memory unit>N</memory> and the like: the size in bytes, 0 when the element is absent. */
static int xml_size_element(const xmlNode *el, uint64_t *ret)
{
    _cleanup_xmlchar_ xmlChar *text = NULL;
    _cleanup_xmlchar_ xmlChar *unit = NULL;

    *ret = 0;
    if (!el)
        return 0;
    text = xmlNodeGetContent(el);
    unit = xmlGetProp(el, (const xmlChar *)"unit");
    return xml_size((const char *)text, (const char *)unit, ret);
}

/* <cpu><numa><cell id cpus memory unit>: the cells, and which cell each vCPU is in. */
static int xml_cells(const xmlNode *root, domxml_info *info, char *err, size_t errlen)
{
    const xmlNode *numa = xml_child(xml_child(root, "cpu"), "numa");
    char b[DOMXML_SHOWN_BUF];

    memset(info->vcpu_cell, DOMXML_NO_CELL, sizeof(info->vcpu_cell));
    for (const xmlNode *c = numa ? numa->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"cell") != 0)
            continue;
        _cleanup_xmlchar_ xmlChar *id = xmlGetProp(c, (const xmlChar *)"id");
        _cleanup_xmlchar_ xmlChar *cpus = xmlGetProp(c, (const xmlChar *)"cpus");
        _cleanup_xmlchar_ xmlChar *memory = xmlGetProp(c, (const xmlChar *)"memory");
        _cleanup_xmlchar_ xmlChar *unit = xmlGetProp(c, (const xmlChar *)"unit");
        domxml_cell *cell;
        vn_cpuset set;
        uint64_t v;

        if (info->nr_cells >= SNAP_MAX_CELLS_PER_DOMAIN)
            return vn_fail(err, errlen, -E2BIG, "more than %u guest cells",
                           SNAP_MAX_CELLS_PER_DOMAIN);
        if (!id || vn_parse_u64((const char *)id, 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, &v) < 0)
            return vn_fail(err, errlen, -EINVAL, "bad <cell id='%s'>",
                           id ? shown(b, (const char *)id) : "");
        for (unsigned k = 0; k < info->nr_cells; k++)
            if (info->cells[k].id == v)
                return vn_fail(err, errlen, -EINVAL, "two cells with id %u", (unsigned)v);
        cell = &info->cells[info->nr_cells++];
        cell->id = (unsigned)v;
        if (xml_size((const char *)memory, (const char *)unit, &cell->bytes) < 0)
            return vn_fail(err, errlen, -EINVAL, "<cell id='%u'> with a bad memory size '%s'",
                           cell->id, memory ? shown(b, (const char *)memory) : "");
        if (!cpus || !cpus[0])
            continue; /* memory-only: CXL or HBM memory as a guest sees it */
        if (cpuset_parse((const char *)cpus, &set) < 0)
            return vn_fail(err, errlen, -EINVAL, "<cell id='%u'> with bad cpus '%s'", cell->id,
                           shown(b, (const char *)cpus));
        for (int k = cpuset_first(&set); k >= 0; k = cpuset_next(&set, k)) {
            if (k >= DOMXML_MAX_VCPUS)
                return vn_fail(err, errlen, -E2BIG, "vCPU %d in <cell id='%u'>, at most %u handled",
                               k, cell->id, DOMXML_MAX_VCPUS - 1);
            if (info->vcpu_cell[k] != DOMXML_NO_CELL)
                return vn_fail(err, errlen, -EINVAL, "vCPU %d in two cells", k);
            info->vcpu_cell[k] = (uint8_t)cell->id;
            cell->has_vcpus = true;
        }
    }
    return 0;
}

/* <memory> and each <devices><memory><target><size>: what the guest's RAM is made of. */
static int xml_memory(const xmlNode *root, domxml_info *info, char *err, size_t errlen)
{
    const xmlNode *devices = xml_child(root, "devices");

    if (xml_size_element(xml_child(root, "memory"), &info->memory_bytes) < 0)
        return vn_fail(err, errlen, -EINVAL, "bad <memory> size");
    for (const xmlNode *c = devices ? devices->children : NULL; c; c = c->next) {
        uint64_t v;

        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"memory") != 0)
            continue;
        if (xml_size_element(xml_child(xml_child(c, "target"), "size"), &v) < 0 ||
            __builtin_add_overflow(info->device_bytes, v, &info->device_bytes))
            return vn_fail(err, errlen, -EINVAL, "bad memory device size");
    }
    return 0;
}

/* <vcpu>N</vcpu> and <memoryBacking><hugepages><page size unit>. */
static int xml_vcpus_huge(const xmlNode *root, domxml_info *info, char *err, size_t errlen)
{
    const xmlNode *vcpu = xml_child(root, "vcpu");
    const xmlNode *huge = xml_child(xml_child(root, "memoryBacking"), "hugepages");

    if (vcpu) {
        _cleanup_xmlchar_ xmlChar *text = xmlNodeGetContent(vcpu);
        uint64_t v;
        if (!text || vn_parse_u64((const char *)text, 1, DOMXML_MAX_VCPUS, &v) < 0)
            return vn_fail(err, errlen, -EINVAL, "bad <vcpu> count (1 to %u handled)",
                           DOMXML_MAX_VCPUS);
        info->nr_vcpus = (unsigned)v;
    }
    info->hugepages = huge != NULL;
    const xmlNode *page = xml_child(huge, "page");
    if (page) {
        _cleanup_xmlchar_ xmlChar *size = xmlGetProp(page, (const xmlChar *)"size");
        _cleanup_xmlchar_ xmlChar *unit = xmlGetProp(page, (const xmlChar *)"unit");
        if (xml_size((const char *)size, (const char *)unit, &info->huge_page_bytes) < 0)
            return vn_fail(err, errlen, -EINVAL, "bad <hugepages><page size>");
    }
    return 0;
}

/* <vcpu cpuset>, <numatune><memnode>, pinned memory, <cputune> pins, cells and sizes. */
int domxml_parse(const char *xml, const topology *t, domxml_info *ret, char *err, size_t errlen)
{
    _cleanup_(xml_docp) xmlDoc *doc = NULL;
    const xmlNode *root, *vcpu, *numatune;
    domxml_info info = {0};
    size_t len;
    int r;

    len = strnlen(xml, DOMXML_MAX + 1);
    if (len > DOMXML_MAX)
        return vn_fail(err, errlen, -EINVAL, "domain XML longer than %u bytes", DOMXML_MAX);
    /* No network, no entity substitution, no messages on stderr. */
    doc = xmlReadMemory(xml, (int)len, "domain.xml", NULL,
                        XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!doc)
        return vn_fail(err, errlen, -EINVAL, "the domain XML does not parse");
    root = xmlDocGetRootElement(doc);
    if (!root || xmlStrcmp(root->name, (const xmlChar *)"domain") != 0)
        return vn_fail(err, errlen, -EINVAL, "the domain XML has no <domain> root");

    info.mem_pin = xml_mem_pin(root);
    vcpu = xml_child(root, "vcpu");
    if (vcpu) {
        _cleanup_xmlchar_ xmlChar *cpuset = xmlGetProp(vcpu, (const xmlChar *)"cpuset");
        char b[DOMXML_SHOWN_BUF];

        if (cpuset) {
            r = cpuset_parse((const char *)cpuset, &info.cpuset);
            if (r < 0)
                return vn_fail(err, errlen, r, "bad <vcpu cpuset='%s'>",
                               shown(b, (const char *)cpuset));
            info.has_cpuset = true;
        }
    }

    numatune = xml_child(root, "numatune");
    r = xml_numatune_memory(t, numatune, &info, err, errlen);
    if (r < 0)
        return r;
    for (const xmlNode *c = numatune ? numatune->children : NULL; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE || xmlStrcmp(c->name, (const xmlChar *)"memnode") != 0)
            continue;
        if (info.nr_memnodes >= SNAP_MAX_CELLS_PER_DOMAIN)
            return vn_fail(err, errlen, -E2BIG, "more than %u <memnode> elements",
                           SNAP_MAX_CELLS_PER_DOMAIN);
        r = xml_memnode_parse(t, c, &info.memnodes[info.nr_memnodes], err, errlen);
        if (r < 0)
            return r;
        info.nr_memnodes++;
    }
    r = xml_cputune(root, &info, err, errlen);
    if (r < 0)
        return r;
    r = xml_cells(root, &info, err, errlen);
    if (r < 0)
        return r;
    r = xml_memory(root, &info, err, errlen);
    if (r < 0)
        return r;
    r = xml_vcpus_huge(root, &info, err, errlen);
    if (r < 0)
        return r;
    *ret = info;
    return 0;
}
