#!/bin/bash
# A domain that arrives from another host (issue 13, live migration) carries that host's pins
# and, in vnumad's live <state>, the originals saved there (<original host=...>): CPU numbers
# chosen for the other host. This machine has one host and one libvirtd, so the other host is
# made up: its vnumad's live pins are set by hand and its <original> carries another machine
# id. Checked on the real libvirtd and QEMU (TCG; type='kvm' with VN_ACCEL=kvm):
#   a. vnumad starts and finds the domain running with the other host's <original>: it drops
#      it, saves this host's originals (the domain's persistent <cputune>: vCPU 0 on CPU 1,
#      vCPU 1 and the emulator unpinned) stamped with this host's machine id, and an opt-out puts
#      those back, never the other host's.
#   b. a save image whose XML says it was saved on another host (virsh save-image-define) is
#      restored while vnumad runs: the same, and SIGTERM (restore_on_exit) puts this host's
#      originals back.
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
OTHER=0b5e6a441c2d4e3f8a9b0c1d2e3f4a5b     # the host the domain comes from (its machine id)
THERE="0:0 1:0"                            # the pins the other host's vnumad gave it
THERE_ORIG="0:0 1:1"                       # the originals saved on the other host
HERE_ORIG="0:1 1:0-1"                      # this host's: vcpupin vcpu 0 -> 1, vCPU 1 unpinned

e2e_preamble --built vnumad
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 1)"

pins_are() { [ "$(vcpu_pins "$1")" = "$2" ]; }
# emulator_pin DOM: the live emulator pin ("0-1"; virsh -q prints the list alone)
emulator_pin() { $VIRSH emulatorpin "$1" --live 2>/dev/null | awk -F: '{gsub(/[ *]/, "", $NF); if ($NF != "") print $NF}'; }
show_log() { grep -E "$1" "$VN_LOG" | tail -n "${2:-3}" | sed 's/^/#   /'; }
# there_state: vnumad's <state> as the other host's vnumad left it
there_state() {
    echo "<state><original host=\"$OTHER\"><vcpupin vcpu=\"0\" cpuset=\"0\"/><vcpupin vcpu=\"1\" cpuset=\"1\"/><emulatorpin cpuset=\"1\"/></original></state>"
}
# state_is_here DOM: the live <state> holds this host's originals, stamped with its machine id
state_is_here() {
    live_state "$1" | python3 -c '
import sys, xml.etree.ElementTree as E
o = E.fromstring(sys.stdin.read()).find("original")
pins = {p.get("vcpu"): p.get("cpuset") for p in o.iter("vcpupin")}
emu = o.find("emulatorpin")
sys.exit(0 if o.get("host") == sys.argv[1] and pins == {"0": "1", "1": "0-1"}
         and emu is not None and emu.get("cpuset") == "0-1" else 1)' "$HERE" 2>/dev/null
}
no_original() { ! live_state "$1" | grep -q '<original'; }
# arrive_from_there DOM: the other host's vnumad pins and its <state>
arrive_from_there() {
    $VIRSH vcpupin "$1" 0 0 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null &&
        $VIRSH emulatorpin "$1" 0 --live >/dev/null &&
        $VIRSH metadata "$1" urn:vnuma:state:1 --key vnumad --set "$(there_state)" --live >/dev/null
}

HERE=$(cat /etc/machine-id)
[ -n "$HERE" ] && [ "$HERE" != "$OTHER" ]
ok $? "this host's machine id is $HERE"

D=$(define_domain arrival "$T" "s|</vcpu>|</vcpu><cputune><vcpupin vcpu='0' cpuset='1'/></cputune>|" \
    "$(optin_sed 'mode="auto"')")
ok $? "domain $D defined (vCPU 0 pinned to CPU 1 in its <cputune>) and started"
[ $fail -eq 0 ] || finish
pins_are "$D" "$HERE_ORIG"
ok $? "$D starts with this host's pins $HERE_ORIG ($(vcpu_pins "$D"))"

