#!/bin/bash
# Runs INSIDE the proving ground for tests/bench/idle-cost.sh: libvirt up, then idle.py.
set -u
cd "$(dirname "$0")" || exit 1
. ../../../vm-images/ground/lib.sh
ground_numa_balancing 0
ground_libvirt_up || { echo "libvirtd did not come up" >"${GROUND_RESULTS:-/results}/idle-cost.txt"; exit 1; }
exec python3 -u idle.py "$@"
