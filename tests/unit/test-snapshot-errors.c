/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tests of the snapshot JSON parser (host/snapshot.c, host/snapshot_values.c)
 * on bad documents: a table of documents each with the error text it must
 * produce, and documents generated one entry over a limit. A refused document
 * leaves the caller's snapshot untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "snapshot-fixture.h"
#include "snapshot.h"
#include "tap.h"
#include "util.h"

/* ---- bad documents ---- */

typedef struct bad_case {
    const char *name;
    const char *json; /* NULL: generated, see test_bad_generated() */
    size_t len;       /* 0: strlen(json) */
    int error;        /* expected return */
    const char *want; /* substring of the error message, after "test.json: " */
} bad_case;

#define DOC(domains) "{\"version\":1,\"domains\":[" domains "]}"
/* A domain named "d" with the given fields after its name. */
#define DOM(fields) DOC("{\"name\":\"d\"," fields "}")
#define VC0         "{\"id\":0,\"allowed\":\"0-3\"}"
#define CELL0       "{\"id\":0,\"vcpus\":[" VC0 "]}"
/* Domain "d" with domain-level fields before one cell. */
#define DOMF(fields) DOM(fields ",\"cells\":[" CELL0 "]")
/* Domain "d" with one cell made of the given fields. */
#define CELL(fields) DOM("\"cells\":[{" fields "}]")
/* Cell 0 with vcpus [VC0] and extra fields. */
#define CELLF(fields) CELL("\"id\":0,\"vcpus\":[" VC0 "]," fields)
/* One vCPU made of the given fields. */
#define VCPU(fields)  CELL("\"id\":0,\"vcpus\":[{" fields "}]")
#define VCPUF(fields) VCPU("\"id\":0,\"allowed\":\"0-3\"," fields)
#define HINTS(h)      CELLF("\"hints\":{" h "}")
#define HOT(fields)   HINTS("\"hot_ranges\":[{" fields "}]")
#define SHARE(fields) HINTS("\"shares\":[{" fields "}]")
#define NODES(n)      "{\"version\":1,\"nodes\":[" n "],\"domains\":[]}"

