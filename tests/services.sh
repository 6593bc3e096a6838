#!/bin/bash
# start_services: mounts hugetlbfs on /dev/hugepages when none is mounted (systemd does on an
# operator's host), starts virtlogd and libvirtd when they are not running (this machine
# has no systemd: the tests start them by hand, as an operator would with `-d`; those of this
# mount namespace: a test on a host of its own, VN_HOST, starts its own) and
# waits until virsh answers on qemu:///system (120 s: only "it never answered"). 0 when it
# answers; otherwise 1 with the reason on stdout. Daemons are started with fd 200 (the test lock) closed.
# test_lock: takes /run/lock/vnuma-tests.lock on fd 200 (waits up to 30 min; not on a host of
# the test's own, VN_HOST): the tests that run a vnumad against the system libvirtd take it, so two runs on one machine (two
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
    [ -n "$(own_pids virtlogd)" ] || virtlogd -d ${VN_HOST:+-p "$VN_HOST/virtlogd.pid"} 200>&- ||
        { echo "cannot start virtlogd"; return 1; }
    [ -n "$(own_pids libvirtd)" ] || libvirtd_start || { echo "cannot start libvirtd"; return 1; }
    local i
    for i in $(seq 600); do
        virsh -c qemu:///system version >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    echo "libvirtd does not answer on qemu:///system within 120 s"
    return 1
}
# libvirtd_start: libvirtd -d, its pid file in the test's own host when it has one (VN_HOST)
libvirtd_start() { libvirtd -d ${VN_HOST:+-p "$VN_HOST/libvirtd.pid"} 200>&-; }
# own_pids NAME: the pids of the processes named NAME in this mount namespace, in pid order:
# the libvirtd of another test's own host (tests/lib/own-host.sh), and the vnumad that talks to
# it, are in another
own_pids() {
    local me p
    me=$(readlink /proc/self/ns/mnt)
    for p in $(pgrep -x "$1" | sort -n); do
        [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$me" ] && echo "$p"
    done
}
test_lock() {
    # a test on a host of its own (tests/lib/own-host.sh) shares no libvirtd with another
    [ -n "${VN_HOST:-}" ] && return 0
    mkdir -p /run/lock
    exec 200>/run/lock/vnuma-tests.lock
    flock -n 200 && return 0
    echo "# waiting for another vnuma test run (lock /run/lock/vnuma-tests.lock)"
    flock -w 1800 200
}
