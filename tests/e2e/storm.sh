#!/bin/bash
# A short start/stop storm (issue 7; the 5-minute version is tests/bench/storm.sh): 12 tiny
# opted-in domains (tests/data/domains/storm-flat.xml.in, storm-two-cell.xml.in: TCG, SeaBIOS
# with nothing to boot, 32-64 MiB, idle) started and destroyed in rounds (lib.sh storm_round:
# all start, a random half destroyed and started again, all destroyed) while a vnumad with
# interval 1 s balances them: one warm-up round, then STORM_ROUNDS (2) measured rounds.
# Checks, comparing the start (after the warm-up, every domain stopped) with the end:
#   - vnumad is alive;
#   - its open fds did not grow (slack 2: a control client, the metrics file being replaced);
#   - its heap (vnumactl status "heap_bytes": what its allocator handed out and did not take
#     back) grew by less than 128 KiB from start to end, and by less than 64 KiB in the last
#     round (18 domain runs): memory still referenced that grows with each domain run, which
#     LeakSanitizer's check at exit never calls a leak. It holds in the ASan build, where CI
#     runs this test: ASan counts exactly (flat to the KiB here), where VmRSS grows with its
#     quarantine of freed memory (137 -> 305 MiB);
#   - on a plain build, its VmRSS also grew by less than 2 MiB from start to end, and by less
#     than 512 KiB in the last round: after the warm-up round the allocator still grows by up
#     to about 1 MiB in the next round (30 domains) and then stays flat (32 KiB over 5 more
#     rounds, 225 domain runs; docs/benchmarks.md, "Start/stop storm"); the fine check is the
#     valgrind run recorded there (0 bytes lost);
#   - every domain it tracked is gone from vnumactl status (and vnuma_domains is 0);
#   - no warning storm: a domain stopped in the middle of a pass is logged at info level
#     ("went away during the pass"), not as a warning, whichever call noticed it (libvirt
#     "not running", QMP "Unable to read from monitor", move_pages EINVAL, the metadata
#     write); at most 2 warning lines per measured domain run;
#   - vnuma_errors_total did not grow by more than 1 per 10 domain runs (0 expected: a domain
#     going away is not vnumad's error);
#   - no pass hangs: none over 20 s (libvirtd holds a domain's lock while it kills its QEMU,
#     about 2 s each under TCG here, up to 15 s by its timeouts, and a pass that looks the
#     domain up waits for it). How long passes take is printed, not checked: the median was
#     0.7 s (TCG) and 1.7 s (KVM) here idle, 3.1 s for KVM with two CPU hogs (a CI-like run
#     failed on a 2 s bound); pass cost is a benchmark's number (tests/bench/storm.sh,
#     docs/benchmarks.md "Start/stop storm"), not a test's.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

e2e_preamble --tool python3 "status parsing, pass timing"
N=${STORM_DOMAINS:-12}
ROUNDS=${STORM_ROUNDS:-2}
METRICS=$E2E_TMP/metrics.prom
PASSES=$E2E_TMP/passes.txt
doms=()
for i in $(seq "$N"); do
    t=tests/data/domains/storm-flat.xml.in
    [ $((i % 2)) = 0 ] && t=tests/data/domains/storm-two-cell.xml.in
    d=$(define_stopped "storm$i" "$t" "$(optin_sed 'mode="auto"')") ||
        skip_all "cannot define a TCG domain here: $(tail -n 1 "$E2E_TMP/define.out")"
    doms+=("$d")
done
start_vnumad "interval = 1" "log_level = info" "metrics_file = $METRICS"
ok $? "vnumad started"
pass_watch "$METRICS" "$PASSES"

tracked() {
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(sum(1 for d in j["domains"] if d["name"].startswith(sys.argv[1])))' "$E2E_PREFIX"
}
none_tracked() { [ "$(tracked)" = 0 ]; }
passes_now() { metric_sum "$METRICS" '^vnuma_passes_total$'; }
two_more_passes() { # every domain stopped: two passes with nothing to do, so the state settles
    local p0
    p0=$(passes_now)
    wait_for 30 bash -c "[ \$(awk '/^vnuma_passes_total /{print \$2}' $METRICS) -ge $((p0 + 2)) ]"
}

fails=$(storm_round 4 "${doms[@]}")
vnumad_alive
ok $? "warm-up round: $N domains started, half restarted, all destroyed ($fails virsh failures); vnumad alive"
wait_for 30 none_tracked
two_more_passes
fd0=$(vnumad_fds) rss0=$(vnumad_kib VmRSS) heap0=$(vnumad_heap) warn0=$(vnumad_warnings)
err0=$(metric_sum "$METRICS" '^vnuma_errors_total') p0=$(passes_now)
note "start: fds $fd0, VmRSS $rss0 KiB, heap $heap0 KiB, passes $p0, errors_total $err0, warning lines $warn0"

