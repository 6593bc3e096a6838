/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where each guest cell's RAM is inside the QEMU process (sample.c's cache,
 * dom_state.sample.ram[]): the boot RAM of each cell with vCPUs (query-memdev, HMP "info mtree -f",
 * "gpa2hva"), the backends of memory-only cells, memory devices (query-memory-devices), and each
 * range's page size (/proc/PID/maps, statfs of its map_files entry). QEMU's replies are parsed by
 * qemu.c.
 */
#include "ramlayout.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include "json.h"
#include "log.h"
#include "procmaps.h"
#include "qemu.h"
#include "ramlayout_maps.h"
#include "sample_proc.h"
#include "util.h"

/* Bytes of untrusted text quoted in an error message. */
#define RAM_SHOWN_MAX 64
#define RAM_SHOWN_BUF (RAM_SHOWN_MAX + 8)
#define shown(buf, s) vn_shown_str((buf), sizeof(buf), (s), RAM_SHOWN_MAX)

/*
 * Page size of the backend mapped at hva in process pid: a hugetlbfs file (memory-backend-file
 * on hugetlbfs, memory-backend-memfd hugetlb=on) has its pool's page size, which statfs(2) of
 * its /proc/PID/map_files entry gives (f_bsize); anything else (anonymous, THP, tmpfs, memfd)
 * is counted and moved in base pages. Reads /proc/PID/maps, not smaps, which would walk every
 * page table of the guest. Returns 0 or -errno.
 */
typedef struct page_size_of {
    uint64_t *ret;
    bool *hugetlb;
    bool anon;
} page_size_of;

static int map_page_size(const proc_map *m, void *opaque)
{
    page_size_of *ps = opaque;
    struct statfs sf;

    if (m->inode == 0) {
        ps->anon = true;
        return 1;
    }
    if (statfs(m->map_file, &sf) < 0)
        return -errno;
    if ((unsigned long)sf.f_type == (unsigned long)HUGETLBFS_MAGIC && sf.f_bsize > 0 &&
        ((uint64_t)sf.f_bsize & ((uint64_t)sf.f_bsize - 1)) == 0) {
        *ps->ret = (uint64_t)sf.f_bsize;
        *ps->hugetlb = true;
    }
    return 1;
}

int ramlayout_page_size(const char *root, pid_t pid, uint64_t hva, uint64_t *ret, bool *hugetlb,
                        uint64_t *granule)
{
    page_size_of ps = {.ret = ret, .hugetlb = hugetlb};
    int r;

    *ret = RAM_BASE_PAGE_SIZE;
    *hugetlb = false;
    *granule = RAM_BASE_PAGE_SIZE;
    r = procmaps_walk(root, pid, hva, 1, map_page_size, &ps);
    if (r < 0)
        return r;
    *granule = *ret;
    if (ps.anon) /* QEMU asks for THP on guest RAM (MADV_HUGEPAGE) */
        *granule = VN_MAX(*ret, ramlayout_thp_size(root));
    return 0;
}

