#!/bin/bash
# The qemu hook on a real live migration between two libvirtds on this machine (host B as
# tests/e2e/lib-hostb.sh sets it up): vnuma's hook is installed in B's /etc/libvirt/hooks/qemu.d
# beside an operator's own /etc/libvirt/hooks/qemu (which adds a <description>), before B's
# libvirtd starts. Checked (TCG; VN_ACCEL=kvm makes the domains type='kvm'):
#   - an opted-in domain migrated A -> B arrives placed: the operator's hook ran first and its
#     XML reached vnuma's (its <description> arrives), B's live XML has a <vcpupin> per vCPU,
#     a <memnode mode='preferred'> per cell on the node vnumad B chose and <placed host=B> in
#     vnumad's <state>; vnumad B logged the placement and the arrival (arrival-placed), its
#     records say "arrival": "placed", and it moves no memory after the arrival;
#   - the source's last decision travelled: the placement took its busy vCPUs per cell;
#   - opting out on B restores B's originals (the pins), the <placed> stays in <state>;
#   - a domain that did not opt in passes unchanged (no <placed>, no <numatune>);
#   - the hook itself: any other operation prints nothing and exits 0, a domain name that
#     begins with '-' is not taken for an option;
#   - virsh save and restore on B: restore begin places the domain again, as an arrival;
#   - the hot ranges of the source's last decision (in the <state> it carries) are followed by
#     vnumad B's first passes: its records say "hints": "carried", a range in no cell is left
#     out (that they go once the passes a young domain waits for its agent are over, 30 s here:
#     tests/unit/test-daemon-carried.c);
#   - an XML placed by a host with more nodes (cell 1 on node 3, which libvirt here refuses),
#     restored with vnumad B stopped: the hook takes that placement out, and it starts.
#   - with vnumad B stopped, and with vnumad B stopped by SIGSTOP (the hook's 5 s timeout), an
#     opted-in domain's migration completes and it arrives unchanged (no <placed>, no
#     <numatune>); the proving ground's scenario 32 checked the same on four nodes, and is now
#     GROUND_SUITE=migrate's, for the benchmark.
# One host node here: where the cells go is proven in the proving ground
# (tests/e2e/ground/migrate.py, scenario 30).
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in

e2e_preamble --built vnumad --built vnumactl \
    --tool unshare "a mount namespace for the second libvirtd" \
    --tool nsenter "the second vnumad runs in that namespace"

. tests/e2e/lib-hostb.sh

# vnuma's hook as make install writes it, with this build's vnumactl and B's vnumad socket
HOOK=$E2E_TMP/vnuma-hook
sed -e "s|@SBINDIR@/vnumactl|$PWD/$BUILD/vnumactl|g" -e "s|@SYSCONFDIR@|/etc|g" \
    -e "s|/run/vnuma/vnumad.sock|$E2E_TMP/vnumad-b/run/vnumad.sock|" \
    dist/libvirt/vnuma-hook.in >"$HOOK" && chmod 0755 "$HOOK"
mkdir -p "$HB/etc/hooks"
# the operator's own hook: marks the incoming XML, and says it ran
cat >"$HB/etc/hooks/qemu" <<EOF
#!/bin/sh
if [ "\$2" = migrate ] && [ "\$3" = begin ]; then
    echo "\$1" >>"$E2E_TMP/operator-hook.ran"
    sed 's|<name>|<description>operator-hook</description><name>|'
else
    cat >/dev/null
fi
exit 0
EOF
chmod 0755 "$HB/etc/hooks/qemu"

hostb_start "$HOOK"
ok $? "host B: a second libvirtd with vnuma's qemu hook and the operator's answers on $B_SOCK"
[ $fail -eq 0 ] || finish
start_vnumad "restore_on_exit = yes"
ok $? "vnumad A started"
start_vnumad_b
ok $? "vnumad B started in host B's namespace"
[ $fail -eq 0 ] || finish

