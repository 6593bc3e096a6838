#!/bin/bash
# Start/stop storm (issue 7): N tiny opted-in domains (tests/data/domains/storm-flat.xml.in and
# storm-two-cell.xml.in, alternately: TCG, SeaBIOS with nothing to boot, 32-64 MiB) started and
# destroyed in rounds (tests/e2e/lib.sh storm_round: all start, a random half destroyed and
# started again, all destroyed) for MINUTES while a private vnumad (interval 1 s, every domain
# opted in with mode="auto") balances them. One warm-up round first; then compares the start
# (after the warm-up, every domain stopped) with the end (every domain stopped again): vnumad's
# open fds, VmRSS, VmHWM, passes, pass time (max, median, p95: from the metrics file vnumad
# rewrites after every pass, polled every 0.1 s), vnuma_errors_total, log lines at warning
# level or worse, and the domains vnumactl status still shows.
#   usage: tests/bench/storm.sh [--minutes 5] [--domains 30] [--interval 1] [--parallel 4]
#   env: BUILD=build (where vnumad and vnumactl are)
# Needs root, libvirtd, qemu-system-x86_64; takes the test lock (tests/services.sh), so it
# waits for a running e2e test and vice versa. Exit 77 when it cannot run here; 1 when vnumad
# died or a domain stayed tracked.
set -u
cd "$(dirname "$0")/../.." || exit 1
MINUTES=5 DOMAINS=30 INTERVAL=1 PARALLEL=4
. tests/bench/args.sh
bench_args --minutes=MINUTES:int --domains=DOMAINS:int --interval=INTERVAL:num --parallel=PARALLEL:int -- "$@"
. tests/e2e/lib.sh
e2e_preamble --built vnumad --bench

METRICS=$E2E_TMP/metrics.prom
PASSES=$E2E_TMP/passes.txt
doms=()
for i in $(seq "$DOMAINS"); do
    t=tests/data/domains/storm-flat.xml.in
    [ $((i % 2)) = 0 ] && t=tests/data/domains/storm-two-cell.xml.in
    d=$(define_stopped "storm$i" "$t" "$(optin_sed 'mode="auto"')") || skip_all "cannot define a domain"
    doms+=("$d")
done
start_vnumad "interval = $INTERVAL" "log_level = info" "metrics_file = $METRICS" ||
    skip_all "vnumad did not start: $(tail -n 3 "$VN_LOG")"
pass_watch "$METRICS" "$PASSES"

tracked() { # our domains vnumactl status shows
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(sum(1 for d in j["domains"] if d["name"].startswith(sys.argv[1])))' "$E2E_PREFIX"
}
none_tracked() { [ "$(tracked)" = 0 ]; }
passes_now() { metric_sum "$METRICS" '^vnuma_passes_total$'; }
# snapshot NAME FROM_PASS: one row of the table, every domain stopped
snapshot() {
    wait_for 30 none_tracked
    local p0 p1
    p0=$(passes_now)
    wait_for 10 bash -c "[ \$(awk '/^vnuma_passes_total /{print \$2}' $METRICS) -ge $((p0 + 2)) ]"
    p1=$(passes_now)
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(vnumad_fds)" \
        "$(vnumad_kib VmRSS)" "$(vnumad_kib VmHWM)" "$p1" "$(pass_stats "$PASSES" "$2" "$p1")" \
        "$(metric_sum "$METRICS" '^vnuma_errors_total')" "$(vnumad_warnings)" \
        "$(metric_sum "$METRICS" '^vnuma_log_suppressed_total$')" "$(tracked)" |
        awk -F' \\| ' -v OFS=' | ' '{split($6, a, " "); $6 = a[1] " | " a[2] " | " a[3] " | " a[4]; print}'
}

echo "# storm: $DOMAINS domains (half flat, half two cells), rounds for $MINUTES min, vnumad interval $INTERVAL s, $PARALLEL virsh at a time"
t0=$SECONDS
fails=$(storm_round "$PARALLEL" "${doms[@]}")
echo "# warm-up round: $((SECONDS - t0)) s, $fails virsh failures"
vnumad_alive || { tail -n 20 "$VN_LOG"; echo "vnumad died in the warm-up round"; exit 1; }
header='| when | fds | VmRSS KiB | VmHWM KiB | passes | passes timed | max pass ms | median pass ms | p95 pass ms | errors_total | warning lines | suppressed | domains tracked |'
start_row=$(snapshot start 0)
start_pass=$(passes_now)
start_t=$SECONDS
rounds=0 starts=0 vfails=$fails
while [ $((SECONDS - start_t)) -lt $((MINUTES * 60)) ]; do
    f=$(storm_round "$PARALLEL" "${doms[@]}")
    rounds=$((rounds + 1))
    starts=$((starts + DOMAINS + DOMAINS / 2))
    vfails=$((vfails + f))
    vnumad_alive || break
    echo "# round $rounds: $((SECONDS - start_t)) s, $f virsh failures; fds $(vnumad_fds), VmRSS $(vnumad_kib VmRSS) KiB, VmHWM $(vnumad_kib VmHWM) KiB, passes $(passes_now)"
done
elapsed=$((SECONDS - start_t))
alive=0
vnumad_alive || alive=1
if [ $alive = 0 ]; then
    end_row=$(snapshot end "$start_pass")
    cpu=$(vnumad_cpu_ticks)
fi
echo
echo "$header"
echo '|---|---|---|---|---|---|---|---|---|---|---|---|---|'
echo "$start_row"
[ $alive = 0 ] && echo "$end_row"
echo
echo "# $rounds rounds in $elapsed s after the warm-up: $starts domain starts (and as many destroys), $vfails virsh failures"
[ $alive = 0 ] && echo "# vnumad CPU over the whole run: $((cpu / $(getconf CLK_TCK))) s (utime+stime)"
echo "# start: after the warm-up round; pass times of the warm-up passes. end: pass times of the passes since start."
echo "# warning lines by message (top 5):"
grep '^<[0-4]>' "$VN_LOG" | sed -E "s/'[^']*'/'X'/g; s/[0-9]+/N/g" | sort | uniq -c | sort -rn | head -5 | sed 's/^/#   /'
if [ $alive != 0 ]; then
    echo "vnumad DIED during the storm; last log lines:"
    tail -n 20 "$VN_LOG"
    exit 1
fi
[ "$(tracked)" = 0 ] || exit 1
exit 0
