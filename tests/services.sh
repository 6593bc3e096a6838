#!/bin/bash
# start_services: mounts hugetlbfs on /dev/hugepages when none is mounted (systemd does on an
# operator's host), starts virtlogd and libvirtd when they are not running (this machine
# has no systemd: the tests start them by hand, as an operator would with `-d`) and
# waits until virsh answers on qemu:///system (120 s: only "it never answered"). 0 when it
# answers; otherwise 1 with the reason on stdout. Daemons are started with fd 200 (the test lock) closed.
# test_lock: takes /run/lock/vnuma-tests.lock on fd 200 (waits up to 30 min): the tests
# that run a vnumad against the system libvirtd take it, so two runs on one machine (two
# checkouts, a bench beside a test) wait for each other instead of balancing each other's
# domains. Released when the script exits. Sourced by tests/run.sh (before any test), tests/e2e/lib.sh and
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
    # hugetlbfs where systemd's dev-hugepages.mount puts it on an operator's host: libvirtd
    # looks for hugetlbfs mounts when it starts
    if ! grep -q ' hugetlbfs ' /proc/mounts; then
        mkdir -p /dev/hugepages && mount -t hugetlbfs hugetlbfs /dev/hugepages ||
            { echo "cannot mount hugetlbfs on /dev/hugepages"; return 1; }
    fi
    pgrep -x virtlogd >/dev/null || virtlogd -d 200>&- || { echo "cannot start virtlogd"; return 1; }
    pgrep -x libvirtd >/dev/null || libvirtd -d 200>&- || { echo "cannot start libvirtd"; return 1; }
    local i
    for i in $(seq 600); do
        virsh -c qemu:///system version >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "libvirtd does not answer on qemu:///system within 120 s"
    return 1
}
test_lock() {
    mkdir -p /run/lock
    exec 200>/run/lock/vnuma-tests.lock
    flock -n 200 && return 0
    echo "# waiting for another vnuma test run (lock /run/lock/vnuma-tests.lock)"
    flock -w 1800 200
}
