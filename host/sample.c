/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stage 2: sample one running domain into a snap_domain.
 *
 * Sources, per pass (an idle pass makes no libvirt call: tests/e2e/calls.sh):
 *   /proc              each vCPU thread's CPU time, current CPU and affinity (sample_proc.c),
 *                      the domain's cgroup cpuset, QEMU's Mems_allowed
 *   live XML (cached)  <vcpu cpuset>, <numatune> <memory> and <memnode>, pinned memory,
 *                      realtime vCPUs; read again after an event says it changed
 *   move_pages queries  pages per host node of each cell's RAM backend, in bounded windows
 *                      with a stride (rules 4 and 5), never for memory bound to one node
 *                      (rule 2)
 *   libvirt statistics  KVM's halt-polling time (KVM domains only), when a vCPU ran above
 *                      busy_threshold since the last sample or the last reading is a minute old
 * and once per QEMU run: the vCPU threads and their guest cells (query-cpus-fast), where each
 * cell's RAM (boot backend, memory devices, memory-only cells) sits in the QEMU process
 * (ramlayout.c, cached in dom_state.sample.ram[]).
 *
 * QEMU's replies are parsed, strictly, by qemu.c.
 */
#include "sample.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domxml.h"
#include "json.h"
#include "log.h"
#include "qemu.h"
#include "ramlayout.h"
#include "rules.h"
#include "sample_proc.h"
#include "sample_vcpus.h"
#include "util.h"

/* Bytes of untrusted text quoted in an error message. */
#define SAMPLE_SHOWN_MAX 64
#define SAMPLE_SHOWN_BUF (SAMPLE_SHOWN_MAX + 8)

/* ---- helpers ---- */

/* Untrusted text for an error message: printable ASCII, at most SAMPLE_SHOWN_MAX bytes. */
#define shown(buf, s) vn_shown_str((buf), sizeof(buf), (s), SAMPLE_SHOWN_MAX)

/* ---- page counting ---- */

static uint64_t piece_pages(const sample_piece *p, uint64_t page_size)
{
    return p->len / page_size + (p->len % page_size != 0);
}

int sample_count_pieces(const numa_ops *ops, const topology *t, pid_t pid,
                        const sample_piece *piece, unsigned nr_pieces, uint64_t page_size,
                        uint64_t seed, uint64_t counts[VN_MAX_NODES], unsigned *ret_queries)
{
    _cleanup_free_ void **pages = NULL;
    _cleanup_free_ int *status = NULL;
    uint64_t hits[VN_MAX_NODES] = {0};
    uint64_t region_pages = 0, sampled, base = 0; /* base: first page of piece[at] */
    unsigned queries = 0, at = 0;
    rule_walk w;

    if (!ops || !ops->query || !t || !counts || pid <= 0 || page_size == 0 ||
        (page_size & (page_size - 1)) || (nr_pieces && !piece))
        return -EINVAL;
    for (unsigned i = 0; i < nr_pieces; i++) {
        if (piece[i].hva > UINT64_MAX - piece[i].len || piece[i].hva + piece[i].len > UINTPTR_MAX)
            return -EINVAL;
        region_pages += piece_pages(&piece[i], page_size);
    }

    w = rule_lock_hold_walk(region_pages);
    if (region_pages == 0 || w.nr_windows == 0) {
        memset(counts, 0, sizeof(hits));
        if (ret_queries)
            *ret_queries = 0;
        return 0;
    }
    sampled = (region_pages + w.stride_pages - 1) / w.stride_pages;

    pages = calloc(w.window_pages, sizeof(*pages));
    status = calloc(w.window_pages, sizeof(*status));
    if (!pages || !status)
        return -ENOMEM;

    for (uint64_t first = 0; first < sampled; first += w.window_pages) {
        unsigned long n = (unsigned long)VN_MIN((uint64_t)w.window_pages, sampled - first);
        int r;

        for (unsigned long i = 0; i < n; i++) {
            /* the walk's pages rise: the piece holding the next one is this one or later */
            uint64_t page = rule_lock_hold_page(&w, region_pages, seed, first + i);
            while (at + 1 < nr_pieces && page >= base + piece_pages(&piece[at], page_size))
                base += piece_pages(&piece[at++], page_size);
            pages[i] = (void *)(uintptr_t)(piece[at].hva + (page - base) * page_size);
            status[i] = -ENOENT;
        }
        r = ops->query(pid, n, pages, status);
        queries++;
        if (r < 0)
            return r;
        if (ops->resolve_faulted) {
            /* Linux 6.1 answers -EFAULT for present pages that automatic NUMA balancing
             * made PROT_NONE: ask pagemap for their frames instead */
            bool faulted = false;
            for (unsigned long i = 0; i < n && !faulted; i++)
                faulted = status[i] == -EFAULT;
            if (faulted && (r = ops->resolve_faulted(pid, n, pages, status)) < 0)
                return r;
        }
        for (unsigned long i = 0; i < n; i++) {
            int node;

            if (status[i] < 0)
                continue; /* not present (-ENOENT), not mapped (-EFAULT), ... */
            node = topo_node_index(t, (unsigned)status[i]);
            if (node >= 0)
                hits[node]++;
        }
    }
    /* each sample stands for pages / samples pages (exactly 1 without a stride) */
    for (unsigned n = 0; n < VN_MAX_NODES; n++)
        counts[n] = w.stride_pages == 1
                        ? hits[n]
                        : (uint64_t)((unsigned __int128)hits[n] * region_pages / sampled);
    if (ret_queries)
        *ret_queries = queries;
    return 0;
}

