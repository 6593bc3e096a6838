#!/bin/bash
# CLI tests of `vnumactl topology`: every tests/data/topologies/*.xml as a
# table and as JSON (node count checked against lstopo's), the live host, bad
# inputs, and that tests/data/topologies/ is still a copy of
# ${VN_TOPOLOGIES:-../shared/topologies}. Run from the repository root with
# BUILD=build. Prints "ok N - desc" / "not ok N - desc" and "N passed, N failed".
set -u
BUILD=${BUILD:-build}
VNUMACTL=$BUILD/vnumactl
TOPODIR=tests/data/topologies
SHARED=${VN_TOPOLOGIES:-../shared/topologies}

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# to FILE COMMAND...: COMMAND's stdout into FILE, stderr into $tmp/err (inside check,
# so that check's own "ok" line stays on the terminal)
to() {
    local out=$1; shift
    "$@" >"$out" 2>"$tmp/err"
}
# quiet COMMAND...: no output at all
quiet() {
    "$@" >/dev/null 2>&1
}

if [ ! -x "$VNUMACTL" ]; then
    check "$VNUMACTL is built" false
    finish
fi
for tool in python3 lstopo-no-graphics; do
    if ! command -v "$tool" >/dev/null; then
        skip_all "cannot run here: $tool is missing (apt-get install python3 hwloc)"
    fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# NUMA nodes in a JSON document on stdin
json_nodes() {
    python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d["nodes"]))'
}
# NUMA nodes hwloc itself shows for a file. Not `hwloc-calc --number-of node all`:
# "all" is the allowed cpuset, and allowed nodes without allowed CPUs (memory-only
# nodes of 16amd64-8n2c-cpusets.xml) do not intersect it.
lstopo_nodes() {
    lstopo-no-graphics -i "$1" --only numanode | wc -l
}

for f in "$TOPODIR"/*.xml; do
    name=$(basename "$f")
    check "$name: table exits 0" to "$tmp/out" "$VNUMACTL" topology --input "$f"
    check "$name: table names the source" grep -q "^source: $f\$" "$tmp/out"
    check "$name: --json exits 0" to "$tmp/json" "$VNUMACTL" topology --input "$f" --json
    check "$name: --json is valid JSON" quiet python3 -m json.tool "$tmp/json"
    got=$(json_nodes <"$tmp/json" 2>/dev/null)
    want=$(lstopo_nodes "$f")
    check "$name: JSON has $want nodes as lstopo shows (got ${got:-none})" [ "${got:-x}" = "$want" ]
done

# the allowed-set case, explicitly: nodes 1-5 allowed, 4 and 5 without allowed CPUs
f=$TOPODIR/16amd64-8n2c-cpusets.xml
"$VNUMACTL" topology --input "$f" --json >"$tmp/json" 2>/dev/null
check "16amd64-8n2c-cpusets.xml: only allowed nodes 1-5, 4 and 5 memory-only" \
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [n["node"] for n in d["nodes"]] == [1, 2, 3, 4, 5]
assert [n["cpuless"] for n in d["nodes"]] == [False, False, False, True, True]
assert sum(n["nr_cpus"] for n in d["nodes"]) == 4' "$tmp/json"

# synthetic
check "synthetic: exits 0" \
    to "$tmp/json" "$VNUMACTL" topology --synthetic "pack:2 numa:4 l3:3 core:8 pu:2" --json
check "synthetic: 8 nodes, imb_numa_nr 3 each" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["source"] == "synthetic:pack:2 numa:4 l3:3 core:8 pu:2"
assert [n["imb_numa_nr"] for n in d["nodes"]] == [3] * 8' "$tmp/json"

# the live host
check "live: table exits 0" to "$tmp/out" "$VNUMACTL" topology
check "live: table names the source" grep -q '^source: live$' "$tmp/out"
check "live: --json exits 0" to "$tmp/json" "$VNUMACTL" topology --json
check "live: --json is valid JSON" quiet python3 -m json.tool "$tmp/json"
got=$(json_nodes <"$tmp/json" 2>/dev/null)
want=$(lstopo-no-graphics --only numanode 2>/dev/null | wc -l)
check "live: JSON has $want nodes as lstopo shows (got ${got:-none})" [ "${got:-x}" = "$want" ]
if [ -r /sys/devices/system/node/node0/meminfo ]; then
    check "live: node 0 free memory is known" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
n0 = [n for n in d["nodes"] if n["node"] == 0][0]
assert n0["mem_free"] is not None and 0 < n0["mem_free"] <= n0["mem_total"]' "$tmp/json"
fi

# bad inputs: non-zero exit, one line naming the file
bad() { # bad DESC NAME ARGS...
    local desc=$1 name=$2; shift 2
    "$VNUMACTL" topology "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    check "$desc: exits non-zero (got $rc)" [ "$rc" -ne 0 ]
    check "$desc: stderr names $name" grep -qF "$name" "$tmp/err"
    check "$desc: stderr is one line starting with 'vnumactl: '" \
        bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q "^vnumactl: " "$1"' _ "$tmp/err"
}
bad "malformed XML" topology-malformed.xml --input tests/data/bad/topology-malformed.xml
bad "empty XML" topology-empty.xml --input tests/data/bad/topology-empty.xml
bad "missing file" no-such-topology.xml --input tests/data/bad/no-such-topology.xml
bad "bad synthetic string" "pack:2 bogus:3" --synthetic "pack:2 bogus:3"

# usage
"$VNUMACTL" no-such-command >/dev/null 2>"$tmp/err"
rc=$?
check "unknown subcommand exits 2 (got $rc)" [ "$rc" -eq 2 ]
check "unknown subcommand prints usage to stderr" grep -q '^Usage: vnumactl' "$tmp/err"
check "--help exits 0 and lists topology" \
    bash -c '"$1" --help | grep -q "^  topology "' _ "$VNUMACTL"
check "help exits 0" quiet "$VNUMACTL" help

# the copies stay in sync with the shared topologies
if [ -d "$SHARED" ]; then
    for f in "$SHARED"/*.xml; do
        name=$(basename "$f")
        check "$name: $TOPODIR copy is identical to $SHARED" cmp -s "$f" "$TOPODIR/$name"
    done
else
    echo "# $SHARED does not exist: copies not compared"
fi

finish
