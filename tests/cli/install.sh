#!/bin/bash
# make install honours PREFIX and DESTDIR; make uninstall removes what it installed.
set -u
BUILD=${BUILD:-build}
n=0 pass=0 fail=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then pass=$((pass + 1)); echo "ok $n - $2"; else fail=$((fail + 1)); echo "not ok $n - $2"; fi; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make --no-print-directory -s install BUILD="$BUILD" PREFIX=/opt/vn DESTDIR="$tmp" >"$tmp/log" 2>&1
ok $? "make install PREFIX=/opt/vn DESTDIR=... succeeds"
for f in sbin/vnumad sbin/vnumactl sbin/vnuma-agent; do
    [ -x "$tmp/opt/vn/$f" ]; ok $? "installed $f under DESTDIR/PREFIX"
done
"$tmp/opt/vn/sbin/vnumad" --version | grep -q '^vnumad '; ok $? "the installed vnumad runs"
[ -z "$(find "$tmp" -perm -o+w -type f)" ]; ok $? "no installed file is world-writable"
make --no-print-directory -s uninstall BUILD="$BUILD" PREFIX=/opt/vn DESTDIR="$tmp" >"$tmp/log" 2>&1
[ -z "$(find "$tmp/opt" -type f)" ]; ok $? "make uninstall removes every installed file"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
