/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the snapshot JSON parser (host/snapshot.c): valid documents checked
 * field by field on a hand-built topology whose kernel node numbers are not
 * 0..n-1, counts at each limit, files that cannot be read, and the example
 * snapshots of tests/data/snapshots/ against their topologies. The bad
 * documents and their error texts are test-snapshot-errors.c.
 *
 * Run from the source tree (or set VN_SRCDIR to it).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "snapshot-fixture.h"
#include "snapshot.h"
#include "tap.h"
#include "testdata.h"
#include "util.h"

/* ---- valid documents ---- */

static void test_minimal(void)
{
    snapshot s;
    char err[512] = "";
    int r = parse("{\"version\": 1, \"domains\": []}\n", &s, err, sizeof(err));

    CHECK(r == 0, "minimal document parses (%d: %s)", r, err);
    if (r < 0)
        return;
    CHECK(s.pass == 0 && s.nr_domains == 0 && s.domains == NULL, "minimal: no domains, pass 0");
    CHECK(!s.free_known[0] && !s.free_known[1] && !s.free_known[2] && s.other_busy[1] == 0,
          "minimal: no node data");
    snapshot_clear(&s);
}

static const char full_doc[] =
    "{\n"
    "  \"version\": 1,\n"
    "  \"pass\": 42,\n"
    "  \"nodes\": [\n"
    "    {\"node\": 5, \"free_bytes\": 1073741824},\n"
    "    {\"node\": 2, \"free_bytes\": 4294967296, \"other_busy\": 1.5,\n"
    "     \"free_hugepages\": {\"2097152\": 100, \"1073741824\": 2}},\n"
    "    {\"node\": 0, \"other_busy\": 4}\n"
    "  ],\n"
    "  \"domains\": [\n"
    "    {\n"
    "      \"name\": \"web1\",\n"
    "      \"uuid\": \"8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a90\",\n"
    "      \"balancer\": {\"mode\": \"auto\", \"priority\": -100, \"nodes\": [2, 0]},\n"
    "      \"age_passes\": 1000000000,\n"
    "      \"preferred_node\": 2,\n"
    "      \"busy_unmeasured\": true,\n"
    "      \"numatune\": {\"mode\": \"strict\", \"nodes\": [5]},\n"
    "      \"cells\": [\n"
    "        {\n"
    "          \"id\": 1023,\n"
    "          \"page_size\": 2097152,\n"
    "          \"memory_pinned\": \"vfio\",\n"
    "          \"pages\": {\"0\": 10, \"5\": 4096},\n"
    "          \"last_candidate\": 5,\n"
    "          \"vcpus\": [\n"
    "            {\"id\": 4095, \"busy\": 1, \"allowed\": \"0-7\", \"pinned\": \"4-5,7\", "
    "\"cpu\": 7, \"fixed\": true},\n"
    "            {\"id\": 3, \"busy\": 0.25, \"allowed\": \"1\"}\n"
    "          ],\n"
    "          \"hints\": {\n"
    "            \"hot_ranges\": [\n"
    "              {\"gpa\": 8192, \"length\": 4096, \"heat\": 0.5},\n"
    "              {\"gpa\": 0, \"length\": 4096, \"heat\": 0.9, \"shared\": true},\n"
    "              {\"gpa\": 4096, \"length\": 4096, \"heat\": 0.5, \"shared\": false},\n"
    "              {\"gpa\": 65536, \"length\": 18446744073709486079, \"heat\": 0}\n"
    "            ],\n"
    "            \"shares\": [{\"cell\": 0, \"weight\": 0.5}, {\"cell\": 7, \"weight\": 1}]\n"
    "          }\n"
    "        },\n"
    "        {\n"
    "          \"id\": 0,\n"
    "          \"numatune\": {\"mode\": \"interleave\", \"nodes\": [0, 2]},\n"
    "          \"vcpus\": [{\"id\": 0, \"allowed\": \"0-3\"}],\n"
    "          \"hints\": {\"shares\": [{\"cell\": 1023, \"weight\": 0}]}\n"
    "        },\n"
    "        {\"id\": 7, \"numatune\": {\"mode\": \"none\"}, \"vcpus\": [{\"id\": 1, "
    "\"allowed\": \"4-7\"}], \"hints\": {}}\n"
    "      ]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"d\\u00e9j\\u00e0-vu \xe2\x9c\x93\",\n"
    "      \"balancer\": {\"mode\": \"advise\", \"priority\": 100},\n"
    "      \"cells\": [{\"id\": 0, \"vcpus\": [{\"id\": 0, \"allowed\": \"0\"}]}]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"plain\",\n"
    "      \"cells\": [{\"id\": 5, \"vcpus\": [{\"id\": 9, \"allowed\": \"2-3\", \"busy\": 0}]}]\n"
    "    },\n"
    "    {\n"
    "      \"name\": \"off\", \"balancer\": {\"mode\": \"off\"},\n"
    "      \"cells\": [{\"id\": 0, \"vcpus\": [{\"id\": 0, \"allowed\": \"0\", \"cpu\": -1}]}]\n"
    "    }\n"
    "  ]\n"
    "}\n";

