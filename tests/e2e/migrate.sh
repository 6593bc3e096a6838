#!/bin/bash
# A real live migration between two hosts on this one machine (issue 13): host A is the
# system libvirtd; host B is a second libvirtd (and virtlogd) in its own mount namespace, with
# its own /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt, /etc/libvirt
# (another host_uuid: libvirt refuses a migration to the same host) and /etc/machine-id, so
# its vnumad, started in that namespace, has another host id. virsh migrate --live goes from A
# to B through B's unix socket, QEMU's stream over TCP on 127.0.0.1 only. Each vnumad runs with
# a private config; B's connects to B's socket (uri). Checked (TCG; VN_ACCEL=kvm makes the
# domain type='kvm', not run yet: no /dev/kvm here when it was written), once with plain --live (B gets a transient domain) and once with
# --persistent (B is defined from A's definition):
#   - on A the domain opted in, vnumad A saved <original host=A> (the hand-narrowed pins it
#     found), then it is set to advise and its live pins are set by hand to THERE, pins that
#     neither A's saved originals nor B's definition have;
#   - vnumad B logs the arrival (the "started, migrated" event) and writes B's originals,
#     stamped with B's id: transient, every vCPU and the emulator unpinned within <vcpu
#     cpuset>; persistent, the <vcpupin> of the definition; the pins it came with stay;
#   - vnumad B balances it (auto) without taking its pins as originals, and an opt-out on B
#     restores B's originals (virsh vcpupin, emulatorpin, the threads' Cpus_allowed_list),
#     never A's saved ones; no <original> is left;
#   - vnumad A forgot the domain ("migrated away") and restored nothing;
#   - with no qemu hook, the domain arrives unplaced: no <placed> in B's <state>, no <numatune>,
#     and no record of vnumad B says "arrival": "placed" (the proving ground's scenario 31 checked
#     the same on four nodes; it is now GROUND_SUITE=migrate's, for the benchmark).
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
A_ORIG="0:0 1:0"                           # narrowed by hand on A: vnumad A saves these
THERE="0:1 1:1"                            # the live pins the domain leaves A with (emulator 1)
B_TRANSIENT="0:0-1 1:0-1"                  # B's originals of a transient domain
B_DEFINED="0:1 1:0-1"                      # B's of the persistent one: its <cputune> (A's)

e2e_preamble --built vnumad --tool unshare "a mount namespace for the second libvirtd" \
    --tool nsenter "the second vnumad runs in that namespace"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 1)"

. tests/e2e/lib-hostb.sh

