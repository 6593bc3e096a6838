#!/bin/bash
# Multi-node scenarios of issue 5 in the proving ground (vm-images/): boots ONE ground
# (4 nodes x 4 CPUs x 1 GiB, 2 sockets, 2 L3 caches per node so imb_numa_nr = 2), runs
# tests/e2e/ground/scenarios.sh inside, and turns the JSON files it writes into ok/not ok lines.
# 77 only when the ground cannot be booted here at all (no qemu-system-x86_64, no kernel and no
# root to install one); a boot that fails or hangs is a failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/lib/check.sh  # not tests/e2e/lib.sh: nothing runs on this host's libvirtd

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed"
if ! ls /boot/vmlinuz-* >/dev/null 2>&1 && [ "$(id -u)" != 0 ]; then
    skip_all "no kernel in /boot and not root to install linux-image-amd64"
fi
[ "$(id -u)" = 0 ] || skip_all "needs root (the ground runs this machine's root filesystem, libvirtd as root)"
make -s all tests >/dev/null ||
    { ok 1 "make builds vnumad, vnumactl and tests/longterm-pin"; finish; }
GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
ISOLATED_CPU=3 # layout.py's HOUSEKEEPING/ISOLATED: CPU 0 for the host, CPU 3 isolated
RESULTS=${RESULTS:-$GROUND_CACHE/results-e2e${GROUND_SUITE:+-$GROUND_SUITE}}
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null
ok $? "the ground's boot files build (vm-images/build-ground.sh)"

NODES=4 CPN=2 MEM=1G  # 8 vCPUs: 16 under TCG on a 2-core host did not boot reliably
# GROUND_SUITE=layout: the operator's layout of issue 13 alone, in a ground booted with CPU 3
# isolated (tests/e2e/ground/layout.py); make check runs it in the tiers boot below
case ${GROUND_SUITE:-scenarios} in
layout) run=layout append="isolcpus=$ISOLATED_CPU" expect="15-operator-layout" ;;
# GROUND_SUITE=scale (tests/bench/ground-scale.sh): 20 domains, one misplaced (issue 14)
scale) run=scale append="" expect="16-scale-20" ;;
# GROUND_SUITE=tiers (tests/e2e/ground-tiers.sh): a ground with a tier node (a CPU-less NVDIMM
# onlined as a lower memory tier: run-ground.sh --tier-node), cells placed on two tiers (issue 31);
# then, in the same boot, placement that travels with live migration between two libvirtds
# (tests/e2e/ground/migrate.py, issue 32), and last the operator's layout (layout.py, issue 13):
# the boot isolates CPU 3 for it (vnumad never pins a vCPU onto it, in any of the three), one
# boot fewer than a ground of its own (~35 s: the boot, libvirtd and the power-off)
tiers)
    # (scenario 30 alone: 31 and 32 are GROUND_SUITE=migrate's, for the benchmark; what they
    # check runs on the host in e2e/migrate and e2e/migrate-hook)
    run=tiers+migrate+layout append="isolcpus=$ISOLATED_CPU" tier_node=1G long=1800 extra_run="migrate_unhooked=0"
    expect="27-tiers-cold-first 28-tiers-warm-stays 29-tiers-hugetlb 30-migrate-placed 15-operator-layout"
    ;;
# GROUND_SUITE=migrate: the migration scenarios alone (30-32), in a ground of 4 nodes
migrate) run=migrate append="" expect="30-migrate-placed 31-migrate-unhooked 32-migrate-hook-down" long=1200 ;;
# GROUND_SUITE=systemd (tests/e2e/ground-systemd.sh): systemd as PID 1, the vnuma package the
# suite built installed and run as a service beside libvirtd.service, then beside a
# socket-activated virtqemud (issue 15)
systemd)
    run=systemd append="" expect="17-systemd-install 18-systemd-reload 19-systemd-balance 20-systemd-journal 21-systemd-libvirtd 22-systemd-sigkill 25-systemd-restart 26-systemd-upgrade 23-systemd-stop 24-systemd-modular"
    debs=$PWD/$BUILD/deb
    took=$(tests/lib/build-deb.sh "$debs")
    ok $? "the Debian packages are built (tests/lib/build-deb.sh: ${took:-failed}$(case $took in [0-9]*) echo " s" ;; esac))"
    vqd=$PWD/$BUILD/virtqemud
    took=$(tests/lib/build-virtqemud.sh "$vqd")
    ok $? "virtqemud is built from Debian's libvirt source package (tests/lib/build-virtqemud.sh: ${took:-failed}$(case $took in [0-9]*) echo " s" ;; esac))"
    ;;
