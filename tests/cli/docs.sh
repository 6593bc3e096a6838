#!/bin/bash
# The docs an operator gets are whole and true to the code:
#   (docs/operations.md's metrics table is generated from host/metrics.c: test-metrics checks
#   that the document holds what the code generates)
#   - every relative link of README.md and docs/*.md resolves, and every docs/NAME.md or
#     ARCHITECTURE/PROTOCOL file they, the man pages, dist/ and the programs' --help name exists;
#   - every doc the packaged files point to (dist/, man/, the shipped docs, vnumad --help) is
#     in the package (debian/vnuma.docs);
#   - the shipped docs name no development issue and point nowhere outside the repository.
set -u
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- links and named docs resolve ----
python3 - README.md docs/*.md >"$tmp/links" <<'PY'
import os, re, sys
bad = []
for path in sys.argv[1:]:
    text = open(path).read()
    for m in re.finditer(r"\]\(([^)#\s]+)(#[^)]*)?\)", text):
        t = m.group(1)
        if re.match(r"[a-z]+:", t):
            continue
        if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), t))):
            bad.append(f"{path}: link {t}")
    for m in re.finditer(r"\bdocs/([A-Za-z0-9_-]+\.(?:md|svg))", text):
        if not os.path.exists("docs/" + m.group(1)):
            bad.append(f"{path}: names docs/{m.group(1)}")
    if "../shared" in text and path in ("README.md",):
        bad.append(f"{path}: points outside the repository (../shared)")
if bad:
    print("\n".join(bad))
PY
[ ! -s "$tmp/links" ]
ok $? "every relative link and every docs/NAME named in README.md and docs/*.md exists ($(tr '\n' ';' <"$tmp/links"))"

# ---- what the packaged files point to is in the package ----
{
    cat dist/vnumad.conf dist/prometheus/*.yml dist/kubernetes/*.yaml dist/systemd/*.in dist/logrotate/* man/*.[58]
    sed 's/^/ /' debian/vnuma.docs | while read -r f; do cat "$f"; done
    "$BUILD/vnumad" --help
    "$BUILD/vnumactl" --help
} 2>/dev/null | grep -oE '(^|[^/[:alnum:]_.-])(docs/[A-Za-z0-9_-]+\.md|ARCHITECTURE\.md|README\.md)' |
    sed 's/^[^dAR]//' | sort -u >"$tmp/named"
notshipped=""
while read -r d; do
    case $d in ARCHITECTURE.md) d=docs/ARCHITECTURE.md ;; esac
    grep -qx "$d" debian/vnuma.docs || notshipped="$notshipped $d"
done <"$tmp/named"
[ -z "$notshipped" ]
ok $? "every doc the packaged files name is in debian/vnuma.docs ($(tr '\n' ' ' <"$tmp/named"); not shipped:${notshipped:- none})"

# ---- the shipped docs: no development history, nothing outside the repository ----
hist=$(while read -r f; do grep -Hn -i -E '\bissues? [0-9]+|issue [0-9]+.s|\.\./shared|was a bug' "$f"; done <debian/vnuma.docs)
[ -z "$hist" ]
ok $? "the shipped docs name no development issue, no '../shared' and no 'was a bug' ($(echo "$hist" | head -n 3 | tr '\n' ';'))"

finish
