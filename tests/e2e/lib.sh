#!/bin/bash
# Helpers for the end-to-end tests against the real libvirtd and QEMU on this machine.
# Source it from a test script (after `set -u`); it:
#   - counts checks (tests/lib/check.sh): ok STATUS "what" prints "ok N - what" or "not ok N -
#     what"; check "what" COMMAND...; finish prints "N passed, N failed" and exits 0 only when
#     nothing failed; skip_all REASON exits 77.
#   - e2e_preamble [--built PROG]... [--tool CMD WHY]... [--need REASON TEST]... [--any-vnumad]
#     [--bench]: what every script checks before it touches a domain (below).
#   - ensure_libvirt: starts virtlogd and libvirtd (no systemd here) when they are not running
#     and waits until virsh answers (30 s), or exits 77 saying why.
#   - define_domain NAME TEMPLATE [SED_EXPR...]: defines and starts vnuma-e2e-$$-NAME from a
#     tests/data/domains/*.xml.in template (@NAME@, @OPTIN@ filled in; optin_sed makes the
#     expression for an opt-in element); prints the full name. The cleanup destroys and
#     undefines it; with E2E_DOMAIN_LIST set (lib-hosts.sh's on_host: a domain of another
#     libvirtd, which destroys its domains itself), it is listed there instead.
#   - start_vnumad [CONFIG LINES...] / stop_vnumad: a private vnumad (config, socket and
#     state dir under one mktemp -d), log in $VN_LOG, journal in $VN_JOURNAL.
#   - wait_for TIMEOUT_S COMMAND... (tests/lib/check.sh): polls COMMAND until it succeeds; 1 on
#     timeout.
#   - kill_libvirtd / start_libvirtd: for tests of a libvirtd restart.
#   - e2e_at_exit COMMAND: run COMMAND (eval'd) in the cleanup, after the domains are gone
#     (to put back a host setting the test changed, e.g. nr_hugepages).
#   - a cleanup trap: stops the daemon it started, destroys and undefines every domain it
#     defined, restarts libvirtd if a test left it dead; also after a failure or a signal.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    # tests/run.sh runs every tests/e2e/*.sh: this file is not a test, do nothing
    echo "tests/e2e/lib.sh: helpers for the scripts beside it, not a test"
    echo "0 passed, 0 failed"
    exit 0
fi
# shellcheck source=tests/services.sh
. "$(dirname "${BASH_SOURCE[0]}")/../services.sh"
# shellcheck source=tests/lib/check.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/check.sh"
BUILD=${BUILD:-build}
VIRSH="virsh -q -c qemu:///system"
E2E_PREFIX="vnuma-e2e-$$-"
E2E_TMP=$(mktemp -d /tmp/vnuma-e2e.XXXXXX)
E2E_LIBVIRTD_KILLED=0
VN_PID="" VN_LOG="" VN_SOCK="" VN_STATE="" VN_JOURNAL="" VN_CONF="" VN_RUNS=0

# foreign_vnumads: "PID ARGS" of every balancing vnumad of this mount namespace this script did
# not start (one-shot runs such as vnumad --advise do not count; a vnumad of another test's own
# host, tests/lib/own-host.sh, talks to another libvirtd). Another vnumad acts on the same opted-in domains
# and would make every result here meaningless.
foreign_vnumads() {
    local p args
    for p in $(own_pids vnumad); do
        [ "$p" = "$VN_PID" ] && continue
        args=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || continue
        case " $args " in
        *" --advise "* | *" --check-config "* | *" --version "* | *" --help "* | *" -h "*) continue ;;
        esac
        echo "$p $args(cwd $(readlink "/proc/$p/cwd"), parent $(awk '{print $4}' "/proc/$p/stat" 2>/dev/null))"
    done
}

