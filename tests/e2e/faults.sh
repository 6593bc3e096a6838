#!/bin/bash
# Faults on the real stack (issue 7), beside the ones tests/e2e/daemon.sh (libvirtd killed
# once, a domain destroyed between sample and act), tests/e2e/restart.sh (vnumad SIGKILLed
# after it changed pins) and the proving ground (vnumad and QEMU SIGKILLed in the middle of
# moving memory) cover:
#   a. libvirtd restarted twice within one pass: vnumad is held at the domain's act stage (a
#      test hold, `vnumactl hold act DOMAIN`) while libvirtd is stopped and started twice, then
#      released;
#      vnumad must not crash, must say what happened once (no error storm), reconnect, and
#      balance the domain afterwards, with no file descriptor left behind.
#   b. a domain "migrated away" and "arriving" (virsh save / virsh restore: live migration
#      cannot run on one host): it is dropped when it goes, tracked as a new domain when
#      it comes back (rule 3's early phase: age 0), its <original> travels in the saved
#      XML, and an opt-out after the restore puts the original pins back.
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
WIDE="0:0-1 1:0-1"
NARROW="0:1 1:0"
started=$SECONDS

e2e_preamble --built vnumad

pins_are() { [ "$(vcpu_pins "$1")" = "$2" ]; }
narrow() { $VIRSH vcpupin "$1" 0 1 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null; }
show_log() { grep -E "$1" "$VN_LOG" | tail -n "${2:-3}" | sed 's/^/#   /'; }
# age DOM: age_passes of DOM in vnumactl status --json (empty when it is not tracked)
age() {
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(next((str(d["age_passes"]) for d in j["domains"] if d["name"] == sys.argv[1] and d["state"] == "ok"), ""))' "$1"
}
age_at_least() { local a; a=$(age "$1"); [ -n "$a" ] && [ "$a" -ge "$2" ]; }

D=$(define_domain fault "$T")
ok $? "domain $D defined and started"
[ $fail -eq 0 ] || finish
narrow "$D"
pins_are "$D" "$NARROW"
ok $? "$D: narrowed pins in place ($(vcpu_pins "$D"))"

# ---- a. libvirtd restarted twice within one pass ----
start_vnumad "interval = 1" "test_holds = yes" "restore_on_exit = yes"
ok $? "a: vnumad started with test_holds = yes"
fds0=$(vnumad_fds)
vn_hold act "$D"
ok $? "a: vnumactl hold act $D: $D's next act stage parks before it changes anything"
set_meta "$D" '<balancer mode="auto"/>' >/dev/null
wait_for 30 log_has "Tracking domain '$D'"
ok $? "a: vnumad tracks $D"
# the pass the metadata change started has sampled and decided $D and is parked in its act stage
wait_held act && held_has act "$D"
ok $? "a: the pass that sampled $D is held at its act stage (pass $(held_pass act))"
held=$(held_pass act)
connects=$(log_count 'Connected to qemu:///system')
warn0=$(vnumad_warnings)
kill_libvirtd >/dev/null && start_libvirtd && kill_libvirtd >/dev/null && start_libvirtd
ok $? "a: libvirtd stopped and started twice"
[ -n "$held" ] && [ "$(held_pass act)" = "$held" ] && [ "$(times_held act)" = 1 ] && [ "$(vn_pass)" = "$held" ]
ok $? "a: ... all inside pass $held, still held at its act stage (held at pass '$(held_pass act)', $(times_held act) hold(s), vnumad at pass $(vn_pass))"
vn_release
ok $? "a: vnumactl release: the pass acts on what it sampled before the restarts"
wait_for 40 bash -c "[ \$(grep -c 'Connected to qemu:///system' '$VN_LOG') -gt $connects ]"
ok $? "a: vnumad reconnects ($(show_log 'Lost the connection|Connected to|Failed|went away' 4 | tr '\n' ' '))"
vnumad_alive
ok $? "a: vnumad is still running"
wait_for 40 pins_are "$D" "$WIDE"
ok $? "a: after the reconnect $D is balanced ('$(vcpu_pins "$D")')"
warns=$(($(vnumad_warnings) - warn0))
[ "$warns" -le 6 ]
ok $? "a: $warns warning/error lines for the two restarts, no storm ($(grep '^<[0-4]>' "$VN_LOG" | tail -n 6 | tr '\n' ' ' | head -c 600))"
fds1=$(vnumad_fds)
[ "$fds1" -le $((fds0 + 1)) ]
ok $? "a: file descriptors $fds0 before, $fds1 after: no connection left open"
stop_vnumad
[ "$VN_EXIT" = 0 ] && pins_are "$D" "$NARROW"
ok $? "a: vnumad exits 0 on SIGTERM and restores $D ('$(vcpu_pins "$D")', exit $VN_EXIT)"