# live_xml_b DOM: B's live XML of DOM
live_xml_b() { $VIRSH_B dumpxml "$1" 2>/dev/null; }
# placed_ok DOM: B's live XML has a <vcpupin> per vCPU, a preferred <memnode> per cell and
# <placed host=B_ID> naming each cell's node, the memnode's
placed_ok() {
    live_xml_b "$1" | python3 -c '
import sys, xml.etree.ElementTree as E
d = E.fromstring(sys.stdin.read())
pins = d.findall("cputune/vcpupin")
mem = {m.get("cellid"): m for m in d.findall("numatune/memnode")}
st = [e for e in d.find("metadata") if e.tag == "{urn:vnuma:state:1}state"]
pl = st[0].find("{urn:vnuma:state:1}placed") if st else None
cells = {c.get("id"): c for c in pl} if pl is not None else {}
ok = (len(pins) == 2 and len(mem) == 2 and pl is not None and pl.get("host") == sys.argv[1]
      and all(m.get("mode") == "preferred" and cells.get(k) is not None
              and cells[k].get("node") == m.get("nodeset") for k, m in mem.items()))
sys.exit(0 if ok else 1)' "$B_ID"
}
unplaced() {
    ! live_xml_b "$1" | grep -Eq '<numatune>|placed host='
}
b_records() { "$BUILD/vnumactl" --socket "$B_VNSOCK" decisions "$1" --json 2>/dev/null; }
# b_moved DOM: bytes vnumad B moved of DOM, by its records
b_moved() {
    b_records "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
r = r.get("return", r)
print(sum(d.get("bytes_moved", 0) for d in r["decisions"]))'
}
b_arrival_placed() {
    b_records "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
r = r.get("return", r)
sys.exit(0 if r["decisions"] and all(d.get("arrival") == "placed" for d in r["decisions"]) else 1)'
}
migrate_to_b() {
    $VIRSH migrate --live "$1" "qemu+unix:///system?socket=$B_SOCK" \
        --migrateuri tcp://127.0.0.1 --listen-address 127.0.0.1 2>&1
}
b_done() {
    local d=$1
    $VIRSH_B destroy "$d" >/dev/null 2>&1
    wait_for 10 b_log_has "Domain '$d' stopped"
}

# ---- an opted-in domain ----
D=$(define_domain hook "$T" "$(optin_sed 'mode="auto"')")
ok $? "domain $D defined and started on A, opted in"
wait_for 30 bash -c "virsh -q metadata '$D' urn:vnuma:state:1 2>/dev/null | grep -q busy_vcpus"
ok $? "vnumad A recorded a decision with the cells' busy vCPUs in its <state>"
out=$(migrate_to_b "$D")
ok $? "virsh migrate --live $D to host B${out:+: $out}"
grep -qx "$D" "$E2E_TMP/operator-hook.ran" 2>/dev/null
ok $? "the operator's own hook ran first"
live_xml_b "$D" | grep -q '<description>operator-hook</description>'
ok $? "... and its XML went through vnuma's hook: its <description> arrived"
placed_ok "$D"
ok $? "B's live XML: a <vcpupin> per vCPU, a preferred <memnode> per cell, <placed host=\"$B_ID\"> ($(live_xml_b "$D" | grep -oE '<(vcpupin|memnode|vnumad:cell|cell id)[^>]*>' | paste -sd' '))"
b_log_has "Placed incoming domain '$D'.*busy vCPUs as the source's last decision counted them"
ok $? "vnumad B placed it with the source's busy vCPUs ($(grep -m1 "Placed incoming domain '$D'" "$B_LOG" | sed 's/^<[0-9]>//' | cut -c1-160))"
wait_for 15 b_log_has "Domain '$D' came placed by the qemu hook \(arrival-placed\)"
ok $? "vnumad B recognised the arrival as placed"
wait_for 15 b_arrival_placed "$D"
ok $? "its records on B say \"arrival\": \"placed\""
b_wait_passes 3
[ "$(b_moved "$D")" = 0 ]
ok $? "vnumad B moved no memory after the arrival ($(b_moved "$D") bytes, pass $(b_pass))"
placed_ok "$D"
ok $? "vnumad B's own writes of its <state> keep the <placed>"
on_b set_meta "$D" '<balancer mode="off"/>' >/dev/null
wait_for 15 b_log_has "Restored the original pinning and binding of '$D'"
ok $? "opt-out on B restores B's originals"
on_b pins_are "$D" "0:0-1 1:0-1"
ok $? "... the pins of a transient domain here: every vCPU within <vcpu cpuset> ($(on_b vcpu_pins "$D"))"
b_done "$D"

# ---- a domain that did not opt in ----
N=$(define_domain nohook "$T")
ok $? "domain $N defined and started on A, not opted in"
out=$(migrate_to_b "$N")
ok $? "virsh migrate --live $N to host B${out:+: $out}"
unplaced "$N"
ok $? "it arrives unchanged: no <numatune>, no <placed>"
b_log_has "An incoming domain passes unchanged: it did not opt in"
ok $? "vnumad B said why"
b_done "$N"

