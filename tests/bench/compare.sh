#!/bin/bash
# Side-by-side comparison of NUMA balancers on the same misplaced start, in ONE boot of the
# proving ground (vm-images/): no balancer, numad (Debian's package), vnumad and the kernel's
# automatic NUMA balancing (kernel.numa_balancing=1), in that order. Two domains of the test
# guest (vm-images/build-guest.sh: Debian kernel + memtouch, both vCPUs busy) boot once; before
# each run all their memory is put back on the last node and their vCPUs are re-pinned to the
# other nodes; then the balancer starts and everything is sampled every second
# (tests/bench/compare/inside.py has the details and the locality definition).
# A script, not a test: it prints a table (markdown) and writes the plot of locality over time.
#   usage: tests/bench/compare.sh [SECONDS]        (default 90 s of sampling per balancer)
#   env: RUNS=none+numad+vnumad+kernel  SVG=docs/compare-locality.svg  COMPARE_TIMEOUT=1500 (s)
#        CELL_MIB=384 MIB0=192 MIB1=64 (guest cell size, memtouch MiB on guest node 0 and 1)
# Needs root, qemu-system-x86_64, libvirt; installs numad (apt-get) when missing.
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=90
. tests/bench/args.sh
bench_args SECS:int -- "$@"
BUILD=${BUILD:-build}
HOT_MIB=${HOT_MIB:-0}
if [ "$HOT_MIB" != 0 ]; then # tests/bench/hotset.sh
    RUNS=${RUNS:-agent+plain}
    SVG=${SVG:-}
else
    RUNS=${RUNS:-none+numad+vnumad+kernel}
    SVG=${SVG:-docs/compare-locality.svg}
fi
T0=$SECONDS
say() { printf '[%4ds] %s\n' $((SECONDS - T0)) "$*"; }
die() { say "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (the ground runs this machine's root filesystem and libvirtd as root)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is not installed"
if ! command -v numad >/dev/null; then
    say "numad is not installed: apt-get install -y numad (its postinst does not start it; it runs only inside the ground)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq numad >/dev/null || die "apt-get install numad failed"
fi
make -s BUILD="$BUILD" all >/dev/null || die "make failed"
GUEST=$(vm-images/build-guest.sh 2>/dev/null | tail -n 1) || die "vm-images/build-guest.sh failed"
[ "$GUEST" = "$PWD/$BUILD/guest" ] || die "the guest is built in $GUEST; inside.py expects $PWD/$BUILD/guest"
GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null 2>&1 || die "vm-images/build-ground.sh failed"
if [ "$HOT_MIB" != 0 ]; then RESULTS=${RESULTS:-$GROUND_CACHE/results-hotset}; fi
RESULTS=${RESULTS:-$GROUND_CACHE/results-compare}
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
OUT=$RESULTS/progress.out
CONSOLE=$RESULTS/console.log
: >"$OUT"
: >"$CONSOLE"

NODES=4 CPN=2 MEM=2G
args="seconds=$SECS runs=$RUNS cell_mib=${CELL_MIB:-384} mib0=${MIB0:-192} mib1=${MIB1:-64}"
[ "$HOT_MIB" != 0 ] && args="$args hot_mib=$HOT_MIB cold_mib=${COLD_MIB:-256} start=${HOT_START:-warm}"
say "booting the ground: $NODES nodes x $CPN CPUs x $MEM, 2 sockets, 2 L3 per node, TCG; inside: $args"
# shellcheck disable=SC2086
NODES=$NODES CPUS_PER_NODE=$CPN MEM_PER_NODE=$MEM SOCKETS=2 LLCS_PER_NODE=2 \
    TIMEOUT=${COMPARE_TIMEOUT:-1500} GROUND_CACHE=$GROUND_CACHE RESULTS=$RESULTS LOG=$CONSOLE \
    vm-images/run-ground.sh tests/bench/compare/inside.sh $args >"$RESULTS/run-ground.out" 2>&1 &
pid=$!
shown=0
stream() {
    local n
    n=$(wc -l <"$OUT")
    if [ "$n" -gt "$shown" ]; then
        sed -n "$((shown + 1)),${n}p" "$OUT" | sed 's/^@ //' | while IFS= read -r l; do say "$l"; done
        shown=$n
    fi
}
while kill -0 $pid 2>/dev/null; do
    stream
    sleep 1
done
wait $pid
rc=$?
stream
cat "$RESULTS/run-ground.out"
[ -s "$RESULTS/compare.json" ] || { tail -n 20 "$CONSOLE"; die "no results (run-ground.sh exit $rc)"; }
echo
if [ "$HOT_MIB" != 0 ]; then
    echo "Command: tests/bench/hotset.sh $SECS (HOT_MIB=$HOT_MIB COLD_MIB=${COLD_MIB:-256} CELL_MIB=${CELL_MIB:-384} HOT_START=${HOT_START:-warm}); ground wall time $((SECONDS - T0)) s"
else
    echo "Command: tests/bench/compare.sh $SECS${RUNS:+ (RUNS=$RUNS)}; ground wall time $((SECONDS - T0)) s"
fi
python3 tests/bench/compare/report.py "$RESULTS/compare.json" ${SVG:+"$SVG"} | tee "$RESULTS/table.md"
say "data: $RESULTS/compare.json${SVG:+; plot: $SVG}; logs: $RESULTS/{console.log,numad.log,vnumad.log}"
exit $rc
