#!/bin/bash
# CLI tests of vnumactl's daemon subcommands (status, decisions, explain, advise,
# pause, resume): without a daemon, usage errors, --help, and against a fake
# vnumad (a small python3 server on a socket in a temp dir that answers each
# request with a canned reply of docs/control-protocol.md and logs the requests):
# the request sent, the human output of each subcommand, --json, error replies.
# `vnumactl advise` must print the same table as `vnumad --advise --table`.
# Run from the repository root with BUILD=build. Prints "ok N - desc" /
# "not ok N - desc" and "N passed, N failed".
set -u
BUILD=${BUILD:-build}
VNUMACTL=$BUILD/vnumactl
VNUMAD=$BUILD/vnumad
TOPO=tests/data/topologies/32em64t-2n8c2t-pci-normalio.xml
SNAP=tests/data/demo-snapshot.json

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
# run ARGS...: vnumactl's stdout in $tmp/out, stderr in $tmp/err, exit status in $rc
run() {
    "$VNUMACTL" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
one_line_err() { # stderr is exactly one line equal to $1
    [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ "$(cat "$tmp/err")" = "$1" ]
}

if [ ! -x "$VNUMACTL" ]; then
    check "$VNUMACTL is built" false
    finish
fi
command -v python3 >/dev/null || skip_all "cannot run here: python3 is missing (apt-get install python3)"

tmp=$(mktemp -d)
fake_pid=
trap '[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null; rm -rf "$tmp"' EXIT

# ---- no daemon ----
for sub in "status" "decisions" "explain vm1" "advise vm1" "pause vm1" "resume vm1"; do
    # shellcheck disable=SC2086
    run $sub --socket "$tmp/none.sock"
    check "$sub without a daemon: exit 1 (got $rc)" [ "$rc" -eq 1 ]
    check "$sub without a daemon: one clear line" one_line_err \
        "vnumactl: cannot connect to vnumad at $tmp/none.sock: No such file or directory"
done
run --socket "$tmp/none.sock" status
check "global --socket before the subcommand is used (got $rc)" \
    bash -c '[ "$1" -eq 1 ] && grep -qF "at $2:" "$3"' _ "$rc" "$tmp/none.sock" "$tmp/err"
: >"$tmp/regular"
run status --socket "$tmp/regular"
check "a socket path that is a regular file: exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "... and the message names it" grep -q "^vnumactl: cannot connect to vnumad at $tmp/regular: " "$tmp/err"

# ---- usage ----
run no-such-command
check "unknown subcommand: exit 2 (got $rc)" [ "$rc" -eq 2 ]
check "unknown subcommand: usage on stderr" grep -q '^Usage: vnumactl' "$tmp/err"
for sub in explain advise pause resume; do
    run $sub --socket "$tmp/none.sock"
    check "$sub without DOMAIN: exit 2 (got $rc)" [ "$rc" -eq 2 ]
done
run status a b --socket "$tmp/none.sock"
check "status with two domains: exit 2 (got $rc)" [ "$rc" -eq 2 ]
run snapshot --table --output "$tmp/x.json" --socket "$tmp/none.sock"
check "snapshot --table with --output: exit 2, one or the other (got $rc)" \
    bash -c '[ "$1" -eq 2 ] && grep -q "one or the other" "$2" && [ ! -e "$3" ]' _ "$rc" "$tmp/err" "$tmp/x.json"
run snapshot extra --socket "$tmp/none.sock"
check "snapshot with an argument: exit 2 (got $rc)" [ "$rc" -eq 2 ]
run status --bogus
check "unknown option: exit 2 (got $rc)" [ "$rc" -eq 2 ]
run status --socket
check "--socket without a path: exit 2 (got $rc)" [ "$rc" -eq 2 ]
run --help
check "--help exits 0" [ "$rc" -eq 0 ]
for sub in topology status decisions explain advise pause resume help; do
    check "--help lists $sub" grep -q "^  $sub\\b" "$tmp/out"
done
check "--help names the default socket" grep -q '/run/vnuma/vnumad.sock' "$tmp/out"
run status --help
check "status --help exits 0 with its synopsis" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^Usage: vnumactl status \[DOMAIN\]" "$2"' _ "$rc" "$tmp/out"

# ---- topology still works ----
run topology --input "$TOPO"
check "topology --input still works (got $rc)" \
    bash -c '[ "$1" -eq 0 ] && grep -q "^source: $2\$" "$3"' _ "$rc" "$TOPO" "$tmp/out"
run topology --synthetic "pack:2 numa:2 core:4 pu:1" --json
check "topology --synthetic --json still works (got $rc)" \
    python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["nodes"]) == 4' "$tmp/out"

