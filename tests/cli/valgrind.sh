#!/bin/bash
# Runs the unit test programs and vnumad's offline modes under valgrind's
# memcheck (`make valgrind`; tests/run.sh runs it in `make check`):
#   - every $BUILD/tests/test-* except *-live (those drive real domains), which
#     includes the hostile-input cases: test-proto and test-hints (a hostile
#     guest's protocol lines), test-snapshot, test-metadata, test-config,
#     test-control, test-topology (malformed files, requests and XML);
#   - vnumad --advise on the example snapshots of three topologies (good input,
#     5 passes), on tests/data/bad/snapshot-*.json and topology-*.xml, on a
#     snapshot that does not fit an hwloc synthetic topology, and vnumad
#     --check-config on dist/vnumad.conf and on a bad file;
#   - vnuma-agent --once (two collections from this machine's /proc);
#   - the protocol fuzz harness on every input of tests/fuzz/corpus (built
#     without libFuzzer: $BUILD/fuzz/fuzz-proto-host-replay, made here when
#     missing): memcheck sees branches on uninitialised bytes, which ASan in
#     the fuzzer does not.
# A program passes when it exits as expected (0 for the unit tests and good
# input, anything else but valgrind's code for bad input) and memcheck reports
# no error and no definitely or indirectly lost block in it or in any child it
# forks. tests/valgrind.supp holds the suppressions (third-party one-time
# allocations only, each explained). Prints "ok N - ..." per program and the
# closing "N passed, N failed".
#
# Needs the normal (not SANITIZE=1) build of `make tests` in $BUILD: valgrind
# cannot run ASan binaries, so with an ASan build it exits 77 and says so (the
# normal `make check` in CI runs it). Exits 77 when valgrind is missing.
# Run from the repository root with BUILD=build.
set -u
BUILD=${BUILD:-build}
SUPP=tests/valgrind.supp
VG_EXIT=99   # memcheck's exit code when it found an error (no test program uses it)
export VN_HEAP_UNCOUNTED=1  # memcheck's malloc replaces glibc's: test-heap checks it says so
export VN_TOPOLOGIES=${VN_TOPOLOGIES:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/topologies}
if [ ! -d "$VN_TOPOLOGIES" ]; then
    VN_TOPOLOGIES=$(cd "$(dirname "$0")/../.." && pwd)/../shared/topologies
fi

# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"

command -v valgrind >/dev/null 2>&1 ||
    skip_all "cannot run here: valgrind is not installed (tests/install-deps.sh installs it)"
if [ ! -x "$BUILD/vnumad" ] || ! ls "$BUILD"/tests/test-* >/dev/null 2>&1; then
    ok 1 "$BUILD/vnumad and $BUILD/tests/test-* are built (run make tests BUILD=$BUILD, or make valgrind)"
    finish
fi
grep -q __asan_init "$BUILD/vnumad" &&
    skip_all "cannot run here: $BUILD is a SANITIZE=1 (ASan) build, which valgrind cannot run; the normal make check runs this"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# vg EXPECT DESC PROGRAM ARGS...: runs PROGRAM under memcheck (each process, forked children
# too, logs to its own file). EXPECT: "0" (must exit 0) or "fail" (must exit non-zero, but not
# with memcheck's code). Passes when the exit status is as expected, the program's own log
# ends with "ERROR SUMMARY: 0 errors" and no child's log counts an error. A child that execs
# another program (test-agent-collect calls system()) leaves a log without a summary: memcheck
# does not follow exec (--trace-children=no), and what runs then is not ours.
vg() {
    local expect=$1 desc=$2 rc start=$SECONDS logs bad="" f e errs=0 leaked=0 main=""
    local id=$((n + 1)) # this check's number: ok counts it below
    shift 2
    mkdir -p "$tmp/$id"
    timeout 900 valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=$VG_EXIT --suppressions="$SUPP" --log-file="$tmp/$id/vg.%p" \
        "$@" >"$tmp/$id/out" 2>&1
    rc=$?
    logs=$(ls "$tmp/$id"/vg.* 2>/dev/null)
    for f in $logs; do
        # the program itself: its parent (timeout) is not one of the logged processes
        e=$(sed -nE 's/^==[0-9]+== Parent PID: ([0-9]+)$/\1/p' "$f" | head -n 1)
        [ -e "$tmp/$id/vg.${e:-0}" ] || main=$f
        e=$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) errors.*/\1/p' "$f" | tail -n 1)
        if [ "${e:-0}" -gt 0 ]; then
            bad="$bad $f"
            errs=$((errs + e))
        fi
        grep -qE 'definitely lost: [1-9]|indirectly lost: [1-9]' "$f" && leaked=1
    done
    if [ -z "$main" ]; then
        bad="$bad (no memcheck log of the program itself)"
    elif ! grep -q 'ERROR SUMMARY: 0 errors' "$main" && [[ " $bad " != *" $main "* ]]; then
        bad="$bad $main"
    elif [ "$expect" = 0 ] && [ "$rc" -ne 0 ]; then
        bad="$bad (exit $rc)"
    elif [ "$expect" = fail ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq $VG_EXIT ] || [ "$rc" -ge 124 ]; }; then
        bad="$bad (exit $rc, expected a refusal)"
    fi
    if [ -z "$bad" ]; then
        ok 0 "$desc (memcheck: 0 errors, no leaks; $((SECONDS - start))s)"
        return
    fi
    ok 1 "$desc (exit $rc, $errs memcheck errors$([ $leaked = 1 ] && echo ', leaks'))"
    # the program's own failures first (a unit test's not-ok lines), then the end of its output
    grep -m 10 '^not ok' "$tmp/$id/out" | sed 's/^/#   /'
    tail -n 5 "$tmp/$id/out" | sed 's/^/#   /'
    for f in $bad; do
        [ -f "$f" ] && grep -vE '^==[0-9]+== *$' "$f" | sed -n '/ERROR SUMMARY\|Invalid\|uninitialised\|definitely\|indirectly\|Mismatched\|overlap\|by 0x\|at 0x/p' |
            head -n 40 | sed 's/^/#   /'
    done
}

