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
# cli/valgrind and cli/fuzz (offline: no libvirtd, no daemon, no domain; CPU-bound) run in the
# background beside the first e2e tests, which spend most of their time waiting, and are
# waited for before the proving ground, which must not share the CPUs (its scenarios measure
# how busy its guests' vCPUs are). VN_BESIDE=0 runs them in line.
set -u
BUILD=${BUILD:-build}
export BUILD
export VN_TOPOLOGIES=${VN_TOPOLOGIES:-$(cd "$(dirname "$0")/../.." && pwd)/shared/topologies}
if [ ! -d "$VN_TOPOLOGIES" ]; then
    VN_TOPOLOGIES=$(cd "$(dirname "$0")/.." && pwd)/../shared/topologies
fi
# make check starts the services the suite needs (virtlogd, libvirtd) before any test;
# a test that needs them also starts them itself, so each runs alone too.
if [ "$(id -u)" = 0 ]; then
    . "$(dirname "$0")/services.sh"
    why=$(start_services) || echo "tests/run.sh: $why (the tests that need libvirtd will say so)"
fi
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

for t in "$BUILD"/tests/test-*; do
    [ -x "$t" ] || continue
    case "$t" in *-live) continue ;; esac  # drivers run by tests/e2e scripts against real domains
    run_one "$(basename "$t")" "$t"
done
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
    for p in $(pgrep -x vnumad); do out="$out vnumad:$p($(tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | head -c 120))"; done
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
BESIDE=""
[ "${VN_BESIDE:-1}" != 0 ] && BESIDE="cli/valgrind cli/fuzz"
beside_pid=""
if [ -n "$BESIDE" ]; then
    rm -f "$logdir/beside.counts" "$logdir/beside.out"
    # a subshell: its counts come back through a file, its lines are printed when waited for
    (
        total_pass=0 total_fail=0 total_skip=0 failed_progs=""
        # run_one, not run_script: what the e2e tests in front leave and take away meanwhile
        # is theirs (they are checked for leftovers each), and these make no domain or daemon
        for b in $BESIDE; do run_one "$b" bash "tests/$b.sh"; done >"$logdir/beside.out" 2>&1
        echo "$total_pass $total_fail $total_skip $failed_progs" >"$logdir/beside.counts"
    ) &
    beside_pid=$!
    trap '[ -n "$beside_pid" ] && kill "$beside_pid" 2>/dev/null; exit 130' INT TERM HUP
fi
# wait_beside: the tests run in the background are done; their lines and counts are added
wait_beside() {
    local bp bf bs bprogs
    [ -n "$beside_pid" ] || return 0
    wait "$beside_pid"
    beside_pid=""
    cat "$logdir/beside.out" 2>/dev/null
    if read -r bp bf bs bprogs <"$logdir/beside.counts" 2>/dev/null; then
        total_pass=$((total_pass + bp)); total_fail=$((total_fail + bf)); total_skip=$((total_skip + bs))
        failed_progs="$failed_progs${bprogs:+ $bprogs}"
    else
        total_fail=$((total_fail + 1)); failed_progs="$failed_progs beside($BESIDE)"
        printf '%-28s FAIL (the tests run in the background left no counts: %s)\n' "beside" "$BESIDE"
    fi
}
for dir in tests/cli tests/e2e; do
    for s in "$dir"/*.sh; do
        [ -f "$s" ] || continue
        case $(basename "$s") in lib.sh | lib-*.sh) continue ;; esac # sourced by the others
        name=$(basename "$dir")/$(basename "$s" .sh)
        case " $BESIDE " in *" $name "*) continue ;; esac
        case $name in e2e/ground*) wait_beside ;; esac # the ground has the CPUs to itself
        if [ -z "$kvm_skip" ] && case " ${VN_TCG_ELSEWHERE:-} " in *" $name "*) true ;; *) false ;; esac; then
            total_skip=$((total_skip + 1))
            printf '%-28s SKIP (its TCG run is elsewhere: VN_TCG_ELSEWHERE; the [kvm] one runs here)\n' "$name"
        else
            run_script "$name" bash "$s"
        fi
        case " $KVM_TESTS " in
        *" $(basename "$s" .sh) "*)
            [ "$dir" = tests/e2e ] || continue
            if [ -n "$kvm_skip" ]; then
                total_skip=$((total_skip + 1))
                printf '%-28s SKIP (%s)\n' "$name[kvm]" "$kvm_skip"
            else
                run_script "$name[kvm]" env VN_ACCEL=kvm bash "$s"
            fi
            ;;
        esac
    done
done

wait_beside
left=$(leftovers)
if [ -n "$left" ]; then
    total_fail=$((total_fail + 1)); failed_progs="$failed_progs suite/leftovers"
    printf '%-28s FAIL (left behind by the tests:%s)\n' "suite/leftovers" "$left"
else
    total_pass=$((total_pass + 1))
    printf '%-28s ok   (no vnuma-e2e-* domain, vnumad or proving ground left)\n' "suite/leftovers"
fi

echo
[ -n "$failed_progs" ] && echo "failed:$failed_progs"
[ $total_skip -gt 0 ] && echo "($total_skip test programs skipped: see above; skips are not passes)"
echo "$total_pass passed, $total_fail failed"
[ $total_fail -eq 0 ]
