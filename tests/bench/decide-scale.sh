#!/bin/bash
# The decide stage at scale: time per pass (median of many), instructions per pass
# (valgrind --tool=callgrind, repeatable on a shared machine), and peak memory, for synthetic
# hosts from 2 to 8 nodes and snapshots from 10 to 1000 domains (4 cells, 8 vCPUs each).
# Prints a Markdown table. Usage: tests/bench/decide-scale.sh [RUNS]
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUNS=51
. tests/bench/args.sh
bench_args RUNS:int -- "$@"
make -s BUILD="$BUILD" "$BUILD/bench/decide-bench" >&2
B=$BUILD/bench/decide-bench
echo "| host (hwloc synthetic) | nodes | PUs | domains | cells | median ms | min..max ms | instructions (callgrind) | instructions per cell | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for topo in "pack:2 numa:1 l3:1 core:16 pu:2" "pack:2 numa:2 l3:1 core:16 pu:2" "pack:2 numa:4 l3:3 core:8 pu:2"; do
    for nd in 10 100 300 1000; do
        line=$("$B" --synthetic "$topo" --domains "$nd" --cells 4 --runs "$RUNS")
        get() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        ir=""
        if command -v valgrind >/dev/null; then
            # one decide() under callgrind, minus the cost of building the snapshot (--runs 0 is
            # not allowed; run 1 and 2 passes and take the difference)
            i1=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" --synthetic "$topo" --domains "$nd" --cells 4 --runs 1 2>&1 | sed -n 's/.*Collected : //p')
            i2=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" --synthetic "$topo" --domains "$nd" --cells 4 --runs 2 2>&1 | sed -n 's/.*Collected : //p')
            ir=$((i2 - i1))
        fi
        cells=$(get cells)
        printf '| `%s` | %s | %s | %s | %s | %.2f | %.2f..%.2f | %s | %s | %.1f |\n' "$topo" "$(get nodes)" "$(get pus)" "$nd" "$cells" \
            "$(echo "$(get median_us) / 1000" | bc -l)" "$(echo "$(get min_us) / 1000" | bc -l)" "$(echo "$(get max_us) / 1000" | bc -l)" \
            "${ir:--}" "$([ -n "$ir" ] && echo $((ir / cells)) || echo -)" "$(echo "$(get maxrss_kib) / 1024" | bc -l)"
    done
done