int sample_count_pages(const numa_ops *ops, const topology *t, pid_t pid, uint64_t hva,
                       uint64_t len, uint64_t page_size, uint64_t seed,
                       uint64_t counts[VN_MAX_NODES], unsigned *ret_queries)
{
    sample_piece one = {.hva = hva, .len = len};

    return sample_count_pieces(ops, t, pid, &one, 1, page_size, seed, counts, ret_queries);
}

/* ---- sample_domain ---- */

/* After a count of ram[] cell c: wait longer before the next one when it is settled. */
static void mem_settle(dom_sample_cache *sc, unsigned c, unsigned nr_nodes, uint64_t cell_pages,
                       const uint64_t pages[VN_MAX_NODES])
{
    bool settled = sc->mem_valid[c];

    for (unsigned n = 0; n < nr_nodes && settled; n++) {
        uint64_t a = pages[n], b = sc->mem_pages[c][n];
        settled = (a > b ? a - b : b - a) * 1000 <= cell_pages * SAMPLE_SETTLED_PERMILLE;
    }
    sc->mem_wait[c] =
        settled ? (uint8_t)VN_MIN(2u * VN_MAX(sc->mem_wait[c], 1u), (unsigned)SAMPLE_MEM_MAX_WAIT)
                : 1;
    sc->mem_skipped[c] = 0;
    sc->mem_valid[c] = true;
    memcpy(sc->mem_pages[c], pages, nr_nodes * sizeof(pages[0]));
}

void sample_mem_changed(dom_sample_cache *sc)
{
    memset(sc->mem_valid, 0, sizeof(sc->mem_valid));
    sc->mem_fresh = 0;
}

/* True when rule 2 applies: memory bound to exactly one node. */
static bool binding_pins_memory(const vn_mem_binding *b)
{
    return (b->mode == VN_MEM_STRICT || b->mode == VN_MEM_RESTRICTIVE) &&
           rule_binding_single_node(b) >= 0;
}

/* CPUs every vCPU may use: the domain's cgroup bound (cgroup_known) and <vcpu cpuset>
 * (else all) within the topology, within the balancer's allowed nodes when set. */
static vn_cpuset allowed_cpus(const topology *t, const domxml_info *x,
                              const vn_nodeset *allowed_nodes, const vn_cpuset *cgroup)
{
    vn_cpuset a = t->cpus, nodes;

    if (cgroup)
        cpuset_and(&a, &a, cgroup);
    if (x->has_cpuset)
        cpuset_and(&a, &a, &x->cpuset);
    if (!nodeset_empty(allowed_nodes)) {
        cpuset_zero(&nodes);
        NODESET_FOREACH(n, allowed_nodes)
        {
            if ((unsigned)n < t->nr_nodes)
                cpuset_or(&nodes, &nodes, &t->nodes[n].cpus);
        }
        cpuset_and(&a, &a, &nodes);
    }
    return a;
}

