#!/bin/bash
# The house rules that only a convention kept before (docs/ARCHITECTURE.md, "Folders"):
#   - every C file is as clang-format writes it (.clang-format);
#   - lib/ includes nothing from host/, agent/ or proto/; proto/ nothing from host/ or agent/;
#     agent/ nothing from host/ (the include paths make that a compile error too: this check
#     also catches a relative "../host/x.h");
#   - the build refuses such an include: a probe file in agent/ that includes a host/ header
#     does not compile with agent/'s flags;
#   - no source file is over 900 lines.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/check.sh
BUILD=${BUILD:-build}

command -v clang-format >/dev/null || skip_all "clang-format is not installed (make deps installs it)"
mapfile -t srcs < <(git ls-files 'lib/*.[ch]' 'host/*.[ch]' 'agent/*.[ch]' 'proto/*.[ch]' \
    'tests/unit/*.[ch]' 'tests/fuzz/*.c' 'tests/bench/*.[ch]' 'vm-images/guest/*.c' 2>/dev/null)
[ ${#srcs[@]} -gt 0 ] || skip_all "not a git checkout: no list of sources"

bad=$(for f in "${srcs[@]}"; do clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || echo "$f"; done)
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

# the build itself refuses a crossing: agent/'s flags cannot find a host/ header
probe=agent/zz-house-probe.c
printf '#include "decide.h"\n' >"$probe"
trap 'rm -f "$probe"' EXIT
out=$(make -s --no-print-directory BUILD="$BUILD" "$BUILD/agent/zz-house-probe.o" 2>&1)
rc=$?
rm -f "$probe" "$BUILD/agent/zz-house-probe.o" "$BUILD/agent/zz-house-probe.d"
ok "$([ $rc -ne 0 ] && grep -q 'decide.h' <<<"$out"; echo $?)" \
    "an agent/ file that includes a host/ header does not compile ($(grep -m1 -o 'decide.h.*' <<<"$out"))"

long=$(for f in "${srcs[@]}"; do l=$(wc -l <"$f"); [ "$l" -gt 900 ] && echo "$f:$l"; done)
ok "$([ -z "$long" ]; echo $?)" "no source file over 900 lines${long:+: $(echo $long)}"
finish