libvirt_answers() { virsh -c qemu:///system version >/dev/null 2>&1; }
no_foreign_vnumad() { [ -z "$(foreign_vnumads)" ]; }

ensure_libvirt() {
    local why
    [ "$(id -u)" = 0 ] || skip_all "needs root (starts libvirtd, pins QEMU threads)"
    command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed"
    why=$(start_services) || skip_all "$why"
    test_lock || skip_all "another vnuma test run held /run/lock/vnuma-tests.lock for 30 min"
}

# e2e_preamble [OPTION]...: the checks every e2e script makes before it defines a domain, in
# this order:
#   --built PROG        $BUILD/PROG is executable (repeat for each); else a failed check "...
#                       are built (run make)" and finish
#   --tool CMD WHY      CMD is on PATH (repeat for each); else skip_all "CMD is not installed (WHY)"
#   --need REASON TEST  TEST, a shell command line (eval'd), succeeds; else skip_all REASON
#   ensure_libvirt      root, qemu-system-x86_64, virtlogd and libvirtd answering, the test lock
#   no foreign vnumad   no other balancing vnumad (foreign_vnumads; one still exiting gets 5 s
#                       to be gone): a passing check, else a failed one and finish. Not with
#                       --any-vnumad (the script's domains are not opted in: another vnumad
#                       leaves them alone).
# --bench: for the benchmarks that source this file: whatever is missing is a skip_all, and
# the foreign-vnumad check counts no check when it passes.
e2e_preamble() {
    local built=() all="" missing="" any=0 bench=0 other p
    while [ $# -gt 0 ]; do
        case $1 in
        --built) built+=("$2"); shift 2 ;;
        --tool) command -v "$2" >/dev/null || skip_all "$2 is not installed ($3)"; shift 3 ;;
        --need) eval "$3" || skip_all "$2"; shift 3 ;;
        --any-vnumad) any=1; shift ;;
        --bench) bench=1; shift ;;
        *) echo "e2e_preamble: unknown option $1" >&2; exit 2 ;;
        esac
    done
    for p in "${built[@]}"; do
        all="$all${all:+ and }$BUILD/$p"
        [ -x "$BUILD/$p" ] || missing="$missing${missing:+ and }$BUILD/$p"
    done
    if [ -n "$missing" ]; then
        [ $bench = 1 ] && skip_all "no $missing: run make BUILD=$BUILD first"
        ok 1 "$all $([ ${#built[@]} = 1 ] && echo is || echo are) built (run make; missing: $missing)"
        finish
    fi
    ensure_libvirt
    [ $any = 1 ] && return 0
    wait_for 5 no_foreign_vnumad
    other=$(foreign_vnumads)
    if [ $bench = 1 ]; then
        [ -z "$other" ] || skip_all "another vnumad is balancing this host's domains: $(paste -sd';' <<<"$other")"
        return 0
    fi
    [ -z "$other" ]
    ok $? "no other vnumad is balancing this host's domains${other:+ (found: $(paste -sd';' <<<"$other"); stop it and run again)}"
    [ -z "$other" ] || finish
}

# kill_libvirtd: SIGTERM to libvirtd, 0 once it is gone (15 s); the cleanup restarts it
# should the test not get to start_libvirtd. Prints the pid it killed.
kill_libvirtd() {
    local p
    p=$(own_pids libvirtd | head -n 1)
    [ -n "$p" ] || return 1
    E2E_LIBVIRTD_KILLED=1
    echo "$p"
    kill -TERM "$p" && wait_for 15 bash -c "! kill -0 $p 2>/dev/null"
}
start_libvirtd() {
    [ -n "$(own_pids libvirtd)" ] || libvirtd_start || return 1
    wait_for 30 libvirt_answers && E2E_LIBVIRTD_KILLED=0
}

