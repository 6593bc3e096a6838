#!/bin/bash
# What an idle pass costs in the proving ground, for one or more vnumad builds on the same
# converged domains (issue 8: "fix what the numbers show"). Boots the ground (4 nodes x 2
# CPUs x 1 GiB, TCG), starts DOMAINS domains of 2 cells x CELL_MIB MiB, balances them once
# with the first build, then runs each build for SECONDS s on the settled domains
# (restore_on_exit = no, so each starts from the same placement) and prints per build:
# passes, vnumad CPU seconds (utime+stime), CPU ms per pass, mean pass ms, and the
# move_pages status queries issued. Under TCG every number is inflated alike: compare ratios.
#   tests/bench/idle-cost.sh [NAME=PATH/TO/vnumad ...]     (default: current=build/vnumad)
# Env: DOMAINS (2), CELL_MIB (256), SECONDS_EACH (40).
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/bench/args.sh
bench_args ... -- "$@"
set -- "${BENCH_REST[@]}"
[ $# -gt 0 ] || set -- "current=$PWD/$BUILD/vnumad"
bins=""
for a in "$@"; do
    name=${a%%=*} path=$(realpath "${a#*=}")
    [ -x "$path" ] || { echo "idle-cost: $path is not an executable vnumad" >&2; exit 2; }
    case "$path" in "$PWD"/*) ;; *) echo "idle-cost: $path must be inside the repository (shared into the ground)" >&2; exit 2 ;; esac
    bins="$bins${bins:+;}$name:$path"
done
GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
RESULTS=$GROUND_CACHE/results-idle-cost
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null || { echo "idle-cost: build-ground.sh failed" >&2; exit 1; }
NODES=4 CPUS_PER_NODE=2 MEM_PER_NODE=1G SOCKETS=2 TIMEOUT=${TIMEOUT:-900} GROUND_CACHE=$GROUND_CACHE \
    RESULTS=$RESULTS vm-images/run-ground.sh tests/bench/idle/inside.sh "bins=${bins// /}" \
    domains=${DOMAINS:-2} cell_mib=${CELL_MIB:-256} seconds=${SECONDS_EACH:-40} \
    >"$RESULTS/run-ground.out" 2>&1
rc=$?
[ -s "$RESULTS/idle-cost.txt" ] || { sed 's/^/# /' "$RESULTS/run-ground.out"; tail -n 30 "$RESULTS/console.log"; exit 1; }
cat "$RESULTS/idle-cost.txt"
exit $rc
