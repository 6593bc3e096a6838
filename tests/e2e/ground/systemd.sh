#!/bin/bash
# Runs INSIDE the proving ground booted with systemd as PID 1 (tests/e2e/ground-systemd.sh,
# run-ground.sh --init systemd), as ground-script.service: brings up Debian's libvirtd the way
# an operator's host runs it (libvirtd.service, socket-activated virtlogd, systemd-machined),
# then runs systemd.py, which installs the vnuma package and writes one JSON file per check
# into /results. Arguments: KEY=VALUE (debs=DIR with the packages; the ground's topology).
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
R=${GROUND_RESULTS:-/results}
rm -f "$R"/scenario-*.json
gt "systemd suite: PID 1 is $(cat /proc/1/comm), system $(systemctl is-system-running)"
ground_numa_balancing 0
if ! ground_libvirt_systemd; then
    echo '{"name":"libvirt","pass":false,"evidence":"libvirtd.service did not come up"}' >"$R/scenario-00-libvirt.json"
    systemctl status libvirtd.service --no-pager 2>&1 | tail -n 20
    exit 1
fi
gt "libvirtd.service active: $(systemctl show -p MainPID --value libvirtd.service)"
exec python3 -u systemd.py "$@"
