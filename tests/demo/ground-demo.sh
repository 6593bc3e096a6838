#!/bin/bash
# Runs INSIDE the proving ground (booted by tests/demo.sh through vm-images/run-ground.sh):
# brings up libvirt, then ground-demo.py starts two misplaced domains and runs vnumad on them.
# Everything the demo shows goes to /results/demo.out, which tests/demo.sh streams while the
# ground runs; lines starting with "@ " are progress lines (the host adds its clock to them).
set -u
cd "$(dirname "$0")" || exit 1
. ../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
OUT=$R/demo.out
: >"$OUT"
say() { echo "@ $*" >>"$OUT"; gt "$*"; }
up=$(cut -d' ' -f1 /proc/uptime)
say "ground up after ${up%.*} s of its own uptime: $(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes ($(for n in /sys/devices/system/node/node*; do printf '%s:CPUs %s ' "${n##*/}" "$(cat "$n/cpulist")"; done))"
# the kernel's automatic NUMA balancing off: only vnumad moves memory in this demo
ground_numa_balancing 0
say "starting virtlogd and libvirtd inside the ground (about 10-15 s)"
t0=$(cut -d' ' -f1 /proc/uptime)
if ! ground_libvirt_up; then
    say "FAILED: libvirtd did not come up inside the ground"
    exit 1
fi
say "libvirt ready ($(echo "$(cut -d' ' -f1 /proc/uptime) - $t0" | bc) s)"
exec python3 -u ground-demo.py "$@"
