#!/bin/bash
# start_services: starts virtlogd and libvirtd when they are not running (this machine
# has no systemd: the tests start them by hand, as an operator would with `-d`) and
# waits until virsh answers on qemu:///system (30 s). 0 when it answers; otherwise 1 with
# the reason on stdout. Sourced by tests/run.sh (before any test), tests/e2e/lib.sh and
# tests/cli/deb.sh, so a test run alone starts what it needs too.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    echo "tests/services.sh: sourced by the test scripts, not a test"
    exit 0
fi
start_services() {
    [ "$(id -u)" = 0 ] || { echo "needs root to start libvirtd"; return 1; }
    command -v virsh >/dev/null && command -v libvirtd >/dev/null ||
        { echo "libvirt (virsh, libvirtd) is not installed"; return 1; }
    mkdir -p /run/libvirt /var/log/libvirt/qemu
    pgrep -x virtlogd >/dev/null || virtlogd -d || { echo "cannot start virtlogd"; return 1; }
    pgrep -x libvirtd >/dev/null || libvirtd -d || { echo "cannot start libvirtd"; return 1; }
    local i
    for i in $(seq 150); do
        virsh -c qemu:///system version >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "libvirtd does not answer on qemu:///system within 30 s"
    return 1
}