# The harness notices a leak: a program that loses 7 bytes must fail under these options.
selfcheck() {
    printf '#include <stdlib.h>\nvoid *p;\nint main(void) { p = malloc(7); p = 0; return 0; }\n' |
        ${CC:-cc} -x c -g -O0 -o "$tmp/leak" - || return 1
    valgrind --tool=memcheck --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=$VG_EXIT --suppressions="$SUPP" --log-file="$tmp/leak.vg" "$tmp/leak"
    [ $? -eq $VG_EXIT ] && grep -q 'definitely lost: 7 bytes' "$tmp/leak.vg"
}
check "memcheck with these options fails a program that leaks 7 bytes" selfcheck

for t in "$BUILD"/tests/test-*; do
    [ -x "$t" ] || continue
    case "$t" in *-live) continue ;; esac
    vg 0 "$(basename "$t")" "$t"
done

VNUMAD=$BUILD/vnumad
for name in 16amd64-4distances synthetic-zen4-2s-nps4 64intel64-fakeKNL-SNC4-hybrid; do
    topo=$VN_TOPOLOGIES/$name.xml snap=tests/data/snapshots/$name.json
    [ -f "$topo" ] && [ -f "$snap" ] || continue
    vg 0 "vnumad --advise $name --passes 5" "$VNUMAD" --advise --topology "$topo" \
        --snapshot "$snap" --passes 5
done
topo=$VN_TOPOLOGIES/16amd64-4distances.xml
for snap in tests/data/bad/snapshot-*.json; do
    vg fail "vnumad --advise refuses $(basename "$snap")" "$VNUMAD" --advise --topology "$topo" \
        --snapshot "$snap" --json
done
for bad in tests/data/bad/topology-*.xml; do
    vg fail "vnumad --advise refuses $(basename "$bad")" "$VNUMAD" --advise --topology "$bad" \
        --snapshot tests/data/snapshots/16amd64-4distances.json
done
vg fail "vnumad --advise refuses a snapshot that does not fit a synthetic topology" "$VNUMAD" \
    --advise --synthetic "pack:2 numa:2 core:4 pu:2" \
    --snapshot tests/data/snapshots/16amd64-4distances.json
vg 0 "vnuma-agent --once on this machine's /proc" "$BUILD/vnuma-agent" --once --interval 200 \
    --max-processes 8
REPLAY=$BUILD/fuzz/fuzz-proto-host-replay
if make --no-print-directory BUILD="$BUILD" "$REPLAY" >"$tmp/replay-build.log" 2>&1; then
    seeds=$(find tests/fuzz/corpus -type f | sort)
    vg 0 "the protocol fuzz harness on the $(echo "$seeds" | wc -l) inputs of tests/fuzz/corpus" \
        "$REPLAY" $seeds
else
    ok 1 "make $REPLAY"
    tail -n 20 "$tmp/replay-build.log" | sed 's/^/#   /'
fi
vg 0 "vnumad --check-config dist/vnumad.conf" "$VNUMAD" --check-config --config dist/vnumad.conf
printf 'interval = banana\nno_such_key = 1\n[section\n' >"$tmp/bad.conf"
vg fail "vnumad --check-config refuses a bad file" "$VNUMAD" --check-config --config "$tmp/bad.conf"
finish
