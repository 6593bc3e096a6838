#!/bin/bash
# Scale (issue 14): what vnumad costs, how long its passes take and how fast its control socket
# answers as the number of idle domains grows, for one or more vnumad builds side by side in one
# run. The domains: tests/data/domains/storm-flat (TCG, 1 vCPU, 32 MiB, SeaBIOS with nothing to
# boot, told never to retry (rebootTimeout -1: its retry every 60 s keeps a vCPU busy for
# seconds); about 39 MiB of RSS and 0.7% of a CPU per QEMU here), all opted in with
# mode="auto"; with VN_ACCEL=kvm they are type='kvm' (firmware only, tests/e2e/lib.sh
# define_stopped). For each count N (ascending) more are started and kept running. Per N:
#   - a no-balancer window (WARMUP s, then WINDOW s): libvirtd's and the N QEMUs' CPU;
#   - per build, in the order given: a private vnumad at the defaults (interval 5 s, event_delay
#     0.5 s, log_level info, a metrics_file; its own config, socket and state dir), WARMUP s,
#     then four phases:
#       window  WINDOW s, nothing but vnumad's own work: CPU (utime+stime, /proc/PID/stat, % of
#               one CPU) of vnumad, libvirtd and the N QEMUs together; vnumad's VmRSS at the end;
#               passes and their mean wall time (the metrics file's
#               vnuma_pass_duration_seconds _sum/_count over the window); libvirt/monitor calls
#               per domain per pass when the build exports vnuma_libvirt_calls_total{call="..."}
#               (else "-");
#       polled  WINDOW s more, the control socket's latency (below) and vnumad's CPU again: the
#               status calls cost vnumad CPU (at N=1 several times its own), so the first window
#               goes without them;
#       stopped PHASE s with the first domain's QEMU SIGSTOPped (SIGCONT after, and on exit):
#               did the pass counter (vnumactl status --json, at the start and at the end of the
#               phase, which adds up to 10 s when it does not answer) advance, and how long
#               after SIGCONT the next pass ended;
#       storm   PHASE s while a loop destroys and starts STORM of the domains (the last ones;
#               their persistent XML keeps them opted in), all at once, again and again.
#     Latency, in polled, stopped and storm: `vnumactl --socket S status` (the build's own
#     vnumactl) in a loop, POLL_MS ms after the previous call returned, each call timed (wall
#     time, including vnumactl's start; a call cut off at 10 s counts as 10 s): p50, p99, max.
# Tables (markdown) go to stdout and to OUT/results.md with the command line and the host
# (rewritten after each N, so an interrupted run keeps what it measured); the raw latencies,
# metrics files and vnumad logs to OUT/raw/. Every domain and vnumad it started is gone at
# exit (tests/e2e/lib.sh's cleanup trap).
#   usage: tests/bench/scale.sh [--counts 1,10,50,150] [--window 60] [--warmup 15] [--phase 25]
#          [--storm 3] [--poll-ms 200] [--out DIR] [NAME=PATH/TO/vnumad ...]
#   builds: NAME=PATH pairs (default: current=$BUILD/vnumad); each build's vnumactl is the one
#   beside its vnumad.
#   env: BUILD=build (OUT defaults to $BUILD/bench-scale), VN_ACCEL=kvm (type='kvm' domains)
# Needs root, libvirtd, qemu-system-x86_64 and about 40 MiB of memory per domain; takes the
# test lock (tests/services.sh). Stops growing N (with a note) when MemAvailable falls below
# 1 GiB.
set -u
CALLER_PWD=$PWD
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
WINDOW=60 WARMUP=15 COUNTS=1,10,50,150 PHASE=25 STORM=3 POLL_MS=200 OUT=""
COMMAND="tests/bench/scale.sh${*:+ $*}"
. tests/bench/args.sh
bench_args --counts=COUNTS --window=WINDOW:int --warmup=WARMUP:int --phase=PHASE:int \
    --storm=STORM:int --poll-ms=POLL_MS:int --out=OUT ... -- "$@"
[[ $COUNTS =~ ^[0-9]+(,[0-9]+)*$ ]] || bench_die "--counts must be whole numbers separated by commas, not '$COUNTS'"
COUNTS=$(tr , '\n' <<<"$COUNTS" | sort -n -u | paste -sd' ')
[[ " $COUNTS " == *" 0 "* ]] && bench_die "--counts must be 1 or more"
if [ "$WINDOW" = 0 ] || [ "$PHASE" = 0 ] || [ "$STORM" = 0 ]; then
    bench_die "--window, --phase and --storm must be 1 or more"
