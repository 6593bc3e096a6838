#!/bin/bash
# Daemon overhead (issue 8): the CPU time (utime+stime, /proc/PID/stat) vnumad and numad use
# over a fixed window with 1, 10 and 30 idle domains running (tests/data/domains/storm-flat and
# storm-two-cell alternately: TCG, SeaBIOS with nothing to boot, 32-64 MiB), each daemon alone
# and at its default settings:
#   - vnumad: a private one (tests/e2e/lib.sh start_vnumad) with interval 5 s (the default),
#     event_delay 0.5 s, log_level info, every domain opted in with mode="auto";
#   - numad (Debian's package, installed when missing): `numad -d` (debug log; it always
#     daemonizes), default interval (-i 5:15) and scope (every process: -S 1).
# Each measurement: start the daemon, let it settle (WARMUP s), read its ticks, wait WINDOW s,
# read them again and its VmRSS, stop it. Over the same window: libvirtd's CPU time and that of
# all the domains' QEMUs (vnumad's libvirt calls and monitor commands cost there too; with no
# balancer at all, a third window gives their baseline). numad sets khugepaged's scan_sleep_millisecs to
# 1000 and leaves it so: it is saved first and put back after every numad run and on exit.
#   usage: tests/bench/overhead.sh [--window 120] [--warmup 15] [--counts 1,10,30]
#   env: BUILD=build (where vnumad and vnumactl are)
# Needs root, libvirtd, qemu-system-x86_64; takes the test lock (tests/services.sh).
set -u
cd "$(dirname "$0")/../.." || exit 1
WINDOW=120 WARMUP=15 COUNTS=1,10,30
. tests/bench/args.sh
bench_args --window=WINDOW:int --warmup=WARMUP:int --counts=COUNTS -- "$@"
[[ $COUNTS =~ ^[0-9]+(,[0-9]+)*$ ]] || bench_die "--counts must be whole numbers separated by commas, not '$COUNTS'"
. tests/e2e/lib.sh
e2e_preamble --built vnumad --bench
if ! command -v numad >/dev/null; then
    echo "# numad is not installed: apt-get install -y numad"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq numad >/dev/null || skip_all "apt-get install numad failed"
fi
pgrep -x numad >/dev/null && skip_all "numad is already running here: $(pgrep -ax numad)"
KHP=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
KHP0=$(cat "$KHP" 2>/dev/null)
NUMAD_PID=""
stop_numad() {
    [ -n "$NUMAD_PID" ] || return 0
    kill -TERM "$NUMAD_PID" 2>/dev/null
    wait_for 10 bash -c "! kill -0 $NUMAD_PID 2>/dev/null"
    NUMAD_PID=""
    [ -n "$KHP0" ] && echo "$KHP0" >"$KHP"
}
trap 'rc=$?; stop_numad; (exit $rc); e2e_cleanup' EXIT

HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
# qemus N: utime+stime of the first N domains' QEMUs together
qemus() {
    local d s=0
    for d in "${doms[@]:0:$1}"; do s=$((s + $(ticks "$(qemu_pid "$d")"))); done
    echo "$s"
}
# measure PID N: "TICKS RSS_KIB LIBVIRTD_TICKS QEMU_TICKS" over WINDOW s after WARMUP s (PID
# "" measures nothing but libvirtd and the N QEMUs)
measure() {
    local t0 t1 l0 l1 q0 q1 lv
    lv=$(pgrep -xo libvirtd)
    sleep "$WARMUP"
    t0=$(ticks "${1:-self}") l0=$(ticks "$lv") q0=$(qemus "$2")
    sleep "$WINDOW"
    t1=$(ticks "${1:-self}") l1=$(ticks "$lv") q1=$(qemus "$2")
    echo "$((t1 - t0)) $(rss "${1:-self}") $((l1 - l0)) $((q1 - q0))"
}
cpu() { awk -v t="$1" -v hz="$HZ" -v w="$WINDOW" 'BEGIN {printf "%.2f s | %.3f%%", t / hz, t / hz / w * 100}'; }
pct() { awk -v t="$1" -v hz="$HZ" -v w="$WINDOW" 'BEGIN {printf "%.2f%%", t / hz / w * 100}'; }

max=0
for c in ${COUNTS//,/ }; do [ "$c" -gt "$max" ] && max=$c; done
doms=()
for i in $(seq "$max"); do
    t=tests/data/domains/storm-flat.xml.in
    [ $((i % 2)) = 0 ] && t=tests/data/domains/storm-two-cell.xml.in
    d=$(define_stopped "idle$i" "$t" "$(optin_sed 'mode="auto"')") || skip_all "cannot define a domain"
    doms+=("$d")
done

rows=() rows2=()
running=0
for c in ${COUNTS//,/ }; do
    while [ "$running" -lt "$c" ]; do
        $VIRSH start "${doms[$running]}" >/dev/null || skip_all "cannot start ${doms[$running]}"
        running=$((running + 1))
    done
    sleep 10 # SeaBIOS settles: the domains are idle before either daemon is measured
    read -r _ _ bl bq <<<"$(measure "" "$c")"

    start_vnumad "interval = 5" "event_delay = 0.5" "log_level = info" "metrics_file = $E2E_TMP/metrics-$c.prom" ||
        skip_all "vnumad did not start: $(tail -n 3 "$VN_LOG")"
    read -r vt vr vl vq <<<"$(measure "$VN_PID" "$c")"
    vp=$(metric_sum "$E2E_TMP/metrics-$c.prom" '^vnuma_passes_total$')
    vmean=$(awk '/^vnuma_pass_duration_seconds_sum / {s = $2} /^vnuma_pass_duration_seconds_count / {n = $2}
        END {printf "%.0f", n ? s / n * 1000 : 0}' "$E2E_TMP/metrics-$c.prom")
    vd=$(metric_sum "$E2E_TMP/metrics-$c.prom" '^vnuma_domains$')
    stop_vnumad

    rm -f /var/run/numad.pid
    numad -d 200>&- || skip_all "numad did not start"
    wait_for 10 test -s /var/run/numad.pid
    NUMAD_PID=$(cat /var/run/numad.pid)
    read -r nt nr nl nq <<<"$(measure "$NUMAD_PID" "$c")"
    stop_numad

    row="| $c | $(cpu "$vt") | $vr | $(cpu "$nt") | $nr | $vp passes, mean $vmean ms, $vd tracked |"
    echo "# $row"
    rows+=("$row")
    row2="| $c | $(pct "$bl") | $(pct "$vl") | $(pct "$nl") | $(pct "$bq") | $(pct "$vq") | $(pct "$nq") |"
    echo "# $row2"
    rows2+=("$row2")
done
echo
echo "window $WINDOW s after $WARMUP s of warm-up; CPU = utime+stime in the window, % of one CPU"
echo
echo "| domains | vnumad CPU | vnumad % | vnumad RSS KiB | numad CPU | numad % | numad RSS KiB | vnumad passes in the window+warm-up |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "the same windows: libvirtd's and all the domains' QEMUs' CPU, % of one CPU"
echo
echo "| domains | libvirtd, no balancer | libvirtd, vnumad | libvirtd, numad | QEMUs, no balancer | QEMUs, vnumad | QEMUs, numad |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows2[@]}"
echo
echo "# khugepaged scan_sleep_millisecs: $KHP0 before, $(cat "$KHP") now"
