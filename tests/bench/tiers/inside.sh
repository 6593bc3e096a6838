#!/bin/bash
# Runs INSIDE the proving ground (booted by tests/bench/tiers.sh with a tier node): the tier node
# online as system RAM in a lower memory tier, libvirt up, then inside.py's runs.
# Progress lines go to /results/progress.out (streamed by tiers.sh), data to /results/tiers.json.
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
OUT=$R/progress.out
: >"$OUT"
say() { echo "@ $*" >>"$OUT"; gt "$*"; }
say "ground up ($(cut -d' ' -f1 /proc/uptime) s uptime); kernel.numa_balancing=0 until its own run"
ground_numa_balancing 0
if ! node=$(ground_tier_online); then
    say "FAILED: the tier node did not come online"
    exit 1
fi
say "tier node $node online: $(numactl -H | grep -E "^node $node (size|cpus)" | tr '\n' ' ')"
say "starting virtlogd and libvirtd (about 10-15 s)"
if ! ground_libvirt_up; then
    say "FAILED: libvirtd did not come up"
    exit 1
fi
say "libvirt ready"
exec python3 -u inside.py "tier=$node" "$@"
