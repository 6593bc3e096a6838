#!/bin/bash
# The house rules that only a convention kept before (docs/ARCHITECTURE.md, "Folders"):
#   - every C file is as clang-format writes it (.clang-format);
#   - lib/ includes nothing from host/, agent/ or proto/; proto/ nothing from host/ or agent/;
#     agent/ nothing from host/ (the include paths make that a compile error too: this check
#     also catches a relative "../host/x.h");
#   - the build refuses such an include: a probe file in agent/ that includes a host/ header
#     does not compile with agent/'s flags;
#   - no source file is over 900 lines;
#   - the floors (docs/ARCHITECTURE.md): no include loop among a folder's headers, no call loop
#     among its C files (nm of the objects), and every function a host/ file gives others is
#     declared in that file's own header (tests/lib/house-loops.py); the checker is first shown
#     a small tree with one of each, and must find all three.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/check.sh
BUILD=${BUILD:-build}

command -v clang-format >/dev/null || skip_all "clang-format is not installed (make deps installs it)"
mapfile -t srcs < <(git ls-files 'lib/*.[ch]' 'host/*.[ch]' 'agent/*.[ch]' 'proto/*.[ch]' \
    'tests/unit/*.[ch]' 'tests/fuzz/*.c' 'tests/bench/*.[ch]' 'vm-images/guest/*.c' 2>/dev/null)
[ ${#srcs[@]} -gt 0 ] || skip_all "not a git checkout: no list of sources"

# one clang-format for all the files (a process per file cost ~35 CPU-seconds); the files it
# names in its warnings are the ones not formatted
fmt_out=$(clang-format --dry-run -Werror "${srcs[@]}" 2>&1 >/dev/null)
fmt_rc=$?
bad=$(echo "$fmt_out" | sed -nE 's/^([^:]+):[0-9]+:[0-9]+: (error|warning): .*/\1/p' | sort -u)
[ $fmt_rc = 0 ] || [ -n "$bad" ] || bad="(clang-format exit $fmt_rc: $(echo "$fmt_out" | head -n 1))"
ok "$([ -z "$bad" ]; echo $?)" "clang-format: all ${#srcs[@]} C files formatted${bad:+; not: $(echo $bad) (make format)}"

# crossed DIR ALLOWED...: the quoted includes of DIR's files that are not found in DIR or an
# ALLOWED folder but are in another of lib/ host/ agent/ proto/ (or name one by a path)
crossed() {
    local dir=$1 f inc a found
    shift
    for f in "$dir"/*.[ch]; do
        while read -r inc; do
            case "$inc" in
            */*)
                a=$(basename "$(dirname "$(realpath -m "$dir/$inc")")")
                case " $dir $* " in *" $a "*) ;; *) echo "$f: \"$inc\"" ;; esac
                continue
                ;;
            esac
            found=0
            for a in "$dir" "$@"; do [ -e "$a/$inc" ] && found=1; done
            [ $found = 1 ] && continue
            for a in lib host agent proto; do [ -e "$a/$inc" ] && echo "$f: \"$inc\" ($a/)"; done
        done < <(sed -nE 's/^#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$f")
    done
}
for spec in "lib" "proto lib" "agent proto lib" "host proto lib"; do
    set -- $spec
    out=$(crossed "$@")
    ok "$([ -z "$out" ]; echo $?)" "$1/ includes only from ${*} ${out:+: $(echo $out)}"
done

# the build itself refuses a crossing: agent/'s flags cannot find a host/ header (in a copy
# of the tree: tests run at once, and another's make must not find the probe in agent/)
probe_tree=$(mktemp -d)
trap 'rm -rf "$probe_tree"' EXIT
cp -r Makefile lib proto agent host "$probe_tree/"
printf '#include "decide.h"\n' >"$probe_tree/agent/zz-house-probe.c"
out=$(make -s --no-print-directory -C "$probe_tree" BUILD=build build/agent/zz-house-probe.o 2>&1)
rc=$?
ok "$([ $rc -ne 0 ] && grep -q 'decide.h' <<<"$out"; echo $?)" \
    "an agent/ file that includes a host/ header does not compile ($(grep -m1 -o 'decide.h.*' <<<"$out"))"

# the checker on a tree built to fail: a.h and b.h include each other, a.c and b.c call each
# other, c.c defines a function that a.h declares
t=$(mktemp -d)
trap 'rm -rf "$probe_tree" "$t"' EXIT
printf '#pragma once\n#include "b.h"\nint a_f(void);\nint c_f(void);\n' >"$t/a.h"
printf '#pragma once\n#include "a.h"\nint b_f(void);\n' >"$t/b.h"
printf '#include "a.h"\nint a_f(void) { return b_f(); }\n' >"$t/a.c"
printf '#include "b.h"\nint b_f(void) { return a_f(); }\n' >"$t/b.c"
printf '#include "a.h"\nint c_f(void) { return 1; }\n' >"$t/c.c"
for c in a b c; do cc -c -o "$t/$c.o" "$t/$c.c"; done
out=$(python3 tests/lib/house-loops.py "$t" "$t")
rc=$?
ok "$([ $rc = 1 ] && grep -q '^include loop: a.h -> b.h -> a.h' <<<"$out" &&
    grep -q '^call loop: a.c -> b.c -> a.c' <<<"$out" && grep -q '^own header: c.c defines c_f' <<<"$out"
    echo $?)" "the floors' checker finds an include loop, a call loop and a function declared in another file's header ($(tr '\n' ';' <<<"$out"))"
make -s --no-print-directory BUILD="$BUILD" all >/dev/null 2>&1
ok $? "the objects the call-loop check reads are built ($BUILD/host, agent, lib, proto)"
for spec in host agent lib "--loops-only proto"; do
    set -- $spec
    dir=${!#}
    out=$(python3 tests/lib/house-loops.py "$@" "$BUILD/$dir")
    ok $? "$dir/: no include loop, no call loop$([ "$1" = --loops-only ] || echo ", each file's functions in its own header") ${out:+: $(echo $out)}"
done

long=$(for f in "${srcs[@]}"; do l=$(wc -l <"$f"); [ "$l" -gt 900 ] && echo "$f:$l"; done)
ok "$([ -z "$long" ]; echo $?)" "no source file over 900 lines${long:+: $(echo $long)}"
finish
