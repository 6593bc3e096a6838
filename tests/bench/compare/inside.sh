#!/bin/bash
# Runs INSIDE the proving ground (booted by tests/bench/compare.sh through vm-images/run-ground.sh):
# brings up libvirt, then inside.py runs the same misplaced start under each balancer in turn.
# Progress lines go to /results/progress.out (streamed by compare.sh), data to /results/compare.json.
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
OUT=$R/progress.out
: >"$OUT"
say() { echo "@ $*" >>"$OUT"; gt "$*"; }
say "ground up ($(cut -d' ' -f1 /proc/uptime) s uptime); kernel.numa_balancing=0 until its own run"
ground_numa_balancing 0
say "starting virtlogd and libvirtd (about 10-15 s)"
if ! ground_libvirt_up; then
    say "FAILED: libvirtd did not come up"
    exit 1
fi
say "libvirt ready"
exec python3 -u inside.py "$@"
