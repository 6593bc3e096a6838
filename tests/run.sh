#!/bin/bash
# Runs the whole vnuma test suite: every unit test program (build/tests/test-*)
# and every script in tests/cli/ and tests/e2e/. Each prints "N passed, N failed"
# as its last line and exits 0 (all passed), 77 (cannot run here: counted as
# skipped, never as passed) or anything else (failed). Prints the total as the
# closing line and exits non-zero when anything failed.
# VN_SKIP_TESTS="e2e/ground ...": tests (named as printed) not to run; each is
# reported as SKIP and counted as skipped (.ci/run's sanitized pass uses it).
# VN_TCG_ELSEWHERE="e2e/daemon ...": e2e tests that also run with type='kvm' ([kvm]) whose TCG
# run is made elsewhere (.ci/run: in its sanitized pass): where type='kvm' domains start, only
# their [kvm] run is made here, and the TCG one is reported as SKIP; where they do not, the TCG
# one runs here as usual.
# Each test's line gives its seconds; the pass's wall time is printed before the closing line.
# The unit tests run first, each build's one after the other, the builds' side by side and beside
# the prebuilds of the guest image and the fuzzer; then every cli and e2e test but the proving
# ground, VN_JOBS (default 4) at a time, each on a libvirt host of its own (below); then the
# proving ground's tests, one at a time, with only the tests that compute (VN_BESIDE) beside
# them at SCHED_IDLE.
set -u
BUILD=${BUILD:-build}
export BUILD
export VN_TOPOLOGIES=${VN_TOPOLOGIES:-$(cd "$(dirname "$0")/../.." && pwd)/shared/topologies}
if [ ! -d "$VN_TOPOLOGIES" ]; then
    VN_TOPOLOGIES=$(cd "$(dirname "$0")/.." && pwd)/../shared/topologies
fi
# make check starts the services the suite needs (virtlogd, libvirtd) before any test;
# a test that needs them also starts them itself, so each runs alone too.
. "$(dirname "$0")/services.sh"
if [ "$(id -u)" = 0 ]; then
    why=$(start_services) || echo "tests/run.sh: $why (the tests that need libvirtd will say so)"
fi
# cpu_mark: "SECONDS BUSY TOTAL", the wall clock and the machine's CPU ticks (/proc/stat: busy is
# user, nice, system, irq, softirq and steal; total adds idle and iowait); cpu_since MARK: "N s,
# the CPUs busy P% (C CPU-seconds)" since MARK. A pass whose CPUs were busy all along is as short
# as its CPU work allows.
cpu_mark() { echo "$SECONDS $(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat)"; }
cpu_since() {
    local s0 b0 t0 b1 t1 hz
    read -r s0 b0 t0 <<<"$1"
    read -r _ b1 t1 <<<"$(cpu_mark)"
    hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
    echo "$((SECONDS - s0)) s, the CPUs busy $(((b1 - b0) * 100 / ((t1 - t0) > 0 ? (t1 - t0) : 1)))% ($(((b1 - b0) / hz)) CPU-seconds)"
}
pass_mark=$(cpu_mark)
logdir=$BUILD/test-logs
mkdir -p "$logdir"

