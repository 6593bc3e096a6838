#!/bin/bash
# Guest page-fault throughput with the vnuma agent off and at its default rate (rule 5 of
# ../shared/RULES.md). Boots the test guest (vm-images/build-guest.sh) as a libvirt domain
# (TCG here, 2 vCPUs, 2 cells) with vnuma.bench=pft: the guest's init runs pft with 1 and 4
# threads, RUNS runs of SECONDS each, first without the agent, then with it while a host
# client (tests/e2e/agent-client.py) asks for hints every 2000 ms (the agent's default
# interval, 8 processes, 256 MiB budget). Prints every run, the median and spread per
# configuration, the agent's CPU use in the guest (/proc/PID/stat utime+stime over the
# "on" phase) and the hint message sizes.
#   usage: tests/bench/pft.sh [RUNS] [SECONDS]      (default 5 runs of 3 s)
set -u
cd "$(dirname "$0")/../.." || exit 1
RUNS=5 SECS=3
. tests/bench/args.sh
bench_args RUNS:int SECS:int -- "$@"
VIRSH="virsh -q -c qemu:///system"
[ "$(id -u)" = 0 ] || { echo "needs root (libvirt domain)"; exit 77; }
CACHE=$(vm-images/build-guest.sh 2>/dev/null | tail -n 1) || { echo "cannot build the guest"; exit 77; }
TMP=$(mktemp -d /tmp/vnuma-pft.XXXXXX)
chmod 755 "$TMP"
NAME=vnuma-test-agent-$$-pft
cleanup() {
    [ -n "${CLIENT_PID:-}" ] && kill "$CLIENT_PID" 2>/dev/null
    $VIRSH destroy "$NAME" >/dev/null 2>&1
    $VIRSH undefine "$NAME" >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
cp "$CACHE/vmlinuz" "$CACHE/initramfs.cpio.gz" "$TMP/"
CONSOLE=$TMP/console.log
: >"$CONSOLE"
chmod 666 "$CONSOLE"
# the XML the agent tests use (tests/e2e/lib.sh, tests/data/domains/agent-guest.xml.in)
eval "$(sed -n '/^agent_guest_xml() {/,/^}/p' tests/e2e/lib.sh)"
agent_guest_xml "$NAME" "$TMP" \
    "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off vnuma.bench=pft,threads=1+4,runs=$RUNS,seconds=$SECS" \
    "$CONSOLE" 256 >"$TMP/dom.xml"
$VIRSH define "$TMP/dom.xml" >/dev/null && $VIRSH start "$NAME" >/dev/null || { echo "cannot start the guest"; exit 77; }
echo "# guest $NAME: pft threads 1 and 4, $RUNS runs x ${SECS}s, agent off then on (TCG)"
deadline=$((SECONDS + 60 + 2 * 2 * RUNS * (SECS + 4) + 120))
while ! grep -q 'VNUMA: bench phase=on waiting' "$CONSOLE"; do
    [ $SECONDS -gt $deadline ] && { echo "timeout waiting for the off phase"; tail "$CONSOLE"; exit 1; }
    sleep 1
done
SOCK=$($VIRSH dumpxml "$NAME" | grep -o "/var/lib/libvirt/qemu/channel/target/[^'\"]*org.vnuma.agent.0" | head -n 1)
python3 tests/e2e/agent-client.py "$SOCK" poll 100000 2000 >"$TMP/sizes" 2>"$TMP/client.err" &
CLIENT_PID=$!
while ! grep -q 'VNUMA: bench done' "$CONSOLE"; do
    [ $SECONDS -gt $deadline ] && { echo "timeout waiting for the on phase"; tail "$CONSOLE"; exit 1; }
    $VIRSH domstate "$NAME" 2>/dev/null | grep -q running || break
    sleep 1
done
kill "$CLIENT_PID" 2>/dev/null
CLIENT_PID=""
grep -a '^VNUMA: bench' "$CONSOLE" | sed 's/^VNUMA: //'
echo
python3 - "$CONSOLE" "$TMP/sizes" <<'PY'
import re, statistics, sys
runs = {}
phase_info = {}
for l in open(sys.argv[1], errors="replace"):
    m = re.search(r"bench phase=(\w+) threads=(\d+) run=\d+ pft: .*faults_per_s=(\d+)", l)
    if m:
        runs.setdefault((m.group(1), int(m.group(2))), []).append(int(m.group(3)))
    m = re.search(r"bench phase=(\w+) done wall_s=([\d.]+) agent_ticks=(\d+) hz=(\d+)", l)
    if m:
        phase_info[m.group(1)] = (float(m.group(2)), int(m.group(3)), int(m.group(4)))
print("| threads | agent | runs | median faults/s | min | max | spread (max-min)/median |")
print("|---|---|---|---|---|---|---|")
med = {}
for (ph, t) in sorted(runs, key=lambda k: (k[1], k[0] != "off")):
    v = runs[(ph, t)]
    m = statistics.median(v)
    med[(ph, t)] = m
    print("| %d | %s | %d | %.0f | %d | %d | %.1f%% |" % (t, ph, len(v), m, min(v), max(v),
                                                         100.0 * (max(v) - min(v)) / m))
for t in sorted({k[1] for k in runs}):
    if ("off", t) in med and ("on", t) in med:
        print("threads %d: median with agent / without = %.3f (%+.1f%%)" % (
            t, med[("on", t)] / med[("off", t)], 100.0 * (med[("on", t)] / med[("off", t)] - 1)))
if "on" in phase_info:
    wall, ticks, hz = phase_info["on"]
    print("agent CPU in the guest during the on phase: %d ticks in %.1f s = %.2f%% of one vCPU" % (
        ticks, wall, 100.0 * ticks / hz / wall))
sizes = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("BYTES")]
if sizes:
    print("hint messages: %d replies, bytes min %d median %d max %d" % (
        len(sizes), min(sizes), statistics.median(sizes), max(sizes)))
PY
