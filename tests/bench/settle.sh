#!/bin/bash
# No ping-pong over a long window (issue 16): one boot of the proving ground runs the e2e
# scenarios 0-6 of tests/e2e/ground/scenarios.py (the five-domain opt-in of scenario 1: s1-a,
# s1-b, s3, s5 and s4-advise, misplaced and balanced by vnumad at interval 1 s), then watches
# scenario 6's window for PASSES passes (600: 10 minutes) instead of 20, and stops. Prints, from
# the ground's journal and /proc/vmstat: records that acted or moved in the window, pin and page
# changes, bytes moved twice per domain since its opt-in (a cell's memory moved toward a target it
# later left), and the migrations the kernel counted in the window.
#   usage: tests/bench/settle.sh [PASSES]   (default 600; about 8 min more than the passes)
set -u
cd "$(dirname "$0")/../.." || exit 1
PASSES=600
. tests/bench/args.sh
bench_args PASSES:int -- "$@"
BUILD=${BUILD:-build}
[ "$(id -u)" = 0 ] || { echo "settle.sh: needs root (the proving ground)" >&2; exit 1; }
make -s all tests >/dev/null || exit 1
GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
RESULTS=$GROUND_CACHE/results-settle
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null || exit 1
start=$SECONDS
echo "# booting the ground (4 nodes x 2 CPUs x 1 GiB, TCG); scenarios 0-6, a window of $PASSES passes" >&2
NODES=4 CPUS_PER_NODE=2 MEM_PER_NODE=1G LLCS_PER_NODE=2 SOCKETS=2 \
    TIMEOUT=$((900 + 3 * PASSES)) GROUND_CACHE=$GROUND_CACHE RESULTS=$RESULTS \
    vm-images/run-ground.sh tests/e2e/ground/scenarios.sh nodes=4 cpn=2 mem_mib=1024 numa_balancing=0 \
    s6_passes="$PASSES" stop_after=6 >"$RESULTS/run-ground.out" 2>&1
rc=$?
f=$(ls "$RESULTS"/scenario-06-*.json 2>/dev/null | head -n 1)
[ -n "$f" ] || { tail -n 20 "$RESULTS/run-ground.out" >&2; echo "settle.sh: no scenario 6 result (run-ground.sh exit $rc)" >&2; exit 1; }
python3 - "$f" "$RESULTS"/scenario-01-*.json "$PASSES" "$((SECONDS - start))" <<'PY'
import json, sys
s6, s1 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
n6, n1 = s6["numbers"], s1["numbers"]
vm = n6["vmstat_window"]
print(f"`tests/bench/settle.sh {sys.argv[3]}` ({sys.argv[4]} s wall): scenario 1 {'passed' if s1['pass'] else 'FAILED'} "
      f"(converged in {n1.get('seconds_to_converge')} s, overcommitted passes: {len(n1.get('overcommitted_passes') or [])}); "
      f"scenario 6 window: {n6['passes_watched']} passes, {n6['seconds']} s, {'passed' if s6['pass'] else 'FAILED'}\n")
print("| domain | acted / moving records since opt-in | bytes moved twice (journal) |")
print("|---|---|---|")
for d, c in n6["carried_out_records_since_optin"].items():
    print(f"| {d} | {c['acted']} / {c['moving']} | {n6['bytes_moved_twice_journal'][d]} |")
print(f"\nIn the window: {n6['acted_records']} records that acted or moved, {n6['changes']} pin or page changes, "
      f"{n6['new_journal_records']} journal records; /proc/vmstat: pgmigrate_success {vm['pgmigrate_success']}, "
      f"pgmigrate_fail {vm['pgmigrate_fail']}, numa_pages_migrated {vm['numa_pages_migrated']}, "
      f"numa_hint_faults {vm['numa_hint_faults']}")
sys.exit(0 if s6["pass"] and s1["pass"] else 1)
PY
