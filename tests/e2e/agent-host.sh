#!/bin/bash
# vnumad and real guests' agents over the virtio-serial channel:
#   - a good guest (vnuma-agent, memtouch writing 48 MiB on guest node 1 every 250 ms, opted
#     in: hot to the agent's 4 s soft-dirty scan without a whole vCPU spent on it): vnumad
#     opens the channel when the guest opens its port (VSERPORT_CHANGE), receives validated
#     hints naming memtouch, and the hottest hot range decide gets for cell 1 lies inside
#     guest node 1's RAM (ram-node1 in `info mtree -f`); vnumactl status shows the agent;
#   - a hostile guest (vm-images/guest/hostile.c in place of the agent): oversized line, deep
#     nesting, invalid UTF-8, a flood, lies (vCPU 99, node 7, a range at 1 TiB), a line never
#     finished: vnumad stays up, its heap stays bounded (vnumactl status "heap_bytes", both
#     builds; VmRSS too on a plain build), every kind of error is counted and
#     shown, and the good guest keeps being served meanwhile.
# Exits 77 only when no guest can be built or booted here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

# shellcheck disable=SC2119 # every check with its defaults
e2e_preamble
guest_files


boot() { # boot NAME CMDLINE: defines and starts, prints nothing
    local console=$DIR/$1.console
    : >"$console"
    chmod 666 "$console"
    agent_guest_xml "$1" "$DIR" "$2" "$console" 128 'mode="auto"' >"$DIR/$1.xml"
    echo "$1" >>"$E2E_TMP/domains"
    $VIRSH define "$DIR/$1.xml" >"$E2E_TMP/define.out" 2>&1 && $VIRSH start "$1" >>"$E2E_TMP/define.out" 2>&1
}

base="console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off"
GOOD=${E2E_PREFIX}good
BAD=${E2E_PREFIX}hostile
start_vnumad "interval = 1" "log_level = debug"
boot "$GOOD" "$base vnuma.workload=memtouch,node=1,mib=48,pause=250" ||
    skip_all "cannot start a TCG guest with direct kernel boot here: $(tail -n 1 "$E2E_TMP/define.out")"
boot "$BAD" "$base vnuma.agent=0 vnuma.workload=hostile" ||
    skip_all "cannot start a second TCG guest here: $(tail -n 1 "$E2E_TMP/define.out")"
ok 0 "two guests started: $GOOD (agent + memtouch on guest node 1), $BAD (hostile peer)"
guest_booted "$GOOD" "$DIR/$GOOD.console" && guest_booted "$BAD" "$DIR/$BAD.console"
ok $? "both guest kernels booted into the init"

wait_for 300 log_has "vnuma-agent .* of '$GOOD' connected"
ok $? "vnumad opened $GOOD's channel when the guest opened its port, hello done"
wait_for 60 log_has "vnuma-agent hostile .* of '$BAD' connected"
ok $? "vnumad opened $BAD's channel too"

status() { vnctl status --json >"$E2E_TMP/status.json" 2>/dev/null; }
# py EXPR: EXPR over d (the named domain's status) and j (the whole status)
py() {
    python3 - "$E2E_TMP/status.json" "$1" "$2" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("return", j)
ds = [x for x in j["domains"] if x["name"] == sys.argv[2]]
d = ds[0] if ds else None
sys.exit(0 if d is not None and eval(sys.argv[3]) else 1)
PY
}
good_has_memtouch() {
    status && py "$GOOD" 'any(p["comm"] == "memtouch" for p in d["agent"].get("top", [])) and len(d["cells"]) == 2 and len(d["cells"][1]["hot"]) > 0'
}
wait_for 120 good_has_memtouch
ok $? "vnumad received validated hints from $GOOD naming memtouch, with hot ranges for cell 1"

$VIRSH qemu-monitor-command "$GOOD" --hmp 'info mtree -f' >"$DIR/mtree" 2>&1
awk '/ram-node1/ && $1 ~ /^[0-9a-f]+-[0-9a-f]+$/ {split($1, a, "-"); print a[1], a[2]}' "$DIR/mtree" |
    sort -u >"$DIR/node1"