uint64_t ramlayout_thp_size(const char *root)
{
    char buf[128];
    uint64_t size;

    if (sample_read_line(root, "/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf)) <
            0 ||
        strstr(buf, "[never]") ||
        sample_read_line(root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", buf,
                         sizeof(buf)) < 0 ||
        vn_parse_u64(buf, RAM_BASE_PAGE_SIZE, 1ULL << 30, &size) < 0 || (size & (size - 1)))
        return 0;
    return size;
}

/*
 * Cells with memory and no vCPU (memory-only cells: `<cell memory=...>` without cpus, as CXL or
 * HBM memory shows in a guest): each "ram-nodeN" backend of a cell not in cell_ids is one more
 * range (ret[*nr...]), located like a cell's boot RAM. What cannot be found is left out.
 */
static void ram_locate_memory_only(virt_dom *d, const unsigned *cell_ids, unsigned nr_cells,
                                   const qmp_memdevs *m, const char *mtree, ram_range *ret,
                                   unsigned *nr)
{
    for (size_t i = 0; i < m->n && *nr < SNAP_MAX_CELLS_PER_DOMAIN; i++) {
        _cleanup_free_ char *reply = NULL;
        uint64_t cell, gpa, off, hva;
        bool known = false;
        char cmd[64];

        if (strncmp(m->v[i].id, "ram-node", 8) != 0 ||
            vn_parse_u64(m->v[i].id + 8, 0, SNAP_MAX_CELLS_PER_DOMAIN - 1, &cell) < 0)
            continue;
        for (unsigned c = 0; c < nr_cells; c++)
            known |= cell_ids[c] == cell;
        if (known || hmp_parse_mtree_ram(mtree, m->v[i].id, &gpa, &off) < 0)
            continue;
        (void)snprintf(cmd, sizeof(cmd), "gpa2hva 0x%" PRIx64, gpa);
        if (virt_hmp(d, cmd, &reply) < 0 || hmp_parse_gpa2hva(reply, &hva) < 0 || hva < off ||
            hva - off > UINT64_MAX - m->v[i].size)
            continue;
        ret[(*nr)++] = (ram_range){
            .cell = (unsigned)cell,
            .gpa = gpa,
            .hva = hva - off,
            .size = m->v[i].size,
            .shared = m->v[i].shared,
        };
    }
}

/*
 * Memory devices (pc-dimm, virtio-mem) of the guest's cells: each is one more range of its cell
 * (ret[*nr...], at most SNAP_MAX_CELLS_PER_DOMAIN ranges in all), located by its address
 * (query-memory-devices) and gpa2hva, sized by its backend (query-memdev). A virtio-mem
 * device's whole backend is the range: blocks the guest has not plugged are not resident and
 * count nothing. What cannot be found is left out (said at debug level): the boot RAM of each
 * cell stands on its own.
 */
static void ram_locate_devices(virt_dom *d, const qmp_memdevs *m, ram_range *ret, unsigned *nr)
{
    _cleanup_free_ char *reply = NULL;
    _cleanup_free_ qmp_memdevice *dev = NULL;
    unsigned n = 0;
    char err[256];

    if (virt_qmp(d, "{\"execute\":\"query-memory-devices\"}", &reply) < 0 ||
        qmp_parse_memory_devices(reply, &dev, &n, err, sizeof(err)) < 0)
        return; /* a QEMU without memory devices, or a reply we cannot read */
    for (unsigned i = 0; i < n; i++) {
        _cleanup_free_ char *r2 = NULL;
        const qmp_memdev *mi = qmp_memdev_find(m, dev[i].memdev);
        bool ours = false;
        char cmd[64];
        uint64_t hva;

        for (unsigned k = 0; k < *nr; k++)
            ours |= ret[k].cell == (unsigned)dev[i].node;
        if (!ours || !mi || *nr >= SNAP_MAX_CELLS_PER_DOMAIN) {
            log_debug("Memory device of backend '%s' (guest cell %d) left out: %s",
                      LOG_Q(dev[i].memdev), dev[i].node,
                      !ours ? "the domain has no such cell"
                      : !mi ? "its backend is not in query-memdev"
                            : "too many memory ranges");
            continue;
        }
        (void)snprintf(cmd, sizeof(cmd), "gpa2hva 0x%" PRIx64, dev[i].gpa);
        if (virt_hmp(d, cmd, &r2) < 0 || hmp_parse_gpa2hva(r2, &hva) < 0 ||
            hva > UINT64_MAX - mi->size)
            continue;
        ret[(*nr)++] = (ram_range){
            .cell = (unsigned)dev[i].node,
            .gpa = dev[i].gpa,
            .hva = hva,
            .size = mi->size,
            .shared = mi->shared,
        };
    }
}

/*
 * Locate each cell's RAM backend inside the QEMU process: query-memdev (size, share),
 * "info mtree -f" (its first guest-physical range and the offset of that range in the
 * backend), "gpa2hva" (the host address of that range). Writes ret[0..nr_cells-1].
 */
static int ram_locate(virt_dom *d, const unsigned *cell_ids, unsigned nr_cells, bool guest_numa,
                      ram_range *ret, unsigned *ret_nr, char *err, size_t errlen)
{
    _cleanup_free_ char *memdev = NULL;
    _cleanup_free_ char *mtree = NULL;
    _cleanup_(qmp_memdevs_clear) qmp_memdevs m = {0};
    int r;

    r = virt_qmp(d, "{\"execute\":\"query-memdev\"}", &memdev);
    if (r < 0)
        return vn_fail(err, errlen, r, "query-memdev failed: %s", virt_last_error());
    r = qmp_parse_memdevs(memdev, &m, err, errlen);
    if (r < 0)
        return r;
    r = virt_hmp(d, "info mtree -f", &mtree);
    if (r < 0)
        return vn_fail(err, errlen, r, "HMP info mtree failed: %s", virt_last_error());

    for (unsigned c = 0; c < nr_cells; c++) {
        _cleanup_free_ char *reply = NULL;
        char id[32], cmd[64], b[RAM_SHOWN_BUF];
        const qmp_memdev *mi = NULL;
        uint64_t gpa, off, hva;

        if (guest_numa) {
            (void)snprintf(id, sizeof(id), "ram-node%u", cell_ids[c]);
            mi = qmp_memdev_find(&m, id);
        } else {
            /* QEMU names the RAM of a guest without NUMA after the machine ("pc.ram" on
             * pc and q35); take that, or the only backend there is. */
            mi = qmp_memdev_find(&m, "pc.ram");
            if (!mi && m.n == 1)
                mi = &m.v[0];
        }
        if (!mi)
            return vn_fail(err, errlen, -ENOENT, "no memory backend for guest cell %u",
                           cell_ids[c]);
        r = hmp_parse_mtree_ram(mtree, mi->id, &gpa, &off);
        if (r < 0)
            return vn_fail(err, errlen, r, "memory backend '%s' not found in info mtree",
                           shown(b, mi->id));
        (void)snprintf(cmd, sizeof(cmd), "gpa2hva 0x%" PRIx64, gpa);
        r = virt_hmp(d, cmd, &reply);
        if (r < 0)
            return vn_fail(err, errlen, r, "HMP gpa2hva failed: %s", virt_last_error());
        r = hmp_parse_gpa2hva(reply, &hva);
        if (r < 0)
            return vn_fail(err, errlen, r, "unexpected gpa2hva reply '%s'", shown(b, reply));
        if (hva < off || hva - off > UINT64_MAX - mi->size)
            return vn_fail(err, errlen, -EINVAL, "memory backend '%s' at an impossible address",
                           shown(b, mi->id));
        ret[c] = (ram_range){
            .cell = cell_ids[c],
            .gpa = gpa,
            .hva = hva - off,
            .size = mi->size,
            .shared = mi->shared,
        };
    }
    *ret_nr = nr_cells;
    if (guest_numa)
        ram_locate_memory_only(d, cell_ids, nr_cells, &m, mtree, ret, ret_nr);
    ram_locate_devices(d, &m, ret, ret_nr);
    return 0;
}

/*
 * RAM discovery failed (reason in why): said once per QEMU run as a warning, then at debug
 * level; counted; tried again after 1, 2, 4 ... RAMLAYOUT_RETRY_MAX passes of the domain,
 * not every pass (each try costs query-memdev and a possibly megabyte-long info mtree).
 */
unsigned ramlayout_backoff(unsigned failures)
{
    return VN_MIN(1u << VN_MIN(failures, 5u), (unsigned)RAMLAYOUT_RETRY_MAX);
}

static void ram_failed(const sample_input *in, dom_sample_cache *sc, dom_counters *count,
                       const char *name, const char *why)
{
    unsigned wait = ramlayout_backoff(sc->ram_failures);

    count->memory_discovery_failures++;
    sc->ram_retry_age = in->age_passes + wait;
    (void)snprintf(sc->ram_error, sizeof(sc->ram_error), "%s", why);
    if (sc->ram_failures++ == 0)
        log_warn(
            "Cannot find the guest memory of '%s': %s; placing its vCPUs only, trying again in %u pass(es)",
            LOG_Q(name), why, wait);
    else
        log_debug(
            "Still cannot find the guest memory of '%s' (attempt %u): %s; next try in %u passes",
            LOG_Q(name), sc->ram_failures, why, wait);
}

/*
 * Where the RAM of each cell with vCPUs (cell_ids[0..nr_cells-1]) and of every memory-only cell
 * and memory device is in the QEMU process: cached in sc->ram[] for the QEMU run, found
 * again when the cells change or a memory device came or went. 1 when sc->ram[] is valid, 0
 * when it could not be found (it waits for its retry: cells without page counts, decide's
 * no-memory-info, vCPUs still placed), -ESRCH when the domain went away.
 */
int ramlayout_ensure(virt_dom *d, const sample_input *in, dom_sample_cache *sc, dom_counters *count,
                     const virt_dom_id *ident, const unsigned *cell_ids, unsigned nr_cells,
                     bool guest_numa, char *err, size_t errlen)
{
    ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    bool ram_valid = sc->ram_for_id == ident->id && sc->nr_ram_boot == nr_cells;
    unsigned nr_ram = 0;
    int r;

    ram_valid &= !sc->ram_from_maps;
    for (unsigned c = 0; ram_valid && c < nr_cells; c++)
        ram_valid = sc->ram[c].cell == cell_ids[c];
    if (ram_valid)
        return 1;
    if (sc->ram_failures && in->age_passes < sc->ram_retry_age)
        return 0;
    r = ram_locate(d, cell_ids, nr_cells, guest_numa, ram, &nr_ram, err, errlen);
    if (r == -ESRCH)
        return r; /* the domain went away */
    if (r < 0) {
        ram_failed(in, sc, count, ident->name, err);
        return 0;
    }
    if (sc->ram_failures)
        log_info("Found the guest memory of '%s' after %u failed attempts", LOG_Q(ident->name),
                 sc->ram_failures);
    sc->ram_failures = 0;
    sc->ram_error[0] = '\0';
    memcpy(sc->ram, ram, nr_ram * sizeof(ram[0]));
    memset(sc->mem_valid, 0, sizeof(sc->mem_valid));
    sc->ram_gen++; /* the mover forgets its resume points and refusals of the old layout */
    sc->nr_ram = nr_ram;
    sc->nr_ram_boot = nr_cells;
    if (nr_ram > nr_cells)
        log_info("'%s' has %u more memory range(s) (memory-only cells, pc-dimm, virtio-mem): "
                 "sampled and moved with their cells",
                 LOG_Q(ident->name), nr_ram - nr_cells);
    sc->ram_for_id = ident->id;
    sc->ram_from_maps = false;
    sc->pid = 0; /* a new QEMU process: read its pid again */
    return 1;
}

int ramlayout_ensure_maps(const char *root, dom_sample_cache *sc, const virt_dom_id *ident,
                          const domxml_info *x, bool say)
{
    ram_range ram[SNAP_MAX_CELLS_PER_DOMAIN];
    char why[STATE_ERROR_MAX];
    unsigned nr = 0;
    bool same;
    int r;

    if (sc->ram_from_maps && sc->ram_for_id == ident->id && sc->ram_maps_gen == sc->xml_gen)
        return sc->nr_ram > 0;
    if (sc->pid <= 0)
        return 0;
    r = ramlayout_maps(root, sc->pid, x, ram, &nr, why, sizeof(why));
    if (r < 0)
        return r == -ESRCH ? r : 0;
    /* looked at again with each read of the live XML: a layout that did not change keeps its
     * counts and the mover its place */
    same = sc->ram_from_maps && sc->ram_for_id == ident->id && sc->nr_ram == nr;
    for (unsigned i = 0; same && i < nr; i++)
        same = sc->ram[i].cell == ram[i].cell && sc->ram[i].hva == ram[i].hva &&
               sc->ram[i].size == ram[i].size;
    if (!same) {
        if (say && why[0] && (strcmp(why, sc->ram_error) != 0 || sc->ram_for_id != ident->id))
            log_info("Guest memory of '%s' left uncounted without QEMU's monitor: %s",
                     LOG_Q(ident->name), why);
        memcpy(sc->ram, ram, nr * sizeof(ram[0]));
        memset(sc->mem_valid, 0, sizeof(sc->mem_valid));
        sc->ram_gen++;
        sc->nr_ram = nr;
        sc->nr_ram_boot = 0; /* ranges are matched to cells by their id */
        sc->ram_for_id = ident->id;
        sc->ram_from_maps = true;
    }
    (void)snprintf(sc->ram_error, sizeof(sc->ram_error), "%s", why);
    sc->ram_maps_gen = sc->xml_gen;
    return nr > 0;
}

int ramlayout_locate_backends(const char *root, virt_dom *d, const sample_input *in,
                              dom_sample_cache *sc, dom_counters *count, uint64_t memfd_cells)
{
    unsigned cells[SNAP_MAX_CELLS_PER_DOMAIN], n = 0;
    virt_dom_id ident;
    char err[STATE_ERROR_MAX];
    bool known = sc->pid > 0;
    int r;

    for (unsigned k = 0; k < SNAP_MAX_CELLS_PER_DOMAIN; k++)
        if (memfd_cells & (1ULL << k)) {
            bool found = false;
            for (unsigned i = 0; i < sc->nr_ram && !found; i++)
                found = sc->ram[i].cell == k;
            known &= found;
            cells[n++] = k;
        }
    if (n == 0 || known)
        return 0; /* nothing to find, or a sample of this vnumad found it all */
    r = virt_dom_ident(d, &ident);
    if (r < 0)
        return r;
    /* the cells' backends: ram-nodeN of a guest with NUMA, else its one backend */
    r = ramlayout_ensure(d, in, sc, count, &ident, cells, n, true, err, sizeof(err));
    if (r == 0 && n == 1 && cells[0] == 0)
        r = ramlayout_ensure(d, in, sc, count, &ident, cells, n, false, err, sizeof(err));
    if (r <= 0)
        return r < 0 ? r : -ENOENT;
    r = sample_find_qemu(root, &ident, sc, NULL, 0);
    return r < 0 ? r : 0;
}

void ramlayout_stale(dom_sample_cache *sc)
{
    sc->ram_for_id = -1;
    sc->ram_failures = 0; /* try at once, whatever failed before */
}
