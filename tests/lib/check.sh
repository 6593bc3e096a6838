# tests/lib/check.sh: the counting every test script shares (sourced, bash; tests/cli/*.sh,
# tests/e2e/lib.sh and the scripts beside it). tests/run.sh reads what it prints:
#   ok STATUS DESC     "ok N - DESC" when STATUS is 0, else "not ok N - DESC"; counted
#   check DESC CMD...  runs CMD, then ok with its exit status
#   note TEXT...       "# TEXT": a comment line, not a check
#   finish             prints "N passed, N failed" (the last line, which tests/run.sh parses)
#                      and exits 0 when nothing failed, 1 otherwise
#   skip_all REASON    prints REASON and exits 77: the script cannot run here. tests/run.sh
#                      counts it as skipped, never as passed, and shows REASON (the last line)
#   wait_for TIMEOUT_S COMMAND...  polls COMMAND (every 0.2 s, after 2 s every 0.5 s) until it succeeds: 0 then, 1 once
#                      TIMEOUT_S passed. Wait for the condition, never a fixed sleep.
# The counters are globals a script may read ([ $fail -eq 0 ] || finish): n (checks so far),
# pass and fail. Not a test itself: tests/run.sh runs tests/cli/ and tests/e2e/ only.
n=0 pass=0 fail=0

ok() {
    n=$((n + 1))
    if [ "$1" = 0 ]; then
        pass=$((pass + 1)); echo "ok $n - $2"
    else
        fail=$((fail + 1)); echo "not ok $n - $2"
    fi
}
check() {
    local desc=$1
    shift
    "$@"
    ok $? "$desc"
}
note() { echo "# $*"; }
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ] && exit 0
    exit 1
}
skip_all() {
    echo "$1"
    exit 77
}

# wait_for TIMEOUT_S COMMAND...: 0 as soon as COMMAND succeeds, 1 when TIMEOUT_S passed.
# A timeout only says "it never happened" (issue 28): no wait gives up before VN_WAIT_FLOOR_S
# (60 s), whatever its caller guessed a slow libvirtd or a loaded machine needs. Nothing in a
# passing run waits longer for it; a latency that matters is a benchmark (docs/benchmarks.md).
# COMMAND is tried every 0.2 s for the first 2 s, then every 0.5 s: each try (a virsh, a vnumactl
# and a python3) costs CPU that the tests run beside it need (tests/run.sh runs three at once).
wait_for() {
    local timeout=$1 start now deadline
    shift
    [ "${timeout%.*}" -lt "${VN_WAIT_FLOOR_S:-60}" ] && timeout=${VN_WAIT_FLOOR_S:-60}
    start=${EPOCHREALTIME/[.,]/}
    deadline=$((start + ${timeout%.*} * 1000000))
    while :; do
        "$@" && return 0
        now=${EPOCHREALTIME/[.,]/}
        [ "$now" -ge "$deadline" ] && return 1
        if [ $((now - start)) -lt 2000000 ]; then sleep 0.2; else sleep 0.5; fi
    done
}
