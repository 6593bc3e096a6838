#!/bin/bash
# Migration throughput and the rate limit's accuracy, in the 4-node proving ground (TCG: the
# absolute numbers are small, compare ratios). Boots one ground (about 4-6 min) that runs
# build/bench/migrate-bench (tests/bench/migrate-bench.c, linked with host/act.c and
# host/numa_ops.c):
#   batch: memcpy MiB/s between buffers on node 0 and node 2 (the physical limit), then per
#          move batch size (64..16384 pages) the MiB/s of the daemon's moves (act_apply()
#          orders them, the mover's windows: status query + move) and of bare move_pages
#          moving a SIZE MiB region 0 -> 2 and back
#   rate:  the region moved there and back PASSES times by a mover limited to 16, 64, 128, 256
#          and 1024 MiB/s (one token bucket, a second of burst); achieved vs set
#   parallel: the SIZE MiB region as 4 cells of one domain ordered by one act_apply() from a
#          mover of 1, 2, 4 threads (and again with the region MADV_HUGEPAGE: AnonHugePages after;
#          and again of 2 MiB hugetlb pages, SIZE/2 + 16 reserved on both nodes)
# Prints Markdown tables. Usage: tests/bench/migrate.sh [SIZE_MIB] [RATE_SIZE_MIB] [PASSES]
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
SIZE=256 RATE_SIZE=512 PASSES=2
. tests/bench/args.sh
bench_args SIZE:int RATE_SIZE:int PASSES:int -- "$@"
[ "$(id -u)" = 0 ] || { echo "needs root (the ground runs this machine's root filesystem)"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "qemu-system-x86_64 is not installed"; exit 77; }
make -s BUILD="$BUILD" "$BUILD/bench/sample-bench" "$BUILD/bench/migrate-bench" >&2 || exit 1
. tests/bench/ground-lib.sh
ground_bench migrate 1536M 900 size="$SIZE" rate_size="$RATE_SIZE" from=0 to=2 passes="$PASSES" || exit 1
sed -n '1,/^# batch/p' "$GROUND_OUT" | grep '^# ' | grep -v '^# batch' | sed 's/^# /    /'
echo
echo "## move batch size vs throughput ($SIZE MiB, node 0 -> node 2 and back)"
echo
echo "| batch (pages per move_pages) | act_apply() MiB/s (there, back) | bare move_pages MiB/s (there, back) | act_apply / memcpy | bare / memcpy | moved there+back |"
echo "|---|---|---|---|---|---|"
sed -n '/^# batch/,/^# rate/p' "$GROUND_OUT" | grep '^|'
echo
echo "## rate limit ($RATE_SIZE MiB region moved there and back $PASSES times, window 4096)"
echo
echo "| configured MiB/s | moves | MiB moved | seconds | achieved MiB/s after each move's first second | achieved / configured |"
echo "|---|---|---|---|---|---|"
sed -n '/^# rate/,/^# parallel/p' "$GROUND_OUT" | grep '^|'
for part in parallel parallel-thp parallel-hugetlb; do
    echo
    echo "## cells moving at once ($part: $SIZE MiB as 4 cells of one domain, one act_apply() each way, a mover of 1, 2, 4 threads)"
    echo
    # the part's lines: from its "# PART" line to the next part's (or the end)
    awk -v p="# $part" '$0 == p {on = 1; next} /^# parallel/ && on {exit} on' "$GROUND_OUT" >"$RESULTS/$part.rows"
    grep '^# [mrn]' "$RESULTS/$part.rows" | sed 's/^# /    /'
    echo
    echo "| move_threads | act_apply() MiB/s (there, back) | / memcpy | / one thread | AnonHugePages kB before -> after |"
    echo "|---|---|---|---|---|"
    grep '^|' "$RESULTS/$part.rows"
done
