#!/bin/bash
# qmp = no: vnumad sends no monitor command at all (the domain is never tainted
# custom-monitor): it takes the guest's cells from the live XML and their RAM from QEMU's maps
# (cells of 64 and 96 MiB here: told apart by size), counts the memory, and pins vCPUs.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad

D=$(define_domain noqmp "$T" "$(optin_sed 'mode="auto"')" \
    "s|<cell id='1' cpus='1' memory='64' unit='MiB'/>|<cell id='1' cpus='1' memory='96' unit='MiB'/>|" \
    "s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>160</memory>|")
ok $? "opted-in domain $D defined and started"
$VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null
start_vnumad "interval = 1" "qmp = no"
wait_for 15 bash -c "[ \"\$($(declare -f vcpu_pins); VIRSH='$VIRSH'; vcpu_pins $D)\" = '0:0-1 1:0-1' ]"
ok $? "vCPUs pinned without QMP (got $(vcpu_pins "$D"))"
log_has "QMP is off"
ok $? "vnumad says at start what it cannot do without QMP"
! $VIRSH dominfo "$D" | grep -qi taint
ok $? "the domain was never sent a monitor command (no custom-monitor taint)"
counted() {
    vnctl status --json >"$E2E_TMP/st.json" && python3 - "$E2E_TMP/st.json" "$D" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j = j.get("return", j)
d = [x for x in j["domains"] if x["name"] == sys.argv[2]][0]
assert len(d["cells"]) == 2, d["cells"]
assert sorted(int(c["memory"].get("0", 0)) for c in d["cells"]) == [64 << 20, 96 << 20], d["cells"]
assert d["counters"]["memory_scans"] > 0, d["counters"]
PY
}
wait_for 15 counted
ok $? "the XML's two cells, their memory counted from maps: 64 and 96 MiB on node 0 ($(counted 2>&1 | tail -n 1 | head -c 300))"
stop_vnumad
[ "$(vcpu_pins "$D")" = "0:1 1:0" ]
ok $? "restored on stop ($(vcpu_pins "$D"))"
finish
