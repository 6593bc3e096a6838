#!/bin/bash
# Runs a command (default: make check) on a slow stack, to prove that no test assumes a speed
# (issue 28): libvirtd starts late (tests/slow/libvirtd: every start of it answers only
# --delay seconds later, default 8) and busy loops keep every core busy for the whole run
# (--busy N loops, default two per core). Use it before every submission that touches tests:
#
#   tests/slow-stack.sh                      # make check, libvirtd 8 s late, 2 loops per core
#   tests/slow-stack.sh --busy 2 -- CI=true bash .ci/run
#   tests/slow-stack.sh --delay 0 -- bash tests/e2e/faults.sh   # load only
#
# A libvirtd already running is stopped first (with no domain of the suite left), so that the
# suite's own start goes through the slow wrapper. The loops end with the command. Exits with
# the command's status.
set -u
cd "$(dirname "$0")/.." || exit 1
delay=8 busy=$((2 * $(nproc)))
while [ $# -gt 0 ]; do
    case $1 in
    --delay) delay=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || set -- make check

loops=()
stop_loops() { [ ${#loops[@]} -gt 0 ] && kill "${loops[@]}" 2>/dev/null; wait 2>/dev/null; }
trap stop_loops EXIT
trap 'exit 130' INT TERM HUP

if [ "$delay" != 0 ]; then
    if p=$(pgrep -xo libvirtd); then
        echo "slow-stack: stopping the running libvirtd ($p) so that the suite starts the slow one"
        kill -TERM "$p"
        for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    fi
    export PATH="$PWD/tests/slow:$PATH" VN_LIBVIRTD_DELAY=$delay
fi
for _ in $(seq "$busy"); do
    (while :; do :; done) &
    loops+=($!)
done
echo "slow-stack: libvirtd starts ${delay} s late, ${busy} busy loop(s) on $(nproc) core(s); running: $*"
start=$SECONDS
"$@"
rc=$?
echo "slow-stack: '$*' exited $rc after $((SECONDS - start)) s (libvirtd ${delay} s late, ${busy} busy loops)"
exit $rc