static void test_full(void)
{
    snapshot s;
    char err[512] = "";
    int r = parse(full_doc, &s, err, sizeof(err));
    const snap_domain *d;
    const snap_cell *c;

    CHECK(r == 0, "full document parses (%d: %s)", r, err);
    if (r < 0)
        return;
    CHECK(s.pass == 42, "pass");
    CHECK(s.nr_domains == 4, "4 domains");
    /* nodes: kernel numbers 0, 2, 5 are indexes 0, 1, 2 */
    CHECK(s.free_known[2] && s.free_bytes[2] == VN_GIB, "node 5 -> index 2: free_bytes");
    CHECK(s.free_known[1] && s.free_bytes[1] == 4 * VN_GIB && s.other_busy[1] == 1.5,
          "node 2 -> index 1: free_bytes = mem_total, other_busy");
    CHECK(!s.free_known[0] && s.free_bytes[0] == 0 && s.other_busy[0] == 4,
          "node 0 -> index 0: free unknown, other_busy = nr_cpus");
    CHECK(s.other_busy[2] == 0, "node 5: other_busy default 0");
    CHECK(s.free_huge[1][0].page_size == 2 * VN_MIB && s.free_huge[1][0].free_pages == 100 &&
              s.free_huge[1][1].page_size == VN_GIB && s.free_huge[1][1].free_pages == 2 &&
              s.free_huge[0][0].page_size == 0,
          "node 2: free huge pages, 100 of 2 MiB and 2 of 1 GiB; none listed for node 0");

    d = &s.domains[0];
    CHECK(strcmp(d->name, "web1") == 0, "domain 0 name");
    CHECK(strcmp(d->uuid, "8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a90") == 0, "domain 0 uuid");
    CHECK(d->mode == VN_MODE_AUTO && d->priority == -100, "domain 0 mode auto, priority -100");
    CHECK(nodeset_is_u64(&d->allowed_nodes, ((1u << 1) | (1u << 0))),
          "balancer nodes [2,0] -> indexes {0,1}");
    CHECK(d->age_passes == 1000000000u, "age_passes at its maximum");
    CHECK(d->preferred_node == 1, "preferred_node 2 -> index 1");
    CHECK(d->busy_unmeasured, "busy_unmeasured true");
    CHECK(d->nr_cells == 3, "3 cells");
    if (d->nr_cells == 3) {
        c = &d->cells[0];
        CHECK(c->id == 1023 && c->page_size == 2 * VN_MIB, "cell 0: id 1023, 2 MiB pages");
        CHECK(c->mem_pinned == MEM_PIN_VFIO && d->cells[1].mem_pinned == MEM_PIN_NONE,
              "cell 0: memory pinned by VFIO; cell 1: not (the default)");
        CHECK(c->pages[0] == 10 && c->pages[1] == 0 && c->pages[2] == 4096,
              "cell 0: pages {\"0\":10,\"5\":4096} -> index 0 and 2");
        CHECK(c->last_candidate == 2, "cell 0: last_candidate 5 -> index 2");
        CHECK(c->binding.mode == VN_MEM_STRICT && nodeset_is_u64(&c->binding.nodes, (1u << 2)),
              "cell 0 inherits the domain's binding (strict, node 5 -> bit 2)");
        CHECK(c->nr_vcpus == 2, "cell 0: 2 vCPUs");
        if (c->nr_vcpus == 2) {
            const snap_vcpu *v = &c->vcpus[0];
            CHECK(v->id == 4095 && v->busy == 1.0 && v->cpu == 7 && v->fixed,
                  "vcpu 4095: id, busy, cpu, fixed (realtime)");
            CHECK(cpuset_is(&v->allowed, "0-7") && cpuset_is(&v->pinned, "4,5,7"),
                  "vcpu 4095: allowed and pinned sets");
            v = &c->vcpus[1];
            CHECK(v->id == 3 && v->busy == 0.25 && v->cpu == -1 && !v->fixed,
                  "vcpu 3: cpu default -1, not fixed");
            CHECK(cpuset_is(&v->allowed, "1") && cpuset_equal(&v->pinned, &v->allowed),
                  "vcpu 3: pinned defaults to allowed");
        }
        CHECK(c->nr_hot == 4, "cell 0: 4 hot ranges");
        if (c->nr_hot == 4) {
            CHECK(c->hot[0].gpa == 0 && c->hot[0].heat == 0.9 && c->hot[0].shared,
                  "hot ranges sorted: hottest first");
            CHECK(c->hot[1].gpa == 4096 && c->hot[2].gpa == 8192 && c->hot[1].heat == 0.5 &&
                      !c->hot[1].shared && !c->hot[2].shared,
                  "hot ranges sorted: equal heat, lower gpa first; shared default false");
            CHECK(c->hot[3].gpa == 65536 && c->hot[3].length == UINT64_MAX - 65536 &&
                      c->hot[3].heat == 0,
                  "hot range ending exactly at 2^64 accepted, coldest last");
        }
        CHECK(c->nr_shares == 2 && c->shares[0].cell == 0 && c->shares[0].weight == 0.5 &&
                  c->shares[1].cell == 7 && c->shares[1].weight == 1.0,
              "cell 0: shares in input order");

        c = &d->cells[1];
        CHECK(c->id == 0 && c->page_size == 4096 && c->last_candidate == -1,
              "cell 1: id 0 (input order kept), page_size default, last_candidate default");
        CHECK(c->binding.mode == VN_MEM_INTERLEAVE && nodeset_is_u64(&c->binding.nodes, 3),
              "cell 1: own numatune overrides the domain's (interleave 0,2 -> bits 0,1)");
        CHECK(c->nr_hot == 0 && c->hot == NULL && c->nr_shares == 1,
              "cell 1: no hot ranges, one share");
        c = &d->cells[2];
        CHECK(c->binding.mode == VN_MEM_NONE && nodeset_is_u64(&c->binding.nodes, 0),
              "cell 2: numatune mode none overrides the domain's");
        CHECK(c->nr_hot == 0 && c->hot == NULL && c->nr_shares == 0 && c->shares == NULL,
              "cell 2: empty hints");
    }

    d = &s.domains[1];
    CHECK(strcmp(d->name, "d\xc3\xa9j\xc3\xa0-vu \xe2\x9c\x93") == 0,
          "domain 1: UTF-8 name, escaped and raw");
    CHECK(d->mode == VN_MODE_ADVISE && d->priority == 100 && nodeset_is_u64(&d->allowed_nodes, 0),
          "domain 1: advise, priority 100, all nodes");
    CHECK(!d->busy_unmeasured, "domain 1: busy_unmeasured absent means measured");

    d = &s.domains[2];
    CHECK(strcmp(d->name, "plain") == 0 && d->mode == VN_MODE_OFF && d->priority == 0 &&
              nodeset_is_u64(&d->allowed_nodes, 0) && d->age_passes == 0 &&
              d->preferred_node == -1 && d->uuid[0] == '\0',
          "domain 2: no balancer -> off, and every domain default");
    if (d->nr_cells == 1) {
        c = &d->cells[0];
        uint64_t total = 0;
        for (unsigned i = 0; i < c->nr_nodes; i++)
            total += c->pages[i];
        CHECK(c->id == 5 && c->page_size == 4096 && c->nr_nodes == topo.nr_nodes && total == 0 &&
                  c->last_candidate == -1 && c->binding.mode == VN_MEM_NONE &&
                  nodeset_is_u64(&c->binding.nodes, 0) && c->nr_hot == 0 && c->nr_shares == 0,
              "domain 2 cell: every cell default");
        CHECK(c->nr_vcpus == 1 && c->vcpus[0].id == 9 && c->vcpus[0].busy == 0 &&
                  c->vcpus[0].cpu == -1,
              "domain 2 vcpu: defaults");
    }
    d = &s.domains[3];
    CHECK(d->mode == VN_MODE_OFF && strcmp(d->name, "off") == 0, "domain 3: mode off kept");

    snapshot_clear(&s);
    CHECK(s.nr_domains == 0 && s.domains == NULL && s.pass == 0, "snapshot_clear zeroes");
    snapshot_clear(&s);
    snapshot_clear(NULL);
    CHECK(1, "snapshot_clear twice and on NULL");
}

