#!/bin/bash
# Forged originals against the real libvirtd and QEMU (TCG; type='kvm' with VN_ACCEL=kvm) and
# a private vnumad. Whoever may write any metadata namespace (a tenant's data through a fleet
# manager) can write an <original> into the <balancer> element or forge vnumad's <state>; what
# vnumad puts back comes from its own record (state_dir/originals/UUID), never from there. Each
# forged original below is on CPU 1, and each domain is allowed CPUs 0-1 and live-pinned to
# CPU 0, so the restore's bound check alone would put the forgery back:
#   a. a domain that never opted in gets <balancer mode="off"> with an <original> inside
#      (vnumad 0.1.0's place for them): vnumad says it ignores it and touches nothing;
#   b. the same with a forged <state> stamped with this host's machine id: nothing touched;
#   c. a domain vnumad balances, SIGKILLed vnumad (nothing restored), its <state> forged, a new
#      vnumad, an opt-out: the recorded originals (CPU 0) come back, not the forged ones;
#   d. an element asking for the operator's knobs (priority 100, realtime="move"): not applied,
#      and the log says so.
# Each time libvirt's vCPU and emulator pins and each vCPU thread's affinity are checked. Before
# the record, vnumad put CPU 1 back in b and c (and in a, pins its definition allowed).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 1)"
HERE=$(cat /etc/machine-id)

# emulator_pin DOM: the live emulator pin ("0-1"; virsh -q prints the list alone)
emulator_pin() { $VIRSH emulatorpin "$1" --live 2>/dev/null | awk -F: '{gsub(/[ *]/, "", $NF); if ($NF != "") print $NF}'; }
# on_cpu0 DOM: libvirt's vCPU and emulator pins, and each vCPU thread's affinity, are CPU 0
on_cpu0() {
    [ "$(vcpu_pins "$1")" = "0:0 1:0" ] && [ "$(emulator_pin "$1")" = 0 ] &&
        [ "$(vcpu_thread_affinity "$1")" = "0:0 1:0" ]
}
where() { echo "vCPUs $(vcpu_pins "$1"), threads $(vcpu_thread_affinity "$1"), emulator $(emulator_pin "$1")"; }
to_cpu0() { $VIRSH vcpupin "$1" 0 0 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null && $VIRSH emulatorpin "$1" 0 --live >/dev/null; }
FORGED='<vcpupin vcpu="0" cpuset="1"/><vcpupin vcpu="1" cpuset="1"/><emulatorpin cpuset="1"/>'
forge_state() {
    $VIRSH metadata "$1" urn:vnuma:state:1 --key vnumad --live \
        --set "<state><original host=\"$HERE\">$FORGED</original></state>" >/dev/null
}
ignored() { log_has "The <balancer> element of '$1' holds an <original>: ignored"; }

define_forge() { define_domain "forge-$1" "$T" "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|" "s|@OPTIN@||"; }
A=$(define_forge a)
B=$(define_forge b)
C=$(define_forge c)
[ -n "$A" ] && [ -n "$B" ] && [ -n "$C" ]
ok $? "three domains defined with <vcpu cpuset='0-1'> and started, not opted in ($A $B $C)"
[ $fail -eq 0 ] || finish
to_cpu0 "$A" && to_cpu0 "$B" && to_cpu0 "$C" && on_cpu0 "$A" && on_cpu0 "$B" && on_cpu0 "$C"
ok $? "all three live-pinned to CPU 0 ($A: $(where "$A"))"

start_vnumad "interval = 1"

# ---- a. an <original> inside <balancer mode="off"> on a domain vnumad never touched ----
set_meta "$A" "<balancer mode=\"off\"><original>$FORGED</original></balancer>" >/dev/null
wait_for 30 ignored "$A"
ok $? "a: vnumad read it and says the <original> is ignored"
on_cpu0 "$A" && ! log_has "Restored the original pinning and binding of '$A'"
ok $? "a: $A untouched: $(where "$A") (before: CPU 1 put back)"

# ---- b. and a forged <state> stamped with this host's machine id ----
forge_state "$B"
ok $? "b: a forged <state> written into $B's live metadata"
set_meta "$B" "<balancer mode=\"off\"><original>$FORGED</original></balancer>" >/dev/null
wait_for 30 ignored "$B"
ok $? "b: vnumad read its elements"
on_cpu0 "$B" && ! log_has "Restored the original pinning and binding of '$B'"
ok $? "b: $B untouched: $(where "$B") (before: CPU 1 put back)"

# ---- c. a forged <state> on a domain vnumad balances, read by a restarted vnumad ----
set_meta "$C" '<balancer mode="auto"/>' >/dev/null
UUID=$($VIRSH domuuid "$C")
wait_for 30 test -f "$VN_STATE/originals/$UUID"
ok $? "c: vnumad recorded $C's originals in $VN_STATE/originals/$UUID"
wait_for 30 bash -c "[ \"\$($(declare -f vcpu_pins); VIRSH='$VIRSH'; vcpu_pins $C)\" = '0:0-1 1:0-1' ]"
ok $? "c: and pinned it to the node's CPUs ($(where "$C"))"
kill -KILL "$VN_PID"
wait "$VN_PID" 2>/dev/null
VN_PID=""
forge_state "$C"
ok $? "c: vnumad SIGKILLed, $C's <state> forged"
start_vnumad "interval = 1"
wait_for 30 log_has "decision domain='$C'"
ok $? "c: a new vnumad decides on $C"
set_meta "$C" '<balancer mode="off"/>' >/dev/null
wait_for 30 log_has "Restored the original pinning and binding of '$C'"
ok $? "c: the opt-out restores"
on_cpu0 "$C"
ok $? "c: the recorded originals are back: $(where "$C") (before: the forged CPU 1)"
wait_for 10 test ! -e "$VN_STATE/originals/$UUID"
ok $? "c: and the record is gone"
# ---- d. the operator's knobs in a tenant-reachable element ----
set_meta "$A" '<balancer mode="advise" priority="100" realtime="move" rate="8"/>' >/dev/null
wait_for 30 log_has "The <balancer> element of '$A' asks for priority 100, realtime=\"move\": not applied"
ok $? "d: priority 100 and realtime=\"move\" from the element are not applied (balancer_knobs = no)"
stop_vnumad
finish