static int domain_binding(virt_dom *d, const topology *t, vn_mem_binding *ret, char *err,
                          size_t errlen)
{
    char nodeset[STATE_NODESET_MAX] = "", b[SAMPLE_SHOWN_BUF];
    vn_mem_binding bind = {.mode = VN_MEM_NONE};
    vn_mem_mode mode = VN_MEM_NONE;
    int r;

    r = virt_numa_get(d, &mode, nodeset, sizeof(nodeset));
    if (r < 0)
        return vn_fail(err, errlen, r, "reading the numatune failed: %s", virt_last_error());
    if (nodeset[0]) {
        r = topo_nodelist_parse(t, nodeset, &bind.nodes);
        if (r < 0)
            return vn_fail(err, errlen, r, "bad numatune nodeset '%s'", shown(b, nodeset));
        bind.mode = mode;
    }
    /* An empty nodeset binds nothing, whatever mode libvirt reports. */
    *ret = bind;
    return 0;
}

bool sample_uses_monitor(virt_dom *d, const dom_sample_cache *sc, bool use_qmp)
{
    virt_dom_id ident;

    if (!use_qmp || virt_dom_ident(d, &ident) < 0)
        return use_qmp;
    /* the vCPU threads and the RAM layout are learnt once per QEMU run (KVM's halt polling
     * goes through libvirt's statistics: vcpu_poll) */
    return sc->vcpus_for_id != ident.id || !sc->qv || sc->ram_for_id != ident.id;
}

bool sample_needs_window(const dom_sample_cache *sc)
{
    return sc->nr_prev == 0;
}

/* ---- the live XML ---- */

int sample_live_xml(virt_dom *d, dom_sample_cache *sc, double now_s, const char **ret, char *err,
                    size_t errlen)
{
    char *xml = NULL;
    int r;

    if (!sc->xml || now_s - sc->xml_at_s >= SAMPLE_XML_REFRESH_S || now_s < sc->xml_at_s) {
        r = virt_dom_xml(d, &xml);
        if (r < 0)
            return vn_fail(err, errlen, r, "reading the live XML failed: %s", virt_last_error());
        free(sc->xml);
        sc->xml = xml;
        sc->xml_at_s = now_s;
        sc->xml_gen++;
    }
    *ret = sc->xml;
    return 0;
}

/* What the cached live XML (sample_live_xml) says, parsed once per read of it. */
static int live_xml_info(dom_sample_cache *sc, const topology *t, domxml_info *x, char *err,
                         size_t errlen)
{
    if (!sc->xml)
        return vn_fail(err, errlen, -EINVAL, "no live XML");
    if (sc->xml_info_gen != sc->xml_gen) {
        int r = domxml_parse(sc->xml, t, &sc->xml_info, err, errlen);
        if (r < 0) {
            sc->xml_info_gen = 0;
            return r;
        }
        sc->xml_info_gen = sc->xml_gen;
    }
    *x = sc->xml_info;
    return 0;
}

void sample_xml_stale(dom_sample_cache *sc)
{
    free(sc->xml);
    sc->xml = NULL;
}

/* The guest cells that have vCPUs (cell_of[i]: vCPU i's), in cell order, into ids; how many,
 * and their mask in *mask. */
static unsigned vcpu_cells(const int *cell_of, unsigned nr_vcpus,
                           unsigned ids[SNAP_MAX_CELLS_PER_DOMAIN], uint64_t *mask)
{
    unsigned n = 0;

    *mask = 0;
    for (unsigned i = 0; i < nr_vcpus; i++)
        *mask |= 1ULL << cell_of[i];
    for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
        if (*mask & (1ULL << c))
            ids[n++] = c;
    return n;
}

/* Guest cell `id`'s memory binding: its <memnode>, else the domain's (dom). */
static vn_mem_binding cell_binding(const domxml_info *x, vn_mem_binding dom, unsigned id)
{
    for (unsigned k = 0; k < x->nr_memnodes; k++)
        if (x->memnodes[k].cellid == id)
            return x->memnodes[k].binding;
    return dom;
}

/*
 * A cell's binding as decide takes it: the <memnode mode='preferred'> of the node the qemu
 * hook placed the cell's memory on is vnumad's own (hookxml.h), not the operator's wish that
 * memory never leaves it: none.
 */