# ---- against a fake vnumad ----
plan_ok=false
if [ -x "$VNUMAD" ] &&
    "$VNUMAD" --advise --topology "$TOPO" --snapshot "$SNAP" --json >"$tmp/plan.json" 2>/dev/null &&
    "$VNUMAD" --advise --topology "$TOPO" --snapshot "$SNAP" --table >"$tmp/plan.table" 2>/dev/null; then
    plan_ok=true
else
    cp tests/golden/demo-plan.json "$tmp/plan.json"
fi
# vnumad is built with the tests: a crash or an error here is a failure, not a fallback
check "vnumad --advise --json and --table on the demo snapshot" $plan_ok

cat >"$tmp/fake.py" <<'EOF'
import json, os, socket, sys
path, plan_file, log = sys.argv[1:4]
record = {"domain": "web1", "uuid": "u-1", "pass": 42, "time": "2025-01-02T03:04:05Z",
          "mode": "auto", "action": "acted", "reason": "ok",
          "cells": [{"cell": 0, "node": 1, "target": 0, "reason": "none",
                     "rules": ["locality", "prefer-vcpu-move"], "pins": 2, "pins_done": 2,
                     "bytes_planned": 536870912, "bytes_moved": 536870912,
                     "locality_before": 20.0, "locality_after": 100.0},
                    {"cell": 1, "node": None, "target": 1, "reason": "already-local",
                     "rules": [], "pins": 0, "pins_done": 0, "bytes_planned": 0,
                     "bytes_moved": 0, "locality_before": 100.0, "locality_after": 100.0}],
          "bytes_moved": 536870912}
older = dict(record, **{"pass": 41, "time": "2025-01-02T03:03:55Z", "action": "none",
                         "reason": "paused", "cells": [], "bytes_moved": 0})
replies = {
    "status": {"pass": 42, "connected": True, "domains": [
        {"name": "web1", "uuid": "u-1", "mode": "auto", "paused": False, "state": "ok",
         "error": None, "agent": {"connected": True, "hint_age_s": 3.25}, "age_passes": 17,
         "cells": [{"cell": 0, "target_node": 0, "locality": 100.0,
                    "vcpus": {"0": 4, "1": 0}, "memory": {"0": 2147483648, "1": 0},
                    "page_size": 4096, "memory_pinned": "none"},
                   {"cell": 1, "target_node": None, "locality": 37.5,
                    "vcpus": {"0": 1, "1": 3}, "memory": {"1": 1610612736, "0": 536870912},
                    "page_size": 2097152, "memory_pinned": "vfio"}],
         "counters": {"passes": 17, "memory_scans": 120, "pins": 4, "pages_moved": 131072,
                      "bytes_moved": 536870912, "errors": 0}},
        {"name": "db", "uuid": "u-2", "mode": "advise", "paused": True, "state": "error",
         "error": "cannot pin: permission denied", "agent": {"connected": False,
         "hint_age_s": None}, "age_passes": 3, "cells": [], "counters": {"passes": 3,
         "memory_scans": 0, "pins": 0, "pages_moved": 0, "bytes_moved": 0, "errors": 1}}]},
    "decisions": {"decisions": [record, older]},
    "explain": {"domain": "web1", "lines": ["domain web1: mode auto, 17 passes old",
                "cell 0: runs on node 1, target node 0: none (rules: locality)"],
                "record": record},
    "advise": json.load(open(plan_file)),
    "pause": {"domain": "web1", "paused": True},
    "resume": {"domain": "web1", "paused": False},
}
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(8)
while True:
    c, _ = s.accept()
    with c.makefile("rb") as f:  # the makefile holds the fd open: close it first
        line = f.readline(5000)
    with open(log, "ab") as l:
        l.write(line)
    req = json.loads(line)
    dom = req.get("domain")
    if dom == "nosuch":
        rep = {"error": {"class": "NoSuchDomain", "desc": "no opted-in domain named 'nosuch'"}}
    elif dom == "garbage":
        c.sendall(b"this is not json\n"); c.close(); continue
    elif dom == "silent":
        c.close(); continue
    else:
        rep = {"return": replies[req["command"]]}
    c.sendall(json.dumps(rep).encode() + b"\n")
    c.close()