/* Boundaries that must be accepted. */
static void test_limits_accepted(void)
{
    static const struct {
        const char *name;
        const char *json;
    } ok[] = {
        {"page_size 1 GiB, pages exactly mem_total",
         "{\"version\":1,\"domains\":[{\"name\":\"a\",\"cells\":[{\"id\":0,\"page_size\":"
         "1073741824,\"pages\":{\"5\":8},\"vcpus\":[{\"id\":0,\"allowed\":\"0\"}]}]}]}"},
        {"numatune none with empty nodes",
         "{\"version\":1,\"domains\":[{\"name\":\"a\",\"numatune\":{\"mode\":\"none\",\"nodes\":[]}"
         ","
         "\"cells\":[{\"id\":0,\"vcpus\":[{\"id\":0,\"allowed\":\"0\"}]}]}]}"},
        {"pass 2^64-2", "{\"version\":1,\"pass\":18446744073709551614,\"domains\":[]}"},
        {"integer where a number is expected, and -0",
         "{\"version\":1,\"domains\":[{\"name\":\"a\",\"cells\":[{\"id\":-0,\"vcpus\":[{\"id\":0,"
         "\"busy\":0,\"allowed\":\"0\"}]}]}]}"},
        {"upper-case uuid",
         "{\"version\":1,\"domains\":[{\"name\":\"a\",\"uuid\":\"8C2E2F8A-1B7D-4C1E-9A55-"
         "0D3B6F1E2A90\",\"cells\":[{\"id\":0,\"vcpus\":[{\"id\":0,\"allowed\":\"0\"}]}]}]}"},
        {"memory-only node in a strict binding and in pages",
         "{\"version\":1,\"domains\":[{\"name\":\"a\",\"numatune\":{\"mode\":\"restrictive\","
         "\"nodes\":[5]},\"cells\":[{\"id\":0,\"pages\":{\"5\":1000},\"vcpus\":[{\"id\":0,"
         "\"allowed\":\"0-3,4-7\"}]}]}]}"},
    };
    for (size_t i = 0; i < VN_ARRAY_SIZE(ok); i++) {
        snapshot s;
        char err[512] = "";
        int r = parse(ok[i].json, &s, err, sizeof(err));
        CHECK(r == 0, "accepted: %s (%d: %s)", ok[i].name, r, err);
        if (r == 0)
            snapshot_clear(&s);
    }
}

