/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample_domain() against real running domains (libvirtd + QEMU on this machine).
 * tests/e2e/sample.sh starts the domains and sets:
 *   VN_LIVE_DOMAIN         a 2-cell guest (64 MiB per cell, RAM allocated at start),
 *                          vCPU 0 in cell 0 and vCPU 1 in cell 1, no numatune
 *   VN_LIVE_DOMAIN_STRICT  the same with <memory mode='strict' nodeset='0'/> (rule 2)
 *   VN_LIVE_DOMAIN_NONUMA  a guest without guest NUMA (128 MiB) and <vcpu cpuset='0'>
 * Without VN_LIVE_DOMAIN it exits 77 (tests/run.sh runs every test program directly).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "numa_ops.h"
#include "rules.h"
#include "sample.h"
#include "sample_vcpus.h"
#include "state.h"
#include "tap.h"
#include "topology.h"
#include "util.h"
#include "virt.h"
#include "virt_libvirt.h"

#define CELL_BYTES (64 * VN_MIB)
#define PAGE       4096u

static topology topo;

/* sample_domain() of a domain as the pass calls it */
static int sample_of(virt_dom *d, dom_state *st, const topology *t, const numa_ops *ops,
                     bool use_qmp, double now, snap_domain *out, char *err, size_t errlen)
{
    sample_input in = sample_input_of(st);

    /* poll_from 0: KVM's halt-polling statistics are asked at every sample */
    sample_host h = {.t = t, .ops = ops, .root = "/", .use_qmp = use_qmp, .poll_from = 0};

    return sample_domain(d, &h, &in, &st->sample, &st->count, now, out, err, errlen);
}
static dom_state st;

