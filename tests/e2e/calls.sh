#!/bin/bash
# What an idle pass costs libvirtd and the QEMU monitors (issue 14): the libvirt calls vnumad
# makes per domain per pass, from its own counters (vnuma_libvirt_calls_total{call}), over
# passes in which nothing changes. Three idle opted-in domains (storm-two-cell: TCG, 2 cells,
# halted in SeaBIOS), interval 1 s; once they are placed, 12 passes are counted. An idle pass
# reads each vCPU thread in /proc (its threads and cells were learnt once per QEMU run with
# query-cpus-fast), uses the live XML read at the start (read again after an event says it
# changed, or every 60 s), and writes the decision record into QEMU and the metadata only when
# it changed (or as a heartbeat: record_heartbeat, 10 minutes). So per domain, over the idle
# passes:
#   - TCG: no libvirt call but the XML refresh, 1 in each started minute of the window, and
#     the heartbeat (job check, qom-set, metadata: 3 calls, one of them a monitor command) in
#     each started 10 minutes;
#   - KVM ([kvm] variant): the same, and the vCPU statistics (KVM's halt-polling time, which
#     libvirt asks QEMU's query-stats for) once a minute: these halted vCPUs run far below
#     busy_threshold, so no pass needs them (host/sample.c, poll_needed). Before, every pass
#     made that call.
# Before issue 14 an idle pass made about 10 calls per domain (lookup, info, vCPUs, the live
# XML twice, the numatune twice, query-cpus-fast, qom-set, the metadata write).
# Also checked: a vCPU pin made by someone else (virsh vcpupin --live) raises libvirt's
# TUNABLE event, which makes vnumad read the live XML again at the next pass.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

e2e_preamble --built vnumad --tool python3 "counter arithmetic"
METRICS=$E2E_TMP/metrics.prom
doms=()
for i in 1 2 3; do
    # rebootTimeout -1: SeaBIOS halts for good after "No bootable device" instead of booting
    # again every 60 s (which keeps a vCPU busy for seconds under KVM here)
    d=$(define_domain "calls$i" tests/data/domains/storm-two-cell.xml.in "$(optin_sed 'mode="auto"')" \
        "s|hvm</type></os>|hvm</type><bios rebootTimeout='-1'/></os>|") ||
        skip_all "cannot start a TCG domain here: $(tail -n 1 "$E2E_TMP/define.out")"
    doms+=("$d")
done
start_vnumad "interval = 1" "metrics_file = $METRICS"
ok $? "vnumad started"

# calls: "CALL=N ..." of vnuma_libvirt_calls_total now (vnumactl metrics)
calls() { vnctl metrics 2>/dev/null | awk '/^vnuma_libvirt_calls_total\{/ {match($0, /call="[^"]+"/); printf "%s=%s ", substr($0, RSTART + 6, RLENGTH - 7), $2}'; }
placed() { # every domain sampled, with a target for each cell
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
mine = [d for d in j["domains"] if d["name"].startswith(sys.argv[1])]
sys.exit(0 if len(mine) == 3 and all(d.get("cells") and all(c.get("target_node") is not None for c in d["cells"]) for d in mine) else 1)' "$E2E_PREFIX"
}
wait_for 60 placed
ok $? "the three domains are sampled and placed"
# idle: each vCPU of the three ran under 10% of a CPU over 2 s (virsh domstats: libvirt's own
# reading). The firmware's start keeps one busy for seconds under KVM here; an idle pass is
# one after it.
guests_idle() {
    local a b
    a=$(for d in "${doms[@]}"; do $VIRSH domstats --vcpu "$d"; done 2>/dev/null)
    sleep 2
    b=$(for d in "${doms[@]}"; do $VIRSH domstats --vcpu "$d"; done 2>/dev/null)
    python3 - "$a" "$b" <<'PY'
import re, sys
def times(text):
    out, dom = {}, None
    for line in text.splitlines():
        m = re.match(r"Domain: '(.*)'", line)
        if m:
            dom = m.group(1)
        m = re.match(r"\s*vcpu\.(\d+)\.time=(\d+)", line)
        if m:
            out[(dom, m.group(1))] = int(m.group(2))
    return out
a, b = times(sys.argv[1]), times(sys.argv[2])
sys.exit(0 if len(b) == 6 and all(k in a and b[k] - a[k] < 0.1 * 2e9 for k in b) else 1)
PY
}
wait_for 120 guests_idle
ok $? "the three guests' vCPUs are idle (under 10% of a CPU each over 2 s)"
wait_passes 4 # the first passes act and count memory afresh: let them settle
c0=$(calls) p0=$(vn_pass) t0=$(date +%s.%N)
wait_passes 12 60
c1=$(calls) p1=$(vn_pass) t1=$(date +%s.%N)
python3 - "$c0" "$c1" "$p0" "$p1" "${VN_ACCEL:-tcg}" "$t0" "$t1" >"$E2E_TMP/calls.out" <<'PY'
import math, sys
a = dict(x.split("=") for x in sys.argv[1].split())
b = dict(x.split("=") for x in sys.argv[2].split())
passes = int(sys.argv[4]) - int(sys.argv[3])
kvm = sys.argv[5] == "kvm"
# a once-a-minute call falls at most this often into the window (however long it took)
span = float(sys.argv[7]) - float(sys.argv[6])
minutes = math.floor(span / 60) + 1
beats = math.floor(span / 600) + 1  # the record's heartbeat (record_heartbeat = 600)
per = {k: (float(b[k]) - float(a.get(k, 0))) / 3 for k in b}
total = sum(per.values())
mon = per.get("qmp", 0) + per.get("hmp", 0)
shown = " ".join("%s=%g" % (k, v) for k, v in sorted(per.items()) if v)
print("%d passes, per domain: %g calls, %g monitor commands: %s" % (passes, total, mon, shown or "none"))
ok_total = total <= (2 if kvm else 1) * minutes + 3 * beats
ok_stats = per.get("stats", 0) <= minutes
sys.exit(0 if passes >= 12 and ok_total and ok_stats and mon <= beats else 1)
PY
ok $? "idle passes cost only the once-a-minute libvirt calls per domain ($([ "${VN_ACCEL:-tcg}" = kvm ] && echo 'XML, vCPU statistics' || echo 'XML')) and the heartbeat's ($(cat "$E2E_TMP/calls.out"))"

# someone else re-pins a vCPU: the TUNABLE event marks the cached live XML stale
D=${doms[0]}
before=$(vcpu_pins "$D")
x0=$(calls | grep -o 'xml=[0-9]*')
$VIRSH vcpupin "$D" 0 0 --live >/dev/null
wait_passes 3
x1=$(calls | grep -o 'xml=[0-9]*')
[ "${x1#xml=}" -gt "${x0#xml=}" ]
ok $? "a live pin by someone else makes vnumad read the live XML again ($x0 -> $x1; pins $before -> $(vcpu_pins "$D"))"
stop_vnumad
finish
