# tests/bench/ground-lib.sh: boot the proving ground for a memory benchmark (sourced by
# sample-cost.sh and migrate.sh). ground_bench PART MEM_PER_NODE TIMEOUT [key=value...] boots 4
# nodes x 2 CPUs x MEM_PER_NODE under TCG, runs tests/bench/ground/mem-inside.sh part=PART, and
# leaves its Markdown rows in $GROUND_OUT (= $RESULTS/PART.md). run-ground.sh waits while
# another proving ground runs on this machine.
ground_bench() {
    local part=$1 mem=$2 timeout=$3 rc
    shift 3
    GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
    RESULTS=$GROUND_CACHE/results-bench-$part
    rm -rf "$RESULTS"
    mkdir -p "$RESULTS"
    vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null 2>&1 || { echo "vm-images/build-ground.sh failed" >&2; return 1; }
    echo "# booting the ground: 4 nodes x 2 CPUs x $mem, TCG; inside: part=$part $*" >&2
    NODES=4 CPUS_PER_NODE=2 MEM_PER_NODE=$mem SOCKETS=2 TIMEOUT=$timeout GROUND_CACHE=$GROUND_CACHE \
        RESULTS=$RESULTS nice vm-images/run-ground.sh tests/bench/ground/mem-inside.sh part="$part" \
        bin="$PWD/$BUILD/bench" "$@" >"$RESULTS/run-ground.out" 2>&1
    rc=$?
    sed 's/^/# /' "$RESULTS/run-ground.out" >&2
    GROUND_OUT=$RESULTS/$part.md
    [ -s "$GROUND_OUT" ] || { tail -n 20 "$RESULTS/console.log" >&2; return 1; }
    return $rc
}