fi

set -- "${BENCH_REST[@]}"
[ $# -gt 0 ] || set -- "current=$BUILD/vnumad"
names=() bins=() ctls=() vers=()
for a in "$@"; do
    [[ $a == ?*=?* ]] || bench_die "a build is NAME=PATH/TO/vnumad, not '$a'"
    name=${a%%=*} path=${a#*=}
    [[ $name =~ ^[A-Za-z0-9._+-]+$ ]] || bench_die "a build name is letters, digits and ._+-, not '$name'"
    for n in "${names[@]}"; do [ "$n" = "$name" ] && bench_die "two builds named $name"; done
    [[ $path == /* ]] || path=$CALLER_PWD/$path
    [ -f "$path" ] || bench_die "$path is not an executable vnumad (run make?)"
    [ -x "$path" ] || bench_die "$path is not an executable vnumad (run make?)"
    [ -x "$(dirname "$path")/vnumactl" ] || bench_die "no vnumactl beside $path"
    names+=("$name") bins+=("$(realpath "$path")") ctls+=("$(realpath "$(dirname "$path")/vnumactl")")
    vers+=("$("$path" --version 2>&1 | head -n 1)")
done
OUT=${OUT:-$BUILD/bench-scale}
[[ $OUT == /* ]] || OUT=$PWD/$OUT

. tests/e2e/lib.sh
e2e_preamble --bench
mkdir -p "$OUT" || skip_all "cannot create $OUT"
RAW=$OUT/raw
rm -rf "$RAW"
mkdir -p "$RAW"
RESULTS=$OUT/results.md

LAT_PIDS="" STORM_PID="" STOPPED_PID=""
# before lib.sh's cleanup destroys the domains: the stopped QEMU runs again, the loops end
scale_cleanup() {
    [ -n "$STOPPED_PID" ] && kill -CONT "$STOPPED_PID" 2>/dev/null
    local p
    for p in $LAT_PIDS $STORM_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
}
trap 'rc=$?; scale_cleanup; (exit $rc); e2e_cleanup' EXIT

HZ=$(getconf CLK_TCK)
# ticks PID: utime+stime in clock ticks ("" when PID is gone); the comm field may hold spaces
ticks() { sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{print $12 + $13}'; }
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }
mem_avail_mib() { awk '/^MemAvailable:/ {printf "%d", $2 / 1024}' /proc/meminfo; }
# qemus N: utime+stime of the first N domains' QEMUs together
qemus() {
    local d t s=0
    for d in "${doms[@]:0:$1}"; do
        t=$(ticks "$(qemu_pid "$d")")
        s=$((s + ${t:-0}))
    done
    echo "$s"
}
# qemu_rss N: "MEAN_KIB TOTAL_MIB" of the first N domains' QEMUs' VmRSS
qemu_rss() {
    local d
    for d in "${doms[@]:0:$1}"; do rss "$(qemu_pid "$d")"; done |
        awk '{s += $1; n++} END {printf "%d %d", n ? s / n : 0, s / 1024}'
}
pct() { awk -v t="$1" -v hz="$HZ" -v w="$WINDOW" 'BEGIN {printf "%.2f%%", t / hz / w * 100}'; }
# mval FILE REGEX: the sum of the samples in a metrics file whose name{labels} matches REGEX,
# "" when the file is missing or nothing matches
mval() {
    [ -f "$1" ] || return 0
    awk -v re="$2" '!/^#/ && $1 ~ re {s += $2; n++} END {if (n) printf "%.6f\n", s}' "$1"
}
int() { [ -n "$1" ] && printf '%.0f' "$1"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# start_build BIN METRICS_FILE: a private vnumad from BIN (lib.sh's start_vnumad runs
# $BUILD/vnumad) at the defaults under test; the same VN_* variables, so stop_vnumad and the
# cleanup trap stop it
start_build() {
    local dir
    VN_RUNS=$((VN_RUNS + 1))
    dir=$E2E_TMP/vnumad-$VN_RUNS
    mkdir -p "$dir"
    VN_SOCK=$dir/run/vnumad.sock VN_STATE=$dir/state VN_LOG=$dir/vnumad.log VN_CONF=$dir/vnumad.conf
    printf '%s\n' "interval = 5" "event_delay = 0.5" "log_level = info" "socket = $VN_SOCK" \
        "state_dir = $VN_STATE" "metrics_file = $2" >"$VN_CONF"
    "$1" --foreground --config "$VN_CONF" 2>"$VN_LOG" 200>&- &
    VN_PID=$!
    wait_for 30 test -S "$VN_SOCK"
}
# pass_now CTL: the running vnumad's pass counter from `status --json` ("" when it does not
# answer within 10 s)
pass_now() {
    timeout 10 "$1" --socket "$VN_SOCK" status --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("return", j)["pass"])' 2>/dev/null
}

# lat_loop CTL SECONDS OUT: in the background (its pid added to LAT_PIDS), for SECONDS s:
# `CTL --socket $VN_SOCK status`, POLL_MS ms after the previous call returned; one line per
# call in OUT: "MS RC" (RC "cut" for a call cut off at 10 s, counted as 10000 ms)
lat_loop() {
    python3 - "$1" "$VN_SOCK" "$2" "$3" "$POLL_MS" 200>&- <<'PY' &
import subprocess, sys, time
ctl, sock, secs, out, pause = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], float(sys.argv[5]) / 1000
end = time.monotonic() + secs
with open(out, "w", buffering=1) as f:
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            rc = subprocess.run([ctl, "--socket", sock, "status"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10).returncode
            ms = (time.monotonic() - t0) * 1000
        except subprocess.TimeoutExpired:
            rc, ms = "cut", 10000.0
        f.write("%.1f %s\n" % (ms, rc))
        time.sleep(pause)
PY
    LAT_PIDS="$LAT_PIDS $!"
}
lat_wait() {
    local p
    for p in $LAT_PIDS; do wait "$p"; done
    LAT_PIDS=""
}
# lat_stats OUT: "CALLS P50 P99 MAX FAILED CUT" (ms; nearest rank) of lat_loop's OUT
lat_stats() {
    python3 - "$1" <<'PY'
import math, sys
v, failed, cut = [], 0, 0
for l in open(sys.argv[1]):
    ms, rc = l.split()
    v.append(float(ms))
    cut += rc == "cut"
    failed += rc not in ("0", "cut")
v.sort()
q = lambda p: "%.1f" % v[max(0, math.ceil(p * len(v)) - 1)]
print(len(v), q(.5), q(.99), "%.1f" % v[-1], failed, cut) if v else print("0 - - - 0 0")
PY
}
# calls_per_pass M0 M1 N PASSES: "TOTAL<TAB>BY_CALL": libvirt/monitor calls per domain per pass
# over the window from the *calls_total counters of two metrics files; "-<TAB>-" without them
calls_per_pass() {
    python3 - "$@" <<'PY'
import re, sys
pat = re.compile(r'^vnuma_(\w*)calls_total\{([^}]*)\}\s+(\S+)')
def read(fn):
    d = {}
    try:
        for l in open(fn):
            m = pat.match(l)
            if not m:
                continue
            c = re.search(r'call="([^"]*)"', m.group(2))
            key = c.group(1) if c else m.group(2)
            if m.group(1) != "libvirt_":
                key = m.group(1).rstrip("_") + ":" + key
            d[key] = d.get(key, 0) + float(m.group(3))
    except OSError:
        pass
    return d
a, b, n, p = read(sys.argv[1]), read(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if not b or p <= 0:
    print("-\t-")
    sys.exit()
dd = {k: v - a.get(k, 0) for k, v in b.items()}
print("%.2f\t%s" % (sum(dd.values()) / n / p,
                    ", ".join("%s %.2f" % (k, v / n / p) for k, v in sorted(dd.items()) if v) or "none"))
PY
}
# storm_loop SECONDS OUT DOMAINS...: in the background (STORM_PID): destroys the DOMAINS and
# starts them again (all at once each time) until SECONDS s passed; writes "CYCLES FAILURES"
# (a virsh that has not returned after 60 s, libvirtd stuck, is a failure)
storm_loop() {
    local secs=$1 out=$2
    shift 2
    (
        end=$((SECONDS + secs)) cycles=0 fails=0
        while [ "$SECONDS" -lt "$end" ]; do
            f=$({
                printf '%s\n' "$@" | xargs -r -P "$#" -I{} sh -c "timeout 60 $VIRSH destroy {} >/dev/null 2>&1 || echo F"
                printf '%s\n' "$@" | xargs -r -P "$#" -I{} sh -c "timeout 60 $VIRSH start {} >/dev/null 2>&1 || echo F"
            } | grep -c F)
            cycles=$((cycles + 1)) fails=$((fails + f))
        done
        echo "$cycles $fails" >"$out"
    ) 200>&- &
    STORM_PID=$!
}
passes_file() { int "$(mval "$1" '^vnuma_passes_total$')"; }

# ---- the report ----
rows_host=() rows_cpu=() rows_pass=() rows_calls=() rows_lat=() rows_phase=()
rows() { [ $# = 0 ] || printf '%s\n' "$@"; }
report() {
    {
        echo "## Scale (tests/bench/scale.sh)"
        echo
        echo "Command: \`$COMMAND\`"
        echo
        echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(nproc) CPUs, $(awk '/^MemTotal:/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)," \
            "$(uname -r), $(qemu-system-x86_64 --version | head -n 1 | sed 's/ (.*//'), libvirt $(libvirtd --version | awk '{print $NF}')," \
            "$([ "${VN_ACCEL:-tcg}" = kvm ] && echo "type='kvm' domains (firmware only)" || echo "TCG domains ($([ -e /dev/kvm ] && echo "/dev/kvm present, not used" || echo "no /dev/kvm"))");" \
            "load average at the start: $LOAD0."
        echo
        echo "Builds:"
        echo
        local i
        for i in "${!names[@]}"; do echo "- \`${names[i]}\`: ${bins[i]} (${vers[i]})"; done
        echo
        echo "Per N (idle storm-flat domains, mode=\"auto\"): a no-balancer window, then per build a vnumad at the defaults" \
            "(interval 5 s, event_delay 0.5 s, log_level info), $WARMUP s of warm-up, a $WINDOW s window, a $WINDOW s window" \
            "with \`vnumactl status\` polled, a $PHASE s phase with one domain's QEMU SIGSTOPped, a $PHASE s phase while $STORM domains" \
            "are destroyed and started in a loop. \`vnumactl status\` runs every $POLL_MS ms (after the previous call returned) during" \
            "the last three; a call is cut off at 10 s and counted as 10 s."
        echo
        echo "Host: the domains' QEMUs after they started (VmRSS), load average at the end of N's last window"
        echo
        echo "| domains | QEMU RSS mean KiB | QEMUs' RSS total MiB | MemAvailable MiB | domain starts s | load average |"
        echo "|---|---|---|---|---|---|"
        rows "${rows_host[@]}"
        echo
        echo "CPU over the $WINDOW s window, % of one CPU (utime+stime); \"vnumad, polled\": over the next $WINDOW s, answering \`vnumactl status\` too"
        echo
        echo "| domains | build | vnumad | vnumad, polled | libvirtd | QEMUs (all N) |"
        echo "|---|---|---|---|---|---|"
        rows "${rows_cpu[@]}"
        echo
        echo "vnumad's memory and passes in the window (metrics file)"
        echo
        echo "| domains | build | vnumad VmRSS KiB (end) | passes | mean pass ms | domains tracked |"
        echo "|---|---|---|---|---|---|"
        rows "${rows_pass[@]}"
        echo
        echo "libvirt/monitor calls per domain per pass in the window (vnuma_libvirt_calls_total; \"-\": not exported by the build)"
        echo
        echo "| domains | build | calls | by call |"
        echo "|---|---|---|---|"
        rows "${rows_calls[@]}"
        echo
        echo "Control socket: \`vnumactl status\` wall time, ms (failed: exit status not 0; cut: over 10 s)"
        echo
        echo "| domains | build | phase | calls | p50 | p99 | max | failed | cut |"
        echo "|---|---|---|---|---|---|---|---|---|"
        rows "${rows_lat[@]}"
        echo
        echo "The stopped and storm phases: did vnumad keep passing with a QEMU SIGSTOPped (pass counter of \`vnumactl status --json\`" \
            "at the start and the end of the phase), when did the next pass end after SIGCONT; the storm's destroy+start cycles"
        echo
        echo "| domains | build | kept passing while stopped | next pass after SIGCONT | storm cycles x domains | virsh failures |"
        echo "|---|---|---|---|---|---|"
        rows "${rows_phase[@]}"
    } >"$RESULTS"
}

max=0
for c in $COUNTS; do [ "$c" -gt "$max" ] && max=$c; done
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
nb=${#names[@]}
est=$(((10 + WARMUP + WINDOW + nb * (WARMUP + 2 * WINDOW + 2 * PHASE + 25)) * $(wc -w <<<"$COUNTS") / 60 + max / 30 + 1))
echo "# scale: counts $COUNTS; builds ${names[*]}; window $WINDOW s, warm-up $WARMUP s, phases $PHASE s; about $est min plus domain starts (~1 s each) and cleanup"
doms=()
for i in $(seq "$max"); do
    d=$(define_stopped "idle$i" tests/data/domains/storm-flat.xml.in "$(optin_sed 'mode="auto"')" \
        "s|hvm</type></os>|hvm</type><bios rebootTimeout='-1'/></os>|") ||
        skip_all "cannot define a domain"
    doms+=("$d")
done

running=0
for c in $COUNTS; do
    t0=$SECONDS short=""
    while [ "$running" -lt "$c" ]; do
        if [ "$(mem_avail_mib)" -lt 1024 ]; then
            short="MemAvailable below 1 GiB with $running domains running"
            break
        fi
        $VIRSH start "${doms[$running]}" >/dev/null || skip_all "cannot start ${doms[$running]}"
        running=$((running + 1))
    done
    if [ -n "$short" ]; then
        echo "# $short: no run with $c"
        rows_host+=("| $c | $short: not run | | | | |")
        break
    fi
    starts=$((SECONDS - t0))
    sleep 10 # SeaBIOS settles: the domains are idle before anything is measured
    read -r qmean qtot <<<"$(qemu_rss "$c")"
    lv=$(pgrep -xo libvirtd)

    # no balancer
    sleep "$WARMUP"
    l0=$(ticks "$lv") q0=$(qemus "$c")
    sleep "$WINDOW"
    l1=$(ticks "$lv") q1=$(qemus "$c")
    row="| $c | no balancer | - | - | $(pct $((l1 - l0))) | $(pct $((q1 - q0))) |"
    echo "# $row"
    rows_cpu+=("$row")

    for b in "${!names[@]}"; do
        name=${names[b]} ctl=${ctls[b]} tag=$c-${names[b]}
        mf=$E2E_TMP/metrics-$tag.prom
        echo "# $c domains, $name: warm-up $WARMUP s"
        if ! start_build "${bins[b]}" "$mf"; then
            echo "# $name did not start: $(tail -n 3 "$VN_LOG" | tr '\n' ' ')"
            rows_cpu+=("| $c | $name | did not start | | | |")
            stop_vnumad >/dev/null
            continue
        fi
        sleep "$WARMUP"

        # window: vnumad alone
        cp "$mf" "$RAW/$tag-m0.prom" 2>/dev/null
        t0=$(ticks "$VN_PID") l0=$(ticks "$lv") q0=$(qemus "$c")
        sleep "$WINDOW"
        t1=$(ticks "$VN_PID") l1=$(ticks "$lv") q1=$(qemus "$c") vr=$(rss "$VN_PID")
        cp "$mf" "$RAW/$tag-m1.prom" 2>/dev/null
        m0=$RAW/$tag-m0.prom m1=$RAW/$tag-m1.prom
        # polled: the same with the status loop
        echo "# $c domains, $name: status polled for $WINDOW s"
        lat_loop "$ctl" "$WINDOW" "$RAW/$tag-lat-polled.txt"
        sleep "$WINDOW"
        t2=$(ticks "$VN_PID")
        lat_wait
        if [ -z "$t1" ] || [ -z "$t2" ]; then
            echo "# $name exited during the windows: $(tail -n 3 "$VN_LOG" | tr '\n' ' ')"
            rows_cpu+=("| $c | $name | exited | | | |")
            cp "$VN_LOG" "$RAW/$tag-vnumad.log"
            stop_vnumad >/dev/null
            continue
        fi
        row="| $c | $name | $(pct $((t1 - t0))) | $(pct $((t2 - t1))) | $(pct $((l1 - l0))) | $(pct $((q1 - q0))) |"
        echo "# $row"
        rows_cpu+=("$row")
        pc=$(awk -v a="$(mval "$m0" '^vnuma_pass_duration_seconds_count$')" \
            -v b="$(mval "$m1" '^vnuma_pass_duration_seconds_count$')" 'BEGIN {printf "%d", b - a}')
        mean=$(awk -v n="$pc" -v a="$(mval "$m0" '^vnuma_pass_duration_seconds_sum$')" \
            -v b="$(mval "$m1" '^vnuma_pass_duration_seconds_sum$')" 'BEGIN {if (n > 0) printf "%.0f", (b - a) / n * 1000; else print "-"}')
        row="| $c | $name | $vr | $pc | $mean | $(int "$(mval "$m1" '^vnuma_domains$')") |"
        echo "# $row"
        rows_pass+=("$row")
        IFS=$'\t' read -r ctot cby <<<"$(calls_per_pass "$m0" "$m1" "$c" "$pc")"
        rows_calls+=("| $c | $name | $ctot | $cby |")
        read -r n p50 p99 mx fl cu <<<"$(lat_stats "$RAW/$tag-lat-polled.txt")"
        row="| $c | $name | polled | $n | $p50 | $p99 | $mx | $fl | $cu |"
        echo "# $row"
        rows_lat+=("$row")

        # stopped: the first domain's QEMU
        victim=$(qemu_pid "${doms[0]}")
        echo "# $c domains, $name: QEMU $victim (${doms[0]}) stopped for $PHASE s"
        p0=$(pass_now "$ctl") f0=$(passes_file "$mf")
        [ -n "$victim" ] && kill -STOP "$victim" && STOPPED_PID=$victim
        lat_loop "$ctl" "$PHASE" "$RAW/$tag-lat-stopped.txt"
        sleep "$PHASE"
        p1=$(pass_now "$ctl") f1=$(passes_file "$mf")
        [ -n "$victim" ] && kill -CONT "$victim"
        STOPPED_PID="" cont=$(now_ms)
        if [ -n "$p0" ] && [ -n "$p1" ]; then
            if [ "$p1" -gt "$p0" ]; then kept="yes (+$((p1 - p0)))"; else kept="no (+0)"; fi
        else
            kept="no answer (metrics file: +$((${f1:-0} - ${f0:-0})))"
        fi
        # the next pass that ends after SIGCONT (60 s at most)
        if wait_for 60 bash -c "[ \"\$(awk '/^vnuma_passes_total / {print \$2}' '$mf')\" -gt ${f1:-0} ]"; then
            next="$(awk -v ms=$(($(now_ms) - cont)) 'BEGIN {printf "%.1f", ms / 1000}') s"
        else
            next="none in 60 s"
        fi
        lat_wait
        read -r n p50 p99 mx fl cu <<<"$(lat_stats "$RAW/$tag-lat-stopped.txt")"
        row="| $c | $name | stopped | $n | $p50 | $p99 | $mx | $fl | $cu |"
        echo "# $row"
        rows_lat+=("$row")

        # storm: the last STORM domains (fewer when N is smaller)
        k=$((STORM < c ? STORM : c))
        echo "# $c domains, $name: storm of $k domains for $PHASE s"
        storm_loop "$PHASE" "$RAW/$tag-storm.txt" "${doms[@]:$((c - k)):$k}"
        lat_loop "$ctl" "$PHASE" "$RAW/$tag-lat-storm.txt"
        wait "$STORM_PID"
        STORM_PID=""
        lat_wait
        for d in "${doms[@]:$((c - k)):$k}"; do
            [ "$($VIRSH domstate "$d" 2>/dev/null)" = running ] || $VIRSH start "$d" >/dev/null ||
                skip_all "cannot start $d again after the storm"
        done
        read -r cycles sfails <"$RAW/$tag-storm.txt"
        read -r n p50 p99 mx fl cu <<<"$(lat_stats "$RAW/$tag-lat-storm.txt")"
        row="| $c | $name | storm | $n | $p50 | $p99 | $mx | $fl | $cu |"
        echo "# $row"
        rows_lat+=("$row")
        row="| $c | $name | $kept | $next | $cycles x $k | $sfails |"
        echo "# $row"
        rows_phase+=("$row")

        vnumad_alive || echo "# $name exited after the phases: $(tail -n 3 "$VN_LOG" | tr '\n' ' ')"
        stop_vnumad >/dev/null
        cp "$VN_LOG" "$RAW/$tag-vnumad.log"
        cp "$mf" "$RAW/$tag-end.prom" 2>/dev/null
        report
    done
    rows_host+=("| $c | $qmean | $qtot | $(mem_avail_mib) | $starts | $(cut -d' ' -f1-3 /proc/loadavg) |")
    report
done
echo
cat "$RESULTS"
echo
echo "# results: $RESULTS (raw: $RAW)"
