#!/bin/bash
# A guest floods its agent channel (real libvirtd, a TCG guest booted with
# vm-images/guest/hostile.c in flood mode: it answers the hello, then writes "a\n" lines as fast
# as the port takes them, forever). vnumad's loop also serves libvirt's events, the passes and
# the control socket, and its CPU is charged to vnumad, not to the guest. vnumad reads at most
# AGENTLINK_BYTES_PER_S (256 KiB) a second past a 256 KiB burst, then stops reading the channel
# for a second (the guest's writes wait meanwhile), counted in vnuma_agent_throttled_total.
# Over a WINDOW-second window (measured, not waited for: a rate needs a time) after the first
# throttle:
#   - the bytes vnumad read (vnuma_agent_read_bytes_total) are within the budget for the
#     window, however fast the guest wrote: at most 256 KiB x (WINDOW + 1) + the burst;
#   - the guest kept writing past it: the throttle count grew;
#   - vnumad's CPU time (utime + stime) was at most MAX_CPU_PCT (5) percent of one core;
#   - vnumad answers its control socket, and stops cleanly.
# Before the budget vnumad read everything the guest wrote, 64 KiB per wake-up. Prints the
# numbers (docs/benchmarks.md "A guest flooding its channel"). Exits 77 only when no guest can
# be built or booted here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

WINDOW=${WINDOW:-10}
MAX_CPU_PCT=${MAX_CPU_PCT:-5}
BUDGET=$((256 * 1024))
e2e_preamble
guest_files

G=${E2E_PREFIX}flood
METRICS=$E2E_TMP/metrics.prom
console=$DIR/$G.console
: >"$console"
chmod 666 "$console"
agent_guest_xml "$G" "$DIR" "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off vnuma.agent=0 vnuma.workload=hostile-flood" \
    "$console" 128 'mode="auto"' >"$DIR/$G.xml"
echo "$G" >>"$E2E_TMP/domains"
start_vnumad "interval = 1" "metrics_file = $METRICS"
$VIRSH define "$DIR/$G.xml" >"$E2E_TMP/define.out" 2>&1 && $VIRSH start "$G" >>"$E2E_TMP/define.out" 2>&1 ||
    skip_all "cannot start a TCG guest with direct kernel boot here: $(tail -n 1 "$E2E_TMP/define.out")"
guest_booted "$G" "$console"
ok $? "the flooding guest booted into its init"
wait_for 300 log_has "vnuma-agent hostile .* of '$G' connected"
ok $? "vnumad opened its channel, hello done"
throttled() { metric_sum "$METRICS" 'vnuma_agent_throttled_total\{[^}]*\}'; }
read_bytes() { metric_sum "$METRICS" 'vnuma_agent_read_bytes_total\{[^}]*\}'; }
throttled_once() { [ "$(throttled)" -ge 1 ]; }
wait_for 120 throttled_once
ok $? "the flood went past the budget: vnumad stopped reading the channel (throttled $(throttled))"

# the window: the metrics file is rewritten each pass; the numbers are the file's at each end
wait_passes 1 30
t0=$(throttled) b0=$(read_bytes) c0=$(vnumad_cpu_ticks) s0=$(date +%s.%N)
sleep "$WINDOW"
wait_passes 1 30
t1=$(throttled) b1=$(read_bytes) c1=$(vnumad_cpu_ticks) s1=$(date +%s.%N)
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
secs=$(calc %.3f "$s1 - $s0")
hz=$(getconf CLK_TCK)
read_kib=$(((b1 - b0) / 1024))
# the window's own seconds and one each side (the file's numbers are a pass old), the burst
bound_kib=$(calc %d "($BUDGET * ($secs + 2) + $BUDGET) / 1024")
cpu_pct=$(calc %.2f "100 * ($c1 - $c0) / $hz / $secs")
note "window ${secs} s: vnumad read ${read_kib} KiB ($(calc %.1f "$read_kib / $secs") KiB/s), throttled $((t1 - t0)) times, used ${cpu_pct}% of one core"
[ "$read_kib" -le "$bound_kib" ]
ok $? "vnumad read no more than its budget over the window: ${read_kib} KiB <= ${bound_kib} KiB"
[ "$t1" -gt "$t0" ]
ok $? "the guest kept writing past it: throttled $((t1 - t0)) more times in the window"
[ "$(calc %d "$cpu_pct <= $MAX_CPU_PCT")" = 1 ]
ok $? "the flood cost vnumad ${cpu_pct}% of one core (at most ${MAX_CPU_PCT}%)"
vnctl status --json >"$E2E_TMP/status.json" 2>&1 &&
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return",j); d=[x for x in j["domains"] if x["name"]==sys.argv[2]][0]; sys.exit(0 if d["agent"]["throttled"] > 0 and d["agent"]["read_bytes"] > 0 else 1)' "$E2E_TMP/status.json" "$G"
ok $? "vnumactl status answers during the flood and shows the throttling"
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad stops cleanly (exit $VN_EXIT)"
finish