static vn_mem_binding placed_binding(const topology *t, const dom_placed *p, unsigned id,
                                     vn_mem_binding b)
{
    if (!p || !p->valid || b.mode != VN_MEM_PREFERRED)
        return b;
    for (unsigned k = 0; k < p->nr; k++) {
        int n = topo_node_index(t, p->cells[k].node);
        if (p->cells[k].cell == id && p->cells[k].memory && n >= 0 &&
            rule_binding_single_node(&b) == n)
            return (vn_mem_binding){.mode = VN_MEM_NONE};
    }
    return b;
}

/* The page size of a range, found once per RAM layout (and said when it is hugetlbfs's).
 * 0, or -ESRCH when QEMU is gone; a size it cannot tell is taken as the base page size. */
static int range_page_size(const sample_host *h, dom_sample_cache *sc, ram_range *rr,
                           const char *name)
{
    int r;

    if (rr->page_size)
        return 0;
    r = ramlayout_page_size(h->root, sc->pid, rr->hva, &rr->page_size, &rr->hugetlb, &rr->granule);
    if (r == -ESRCH) {
        rr->page_size = 0;
        return r;
    }
    if (r < 0)
        log_debug("Cannot tell the page size of guest cell %u of '%s' (%s): taking %u", rr->cell,
                  LOG_Q(name), strerror(-r), RAM_BASE_PAGE_SIZE);
    if (rr->hugetlb)
        log_info("Guest cell %u of '%s' is on hugetlbfs, %llu KiB pages", rr->cell, LOG_Q(name),
                 (unsigned long long)(rr->page_size / 1024));
    return 0;
}

/*
 * While the window runs: the RAM layout and each range's page counts, for the sample that
 * closes the window (sample_memory takes them). What fails here is left to that sample,
 * which tries again and says why.
 */
static void window_count_memory(virt_dom *d, const sample_host *h, const sample_input *in,
                                dom_sample_cache *sc, dom_counters *count, const virt_dom_id *ident,
                                const int *cell_of, unsigned nr_vcpus, bool guest_numa,
                                double now_s)
{
    unsigned cell_ids[SNAP_MAX_CELLS_PER_DOMAIN], nr_cells;
    uint64_t cell_mask, fresh = 0;
    const char *xml = NULL;
    domxml_info x = {0};
    char err[256];

    /* rule 2: memory bound to one node is never looked at; with placement='auto' the binding
     * is numad's, which the sample asks libvirt for: that domain's sample counts itself */
    if (sample_live_xml(d, sc, now_s, &xml, err, sizeof(err)) < 0 ||
        live_xml_info(sc, h->t, &x, err, sizeof(err)) < 0 || x.memory_auto)
        return;

    nr_cells = vcpu_cells(cell_of, nr_vcpus, cell_ids, &cell_mask);
    if (ramlayout_ensure(d, in, sc, count, ident, cell_ids, nr_cells, guest_numa, err,
                         sizeof(err)) <= 0 ||
        sample_find_qemu(h->root, ident, sc, err, sizeof(err)) < 0)
        return;
    for (unsigned ri = 0; ri < sc->nr_ram && ri < SNAP_MAX_CELLS_PER_DOMAIN; ri++) {
        ram_range *rr = &sc->ram[ri];
        uint64_t pages[VN_MAX_NODES] = {0};
        unsigned q = 0;

        vn_mem_binding b = cell_binding(&x, x.memory, rr->cell);
        if (binding_pins_memory(&b))
            continue;
        if (range_page_size(h, sc, rr, ident->name) < 0 || rr->page_size == 0 ||
            sample_count_pages(h->ops, h->t, sc->pid, rr->hva, rr->size, rr->page_size,
                               in->passes * 0x9e3779b97f4a7c15ULL, pages, &q) < 0)
            return;
        count->memory_scans += q;
        mem_settle(sc, ri, h->t->nr_nodes, rr->size / rr->page_size, pages);
        fresh |= 1ULL << ri;
    }
    sc->mem_fresh = fresh;
    sc->mem_fresh_pass = in->passes + 1;
}