/* A 255-byte name is accepted; the name is stored whole. */
static void test_long_name(void)
{
    char json[1024], name[SNAP_NAME_MAX];
    snapshot s;
    char err[512] = "";
    int r;

    memset(name, 'n', SNAP_NAME_MAX - 1);
    name[SNAP_NAME_MAX - 1] = '\0';
    (void)snprintf(json, sizeof(json),
                   "{\"version\":1,\"domains\":[{\"name\":\"%s\",\"cells\":[{\"id\":0,"
                   "\"vcpus\":[{\"id\":0,\"allowed\":\"0\"}]}]}]}",
                   name);
    r = parse(json, &s, err, sizeof(err));
    CHECK(r == 0 && strcmp(s.domains[0].name, name) == 0, "255-byte name accepted (%s)", err);
    if (r == 0)
        snapshot_clear(&s);
}

/* Exactly at the count limits: accepted. */
static void test_counts_at_limit(void)
{
    static const struct {
        const char *what;
        unsigned n;
    } at[] = {
        {"cells", SNAP_MAX_CELLS_PER_DOMAIN},
        {"vcpus", SNAP_MAX_VCPUS_PER_CELL},
        {"hot_ranges", SNAP_MAX_HOT_RANGES},
    };
    char err[512] = "";
    snapshot s;
    char *doc = gen_domains(SNAP_MAX_DOMAINS);
    int r = doc ? parse(doc, &s, err, sizeof(err)) : -ENOMEM;

    CHECK(r == 0 && s.nr_domains == SNAP_MAX_DOMAINS &&
              strcmp(s.domains[SNAP_MAX_DOMAINS - 1].name, "vm04095") == 0,
          "%d domains accepted, in order (%s)", SNAP_MAX_DOMAINS, err);
    if (r == 0)
        snapshot_clear(&s);
    free(doc);
    for (size_t i = 0; i < VN_ARRAY_SIZE(at); i++) {
        doc = gen_array(at[i].what, at[i].n);
        r = doc ? parse(doc, &s, err, sizeof(err)) : -ENOMEM;
        CHECK(r == 0, "%u %s accepted (%s)", at[i].n, at[i].what, err);
        if (r == 0 && strcmp(at[i].what, "hot_ranges") == 0)
            CHECK(s.domains[0].cells[0].nr_hot == at[i].n &&
                      s.domains[0].cells[0].hot[0].gpa == 0 &&
                      s.domains[0].cells[0].hot[at[i].n - 1].gpa == (at[i].n - 1) * 4096ULL,
                  "equal-heat hot ranges stay ordered by gpa");
        if (r == 0)
            snapshot_clear(&s);
        free(doc);
    }
}