runs=0 rss_prev=$rss0 rss_last=0 heap_prev=$heap0 heap_last=0
for r in $(seq "$ROUNDS"); do
    f=$(storm_round 4 "${doms[@]}")
    runs=$((runs + N + N / 2))
    vnumad_alive || break
    wait_for 30 none_tracked
    rss_r=$(vnumad_kib VmRSS)
    rss_last=$((rss_r - rss_prev)) rss_prev=$rss_r
    heap_r=$(vnumad_heap)
    heap_last=$((heap_r - heap_prev)) heap_prev=$heap_r
    note "round $r: $f virsh failures; fds $(vnumad_fds), VmRSS $rss_r KiB, heap $heap_r KiB, VmData $(vnumad_kib VmData) KiB"
done
vnumad_alive
ok $? "vnumad is alive after $ROUNDS rounds ($runs domain starts and destroys)"
vnumad_alive || { tail -n 20 "$VN_LOG" | sed 's/^/# /'; finish; }

wait_for 30 none_tracked
ok $? "every domain it tracked is gone from vnumactl status once stopped ($(tracked) left)"
two_more_passes && [ "$(metric_sum "$METRICS" '^vnuma_domains$')" = 0 ]
ok $? "vnuma_domains is 0 (in a metrics file written two passes after the last stop)"
fd1=$(vnumad_fds) rss1=$(vnumad_kib VmRSS) heap1=$(vnumad_heap) warn1=$(vnumad_warnings)
err1=$(metric_sum "$METRICS" '^vnuma_errors_total') p1=$(passes_now)
note "end: fds $fd1, VmRSS $rss1 KiB (VmHWM $(vnumad_kib VmHWM)), heap $heap1 KiB, passes $p1, errors_total $err1, warning lines $warn1"
[ "$fd1" -le $((fd0 + 2)) ]
ok $? "open fds did not grow ($fd0 -> $fd1)"
# the heap (status heap_bytes) holds in both builds: memory still referenced, which LeakSanitizer
# at stop_vnumad never calls a leak (flat to the KiB under ASan; glibc's count, +20 to +40 KiB a
# round here, includes the chunks its per-thread caches keep)
[ "$heap1" -lt $((heap0 + 128)) ]
ok $? "the heap grew by less than 128 KiB ($heap0 -> $heap1 KiB, $((heap1 - heap0)) KiB for $runs domain runs)"
[ "$heap_last" -lt 64 ]
ok $? "the heap grew by less than 64 KiB in the last round ($heap_last KiB for $((N + N / 2)) domain runs)"
if vnumad_sanitized; then # ASan's quarantine keeps freed memory: the heap above is the bound
    note "VmRSS not bounded here: vnumad is an ASan build ($rss0 -> $rss1 KiB, its quarantine of freed memory)"
else
    [ "$rss1" -lt $((rss0 + 2048)) ]
    ok $? "VmRSS grew by less than 2 MiB ($rss0 -> $rss1 KiB, $((rss1 - rss0)) KiB)"
    [ "$rss_last" -lt 512 ]
    ok $? "VmRSS grew by less than 512 KiB in the last round ($rss_last KiB for $((N + N / 2)) domain runs)"
fi
[ $((warn1 - warn0)) -le $((2 * runs)) ]
ok $? "no warning storm: $((warn1 - warn0)) warning lines for $runs domain runs"
gone='not running\|inactive domain\|cpu affinity is not supported\|Unable to read from monitor\|End of file from qemu monitor\|page query of guest cell [0-9]* failed: Invalid argument'
! grep -q "^<[0-4]>vnumad: [a-z]*: \(Failed to sample\|Failed to write the decision\) .*\($gone\)" "$VN_LOG"
ok $? "a domain stopped during a pass is not a warning (logged: $(grep -c 'went away during the pass' "$VN_LOG") times 'went away during the pass')"
[ $((err1 - err0)) -le $((runs / 10)) ]
ok $? "vnuma_errors_total grew by $((err1 - err0)) (at most $((runs / 10)))$(grep -E '^vnuma_errors_total.* [1-9]' "$METRICS" | tr '\n' ' ' | sed 's/^./: &/')"
read -r np max med p95 <<<"$(pass_stats "$PASSES" "$p0" "$p1")"
note "passes timed: $np, max $max ms, median $med ms, p95 $p95 ms"
[ "$np" -gt 0 ] && awk -v m="$max" 'BEGIN {exit !(m < 20000)}'
ok $? "no pass hung: max $max ms < 20 s ($np passes; median $med ms)"
grep '^<[0-4]>' "$VN_LOG" | sed -E "s/'[^']*'/'X'/g; s/[0-9]+/N/g" | sort | uniq -c | sort -rn | head -5 |
    sed 's/^/# warning: /'
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad stops cleanly (exit $VN_EXIT)"
finish
