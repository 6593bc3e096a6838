#!/bin/bash
# The test holds themselves (issue 28; docs/configuration.md "Test holds"), on the real stack:
#   a. without test_holds = yes, `vnumactl hold` is refused (HoldsOff) and nothing parks;
#   b. hold sample: the pass with the domain parks after sampling; the control socket answers
#      meanwhile, no pass runs while it is held, and an opt-in change made meanwhile is not
#      lost: it is acted on after the release;
#   c. hold record: the domain's record write parks on its worker for longer than the domain
#      timeout, yet nothing is taken for hung; the record is written after the release;
#   d. a hold for another domain does not park this one's work;
#   e. SIGTERM while held: vnumad finishes the pass, restores and exits 0.
# The move stage needs two host nodes: the proving ground holds it (tests/e2e/ground/).
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
WIDE="0:0-1 1:0-1"
NARROW="0:1 1:0"
started=$SECONDS

e2e_preamble --built vnumad --built vnumactl --tool python3 "status parsing"

pins_are() { [ "$(vcpu_pins "$1")" = "$2" ]; }
narrow() { $VIRSH vcpupin "$1" 0 1 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null; }
# last_record_pass DOM: the pass of DOM's newest decision record (vnumactl decisions)
last_record_pass() {
    vnctl decisions "$1" --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); d=j.get("return", j)["decisions"]; print(d[0]["pass"] if d else 0)' 2>/dev/null
}
record_at_least() { local p; p=$(last_record_pass "$1"); [ -n "$p" ] && [ "$p" -ge "$2" ]; }

D=$(define_domain hold "$T")
ok $? "domain $D defined and started"
O=$(define_domain other "$T" "$(optin_sed 'mode="advise"')")
ok $? "domain $O defined and started (opted in, mode advise)"
[ $fail -eq 0 ] || finish
narrow "$D"

# ---- a. off by default ----
start_vnumad
ok $? "a: vnumad started without test_holds"
out=$(vnctl hold act 2>&1)
rc=$?
[ $rc -ne 0 ] && grep -q 'test holds are off' <<<"$out"
ok $? "a: vnumactl hold is refused: '$out' (exit $rc)"
vnctl holds --json | python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("return", j); sys.exit(0 if not j["enabled"] and j["armed"] == [] else 1)'
ok $? "a: vnumactl holds: not enabled, nothing armed"
out=$(vnctl hold nowhere 2>&1)
[ $? -ne 0 ]
ok $? "a: an unknown stage is refused too ('$out')"
stop_vnumad

# ---- b. hold sample ----
start_vnumad "test_holds = yes" "restore_on_exit = yes"
ok $? "b: vnumad started with test_holds = yes"
log_has 'warning: test_holds = yes'
ok $? "b: it warns that holds are on"
out=$(vnctl hold nowhere 2>&1)
[ $? -ne 0 ] && grep -q 'sample, act, move or record' <<<"$out"
ok $? "b: an unknown stage is refused with the stages named ('$out')"
vn_hold sample "$D"
ok $? "b: vnumactl hold sample $D"
set_meta "$D" '<balancer mode="advise"/>' >/dev/null
wait_held sample && held_has sample "$D"
ok $? "b: the pass with $D parks after sampling it (pass $(held_pass sample))"
p=$(held_pass sample)
status_json=$(vnctl status --json)
ok $? "b: vnumactl status answers while the pass is held"
[ "$(vn_pass)" = "$p" ]
ok $? "b: vnumad is at the held pass ($(vn_pass) = $p)"
# an event while held: the opt-in changes to auto; the held pass decided nothing yet
set_meta "$D" '<balancer mode="auto"/>' >/dev/null
ok $? "b: $D switched to mode auto while the pass is held"
[ "$(vn_pass)" = "$p" ] && is_held sample && pins_are "$D" "$NARROW"
ok $? "b: ... still at pass $p, still held, $D untouched ('$(vcpu_pins "$D")')"
vn_release
ok $? "b: vnumactl release"
wait_for 60 pins_are "$D" "$WIDE"
ok $? "b: the passes go on and balance $D in mode auto ('$(vcpu_pins "$D")')"
[ "$(times_held sample)" = 1 ]
ok $? "b: it held once ($(times_held sample) time(s)): a hold is armed for one pass"

# ---- c. hold record, longer than the domain timeout ----
# Armed before the change: a pass that runs between the change and the hold would act and
# write the record unheld, and nothing would reach the stage again.
vn_hold record "$D"
narrow "$D" # the next pass acts and writes a record
wait_held record && held_has record "$D"
ok $? "c: $D's record write is held on its worker (pass $(held_pass record))"
p=$(held_pass record)
# longer than a domain's timeout (5 s at interval = 1: PASS_DOMAIN_TIMEOUT_MIN_S): a held work
# must not be taken for a domain that does not answer. The wait only makes the check stricter.
sleep 6
is_held record && [ "$(vn_pass)" = "$p" ] && ! log_has "'$D' does not answer|Domain '$D' answers again"
ok $? "c: 6 s later it is still held in pass $p and not taken for hung"
vn_release
wait_for 30 record_at_least "$D" "$p"
ok $? "c: after the release the record of pass $p is written"
! log_has "'$D' does not answer|Domain '$D' answers again"
ok $? "c: no 'does not answer' for $D at all"

# ---- d. a hold for another domain ----
narrow "$D"
vn_hold act "$O"
wait_for 60 pins_are "$D" "$WIDE"
ok $? "d: with act held for $O (mode advise: it never acts), $D is balanced ('$(vcpu_pins "$D")')"
! is_held act
ok $? "d: nothing parked"
vn_release

# ---- e. SIGTERM while held ----
vn_hold act "$D" # armed first, as in c
narrow "$D"
wait_held act && held_has act "$D"
ok $? "e: $D's act stage held (pass $(held_pass act))"
stop_vnumad
[ "$VN_EXIT" = 0 ] && pins_are "$D" "$NARROW"
ok $? "e: SIGTERM while held: vnumad exits 0 and restores $D's original pins ('$(vcpu_pins "$D")', exit $VN_EXIT)"
log_has 'Released 1 hold' && log_has 'vnumad stopped$'
ok $? "e: it released the hold, then stopped"

note "run time $((SECONDS - started)) s"
finish
