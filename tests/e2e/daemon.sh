#!/bin/bash
# vnumad against the real libvirtd and QEMU (TCG) on this machine:
#   a. an opted-in domain gets its planned pins (virsh vcpupin and the vCPU threads' affinity),
#      the record is in QEMU (QOM), the live metadata, the journal and vnumactl status;
#   b. a domain without the element and an advise one are never changed;
#   c. opt-out and SIGTERM restore the original pins;
#   d. libvirtd killed and restarted: vnumad reconnects and the next pass works;
#   e. a domain destroyed in the middle of a pass: no crash, the record says so;
#   f. bad <balancer> values: the domain is left alone, the reason is recorded;
#   g. vnumactl by a non-root user is refused.
# This host has one NUMA node (CPUs 0-1): vnumad's plan pins every vCPU to 0-1, so the test
# narrows the pins first (vCPU 0 on CPU 1, vCPU 1 on CPU 0) to see a pin applied and restored.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
WIDE="0:0-1 1:0-1"    # what vnumad's plan pins on this one-node host
NARROW="0:1 1:0"      # the originals the test sets before opting in
started=$SECONDS

e2e_preamble --built vnumad --built vnumactl

# json_ok FILE PYTHON-EXPR: the expression over `j` (FILE's JSON; a {"return": X} envelope is
# unwrapped) is true. Extra names: dom, args.
json_ok() {
    python3 - "$@" <<'PY'
import json, sys
path, expr, args = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    j = json.load(open(path))
except Exception as e:
    print(f"# not JSON: {e}", file=sys.stderr); sys.exit(1)
if isinstance(j, dict) and set(j) == {"return"}:
    j = j["return"]
def dom(name):
    return next((d for d in j.get("domains", []) if d.get("name") == name), None)
try:
    ok = eval(expr)
except Exception as e:
    print(f"# {expr}: {type(e).__name__}: {e}", file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
}

# journal_has DOMAIN PYTHON-EXPR [ARG]: some journal record `r` of DOMAIN satisfies the
# expression (sys.argv[4] is ARG); only lines after the first $J_SKIP are looked at.
journal_has() {
    python3 - "$VN_JOURNAL" "$@" <<'PY'
import json, os, sys
path, name, expr = sys.argv[1:4]
try:
    lines = open(path).read().splitlines()[int(os.environ.get("J_SKIP", "0")):]
except OSError:
    sys.exit(1)
for line in lines:
    try:
        r = json.loads(line)
    except ValueError:
        print(f"# journal line is not JSON: {line[:200]}", file=sys.stderr); sys.exit(2)
    if r.get("domain") == name and eval(expr):
        sys.exit(0)
sys.exit(1)
PY
}

status_json() { vnctl status --json >"$E2E_TMP/status.json" 2>"$E2E_TMP/status.err"; }
# status_ok PYTHON-EXPR: vnumactl status --json answers and satisfies the expression.
status_ok() { status_json && json_ok "$E2E_TMP/status.json" "$@" 2>/dev/null; }
# meta_check DOMAIN PYTHON-EXPR [ARG...]: the operator's live <balancer> element `el`, vnumad's
# live <state> element `st` (ElementTree; None when there is none), the state's <decision>
# record `rec` (parsed JSON; None) and <original> `orig`, `pins` satisfy the expression.
meta_check() {
    live_meta "$1" >"$E2E_TMP/meta.xml"
    live_state "$1" >"$E2E_TMP/state.xml"
    python3 - "$E2E_TMP/meta.xml" "$E2E_TMP/state.xml" "${@:2}" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
path, spath, expr, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
text, stext = open(path).read().strip(), open(spath).read().strip()
el = ET.fromstring(text) if text else None
st = ET.fromstring(stext) if stext else None
d = st.find("decision") if st is not None else None
rec = json.loads(d.text) if d is not None and d.text else None
orig = st.find("original") if st is not None else None
pins = {p.get("vcpu"): p.get("cpuset") for p in orig.findall("vcpupin")} if orig is not None else {}
try:
    ok = eval(expr)
except Exception as e:
    print(f"# {expr}: {type(e).__name__}: {e}", file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
}
journal_lines() { wc -l <"$VN_JOURNAL" 2>/dev/null || echo 0; }
pins_are() { [ "$(vcpu_pins "$1")" = "$2" ]; }
threads_are() { [ "$(vcpu_thread_affinity "$1")" = "$2" ]; }
narrow() { $VIRSH vcpupin "$1" 0 1 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null; }
decisions_of() { log_count "decision domain='$1' "; }
# passes_seen DOM N: vnumad logged at least N decision lines for DOM.
passes_seen() { [ "$(decisions_of "$1")" -ge "$2" ]; }
taint() { $VIRSH dominfo "$1" 2>/dev/null | grep -i 'taint' | tr -s ' '; }
show_log() { grep -E "$1" "$VN_LOG" | tail -n "${2:-3}" | sed 's/^/#   /'; }

# ---- the domains ----
A=$(define_domain auto "$T" "$(optin_sed 'mode="auto"')")
ok $? "define and start $A (mode auto)"
S=$(define_domain term "$T" "$(optin_sed 'mode="auto"')")
ok $? "define and start $S (mode auto, restored at SIGTERM)"
X=$(define_domain gone "$T" "$(optin_sed 'mode="auto"')")
ok $? "define and start $X (mode auto, destroyed mid-pass later)"
N=$(define_domain none "$T")
ok $? "define and start $N (no <balancer> element)"
# cells of 64 and 96 MiB: anonymous memory of unequal cells is told apart in maps without
# QEMU's monitor (host/ramlayout_maps.h), which an advise domain is never sent
UNEQ="s|<cell id='1' cpus='1' memory='64' unit='MiB'/>|<cell id='1' cpus='1' memory='96' unit='MiB'/>|"
UNEQ_MEM="s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>160</memory>|"
V=$(define_domain advise "$T" "$(optin_sed 'mode="advise"')" "$UNEQ" "$UNEQ_MEM")
ok $? "define and start $V (mode advise, cells of 64 and 96 MiB)"
B=$(define_domain bad "$T")
ok $? "define and start $B (bad <balancer> values later)"
[ $fail -eq 0 ] || finish
for d in "$A" "$S" "$X" "$N" "$V" "$B"; do
    narrow "$d"
done
for d in "$A" "$S" "$X" "$N" "$V" "$B"; do
    pins_are "$d" "$NARROW" && threads_are "$d" "$NARROW"
    ok $? "$d: narrowed pins in place before vnumad starts ($(vcpu_pins "$d"))"
done
# what must never change (b)
pins_N=$(vcpu_pins "$N") meta_N=$(live_meta "$N") taint_N=$(taint "$N")
pins_V=$(vcpu_pins "$V") meta_V=$(live_meta "$V")
[ -z "$meta_N" ] && [ "$meta_V" = '<balancer mode="advise"/>' ]
ok $? "metadata before: none for $N, '$meta_V' for $V"

start_vnumad
ok $? "vnumad starts and listens on its socket"
vnumad_alive || { show_log .; finish; }
# started by hand as root (no systemd unit to cut them), vnumad keeps the five capabilities the
# unit gives it and drops the rest: CAP_DAC_OVERRIDE (1), CAP_DAC_READ_SEARCH (2),
# CAP_SYS_PTRACE (19), CAP_SYS_ADMIN (21), CAP_SYS_NICE (23)
caps=$(awk '/^Cap(Eff|Prm|Bnd):/ {printf "%s%s=%s", sep, $1, $2; sep=" "}' "/proc/$VN_PID/status")
[ "$caps" = "CapPrm:=0000000000a80006 CapEff:=0000000000a80006 CapBnd:=0000000000a80006" ]
ok $? "vnumad keeps only the capabilities it needs ($caps)"

# ---- a. an opted-in domain gets its pins ----
wait_for 20 pins_are "$A" "$WIDE"
ok $? "a: $A: virsh vcpupin shows the planned pins '$WIDE' (got '$(vcpu_pins "$A")')"
threads_are "$A" "$WIDE"
ok $? "a: $A: each vCPU thread's affinity (Cpus_allowed_list) is 0-1 (got '$(vcpu_thread_affinity "$A")')"
wait_for 10 passes_seen "$A" 2
$VIRSH qemu-monitor-command "$A" \
    '{"execute":"qom-get","arguments":{"path":"/objects/vnuma-decision","property":"identity"}}' \
    >"$E2E_TMP/qom.json" 2>&1
python3 - "$E2E_TMP/qom.json" "$A" >"$E2E_TMP/qom.out" 2>&1 <<'PY'
import json, sys
reply = json.load(open(sys.argv[1]))
rec = json.loads(reply["return"])
assert rec["domain"] == sys.argv[2], rec.get("domain")
assert isinstance(rec["pass"], int) and rec["pass"] >= 1, rec.get("pass")
assert isinstance(rec["cells"], list) and len(rec["cells"]) == 2, rec.get("cells")
print(f"pass {rec['pass']}, action {rec['action']}, reason {rec['reason']}")
PY
ok $? "a: $A: the QOM object vnuma-decision holds a JSON record with the domain name and pass ($(head -c 200 "$E2E_TMP/qom.out" | tr '\n' ' '))"
meta_A="$(live_meta "$A") $(live_state "$A")"
meta_check "$A" 'el.attrib == {"mode": "auto"} and len(el) == 0 and pins == {"0": "1", "1": "0"} and rec["domain"] == args[0] and d.get("pass") == str(rec["pass"]) and d.get("time") == rec["time"]' "$A"
ok $? "a: $A: the operator's element keeps mode=\"auto\" untouched; vnumad's <state> saves the narrowed originals in <original> and holds a <decision> ($(head -c 300 <<<"$meta_A" | tr '\n' ' '))"
journal_has "$A" 'r.get("action") == "acted" and r.get("mode") == "auto"'
ok $? "a: $A: the journal $VN_JOURNAL has an \"acted\" record"
log_has "decision domain='$A' pass=[0-9]+ action=acted reason='ok'"
ok $? "a: $A: vnumad logs the acted decision ($(show_log "decision domain='$A' .*action=acted" 1 | tr -d '\n'))"
wait_for 10 status_ok 'dom(args[0]) is not None and dom(args[0])["counters"]["memory_scans"] > 0' "$A"
if status_json; then
    json_ok "$E2E_TMP/status.json" '(lambda d: d["state"] == "ok" and d["mode"] == "auto" and len(d["cells"]) == 2 and all(int(c["memory"].get("0", 0)) > 0 for c in d["cells"]) and all(sum(c["vcpus"].values()) == 1 for c in d["cells"]) and d["counters"]["memory_scans"] > 0 and d["counters"]["pins"] > 0 and d["counters"]["memory_discovery_failures"] == 0 and d["memory_error"] is None)(dom(args[0]))' "$A"
    ok $? "a: vnumactl status --json: $A (${VN_ACCEL:-tcg}) has 2 cells with memory on node 0, memory_scans > 0, its memory found at once ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); d=[x for x in j["domains"] if x["name"]==sys.argv[2]]; print(json.dumps({k: d[0][k] for k in ("state","cells","counters")}) if d else "absent")' "$E2E_TMP/status.json" "$A" 2>&1 | head -c 400))"
else
    ok 1 "a: vnumactl --socket $VN_SOCK status --json answers ($(head -c 300 "$E2E_TMP/status.err"))"
fi
vnctl status >"$E2E_TMP/status.txt" 2>&1 && grep -q "$A" "$E2E_TMP/status.txt"
ok $? "a: vnumactl status (human table) names $A"

# ---- b. a domain without the element and an advise one are never changed ----
base=$(decisions_of "$V")
wait_for 15 passes_seen "$V" $((base + 4))
ok $? "b: vnumad ran 4 more passes over $V (advise: recorded every pass)"
# nothing moves $V's memory: once two counts agree, passes reuse them (sample.h)
wait_for 20 status_ok 'dom(args[0]) is not None and dom(args[0])["counters"]["memory_reuses"] > 0' "$V"
ok $? "b: $V: settled memory counts are reused, not queried every pass ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); d=[x for x in j["domains"] if x["name"]==sys.argv[2]]; print(json.dumps(d[0]["counters"]) if d else "absent")' "$E2E_TMP/status.json" "$V" 2>&1 | head -c 300))"
[ "$(vcpu_pins "$N")" = "$pins_N" ] && threads_are "$N" "$NARROW"
ok $? "b: $N (no element): pins unchanged ('$(vcpu_pins "$N")')"
[ "$(live_meta "$N")" = "$meta_N" ] && [ -z "$(live_state "$N")" ]
ok $? "b: $N: still no <balancer> metadata and no <state> of vnumad ('$(live_meta "$N" | head -c 200)')"
[ "$(taint "$N")" = "$taint_N" ] && ! taint "$N" | grep -q 'custom monitor'
ok $? "b: $N: not tainted custom-monitor: vnumad sent it no monitor command ('$(taint "$N")')"
! log_has "Tracking domain '$N'|domain='$N'"
ok $? "b: $N: vnumad neither tracks nor records it"
[ "$(vcpu_pins "$V")" = "$pins_V" ] && threads_are "$V" "$NARROW"
ok $? "b: $V (advise): pins unchanged ('$(vcpu_pins "$V")')"
meta_check "$V" 'el.attrib == {"mode": "advise"} and len(el) == 0 and [c.tag for c in st] == ["decision"] and rec["mode"] == "advise" and rec["action"] in ("advised", "none")'
ok $? "b: $V: the operator's element is unchanged (mode=\"advise\"), nothing saved in <original>, only a <decision> in vnumad's <state> ($(live_state "$V" | tr -d '\n' | head -c 200))"
log_has "decision domain='$V' pass=[0-9]+ action=(advised|none)" && ! log_has "decision domain='$V' .*action=acted"
ok $? "b: $V: decisions recorded as advised/none, never acted ($(show_log "decision domain='$V'" 1 | tr -d '\n'))"
[ -z "$(taint "$V")" ]
ok $? "b: $V (advise): never tainted: vnumad sent it no monitor command ('$(taint "$V")')"
if status_json; then
    json_ok "$E2E_TMP/status.json" '(lambda d: len(d["cells"]) == 2 and sorted(int(c["memory"].get("0", 0)) for c in d["cells"]) == [64 << 20, 96 << 20] and d["memory_error"] is None and d["counters"]["memory_scans"] > 0)(dom(args[0]))' "$V"
    ok $? "b: $V: both cells counted without the monitor, 64 and 96 MiB on node 0 ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); d=[x for x in j["domains"] if x["name"]==sys.argv[2]]; print(json.dumps({k: d[0][k] for k in ("cells","memory_error")}) if d else "absent")' "$E2E_TMP/status.json" "$V" 2>&1 | head -c 400))"
else
    ok 1 "b: vnumactl status --json answers ($(head -c 300 "$E2E_TMP/status.err"))"
fi
taint "$A" | grep -q 'custom monitor'
ok $? "a: $A (auto) is tainted custom-monitor, as the docs say: vnumad asks its monitor ('$(taint "$A")')"

# ---- f. bad <balancer> values ----
# bad_meta ELEMENT EXPECTED-ERROR-TEXT
bad_meta() {
    local el=$1 want=$2 out
    export J_SKIP
    J_SKIP=$(journal_lines)
    if ! out=$(set_meta "$B" "$el" 2>&1); then
        note "libvirt refuses $el: $out"
        return 2
    fi
    wait_for 10 status_ok '(lambda d: d is not None and d["state"] == "invalid-config" and args[1] in (d["error"] or ""))(dom(args[0]))' "$B" "$want"
    ok $? "f: $el: vnumactl status says invalid-config, '$want' ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); print([(d["state"], d["error"]) for d in j["domains"] if d["name"]==sys.argv[2]])' "$E2E_TMP/status.json" "$B" 2>&1 | head -c 300))"
    wait_for 10 journal_has "$B" 'r.get("reason", "").startswith("invalid-config") and sys.argv[4] in r["reason"] and r.get("action") == "skipped"' "$want"
    ok $? "f: $el: the journal records reason 'invalid-config: ...$want...'"
    wait_for 10 meta_check "$B" 'rec["action"] == "skipped" and rec["reason"].startswith("invalid-config: ") and args[0] in rec["reason"] and orig is None' "$want"
    ok $? "f: $el: the live metadata's <decision> says invalid-config"
    pins_are "$B" "$NARROW" && threads_are "$B" "$NARROW"
    ok $? "f: $el: pins left alone ('$(vcpu_pins "$B")')"
    J_SKIP=0
}
bad_meta '<balancer mode="sometimes"/>' "mode: expected auto, advise or off, got 'sometimes'"
bad_meta '<balancer mode="auto" nodes="99"/>' "nodes: host node 99 does not exist"
bad_meta '<balancer mode="auto" rate="-5"/>' "rate: expected MiB/s from 1 to 1048576, got '-5'"
bad_meta '<balancer mode="auto" priority="1000"/>' "priority: expected -100 to 100, got '1000'"
bad_meta '<balancer mode="auto" colour="blue"/>' "unknown attribute 'colour'"
bad_meta '<balancer/>' "mode is missing"
# entity tricks: an internal DTD subset; libvirt may refuse it before vnumad ever sees it
bad_meta '<!DOCTYPE balancer [<!ENTITY m "auto">]><balancer mode="&m;"/>' "DTD"
[ $? = 2 ] && note "f: the DOCTYPE/entity element cannot reach vnumad through libvirt: not counted"
# a character reference is plain XML: vnumad judges the decoded value ('&#115;ometimes' is 'sometimes')
bad_meta '<balancer mode="&#115;ometimes"/>' "mode: expected auto, advise or off, got 'sometimes'"
wait_for 30 passes_seen "$A" $(($(decisions_of "$A") + 2)) &&
    pins_are "$B" "$NARROW" && ! log_has "decision domain='$B' .*action=acted"
ok $? "f: $B was never acted on while its element was invalid (over two more passes)"

# ---- g. vnumactl by a non-root user ----
[ "$(stat -c '%a %U %F' "$VN_SOCK")" = "600 root socket" ]
ok $? "g: the socket is mode 0600, owned by root ($(stat -c '%a %U %F' "$VN_SOCK"))"
[ "$(stat -c '%a %U' "$(dirname "$VN_SOCK")")" = "700 root" ]
ok $? "g: its directory is mode 0700, owned by root ($(stat -c '%a %U' "$(dirname "$VN_SOCK")"))"
# a copy nobody can execute wherever the build tree is
mkdir -p "$E2E_TMP/bin" && cp "$BUILD/vnumactl" "$E2E_TMP/bin/vnumactl" && chmod 755 "$E2E_TMP/bin" "$E2E_TMP/bin/vnumactl"
nobody_ctl() {
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$E2E_TMP/bin/vnumactl" --socket "$VN_SOCK" status --json >"$E2E_TMP/nobody.out" 2>"$E2E_TMP/nobody.err"
}
# the path up to the socket's directory is open to everyone ($E2E_TMP itself is 0700)
chmod 755 "$E2E_TMP" "$(dirname "$VN_STATE")"
setpriv --reuid=65534 --regid=65534 --clear-groups "$E2E_TMP/bin/vnumactl" help >/dev/null 2>&1
ok $? "g: uid 65534 can run vnumactl itself (so a refusal below is about the socket)"
nobody_ctl
rc=$?
[ $rc -ne 0 ] && ! grep -q "$E2E_PREFIX" "$E2E_TMP/nobody.out" "$E2E_TMP/nobody.err" &&
    grep -Eqi 'permission|denied|EACCES' "$E2E_TMP/nobody.err"
ok $? "g: vnumactl as uid 65534 fails (exit $rc) and says why without domain data ($(head -c 200 "$E2E_TMP/nobody.err" | tr '\n' ' '))"
# behind the file modes, vnumad checks the peer's uid itself: open the modes up for a moment
chmod 755 "$(dirname "$VN_SOCK")" && chmod 666 "$VN_SOCK"
nobody_ctl
rc=$?
chmod 600 "$VN_SOCK"; chmod 700 "$(dirname "$VN_SOCK")" "$(dirname "$VN_STATE")" "$E2E_TMP"
[ $rc -ne 0 ] && ! grep -q "$E2E_PREFIX" "$E2E_TMP/nobody.out" "$E2E_TMP/nobody.err" &&
    grep -Eq 'PermissionDenied|only root may use' "$E2E_TMP/nobody.err" "$E2E_TMP/nobody.out"
ok $? "g: with the file modes opened, vnumad itself refuses uid 65534 with PermissionDenied (exit $rc: $(head -c 200 "$E2E_TMP/nobody.err" | tr '\n' ' '))"
status_ok 'dom(args[0]) is not None' "$A"
ok $? "g: root's vnumactl status still works"

# ---- d. libvirtd killed and restarted ----
connects=$(log_count 'Connected to qemu:///system')
lpid=$(kill_libvirtd)
ok $? "d: libvirtd (pid $lpid) killed and gone"
wait_for 15 log_has 'Lost the connection to libvirt \(qemu:///system\)'
ok $? "d: vnumad logs the loss ($(show_log 'Lost the connection|Cannot connect' 2 | tr '\n' ' '))"
# it has handled the loss once it tried to reconnect (and failed: libvirtd is still down)
wait_for 15 log_has 'Cannot connect to qemu:///system' && vnumad_alive && status_ok 'j["connected"] is False'
ok $? "d: vnumad keeps running, retries, and vnumactl status says connected: false"
start_libvirtd
ok $? "d: libvirtd restarted and answers"
wait_for 40 bash -c "[ \$(grep -c 'Connected to qemu:///system' '$VN_LOG') -gt $connects ]"
ok $? "d: vnumad reconnects ($(show_log 'Connected to|Cannot connect' 2 | tr '\n' ' '))"
narrow "$A"
wait_for 20 pins_are "$A" "$WIDE"
ok $? "d: $A narrowed again after the restart: the next pass re-applies '$WIDE' (got '$(vcpu_pins "$A")')"
threads_are "$A" "$WIDE" && vnumad_alive && status_ok 'j["connected"] is True and dom(args[0]) is not None' "$A"
ok $? "d: threads re-pinned, vnumad alive, status connected: true"

# ---- c. opt-out and SIGTERM restore ----
set_meta "$A" '<balancer mode="off"/>' >/dev/null
wait_for 10 pins_are "$A" "$NARROW"
ok $? "c: $A opted out live (mode=\"off\"): pins back to the originals '$NARROW' (got '$(vcpu_pins "$A")')"
threads_are "$A" "$NARROW"
ok $? "c: $A: vCPU threads' affinity restored ('$(vcpu_thread_affinity "$A")')"
log_has "Restored the original pinning and binding of '$A' \(opted out: mode off\)"
ok $? "c: vnumad logs the restore of $A"
meta_check "$A" 'el.attrib == {"mode": "off"} and orig is None and rec["action"] == "restored"'
ok $? "c: $A: <original> removed from the live metadata, the operator's mode=\"off\" kept"
wait_for 30 passes_seen "$S" $(($(decisions_of "$S") + 3)) && pins_are "$A" "$NARROW"
ok $? "c: $A stays untouched for the following three passes ('$(vcpu_pins "$A")')"
pins_are "$S" "$WIDE" && pins_are "$X" "$WIDE"
ok $? "c: before SIGTERM $S and $X carry vnumad's pins ('$(vcpu_pins "$S")', '$(vcpu_pins "$X")')"
vpid=$VN_PID
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "c: vnumad (pid $vpid) exits 0 on SIGTERM (exit $VN_EXIT)"
pins_are "$S" "$NARROW" && threads_are "$S" "$NARROW" && pins_are "$X" "$NARROW"
ok $? "c: SIGTERM restored the originals of $S ('$(vcpu_pins "$S")', threads '$(vcpu_thread_affinity "$S")') and $X ('$(vcpu_pins "$X")')"
log_has "Restored the original pinning and binding of '$S' \(vnumad stopped\)" && log_has 'vnumad stopped$'
ok $? "c: vnumad logs the restore and its stop"
meta_check "$S" 'el.attrib == {"mode": "auto"} and orig is None and rec["action"] == "restored"'
ok $? "c: $S: no <original> left in the live metadata"
pins_are "$B" "$NARROW" && pins_are "$N" "$NARROW" && pins_are "$V" "$NARROW"
ok $? "the domains vnumad never acted on still have their narrowed pins"

# ---- e. a domain destroyed in the middle of a pass ----
# vnumad held at $X's act stage (a test hold) before it changed anything. $X has narrowed pins
# again, so its first pass plans pins: destroy it after the pass sampled and decided it and
# before its act stage runs.
# $X is opted out while vnumad starts and opted in once the hold is armed: a first pass that
# ran before the hold would act on $X unheld.
set_meta "$X" '<balancer mode="off"/>' >/dev/null
start_vnumad "test_holds = yes"
ok $? "e: vnumad started again with test_holds = yes"
vn_hold act "$X" && set_meta "$X" '<balancer mode="auto"/>' >/dev/null
ok $? "e: act held for $X, then $X opted in (mode auto)"
wait_for 30 log_has "Tracking domain '$X'"
ok $? "e: vnumad tracks $X"
wait_held act && held_has act "$X"
ok $? "e: the pass that sampled $X is held at $X's act stage (pass $(held_pass act))"
$VIRSH destroy "$X" >/dev/null 2>&1
ok $? "e: $X destroyed during that pass"
dom_stopped() { [ "$($VIRSH domstate "$X" 2>/dev/null)" = "shut off" ]; }
wait_for 30 dom_stopped && is_held act
ok $? "e: libvirt says $X is shut off while the pass is still held ($($VIRSH domstate "$X" 2>&1))"
vn_release
wait_for 10 log_has "'$X' stopped|Domain '$X' went away|domain='$X' .*domain-gone"
# one more pass after the destroy, so a crash while handling it would show
wait_for 20 passes_seen "$S" $(($(decisions_of "$S") + 1)) && vnumad_alive
ok $? "e: vnumad is still running"
{ log_has "Domain '$X' went away during the pass" || log_has "decision domain='$X' .*reason='domain-gone'"; } &&
    journal_has "$X" 'r.get("reason") == "domain-gone"'
ok $? "e: the pass records $X as domain-gone (log and journal: $(show_log "'$X'" 4 | tr '\n' ' '))"
log_has "Domain '$X' stopped; no longer tracked"
ok $? "e: vnumad then drops $X on the lifecycle event"
status_ok 'j["connected"] is True and (dom(args[0]) is None or dom(args[0])["state"] == "stopped") and dom(args[1]) is not None' "$X" "$S"
ok $? "e: vnumactl status still answers ($X gone, $S tracked)"
base=$(decisions_of "$S")
wait_for 10 passes_seen "$S" $((base + 2))
ok $? "e: the following passes run ($S recorded again)"
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "e: vnumad exits 0 on SIGTERM (exit $VN_EXIT)"

other=$(foreign_vnumads)
[ -n "$other" ] && note "another vnumad appeared during the run and may explain failures: $other"
note "run time $((SECONDS - started)) s"
finish
