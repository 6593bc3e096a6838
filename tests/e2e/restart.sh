#!/bin/bash
# A restarted vnumad finds the originals in its record (state_dir/originals/UUID, kept across
# its restarts as on a host): vnumad is killed with SIGKILL after it changed a domain's pins (no
# chance to restore), a new vnumad starts, the domain opts out, and the original pins come
# back. The new vnumad does not save the already-changed pins as "originals" again.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
WIDE="0:0-1 1:0-1"
NARROW="0:1 1:0"

e2e_preamble --built vnumad

D=$(define_domain restart "$T")
ok $? "domain $D defined and started"
$VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null
[ "$(vcpu_pins "$D")" = "$NARROW" ]
ok $? "narrowed pins in place: $(vcpu_pins "$D")"

start_vnumad "interval = 1" "restore_on_exit = yes"
set_meta "$D" '<balancer mode="auto"/>' >/dev/null
wait_for 15 bash -c "[ \"\$($(declare -f vcpu_pins); VIRSH='$VIRSH'; vcpu_pins $D)\" = '$WIDE' ]"
ok $? "vnumad pinned $D to $WIDE (got $(vcpu_pins "$D"))"
wait_for 10 bash -c "virsh -q metadata $D urn:vnuma:state:1 | grep -q '<original[ >]'"
ok $? "the originals are in vnumad's live <state> metadata"
test -f "$VN_STATE/originals/$($VIRSH domuuid "$D")"
ok $? "and in its record, $VN_STATE/originals/UUID"

kill -KILL "$VN_PID"
wait "$VN_PID" 2>/dev/null
VN_PID=""
[ "$(vcpu_pins "$D")" = "$WIDE" ]
ok $? "after SIGKILL nothing was restored (pins $(vcpu_pins "$D"))"

start_vnumad "interval = 1" "restore_on_exit = yes"
wait_for 15 log_has "decision domain='$D'"
ok $? "the restarted vnumad decides on $D again"
live_state "$D" | grep -q 'vcpupin vcpu="0" cpuset="1"' && live_state "$D" | grep -q 'vcpupin vcpu="1" cpuset="0"'
ok $? "the restarted vnumad kept the first originals, not the pins it found ($(live_state "$D" | grep vcpupin | tr -d ' \n'))"
set_meta "$D" '<balancer mode="off"/>' >/dev/null
wait_for 15 bash -c "[ \"\$($(declare -f vcpu_pins); VIRSH='$VIRSH'; vcpu_pins $D)\" = '$NARROW' ]"
ok $? "opt-out after the restart restores the original pins $NARROW (got $(vcpu_pins "$D"))"
[ "$(vcpu_thread_affinity "$D")" = "$NARROW" ]
ok $? "... and the vCPU threads' affinity ($(vcpu_thread_affinity "$D"))"
stop_vnumad
ok $? "vnumad stops cleanly"
finish
