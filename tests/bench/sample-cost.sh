#!/bin/bash
# Sampling cost per guest cell, the mmap_lock hold it causes, and (with --ground) how exact
# a strided sample is. A child process stands for QEMU: one anonymous region, fully touched.
#   1. time per pass over cells of 256 MiB, 1 GiB and 4 GiB (and 1 GiB of huge pages):
#      windowed move_pages status queries of every page (the daemon's way, several windows),
#      one unwindowed query, a whole /proc/PID/numa_maps read, strided queries, and
#      host/sample.c's sample_count_pages() as built (median of RUNS)
#   2. page-fault latency in the target while a sampler runs continuously (1 GiB region,
#      2 threads mmap 1 MiB / write every page / munmap; ROUNDS x 3 s per configuration,
#      configurations interleaved)
#   3. --ground: boots the 4-node proving ground (about 1.5 min): the error of sampled
#      estimates against the exact per-node fractions of a mixed and a page-random
#      placement, every offset / 64 seeds, per sample count; and part 2 again under the
#      ground's Debian 6.1 kernel
# Prints Markdown tables. Usage: tests/bench/sample-cost.sh [--ground] [RUNS] [ROUNDS]
# env: BUILD=build SIZES="256 1024 4096" THP_SIZES=1024 (cells backed by transparent huge pages,
#      as QEMU madvises guest RAM) GROUND_SIZES=1024+2048 GROUND_LAYOUTS=mixed+random
#      HOST=0 (only the ground part)
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
GROUND=0 RUNS=5 ROUNDS=3
. tests/bench/args.sh
bench_args --ground=GROUND:flag RUNS:int ROUNDS:int -- "$@"
SIZES=${SIZES:-256 1024 4096}
THP_SIZES=${THP_SIZES-1024}
[ "$(id -u)" = 0 ] || { echo "needs root (move_pages of another process, /proc/PID/numa_maps)"; exit 77; }
make -s BUILD="$BUILD" "$BUILD/bench/sample-bench" "$BUILD/bench/migrate-bench" >&2 || exit 1
B=$BUILD/bench/sample-bench
if [ "${HOST:-1}" = 1 ]; then
echo "## 1. time per sampling pass (host: $(nproc) CPUs, $(ls -d /sys/devices/system/node/node* | wc -l) node(s), kernel $(uname -r), median of $RUNS)"
echo
echo "| cell | method | window (pages/call) | stride | pages queried | move_pages calls | median ms | min ms | ns per queried page |"
echo "|---|---|---|---|---|---|---|---|---|"
for s in $SIZES; do
    nice "$B" cost --size-mib "$s" --runs "$RUNS" || exit 1
done
for s in $THP_SIZES; do
    nice "$B" cost --size-mib "$s" --runs "$RUNS" --thp || exit 1
done
echo
echo "## 2. fault latency in the target while sampling runs (1 GiB cell, 2 fault threads, $ROUNDS x 3 s per row)"
echo
echo "| sampler (looping over the whole 1 GiB cell) | faults/s | fault p50 µs | p99 µs | p99.9 µs | max µs | mmap/munmap p50 µs | p99 µs | max µs | sampler passes | ms per pass (mean / max) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
"$B" lock --size-mib 1024 --threads 2 --ms 3000 --rounds "$ROUNDS" || exit 1
fi
if [ $GROUND = 1 ]; then
    . tests/bench/ground-lib.sh
    ground_bench accuracy 1536M 900 sizes="${GROUND_SIZES:-1024+2048}" \
        layouts="${GROUND_LAYOUTS:-mixed+random}" random_mib=1024 lock_mib=256 || exit 1
    echo
    echo "## 3. accuracy of strided estimates (proving ground, mixed placement)"
    echo
    echo "Error = max over nodes of |estimated - exact| share of the cell's present pages, in percentage points."
    echo
    grep '^# ' "$GROUND_OUT" | grep -v '^# lock' | sed 's/^# /    /'
    echo
    echo "| cell | sample cap N | stride = ceil(pages/N) | systematic (offset + i*stride): max error over all offsets | mean | odd stride (stride\|1): max | jittered (one random page per stride block): max over 64 seeds | p95 |"
    echo "|---|---|---|---|---|---|---|---|"
    grep '^| [0-9]* MiB [a-z]* |' "$GROUND_OUT"
    echo
    echo "## 2b. fault latency under the ground's kernel (TCG, 256 MiB cell, 1 x 2 s per row; indicative)"
    echo
    echo "| sampler | faults/s | fault p50 µs | p99 µs | p99.9 µs | max µs | mmap/munmap p50 µs | p99 µs | max µs | sampler passes | ms per pass (mean / max) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    sed -n '/^# lock/,$p' "$GROUND_OUT" | grep '^| [a-z/]'
fi