# ---- a. vnumad starts and finds a domain that came from another host ----
arrive_from_there "$D"
pins_are "$D" "$THERE" && [ "$(emulator_pin "$D")" = 0 ] && live_state "$D" | grep -q "host=\"$OTHER\""
ok $? "a: $D carries the other host's pins ($(vcpu_pins "$D"), emulator $(emulator_pin "$D")) and <original host=\"$OTHER\">"
start_vnumad "restore_on_exit = yes"
wait_for 15 state_is_here "$D"
ok $? "a: vnumad replaced the other host's <original> by this host's, stamped $HERE ($(live_state "$D" | grep -E 'original|pin' | tr -d ' \n'))"
log_has "Domain '$D' arrived from another host"
ok $? "a: and says so ($(show_log "arrived" 2 | tr '\n' ' '))"
wait_passes 3
! pins_are "$D" "$THERE_ORIG"
ok $? "a: the other host's originals $THERE_ORIG were not applied ($(vcpu_pins "$D"))"
set_meta "$D" '<balancer mode="off"/>' >/dev/null
wait_for 15 pins_are "$D" "$HERE_ORIG"
ok $? "a: opt-out puts this host's originals back: $(vcpu_pins "$D") (the other host's were $THERE_ORIG)"
[ "$(emulator_pin "$D")" = 0-1 ] && [ "$(vcpu_thread_affinity "$D")" = "$HERE_ORIG" ]
ok $? "a: ... the emulator unpinned ($(emulator_pin "$D")) and the vCPU threads' affinity ($(vcpu_thread_affinity "$D"))"
wait_for 10 no_original "$D"
ok $? "a: no <original> left in the live metadata"

# ---- b. a save image from another host, restored while vnumad runs ----
set_meta "$D" '<balancer mode="auto"/>' >/dev/null
img=$E2E_TMP/$D.save
$VIRSH save "$D" "$img" >/dev/null
ok $? "b: virsh save $D"
wait_for 10 log_has "Domain '$D' stopped"
# the image's XML as the other host would have saved it: its vnumad's pins and <state>
$VIRSH save-image-dumpxml "$img" --security-info >"$E2E_TMP/image.xml" &&
    python3 - "$E2E_TMP/image.xml" "$(there_state)" <<'EOF'
import sys, xml.etree.ElementTree as E
path, state = sys.argv[1], sys.argv[2]
E.register_namespace("vnuma", "urn:vnuma:balancer:1")
E.register_namespace("vnumad", "urn:vnuma:state:1")
dom = E.parse(path)
root = dom.getroot()
meta = root.find("metadata")
for el in list(meta):
    if el.tag.startswith("{urn:vnuma:state:1}"):
        meta.remove(el)
st = E.fromstring(state)
for el in st.iter():
    el.tag = "{urn:vnuma:state:1}" + el.tag
meta.append(st)
ct = root.find("cputune")
for el in list(ct):
    ct.remove(el)
for v in ("0", "1"):
    E.SubElement(ct, "vcpupin", vcpu=v, cpuset="0")
E.SubElement(ct, "emulatorpin", cpuset="0")
dom.write(path)
EOF
ok $? "b: the image's XML edited: pins $THERE, emulator on 0, <original host=\"$OTHER\">"
$VIRSH save-image-define "$img" "$E2E_TMP/image.xml" >/dev/null
ok $? "b: virsh save-image-define"
n0=$(grep -c "Domain '$D' arrived from another host" "$VN_LOG")
$VIRSH restore "$img" >/dev/null
ok $? "b: virsh restore (the domain arrives from the other host)"
wait_for 15 state_is_here "$D"
ok $? "b: vnumad took this host's originals, stamped $HERE ($(live_state "$D" | grep -E 'original|pin' | tr -d ' \n'))"
[ "$(grep -c "Domain '$D' arrived from another host" "$VN_LOG")" -gt "$n0" ]
ok $? "b: and says so"
wait_passes 3
! pins_are "$D" "$THERE_ORIG"
ok $? "b: the other host's originals $THERE_ORIG were not applied ($(vcpu_pins "$D"))"
stop_vnumad
[ "$VN_EXIT" = 0 ] && pins_are "$D" "$HERE_ORIG" && [ "$(emulator_pin "$D")" = 0-1 ]
ok $? "b: SIGTERM restores this host's originals: $(vcpu_pins "$D"), emulator $(emulator_pin "$D") (exit $VN_EXIT)"
log_has "Restored the original pinning and binding of '$D' \(vnumad stopped\)"
ok $? "b: ($(show_log "Restored.*'$D'" 1 | tr -d '\n'))"
finish