# ---- the hook by itself ----
out=$(echo '<domain/>' | "$HOOK" "$D" prepare begin - 2>&1)
ok $? "the hook at prepare begin: exit 0${out:+, said: $out}"
[ -z "$out" ]
ok $? "... and prints nothing"
out=$(echo '<domain/>' | "$HOOK" "-x" migrate begin - 2>/dev/null)
ok $? "a domain named '-x' at migrate begin: exit 0, not taken for an option"
[ -z "$out" ]
ok $? "... nothing printed for XML vnumad does not place"

# ---- virsh save and restore on B: restore begin ----
R=$(define_domain restore "$T" "$(optin_sed 'mode="auto"')")
ok $? "domain $R defined and started on A, opted in"
out=$(migrate_to_b "$R")
ok $? "virsh migrate --live $R to host B${out:+: $out}"
wait_for 15 b_log_has "Domain '$R' came placed by the qemu hook \(arrival-placed\)"
ok $? "it arrived placed on B"
out=$($VIRSH_B save "$R" "$E2E_TMP/restore.save" 2>&1)
ok $? "virsh save $R on B${out:+: $out}"
wait_for 15 b_log_has "Domain '$R' stopped"
ok $? "vnumad B saw it stop"
out=$($VIRSH_B restore "$E2E_TMP/restore.save" 2>&1)
ok $? "virsh restore on B${out:+: $out}"
[ "$(grep -c "Placed incoming domain '$R'" "$B_LOG")" = 2 ]
ok $? "vnumad B placed it again at restore begin ($(grep -c "Placed incoming domain '$R'" "$B_LOG") placements)"
placed_ok "$R"
ok $? "the restored live XML: a <vcpupin> per vCPU, a preferred <memnode> per cell, <placed host=\"$B_ID\">"
wait_for 15 bash -c "[ \$(grep -c \"Domain '$R' came placed by the qemu hook\" '$B_LOG') = 2 ]"
ok $? "vnumad B recognised the restored domain as placed"
out=$($VIRSH_B save "$R" "$E2E_TMP/restore.save" 2>&1)
ok $? "virsh save $R on B again${out:+: $out}"
wait_for 15 bash -c "[ \$(grep -c \"Domain '$R' stopped\" '$B_LOG') = 2 ]"

# ---- the source's hot ranges travel in its last decision ----
# vnumad A stops: the <state> below stands for what a source vnumad wrote from its guest
# agent's hints (the record of a cell keeps its hottest ranges: test-carried); cell 1's RAM is
# guest-physical 64-128 MiB (e2e-two-cell), a third range lies in no cell
stop_vnumad
ok $? "vnumad A stopped (exit $VN_EXIT)"
H=$(define_domain hot "$T" "$(optin_sed 'mode="auto"')")
ok $? "domain $H defined and started on A, opted in"
HOT='{"domain":"'$H'","action":"none","cells":[{"cell":0,"busy_vcpus":1},{"cell":1,"busy_vcpus":1,"hot":[{"gpa":71303168,"length":2097152,"heat":0.9},{"gpa":100663296,"length":4194304,"heat":0.6,"shared":true},{"gpa":4294967296,"length":4096,"heat":1}]}]}'
$VIRSH metadata "$H" urn:vnuma:state:1 --key vnumad --live \
    --set "<state><decision pass=\"9\" time=\"2026-12-07T00:00:00Z\">$HOT</decision></state>" >/dev/null
ok $? "its live <state> holds a last decision with hot ranges of cell 1"
out=$(migrate_to_b "$H")
ok $? "virsh migrate --live $H to host B${out:+: $out}"
wait_for 15 b_log_has "Domain '$H' brought 3 hot range\(s\) of 1 cell\(s\) from the source host's last decision"
ok $? "vnumad B took the source's hot ranges on the arrival"
# b_carried DOM: a record of DOM on B followed the carried ranges: cell 1's hot ranges are the
# two inside its RAM, hottest first, the one in no cell left out
b_carried() {
    b_records "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
r = r.get("return", r)
for d in r["decisions"]:
    c = {x["cell"]: x for x in d["cells"]}
    hot = [(h["gpa"], h["length"]) for h in c.get(1, {}).get("hot", [])]
    if d.get("hints") == "carried" and hot == [(71303168, 2097152), (100663296, 4194304)] \
            and "hot" not in c.get(0, {}):
        sys.exit(0)
sys.exit(1)'
}
wait_for 15 b_carried "$H"
ok $? "its records on B: \"hints\": \"carried\", cell 1 follows the two ranges in its RAM ($(b_records "$H" | grep -o '"hints": "carried"' | head -1))"
b_done "$H"

