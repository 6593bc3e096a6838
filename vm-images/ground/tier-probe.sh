#!/bin/bash
# Ground script for run-ground.sh --tier-node SIZE: brings the tier node online
# (ground_tier_online) and checks what the kernel and vnumactl make of it:
#   numactl -H      node N has memory and no CPUs
#   memory_tiering  node N is in a higher-numbered (slower) tier than every node with CPUs
#   vnumactl        `vnumactl topology` shows node N's tier, and N as the lower tier of every
#                   node with CPUs
# Prints what it saw, one "tier-probe: ok|FAIL ..." line per check; exit 0 when all pass, 1
# otherwise. Needs build/vnumactl (make all).
#   usage: vm-images/run-ground.sh --tier-node 512M vm-images/ground/tier-probe.sh
set -u
. ./lib.sh
REPO=$(cd ../.. && pwd)
fails=0
check() { # check DESCRIPTION COMMAND...
    local what=$1
    shift
    if "$@"; then echo "tier-probe: ok   $what"; else echo "tier-probe: FAIL $what"; fails=$((fails + 1)); fi
}

tiers() {
    local d
    for d in /sys/devices/virtual/memory_tiering/memory_tier*; do
        echo "$(basename "$d"): $(cat "$d/nodelist")"
    done
}
echo "--- before: nodes possible $(cat /sys/devices/system/node/possible), online $(cat /sys/devices/system/node/online), with memory $(cat /sys/devices/system/node/has_memory)"
tiers
gt "tier-probe: onlining the tier node"
node=$(ground_tier_online) || { echo "tier-probe: FAIL ground_tier_online"; exit 1; }
gt "tier-probe: node $node online"
echo "--- numactl -H"
numactl -H | tee /tmp/numactl.txt
echo "--- /sys/devices/virtual/memory_tiering"
tiers
echo "--- daxctl list"
daxctl list
if ls /sys/devices/system/node/node*/access0/initiators/read_latency >/dev/null 2>&1; then
    echo "--- HMAT: each node's best initiators (access0)"
    for d in /sys/devices/system/node/node*/access0/initiators; do
        n=${d#/sys/devices/system/node/node} inits=""
        for i in "$d"/node*; do inits="$inits${inits:+,}${i##*/}"; done
        echo "node ${n%%/*}: initiators $inits, read latency $(cat "$d/read_latency") ns," \
            "read bandwidth $(cat "$d/read_bandwidth") MB/s"
    done
fi
echo "--- vnumactl topology"
"$REPO/build/vnumactl" topology
"$REPO/build/vnumactl" topology --json >/tmp/topology.json

has_memory() { [ "$(awk -v n="$node" '$1 == "node" && $2 == n && $3 == "size:" {print $4}' /tmp/numactl.txt)" -gt 0 ] 2>/dev/null; }
no_cpus() { grep -Eq "^node $node cpus: *\$" /tmp/numactl.txt; }
check "numactl -H: node $node has memory ($(node_total_kib "$node") KiB)" has_memory
check "numactl -H: node $node has no CPUs" no_cpus

# the tier of node K: N of the memory_tierN whose nodelist holds K
tier_of() {
    local d
    for d in /sys/devices/virtual/memory_tiering/memory_tier*; do
        python3 - "$(cat "$d/nodelist")" "$1" <<'PY' && { echo "${d##*memory_tier}"; return 0; }
import sys
want = int(sys.argv[2])
for part in sys.argv[1].split(","):
    lo, _, hi = part.partition("-")
    if part and int(lo) <= want <= int(hi or lo):
        sys.exit(0)
sys.exit(1)
PY
    done
    return 1
}
tier_lower() {
    local t k tk
    t=$(tier_of "$node") || return 1
    for ((k = 0; k < node; k++)); do
        tk=$(tier_of "$k") || return 1
        [ "$t" -gt "$tk" ] || return 1
    done
}
check "memory_tiering: node $node in memory_tier$(tier_of "$node") above every node with CPUs" tier_lower

vnumactl_tiers() {
    python3 - "$node" "$(tier_of "$node")" /tmp/topology.json <<'PY'
import json, sys
node, tier = int(sys.argv[1]), int(sys.argv[2])
nodes = {n["node"]: n for n in json.load(open(sys.argv[3]))["nodes"]}
t = nodes.get(node)
ok = t is not None and t["cpuless"] and t["memory_tier"] == tier and t["mem_total"] > 0
for k, n in nodes.items():
    if k != node and not n["cpuless"] and n["lower_tier"] != node:
        print(f"node {k}: lower_tier {n['lower_tier']}, not {node}")
        ok = False
sys.exit(0 if ok else 1)
PY
}
check "vnumactl topology: node $node memory-only in tier $(tier_of "$node"), the lower tier of every node with CPUs" vnumactl_tiers
echo "tier-probe: $fails failed"
[ "$fails" = 0 ]