# ---- b. save (migrated away) and restore (arrives) ----
start_vnumad "interval = 1" "restore_on_exit = yes"
ok $? "b: vnumad started again (no pause)"
wait_for 20 pins_are "$D" "$WIDE"
ok $? "b: $D balanced ('$(vcpu_pins "$D")')"
wait_for 10 bash -c "virsh -q metadata '$D' urn:vnuma:state:1 | grep -q '<original[ >]'"
ok $? "b: its originals are in vnumad's live <state> metadata"
wait_for 20 age_at_least "$D" 6
r=$?
age0=$(age "$D")
ok $r "b: $D has been balanced for $age0 passes"
img=$E2E_TMP/$D.save
warn0=$(vnumad_warnings)
$VIRSH save "$D" "$img" >/dev/null
ok $? "b: virsh save $D (the domain leaves this host)"
wait_for 10 log_has "Domain '$D' stopped; no longer tracked"
ok $? "b: vnumad drops it ($(show_log "'$D'" 1 | tr -d '\n'))"
wait_passes 2 && vnumad_alive
ok $? "b: vnumad keeps running (two more passes)"
p_restore=$(vn_pass)
$VIRSH restore "$img" >/dev/null
ok $? "b: virsh restore (the domain arrives, a new QEMU with a new id)"
wait_for 20 bash -c "[ \$(grep -c \"Tracking domain '$D'\" '$VN_LOG') -ge 2 ]"
ok $? "b: vnumad tracks it again ($(show_log "Tracking domain '$D'" 2 | tr '\n' ' '))"
wait_for 10 age_at_least "$D" 0
a=$(age "$D")
p_now=$(vn_pass)
# its age counts from the restore: at most the passes run since (however many a slow machine
# let run before this look); had it kept its age, it would be past $age0 plus those passes
[ -n "$a" ] && [ -n "$p_restore" ] && [ -n "$p_now" ] && [ "$a" -le $((p_now - p_restore + 1)) ]
ok $? "b: as a new domain: age $a passes, counted from the restore ($((p_now - p_restore)) passes since; it was $age0), rule 3's early phase again"
live_state "$D" | grep -q 'vcpupin vcpu="0" cpuset="1"' && live_state "$D" | grep -q 'vcpupin vcpu="1" cpuset="0"'
ok $? "b: the <original> saved before the move came along with the domain ($(live_state "$D" | grep vcpupin | tr -d ' \n'))"
set_meta "$D" '<balancer mode="off"/>' >/dev/null
wait_for 15 pins_are "$D" "$NARROW"
ok $? "b: opt-out after the restore puts the original pins back ('$(vcpu_pins "$D")')"
warns=$(($(vnumad_warnings) - warn0))
[ "$warns" -eq 0 ]
ok $? "b: no warning or error lines through save and restore ($warns: $(grep '^<[0-4]>' "$VN_LOG" | tail -n 3 | tr '\n' ' ' | head -c 400))"
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "b: vnumad exits 0 on SIGTERM (exit $VN_EXIT)"
note "run time $((SECONDS - started)) s"
finish