EOF
sock=$tmp/fake.sock
python3 "$tmp/fake.py" "$sock" "$tmp/plan.json" "$tmp/requests" 2>"$tmp/fake.err" &
fake_pid=$!
wait_for 60 test -S "$sock"
check "fake vnumad is listening" [ -S "$sock" ]

last_request() { tail -n 1 "$tmp/requests"; }

run status --socket "$sock"
check "status: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "status: request is {\"command\": \"status\"}" \
    python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == {"command": "status"}' "$(last_request)"
cat >"$tmp/want" <<'EOF'
vnumad: pass 42, libvirt connected, 2 domains

web1: mode auto, paused no, state ok, error -, agent connected (last hint 3.2 s ago), age 17 passes
  cell    node0 MiB    node1 MiB  node0 vCPUs  node1 vCPUs  locality  target  pages memory
     0       2048.0          0.0            4            0    100.0%       0     4K movable
     1        512.0       1536.0            1            3     37.5%       -     2M vfio
  counters: passes 17, memory scans 120, pins 4, pages moved 131072, bytes moved 512.0 MiB, errors 0

db: mode advise, paused yes, state error, error cannot pin: permission denied, agent not connected (no hint yet), age 3 passes
  cell  locality  target  pages memory
  (no cells known yet)
  counters: passes 3, memory scans 0, pins 0, pages moved 0, bytes moved 0 B, errors 1
EOF
check "status: human output" diff -u "$tmp/want" "$tmp/out"

run status web1 --json --socket "$sock"
check "status DOM --json: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "status DOM: request carries the domain" \
    python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == {"command": "status", "domain": "web1"}' "$(last_request)"
check "status --json: pretty JSON of the return value" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["pass"] == 42 and d["domains"][0]["name"] == "web1"
assert len(open(sys.argv[1]).read().splitlines()) > 10' "$tmp/out"

run decisions --socket "$sock"
check "decisions: exit 0 (got $rc)" [ "$rc" -eq 0 ]
cat >"$tmp/want" <<'EOF'
2025-01-02T03:04:05Z pass 42 web1 acted: cell 0: node 1 -> 0 none (rules locality,prefer-vcpu-move); cell 1: node - -> 1 already-local (rules -); moved 512.0 MiB
2025-01-02T03:03:55Z pass 41 web1 none (paused): no cells; moved 0 B
EOF
check "decisions: one line per record, newest first" diff -u "$tmp/want" "$tmp/out"

run explain web1 --socket "$sock"
check "explain: exit 0 (got $rc)" [ "$rc" -eq 0 ]
cat >"$tmp/want" <<'EOF'
domain web1: mode auto, 17 passes old
cell 0: runs on node 1, target node 0: none (rules: locality)
latest decision: 2025-01-02T03:04:05Z pass 42 web1 acted: cell 0: node 1 -> 0 none (rules locality,prefer-vcpu-move); cell 1: node - -> 1 already-local (rules -); moved 512.0 MiB
EOF
check "explain: the lines, then the latest record" diff -u "$tmp/want" "$tmp/out"

run advise web1 --socket "$sock"
check "advise: exit 0 (got $rc)" [ "$rc" -eq 0 ]
check "advise: request is {\"command\": \"advise\", \"domain\": \"web1\"}" \
    python3 -c 'import json, sys; assert json.loads(sys.argv[1]) == {"command": "advise", "domain": "web1"}' "$(last_request)"
check "advise: a table with a row per cell and an actions line" \
    bash -c 'grep -q "^DOMAIN  *CELL MODE  *NOW TARGET  *LOCALITY PINS  *MOVE  DECISION$" "$1" &&
             grep -q "^db-new  *0 auto  *0  *0  *12% -> 100%  *0  *896.0 MiB  act: " "$1" &&
             grep -q "^    pin vcpu 2 -> cpus 0-7,16-23$" "$1" &&
             grep -q "^    move 896.0 MiB node 1 -> node 0 (+87.5 points)$" "$1" &&
             grep -q "^5 actions$" "$1"' _ "$tmp/out"
if $plan_ok; then
    sed -n '/^DOMAIN  *CELL MODE/,/ actions$/p' "$tmp/plan.table" >"$tmp/want"
    check "advise: the same table as vnumad --advise --table" diff -u "$tmp/want" "$tmp/out"
fi
run advise web1 --json --socket "$sock"
check "advise --json: the plan JSON unchanged" python3 -c 'import json, sys
assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' "$tmp/out" "$tmp/plan.json"

run pause web1 --socket "$sock"
check "pause: 'web1 paused' (got $rc: $(cat "$tmp/out"))" \
    bash -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = "web1 paused" ]' _ "$rc" "$tmp/out"
