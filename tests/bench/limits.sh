#!/bin/bash
# The cost of vnuma's host limits, this build against another one (the build before), side by
# side in one run: decide() on a 384-PU host with 100 and 1000 domains (median wall time,
# callgrind instructions, peak RSS), the largest hosts each build takes (8192 CPUs; 64, 128 and
# 1024 nodes: decide() of 100 domains and peak RSS), and how long
# `vnumad --advise --synthetic` takes to refuse hostile descriptions (a timeout of 60 s).
# Prints a Markdown table. Usage: tests/bench/limits.sh [--before DIR] [RUNS]
#   --before DIR  a checkout of the build before (default: none; only this build is measured)
set -eu
cd "$(dirname "$0")/../.."
BEFORE=""
RUNS=21
. tests/bench/args.sh
bench_args --before=BEFORE RUNS:int -- "$@"
SNAP=tests/data/snapshots/synthetic-zen3-2s-nps1.json

build_of() { # DIR: builds DIR's decide-bench and vnumad into DIR/build
    make -s -C "$1" BUILD="$1/build" "$1/build/bench/decide-bench" "$1/build/vnumad" >&2
}
ir_of() { # BIN TOPO DOMAINS: one decide() in instructions (2 passes minus 1)
    local i1 i2
    i1=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" --synthetic "$2" --domains "$3" --cells 4 --runs 1 2>&1 | sed -n 's/.*Collected : //p')
    i2=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" --synthetic "$2" --domains "$3" --cells 4 --runs 2 2>&1 | sed -n 's/.*Collected : //p')
    echo $((i2 - i1))
}
dirs=("$PWD")
[ -n "$BEFORE" ] && dirs=("$BEFORE" "$PWD")
for d in "${dirs[@]}"; do build_of "$d"; done

echo "| build | test | result |"
echo "|---|---|---|"
for d in "${dirs[@]}"; do
    name=$([ "$d" = "$PWD" ] && echo this || echo before)
    B=$d/build/bench/decide-bench
    for nd in 100 1000; do
        topo="pack:2 numa:4 l3:3 core:8 pu:2"
        line=$("$B" --synthetic "$topo" --domains "$nd" --cells 4 --runs "$RUNS")
        get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        printf '| %s | decide(), `%s`, %s domains | median %.2f ms, %s instructions, peak RSS %.1f MiB |\n' "$name" "$topo" "$nd" \
            "$(echo "$(get median_us) / 1000" | bc -l)" "$(ir_of "$B" "$topo" "$nd")" "$(echo "$(get maxrss_kib) / 1024" | bc -l)"
    done
    for topo in "pack:8 numa:2 core:64 pu:2" "pack:8 numa:8 core:64 pu:2" \
        "pack:8 numa:16 core:32 pu:2" "pack:32 numa:32 core:4 pu:2"; do
        line=$("$B" --synthetic "$topo" --domains 100 --cells 4 --runs 3 2>&1) || true
        get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        if [ -n "$(get pus)" ]; then
            res="loads: $(get pus) PUs, $(get nodes) nodes; decide() of 100 domains $(get median_us) us, peak RSS $(echo "$(get maxrss_kib) / 1024" | bc) MiB"
        else
            res="refused: $(echo "$line" | head -1 | cut -c1-120)"
        fi
        printf '| %s | `%s` | %s |\n' "$name" "$topo" "$res"
    done
    for topo in "numa:2 pu:100000" "pack:64 numa:16 core:64 pu:2"; do
        t0=$(date +%s.%N)
        rc=0
        timeout 60 "$d/build/vnumad" --advise --synthetic "$topo" --snapshot "$SNAP" >/dev/null 2>&1 || rc=$?
        t1=$(date +%s.%N)
        printf '| %s | `vnumad --advise --synthetic "%s"` | %s after %.2f s |\n' "$name" "$topo" \
            "$([ $rc = 124 ] && echo "still running, killed" || echo "exit $rc")" "$(echo "$t1 - $t0" | bc -l)"
    done
done