# heat needs two collections (soft-dirty: clear, then look), so poll for a hint set with heat
first_hot_in_node1() {
    status && python3 - "$E2E_TMP/status.json" "$GOOD" "$DIR/node1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("return", j)
d = [x for x in j["domains"] if x["name"] == sys.argv[2]][0]
r = [tuple(int(x, 16) for x in l.split()) for l in open(sys.argv[3]) if l.strip()]
hot = d["cells"][1]["hot"][0]
print("# cell 1's first hot range:", hot, "ram-node1:", r)
ok = any(hot["gpa"] >= a and hot["gpa"] + hot["length"] - 1 <= b for a, b in r) and hot["heat"] > 0
sys.exit(0 if ok else 1)
PY
}
wait_for 60 first_hot_in_node1
ok $? "the first hot range decide gets for cell 1 (moved first when memory moves) lies inside guest node 1 (ram-node1) and is hot"
status && py "$GOOD" 'd["agent"]["connected"] and d["agent"]["hint_age_s"] is not None and d["agent"]["hint_age_s"] < 5'
ok $? "vnumactl status: $GOOD's agent connected, hints fresh"
vnctl status >"$E2E_TMP/status.txt" 2>&1
grep -q "$GOOD: .*agent connected" "$E2E_TMP/status.txt"
ok $? "the human status says the agent is connected ($(grep "$GOOD:" "$E2E_TMP/status.txt" | head -c 200))"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$VN_PID/status"; }
rss0=$(rss_kib) heap0=$(vnumad_heap)
bad_counted() { # bad_counted KIND...
    status || return 1
    local k
    for k in "$@"; do py "$BAD" "d['agent']['errors'].get('$k', 0) > 0" || return 1; done
}
wait_for 60 bad_counted oversize depth utf8 rate out-of-bounds
ok $? "the hostile guest's oversized line, deep nesting, invalid UTF-8, flood and lies are each refused and counted: $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); print([x["agent"]["errors"] for x in j["domains"] if x["name"]==sys.argv[2]])' "$E2E_TMP/status.json" "$BAD")"
status && py "$BAD" 'not any(p.get("comm") == "liar" and p.get("vcpus", 0) > 1 for p in d["agent"].get("top", []))'
ok $? "the lie about vCPU 99 was dropped before use"
status && py "$BAD" 'all(len(c["hot"]) == 0 for c in d["cells"])'
ok $? "no hot range of the hostile guest reached the decide stage (its range at 1 TiB is outside its RAM)"
# three more passes with the slowloris line sitting in the buffer (counted, not timed)
wait_passes 3 60 && vnumad_alive
ok $? "vnumad is still running after every attack (three more passes with the slowloris line in the buffer)"
rss1=$(rss_kib) heap1=$(vnumad_heap)
# the heap (status heap_bytes, exact under ASan) holds in both builds: what the hostile guest
# made vnumad keep, which LeakSanitizer at exit never calls a leak while it is referenced
[ -n "$heap0" ] && [ -n "$heap1" ] && [ "$heap1" -lt $((heap0 + 4096)) ]
ok $? "vnumad's heap stays bounded under the attacks (${heap0} KiB -> ${heap1} KiB, at most 4 MiB more)"
if vnumad_sanitized; then  # ASan's quarantine keeps freed memory: the heap above is the bound
    note "not checked: vnumad's RSS bound (an ASan build, its quarantine of freed memory; RSS ${rss0} KiB -> ${rss1} KiB)"
else
    [ -n "$rss0" ] && [ -n "$rss1" ] && [ "$rss1" -lt $((rss0 + 16384)) ] && [ "$rss1" -lt 131072 ]
    ok $? "vnumad's memory stays bounded (RSS ${rss0} KiB -> ${rss1} KiB)"
fi
status && py "$GOOD" 'd["agent"]["connected"] and d["agent"]["hint_age_s"] < 5'
ok $? "meanwhile $GOOD is still served (hints $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); print([x["agent"]["hint_age_s"] for x in j["domains"] if x["name"]==sys.argv[2]])' "$E2E_TMP/status.json" "$GOOD") s old)"
stop_vnumad
ok $? "vnumad stops cleanly"
finish