int sample_open_window(virt_dom *d, const sample_host *h, const sample_input *in,
                       dom_sample_cache *sc, dom_counters *count, double now_s, char *err,
                       size_t errlen)
{
    _cleanup_free_ virt_vcpu *vcpus = NULL;
    _cleanup_free_ int *cell_of = NULL;
    _cleanup_free_ uint64_t *poll_ns = NULL;
    unsigned nr_vcpus = 0;
    bool guest_numa;
    virt_dom_id ident;
    int r;

    r = virt_dom_ident(d, &ident);
    if (r < 0)
        return vn_fail(err, errlen, r, "identifying the domain failed: %s", virt_last_error());
    r = sample_read_vcpus(d, h, in, sc, &ident, now_s, &vcpus, &nr_vcpus, &cell_of, &guest_numa,
                          &poll_ns, err, errlen);
    if (r < 0)
        return r;
    sample_remember_cpu_times(sc, vcpus, nr_vcpus, poll_ns, now_s);
    sc->mem_fresh = 0;
    if (h->use_qmp && h->ops && h->ops->query)
        window_count_memory(d, h, in, sc, count, &ident, cell_of, nr_vcpus, guest_numa, now_s);
    return 0;
}

/*
 * Each cell's pages per node (rule 2: none are looked at for memory bound to one node), from
 * the ranges ramlayout_ensure() found: windowed page queries, or the last counts while settled.
 */
static int sample_memory(const sample_host *h, const sample_input *in, dom_sample_cache *sc,
                         dom_counters *count, const virt_dom_id *ident, const unsigned *cell_ids,
                         snap_domain *dom, char *err, size_t errlen)
{
    const topology *t = h->t;
    const numa_ops *ops = h->ops;
    unsigned nr_cells = dom->nr_cells;
    /* the mover's refused ranges, if they are of this RAM layout (mover_take) */
    uint64_t refused = in->mem_refused_gen == sc->ram_gen ? in->mem_refused : 0;
    int r;

    char why[STATE_ERROR_MAX] = "";
    r = sample_find_qemu(h->root, ident, sc, why, sizeof(why));
    if (r < 0)
        return vn_fail(err, errlen, r, "finding its QEMU failed: %s", why[0] ? why : strerror(-r));
    uint64_t rss_kib = 0, ram_kib = 0;
    bool counted = sc->mem_fresh_pass == in->passes + 1 && sc->mem_fresh;
    if (sample_mems_allowed(h->root, sc->pid, t, &sc->mems_allowed, &rss_kib) < 0)
        nodeset_zero(&sc->mems_allowed); /* unknown: the configured nodes stand */
    for (unsigned ri = 0; ri < sc->nr_ram; ri++)
        ram_kib += sc->ram[ri].size / 1024;
    /* the guest touched or gave back memory since the last count: count again (sample.h) */
    if (!counted && rss_kib && sc->rss_counted_kib &&
        (rss_kib > sc->rss_counted_kib ? rss_kib - sc->rss_counted_kib
                                       : sc->rss_counted_kib - rss_kib) *
                1000 >
            ram_kib * SAMPLE_SETTLED_PERMILLE)
        sample_mem_changed(sc);

    for (unsigned c = 0; c < nr_cells; c++) {
        snap_cell *cell = &dom->cells[c];
        bool all_refused = true;
        unsigned seen = 0;

        /* its boot RAM (ram[c]), then its memory devices (ram[nr_cells...]) */
        for (unsigned ri = 0; ri < sc->nr_ram; ri++) {
            ram_range *rr = &sc->ram[ri];
            uint64_t pages[VN_MAX_NODES] = {0}, nr_pages;
            unsigned q = 0;

            if (ri < sc->nr_ram_boot ? ri != c : rr->cell != cell_ids[c])
                continue;
            r = range_page_size(h, sc, rr, ident->name);
            if (r == -ESRCH)
                return vn_fail(err, errlen, r, "its QEMU process is gone");
            if (!seen++) { /* the cell's: its first range's */
                cell->page_size = rr->page_size;
                cell->granule = rr->granule;
            }
            nr_pages = rr->size / rr->page_size;
            all_refused &= ri < 64 && (refused & (1ULL << ri));
            if (binding_pins_memory(&cell->binding)) {
                /* Rule 2 (cpuset skip): no page can move, so none is looked at. */
                pages[rule_binding_single_node(&cell->binding)] = nr_pages;
            } else if (sc->mem_valid[ri] && sc->mem_fresh_pass == in->passes + 1 &&
                       (sc->mem_fresh & (1ULL << ri))) {
                /* counted while this pass's window ran (sample_open_window) */
                memcpy(pages, sc->mem_pages[ri], t->nr_nodes * sizeof(pages[0]));
            } else if (sc->mem_valid[ri] && sc->mem_skipped[ri] + 1 < sc->mem_wait[ri]) {
                /* settled: the last counts stand (sample.h) */
                memcpy(pages, sc->mem_pages[ri], t->nr_nodes * sizeof(pages[0]));
                sc->mem_skipped[ri]++;
                count->memory_reuses++;
            } else {
                r = sample_count_pages(ops, t, sc->pid, rr->hva, rr->size, rr->page_size,
                                       in->passes * 0x9e3779b97f4a7c15ULL, pages, &q);
                count->memory_scans += q;
                if (r < 0)
                    return vn_fail(err, errlen, r, "page query of guest cell %u failed: %s",
                                   cell->id, strerror(-r));
                mem_settle(sc, ri, t->nr_nodes, nr_pages, pages);
                counted = true;
            }
            /* in the cell's page size (a device's pages may be of another size) */
            for (unsigned n = 0; n < t->nr_nodes; n++)
                cell->pages[n] +=
                    rr->page_size == cell->page_size
                        ? pages[n]
                        : (uint64_t)((unsigned __int128)pages[n] * rr->page_size / cell->page_size);
        }
        if (seen && all_refused && refused)
            cell->mem_pinned = MEM_PIN_REFUSED; /* move_pages moved none of it: it stays */
    }
    if (counted)
        sc->rss_counted_kib = rss_kib;
    return 0;
}