/* snap_load_file: errors of the file itself. */
static void test_load_file_errors(void)
{
    char path[] = "/tmp/test-snapshot-XXXXXX";
    char err[512] = "";
    snapshot s, sentinel;
    int fd, r;

    memset(&s, SENTINEL, sizeof(s));
    memset(&sentinel, SENTINEL, sizeof(sentinel));
    r = snap_load_file("/nonexistent/snap.json", &topo, &s, err, sizeof(err));
    CHECK(r == -ENOENT && strstr(err, "/nonexistent/snap.json: cannot open: ") &&
              memcmp(&s, &sentinel, sizeof(s)) == 0,
          "missing file: -ENOENT (%d: %s)", r, err);
    r = snap_load_file("/tmp", &topo, &s, err, sizeof(err));
    CHECK(r == -EISDIR && strstr(err, "/tmp: is a directory"), "directory: -EISDIR (%d: %s)", r,
          err);

    fd = mkstemp(path);
    if (!CHECK(fd >= 0, "temporary file"))
        return;
    if (ftruncate(fd, (off_t)SNAP_MAX_FILE_BYTES + 1) == 0) {
        r = snap_load_file(path, &topo, &s, err, sizeof(err));
        CHECK(r == -E2BIG && strstr(err, "file is 67108865 bytes, at most 67108864 accepted") &&
                  memcmp(&s, &sentinel, sizeof(s)) == 0,
              "file over the limit: -E2BIG (%d: %s)", r, err);
    }
    if (ftruncate(fd, 0) == 0 && write(fd, "{\"version\":1,\"domains\":[]} ", 27) == 27) {
        r = snap_load_file(path, &topo, &s, err, sizeof(err));
        CHECK(r == 0 && s.nr_domains == 0, "small file loads (%d: %s)", r, err);
        if (r == 0)
            snapshot_clear(&s);
    }
    if (ftruncate(fd, 0) == 0 && pwrite(fd, "{\"version\":1,\"domains\":{}}", 26, 0) == 26) {
        r = snap_load_file(path, &topo, &s, err, sizeof(err));
        CHECK(r == -EINVAL && strncmp(err, path, strlen(path)) == 0 &&
                  strstr(err, ": domains: expected an array, got an object"),
              "file errors are prefixed with the path (%s)", err);
    }
    (void)close(fd);
    (void)unlink(path);
}