# GROUND_SUITE=stagger: busy domains that opt in one after another (tests/e2e/ground/stagger.py,
# issue 56; STAGGER_ARGS="gap=3 order=A:B:C:I")
stagger) run=stagger append="" expect="40-stagger" extra_run="${STAGGER_ARGS:-}" ;;
*) run=scenarios append="" ;;
esac
timeout=${GROUND_TIMEOUT:-${long:-900}}
# the in-ground runner dumps every thread's Python traceback to the console 90 s before the
# kill (scenarios.py watchdog()); run-ground.sh prints the console's tail with the vCPUs' state
extra_args="watchdog=$((timeout - 90))"
start=$SECONDS
if [ "$run" = systemd ]; then
    script=tests/e2e/ground/systemd.sh init=systemd extra="debs=$debs virtqemud=$vqd/root"
else
    script=tests/e2e/ground/scenarios.sh init=busybox extra="run=$run ${extra_run:-}"
fi
NODES=$NODES CPUS_PER_NODE=$CPN MEM_PER_NODE=$MEM LLCS_PER_NODE=2 SOCKETS=2 EXTRA_APPEND="$append" TIER_NODE=${tier_node:-} \
    TIMEOUT=$timeout GROUND_CACHE=$GROUND_CACHE RESULTS=$RESULTS GROUND_INIT=$init \
    vm-images/run-ground.sh $script nodes=$NODES cpn=$CPN mem_mib=1024 numa_balancing=${GROUND_NUMA_BALANCING:-0} $extra $extra_args \
    >"$RESULTS/run-ground.out" 2>&1
rc=$?
wall=$((SECONDS - start))
cat "$RESULTS/run-ground.out" | sed 's/^/# /'
case $rc in
124) ok 1 "the ground powered off within its timeout (it hung and was killed after ${wall}s)" ;;
99) ok 1 "the ground ran the scenario script to its end (no exit status: panic or crash; console $RESULTS/console.log)" ;;
*)
    grep -aq 'GROUND: script rc=' "$RESULTS/console.log" 2>/dev/null
    ok $? "the ground booted, ran the scenarios and powered off (${wall}s wall, script rc $rc)"
    ;;
esac
boot=$(grep -ao 'GROUND: rootfs ready uptime=[0-9.]*' "$RESULTS/console.log" | sed 's/.*=//')
echo "# timings: ground rootfs ready at ${boot:-?}s uptime; $(cat "$RESULTS/timings-libvirt.json" 2>/dev/null); $([ -f "$RESULTS/timings.json" ] && tr -d '\n ' <"$RESULTS/timings.json")"

[ "$run" = scenarios ] && expect="00-ground 01-misplaced-start 02-allowed-imbalance 03-cpuset-skip 04-untouched 05-free-memory-guard 06-stability 07-restore 08-kill-vnumad-mid-move 09-kill-qemu-mid-move 10-hugetlbfs-2m 11-memfd-shared 12-locked-memory 13-longterm-pin 14-operator-pins"
for e in $expect; do
    f=$(ls "$RESULTS"/scenario-"$e"*.json 2>/dev/null | head -n 1)
    if [ -z "$f" ]; then ok 1 "scenario $e wrote its result"; continue; fi
    python3 - "$f" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"# {d['name']}: {json.dumps(d.get('numbers'), default=str)[:1500]}")
sys.exit(0 if d.get("pass") is True else 1)
PY
    r=$?
    [ $r = 0 ] || python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('# evidence:', json.dumps(d.get('evidence'), default=str)[:3000])" "$f"
    ok $r "scenario $e ($(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['name'])" "$f"))"
done
for f in "$RESULTS"/scenario-99-*.json; do
    [ -f "$f" ] || continue
    ok 1 "the in-guest runner did not crash: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['evidence'][-1500:])" "$f" | sed 's/^/# /')"
done
echo "# results: $RESULTS (console.log, vnumad.log, vnumad-state/journal.jsonl, scenario-*.json)"
finish
