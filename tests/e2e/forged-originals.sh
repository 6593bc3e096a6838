#!/bin/bash
# Forged originals (issue 35, item 1) against the real libvirtd and QEMU (TCG; type='kvm'
# with VN_ACCEL=kvm) and a private vnumad. vnumad reads the originals it puts back from the
# domain's metadata, which whoever may write any metadata namespace can write too (a tenant's
# data through a fleet manager): each attack below gives a domain confined to CPU 0 by its
# definition (<vcpu cpuset='0'>) "originals" on CPU 1, and opts it out, which puts originals
# back at once:
#   a. a legacy <original> inside the <balancer> element (counts while there is no <state>);
#   b. a forged <state> (urn:vnuma:state:1) stamped with this host's machine id;
#   c. the same in bounds: a domain allowed CPUs 0-1 (and live-pinned to CPU 0) given
#      originals on CPU 1, which its definition allows: those are put back (the restore
#      still does its job).
# Each time: the vCPU and emulator pins (libvirt's and each thread's own affinity) stay on
# CPU 0, the log names what was refused, and vnuma_errors_total{kind="restore-out-of-bounds"}
# counts it. Before the fix vnumad put both vCPUs and the emulator on CPU 1.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 1)"
METRICS=$E2E_TMP/metrics.prom
HERE=$(cat /etc/machine-id)

# emulator_pin DOM: the live emulator pin ("0-1"; virsh -q prints the list alone)
emulator_pin() { $VIRSH emulatorpin "$1" --live 2>/dev/null | awk -F: '{gsub(/[ *]/, "", $NF); if ($NF != "") print $NF}'; }
# on_cpu0 DOM: libvirt's vCPU and emulator pins, and each vCPU thread's affinity, are CPU 0
on_cpu0() {
    [ "$(vcpu_pins "$1")" = "0:0 1:0" ] && [ "$(emulator_pin "$1")" = 0 ] &&
        [ "$(vcpu_thread_affinity "$1")" = "0:0 1:0" ]
}
where() { echo "vCPUs $(vcpu_pins "$1"), threads $(vcpu_thread_affinity "$1"), emulator $(emulator_pin "$1")"; }
refused() { metric_sum "$METRICS" 'vnuma_errors_total\{kind="restore-out-of-bounds"\}'; }
FORGED='<vcpupin vcpu="0" cpuset="1"/><vcpupin vcpu="1" cpuset="1"/><emulatorpin cpuset="1"/>'

A=$(define_domain forge-a "$T" "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0'>|" "s|@OPTIN@||")
ok $? "a: domain $A defined with <vcpu cpuset='0'> and started, not opted in"
B=$(define_domain forge-b "$T" "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0'>|" "s|@OPTIN@||")
ok $? "b: domain $B defined the same"
C=$(define_domain forge-c "$T" "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|" "s|@OPTIN@||")
ok $? "c: domain $C defined with <vcpu cpuset='0-1'>"
[ $fail -eq 0 ] || finish
$VIRSH vcpupin "$C" 0 0 --live >/dev/null && $VIRSH vcpupin "$C" 1 0 --live >/dev/null &&
    $VIRSH emulatorpin "$C" 0 --live >/dev/null
on_cpu0 "$A" && on_cpu0 "$B" && on_cpu0 "$C"
ok $? "all three start on CPU 0 ($A: $(where "$A"); $C live-pinned there)"

start_vnumad "interval = 1" "metrics_file = $METRICS"

# ---- a. a legacy <original> in the operator's element, and mode off: restored at once ----
set_meta "$A" "<balancer mode=\"off\"><original>$FORGED</original></balancer>" >/dev/null
wait_for 30 log_has "original pin of vCPU 0 of '$A' \(1\) is not one its definition allows \(0\)"
ok $? "a: vnumad refused the forged pin of vCPU 0 ($(grep -E "original pin .* '$A'" "$VN_LOG" | head -n 1 | sed 's/.*warn: //'))"
wait_for 15 log_has "Restored the original pinning and binding of '$A'"
ok $? "a: and put back the definition's instead"
on_cpu0 "$A"
ok $? "a: $A stays on CPU 0: $(where "$A") (before the fix: CPU 1)"

# ---- b. a forged <state> stamped with this host's machine id ----
$VIRSH metadata "$B" urn:vnuma:state:1 --key vnumad --live \
    --set "<state><original host=\"$HERE\">$FORGED</original></state>" >/dev/null
ok $? "b: a forged <state> written into $B's live metadata"
set_meta "$B" '<balancer mode="off"/>' >/dev/null
wait_for 30 log_has "original pin of the emulator of '$B' \(1\) is not one its definition allows \(0\)"
ok $? "b: vnumad refused the forged emulator pin ($(grep -E "original pin of the emulator .* '$B'" "$VN_LOG" | head -n 1 | sed 's/.*warn: //'))"
wait_for 15 log_has "Restored the original pinning and binding of '$B'"
on_cpu0 "$B"
ok $? "b: $B stays on CPU 0: $(where "$B")"

# ---- c. originals within the definition's bounds are put back ----
$VIRSH metadata "$C" urn:vnuma:state:1 --key vnumad --live \
    --set "<state><original host=\"$HERE\">$FORGED</original></state>" >/dev/null
set_meta "$C" '<balancer mode="off"/>' >/dev/null
wait_for 30 log_has "Restored the original pinning and binding of '$C'"
ok $? "c: vnumad restored $C's originals"
[ "$(vcpu_pins "$C")" = "0:1 1:1" ] && [ "$(emulator_pin "$C")" = 1 ] && [ "$(vcpu_thread_affinity "$C")" = "0:1 1:1" ]
ok $? "c: within its <vcpu cpuset='0-1'> they are put back as saved: $(where "$C")"
! log_has "original pin of .* of '$C'"
ok $? "c: and none of them was refused"

wait_for 15 test "$(refused)" -ge 6
ok $? "vnuma_errors_total{kind=\"restore-out-of-bounds\"} counts the 6 refused pins ($(refused))"
stop_vnumad
finish
