#!/bin/bash
# Fuzzes the host-side protocol decoder (tests/fuzz/fuzz-proto-host.c) for a
# bounded time in `make check`: builds it with clang and libFuzzer
# (`make fuzz-build`), runs every seed of tests/fuzz/corpus/ once, then fuzzes
# for FUZZ_CHECK_SECONDS (default 20) from that corpus in a scratch directory,
# with the dictionary tests/fuzz/proto.dict and inputs up to 32 KiB (the seeds
# that reach the message-wide limits are 25 KiB).
# Passes when the fuzzer finds nothing; any crash, leak, sanitizer report or
# timeout fails (the reproducer is kept in $BUILD/fuzz/). Prints the number of
# executions. Exits 77 when clang or libFuzzer is not available here.
# Run from the repository root with BUILD=build.
set -u
BUILD=${BUILD:-build}
SECONDS_TO_FUZZ=${FUZZ_CHECK_SECONDS:-20}
FUZZER=$BUILD/fuzz/fuzz-proto-host
CORPUS=tests/fuzz/corpus

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 ||
    skip_all "cannot run here: ${FUZZ_CC:-clang} is not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! make --no-print-directory BUILD="$BUILD" fuzz-build >"$tmp/build.log" 2>&1; then
    if grep -q -e 'fuzzer' -e 'cannot find' "$tmp/build.log" && ! grep -q 'error:.*\.c:' "$tmp/build.log"; then
        skip_all "cannot run here: clang cannot link a libFuzzer target (libclang-rt-dev missing?)"
    fi
    cat "$tmp/build.log"
    check "the fuzzer builds" false
    finish
fi
check "the fuzzer builds" true

seeds=$(find "$CORPUS" -type f | wc -l)
check "the seed corpus has inputs ($seeds)" [ "$seeds" -ge 10 ]

# Every seed once: none may crash.
run_seeds() {
    "$FUZZER" -artifact_prefix="$tmp/" $(find "$CORPUS" -type f | sort) >"$tmp/seeds.log" 2>&1 ||
        { tail -n 30 "$tmp/seeds.log"; return 1; }
}
check "every seed runs without a finding" run_seeds

# The harness aborts on every input when told to: a finding must fail the run below.
selftest() {
    ! VN_FUZZ_SELFTEST_CRASH=1 "$FUZZER" -runs=10 -artifact_prefix="$tmp/" "$CORPUS" \
        >"$tmp/selftest.log" 2>&1
}
check "a fuzzer that finds a crash is noticed" selftest

# A bounded fuzzing run. libFuzzer's own error exit code is 77 (= "skip" to tests/run.sh):
# any non-zero status is turned into a failure here.
mkdir -p "$tmp/corpus"
fuzz() {
    "$FUZZER" -max_total_time="$SECONDS_TO_FUZZ" -max_len=32768 -timeout=10 -rss_limit_mb=2048 \
        -dict=tests/fuzz/proto.dict -print_final_stats=1 -artifact_prefix="$BUILD/fuzz/" \
        "$tmp/corpus" "$CORPUS" \
        >"$tmp/fuzz.log" 2>&1
}
if fuzz; then
    rc=0
else
    rc=$?
fi
runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$tmp/fuzz.log" | tail -n 1)
echo "# fuzzed ${SECONDS_TO_FUZZ}s: ${runs:-?} executions, exit $rc"
if [ "$rc" -ne 0 ]; then
    grep -E -A 30 'ERROR|==[0-9]+==|runtime error|deadly signal' "$tmp/fuzz.log" | head -n 60
    ls "$BUILD"/fuzz/crash-* "$BUILD"/fuzz/leak-* "$BUILD"/fuzz/timeout-* 2>/dev/null
fi
check "fuzzing ${SECONDS_TO_FUZZ}s finds nothing (${runs:-?} executions)" [ "$rc" -eq 0 ]
check "the fuzzer executed inputs" [ "${runs:-0}" -gt 0 ]
finish
