#!/bin/bash
# vnumad without --foreground: the command returns only once vnumad has started, with its
# status. Started: exit 0, the control socket answers at once, the pid file names the running
# vnumad, a start warning (libvirt not there yet: retrying) reached the terminal; SIGTERM ends
# it and removes the pid file. A start that fails (the socket cannot be made, the pid file
# cannot be written): exit 1, the reason on stderr, no vnumad left behind.
# libvirt is never reached: the URI names a socket that does not exist, so vnumad retries and
# touches no domain.
set -u
BUILD=${BUILD:-build}
VNUMAD=$(realpath "$BUILD/vnumad")
VNUMACTL=$BUILD/vnumactl
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (vnumad refuses to start otherwise)"
tmp=$(mktemp -d)
cleanup() {
    pkill -TERM -f -- "--config $tmp/" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

conf() { # file socket pid_file
    mkdir -p "$tmp/state"
    cat >"$1" <<EOC
socket = $2
state_dir = $tmp/state
uri = qemu+unix:///system?socket=$tmp/no-libvirtd.sock
pid_file = $3
log_level = debug
EOC
}
alive() { pgrep -f -- "--config $tmp/$1" >/dev/null; }
gone() { ! kill -0 "$1" 2>/dev/null; }

conf "$tmp/good.conf" "$tmp/vnumad.sock" "$tmp/vnumad.pid"
"$VNUMAD" --config "$tmp/good.conf" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ]; ok $? "a detached start exits 0 once started (exit $rc)"
# no wait: the command returned only after vnumad listened
"$VNUMACTL" --socket "$tmp/vnumad.sock" status >"$tmp/status" 2>&1
ok $? "the control socket answers as soon as the command returned ($(head -n 1 "$tmp/status"))"
pid=$(cat "$tmp/vnumad.pid" 2>/dev/null)
[ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe")" = "$VNUMAD" ] &&
    [ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ]
ok $? "the pid file names the running, detached vnumad (pid '$pid', session leader)"
grep -q "warning: Cannot connect to qemu+unix" "$tmp/err"
ok $? "a warning of the start reached the terminal ($(head -n 1 "$tmp/err" | cut -c1-100))"
[ ! -s "$tmp/out" ]; ok $? "nothing on stdout"

# The shipped logrotate file, pointed at this vnumad (its journal and pid file; never at a
# systemd-managed vnumad of the machine), rotates the journal and makes vnumad open the new one.
sed -e "s#/var/lib/vnuma/#$tmp/state/#g" -e "s#/run/vnumad.pid#$tmp/vnumad.pid#g" \
    -e "s#/run/systemd/system#$tmp/no-systemd#g" dist/logrotate/vnuma >"$tmp/logrotate.conf"
echo '{"record":"before the rotation"}' >>"$tmp/state/journal.jsonl"
journal_fd() { # the journal file vnumad holds open
    for fd in /proc/"$pid"/fd/*; do
        case $(readlink "$fd") in "$tmp"/state/journal*) readlink "$fd" ;; esac
    done
}
logrotate -f -s "$tmp/logrotate.state" "$tmp/logrotate.conf" 2>"$tmp/lr.err"
ok $? "logrotate runs the shipped file ($(head -n 1 "$tmp/lr.err"))"
rotated=$(ls "$tmp"/state/journal.jsonl-* 2>/dev/null | head -n 1)
[ -n "$rotated" ] && grep -q "before the rotation" "$rotated"
ok $? "the journal was rotated to $(basename "${rotated:-none}")"
reopened() { [ "$(journal_fd)" = "$tmp/state/journal.jsonl" ]; }
wait_for 60 reopened
ok $? "vnumad got SIGHUP and holds the new journal.jsonl ($(journal_fd))"
# the host-wide pause: said by status, kept in state_dir, gone on resume
"$VNUMACTL" --socket "$tmp/vnumad.sock" pause --all >"$tmp/p.out" 2>&1 &&
    "$VNUMACTL" --socket "$tmp/vnumad.sock" status | grep -q "paused host-wide" && [ -f "$tmp/state/paused" ]
ok $? "vnumactl pause --all: status says paused host-wide, state_dir/paused is there ($(cat "$tmp/p.out"))"
"$VNUMACTL" --socket "$tmp/vnumad.sock" resume --all >"$tmp/p.out" 2>&1 &&
    ! "$VNUMACTL" --socket "$tmp/vnumad.sock" status | grep -q "paused host-wide" && [ ! -e "$tmp/state/paused" ]
ok $? "vnumactl resume --all: not paused any more, the mark is gone ($(cat "$tmp/p.out"))"
[ -n "$pid" ] && kill -TERM "$pid"
wait_for 60 gone "$pid"
ok $? "SIGTERM ends it"
[ ! -e "$tmp/vnumad.pid" ]; ok $? "and removes its pid file"

conf "$tmp/nosock.conf" "/proc/vnuma-no-such-dir/vnumad.sock" "$tmp/nosock.pid"
"$VNUMAD" --config "$tmp/nosock.conf" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "Cannot listen on /proc/vnuma-no-such-dir/vnumad.sock" "$tmp/err"
ok $? "a socket that cannot be made: exit $rc, '$(grep -m1 listen "$tmp/err")'"
! alive nosock.conf && [ ! -e "$tmp/nosock.pid" ]
ok $? "no vnumad and no pid file left behind"

conf "$tmp/nopid.conf" "$tmp/nopid.sock" "/proc/vnuma-no-such-dir/vnumad.pid"
"$VNUMAD" --config "$tmp/nopid.conf" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write the pid file /proc/vnuma-no-such-dir/vnumad.pid" "$tmp/err"
ok $? "a pid file that cannot be written: exit $rc, '$(grep -m1 "pid file" "$tmp/err")'"
! alive nopid.conf && [ ! -e "$tmp/nopid.sock" ]
ok $? "no vnumad and no socket left behind"

finish