void sample_cache_init(dom_sample_cache *sc)
{
    memset(sc, 0, sizeof(*sc));
    sc->ram_for_id = -1;
    sc->vcpus_for_id = -1;
    memset(sc->prev_poll_ns, 0xff, sizeof(sc->prev_poll_ns));
}

dom_state *sample_state_copy(const dom_state *st)
{
    dom_state *c = malloc(sizeof(*c));

    if (!c)
        return NULL;
    memcpy(c, st, sizeof(*c));
    c->dom = NULL;
    c->guest.link = NULL;
    c->guest.hints = NULL;
    c->publish.last_record = NULL;
    memset(c->publish.history, 0, sizeof(c->publish.history));
    c->sample.xml = st->sample.xml ? strdup(st->sample.xml) : NULL;
    c->sample.qv =
        st->sample.qv && st->sample.nr_qv ? malloc(st->sample.nr_qv * sizeof(*c->sample.qv)) : NULL;
    if ((st->sample.xml && !c->sample.xml) ||
        (st->sample.qv && st->sample.nr_qv && !c->sample.qv)) {
        sample_state_free(c);
        return NULL;
    }
    if (c->sample.qv)
        memcpy(c->sample.qv, st->sample.qv, st->sample.nr_qv * sizeof(*c->sample.qv));
    else
        c->sample.nr_qv = 0;
    return c;
}

void sample_state_free(dom_state *copy)
{
    if (!copy)
        return;
    free(copy->sample.xml);
    free(copy->sample.qv);
    free(copy);
}

