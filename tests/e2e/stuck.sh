#!/bin/bash
# A domain that does not answer, and one with a libvirt job in progress (issue 14): the
# others go on, the control socket keeps answering, each is reported once and taken up
# again when it is back.
#   - J: opted in, with a memory-only dump job held open (`virsh dump --live --memory-only`
#     into a FIFO read slowly) before vnumad starts: every call that changes it would wait
#     for the job, so vnumad skips it ("skipped", reason "job: ...") and changes nothing;
#     once the job ends it is sampled and placed.
#   - H: its QEMU stopped with SIGSTOP, then opted in: vnumad's first sample sends
#     query-cpus-fast, which libvirt waits on forever; after the domain timeout (5 s) the
#     pass goes on without it, the log says once that it does not answer, later passes skip
#     it, `vnumactl status` answers meanwhile; after SIGCONT the call returns, the log says it
#     answers again, and it is sampled and placed.
#   - A: opted in and idle, balanced all along.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

e2e_preamble --built vnumad --tool python3 "status parsing"
METRICS=$E2E_TMP/metrics.prom
T=tests/data/domains/storm-two-cell.xml.in
READER="" HPID=""
stuck_cleanup() {
    [ -n "$HPID" ] && kill -CONT "$HPID" 2>/dev/null
    [ -n "$READER" ] && kill "$READER" 2>/dev/null
    return 0
}
trap 'rc=$?; stuck_cleanup; (exit $rc); e2e_cleanup' EXIT

A=$(define_domain stuck-a "$T" "$(optin_sed 'mode="auto"')") ||
    skip_all "cannot start a TCG domain here: $(tail -n 1 "$E2E_TMP/define.out")"
J=$(define_domain stuck-j "$T" "$(optin_sed 'mode="auto"')")
ok $? "domains $A and $J started, opted in"
H=$(define_domain stuck-h "$T" "$(optin_sed 'mode="off"')")
ok $? "domain $H started, not opted in (mode off)"

# J: a dump job that lasts: QEMU writes the guest's memory into a FIFO read at 80 KB/s
mkfifo "$E2E_TMP/dump.fifo"
python3 -c '
import sys, time
with open(sys.argv[1], "rb") as f:
    while f.read(4096):
        time.sleep(0.05)' "$E2E_TMP/dump.fifo" 200>&- &
READER=$!
$VIRSH dump --live --memory-only "$J" "$E2E_TMP/dump.fifo" >"$E2E_TMP/dump.out" 2>&1 200>&- &
job_runs() { $VIRSH domjobinfo "$1" 2>/dev/null | grep -Eq '^Job type: +(Unbounded|Bounded)'; }
wait_for 20 job_runs "$J"
ok $? "$J has a dump job in progress ($($VIRSH domjobinfo "$J" 2>&1 | head -n 2 | tr -s ' \n' ' '))"
J_PINS=$(vcpu_pins "$J")

start_vnumad "interval = 1" "metrics_file = $METRICS"
ok $? "vnumad started"
placed() { # DOM has a target for each cell in vnumactl status
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
d = [d for d in j["domains"] if d["name"] == sys.argv[1]]
sys.exit(0 if d and d[0].get("cells") and all(c.get("target_node") is not None for c in d[0]["cells"]) else 1)' "$1"
}
journal_reason() { # DOM REGEX: a journal record of DOM whose reason matches
    python3 -c '
import json, re, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("domain") == sys.argv[2] and re.search(sys.argv[3], r.get("reason", "")):
        sys.exit(0)
sys.exit(1)' "$VN_JOURNAL" "$1" "$2" 2>/dev/null
}
wait_for 30 placed "$A"
ok $? "$A is sampled and placed"
wait_for 20 journal_reason "$J" '^job: '
ok $? "$J is skipped while its job runs (journal: reason 'job: ...')"
wait_passes 3
job_runs "$J" && [ "$(vcpu_pins "$J")" = "$J_PINS" ] && ! placed "$J"
ok $? "$J: nothing changed while the job runs (pins $(vcpu_pins "$J"))"
skips=$(metric_sum "$METRICS" '^vnuma_domain_skips_total\{reason="job"\}$')
[ "${skips:-0}" -ge 1 ]
ok $? "vnuma_domain_skips_total{reason=\"job\"} counts it ($skips)"

# H: its QEMU stopped, then opted in
HPID=$(qemu_pid "$H")
kill -STOP "$HPID"
set_meta "$H" '<balancer mode="auto"/>' >/dev/null
ok $? "$H's QEMU (pid $HPID) stopped, then $H opted in"
wait_for 30 log_has "Domain '$H' does not answer"
ok $? "the log says that $H does not answer ($(grep -m1 "'$H' does not answer" "$VN_LOG" | cut -c1-160))"
# while it hangs: the control socket answers at once, passes go on, A is balanced
p0=$(vn_pass)
a0=$(vnctl status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("return",j); print([d for d in j["domains"] if d["name"]==sys.argv[1]][0]["counters"]["passes"])' "$A")
python3 - "$BUILD/vnumactl" "$VN_SOCK" >"$E2E_TMP/lat.out" <<'PY'
import subprocess, sys, time
lat = []
for i in range(25):
    t = time.monotonic()
    r = subprocess.run([sys.argv[1], "--socket", sys.argv[2], "status"], capture_output=True, timeout=30)
    lat.append((time.monotonic() - t) * 1000 if r.returncode == 0 else 1e9)
    time.sleep(0.2)
lat.sort()
print("calls=%d p50=%.0f ms max=%.0f ms" % (len(lat), lat[len(lat) // 2], lat[-1]))
sys.exit(0 if lat[-1] < 2000 else 1)
PY
ok $? "vnumactl status answers while $H hangs ($(cat "$E2E_TMP/lat.out"))"
p1=$(vn_pass)
a1=$(vnctl status --json | python3 -c 'import json,sys; j=json.load(sys.stdin); j=j.get("return",j); print([d for d in j["domains"] if d["name"]==sys.argv[1]][0]["counters"]["passes"])' "$A")
[ "$p1" -ge $((p0 + 3)) ] && [ "$a1" -ge $((a0 + 3)) ]
ok $? "passes go on and sample $A meanwhile (passes $p0 -> $p1, $A sampled $a0 -> $a1)"
[ "$(log_count "Domain '$H' does not answer")" = 1 ]
ok $? "said once ($(log_count "Domain '$H' does not answer") lines over $((p1 - p0)) passes)"
nans=$(metric_sum "$METRICS" '^vnuma_domain_skips_total\{reason="not-answering"\}$')
[ "${nans:-0}" -ge 2 ]
ok $? "vnuma_domain_skips_total{reason=\"not-answering\"} counts the passes that skipped it ($nans)"
kill -CONT "$HPID"
HPID=""
wait_for 30 log_has "Domain '$H' answers again"
ok $? "after SIGCONT the log says $H answers again"
wait_for 30 placed "$H"
ok $? "$H is then sampled and placed"

# J: the job ends (its reader goes away: the dump fails), J is taken up
kill "$READER" 2>/dev/null
READER=""
job_gone() { ! job_runs "$1"; }
wait_for 60 job_gone "$J"
ok $? "$J's job ended"
wait_for 30 placed "$J"
ok $? "$J is sampled and placed once the job ended"
vnumad_alive
ok $? "vnumad is alive"
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad exits 0 on SIGTERM (exit $VN_EXIT)"
finish