total_pass=0 total_fail=0 total_skip=0 failed_progs=""
run_one() {
    local name=$1; shift
    local log=$logdir/${name//\//-}.log rc p f line
    local start=$SECONDS
    case " ${VN_SKIP_TESTS:-} " in
    *" $name "*)
        total_skip=$((total_skip + 1))
        printf '%-28s SKIP (not run: VN_SKIP_TESTS="%s")\n' "$name" "$VN_SKIP_TESTS"
        return
        ;;
    esac
    "$@" >"$log" 2>&1
    rc=$?
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    p=$(echo "$line" | sed -nE 's/^([0-9]+) passed.*/\1/p'); p=${p:-0}
    f=$(echo "$line" | sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p'); f=${f:-0}
    if [ $rc -eq 77 ]; then
        total_skip=$((total_skip + 1))
        printf '%-28s SKIP (%s)\n' "$name" "$(tail -n 1 "$log")"
        return
    fi
    if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1  # crashed or failed without counting: that is a failure
    fi
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
    if [ $rc -ne 0 ] || [ "$f" -ne 0 ]; then
        failed_progs="$failed_progs $name"
        printf '%-28s FAIL (%s passed, %s failed, exit %s, %ss) log: %s\n' "$name" "$p" "$f" "$rc" $((SECONDS - start)) "$log"
        grep -E '^not ok|error|Error|ERROR' "$log" | head -n 20 | sed 's/^/    /'
        # what the test saw of a guest that did not boot (lib.sh guest_booted) or not come up
        grep -a '^# boot-hang:\|^# hang:\|^# console:' "$log" | tail -n 80 | sed 's/^/    /'
    else
        printf '%-28s ok   (%s passed, %ss)\n' "$name" "$p" $((SECONDS - start))
    fi
    # a fixture that needed a second try says so, with what it saw: never hidden in a log
    if [ $rc -eq 0 ] && grep -qa '^# retried:' "$log"; then
        grep -a '^# boot-hang:\|^# retried:' "$log" | tail -n 41 | sed 's/^/    /'
    fi
}

# units_job KEY DIR [SUFFIX [ENV...]]: in the background, DIR's unit test programs one after the
# other (named with SUFFIX, run under ENV); their lines go to $logdir/units-KEY.out, their counts
# to $logdir/units-KEY.counts (units_collect). Each build's unit tests are such a job, and the
# prebuilds of the pool below run beside them: each unit test uses one CPU, and one after the
# other they left the machine's second CPU idle.
units_job() {
    local key=$1 dir=$2 suffix=$3 t
    shift 3
    (
        total_pass=0 total_fail=0 total_skip=0 failed_progs=""
        for t in "$dir"/tests/test-*; do
            [ -x "$t" ] || continue
            case "$t" in *-live) continue ;; esac  # drivers run by tests/e2e scripts against real domains
            run_one "$(basename "$t")$suffix" env "$@" "$t"
        done >"$logdir/units-$key.out" 2>&1
        echo "$total_pass $total_fail $total_skip $failed_progs" >"$logdir/units-$key.counts"
    ) &
    units_pids+=("$!:$key")
}
# units_collect: waits for the units jobs, prints their lines and adds their counts
units_collect() {
    local j
    for j in "${units_pids[@]}"; do
        wait "${j%%:*}"
        job_files "$logdir/units-${j#*:}" "units-${j#*:}"
    done
    units_pids=()
}
# job_files BASE NAME: an ended job's lines (BASE.out) printed, its counts (BASE.counts) added;
# a job that left no counts is NAME's failure
job_files() {
    local bp bf bs bprogs
    cat "$1.out" 2>/dev/null
    if read -r bp bf bs bprogs 2>/dev/null <"$1.counts"; then
        total_pass=$((total_pass + bp)); total_fail=$((total_fail + bf)); total_skip=$((total_skip + bs))
        failed_progs="$failed_progs${bprogs:+ $bprogs}"
    else
        total_fail=$((total_fail + 1)); failed_progs="$failed_progs $2"
        printf '%-28s FAIL (its job left no counts)\n' "$2"
    fi
}
units_pids=()
units_job plain "$BUILD" ""
# VN_SAN_BUILD=build-san (.ci/run): one pass over both builds. Every unit test runs on both;
# each cli and e2e test runs once, on the ASan+UBSan build, but those of VN_PLAIN_ONLY (the
# proving ground, the packages, what measures the plain build or cannot run sanitized) on
# BUILD only, and those of VN_BOTH (a check that needs the plain build as well) on both. A test on the ASan build is named NAME[asan].
SAN_BUILD=${VN_SAN_BUILD:-}
[ -n "$SAN_BUILD" ] && units_job asan "$SAN_BUILD" "[asan]" UBSAN_OPTIONS=print_stacktrace=1
# The e2e tests that sample, pin or move run twice: with TCG domains and with type='kvm'
# ones (firmware only: no guest kernel boots under this machine's /dev/kvm, but QEMU runs
# with real KVM memory slots, "CPU n/KVM" threads and KVM statistics, and prints and behaves
# as on a production host). The agent tests need a booted guest kernel: TCG only.
KVM_TESTS="daemon faults optout-race qmp-off restart sample storm hostile-names backends arrival calls stuck forged-originals migrate-hook policy"
# kvm_why: empty when a type='kvm' domain starts here, else why not
kvm_why() {
    local xml out name=vnuma-e2e-kvmprobe-$$
    [ -c /dev/kvm ] || { echo "no /dev/kvm"; return; }
    command -v virsh >/dev/null || { echo "no virsh"; return; }
    xml=$(mktemp)
    sed -e "s|@NAME@|$name|" -e "s|@OPTIN@||" -e "s|<domain type='qemu'>|<domain type='kvm'>|" \
        -e "s|</model>|</model><feature policy='disable' name='arch-capabilities'/><feature policy='disable' name='svm'/>|" \
        tests/data/domains/e2e-two-cell.xml.in >"$xml"
    if out=$(virsh -c qemu:///system create "$xml" 2>&1); then
        virsh -c qemu:///system destroy "$name" >/dev/null 2>&1
    else
        echo "a type='kvm' domain does not start: $(tail -n 1 <<<"$out")"
    fi
    rm -f "$xml"
}
kvm_skip=$(kvm_why)
if [ -z "$kvm_skip" ]; then
    echo "KVM: type='kvm' domains start here; the e2e tests that sample, pin or move also run with them ([kvm])"
else
    echo "KVM: $kvm_skip; the [kvm] variants are skipped"
fi
# Every test cleans up what it made, whatever its outcome: nothing of the suite may be left
# (a leftover domain or daemon changes what the next test, or the next run, sees).
leftovers() {
    local u name out=""
    if [ "$(id -u)" = 0 ] && command -v virsh >/dev/null && virsh -c qemu:///system -q list >/dev/null 2>&1; then
        for u in $(virsh -c qemu:///system list --all --uuid 2>/dev/null); do
            name=$(virsh -c qemu:///system domname "$u" 2>/dev/null)
            case "$name" in vnuma-e2e-*) out="$out domain:$(printf %q "$name")" ;; esac
        done
    fi
    for f in /etc/libvirt/qemu/vnuma-e2e-*.xml; do
        [ -f "$f" ] && out="$out config:$(printf %q "$(basename "$f")")"
    done
    # (this mount namespace's: a vnumad on a test's own host is that host's to check)
    for p in $(own_pids vnumad); do out="$out vnumad:$p($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | head -c 120))"; done
    # (groun[d]: the pattern does not match a pgrep of it running at the same time, beside)
    for p in $(pgrep -f -- '-name vnuma-groun[d]'); do out="$out ground:$p"; done
    echo "$out"
}
# run_script NAME COMMAND...: run_one, then what the script left behind that was not there
# before it: named as its own failure, so the test that leaked is the one that fails
run_script() {
    local name=$1 before after new="" x
    before=$(leftovers)
    run_one "$@"
    after=$(leftovers)
    for x in $after; do
        case " $before " in *" $x "*) ;; *) new="$new $x" ;; esac
    done
    [ -z "$new" ] && return
    total_fail=$((total_fail + 1)); failed_progs="$failed_progs $name(leftovers)"
    printf '%-28s FAIL (left behind:%s)\n' "$name" "$new"
}
# ---- the pool: every cli and e2e test but the proving ground, VN_JOBS (4) at a time ----
# Each runs on a libvirt host of its own (tests/lib/own-host.sh: a mount namespace with its own
# libvirtd, virtlogd, /run/libvirt, /var/lib/libvirt, /etc/libvirt...), so tests that run at once
# share no libvirtd, no domain and no vnumad. Most of their time is waiting on libvirt, QEMU and
# guests, so their waits overlap on two cores; none assumes a speed (tests/slow-stack.sh). What a
# test left is checked in its own host, before its namespace goes (own-host.sh's DIR/leftovers).
# Each test's lines are printed when it ends. Two tests that change or race for the same thing of this machine are never run at once (job_group). VN_JOBS=1 runs the tests one
# after the other, on the same hosts.
JOBS=${VN_JOBS:-4} # 3 left the CPUs 16% idle (the migration tests mostly wait on hooks and guests)
hosts_dir=$(mktemp -d /tmp/vnuma-hosts.XXXXXX)
# the guest image and the programs the tests build on demand, built once before they run at
# once (vm-images/build-guest.sh, cli/fuzz, cli/valgrind: make is not run twice in one tree)
if [ "$(id -u)" = 0 ]; then
    make --no-print-directory -s BUILD="$BUILD" agent-static guest-tools >/dev/null 2>&1
    vm-images/build-guest.sh >"$logdir/build-guest.log" 2>&1 ||
        echo "tests/run.sh: the test guest did not build (the tests that boot it will say so): $(tail -n 1 "$logdir/build-guest.log")"
    if [ -n "$SAN_BUILD" ]; then
        BUILD=$SAN_BUILD SANITIZE=1 vm-images/build-guest.sh >"$logdir/build-guest-san.log" 2>&1 ||
            echo "tests/run.sh: the test guest of $SAN_BUILD did not build (the tests that boot it will say so): $(tail -n 1 "$logdir/build-guest-san.log")"
    fi