int sample_domain(virt_dom *d, const sample_host *h, const sample_input *in, dom_sample_cache *sc,
                  dom_counters *count, double now_s, snap_domain *out, char *err, size_t errlen)
{
    const topology *t = h->t;
    const numa_ops *ops = h->ops;
    bool use_qmp = h->use_qmp;
    _cleanup_(snap_domain_clear) snap_domain dom = {0};
    _cleanup_free_ virt_vcpu *vcpus = NULL;
    const char *xml = NULL;
    _cleanup_free_ int *cell_of = NULL;
    _cleanup_free_ uint64_t *poll_ns = NULL;
    unsigned nr_vcpus = 0, nr_cells = 0, cell_ids[SNAP_MAX_CELLS_PER_DOMAIN];
    uint64_t cell_mask = 0;
    bool guest_numa = false, first, ram_ok = false;
    vn_mem_binding dom_bind;
    virt_dom_id ident;
    domxml_info x = {0};
    vn_cpuset allowed;
    double dt;
    int r;

    if (!d || !in || !sc || !count || !t || !out || (use_qmp && (!ops || !ops->query)))
        return vn_fail(err, errlen, -EINVAL, "bad arguments");

    r = virt_dom_ident(d, &ident);
    if (r < 0)
        return vn_fail(err, errlen, r, "identifying the domain failed: %s", virt_last_error());
    /* vCPU -> cell: the guest's node-id from QMP, or one cell 0 */
    r = sample_read_vcpus(d, h, in, sc, &ident, now_s, &vcpus, &nr_vcpus, &cell_of, &guest_numa,
                          &poll_ns, err, errlen);
    if (r < 0)
        return r;

    r = sample_live_xml(d, sc, now_s, &xml, err, errlen);
    if (r < 0)
        return r;
    r = live_xml_info(sc, t, &x, err, errlen);
    if (r < 0)
        return r;
    /* the numatune from the live XML; placement='auto' keeps numad's nodeset out of it */
    dom_bind = x.memory;
    if (x.memory_auto) {
        r = domain_binding(d, t, &dom_bind, err, errlen);
        if (r < 0)
            return r;
    }

    /* without the monitor, each vCPU's cell is the live XML's <cell cpus> */
    if (!use_qmp && x.nr_cells) {
        for (unsigned i = 0; i < nr_vcpus; i++) {
            unsigned v = vcpus[i].number;
            cell_of[i] =
                v < DOMXML_MAX_VCPUS && x.vcpu_cell[v] != DOMXML_NO_CELL ? x.vcpu_cell[v] : 0;
        }
        guest_numa = true;
    }
    nr_cells = vcpu_cells(cell_of, nr_vcpus, cell_ids, &cell_mask);
    /* where each cell's RAM is: asked of QEMU, or without its monitor read from the process's
     * maps; cells that have memory but no vCPU (memory-only) follow */
    if (use_qmp) {
        r = ramlayout_ensure(d, in, sc, count, &ident, cell_ids, nr_cells, guest_numa, err, errlen);
    } else if (ops && ops->query) {
        (void)sample_find_qemu(h->root, &ident, sc, NULL, 0);
        r = ramlayout_ensure_maps(h->root, sc, &ident, &x, !h->one_off);
    } else {
        r = 0;
    }
    if (r < 0)
        return r == -ESRCH ? vn_fail(err, errlen, r, "its QEMU process is gone") : r;
    ram_ok = r > 0;
    for (unsigned ri = sc->nr_ram_boot; ram_ok && ri < sc->nr_ram; ri++)
        if (!(cell_mask & (1ULL << sc->ram[ri].cell)) && nr_cells < SNAP_MAX_CELLS_PER_DOMAIN) {
            cell_mask |= 1ULL << sc->ram[ri].cell;
            cell_ids[nr_cells++] = sc->ram[ri].cell;
        }

    /* busy fractions: CPU time over wall time since the previous sample */
    dt = now_s - sc->prev_sample_s;
    first = sc->nr_prev == 0 || sc->nr_prev != nr_vcpus || !(dt > 0);
    /* the domain's own bound: its cgroup (a host may confine machine.slice), not vnumad's */
    vn_cpuset cg;
    (void)sample_find_qemu(h->root, &ident, sc, NULL,
                           0); /* none: no bound is known, the XML's stand */
    if (sc->cg_pid != sc->pid || sc->cg_gen != sc->xml_gen) {
        sc->cg_file[0] = '\0'; /* another process, or a minute on (SAMPLE_XML_REFRESH_S) */
        sc->cg_pid = sc->pid;
        sc->cg_gen = sc->xml_gen;
    }
    int cgr = sc->pid > 0
                  ? sample_cgroup_cpus(h->root, sc->pid, sc->cg_file, sizeof(sc->cg_file), &cg)
                  : -ESRCH;
    bool cg_known = cgr == 0;
    if (!sc->bound_logged || (cg_known && !cpuset_equal(&cg, &sc->bound))) {
        char b[SAMPLE_SHOWN_BUF] = "";
        if (cg_known)
            (void)cpuset_format(&cg, b, sizeof(b));
        log_debug("The cgroup of '%s' (pid %d) bounds its vCPUs to %s", LOG_Q(in->name),
                  (int)sc->pid, cg_known ? b : strerror(-cgr));
        sc->bound_logged = true;
        if (cg_known)
            sc->bound = cg;
    }
    allowed = allowed_cpus(t, &x, &in->cfg->allowed_nodes, cg_known ? &cg : NULL);

    dom.cells = calloc(nr_cells, sizeof(*dom.cells));
    if (!dom.cells)
        return vn_fail(err, errlen, -ENOMEM, "out of memory");
    dom.nr_cells = nr_cells;
    for (unsigned c = 0; c < nr_cells; c++) {
        snap_cell *cell = &dom.cells[c];
        unsigned n = 0;

        for (unsigned i = 0; i < nr_vcpus; i++)
            n += (unsigned)cell_of[i] == cell_ids[c];
        cell->vcpus = calloc(n ? n : 1, sizeof(*cell->vcpus)); /* none: memory-only */
        if (!cell->vcpus || snap_cell_nodes(cell, t->nr_nodes) < 0)
            return vn_fail(err, errlen, -ENOMEM, "out of memory");
        cell->id = cell_ids[c];
        cell->page_size = RAM_BASE_PAGE_SIZE;
        cell->mem_pinned = x.mem_pin;
        cell->last_candidate = in->last_candidate[cell_ids[c]];
        if (in->down_at && in->down_at[cell_ids[c]] &&
            in->age_passes + 1 >= in->down_at[cell_ids[c]])
            cell->down_ago = in->age_passes + 1 - in->down_at[cell_ids[c]] + 1;
        cell->binding =
            placed_binding(t, in->placed, cell_ids[c], cell_binding(&x, dom_bind, cell_ids[c]));

        for (unsigned i = 0; i < nr_vcpus; i++) {
            const virt_vcpu *v = &vcpus[i];
            snap_vcpu *sv;
            double busy = 0;

            if ((unsigned)cell_of[i] != cell_ids[c])
                continue;
            if (!first && v->cpu_time_ns >= sc->prev_cpu_ns[v->number]) {
                uint64_t run = v->cpu_time_ns - sc->prev_cpu_ns[v->number];
                /* KVM's halt polling is not guest work */
                run -= VN_MIN(run, sample_poll_in_window(sc, v->number, poll_ns[i]));
                busy = (double)run / (dt * 1e9);
            }
            sv = &cell->vcpus[cell->nr_vcpus++];
            sv->id = v->number;
            sv->busy = busy < 0 ? 0 : busy > 1 ? 1 : busy;
            sv->allowed = allowed;
            sv->pinned = v->affinity;
            sv->cpu = v->cpu;
            /* realtime vCPUs stay where the operator put them unless realtime="move" */
            sv->fixed = cpuset_isset(&x.rt_vcpus, v->number) && !in->cfg->move_realtime;
        }
    }

    /* memory: each cell's pages per node */
    if (ram_ok) {
        r = sample_memory(h, in, sc, count, &ident, cell_ids, &dom, err, errlen);
        sc->mem_fresh = 0; /* the window's counts serve one sample */
        if (r < 0)
            return r;
    }

    /* everything read: fill in the domain and remember this sample */
    (void)snprintf(dom.name, sizeof(dom.name), "%s", in->name);
    (void)snprintf(dom.uuid, sizeof(dom.uuid), "%s", in->uuid);
    dom.mode = in->cfg->mode;
    dom.priority = in->cfg->priority;
    dom.tier = in->cfg->tier;
    dom.allowed_nodes = in->cfg->allowed_nodes;
    /* never a target QEMU may not have memory on (move_pages would refuse it with EACCES) */
    if (ram_ok && !nodeset_empty(&sc->mems_allowed)) {
        vn_nodeset want =
            nodeset_empty(&dom.allowed_nodes) ? nodeset_first_n(t->nr_nodes) : dom.allowed_nodes;
        nodeset_and(&want, &want, &sc->mems_allowed);
        if (!nodeset_empty(&want))
            dom.allowed_nodes = want;
    }
    dom.age_passes = in->age_passes;
    dom.preferred_node = in->preferred_node;
    dom.busy_unmeasured = first;

    sample_remember_cpu_times(sc, vcpus, nr_vcpus, poll_ns, now_s);

    *out = dom;
    dom = (snap_domain){0};
    return 0;
}