static const bad_case bad_cases[] = {
    /* the whole input */
    {"empty input", "", 0, -EINVAL, "test.json: empty input"},
    {"only whitespace", " \n\t ", 0, -EINVAL, "test.json: empty input"},
    {"truncated", "{\"version\":1,\"domains\":[", 0, -EINVAL,
     "line 1, column 25: unexpected end of input"},
    {"syntax error", "{\"version\":1,\n\"domains\":[1,]}", 0, -EINVAL,
     "line 2, column 14: unexpected character"},
    {"trailing garbage", DOC("") " x", 0, -EINVAL, "line 1, column 28:"},
    {"second document", DOC("") DOC(""), 0, -EINVAL, "line 1, column 27:"},
    {"NUL byte after the document", DOC("") "\0{}", sizeof(DOC("") "\0{}") - 1, -EINVAL,
     "unexpected data after the top-level value"},
    {"the same key twice", "{\"version\":1,\"domains\":[],\"version\":1}", 0, -EINVAL,
     "test.json: an object has the same key twice"},
    {"array at the top", "[]", 0, -EINVAL, "test.json: expected an object, got an array"},
    {"null at the top", "null", 0, -EINVAL, "test.json: expected an object, got null"},
    {"too deep nesting",
     "{\"version\":1,\"domains\":[],\"x\":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}", 0, -E2BIG,
     "nesting deeper than 16 levels"},
    {"invalid UTF-8 in a name", DOM("\"name\":\"a\xff\",\"cells\":[" CELL0 "]"), 0, -EINVAL,
     "invalid utf-8"},
    {"comment", "/* c */" DOC(""), 0, -EINVAL, "unexpected character"},
    {"single-quoted key", DOMF("'age_passes':1"), 0, -EINVAL,
     "line 1, column 37: single-quoted strings are not JSON"},
    {"\\u0000 in a key (json-c would cut it to \"pass\")",
     "{\"version\":1,\"domains\":[],\n \"pass\\u0000x\" : 1}", 0, -EINVAL,
     "test.json: line 2, column 2: object key contains a NUL character"},
    {"escaped backslash before u0000 in a key is no NUL",
     "{\"version\":1,\"domains\":[],\"a\\\\u0000\":1}", 0, -EINVAL,
     "test.json: [\"a\\u0000\"]: unknown field"},

    /* top level */
    {"version missing", "{\"domains\":[]}", 0, -EINVAL,
     "test.json: version: missing required field"},
    {"version 2", "{\"version\":2,\"domains\":[],\"new_field\":1}", 0, -EINVAL,
     "version: unsupported version 2 (this vnuma reads version 1)"},
    {"version 0", "{\"version\":0,\"domains\":[]}", 0, -EINVAL, "version: unsupported version 0"},
    {"version as a string", "{\"version\":\"1\",\"domains\":[]}", 0, -EINVAL,
     "version: expected an integer from 0 to 2147483647, got \"1\""},
    {"version as a double", "{\"version\":1.0,\"domains\":[]}", 0, -EINVAL,
     "version: expected an integer from 0 to 2147483647, got 1.0"},
    {"unknown top-level field", "{\"version\":1,\"domains\":[],\"colour\":\"red\"}", 0, -EINVAL,
     "test.json: colour: unknown field"},
    {"unknown field with odd characters", "{\"version\":1,\"domains\":[],\"a b\\n\":1}", 0, -EINVAL,
     "test.json: [\"a b?\"]: unknown field"},
    {"domains missing", "{\"version\":1}", 0, -EINVAL, "domains: missing required field"},
    {"domains as an object", "{\"version\":1,\"domains\":{}}", 0, -EINVAL,
     "domains: expected an array, got an object"},
    {"domains null", "{\"version\":1,\"domains\":null}", 0, -EINVAL,
     "domains: expected an array, got null"},
    {"domain not an object", DOC("1"), 0, -EINVAL, "domains[0]: expected an object, got 1"},
    {"pass negative", "{\"version\":1,\"pass\":-1,\"domains\":[]}", 0, -EINVAL,
     "pass: expected an integer from 0 to 18446744073709551615, got -1"},
    {"pass 2^64", "{\"version\":1,\"pass\":18446744073709551616,\"domains\":[]}", 0, -EINVAL,
     "pass: expected an integer from 0 to 18446744073709551615, got a number too large"},
    {"pass 2^64-1 (what json-c saturates to)",
     "{\"version\":1,\"pass\":18446744073709551615,\"domains\":[]}", 0, -EINVAL,
     "pass: expected an integer from 0 to 18446744073709551615, got a number too large"},
    {"pass 1e300", "{\"version\":1,\"pass\":1e300,\"domains\":[]}", 0, -EINVAL,
     "pass: expected an integer from 0 to 18446744073709551615, got 1e300"},
    {"pass true", "{\"version\":1,\"pass\":true,\"domains\":[]}", 0, -EINVAL,
     "pass: expected an integer from 0 to 18446744073709551615, got true"},

    /* nodes */
    {"nodes as an object", "{\"version\":1,\"nodes\":{},\"domains\":[]}", 0, -EINVAL,
     "nodes: expected an array, got an object"},
    {"nodes: unknown node number", NODES("{\"node\":1}"), 0, -EINVAL,
     "nodes[0].node: unknown host node 1 (the topology has nodes 0,2,5)"},
    {"nodes: node missing", NODES("{\"free_bytes\":1}"), 0, -EINVAL,
     "nodes[0].node: missing required field"},
    {"nodes: node listed twice", NODES("{\"node\":2},{\"node\":5},{\"node\":2}"), 0, -EINVAL,
     "nodes[2].node: host node 2 listed twice"},
    {"nodes: free_hugepages not an object", NODES("{\"node\":2,\"free_hugepages\":[]}"), 0, -EINVAL,
     "nodes[0].free_hugepages: expected an object"},
    {"nodes: free_hugepages page size not a number",
     NODES("{\"node\":2,\"free_hugepages\":{\"2M\":1}}"), 0, -EINVAL,
     "nodes[0].free_hugepages[\"2M\"]: expected a page size in bytes"},
    {"nodes: free_hugepages page size not a power of two",
     NODES("{\"node\":2,\"free_hugepages\":{\"3000000\":1}}"), 0, -EINVAL,
     "expected a page size in bytes, a power of two"},
    {"nodes: free_hugepages above the node",
     NODES("{\"node\":2,\"free_hugepages\":{\"2097152\":2049}}"), 0, -EINVAL,
     "nodes[0].free_hugepages[\"2097152\"]: expected an integer from 0 to 2048, got 2049"},
    {"cell memory_pinned unknown", CELLF("\"memory_pinned\":\"glued\""), 0, -EINVAL,
     "memory_pinned: expected \"none\", \"vfio\", \"locked\", \"launch-security\" or "
     "\"refused\""},
    {"cell memory_pinned not a string", CELLF("\"memory_pinned\":true"), 0, -EINVAL,
     "memory_pinned: expected a string"},
    {"nodes: free_bytes above mem_total", NODES("{\"node\":2,\"free_bytes\":4294967297}"), 0,
     -EINVAL, "nodes[0].free_bytes: expected an integer from 0 to 4294967296, got 4294967297"},
    {"nodes: other_busy above the node's CPUs", NODES("{\"node\":0,\"other_busy\":4.5}"), 0,
     -EINVAL, "nodes[0].other_busy: expected a number from 0 to 4, got 4.5"},
    {"nodes: other_busy on a memory-only node", NODES("{\"node\":5,\"other_busy\":0.1}"), 0,
     -EINVAL, "nodes[0].other_busy: expected a number from 0 to 0, got 0.1"},
    {"nodes: unknown field", NODES("{\"node\":0,\"free\":1}"), 0, -EINVAL,
     "nodes[0].free: unknown field"},
    {"nodes: node as a string", NODES("{\"node\":\"0\"}"), 0, -EINVAL,
     "nodes[0].node: expected a host node number, got \"0\""},

    /* domain */
    {"name missing", DOC("{\"cells\":[" CELL0 "]}"), 0, -EINVAL,
     "domains[0].name: missing required field"},
    {"name as a number", DOC("{\"name\":5,\"cells\":[" CELL0 "]}"), 0, -EINVAL,
     "domains[0].name: expected a string, got 5"},
    {"name empty", DOC("{\"name\":\"\",\"cells\":[" CELL0 "]}"), 0, -EINVAL,
     "domains[0].name: expected 1 to 255 bytes, got 0"},
    {"name with \\u0000", DOC("{\"name\":\"a\\u0000b\",\"cells\":[" CELL0 "]}"), 0, -EINVAL,
     "domains[0].name: string contains a NUL character"},
    {"duplicate domain names",
     DOC("{\"name\":\"x\",\"cells\":[" CELL0 "]},{\"name\":\"d\",\"cells\":[" CELL0
         "]},{\"name\":\"x\",\"cells\":[" CELL0 "]}"),
     0, -EINVAL, "domains[2].name: duplicate domain name \"x\" (also domains[0])"},
    {"unknown domain field", DOMF("\"colour\":1"), 0, -EINVAL, "domains[0].colour: unknown field"},
    {"uuid too short", DOMF("\"uuid\":\"8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a9\""), 0, -EINVAL,
     "domains[0].uuid: expected a UUID"},
    {"uuid not hex", DOMF("\"uuid\":\"8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a9g\""), 0, -EINVAL,
     "domains[0].uuid: expected a UUID"},
    {"uuid dashes misplaced", DOMF("\"uuid\":\"8c2e2f8a1-b7d-4c1e-9a55-0d3b6f1e2a90\""), 0, -EINVAL,
     "domains[0].uuid: expected a UUID"},
    {"balancer as an array", DOMF("\"balancer\":[]"), 0, -EINVAL,
     "domains[0].balancer: expected an object, got an array"},
    {"balancer mode missing", DOMF("\"balancer\":{\"priority\":1}"), 0, -EINVAL,
     "domains[0].balancer.mode: missing required field"},
    {"balancer mode unknown", DOMF("\"balancer\":{\"mode\":\"on\"}"), 0, -EINVAL,
     "domains[0].balancer.mode: expected \"auto\", \"advise\" or \"off\""},
    {"balancer mode as a number", DOMF("\"balancer\":{\"mode\":1}"), 0, -EINVAL,
     "domains[0].balancer.mode: expected a string, got 1"},
    {"balancer unknown field", DOMF("\"balancer\":{\"mode\":\"auto\",\"weight\":1}"), 0, -EINVAL,
     "domains[0].balancer.weight: unknown field"},
    {"priority 101", DOMF("\"balancer\":{\"mode\":\"auto\",\"priority\":101}"), 0, -EINVAL,
     "domains[0].balancer.priority: expected an integer from -100 to 100, got 101"},
    {"priority 2^63", DOMF("\"balancer\":{\"mode\":\"auto\",\"priority\":9223372036854775808}"), 0,
     -EINVAL,
     "domains[0].balancer.priority: expected an integer from -100 to 100, got 9223372036854775808"},
    {"priority 2^63-1", DOMF("\"balancer\":{\"mode\":\"auto\",\"priority\":9223372036854775807}"),
     0, -EINVAL, "priority: expected an integer from -100 to 100, got 9223372036854775807"},
    {"priority below -2^63",
     DOMF("\"balancer\":{\"mode\":\"auto\",\"priority\":-9223372036854775809}"), 0, -EINVAL,
     "priority: expected an integer from -100 to 100, got a number too small to represent"},
    {"priority as a double", DOMF("\"balancer\":{\"mode\":\"auto\",\"priority\":1.5}"), 0, -EINVAL,
     "priority: expected an integer from -100 to 100, got 1.5"},
    {"balancer nodes empty", DOMF("\"balancer\":{\"mode\":\"auto\",\"nodes\":[]}"), 0, -EINVAL,
     "domains[0].balancer.nodes: expected at least 1 entry, got 0"},
    {"balancer nodes unknown", DOMF("\"balancer\":{\"mode\":\"auto\",\"nodes\":[0,3]}"), 0, -EINVAL,
     "domains[0].balancer.nodes[1]: unknown host node 3 (the topology has nodes 0,2,5)"},
    {"balancer nodes twice", DOMF("\"balancer\":{\"mode\":\"auto\",\"nodes\":[5,5]}"), 0, -EINVAL,
     "domains[0].balancer.nodes[1]: host node 5 listed twice"},
    {"balancer nodes as a string", DOMF("\"balancer\":{\"mode\":\"auto\",\"nodes\":\"0\"}"), 0,
     -EINVAL, "domains[0].balancer.nodes: expected an array, got \"0\""},
    {"age_passes above 1e9", DOMF("\"age_passes\":1000000001"), 0, -EINVAL,
     "domains[0].age_passes: expected an integer from 0 to 1000000000, got 1000000001"},
    {"age_passes negative", DOMF("\"age_passes\":-1"), 0, -EINVAL,
     "domains[0].age_passes: expected an integer from 0 to 1000000000, got -1"},
    {"preferred_node unknown", DOMF("\"preferred_node\":1"), 0, -EINVAL,
     "domains[0].preferred_node: unknown host node 1"},
    {"busy_unmeasured not a bool", DOMF("\"busy_unmeasured\":1"), 0, -EINVAL,
     "domains[0].busy_unmeasured: expected true or false, got 1"},
    {"preferred_node -2", DOMF("\"preferred_node\":-2"), 0, -EINVAL,
     "domains[0].preferred_node: expected a host node number or -1, got -2"},
    {"preferred_node huge", DOMF("\"preferred_node\":9223372036854775808"), 0, -EINVAL,
     "domains[0].preferred_node: expected a host node number or -1, got 9223372036854775808"},
    {"numatune strict without nodes", DOMF("\"numatune\":{\"mode\":\"strict\"}"), 0, -EINVAL,
     "domains[0].numatune.nodes: missing required field"},
    {"numatune unknown mode", DOMF("\"numatune\":{\"mode\":\"bind\",\"nodes\":[0]}"), 0, -EINVAL,
     "domains[0].numatune.mode: expected \"strict\", \"restrictive\", \"preferred\", "
     "\"interleave\" or \"none\""},
    {"numatune none with nodes", DOMF("\"numatune\":{\"mode\":\"none\",\"nodes\":[0]}"), 0, -EINVAL,
     "domains[0].numatune.nodes: must be absent or empty with mode \"none\""},
    {"numatune unknown field", DOMF("\"numatune\":{\"mode\":\"none\",\"placement\":\"auto\"}"), 0,
     -EINVAL, "domains[0].numatune.placement: unknown field"},
    {"cells missing", DOM("\"uuid\":\"8c2e2f8a-1b7d-4c1e-9a55-0d3b6f1e2a90\""), 0, -EINVAL,
     "domains[0].cells: missing required field"},
    {"cells empty", DOM("\"cells\":[]"), 0, -EINVAL,
     "domains[0].cells: expected at least 1 entry, got 0"},
    {"cells as an object", DOM("\"cells\":{\"id\":0}"), 0, -EINVAL,
     "domains[0].cells: expected an array, got an object"},

    /* cell */
    {"cell id missing", CELL("\"vcpus\":[" VC0 "]"), 0, -EINVAL,
     "domains[0].cells[0].id: missing required field"},
    {"cell id 1024", CELL("\"id\":1024,\"vcpus\":[" VC0 "]"), 0, -EINVAL,
     "domains[0].cells[0].id: expected an integer from 0 to 1023, got 1024"},
    {"cell id as a string", CELL("\"id\":\"0\",\"vcpus\":[" VC0 "]"), 0, -EINVAL,
     "domains[0].cells[0].id: expected an integer from 0 to 1023, got \"0\""},
    {"duplicate cell ids",
     DOM("\"cells\":[" CELL0 ",{\"id\":0,\"vcpus\":[{\"id\":1,\"allowed\":\"0\"}]}]"), 0, -EINVAL,
     "domains[0].cells[1].id: duplicate cell id 0 in this domain"},
    {"unknown cell field", CELLF("\"colour\":\"red\""), 0, -EINVAL,
     "domains[0].cells[0].colour: unknown field"},
    {"cell numatune unknown node", CELLF("\"numatune\":{\"mode\":\"strict\",\"nodes\":[1]}"), 0,
     -EINVAL, "domains[0].cells[0].numatune.nodes[0]: unknown host node 1"},
    {"page_size not a power of two", CELLF("\"page_size\":6144"), 0, -EINVAL,
     "domains[0].cells[0].page_size: expected a power of two from 4096 to 1073741824, got 6144"},
    {"move_granule below the page size", CELLF("\"page_size\":2097152,\"move_granule\":4096"), 0,
     -EINVAL,
     "domains[0].cells[0].move_granule: expected a power of two from the page size to "
     "1073741824, got 4096"},
    {"move_granule not a power of two", CELLF("\"move_granule\":6144"), 0, -EINVAL,
     "move_granule: expected a power of two from the page size to 1073741824, got 6144"},
    {"page_size below 4096", CELLF("\"page_size\":2048"), 0, -EINVAL,
     "page_size: expected a power of two from 4096 to 1073741824, got 2048"},
    {"page_size above 1 GiB", CELLF("\"page_size\":2147483648"), 0, -EINVAL,
     "page_size: expected an integer from 0 to 1073741824, got 2147483648"},
    {"pages as an array", CELLF("\"pages\":[1,2]"), 0, -EINVAL,
     "domains[0].cells[0].pages: expected an object, got an array"},
    {"pages key with a leading zero", CELLF("\"pages\":{\"00\":1}"), 0, -EINVAL,
     "domains[0].cells[0].pages[\"00\"]: expected a host node number in decimal as the key"},
    {"pages key negative", CELLF("\"pages\":{\"-1\":1}"), 0, -EINVAL,
     "domains[0].cells[0].pages[\"-1\"]: expected a host node number in decimal"},
    {"pages key not a number", CELLF("\"pages\":{\"x\":1}"), 0, -EINVAL,
     "pages.x: expected a host node number in decimal"},
    {"pages key unknown node", CELLF("\"pages\":{\"0\":1,\"3\":1}"), 0, -EINVAL,
     "domains[0].cells[0].pages[\"3\"]: unknown host node 3"},
    {"pages value negative", CELLF("\"pages\":{\"0\":-5}"), 0, -EINVAL,
     "pages[\"0\"]: expected an integer from 0 to 18446744073709551615, got -5"},
    {"pages value as a double", CELLF("\"pages\":{\"0\":1.5}"), 0, -EINVAL,
     "pages[\"0\"]: expected an integer from 0 to 18446744073709551615, got 1.5"},
    {"pages * page_size overflow", CELLF("\"page_size\":1073741824,\"pages\":{\"5\":17179869184}"),
     0, -EINVAL,
     "pages[\"5\"]: 17179869184 pages of 1073741824 bytes overflow a 64-bit byte count"},
    {"pages above the node's memory", CELLF("\"pages\":{\"2\":1048577}"), 0, -EINVAL,
     "pages[\"2\"]: 4294971392 bytes of pages exceed the 4294967296 bytes of host node 2"},
    {"last_candidate unknown", CELLF("\"last_candidate\":4"), 0, -EINVAL,
     "domains[0].cells[0].last_candidate: unknown host node 4"},
    {"last_candidate as a double", CELLF("\"last_candidate\":0.0"), 0, -EINVAL,
     "last_candidate: expected a host node number or -1, got 0.0"},
    {"vcpus missing", CELL("\"id\":0"), 0, -EINVAL,
     "domains[0].cells[0].vcpus: missing required field"},
    {"vcpus empty in the only cell", CELL("\"id\":0,\"vcpus\":[]"), 0, -EINVAL,
     "domains[0].cells: no cell has a vCPU (memory-only cells need another cell with vCPUs)"},
    {"vcpus as an object", CELL("\"id\":0,\"vcpus\":" VC0), 0, -EINVAL,
     "domains[0].cells[0].vcpus: expected an array, got an object"},

    /* vCPU */
    {"vcpu id missing", VCPU("\"allowed\":\"0\""), 0, -EINVAL,
     "domains[0].cells[0].vcpus[0].id: missing required field"},
    {"vcpu id 4096", VCPU("\"id\":4096,\"allowed\":\"0\""), 0, -EINVAL,
     "vcpus[0].id: expected an integer from 0 to 4095, got 4096"},
    {"vcpu id as a double", VCPU("\"id\":1.5,\"allowed\":\"0\""), 0, -EINVAL,
     "vcpus[0].id: expected an integer from 0 to 4095, got 1.5"},
    {"vcpu id as a string", VCPU("\"id\":\"1\",\"allowed\":\"0\""), 0, -EINVAL,
     "vcpus[0].id: expected an integer from 0 to 4095, got \"1\""},
    {"vcpu id as an object", VCPU("\"id\":{},\"allowed\":\"0\""), 0, -EINVAL,
     "vcpus[0].id: expected an integer from 0 to 4095, got an object"},
    {"duplicate vcpu ids across cells",
     DOM("\"cells\":[" CELL0 ",{\"id\":1,\"vcpus\":[{\"id\":1,\"allowed\":\"0\"},{\"id\":0,"
         "\"allowed\":\"0\"}]}]"),
     0, -EINVAL, "domains[0].cells[1].vcpus[1].id: duplicate vCPU id 0 in this domain"},
    {"unknown vcpu field", VCPUF("\"tid\":1234"), 0, -EINVAL,
     "domains[0].cells[0].vcpus[0].tid: unknown field"},
    {"busy negative (path in a later domain)",
     DOC("{\"name\":\"a\",\"cells\":[" CELL0 "]},{\"name\":\"b\",\"cells\":[{\"id\":0,\"vcpus\":["
         "{\"id\":0,\"allowed\":\"0\"},{\"id\":1,\"allowed\":\"0\"},{\"id\":2,\"allowed\":\"0\","
         "\"busy\":-3}]}]}"),
     0, -EINVAL,
     "test.json: domains[1].cells[0].vcpus[2].busy: expected a number from 0 to 1, got -3"},
    {"busy above 1", VCPUF("\"busy\":1.01"), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got 1.01"},
    {"busy 1e300", VCPUF("\"busy\":1e300"), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got 1e300"},
    {"busy 1e400 (infinite)", VCPUF("\"busy\":1e400"), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got 1e400"},
    {"busy NaN", VCPUF("\"busy\":NaN"), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got NaN"},
    {"busy as a string", VCPUF("\"busy\":\"0.5\""), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got \"0.5\""},
    {"busy as an array", VCPUF("\"busy\":[0.5]"), 0, -EINVAL,
     "vcpus[0].busy: expected a number from 0 to 1, got an array"},
    {"allowed missing", VCPU("\"id\":0"), 0, -EINVAL,
     "domains[0].cells[0].vcpus[0].allowed: missing required field"},
    {"allowed \"0-\"", VCPU("\"id\":0,\"allowed\":\"0-\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \"0-\""},
    {"allowed \"a\"", VCPU("\"id\":0,\"allowed\":\"a\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \"a\""},
    {"allowed \"3-1\"", VCPU("\"id\":0,\"allowed\":\"3-1\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \"3-1\": range 3-1 is reversed"},
    {"allowed \"1,,2\"", VCPU("\"id\":0,\"allowed\":\"1,,2\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \"1,,2\""},
    {"allowed \"1-2-3\"", VCPU("\"id\":0,\"allowed\":\"1-2-3\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \"1-2-3\""},
    {"allowed \" 1\"", VCPU("\"id\":0,\"allowed\":\" 1\""), 0, -EINVAL,
     "vcpus[0].allowed: malformed CPU list \" 1\""},
    {"allowed empty", VCPU("\"id\":0,\"allowed\":\"\""), 0, -EINVAL,
     "vcpus[0].allowed: empty CPU list"},
    {"allowed outside the topology", VCPU("\"id\":0,\"allowed\":\"0-8\""), 0, -EINVAL,
     "vcpus[0].allowed: CPU 8 is not a CPU of the host topology (0-7)"},
    {"allowed beyond VN_MAX_CPUS", VCPU("\"id\":0,\"allowed\":\"9000\""), 0, -EINVAL,
     "vcpus[0].allowed: CPU list \"9000\" names a CPU above 8191"},
    {"allowed as an array", VCPU("\"id\":0,\"allowed\":[0,1]"), 0, -EINVAL,
     "vcpus[0].allowed: expected a string, got an array"},
    {"pinned outside the topology", VCPUF("\"pinned\":\"9\""), 0, -EINVAL,
     "vcpus[0].pinned: CPU 9 is not a CPU of the host topology"},
    {"pinned empty", VCPUF("\"pinned\":\"\""), 0, -EINVAL, "vcpus[0].pinned: empty CPU list"},
    {"cpu outside the topology", VCPUF("\"cpu\":8"), 0, -EINVAL,
     "vcpus[0].cpu: CPU 8 is not a CPU of the host topology"},
    {"cpu -2", VCPUF("\"cpu\":-2"), 0, -EINVAL,
     "vcpus[0].cpu: expected an integer from -1 to 8191, got -2"},
    {"fixed not a bool", VCPUF("\"fixed\":\"yes\""), 0, -EINVAL,
     "vcpus[0].fixed: expected true or false, got \"yes\""},
    {"cpu as a string", VCPUF("\"cpu\":\"3\""), 0, -EINVAL,
     "vcpus[0].cpu: expected an integer from -1 to 8191, got \"3\""},

    /* hints */
    {"hints as an array", CELLF("\"hints\":[]"), 0, -EINVAL,
     "domains[0].cells[0].hints: expected an object, got an array"},
    {"unknown hints field", HINTS("\"hot\":[]"), 0, -EINVAL,
     "domains[0].cells[0].hints.hot: unknown field"},
    {"hot_ranges as an object", HINTS("\"hot_ranges\":{}"), 0, -EINVAL,
     "hints.hot_ranges: expected an array, got an object"},
    {"hot range gpa missing", HOT("\"length\":4096,\"heat\":1"), 0, -EINVAL,
     "hints.hot_ranges[0].gpa: missing required field"},
    {"hot range heat missing", HOT("\"gpa\":0,\"length\":4096"), 0, -EINVAL,
     "hints.hot_ranges[0].heat: missing required field"},
    {"hot range empty", HOT("\"gpa\":0,\"length\":0,\"heat\":1"), 0, -EINVAL,
     "hints.hot_ranges[0].length: a hot range cannot be empty"},
    {"hot range gpa + length overflow",
     HOT("\"gpa\":18446744073709547520,\"length\":8192,\"heat\":1"), 0, -EINVAL,
     "domains[0].cells[0].hints.hot_ranges[0].length: gpa + length overflows a 64-bit address"},
    {"hot range heat 2", HOT("\"gpa\":0,\"length\":4096,\"heat\":2"), 0, -EINVAL,
     "hints.hot_ranges[0].heat: expected a number from 0 to 1, got 2"},
    {"hot range shared as a string", HOT("\"gpa\":0,\"length\":4096,\"heat\":1,\"shared\":\"yes\""),
     0, -EINVAL, "hints.hot_ranges[0].shared: expected true or false, got \"yes\""},
    {"hot range unknown field", HOT("\"gpa\":0,\"length\":4096,\"heat\":1,\"node\":0"), 0, -EINVAL,
     "hints.hot_ranges[0].node: unknown field"},
    {"share naming its own cell", SHARE("\"cell\":0,\"weight\":0.5"), 0, -EINVAL,
     "domains[0].cells[0].hints.shares[0].cell: a cell cannot share with itself (cell 0)"},
    {"share naming a missing cell",
     DOM("\"cells\":[" CELL0 ",{\"id\":3,\"vcpus\":[{\"id\":1,\"allowed\":\"0\"}],\"hints\":{"
         "\"shares\":[{\"cell\":0,\"weight\":1},{\"cell\":2,\"weight\":1}]}}]"),
     0, -EINVAL,
     "domains[0].cells[1].hints.shares[1].cell: no cell with this id in the domain (cell 2)"},
    {"share listed twice",
     DOM("\"cells\":[" CELL0 ",{\"id\":1,\"vcpus\":[{\"id\":1,\"allowed\":\"0\"}],\"hints\":{"
         "\"shares\":[{\"cell\":0,\"weight\":1},{\"cell\":0,\"weight\":0.5}]}}]"),
     0, -EINVAL, "domains[0].cells[1].hints.shares[1].cell: cell listed twice in shares (cell 0)"},
    {"share weight negative", SHARE("\"cell\":1,\"weight\":-0.1"), 0, -EINVAL,
     "hints.shares[0].weight: expected a number from 0 to 1, got -0.1"},
    {"share weight missing", SHARE("\"cell\":1"), 0, -EINVAL,
     "hints.shares[0].weight: missing required field"},
    {"share cell as a string", SHARE("\"cell\":\"1\",\"weight\":1"), 0, -EINVAL,
     "hints.shares[0].cell: expected an integer from 0 to 1023, got \"1\""},
};

/*
 * Parse a bad document into a snapshot filled with a sentinel, and check the
 * return value, the error text, and that the snapshot was not touched.
 */
static void check_bad(const char *name, const char *json, size_t len, int error, const char *want)
{
    snapshot s, sentinel;
    char err[1024];
    int r;

    memset(&s, SENTINEL, sizeof(s));
    memset(&sentinel, SENTINEL, sizeof(sentinel));
    memset(err, 0, sizeof(err));
    r = parse_len(json, len, &s, err, sizeof(err));
    CHECK(r < 0 && r == error && strstr(err, want) && strncmp(err, ORIGIN ": ", 11) == 0 &&
              memcmp(&s, &sentinel, sizeof(s)) == 0,
          "bad: %s: returns %d (want %d), error \"%s\" (want \"%s\"), snapshot untouched: %s", name,
          r, error, err, want, memcmp(&s, &sentinel, sizeof(s)) == 0 ? "yes" : "NO");
}

static void test_bad_table(void)
{
    for (size_t i = 0; i < VN_ARRAY_SIZE(bad_cases); i++) {
        const bad_case *b = &bad_cases[i];
        check_bad(b->name, b->json, b->len ? b->len : strlen(b->json), b->error, b->want);
    }
}

static void test_bad_generated(void)
{
    char json[1024], name[SNAP_NAME_MAX + 1];
    char *doc;

    memset(name, 'n', SNAP_NAME_MAX);
    name[SNAP_NAME_MAX] = '\0';
    (void)snprintf(json, sizeof(json),
                   "{\"version\":1,\"domains\":[{\"name\":\"%s\",\"cells\":[" CELL0 "]}]}", name);
    check_bad("name of 256 bytes", json, strlen(json), -EINVAL,
              "domains[0].name: expected 1 to 255 bytes, got 256");

    doc = gen_domains(SNAP_MAX_DOMAINS + 1);
    if (CHECK(doc != NULL, "generate %d domains", SNAP_MAX_DOMAINS + 1))
        check_bad("too many domains", doc, strlen(doc), -E2BIG,
                  "test.json: domains: too many entries (4097, at most 4096)");
    free(doc);

    doc = gen_array("cells", SNAP_MAX_CELLS_PER_DOMAIN + 1);
    if (doc)
        check_bad("too many cells", doc, strlen(doc), -E2BIG,
                  "domains[0].cells: too many entries (65, at most 64)");
    free(doc);

    doc = gen_array("vcpus", SNAP_MAX_VCPUS_PER_CELL + 1);
    if (doc)
        check_bad("too many vCPUs", doc, strlen(doc), -E2BIG,
                  "domains[0].cells[0].vcpus: too many entries (1025, at most 1024)");
    free(doc);

    doc = gen_array("hot_ranges", SNAP_MAX_HOT_RANGES + 1);
    if (doc)
        check_bad("too many hot ranges", doc, strlen(doc), -E2BIG,
                  "domains[0].cells[0].hints.hot_ranges: too many entries (257, at most 256)");
    free(doc);

    doc = gen_array("shares", SNAP_MAX_SHARES + 1);
    if (doc)
        check_bad("too many shares", doc, strlen(doc), -E2BIG,
                  "domains[0].cells[0].hints.shares: too many entries (65, at most 64)");
    free(doc);

    /* An input over the size limit is refused before it is read. */
    doc = malloc((size_t)SNAP_MAX_FILE_BYTES + 1);
    if (doc) {
        doc[0] = '{';
        check_bad("input over SNAP_MAX_FILE_BYTES", doc, (size_t)SNAP_MAX_FILE_BYTES + 1, -E2BIG,
                  "test.json: input is 67108865 bytes, at most 67108864 accepted");
    }
    free(doc);
}

int main(void)
{
    make_topology(&topo);
    test_bad_table();
    test_bad_generated();
    return tap_done();
}