fi
make --no-print-directory -s BUILD="$BUILD" fuzz-build "$BUILD/fuzz/fuzz-proto-host-replay" >"$logdir/prebuild.log" 2>&1 ||
    echo "tests/run.sh: make fuzz-build failed (cli/fuzz and cli/valgrind will say so): $(tail -n 1 "$logdir/prebuild.log")"

# ground-systemd's virtqemud, built from Debian's libvirt source (tests/lib/build-virtqemud.sh,
# reused once built) while the pool's tests wait on their guests, not while the ground waits
vqd_pid=""
case " ${VN_SKIP_TESTS:-} " in
*" e2e/ground-systemd "*) ;;
*) [ "$(id -u)" = 0 ] && { tests/lib/build-virtqemud.sh "$BUILD/virtqemud" >"$logdir/build-virtqemud.out" 2>&1 200>&- & vqd_pid=$!; } ;;
esac

units_collect  # (the unit tests ran beside the prebuilds above)
units_said="the unit tests and the prebuilds: $(cpu_since "$pass_mark")"
echo "# $units_said"

# pool_job NAME: in the background, NAME's test on a host of its own; its result lines go to
# $logdir/KEY.out, its counts to $logdir/KEY.counts
pool_job() {
    local name=$1 key host cmd
    key=$(job_key "$name")
    host=$hosts_dir/$key
    # (SANITIZE=1 with the ASan build, as `make check SANITIZE=1` passes it: what a test builds
    # on demand, such as the guest's static programs, is then built as that build wants it)
    local base=${name%\[asan\]} env=(BUILD="$BUILD" UBSAN_OPTIONS=print_stacktrace=1)
    [ "$base" != "$name" ] && env=(BUILD="$SAN_BUILD" SANITIZE=1 UBSAN_OPTIONS=print_stacktrace=1)
    case $base in
    *"[kvm]") cmd=(env "${env[@]}" VN_ACCEL=kvm bash "tests/${base%\[kvm\]}.sh") ;;
    *) cmd=(env "${env[@]}" bash "tests/$base.sh") ;;
    esac
    mkdir -p "$host"
    (
        total_pass=0 total_fail=0 total_skip=0 failed_progs=""
        {
            run_one "$name" tests/lib/own-host.sh "$host" "${cmd[@]}"
            own_host_left "$name" "$host"
        } >"$logdir/$key.out" 2>&1
        echo "$total_pass $total_fail $total_skip $failed_progs" >"$logdir/$key.counts"
    ) &
    pool_pids[$!]=$name
}
job_key() { local k=${1//\//-}; echo "${k//[\[\]]/_}"; }
# job_group NAME: tests of one group never run at once: they change the same thing of this
# machine (backends: the huge pages it adds and puts back), or would race for it (the two
# migration tests: each host B listens for the incoming migration on libvirt's first free port)
job_group() {
    local b=${1%\[asan\]}
    case ${b%\[kvm\]} in
    e2e/backends) echo hugepages ;;
    e2e/migrate | e2e/migrate-hook) echo migration ;;
    *) echo "" ;;
    esac
}
# own_host_left NAME HOST: what the test left in its own host is its failure, as own-host.sh
# found it (and removed it) while the namespace was still there. (Not looked for again here by
# the namespace's inode: once a namespace is gone the kernel gives its number to the next one,
# another test's, whose processes were seen as this one's and killed.)
own_host_left() {
    local name=$1 host=$2 new=""
    [ -s "$host/leftovers" ] && new=$(paste -sd' ' "$host/leftovers")
    if [ -n "$new" ]; then
        total_fail=$((total_fail + 1)); failed_progs="$failed_progs $name(leftovers)"
        printf '%-28s FAIL (left behind: %s)\n' "$name" "$new"
    elif [ "${VN_KEEP_HOSTS:-0}" != 1 ]; then
        rm -rf "$host"
    fi
}
# pool_collect: waits for one job of the pool to end (polled: bash's wait -n misses a job that
# ended before it was called); prints its lines and adds its counts
pool_collect() {
    local pid="" p name
    while [ -z "$pid" ]; do
        for p in "${!pool_pids[@]}"; do
            kill -0 "$p" 2>/dev/null || { pid=$p; break; }
        done
        [ -n "$pid" ] || sleep 0.5
    done
    wait "$pid"
    name=${pool_pids[$pid]}
    unset "pool_pids[$pid]"
    job_report "$name"
}
# job_report NAME: the lines of NAME's ended job, its counts added
job_report() { job_files "$logdir/$(job_key "$1")" "$1"; }
# pool_busy GROUP: a job of GROUP runs
pool_busy() {
    local p
    [ -n "$1" ] || return 1
    for p in "${!pool_pids[@]}"; do [ "$(job_group "${pool_pids[$p]}")" = "$1" ] && return 0; done
    return 1
}
declare -A pool_pids=()
trap 'for p in "${!pool_pids[@]}"; do kill "$p" 2>/dev/null; done; exit 130' INT TERM HUP

