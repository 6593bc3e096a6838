#!/bin/bash
# bash completion for vnumactl (dist/bash-completion/vnumactl) under Debian's bash-completion,
# as an interactive shell runs it (_init_completion, COMP_WORDS, COMP_CWORD): the commands,
# each command's options, --sort's keys, files after --journal, and what happens where a
# DOMAIN goes while no vnumad answers (the options, no error text). Domain names from a
# running vnumad are checked in tests/e2e/top.sh.
set -u
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
[ -f /usr/share/bash-completion/bash_completion ] ||
    skip_all "bash-completion is not installed (Debian package bash-completion; make deps installs it)"
[ -x "$BUILD/vnumactl" ] || { ok 1 "$BUILD/vnumactl is built"; finish; }
tmp=$(mktemp -d /tmp/vnuma-completion.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin"
ln -s "$PWD/$BUILD/vnumactl" "$tmp/bin/vnumactl"
touch "$tmp/journal-a.jsonl" "$tmp/journal-b.jsonl"

# complete LINE: what <Tab> offers at the end of LINE, sorted, space-separated
complete_line() {
    PATH="$tmp/bin:$PATH" bash --norc --noprofile -c '
        . /usr/share/bash-completion/bash_completion
        . dist/bash-completion/vnumactl
        line=$1
        read -ra COMP_WORDS <<<"$line"
        [[ $line == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE=$line COMP_POINT=${#line}
        _vnumactl vnumactl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" "
    ' _ "$1" 2>"$tmp/err"
}
expect() {
    local got
    got=$(complete_line "$1")
    [ "$got" = "$2" ] && [ ! -s "$tmp/err" ]
    ok $? "'$1<Tab>' offers: $2${got:+ (got: $got)}$([ -s "$tmp/err" ] && echo "; stderr: $(head -c 200 "$tmp/err")")"
}

expect "vnumactl " "advise decisions explain help history hold holds hook list metrics pause release resume snapshot status stop top topology"
expect "vnumactl hold " "act move record sample"
expect "vnumactl st" "status stop"
expect "vnumactl t" "top topology"
expect "vnumactl -" "--help --socket"
expect "vnumactl top -" "--batch --delay --help --iterations --socket --sort"
expect "vnumactl top --sort " "busy locality memory moving name"
expect "vnumactl top --sort lo" "locality"
expect "vnumactl history --j" "--journal --json"
expect "vnumactl status --" "--help --json --socket"
expect "vnumactl --socket /nonexistent/sock st" "status stop"
expect "vnumactl stop --" "--help --json --keep --socket"
expect "vnumactl snapshot --" "--help --output --socket --table"
# a DOMAIN position with no vnumad on the socket: the options, and no error on the terminal
expect "vnumactl --socket $tmp/none.sock explain " "--help --json --socket"
expect "vnumactl history --journal $tmp/journal-" "$tmp/journal-a.jsonl $tmp/journal-b.jsonl"
# the commands the completion knows are the commands vnumactl has
have=$("$BUILD/vnumactl" help | sed -n 's/^  \([a-z][a-z]*\).*/\1/p' | sort | paste -sd' ')
known=$(sed -n 's/^ *local commands="\(.*\)"/\1/p' dist/bash-completion/vnumactl | tr ' ' '\n' | sort | paste -sd' ')
[ "$have" = "$known" ]
ok $? "the completion's commands are vnumactl help's ($have)${known:+; completion: $known}"
finish
