#!/bin/bash
# Tiered memory, side by side (issue 31): one boot of the proving ground with a lower tier (a
# CPU-less node the kernel counts as a lower memory tier: run-ground.sh --tier-node), two domains
# of the test guest whose cell 0 is larger than its home node's room, a hot set (memtouch in a
# loop) and a cold filler; runs none, vnumad with the agent, vnumad without it, the kernel's
# numa_balancing=2 (tests/bench/tiers/inside.py has the details). Prints a markdown table:
# the hot set's share on the home node at the end and when it reached 99%, where cell 0 ended,
# pages migrated, hinting faults, pages moved twice, and for vnumad the passes that ordered moves until then.
#   usage: tests/bench/tiers.sh [SECONDS]       (default 60 s of sampling per run)
#   env: RUNS=none+agent+plain+agent@tier+kernel+kernel@tier+huge@tier+kernel-huge@tier HOT_MIB=64 COLD_MIB=448 CELL_MIB=640 ROOM_MIB=32
#        TIERS_TIMEOUT=2400 (s)
# Needs root, qemu-system-x86_64, libvirt, ndctl and daxctl (make deps).
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=60
. tests/bench/args.sh
bench_args SECS:int -- "$@"
BUILD=${BUILD:-build}
T0=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - T0)) "$*"; }
die() { say "$*"; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
make -s BUILD="$BUILD" all >/dev/null || die "make failed"
GUEST=$(vm-images/build-guest.sh 2>/dev/null | tail -n 1) || die "vm-images/build-guest.sh failed"
GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
RESULTS=${RESULTS:-$GROUND_CACHE/results-tiers}
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
OUT=$RESULTS/progress.out
: >"$OUT"
args="seconds=$SECS runs=${RUNS:-none+agent+plain+agent@tier+kernel+kernel@tier+huge@tier+kernel-huge@tier} hot_mib=${HOT_MIB:-64} cold_mib=${COLD_MIB:-448} cell_mib=${CELL_MIB:-640} room_mib=${ROOM_MIB:-32}"
say "booting the ground: 4 nodes x 2 CPUs x 1G, 2 sockets, a 1G tier node, TCG; inside: $args"
# shellcheck disable=SC2086
NODES=4 CPUS_PER_NODE=2 MEM_PER_NODE=1G SOCKETS=2 TIER_NODE=1G TIMEOUT=${TIERS_TIMEOUT:-2400} \
    GROUND_CACHE=$GROUND_CACHE RESULTS=$RESULTS vm-images/run-ground.sh tests/bench/tiers/inside.sh $args \
    >"$RESULTS/run-ground.out" 2>&1 &
pid=$!
shown=0
while kill -0 $pid 2>/dev/null; do
    n=$(wc -l <"$OUT")
    if [ "$n" -gt "$shown" ]; then
        sed -n "$((shown + 1)),${n}p" "$OUT" | sed 's/^@ //' | while IFS= read -r l; do say "$l"; done
        shown=$n
    fi
    sleep 2
done
wait $pid
rc=$?
sed -n "$((shown + 1)),\$p" "$OUT" | sed 's/^@ //' | while IFS= read -r l; do say "$l"; done
[ -s "$RESULTS/tiers.json" ] || { tail -n 30 "$RESULTS/run-ground.out"; die "no results (run-ground.sh exit $rc)"; }
python3 tests/bench/tiers/report.py "$RESULTS/tiers.json"
exit $rc