run resume web1 --socket "$sock"
check "resume: 'web1 resumed' (got $rc: $(cat "$tmp/out"))" \
    bash -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = "web1 resumed" ]' _ "$rc" "$tmp/out"
run --socket "$sock" resume web1 --json
check "global --socket and resume --json" python3 -c 'import json, sys
assert json.load(open(sys.argv[1])) == {"domain": "web1", "paused": False}' "$tmp/out"
run pause 'we"ird \ name' --socket "$sock"
check "a domain name with quotes and backslashes is sent as a JSON string" \
    python3 -c 'import json, sys; assert json.loads(sys.argv[1])["domain"] == "we\"ird \\ name"' "$(last_request)"

# error replies
run explain nosuch --socket "$sock"
check "error reply: exit 1 (got $rc)" [ "$rc" -eq 1 ]
check "error reply: 'vnumactl: <desc>' on stderr" one_line_err "vnumactl: no opted-in domain named 'nosuch'"
check "error reply: nothing on stdout" [ ! -s "$tmp/out" ]
run explain garbage --socket "$sock"
check "malformed reply: exit 1 (got $rc)" \
    bash -c '[ "$1" -eq 1 ] && grep -q "^vnumactl: malformed reply" "$2"' _ "$rc" "$tmp/err"
run explain silent --socket "$sock"
check "no reply: exit 1 (got $rc)" \
    bash -c '[ "$1" -eq 1 ] && grep -q "^vnumactl: vnumad at .* closed the connection without a reply" "$2"' _ "$rc" "$tmp/err"
check "fake vnumad saw only valid requests" [ ! -s "$tmp/fake.err" ]

"$VNUMACTL" --version >"$tmp/out" 2>&1
check "vnumactl --version ($(cat "$tmp/out"))" grep -qx "vnumactl [0-9][0-9.]*" "$tmp/out"
"$BUILD/vnuma-agent" --once stray >"$tmp/out" 2>"$tmp/err"
rc=$?
check "vnuma-agent refuses a stray argument (exit $rc, $(head -n 1 "$tmp/err"))" \
    bash -c '[ "$1" -eq 2 ] && [ ! -s "$2" ] && grep -q "unexpected argument .stray." "$3"' _ "$rc" "$tmp/out" "$tmp/err"

# ---- history over the files vnumad rotated the journal into (host/journal.h) ----
for i in 1 2 3 4; do printf '{"domain":"web","pass":%d,"action":"nothing","cells":[]}\n' "$i"; done >"$tmp/all"
sed -n 1p "$tmp/all" >"$tmp/j.jsonl.3"
sed -n 2p "$tmp/all" >"$tmp/j.jsonl.2"
{ sed -n 3p "$tmp/all"; echo '{"domain":"other","pass":9}'; } >"$tmp/j.jsonl.1"
sed -n 4p "$tmp/all" >"$tmp/j.jsonl"
"$VNUMACTL" history web --journal "$tmp/j.jsonl" --json >"$tmp/hist.json" 2>"$tmp/err"
passes=$(python3 -c 'import json,sys; print(*[r["pass"] for r in json.load(open(sys.argv[1]))["records"]])' "$tmp/hist.json" 2>/dev/null)
check "history reads journal.jsonl.3 ... .1 before journal.jsonl, oldest first (passes: $passes)" [ "$passes" = "1 2 3 4" ]

finish