/* One example of tests/data/snapshots/ against its topology
 * (tests/data/topologies/<same basename>.xml): it loads, and has the promised shape. */
static void example(const char *base, const char *topo_path, const char *snap_path, void *arg)
{
    size_t *loaded = arg;
    topology *t = topo_new();
    char err[1024] = "";
    snapshot s;
    int r;

    if (!t)
        return;
    r = topo_load(TOPO_SOURCE_XML, topo_path, NULL, t, err, sizeof(err));
    if (!CHECK(r == 0, "topology %s loads (%s)", base, err)) {
        topo_free(t);
        return;
    }
    r = snap_load_file(snap_path, t, &s, err, sizeof(err));
    CHECK(r == 0, "example %s.json loads against its topology (%d: %s)", base, r, err);
    if (r == 0) {
        unsigned autos = 0, advise = 0, off = 0, strict1 = 0, misplaced = 0;
        (*loaded)++;
        for (unsigned d = 0; d < s.nr_domains; d++) {
            const snap_domain *dom = &s.domains[d];
            autos += dom->mode == VN_MODE_AUTO;
            advise += dom->mode == VN_MODE_ADVISE;
            off += dom->mode == VN_MODE_OFF;
            for (unsigned c = 0; c < dom->nr_cells; c++) {
                const snap_cell *cell = &dom->cells[c];
                strict1 += cell->binding.mode == VN_MEM_STRICT &&
                           nodeset_weight(&cell->binding.nodes) == 1;
                /* misplaced: every vCPU pinned inside node A, most pages on node B != A */
                for (unsigned a = 0; a < t->nr_nodes && dom->mode == VN_MODE_AUTO; a++) {
                    bool inside = true;
                    uint64_t total = 0, on_a = 0, most = 0;
                    for (unsigned v = 0; v < cell->nr_vcpus; v++)
                        inside &= cpuset_subset(&cell->vcpus[v].pinned, &t->nodes[a].cpus) &&
                                  !cpuset_empty(&t->nodes[a].cpus);
                    for (unsigned n = 0; n < t->nr_nodes; n++) {
                        total += cell->pages[n];
                        most = VN_MAX(most, cell->pages[n]);
                    }
                    on_a = cell->pages[a];
                    if (inside && total && on_a < most && most * 2 > total)
                        misplaced++;
                }
            }
        }
        CHECK(s.nr_domains >= 3 && s.nr_domains <= 5 && autos >= 1 && advise >= 1 && off >= 1,
              "%s.json: 3-5 domains, auto, advise and not opted in", base);
        CHECK(t->nr_nodes < 2 || misplaced >= 1, "%s.json: a misplaced cell of an auto domain",
              base);
        CHECK(t->nr_nodes < 2 || strict1 >= 1, "%s.json: a strict one-node binding", base);
        snapshot_clear(&s);
    }
    topo_free(t);
}

/* Every example (testdata.h). */
static void test_examples(void)
{
    size_t loaded = 0, n = testdata_each_example(example, &loaded);

    CHECK(loaded == n && n > 0, "an example snapshot for each of the %zu topologies", n);
}

int main(void)
{
    make_topology(&topo);
    test_minimal();
    test_full();
    test_limits_accepted();
    test_long_name();
    test_counts_at_limit();
    test_load_file_errors();
    test_examples();
    return tap_done();
}