# The queue, the longest first (the seconds of an idle run here: docs/benchmarks.md "The suite's
# wall time", e49cd13), so that the pool does not end on one long test alone; then the others in the
# order of their names. An e2e test that also runs with type='kvm' is two jobs.
FIRST="e2e/migrate-hook e2e/conns e2e/storm e2e/daemon e2e/agent-storm e2e/migrate e2e/agent-host e2e/backends e2e/hostile-names e2e/holds e2e/calls e2e/policy e2e/pidns e2e/faults cli/valgrind"
names=($FIRST)
grounds=()
for dir in tests/cli tests/e2e; do
    for s in "$dir"/*.sh; do
        [ -f "$s" ] || continue
        case $(basename "$s") in lib.sh | lib-*.sh) continue ;; esac # sourced by the others
        name=$(basename "$dir")/$(basename "$s" .sh)
        case $name in e2e/ground*) grounds+=("$name"); continue ;; esac # the ground: alone, below
        case " $FIRST " in *" $name "*) continue ;; esac
        names+=("$name")
    done
done
queue=()
# queue_add NAME: NAME's runs, on the builds VN_SAN_BUILD gives it (above)
queue_add() {
    local in_plain=0 in_both=0
    case " ${VN_PLAIN_ONLY:-} " in *" $1 "*) in_plain=1 ;; esac
    case " ${VN_BOTH:-} " in *" $1 "*) in_both=1 ;; esac
    if [ -z "$SAN_BUILD" ] || [ $in_plain = 1 ] || [ $in_both = 1 ]; then queue+=("$1"); fi
    if [ -n "$SAN_BUILD" ] && [ $in_plain = 0 ]; then queue+=("$1[asan]"); fi
}
for name in "${names[@]}"; do
    [ -f "tests/$name.sh" ] || continue
    if [ -z "$kvm_skip" ] && case " ${VN_TCG_ELSEWHERE:-} " in *" $name "*) true ;; *) false ;; esac; then
        total_skip=$((total_skip + 1))
        printf '%-28s SKIP (its TCG run is elsewhere: VN_TCG_ELSEWHERE; the [kvm] one runs here)\n' "$name"
    elif case " ${VN_SKIP_TESTS:-} " in *" $name "*) true ;; *) false ;; esac; then
        run_one "$name" true # prints its SKIP
    else
        queue_add "$name"
    fi
    case $name in e2e/*) ;; *) continue ;; esac
    case " $KVM_TESTS " in *" ${name#e2e/} "*) ;; *) continue ;; esac
    if [ -n "$kvm_skip" ]; then
        total_skip=$((total_skip + 1))
        printf '%-28s SKIP (%s)\n' "$name[kvm]" "$kvm_skip"
    elif case " ${VN_SKIP_TESTS:-} " in *" $name[kvm] "*) true ;; *) false ;; esac; then
        run_one "$name[kvm]" true
    else
        queue_add "$name[kvm]"
    fi
done
# ---- beside the proving ground: what only computes ----
# The tests of VN_BESIDE (default below: valgrind, the offline advise and topology runs, the
# text and manifest checks: no libvirt, no daemon, nothing waited for but their own work) run
# while the proving ground runs, not in the pool, at SCHED_IDLE (chrt --idle): the kernel gives
# them only CPU time the ground leaves idle (a quarter of its CPUs: its scenarios wait on
# vnumad's passes), and the ground's threads preempt them at once; once the ground has ended,
# what is left of them goes back to the normal priority (unidle). Without a ground to run (or
# chrt) they run in the pool.
BESIDE=${VN_BESIDE-cli/valgrind cli/advise cli/topology cli/completion cli/house cli/docs cli/man cli/promtool cli/install cli/k8s-manifest}
ground_runs=0
for name in "${grounds[@]}"; do
    case " ${VN_SKIP_TESTS:-} " in *" $name "*) ;; *) ground_runs=1 ;; esac
done
beside=()
if [ $ground_runs = 1 ] && [ -n "$BESIDE" ] && (chrt --idle -p 0 $BASHPID) 2>/dev/null; then
    rest=()
    for q in "${queue[@]}"; do
        case " $BESIDE " in *" ${q%\[asan\]} "*) beside+=("$q") ;; *) rest+=("$q") ;; esac
    done
    queue=("${rest[@]}")
fi
# unidle PID...: PID and all its descendants back at SCHED_OTHER, each thread (three walks: a
# process forked during one is found in the next). Once the ground has ended, what is left of
# the tests beside it must not wait on idle CPUs that may never come: under tests/slow-stack.sh's
# busy loops, SCHED_IDLE valgrind had run 7 of its 80 programs in 30 minutes.
unidle() {
    local walk p all i
    for walk in 1 2 3; do
        all=("$@") i=0
        while [ $i -lt ${#all[@]} ]; do
            for p in $(pgrep -P "${all[$i]}"); do all+=("$p"); done
            i=$((i + 1))
        done
        for p in "${all[@]}"; do chrt --other -a -p 0 "$p" 2>/dev/null; done
    done
}
# beside_stream NAME...: (in a subshell) at SCHED_IDLE, each NAME's job on a host of its own,
# one after the other; their lines and counts are read after the ground (job_report). A job
# that starts after the ground ended (unidle made this shell SCHED_OTHER) runs as any other.
beside_stream() {
    local n
    chrt --idle -p 0 $BASHPID || return 1
    for n in "$@"; do
        pool_job "$n"
        wait $!
    done
}

# the pool: the first job of the queue whose group is not running, whenever fewer than JOBS run
pool_mark=$(cpu_mark)
while [ ${#queue[@]} -gt 0 ]; do
    if [ ${#pool_pids[@]} -ge "$JOBS" ]; then
        pool_collect
        continue
    fi
    picked=""
    for i in "${!queue[@]}"; do
        pool_busy "$(job_group "${queue[$i]}")" && continue
        picked=$i
        break
    done
    if [ -z "$picked" ]; then
        pool_collect
        continue
    fi
    pool_job "${queue[$picked]}"
    unset "queue[$picked]"
    queue=("${queue[@]}")
done
while [ ${#pool_pids[@]} -gt 0 ]; do pool_collect; done
trap - INT TERM HUP
pool_said="the cli and e2e tests, $JOBS at a time: $(cpu_since "$pool_mark")"
echo "# $pool_said"
[ -n "$vqd_pid" ] && wait "$vqd_pid"

# ---- the proving ground: one boot at a time, with the CPUs to itself (its scenarios measure how
# busy its guests' vCPUs are) but for what runs beside it at SCHED_IDLE (above) ----
ground_mark=$(cpu_mark)
beside_pids=()
if [ ${#beside[@]} -gt 0 ]; then
    # two streams, the first job (the longest: valgrind) alone in one
    (beside_stream "${beside[0]}") &
    beside_pids+=($!)
    [ ${#beside[@]} -gt 1 ] && { (beside_stream "${beside[@]:1}") & beside_pids+=($!); }
    echo "# beside the proving ground, at SCHED_IDLE: ${beside[*]}"
    trap 'for p in "${beside_pids[@]}"; do pkill -P "$p"; kill "$p"; done 2>/dev/null; exit 130' INT TERM HUP
fi
for name in "${grounds[@]}"; do
    run_script "$name" bash "tests/$name.sh"
done
ground_said="the proving ground: $(cpu_since "$ground_mark")"
echo "# $ground_said"
if [ ${#beside[@]} -gt 0 ]; then
    unidle "${beside_pids[@]}"
    for p in "${beside_pids[@]}"; do wait "$p"; done
    trap - INT TERM HUP
    for name in "${beside[@]}"; do job_report "$name"; done
    beside_said="the tests beside it ended $((SECONDS - ${ground_mark%% *})) s after it began"
    echo "# $beside_said"
    ground_said="$ground_said; $beside_said"
fi

rmdir "$hosts_dir" 2>/dev/null
left=$(leftovers)
if [ -n "$left" ]; then
    total_fail=$((total_fail + 1)); failed_progs="$failed_progs suite/leftovers"
    printf '%-28s FAIL (left behind by the tests:%s)\n' "suite/leftovers" "$left"
else
    total_pass=$((total_pass + 1))
    printf '%-28s ok   (no vnuma-e2e-* domain, vnumad or proving ground left)\n' "suite/leftovers"
fi

echo
echo "# the pass took $(cpu_since "$pass_mark"); $units_said; $pool_said; $ground_said"
[ -n "$failed_progs" ] && echo "failed:$failed_progs"
[ $total_skip -gt 0 ] && echo "($total_skip test programs skipped: see above; skips are not passes)"
echo "$total_pass passed, $total_fail failed"
[ $total_fail -eq 0 ]
