#!/bin/bash
# make demo: boots the proving ground (vm-images/: a QEMU VM with 4 NUMA nodes over 2 sockets
# that runs this machine's own root, libvirtd and the freshly built vnumad), starts two domains
# whose memory sits on node 3 while their vCPUs may only run on nodes 0-2, runs vnumad, and
# prints before/after tables, the decisions with their rules and the qemu-monitor-command that
# reads them. The in-ground part is tests/demo/ground-demo.sh (+ .py); its output is streamed
# from the results directory while the ground runs.
# Falls back to the offline advisor demo (tests/demo-offline.sh, `make demo-offline`) when the
# ground cannot boot here (no qemu-system-x86_64, not root, ...).
#   env: BUILD=build  DEMO_TIMEOUT=240 (s, the ground is killed after it)  DEMO_RESULTS=DIR
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
T0=$SECONDS
say() { printf '[%3ds] %s\n' $((SECONDS - T0)) "$*"; }
offline() {
    echo
    echo "==> The proving ground cannot boot here: $1"
    echo "==> Falling back to the offline advisor demo (the same as 'make demo-offline'):"
    echo
    BUILD=$BUILD tests/demo-offline.sh
    exit $?
}

echo "vnuma demo: a 4-node NUMA host booted as a VM on this machine (the proving ground, vm-images/),"
echo "two guests whose memory sits on the wrong node, and vnumad fixing it. About 1-2 minutes."
echo
command -v qemu-system-x86_64 >/dev/null || offline "qemu-system-x86_64 is not installed (Debian: qemu-system-x86)"
[ "$(id -u)" = 0 ] || offline "it needs root (it runs this machine's root filesystem and libvirtd as root inside the VM)"
for p in libvirtd virtlogd virsh numactl migratepages python3; do
    command -v "$p" >/dev/null || offline "$p is not installed (make deps installs it)"
done
[ -x "$BUILD/vnumad" ] && [ -x "$BUILD/vnumactl" ] || offline "$BUILD/vnumad is not built (run make)"

GROUND_CACHE=${GROUND_CACHE:-$PWD/$BUILD/ground}
RESULTS=${DEMO_RESULTS:-$GROUND_CACHE/results-demo}
if ! ls /boot/vmlinuz-* >/dev/null 2>&1 || ! [ -f "$GROUND_CACHE/initramfs.cpio.gz" ]; then
    say "building the ground's boot files (vm-images/build-ground.sh; the first time it installs linux-image-amd64 and busybox-static: about a minute)"
fi
if ! vm-images/build-ground.sh "$GROUND_CACHE" >/dev/null 2>"$GROUND_CACHE.build.log"; then
    cat "$GROUND_CACHE.build.log" >&2
    offline "vm-images/build-ground.sh failed (above)"
fi
rm -f "$GROUND_CACHE.build.log"
rm -rf "$RESULTS"
mkdir -p "$RESULTS"
OUT=$RESULTS/demo.out
CONSOLE=$RESULTS/console.log
: >"$OUT"
: >"$CONSOLE"

NODES=4 CPN=2
say "booting the ground: QEMU (TCG), $NODES NUMA nodes x $CPN CPUs x 1 GiB over 2 sockets, this machine's root read-only over 9p (about 10 s)"
NODES=$NODES CPUS_PER_NODE=$CPN MEM_PER_NODE=1G SOCKETS=2 LLCS_PER_NODE=2 \
    TIMEOUT=${DEMO_TIMEOUT:-240} GROUND_CACHE=$GROUND_CACHE RESULTS=$RESULTS LOG=$CONSOLE \
    vm-images/run-ground.sh tests/demo/ground-demo.sh >"$RESULTS/run-ground.out" 2>&1 &
pid=$!

# stream: boot milestones from the console, every complete line of demo.out
shown=0 booted=0
stream() {
    local n
    if [ $booted = 0 ] && grep -aq 'GROUND: rootfs ready' "$CONSOLE" 2>/dev/null; then
        booted=1
        say "ground kernel up, root filesystem mounted; running tests/demo/ground-demo.sh inside"
    fi
    n=$(wc -l <"$OUT")
    if [ "$n" -gt "$shown" ]; then
        sed -n "$((shown + 1)),${n}p" "$OUT" | while IFS= read -r line; do
            case "$line" in
            "@ "*) say "${line#@ }" ;;
            *) printf '%s\n' "$line" ;;
            esac
        done
        shown=$n
    fi
}
while kill -0 $pid 2>/dev/null; do
    stream
    sleep 0.5
done
wait $pid
rc=$?
stream
echo
case $rc in
0) say "demo done: the ground powered off; everything it wrote is in $RESULTS" ;;
124 | 99)
    tail -n 15 "$CONSOLE" | sed 's/^/    console: /'
    if [ $booted = 0 ]; then
        offline "the ground did not boot (run-ground.sh exit $rc; console $CONSOLE)"
    fi
    say "FAILED: the ground $([ $rc = 124 ] && echo "hung and was killed" || echo "died without an exit status") (console $CONSOLE)"
    ;;
2) cat "$RESULTS/run-ground.out"; offline "vm-images/run-ground.sh refused to start (above)" ;;
*) say "FAILED: the demo inside the ground exited $rc (console $CONSOLE, $RESULTS/demo-vnumad.log)" ;;
esac
exit $rc
