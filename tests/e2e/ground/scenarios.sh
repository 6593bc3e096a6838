#!/bin/bash
# Runs INSIDE the proving ground (booted by tests/e2e/ground.sh through vm-images/run-ground.sh):
# brings up libvirt, then runs every scenario of issue 5 in this one boot (scenarios.py), writing
# one JSON file per scenario into /results. Arguments: KEY=VALUE of the ground's topology
# (nodes=, cpn=, mem_mib=), passed on to the checks.
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
rm -f "$R"/scenario-*.json "$R"/timings.json
gt "scenarios start"
# the kernel's automatic NUMA balancing off (GROUND_NUMA_BALANCING=1 keeps it; see lib.sh)
nb=${numa_balancing:-0}
for a in "$@"; do case "$a" in numa_balancing=*) nb=${a#*=} ;; esac; done
ground_numa_balancing "$nb"
gt "kernel.numa_balancing=$(cat /proc/sys/kernel/numa_balancing)"
t0=$(cut -d' ' -f1 /proc/uptime)
if ! ground_libvirt_up; then
    echo '{"name":"libvirt","pass":false,"evidence":"libvirtd did not come up"}' >"$R/scenario-00-libvirt.json"
    exit 1
fi
t1=$(cut -d' ' -f1 /proc/uptime)
gt "libvirt ready ($(echo "$t1 - $t0" | bc) s)"
echo "{\"uptime_scenarios_start\": $t0, \"uptime_libvirt_ready\": $t1}" >"$R/timings-libvirt.json"
# run=NAME[+NAME...]: tests/e2e/ground/NAME.py one after the other in this boot (scenarios.py
# by default); the status is the first failure's
runs=scenarios
for a in "$@"; do case "$a" in run=*) runs=${a#run=} ;; esac; done
rc=0
for py in ${runs//+/ }; do
    python3 -u "$py.py" "$@" || { r=$?; [ $rc = 0 ] && rc=$r; }
done
exit $rc