stop_vnumad_b
[ "$B_VN_EXIT" = 0 ]
ok $? "vnumad B exited 0 on SIGTERM"
[ -z "$(sanitizer_report "$B_LOG")" ]
ok $? "vnumad B left no sanitizer report in its log"

# ---- a placement from a host with more nodes, vnumad B down: the hook takes it out ----
# the saved image's XML as a 4-node host's hook would have placed it: cell 1 on node 3
$VIRSH_B save-image-dumpxml "$E2E_TMP/restore.save" 2>/dev/null | python3 -c '
import sys, xml.etree.ElementTree as E
E.register_namespace("vnumad", "urn:vnuma:state:1")
E.register_namespace("vnuma", "urn:vnuma:balancer:1")
d = E.fromstring(sys.stdin.read())
for m in d.findall("numatune/memnode"):
    m.set("nodeset", "3")
for c in d.iter("{urn:vnuma:state:1}cell"):
    c.set("node", "3")
for p in d.iter("{urn:vnuma:state:1}placed"):
    p.set("host", "0123456789abcdef0123456789abcdef")
sys.stdout.write(E.tostring(d, encoding="unicode"))' >"$E2E_TMP/far.xml"
grep -q "nodeset=\"3\"" "$E2E_TMP/far.xml" && grep -q '0123456789abcdef0123456789abcdef' "$E2E_TMP/far.xml"
ok $? "an XML placed by another host on its node 3 (this host has node 0 only)"
sed -e "s|<name>$R</name>|<name>$R-far</name>|" -e '/<uuid>/d' "$E2E_TMP/far.xml" >"$E2E_TMP/far-new.xml"
out=$($VIRSH_B create "$E2E_TMP/far-new.xml" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -qi 'node'
ok $? "libvirt refuses to start that XML here: ${out:-it started}"
$VIRSH_B destroy "$R-far" >/dev/null 2>&1
out=$($VIRSH_B restore "$E2E_TMP/restore.save" --xml "$E2E_TMP/far.xml" 2>&1)
ok $? "virsh restore with it, vnumad B stopped: the migration's path completes${out:+: $out}"
[ "$($VIRSH_B domstate "$R" 2>/dev/null)" = running ] && unplaced "$R"
ok $? "... running, without the earlier host's placement: no <numatune>, no <placed> ($(live_xml_b "$R" | grep -oE '<(memnode|vnumad:placed)[^>]*>' | paste -sd' '))"
live_xml_b "$R" | grep -q '<vcpu' && ! live_xml_b "$R" | grep -q '<vcpupin'
ok $? "... and without its <vcpupin>s"
b_done "$R"

# ---- vnumad B down, then stopped by SIGSTOP: an opted-in domain arrives unchanged ----
# (the hook gets no answer: at once when vnumad B's socket is gone, after its 5 s timeout when
# vnumad B does not answer; the migration completes either way)
U=$(define_domain down "$T" "$(optin_sed 'mode="auto"')")
ok $? "domain $U defined and started on A, opted in"
out=$(migrate_to_b "$U")
ok $? "virsh migrate --live $U to host B, vnumad B stopped${out:+: $out}"
[ "$($VIRSH_B domstate "$U" 2>/dev/null)" = running ] && unplaced "$U"
ok $? "... it runs on B unchanged: no <numatune>, no <placed>"
$VIRSH_B destroy "$U" >/dev/null 2>&1
SG=$(define_domain sigstop "$T" "$(optin_sed 'mode="auto"')")
ok $? "domain $SG defined and started on A, opted in"
start_vnumad_b && kill -STOP "$B_VN"
ok $? "vnumad B started again, then stopped by SIGSTOP"
t0=$(date +%s.%N)
out=$(migrate_to_b "$SG")
rc=$?
secs=$(python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))" "$t0" "$(date +%s.%N)")
kill -CONT "$B_VN"
ok $rc "virsh migrate --live $SG to host B, vnumad B stopped by SIGSTOP: it completes (${secs} s)${out:+: $out}"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 5 else 1)" "$secs"
ok $? "... after the hook waited its 5 s for vnumad B (${secs} s)"
[ "$($VIRSH_B domstate "$SG" 2>/dev/null)" = running ] && unplaced "$SG"
ok $? "... it runs on B unchanged: no <numatune>, no <placed>"
b_done "$SG"
stop_vnumad_b
finish
