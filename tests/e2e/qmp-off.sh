#!/bin/bash
# qmp = no: vnumad sends no monitor command at all (the domain is never tainted
# custom-monitor), treats the domain as one cell, samples no memory, and still pins vCPUs.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad

D=$(define_domain noqmp "$T" "$(optin_sed 'mode="auto"')")
ok $? "opted-in domain $D defined and started"
$VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null
start_vnumad "interval = 1" "qmp = no"
wait_for 15 bash -c "[ \"\$($(declare -f vcpu_pins); VIRSH='$VIRSH'; vcpu_pins $D)\" = '0:0-1 1:0-1' ]"
ok $? "vCPUs pinned without QMP (got $(vcpu_pins "$D"))"
log_has "QMP is off"
ok $? "vnumad says at start what it cannot do without QMP"
! $VIRSH dominfo "$D" | grep -qi taint
ok $? "the domain was never sent a monitor command (no custom-monitor taint)"
vnctl status --json >"$E2E_TMP/st.json"
python3 - "$E2E_TMP/st.json" "$D" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j = j.get("return", j)
d = [x for x in j["domains"] if x["name"] == sys.argv[2]][0]
assert len(d["cells"]) == 1, d["cells"]
assert d["counters"]["memory_scans"] == 0, d["counters"]
PY
ok $? "one cell, no memory scans"
stop_vnumad
[ "$(vcpu_pins "$D")" = "0:1 1:0" ]
ok $? "restored on stop ($(vcpu_pins "$D"))"
finish
