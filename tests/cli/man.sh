#!/bin/bash
# The man pages: each renders with no warning from `groff -ww -man -z` nor from
# `man --warnings` (what lintian runs), has NAME/SYNOPSIS/DESCRIPTION/SEE ALSO, and
# the pages agree with the code: every configuration key that host/config.c parses is
# in vnumad.conf(5) and in dist/vnumad.conf, every vnumactl command is in vnumactl(8),
# every vnumad and vnuma-agent long option is in its page.
set -u
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
command -v groff >/dev/null || skip_all "groff not installed (package groff-base)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for page in man/vnumad.8 man/vnumactl.8 man/vnuma-agent.8 man/vnumad.conf.5; do
    groff -ww -man -z "$page" >"$tmp/w" 2>&1
    [ ! -s "$tmp/w" ]; ok $? "groff -ww -man -z $page: no warnings ($(head -c 200 "$tmp/w"))"
    LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>"$tmp/w" >/dev/null
    [ ! -s "$tmp/w" ]; ok $? "man --warnings $page: no warnings ($(head -c 200 "$tmp/w"))"
    for s in NAME SYNOPSIS DESCRIPTION 'SEE ALSO'; do
        grep -q "^\.SH $s" "$page" || { echo "# $page lacks $s"; false; }
    done
    ok $? "$page has NAME, SYNOPSIS, DESCRIPTION, SEE ALSO"
done
keys=$(grep -oE 'strcmp\(k, "[a-z_]+"\)' host/config.c | sed -E 's/.*"([a-z_]+)".*/\1/' | sort -u)
[ "$(echo "$keys" | wc -l)" -ge 17 ]; ok $? "$(echo "$keys" | wc -l) configuration keys found in host/config.c"
missing="" missing_conf="" missing_doc=""
for k in $keys; do
    grep -q "^\.BR $k " man/vnumad.conf.5 || missing="$missing $k"
    grep -qE "^#$k =" dist/vnumad.conf || missing_conf="$missing_conf $k"
    grep -q "\`$k\`" docs/configuration.md || missing_doc="$missing_doc $k"
done
[ -z "$missing" ]; ok $? "every key is documented in vnumad.conf(5) (missing:${missing:- none})"
[ -z "$missing_conf" ]; ok $? "every key is in dist/vnumad.conf, commented (missing:${missing_conf:- none})"
[ -z "$missing_doc" ]; ok $? "every key is in docs/configuration.md (missing:${missing_doc:- none})"
cmds=$("$BUILD/vnumactl" help | sed -nE 's/^  ([a-z]+).*/\1/p')
missing=""
for c in $cmds; do grep -qE "^\.B $c( |$)" man/vnumactl.8 || missing="$missing $c"; done
[ -z "$missing" ]; ok $? "every vnumactl command is in vnumactl(8) (missing:${missing:- none})"
missing=""
for o in $(grep -oE '\{"[a-z-]+", (no|required)_argument' host/vnumad.c | sed -E 's/\{"([a-z-]+)".*/\1/'); do
    grep -q -- "\\\\-\\\\-$(echo "$o" | sed 's/-/\\\\-/g')" man/vnumad.8 || missing="$missing --$o"
done
[ -z "$missing" ]; ok $? "every vnumad option is in vnumad(8) (missing:${missing:- none})"
missing=""
for o in $(grep -oE '\{"[a-z-]+", (no|required)_argument' agent/main.c | sed -E 's/\{"([a-z-]+)".*/\1/'); do
    grep -q -- "\\\\-\\\\-$(echo "$o" | sed 's/-/\\\\-/g')" man/vnuma-agent.8 || missing="$missing --$o"
done
[ -z "$missing" ]; ok $? "every vnuma-agent option is in vnuma-agent(8) (missing:${missing:- none})"
finish
