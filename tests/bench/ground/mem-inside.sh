#!/bin/bash
# Runs INSIDE the proving ground (booted by tests/bench/sample-cost.sh --ground or
# tests/bench/migrate.sh through vm-images/run-ground.sh). Runs the memory benchmarks that
# need several host nodes and writes their Markdown rows to /results/PART.md.
#   args: part=accuracy sizes=1024+2048 layouts=mixed+random random_mib=1024 [lock_mib=256] | part=migrate size=256 rate_size=512 from=0 to=2 passes=2
#         bin=DIR (where sample-bench and migrate-bench were built)
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
part="" layouts=mixed random_mib=1024 sizes=1024 size=256 rate_size=512 from=0 to=2 passes=2 bin="" lock_mib=256
for kv in "$@"; do
    case "$kv" in
    part=*) part=${kv#*=} ;; sizes=*) sizes=${kv#*=} ;; size=*) size=${kv#*=} ;;
    rate_size=*) rate_size=${kv#*=} ;; from=*) from=${kv#*=} ;; to=*) to=${kv#*=} ;;
    passes=*) passes=${kv#*=} ;; layouts=*) layouts=${kv#*=} ;; random_mib=*) random_mib=${kv#*=} ;; bin=*) bin=${kv#*=} ;; lock_mib=*) lock_mib=${kv#*=} ;;
    *) echo "mem-inside: unknown $kv"; exit 2 ;;
    esac
done
[ -x "$bin/sample-bench" ] && [ -x "$bin/migrate-bench" ] || { echo "mem-inside: no benches in '$bin'"; exit 2; }
# automatic NUMA balancing would move pages itself and make status queries answer -EFAULT
ground_numa_balancing 0
OUT=$R/$part.md
: >"$OUT"
gt "mem-inside $part: $(nproc) CPUs, $(ls -d /sys/devices/system/node/node* | wc -l) nodes, kernel $(uname -r)"
{ echo "# ground: $(ls -d /sys/devices/system/node/node* | wc -l) nodes, $(nproc) CPUs, kernel $(uname -r)"
  for n in /sys/devices/system/node/node*; do echo "# $(basename "$n") MemTotal $(awk '/MemTotal/ {print $4}' "$n/meminfo") kB"; done; } >>"$OUT"
rc=0
case "$part" in
accuracy)
    for l in ${layouts//+/ }; do
        if [ "$l" = random ]; then ss=$random_mib; else ss=${sizes//+/ }; fi
        for s in $ss; do
            gt "accuracy $l $s MiB"
            "$bin/sample-bench" accuracy --layout "$l" --size-mib "$s" --seed 1 >>"$OUT" 2>&1 || rc=1
        done
    done
    gt "lock (6.1 kernel) $lock_mib MiB"
    echo "# lock" >>"$OUT"
    "$bin/sample-bench" lock --size-mib "$lock_mib" --threads 2 --ms 2000 --rounds 1 >>"$OUT" 2>&1 || rc=1
    ;;
migrate)
    gt "migrate batch $size MiB $from -> $to"
    echo "# batch" >>"$OUT"
    "$bin/migrate-bench" batch --size-mib "$size" --from "$from" --to "$to" >>"$OUT" 2>&1 || rc=1
    gt "migrate rate $rate_size MiB"
    echo "# rate" >>"$OUT"
    "$bin/migrate-bench" rate --size-mib "$rate_size" --from "$from" --to "$to" --passes "$passes" >>"$OUT" 2>&1 || rc=1
    gt "migrate parallel $size MiB as 4 cells, 1, 2, 4 movers"
    echo "# parallel" >>"$OUT"
    "$bin/migrate-bench" parallel --size-mib "$size" --from "$from" --to "$to" --cells 4 --threads 1,2,4 >>"$OUT" 2>&1 || rc=1
    echo "# parallel-thp" >>"$OUT"
    "$bin/migrate-bench" parallel --size-mib "$size" --from "$from" --to "$to" --cells 4 --threads 1,2,4 --thp >>"$OUT" 2>&1 || rc=1
    # 2 MiB hugetlb pages: the region's and the mover's 16 MiB of slack, on both nodes
    hp=$((size / 2 + 16))
    for n in "$from" "$to"; do echo "$hp" >"/sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages"; done
    echo "# parallel-hugetlb" >>"$OUT"
    for n in "$from" "$to"; do
        echo "# node$n: $(cat "/sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages") huge pages of 2 MiB reserved" >>"$OUT"
    done
    "$bin/migrate-bench" parallel --size-mib "$size" --from "$from" --to "$to" --cells 4 --threads 1,2,4 --hugetlb >>"$OUT" 2>&1 || rc=1
    for n in "$from" "$to"; do echo 0 >"/sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages"; done
    ;;
*) echo "mem-inside: part=accuracy|migrate"; exit 2 ;;
esac
gt "mem-inside $part done rc=$rc"
exit $rc