static double now_s(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void state_init(dom_state *s, const virt_dom_id *id)
{
    /* what the last domain's samples cached (its vCPU threads, its live XML) */
    sample_vcpus_stale(&s->sample);
    sample_xml_stale(&s->sample);
    memset(s, 0, sizeof(*s));
    s->sample.vcpus_for_id = -1;
    (void)snprintf(s->uuid, sizeof(s->uuid), "%s", id->uuid);
    (void)snprintf(s->name, sizeof(s->name), "%s", id->name);
    s->id = id->id;
    s->cfg.mode = VN_MODE_AUTO;
    s->cfg.valid = true;
    s->preferred_node = -1;
    s->sample.ram_for_id = -1;
    for (unsigned c = 0; c < SNAP_MAX_CELLS_PER_DOMAIN; c++)
        s->last_candidate[c] = -1;
}

static int open_by_name(virt_conn *c, const char *name, virt_dom **ret, virt_dom_id *ret_id)
{
    _cleanup_free_ virt_dom_id *ids = NULL;
    size_t n = 0;
    int r;

    r = virt_list_running(c, &ids, &n);
    if (r < 0)
        return r;
    for (size_t i = 0; i < n; i++)
        if (strcmp(ids[i].name, name) == 0) {
            r = virt_dom_open(c, ids[i].uuid, ret);
            if (r == 0)
                *ret_id = ids[i];
            return r;
        }
    return -ESRCH;
}

static uint64_t node_pages(const snap_cell *cell, int node)
{
    return node >= 0 ? cell->pages[node] : 0;
}

static uint64_t all_pages(const snap_cell *cell)
{
    uint64_t s = 0;
    for (unsigned n = 0; n < cell->nr_nodes; n++)
        s += cell->pages[n];
    return s;
}

static bool cell_has_only_vcpu(const snap_cell *cell, unsigned vcpu)
{
    return cell->nr_vcpus == 1 && cell->vcpus[0].id == vcpu;
}

/* The 2-cell domain: cells, vCPUs, resident pages, scans, then a second pass and the
 * no-QMP path. */
static void test_two_cell(virt_conn *c, const char *name)
{
    const char *accel = getenv("VN_ACCEL");
    bool kvm = accel && !strcmp(accel, "kvm"); /* tests/e2e/sample.sh [kvm]: type='kvm' domains */
    snap_domain out = {0};
    virt_dom *d = NULL;
    virt_dom_id id;
    char err[512] = "";
    int node0 = topo_node_index(&topo, 0), r;
    uint64_t scans;

    r = open_by_name(c, name, &d, &id);
    if (!CHECK(r == 0, "%s: found and opened (r=%d %s)", name, r, virt_last_error()))
        return;
    state_init(&st, &id);

    r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
    if (!CHECK(r == 0, "%s: sampled (r=%d: %s)", name, r, err))
        goto out;
    CHECK(strcmp(out.name, name) == 0 && strcmp(out.uuid, id.uuid) == 0 &&
              out.mode == VN_MODE_AUTO && out.preferred_node == -1,
          "%s: name, uuid, mode from the state", name);
    if (!CHECK(out.nr_cells == 2 && out.cells[0].id == 0 && out.cells[1].id == 1,
               "%s: 2 cells (got %u)", name, out.nr_cells))
        goto out;
    CHECK(cell_has_only_vcpu(&out.cells[0], 0), "%s: cell 0 holds vCPU 0", name);
    CHECK(cell_has_only_vcpu(&out.cells[1], 1), "%s: cell 1 holds vCPU 1", name);
    for (unsigned k = 0; k < 2; k++) {
        const snap_cell *cell = &out.cells[k];
        uint64_t want = CELL_BYTES / PAGE * 9 / 10;

        CHECK(node_pages(cell, node0) >= want && all_pages(cell) <= CELL_BYTES / PAGE,
              "%s: cell %u has %" PRIu64 " of %" PRIu64 " pages on node 0 (>= 90%%)", name, k,
              node_pages(cell, node0), (uint64_t)(CELL_BYTES / PAGE));
        CHECK(cell->page_size == PAGE && cell->binding.mode == VN_MEM_NONE &&
                  cell->last_candidate == -1,
              "%s: cell %u page size 4096, no binding, no candidate", name, k);
        CHECK(cell->nr_vcpus == 1 && cell->vcpus[0].busy == 0 &&
                  cpuset_equal(&cell->vcpus[0].allowed, &topo.cpus) &&
                  !cpuset_empty(&cell->vcpus[0].pinned),
              "%s: cell %u vCPU: busy 0 on the first sample, allowed = all CPUs, pinned known",
              name, k);
    }
    CHECK(st.count.memory_scans == 8,
          "%s: 8 page queries (4 windows per 64 MiB cell, got %" PRIu64 ")", name,
          st.count.memory_scans);
    CHECK(st.sample.ram_for_id == id.id && st.sample.nr_ram == 2 &&
              st.sample.ram[0].size == CELL_BYTES && st.sample.ram[1].size == CELL_BYTES &&
              st.sample.ram[0].hva && st.sample.ram[1].hva && st.sample.ram[1].gpa == CELL_BYTES &&
              !st.sample.ram[0].shared && st.sample.pid > 0,
          "%s: RAM layout cached (ram-node1 at gpa 0x%" PRIx64 ", pid %d)", name,
          st.sample.ram[1].gpa, (int)st.sample.pid);
    CHECK(st.sample.nr_prev == 2 && st.sample.prev_sample_s > 0, "%s: CPU times remembered", name);
    snap_domain_clear(&out);

    /* a second pass: busy fractions, the layout reused */
    (void)usleep(300 * 1000);
    scans = st.count.memory_scans;
    st.sample.ram[0].gpa = 0xdead; /* a marker: a rebuilt layout would overwrite it */
    r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
    if (CHECK(r == 0 && out.nr_cells == 2, "%s: sampled again (r=%d: %s)", name, r, err)) {
        bool in_range = true;
        for (unsigned k = 0; k < 2; k++)
            in_range &= out.cells[k].vcpus[0].busy >= 0 && out.cells[k].vcpus[0].busy <= 1;
        CHECK(in_range, "%s: busy fractions in 0..1 (%.3f, %.3f)", name, out.cells[0].vcpus[0].busy,
              out.cells[1].vcpus[0].busy);
        CHECK(st.sample.ram[0].gpa == 0xdead && st.count.memory_scans == scans + 8,
              "%s: layout cached, 8 more queries", name);
        /* KVM's halt-polling statistics are read (libvirt's vCPU statistics) under KVM; under
         * TCG they are missing, asked three times in all (a job may keep them out once) */
        if (kvm)
            CHECK(st.sample.kvm_poll == 1, "%s: KVM's halt-polling statistics read", name);
        else
            CHECK(st.sample.kvm_poll == -2, "%s: no KVM statistics under TCG: missed twice (%d)",
                  name, st.sample.kvm_poll);
    }
    st.sample.ram[0].gpa = 0;

    /* a third pass: two counts agreed (the guest is idle), so they are reused */
    if (r == 0) {
        uint64_t before[2] = {all_pages(&out.cells[0]), all_pages(&out.cells[1])};
        snap_domain_clear(&out);
        scans = st.count.memory_scans;
        r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
        CHECK(r == 0 && out.nr_cells == 2 && st.count.memory_scans == scans &&
                  st.count.memory_reuses == 2 && all_pages(&out.cells[0]) == before[0] &&
                  all_pages(&out.cells[1]) == before[1],
              "%s: settled: the third pass reuses both cells' counts (%" PRIu64
              " more queries, %" PRIu64 " reuses)",
              name, st.count.memory_scans - scans, st.count.memory_reuses);
        snap_domain_clear(&out);
        /* vnumad acted on the domain: count again */
        sample_mem_changed(&st.sample);
        scans = st.count.memory_scans;
        {
            uint64_t c0[VIRT_CALL_MAX], c1[VIRT_CALL_MAX];
            virt_call_counts(c0);
            r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
            virt_call_counts(c1);
            CHECK(r == 0 && st.count.memory_scans == scans + 8,
                  "%s: after sample_mem_changed() the next pass counts again (%" PRIu64 " queries)",
                  name, st.count.memory_scans - scans);
            if (kvm)
                CHECK(st.sample.kvm_poll == 1 && c1[VIRT_CALL_STATS] == c0[VIRT_CALL_STATS] + 1 &&
                          c1[VIRT_CALL_QMP] == c0[VIRT_CALL_QMP],
                      "%s: KVM: one statistics call a pass, no QMP command for it", name);
            else
                CHECK(st.sample.kvm_poll == -3 && c1[VIRT_CALL_STATS] == c0[VIRT_CALL_STATS],
                      "%s: TCG: after three misses the statistics are not asked again (%d)", name,
                      st.sample.kvm_poll);
        }
    }
    snap_domain_clear(&out);

    /* without QMP: the live XML's two cells, one vCPU each; their equal anonymous RAM cannot
     * be told apart in maps (ramlayout_maps.h): not counted, and the reason kept */
    scans = st.count.memory_scans;
    r = sample_of(d, &st, &topo, &numa_libnuma, false, now_s(), &out, err, sizeof(err));
    CHECK(r == 0 && out.nr_cells == 2 && out.cells[0].nr_vcpus == 1 && out.cells[1].nr_vcpus == 1 &&
              all_pages(&out.cells[0]) == 0 && all_pages(&out.cells[1]) == 0 &&
              st.count.memory_scans == scans &&
              strstr(st.sample.ram_error, "which is which only QEMU's monitor tells"),
          "%s: use_qmp=false: the XML's 2 cells, a vCPU each, equal anonymous RAM not counted "
          "(%s) (r=%d %s)",
          name, st.sample.ram_error, r, err);
    snap_domain_clear(&out);

    /* allowed nodes of the balancer limit the allowed CPUs */
    st.cfg.allowed_nodes = nodeset_from_u64(1ULL << 0);
    r = sample_of(d, &st, &topo, &numa_libnuma, false, now_s(), &out, err, sizeof(err));
    CHECK(r == 0 && nodeset_is_u64(&out.allowed_nodes, 1) &&
              cpuset_equal(&out.cells[0].vcpus[0].allowed, &topo.nodes[0].cpus),
          "%s: allowed_nodes {0}: allowed CPUs = node 0's", name);
    nodeset_zero(&st.cfg.allowed_nodes);
    snap_domain_clear(&out);

    /* the pid comes from libvirt's run directory, which tests may move */
    {
        char dir[] = "/tmp/vnuma-test-sample-run.XXXXXX", path[512];
        FILE *f;
        pid_t child = fork();

        if (child == 0)
            _exit(0);
        (void)waitpid(child, NULL, 0);
        if (mkdtemp(dir)) {
            (void)snprintf(path, sizeof(path), "%s/qemu", dir);
            (void)mkdir(path, 0700);
            (void)snprintf(path, sizeof(path), "%s/qemu/%s.xml", dir, name);
            f = fopen(path, "w");
            if (f) {
                fprintf(f,
                        "<domstatus pid='%d'><domain id='%d'><uuid>%s</uuid></domain></domstatus>",
                        (int)child, id.id, id.uuid);
                (void)fclose(f);
            }
            (void)setenv("VN_LIBVIRT_RUN_DIR", dir, 1);
            state_init(&st, &id);
            r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
            CHECK(r == -ESRCH,
                  "%s: VN_LIBVIRT_RUN_DIR, a status file naming a dead pid: -ESRCH (r=%d %s)", name,
                  r, err);
            snap_domain_clear(&out);
            (void)unsetenv("VN_LIBVIRT_RUN_DIR");
            (void)unlink(path);
            (void)snprintf(path, sizeof(path), "%s/qemu", dir);
            (void)rmdir(path);
            (void)rmdir(dir);
        }
    }
out:
    snap_domain_clear(&out);
    virt_dom_free(d);
}

/* Rule 2: memory bound to one node is never queried. */
static void test_strict(virt_conn *c, const char *name)
{
    snap_domain out = {0};
    virt_dom *d = NULL;
    virt_dom_id id;
    char err[512] = "";
    int node0 = topo_node_index(&topo, 0), r;

    r = open_by_name(c, name, &d, &id);
    if (!CHECK(r == 0, "%s: found and opened (r=%d)", name, r))
        return;
    state_init(&st, &id);
    r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
    if (CHECK(r == 0 && out.nr_cells == 2, "%s: sampled, 2 cells (r=%d: %s)", name, r, err)) {
        CHECK(st.count.memory_scans == 0, "%s: rule 2: no page queries (got %" PRIu64 ")", name,
              st.count.memory_scans);
        for (unsigned k = 0; k < 2; k++)
            CHECK(out.cells[k].binding.mode == VN_MEM_STRICT &&
                      nodeset_is_u64(&out.cells[k].binding.nodes, 1ULL << node0) &&
                      node_pages(&out.cells[k], node0) == CELL_BYTES / PAGE &&
                      all_pages(&out.cells[k]) == CELL_BYTES / PAGE,
                  "%s: cell %u bound strict to node 0, its whole backend counted there", name, k);
    }
    snap_domain_clear(&out);
    virt_dom_free(d);
}

/* A guest without NUMA: one cell, its RAM backend "pc.ram", <vcpu cpuset='0'>. */
static void test_no_numa(virt_conn *c, const char *name)
{
    snap_domain out = {0};
    virt_dom *d = NULL;
    virt_dom_id id;
    vn_cpuset cpu0;
    char err[512] = "";
    int node0 = topo_node_index(&topo, 0), r;

    r = open_by_name(c, name, &d, &id);
    if (!CHECK(r == 0, "%s: found and opened (r=%d)", name, r))
        return;
    state_init(&st, &id);
    cpuset_zero(&cpu0);
    cpuset_set(&cpu0, 0);
    r = sample_of(d, &st, &topo, &numa_libnuma, true, now_s(), &out, err, sizeof(err));
    if (CHECK(r == 0 && out.nr_cells == 1 && out.cells[0].id == 0 && out.cells[0].nr_vcpus == 2,
              "%s: one cell 0 with 2 vCPUs (r=%d: %s)", name, r, err)) {
        CHECK(node_pages(&out.cells[0], node0) >= 2 * CELL_BYTES / PAGE * 9 / 10,
              "%s: pc.ram: %" PRIu64 " pages on node 0 (>= 90%% of 128 MiB)", name,
              node_pages(&out.cells[0], node0));
        CHECK(st.sample.nr_ram == 1 && st.sample.ram[0].size == 2 * CELL_BYTES &&
                  st.sample.ram[0].gpa == 0 &&
                  st.count.memory_scans == LOCK_HOLD_MAX_QUERIES_PER_CELL,
              "%s: one 128 MiB backend at gpa 0, sampled with stride 2 in %d queries (%" PRIu64 ")",
              name, LOCK_HOLD_MAX_QUERIES_PER_CELL, st.count.memory_scans);
        CHECK(cpuset_equal(&out.cells[0].vcpus[0].allowed, &cpu0) &&
                  cpuset_equal(&out.cells[0].vcpus[1].allowed, &cpu0),
              "%s: <vcpu cpuset='0'>: allowed CPUs {0}", name);
    }
    snap_domain_clear(&out);
    virt_dom_free(d);
}

int main(void)
{
    const char *name = getenv("VN_LIVE_DOMAIN");
    const char *strict = getenv("VN_LIVE_DOMAIN_STRICT");
    const char *nonuma = getenv("VN_LIVE_DOMAIN_NONUMA");
    virt_callbacks cb = {0};
    virt_conn *c = NULL;
    char err[256] = "";
    int r;

    if (!name || !*name) {
        printf("set VN_LIVE_DOMAIN (tests/e2e/sample.sh does)\n");
        return 77;
    }
    if (topo_load(TOPO_SOURCE_LIVE, NULL, NULL, &topo, err, sizeof(err)) < 0) {
        printf("cannot load the live topology: %s\n", err);
        return 77;
    }
    r = loop_init();
    if (r == 0)
        r = virt_open(NULL, &cb, &c);
    if (r < 0) {
        printf("cannot connect to libvirtd: %s\n", virt_last_error());
        return 77;
    }

    test_two_cell(c, name);
    if (strict && *strict)
        test_strict(c, strict);
    if (nonuma && *nonuma)
        test_no_numa(c, nonuma);

    virt_close(c);
    sample_vcpus_stale(&st.sample);
    sample_xml_stale(&st.sample);
    return tap_done();
}