A_ID=$(cat /etc/machine-id)
[ -n "$A_ID" ] && [ "$A_ID" != "$B_ID" ]
ok $? "host A's machine id is $A_ID, host B's will be $B_ID"
hostb_start
ok $? "host B: a second libvirtd in its own mount namespace answers on $B_SOCK (pid $B_LIBVIRTD)"
[ $fail -eq 0 ] || finish
ua=$(virsh -c qemu:///system capabilities | sed -n 's|.*<uuid>\(.*\)</uuid>.*|\1|p' | head -n 1)
ub=$($VIRSH_B capabilities | sed -n 's|.*<uuid>\(.*\)</uuid>.*|\1|p' | head -n 1)
[ -n "$ub" ] && [ "$ua" != "$ub" ]
ok $? "the two libvirtds have different host UUIDs ($ua, $ub)"
start_vnumad "restore_on_exit = yes"
ok $? "vnumad A started"
start_vnumad_b
ok $? "vnumad B started in host B's namespace"
wait_for 10 grep -q . "$B_LOG"
b_log_has "vnumad started"
ok $? "vnumad B runs ($(grep -m1 'vnumad started' "$B_LOG" | cut -c1-100))"
[ $fail -eq 0 ] || finish

D=$(define_domain migrate "$T" "s|</vcpu>|</vcpu><cputune><vcpupin vcpu='0' cpuset='1'/></cputune>|")
ok $? "domain $D defined on A (vCPU 0 pinned to CPU 1 in its <cputune>)"
[ $fail -eq 0 ] || finish

# live_xml_numatune DOM: the live XML has a <numatune>
live_xml_numatune() { $VIRSH dumpxml "$1" 2>/dev/null | grep -q '<numatune'; }
# b_arrivals DOM: the "arrival" of each of vnumad B's records of DOM ("-" for none), one line
b_arrivals() {
    "$BUILD/vnumactl" --socket "$B_VNSOCK" decisions "$1" --json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
r = r.get("return", r)
print(" ".join(str(d.get("arrival", "-")) for d in r["decisions"]))' 2>/dev/null
}
b_recorded() { [ -n "$(b_arrivals "$1")" ]; }
b_records_unplaced() { local a; a=$(b_arrivals "$1"); [ -n "$a" ] && ! grep -qw placed <<<"$a"; }

# migrate_run FLAG EXPECTED: one migration of $D from A to B (virsh migrate --live FLAG)
migrate_run() {
    local flag=$1 want=$2 tag=${1:-transient} id out
    tag=${tag#--}
    # a fresh QEMU run on A; B numbers its domains from 1, and a cgroup machine/qemu-ID-NAME
    # shared by the two would be the same cgroup: A's id stays above B's
    $VIRSH domstate "$D" 2>/dev/null | grep -q running || $VIRSH start "$D" >/dev/null
    id=$($VIRSH domid "$D")
    while [ "${id:-0}" -le 4 ]; do
        $VIRSH destroy "$D" >/dev/null && $VIRSH start "$D" >/dev/null || break
        id=$($VIRSH domid "$D")
    done
    $VIRSH vcpupin "$D" 0 0 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null &&
        $VIRSH emulatorpin "$D" 0 --live >/dev/null
    set_meta "$D" '<balancer mode="auto"/>' >/dev/null
    wait_for 15 state_of "$D" "$A_ID" "$A_ORIG" 0
    ok $? "$tag: vnumad A saved <original host=\"$A_ID\"> $A_ORIG, emulator 0 ($(originals "$D"))"
    wait_for 15 pins_are "$D" "0:0-1 1:0-1"
    ok $? "$tag: and balanced it on A ($(vcpu_pins "$D"))"
    set_meta "$D" '<balancer mode="advise"/>' >/dev/null
    wait_passes 2
    $VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 1 --live >/dev/null &&
        $VIRSH emulatorpin "$D" 1 --live >/dev/null
    wait_passes 2
    pins_are "$D" "$THERE" && [ "$(emulator_pin "$D")" = 1 ] && state_of "$D" "$A_ID" "$A_ORIG" 0
    ok $? "$tag: advise on A, live pins set by hand to $THERE, emulator 1 ($(vcpu_pins "$D"), emulator $(emulator_pin "$D")); A's <original> kept"

    # ---- the migration ----
    out=$($VIRSH migrate --live $flag "$D" "qemu+unix:///system?socket=$B_SOCK" \
        --migrateuri tcp://127.0.0.1 --listen-address 127.0.0.1 2>&1)
    ok $? "$tag: virsh migrate --live${flag:+ $flag} $D to host B (QEMU over tcp://127.0.0.1)${out:+: $out}"
    $VIRSH_B domstate "$D" 2>/dev/null | grep -q running
    ok $? "$tag: $D runs on B ($($VIRSH_B domstate "$D" 2>&1)), persistent there: $($VIRSH_B dominfo "$D" | awk '/^Persistent/ {print $2}')"
    [ "$($VIRSH_B dominfo "$D" | awk '/^Persistent/ {print $2}')" = "$([ -n "$flag" ] && echo yes || echo no)" ]
    ok $? "$tag: ... $([ -n "$flag" ] && echo defined || echo transient) on B"

    # ---- host A's vnumad ----
    wait_for 10 log_has "Domain '$D' stopped \(migrated away\); no longer tracked"
    ok $? "$tag: vnumad A forgot it: $(grep "Domain '$D' stopped" "$VN_LOG" | tail -n 1 | cut -c1-120)"
    ! log_has "Restored .*'$D'"
    ok $? "$tag: vnumad A restored nothing"

    # ---- host B's vnumad ----
    wait_for 15 b_log_has "Domain '$D' arrived from another host"
    ok $? "$tag: vnumad B logged the arrival ($(grep -E "'$D' (started|resumed|arrived)" "$B_LOG" | sed 's/^<[0-9]>//' | cut -c1-60 | paste -sd'|'))"
    wait_for 15 on_b state_of "$D" "$B_ID" "$want" 0-1
    ok $? "$tag: B's <original host=\"$B_ID\"> holds B's originals $want, emulator 0-1: $(on_b originals "$D")"
    ! on_b live_state "$D" | grep -q "$A_ID"
    ok $? "$tag: nothing of A's <original> is left in B's live metadata"
    ! on_b live_state "$D" | grep -q '<placed' && ! on_b live_xml_numatune "$D"
    ok $? "$tag: no hook here: no <placed> in B's <state>, no <numatune> in its live XML"
    wait_for 15 b_recorded "$D"
    b_records_unplaced "$D"
    ok $? "$tag: B's records of it do not say \"arrival\": \"placed\" ($(b_arrivals "$D"))"
    on_b pins_are "$D" "$THERE" && [ "$(on_b emulator_pin "$D")" = 1 ]
    ok $? "$tag: the pins it came with stay while it is advised ($(on_b vcpu_pins "$D"), emulator $(on_b emulator_pin "$D"))"
    on_b set_meta "$D" '<balancer mode="auto"/>' >/dev/null
    wait_for 15 on_b pins_are "$D" "0:0-1 1:0-1"
    ok $? "$tag: auto on B: vnumad B balanced it ($(on_b vcpu_pins "$D"))"
    b_wait_passes 2
    on_b state_of "$D" "$B_ID" "$want" 0-1
    ok $? "$tag: ... and kept B's originals, not the pins it found ($(on_b originals "$D"))"
    on_b set_meta "$D" '<balancer mode="off"/>' >/dev/null
    wait_for 15 on_b pins_are "$D" "$want"
    ok $? "$tag: opt-out on B restores B's originals $want ($(on_b vcpu_pins "$D"); A's were $A_ORIG)"
    [ "$(on_b emulator_pin "$D")" = 0-1 ] && [ "$(on_b vcpu_thread_affinity "$D")" = "$want" ]
    ok $? "$tag: ... emulator $(on_b emulator_pin "$D"), vCPU threads' Cpus_allowed_list $(on_b vcpu_thread_affinity "$D")"
    wait_for 10 on_b no_original "$D"
    ok $? "$tag: no <original> left on B"
    b_log_has "Restored the original pinning and binding of '$D' \(opted out: mode off\)"
    ok $? "$tag: ($(grep "Restored.*'$D'" "$B_LOG" | tail -n 1 | sed 's/^<[0-9]>//'))"
    $VIRSH_B destroy "$D" >/dev/null
    [ -n "$flag" ] && $VIRSH_B undefine "$D" >/dev/null
    wait_for 10 b_log_has "Domain '$D' stopped"
}

migrate_run "" "$B_TRANSIENT"
migrate_run --persistent "$B_DEFINED"

stop_vnumad_b
[ "$B_VN_EXIT" = 0 ]
ok $? "vnumad B exited 0 on SIGTERM"
[ -z "$(sanitizer_report "$B_LOG")" ]
ok $? "vnumad B left no sanitizer report in its log"
grep -Eq '^<[0-3]>' "$B_LOG" && note "vnumad B's errors: $(grep -E '^<[0-3]>' "$B_LOG" | head -n 3 | paste -sd'|')"
finish