# optin_sed 'mode="auto"': a sed expression that puts a <balancer> element in @OPTIN@.
optin_sed() {
    local attrs=${1//&/\\&}
    echo "s|@OPTIN@|<metadata><vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" ${attrs//|/\\|}/></metadata>|"
}

define_domain() {
    local name
    name=$(define_stopped "$@") || return 1
    $VIRSH start "$name" >"$E2E_TMP/define.out" 2>&1 || { cat "$E2E_TMP/define.out" >&2; return 1; }
    echo "$name"
}

# vcpu_pins DOM: "0:0-1 1:0-1" (live affinity per vCPU, as virsh vcpupin prints it).
vcpu_pins() {
    $VIRSH vcpupin "$1" --live 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {printf "%s%s:%s", sep, $1, $2; sep=" "}'
}

# qemu_pid DOM: from libvirt's pid file in $LIBVIRT_RUN (/run/libvirt; migrate.sh's second
# libvirtd has its own)
qemu_pid() { cat "${LIBVIRT_RUN:-/run/libvirt}/qemu/$1.pid" 2>/dev/null; }

# vcpu_thread_affinity DOM: "0:0-1 1:0-1": Cpus_allowed_list of each "CPU n/TCG" (or /KVM)
# thread of the domain's QEMU.
vcpu_thread_affinity() {
    local pid t comm out="" sep=""
    pid=$(qemu_pid "$1") || return 1
    [ -n "$pid" ] || return 1
    for t in /proc/"$pid"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        case $comm in
        "CPU "*/*)
            local v=${comm#CPU }
            v=${v%%/*}
            out="$out$sep$v:$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status")"
            sep=" "
            ;;
        esac
    done
    echo "$out" | tr ' ' '\n' | sort -n | paste -sd' '
}

# live_meta DOM: the live <balancer> element, the operator's ("" when there is none).
live_meta() { $VIRSH metadata "$1" urn:vnuma:balancer:1 2>/dev/null; }
# live_state DOM: vnumad's live <state> element: <original>, <decision> ("" when none).
live_state() { $VIRSH metadata "$1" urn:vnuma:state:1 2>/dev/null; }
set_meta() { $VIRSH metadata "$1" urn:vnuma:balancer:1 --key vnuma --set "$2" --live; }

# start_vnumad [CONFIG LINES...]: a private vnumad in the background (VN_PID, VN_LOG, VN_SOCK,
# VN_JOURNAL); waits (30 s: an ASan build on a loaded machine) until its control socket exists.
# Each run has its own directory, journal and log; its state_dir starts with the records of
# the originals the run before left (state_dir/originals), as a restarted vnumad finds its own.
start_vnumad() {
    local dir prev=$VN_STATE
    VN_RUNS=$((VN_RUNS + 1))
    dir=$E2E_TMP/vnumad-$VN_RUNS
    mkdir -p "$dir"
    VN_SOCK=$dir/run/vnumad.sock
    VN_STATE=$dir/state
    if [ -n "$prev" ] && [ -d "$prev/originals" ]; then
        mkdir -p -m 0700 "$VN_STATE" && cp -a "$prev/originals" "$VN_STATE/"
    fi
    VN_JOURNAL=$VN_STATE/journal.jsonl
    VN_LOG=$dir/vnumad.log
    VN_CONF=$dir/vnumad.conf
    {
        echo "interval = 1"
        echo "event_delay = 0.2"
        echo "socket = $VN_SOCK"
        echo "state_dir = $VN_STATE"
        echo "log_level = debug"
        for l in "$@"; do echo "$l"; done
    } >"$VN_CONF"
    "$BUILD/vnumad" --foreground --config "$VN_CONF" 2>"$VN_LOG" 200>&- &
    VN_PID=$!
    wait_for 30 test -S "$VN_SOCK"
}

vnumad_alive() { [ -n "$VN_PID" ] && kill -0 "$VN_PID" 2>/dev/null; }

# vn_pass: the private vnumad's pass counter (vnumactl status; "" when it does not answer)
vn_pass() {
    vnctl status --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("return", j)["pass"])' 2>/dev/null
}
pass_reached() { local p; p=$(vn_pass); [ -n "$p" ] && [ "$p" -ge "$1" ]; }
# wait_passes N [TIMEOUT_S]: the private vnumad ran N more passes (30 s at most): a dwell
# counted in what vnumad did, not in seconds that assume a speed
wait_passes() {
    local p0
    p0=$(vn_pass)
    [ -n "$p0" ] && wait_for "${2:-30}" pass_reached $((p0 + $1))
}

# vnumad_sanitized: $BUILD/vnumad is a SANITIZE=1 (ASan+UBSan) build. Its VmRSS then grows with
# ASan's quarantine of freed memory (up to 256 MiB): RSS bounds do not hold, LeakSanitizer's
# report at exit (below) checks for leaks instead.
vnumad_sanitized() { grep -q __asan_init "$BUILD/vnumad" 2>/dev/null; }

# sanitizer_report LOG: the AddressSanitizer, LeakSanitizer or UBSan report in LOG, if any.
sanitizer_report() {
    local re='^==[0-9]+==ERROR: (Address|Leak)Sanitizer|^[^ ]+\.[ch]:[0-9]+:[0-9]+: runtime error:'
    grep -E -A 14 "$re|^SUMMARY: (Address|Leak|Undefined)Sanitizer" "$1" 2>/dev/null | head -n 60
}

# stop_vnumad: SIGTERM and wait (60 s, then SIGKILL); sets VN_EXIT to its exit status.
# A SANITIZE=1 vnumad writes ASan, UBSan and (at exit) LeakSanitizer reports to its stderr,
# $VN_LOG: any report there is a failed check (VN_SAN holds it), whatever the script checks,
# and stop_vnumad returns 1.
stop_vnumad() {
    VN_EXIT="" VN_SAN=""
    [ -n "$VN_PID" ] || return 0
    kill -TERM "$VN_PID" 2>/dev/null
    wait_for 60 bash -c "! kill -0 $VN_PID 2>/dev/null"
    if kill -0 "$VN_PID" 2>/dev/null; then
        note "vnumad $VN_PID did not stop within 60 s of SIGTERM: killing it"
        kill -KILL "$VN_PID" 2>/dev/null
    fi
    wait "$VN_PID"
    VN_EXIT=$?
    VN_PID=""
    VN_SAN=$(sanitizer_report "$VN_LOG")
    if [ -n "$VN_SAN" ]; then
        ok 1 "vnumad left no sanitizer report in its log (exit $VN_EXIT, $VN_LOG)"
        echo "$VN_SAN" | sed 's/^/# /'
        return 1
    fi
    vnumad_sanitized && ok 0 "vnumad (an ASan build) left no sanitizer report in its log (exit $VN_EXIT)"
    return 0
}

# vnctl ARGS...: vnumactl on the private socket.
vnctl() { "$BUILD/vnumactl" --socket "$VN_SOCK" "$@"; }

# ---- test holds (vnumad with "test_holds = yes"; docs/configuration.md "Test holds") ----
# vn_hold STAGE [DOMAIN]: arm STAGE (sample, act, move, record): the next pass (with DOMAIN)
# or DOMAIN's work that reaches it parks.
vn_hold() { vnctl hold "$@" >/dev/null; }
# vn_release: let every held pass go on.
vn_release() { vnctl release >/dev/null; }
# held_pass STAGE: the pass number held at STAGE ("" when nothing is held there; "-" for a
# stage that does not know its pass).
held_pass() {
    vnctl holds --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(next((str(h["pass"]) if h.get("pass") is not None else "-" for h in j["held"] if h["stage"] == sys.argv[1]), ""))' "$1" 2>/dev/null
}
is_held() { [ -n "$(held_pass "$1")" ]; }
# held_has STAGE DOMAIN: the pass held at STAGE has DOMAIN among its domains.
held_has() {
    vnctl holds --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
sys.exit(0 if any(h["stage"] == sys.argv[1] and sys.argv[2] in h["domains"] for h in j["held"]) else 1)' "$1" "$2" 2>/dev/null
}
# wait_held STAGE [TIMEOUT_S]: 0 once vnumad is parked at STAGE (60 s: only "it never got there").
wait_held() { wait_for "${2:-60}" is_held "$1"; }
# hold_with STAGE DOMAIN: arm STAGE for DOMAIN and wait until DOMAIN's pass or work is parked
# there (60 s: only "it never got there").
hold_with() { vn_hold "$1" "$2" && wait_held "$1" && held_has "$1" "$2"; }
# times_held STAGE: how many times vnumad parked at STAGE since it started.
times_held() {
    vnctl holds --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("return", j)["times"][sys.argv[1]])' "$1" 2>/dev/null
}

# log_has REGEX: the running vnumad's log matches.
log_has() { grep -Eq -- "$1" "$VN_LOG"; }
# log_count REGEX
log_count() { grep -Ec -- "$1" "$VN_LOG"; }

# remove_stale_configs PREFIX: libvirt 9.0 leaves /etc/libvirt/qemu/NAME.xml behind when it
# undefines a domain whose name has a CR (seen with hostile-names.sh's "cr\rtab\t.."); the
# file holds the CR raw, XML reads it back as LF, and the next libvirtd start brings back a
# domain "cr\ntab\t.." that nobody defined. Deletes the configs named PREFIX* whose uuid no
# domain has any more.
remove_stale_configs() {
    local f u
    for f in /etc/libvirt/qemu/"$1"*.xml; do
        [ -f "$f" ] || continue
        u=$(sed -n 's|.*<uuid>\([0-9a-f-]*\)</uuid>.*|\1|p' "$f" | head -n 1)
        [ -n "$u" ] && ! $VIRSH domname "$u" >/dev/null 2>&1 && rm -f "$f"
    done
}

# dom_gone NAME: 0 when libvirt answers that it has no domain NAME (not when it does not answer)
dom_gone() {
    local out
    out=$($VIRSH domuuid "$1" 2>&1 </dev/null) && return 1
    case $out in *"failed to get domain"* | *"Domain not found"*) return 0 ;; esac
    return 1
}

# cleanup_domain NAME: destroys and undefines the test's domain NAME, up to 3 tries while
# libvirt still has it (libvirtd may be killing its QEMU, or be restarting after a test that
# killed it: each retry waits for it to answer, 10 s at most); 0 once it is gone. libvirt's
# last word on the undefine is in $E2E_TMP/undefine.out.
cleanup_domain() {
    local i
    for i in 1 2 3; do
        $VIRSH destroy "$1" >/dev/null 2>&1 </dev/null
        $VIRSH undefine "$1" >"$E2E_TMP/undefine.out" 2>&1 </dev/null
        dom_gone "$1" && return 0
        wait_for 10 libvirt_answers
    done
    return 1
}

e2e_cleanup() {
    local rc=$? d
    trap - EXIT INT TERM HUP
    if [ -n "$VN_PID" ]; then
        stop_vnumad >/dev/null
        if [ -n "$VN_SAN" ]; then  # after finish: the failure must still show
            echo "not ok - vnumad left a sanitizer report in its log ($VN_LOG):" >&2
            echo "$VN_SAN" | sed 's/^/# /' >&2
            rc=1
        fi
    fi
    # a test that killed libvirtd may have failed before restarting it
    if [ "$E2E_LIBVIRTD_KILLED" = 1 ]; then
        [ -n "$(own_pids libvirtd)" ] || libvirtd_start
        wait_for 30 libvirt_answers
    fi
    # a domain the test made that is still defined afterwards fails the test, with what
    # libvirt said (tests/run.sh's suite/leftovers would only see it at the end)
    if [ -f "$E2E_TMP/domains" ]; then
        while read -r d; do
            cleanup_domain "$d" && continue
            echo "not ok - cleanup: the test's domain $(printf %q "$d") is still defined after 3 tries: $(tr '\n' ' ' <"$E2E_TMP/undefine.out")"
            rc=1
        done <"$E2E_TMP/domains"
        # (not after a skip: tests/run.sh shows a skip's last line as its reason)
        [ "$rc" = 77 ] || echo "# cleanup: $(wc -l <"$E2E_TMP/domains") domain(s) of the test destroyed and undefined"
    fi
    remove_stale_configs "$E2E_PREFIX"
    for d in "${E2E_AT_EXIT[@]}"; do eval "$d"; done
    if [ "${E2E_KEEP_TMP:-0}" = 1 ]; then
        echo "# kept $E2E_TMP" >&2
    else
        rm -rf "$E2E_TMP"
    fi
    exit $rc
}
E2E_AT_EXIT=()
e2e_at_exit() { E2E_AT_EXIT+=("$1"); }
trap e2e_cleanup EXIT
trap 'exit 130' INT TERM HUP

# guest_files: the test guest of vm-images/build-guest.sh (built once, cached; the test is
# skipped when it cannot be built here): CACHE is its cache, DIR=$E2E_TMP/guest holds its kernel
# and initramfs, readable by QEMU's user.
guest_files() {
    local out
    out=$(vm-images/build-guest.sh 2>"$E2E_TMP/build.log") ||
        skip_all "cannot build the test guest: $(tail -n 1 "$E2E_TMP/build.log")"
    CACHE=$(echo "$out" | tail -n 1)
    DIR=$E2E_TMP/guest
    mkdir -p "$DIR"
    chmod 711 "$E2E_TMP"
    chmod 755 "$DIR"
    cp "$CACHE/vmlinuz" "$CACHE/initramfs.cpio.gz" "$DIR/"
}

# agent_guest_xml NAME DIR CMDLINE CONSOLE CELL_MIB [OPTIN_ATTRS]: the XML of a test guest of
# vm-images/build-guest.sh (direct kernel boot from DIR/vmlinuz, DIR/initramfs.cpio.gz; 2 vCPUs,
# 2 cells of CELL_MIB, the org.vnuma.agent.0 channel, the console in CONSOLE), opted in with
# <balancer OPTIN_ATTRS/> when given. Used by the agent tests and tests/bench/pft.sh.
agent_guest_xml() {
    local optin=""
    [ -n "${6:-}" ] && optin="<metadata><vnuma:balancer xmlns:vnuma=\"urn:vnuma:balancer:1\" $6/></metadata>"
    sed -e "s|@NAME@|$1|" -e "s|@DIR@|$2|g" -e "s|@CMDLINE@|$3|" -e "s|@CONSOLE@|$4|g" \
        -e "s|@CELL_MIB@|$5|g" -e "s|@MEM_MIB@|$(($5 * 2))|" -e "s|@OPTIN@|${optin//|/\\|}|" \
        tests/data/domains/agent-guest.xml.in
}

# guest_booted NAME CONSOLE [BOOT_S]: 0 once the started test guest NAME's kernel has run our
# init (a "VNUMA:" line on CONSOLE), which takes 2-4 s of guest uptime here, 7-13 s of wall
# time with both cores busy. A TCG guest kernel that has not got there after BOOT_S (90)
# hung in QEMU or the kernel before any vnuma code ran (seen once in about 20 CI runs, with
# 240 s to spare): the state is written to the log as "# boot-hang:" lines (QEMU's status,
# every vCPU's registers, the console, QEMU's log), the guest is reset (a cold boot of the
# same kernel and initramfs) and waited for once more. tests/run.sh prints the
# "# retried:" line of a test that passed after such a reset. 1 when the second boot hangs
# too. What the init does after it started is the test's to check, with no second chance.
guest_booted() {
    local name=$1 console=$2 boot_s=${3:-90} qlog=/var/log/libvirt/qemu/$1.log
    wait_for "$boot_s" grep -qa '^VNUMA:' "$console" && return 0
    {
        echo "domstate: $($VIRSH domstate "$name" 2>&1)"
        $VIRSH qemu-monitor-command "$name" --hmp 'info status' 2>&1
        $VIRSH qemu-monitor-command "$name" --hmp 'info cpus' 2>&1
        $VIRSH qemu-monitor-command "$name" --hmp 'info registers -a' 2>&1 |
            grep -E '^(CPU#|RIP|EIP|RAX|EAX|RSP|ESP|CR0|EFL)'
        echo "console ($(wc -l <"$console") lines):"
        tail -n 30 "$console"
        echo "QEMU log:"
        grep -v '^-\|\\$' "$qlog" 2>/dev/null | tail -n 10
    } | sed 's/^/# boot-hang: /'
    $VIRSH reset "$name" >/dev/null 2>&1 || return 1
    if wait_for "$boot_s" grep -qa '^VNUMA:' "$console"; then
        echo "# retried: the guest kernel had not reached the init after ${boot_s} s (state above, \"# boot-hang:\"); it was reset and booted"
        return 0
    fi
    note "the guest kernel did not reach the init after a reset either"
    return 1
}

# ---- storms (tests/e2e/storm.sh, tests/e2e/agent-storm.sh, tests/bench/storm.sh) ----

# define_stopped NAME TEMPLATE [SED_EXPR...]: as define_domain, but the domain is only
# defined, not started; prints the full name. The cleanup trap destroys and undefines it.
#
# VN_ACCEL=kvm (tests/run.sh sets it for the KVM variant of a test): the domain is
# type='kvm' instead of TCG, with the CPU features this machine's /dev/kvm (kvm_pvm) refuses
# turned off (../shared/notes/libvirt-qemu.md). Such a domain runs its firmware only (no
# guest kernel boots here), halted: real KVM memory slots, "CPU n/KVM" threads, KVM stats.
define_stopped() {
    local name=$E2E_PREFIX$1 template=$2 xml e
    shift 2
    local args=(-e "s|@NAME@|$name|")
    if [ "${VN_ACCEL:-tcg}" = kvm ]; then
        args+=(-e "s|<domain type='qemu'>|<domain type='kvm'>|")
        args+=(-e "s|</model>|</model><feature policy='disable' name='arch-capabilities'/><feature policy='disable' name='svm'/>|")
    fi
    for e in "$@"; do args+=(-e "$e"); done
    args+=(-e "s|@OPTIN@||")
    xml=$E2E_TMP/$name.xml
    sed "${args[@]}" "$template" >"$xml" || return 1
    $VIRSH define "$xml" >"$E2E_TMP/define.out" 2>&1 || { cat "$E2E_TMP/define.out" >&2; return 1; }
    echo "$name" >>"${E2E_DOMAIN_LIST:-$E2E_TMP/domains}" # a file: this often runs in $(...)
    echo "$name"
}

# vnumad_fds: the running vnumad's open file descriptors; vnumad_kib FIELD: its VmRSS or VmHWM
# (KiB, /proc/PID/status); vnumad_cpu_ticks: its utime+stime (clock ticks, /proc/PID/stat).
vnumad_fds() { ls "/proc/$VN_PID/fd" 2>/dev/null | wc -l; }
vnumad_kib() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$VN_PID/status" 2>/dev/null; }
# vnumad_heap: the bytes its allocator has handed out and not taken back (status "heap_bytes":
# glibc's mallinfo2, or ASan's own count in an ASan build), in KiB
vnumad_heap() {
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(j["heap_bytes"] // 1024)'
}
vnumad_cpu_ticks() { awk '{print $14 + $15}' "/proc/$VN_PID/stat" 2>/dev/null; }
# vnumad_warnings: lines at level warning or worse in the running vnumad's log
vnumad_warnings() { grep -c '^<[0-4]>' "$VN_LOG"; }

# metric_sum FILE REGEX: the sum of the samples in a metrics file (Prometheus text) whose
# name{labels} matches REGEX (awk), 0 when none does.
metric_sum() {
    awk -v re="$2" '!/^#/ && $1 ~ re {s += $2} END {printf "%.0f\n", s}' "$1" 2>/dev/null
}

# pass_watch METRICS_FILE OUT: in the background, until the running vnumad exits, records
# every change of vnuma_pass_duration_seconds_{count,sum} in METRICS_FILE (vnumad rewrites it
# after every pass), polled every 0.1 s, as "COUNT SUM" lines in OUT: pass_stats turns them
# into per-pass durations.
pass_watch() {
    python3 - "$1" "$2" "$VN_PID" 200>&- <<'PY' &
import os, sys, time
src, out, pid = sys.argv[1], open(sys.argv[2], "a", buffering=1), int(sys.argv[3])
last = None
while True:
    try:
        os.kill(pid, 0)
    except OSError:
        break
    try:
        c = s = None
        with open(src) as f:
            for l in f:
                if l.startswith("vnuma_pass_duration_seconds_count "):
                    c = int(l.split()[1])
                elif l.startswith("vnuma_pass_duration_seconds_sum "):
                    s = float(l.split()[1])
        if c is not None and s is not None and (c, s) != last:
            out.write("%d %.6f\n" % (c, s))
            last = (c, s)
    except (OSError, ValueError):
        pass
    time.sleep(0.1)
PY
}

# pass_stats OUT FROM [TO]: "PASSES MAX_MS MEDIAN_MS P95_MS" over the passes numbered FROM+1
# .. TO (default: all) in pass_watch's OUT; a pass seen only together with others (two in one
# poll) counts with their mean.
pass_stats() {
    python3 - "$@" <<'PY'
import sys
rows = [tuple(float(x) for x in l.split()) for l in open(sys.argv[1]) if l.strip()]
lo = int(sys.argv[2]); hi = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 60
d = []
for (c0, s0), (c1, s1) in zip(rows, rows[1:]):
    if c0 < lo or c1 > hi or c1 <= c0:
        continue
    d += [(s1 - s0) / (c1 - c0) * 1000] * int(c1 - c0)
d.sort()
if not d:
    print("0 0 0 0")
else:
    print("%d %.1f %.1f %.1f" % (len(d), d[-1], d[len(d) // 2], d[min(len(d) - 1, int(len(d) * 0.95))]))
PY
}

# storm_round PARALLEL DOMAINS...: one round of a start/stop storm: starts every domain
# (PARALLEL virsh at a time), gives vnumad STORM_DWELL s (default 2) to see them, destroys a
# random half and starts it again at once, STORM_DWELL s, destroys every domain. Prints how
# many virsh commands failed.
storm_round() {
    local p=$1 half
    shift
    half=$(printf '%s\n' "$@" | shuf -n $(($# / 2)))
    {
        printf '%s\n' "$@" | xargs -r -P "$p" -I{} sh -c "$VIRSH start {} >/dev/null 2>&1 || echo F"
        sleep "${STORM_DWELL:-2}"
        echo "$half" | xargs -r -P "$p" -I{} sh -c "$VIRSH destroy {} >/dev/null 2>&1 || echo F"
        echo "$half" | xargs -r -P "$p" -I{} sh -c "$VIRSH start {} >/dev/null 2>&1 || echo F"
        sleep "${STORM_DWELL:-2}"
        printf '%s\n' "$@" | xargs -r -P "$p" -I{} sh -c "$VIRSH destroy {} >/dev/null 2>&1 || echo F"
    } | grep -c F
}
