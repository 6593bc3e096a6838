#!/bin/bash
# Boot the proving ground: a QEMU VM with NODES NUMA nodes over SOCKETS sockets running this
# machine's own root (9p, read-only, tmpfs overlay), run SCRIPT inside, power off.
# Exit status = SCRIPT's exit status; 124 when the ground hung (killed after TIMEOUT s);
# 99 when it died without reporting one (panic, crash); 2 on bad usage.
# A hang leaves its state on stderr before the kill, for the test's log: "boot-hang:" lines (a
# kernel that never reached the init: QEMU's status and every vCPU's registers, through an HMP
# monitor socket), or "hang:" and "console:" lines (later: the registers and the console's tail,
# which names the last step the script logged). After a boot hang the ground is booted once
# more and a "retried:" line says so; a second boot hang is a failure (rc 124).
#
#   usage: vm-images/run-ground.sh [options] SCRIPT [ARG...]
#     SCRIPT  absolute path (the repository is at the same path inside) or relative to $PWD;
#             ARGs must not contain spaces or commas (they travel on the kernel command line)
#   options (or the environment variables of the same name):
#     --nodes N           NODES=4           NUMA nodes
#     --cpus-per-node N   CPUS_PER_NODE=2
#     --mem-per-node S    MEM_PER_NODE=1G   (QEMU size: 512M, 1G, ...)
#     --sockets N         SOCKETS=2         nodes are split evenly over the sockets
#     --llcs-per-node N   LLCS_PER_NODE=0   0: no L3 reported (Nehalem,l3-cache=off, one LLC);
#                                           N>=1: N L3 caches per node (one per die)
#     --distances L,S,R   DISTANCES=10,16,21  local, same socket, other socket (SLIT)
#     --accel tcg|kvm     ACCEL=tcg         kvm only on hosts with real VT-x/AMD-V
#     --timeout S         TIMEOUT=600       wall-clock bound; a hung ground is killed (rc 124)
#     --boot-timeout S    BOOT_TIMEOUT=120  from QEMU's start to the init's "rootfs ready" line: a
#                         kernel that has not got there is booted once more (a new QEMU)
#     --results DIR       RESULTS=build/ground/results   shared rw, /results inside
#     --cache DIR         GROUND_CACHE=build/ground      boot files; shared rw, /ground-cache inside
#     --log FILE          LOG=RESULTS/console.log
#     --init busybox|systemd  GROUND_INIT=busybox   systemd: Debian's systemd is PID 1 and runs
#                         SCRIPT as a service (ground-script.service of ground.target)
#     --tier-node S       TIER_NODE=        (off) S (512M, 1G, ...): one more node, number NODES,
#                         with no CPUs and no memory at boot, and an NVDIMM of size S on it
#                         (nvdimm=on, a memory-backend-file under /dev/shm); inside, lib.sh's
#                         ground_tier_online makes it system RAM in a lower memory tier (dax kmem),
#                         as CXL or persistent memory is. SLIT: TIER_DISTANCES=24,30 from the
#                         nodes of socket 0, of the other sockets. An HMAT too (hmat=on, latency
#                         and bandwidth from the distances); TIER_HMAT=0: none
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
NODES=${NODES:-4} CPUS_PER_NODE=${CPUS_PER_NODE:-2} MEM_PER_NODE=${MEM_PER_NODE:-1G}
SOCKETS=${SOCKETS:-2} LLCS_PER_NODE=${LLCS_PER_NODE:-0} DISTANCES=${DISTANCES:-10,16,21}
ACCEL=${ACCEL:-tcg} TIMEOUT=${TIMEOUT:-600} BOOT_TIMEOUT=${BOOT_TIMEOUT:-120}
GROUND_CACHE=${GROUND_CACHE:-$REPO/build/ground}
RESULTS=${RESULTS:-$GROUND_CACHE/results} LOG=${LOG:-}
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
    --nodes) NODES=$2; shift 2 ;;
    --cpus-per-node) CPUS_PER_NODE=$2; shift 2 ;;
    --mem-per-node) MEM_PER_NODE=$2; shift 2 ;;
    --sockets) SOCKETS=$2; shift 2 ;;
    --llcs-per-node) LLCS_PER_NODE=$2; shift 2 ;;
    --distances) DISTANCES=$2; shift 2 ;;
    --accel) ACCEL=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --boot-timeout) BOOT_TIMEOUT=$2; shift 2 ;;
    --results) RESULTS=$2; shift 2 ;;
    --cache) GROUND_CACHE=$2; shift 2 ;;
    --log) LOG=$2; shift 2 ;;
    --init) GROUND_INIT=$2; shift 2 ;;
    --tier-node) TIER_NODE=$2; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) echo "run-ground: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || usage
SCRIPT=$(realpath -m "$1"); shift
say() { echo "run-ground: $*" >&2; }
[ -f "$SCRIPT" ] || { say "no such script: $SCRIPT"; exit 2; }
# The repository is shared into the ground at its own path (it may live under /tmp, which
# the ground mounts afresh); anything else must be visible through the root share.
REPO=$(cd "$HERE/.." && pwd)
case "$REPO" in *[\ ,]*) say "the repository path '$REPO' has a space or comma"; exit 2 ;; esac
case "$SCRIPT" in
"$REPO"/*) ;;
/tmp/* | /run/* | /dev/* | /proc/* | /sys/*)
    say "$SCRIPT is under a directory the ground mounts afresh (tmpfs); put it elsewhere"; exit 2 ;;
esac
command -v qemu-system-x86_64 >/dev/null || { say "qemu-system-x86_64 is not installed"; exit 2; }
IFS=, read -r D_LOCAL D_SOCKET D_REMOTE <<<"$DISTANCES"
[ -n "${D_REMOTE:-}" ] || { say "--distances wants LOCAL,SAME_SOCKET,REMOTE"; exit 2; }
[ $((NODES % SOCKETS)) = 0 ] || { say "NODES ($NODES) must be a multiple of SOCKETS ($SOCKETS)"; exit 2; }
for a in "$@"; do case "$a" in *[\ ,]*) say "argument '$a' has a space or comma"; exit 2 ;; esac; done

# One ground at a time on a machine: two TCG grounds on a 2-core host would both miss
# their time bounds. A second run waits (30 min at most) instead.
mkdir -p /run/lock
exec 201>/run/lock/vnuma-ground.lock
if ! flock -n 201; then
    say "another ground is running: waiting for it (lock /run/lock/vnuma-ground.lock)"
    flock -w 1800 201 || { say "the other ground did not finish within 30 min"; exit 2; }
fi
"$HERE/build-ground.sh" "$GROUND_CACHE" >/dev/null || { say "build-ground.sh failed"; exit 2; }
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
LOG=${LOG:-$RESULTS/console.log}
rm -f "$RESULTS/.ground-rc"

# Topology: node n has CPUs n*CPUS_PER_NODE ... ; nodes n*SOCKETS/NODES belong to one socket.
# With LLCS_PER_NODE=k, each socket has (nodes per socket * k) dies, each die its own L3.
nps=$((NODES / SOCKETS))
ncpu=$((NODES * CPUS_PER_NODE))
if [ "$LLCS_PER_NODE" -gt 0 ]; then
    [ $((CPUS_PER_NODE % LLCS_PER_NODE)) = 0 ] || { say "CPUS_PER_NODE must be a multiple of LLCS_PER_NODE"; exit 2; }
    dies=$((nps * LLCS_PER_NODE))
    smp="$ncpu,sockets=$SOCKETS,dies=$dies,cores=$((CPUS_PER_NODE / LLCS_PER_NODE)),threads=1"
    cpu_model=${GROUND_CPU:-Nehalem,l3-cache=on}
else
    smp="$ncpu,sockets=$SOCKETS,cores=$((ncpu / SOCKETS)),threads=1"
    cpu_model=${GROUND_CPU:-Nehalem,l3-cache=off}
fi
numa=()
for ((n = 0; n < NODES; n++)); do
    numa+=(-object "memory-backend-ram,id=m$n,size=$MEM_PER_NODE"
        -numa "node,nodeid=$n,cpus=$((n * CPUS_PER_NODE))-$((n * CPUS_PER_NODE + CPUS_PER_NODE - 1)),memdev=m$n")
done
for ((a = 0; a < NODES; a++)); do
    for ((b = a + 1; b < NODES; b++)); do
        if [ $((a / nps)) = $((b / nps)) ]; then d=$D_SOCKET; else d=$D_REMOTE; fi
        numa+=(-numa "dist,src=$a,dst=$b,val=$d")
    done
done
mem_mib=$(numfmt --from=iec "${MEM_PER_NODE}") || { say "bad MEM_PER_NODE $MEM_PER_NODE"; exit 2; }
total_mib=$((mem_mib * NODES / 1048576))
machine=pc memory="${total_mib}M" tier_file=""
# The tier node (--tier-node): node NODES, no CPUs, no memory at boot (no memdev); an NVDIMM on it
# (the NFIT and an SRAT entry name the node; its backing file comes below) that the ground makes
# system RAM with dax kmem, which the kernel puts in a lower memory tier.
if [ -n "${TIER_NODE:-}" ]; then
    tier_bytes=$(numfmt --from=iec "$TIER_NODE") && [ $((tier_bytes % 2097152)) = 0 ] && [ "$tier_bytes" -gt 0 ] ||
        { say "bad TIER_NODE $TIER_NODE (a multiple of 2M: 512M, 1G, ...)"; exit 2; }
    tier_mib=$((tier_bytes / 1048576))
    IFS=, read -r T_NEAR T_FAR <<<"${TIER_DISTANCES:-24,30}"
    [ -n "${T_FAR:-}" ] || { say "TIER_DISTANCES wants NEAR,FAR"; exit 2; }
    command -v ndctl >/dev/null && command -v daxctl >/dev/null ||
        say "warning: ndctl or daxctl is not installed (make deps installs them): the ground cannot online the tier node"
    machine=pc,nvdimm=on
    memory="${total_mib}M,slots=2,maxmem=$((total_mib + tier_mib))M"
    TIER_HMAT=${TIER_HMAT:-1}
    # with an HMAT (below), the CPUs nearest to the tier node are node 0's
    numa+=(-numa "node,nodeid=$NODES$([ "$TIER_HMAT" = 1 ] && echo ,initiator=0)")
    for ((a = 0; a < NODES; a++)); do
        if [ $((a / nps)) = 0 ]; then d=$T_NEAR; else d=$T_FAR; fi
        numa+=(-numa "dist,src=$a,dst=$NODES,val=$d")
    done
    # An ACPI HMAT as well (TIER_HMAT=0: none), every node with CPUs to every node, derived from
    # the SLIT distance d: latency d*10 ns (local 100 ns), bandwidth 200 GiB/s / d (local 20 GiB/s)
    if [ "$TIER_HMAT" = 1 ]; then
        machine=$machine,hmat=on
        for ((a = 0; a < NODES; a++)); do
            for ((b = 0; b <= NODES; b++)); do
                if [ $a = $b ]; then d=$D_LOCAL
                elif [ $b = "$NODES" ] && [ $((a / nps)) = 0 ]; then d=$T_NEAR
                elif [ $b = "$NODES" ]; then d=$T_FAR
                elif [ $((a / nps)) = $((b / nps)) ]; then d=$D_SOCKET
                else d=$D_REMOTE; fi
                numa+=(-numa "hmat-lb,initiator=$a,target=$b,hierarchy=memory,data-type=access-latency,latency=$((d * 10))"
                    -numa "hmat-lb,initiator=$a,target=$b,hierarchy=memory,data-type=access-bandwidth,bandwidth=$((204800 / d))M")
            done
        done
    fi
fi
case "$ACCEL" in
kvm) accel=(-accel kvm) ;;
tcg) accel=(-accel "tcg,thread=multi,tb-size=${TB_SIZE:-256}") ;;
*) say "ACCEL must be tcg or kvm"; exit 2 ;;
esac
args=$(IFS=,; echo "$*")
append="console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off ground.script=$SCRIPT ground.repo=$REPO"
[ -n "$args" ] && append="$append ground.args=$args"
case "${GROUND_INIT:-busybox}" in
busybox) ;;
# no fstab (this machine's is not the ground's), quiet unit status, the journal on the console
systemd) append="$append ground.init=systemd systemd.unit=ground.target fstab=no systemd.show_status=error" ;;
*) say "GROUND_INIT must be busybox or systemd"; exit 2 ;;
esac
[ -n "${TIER_NODE:-}" ] && append="$append ground.tier_node=$NODES"
append="$append ${EXTRA_APPEND:-}"

tier_say=""
[ -n "${TIER_NODE:-}" ] && tier_say=", tier node $NODES ($TIER_NODE NVDIMM, distances $T_NEAR/$T_FAR$([ "$TIER_HMAT" = 1 ] && echo ", HMAT"))"
say "booting: $NODES nodes x $CPUS_PER_NODE CPUs x $MEM_PER_NODE, $SOCKETS sockets, distances $D_LOCAL/$D_SOCKET/$D_REMOTE, llcs/node ${LLCS_PER_NODE}$tier_say, $ACCEL, timeout ${TIMEOUT}s (boot ${BOOT_TIMEOUT}s); console $LOG"
# QEMU's human monitor on a socket of this host only (not in the shared results dir): how a hung
# ground's vCPUs stand is read through it before it is killed
MON_DIR=$(mktemp -d /run/vnuma-ground-mon.XXXXXX) || { say "mktemp failed"; exit 2; }
MON=$MON_DIR/hmp.sock
qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$MON_DIR"; [ -z "$tier_file" ] || rm -f "$tier_file"' EXIT
trap 'exit 130' INT TERM HUP
# The tier node's NVDIMM: a file on /dev/shm, created empty (sparse: host RAM only for what the
# ground touches), emptied before each boot, removed at exit
if [ -n "${TIER_NODE:-}" ]; then
    tier_file=$(mktemp /dev/shm/vnuma-ground-tier.XXXXXX) || { say "mktemp in /dev/shm failed"; exit 2; }
    numa+=(-object "memory-backend-file,id=mtier,share=on,mem-path=$tier_file,size=${tier_mib}M"
        -device "nvdimm,id=nvtier,memdev=mtier,node=$NODES")
fi
# hmp CMD...: each command's output from the monitor (escape sequences and the echo removed)
hmp() {
    python3 - "$MON" "$@" <<'PY' 2>&1
import re, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
def prompt():
    b = b""
    while not b.endswith(b"(qemu) "):
        d = s.recv(65536)
        if not d:
            break
        b += d
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\r", "", b.decode(errors="replace"))
prompt()
for c in sys.argv[2:]:
    s.sendall(c.encode() + b"\n")
    print("\n".join(l for l in prompt().splitlines()[1:] if l != "(qemu) "))
PY
}
# hang_state PREFIX: QEMU's status and each vCPU's instruction pointer (while QEMU runs), then
# the console's tail
hang_state() {
    {
        if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
            hmp "info status" "info cpus" "info registers -a" | grep -E '^(VM status|[ *]*CPU #|CPU#|RIP|EIP|CR0)'
        fi
        echo "console ($(wc -l <"$LOG") lines), its tail:"
    } | sed "s/^/$1: /" >&2
    tail -n 40 "$LOG" | sed 's/^/console: /' >&2
}
# boot_once: one QEMU run, watched; qrc = its exit status, 124 when it hung (TIMEOUT s after the
# first boot began) and 125 when its kernel did not reach the init (within BOOT_TIMEOUT s, or
# QEMU died first)
boot_once() {
    local t0=$SECONDS booted=0 segv0
    # the kernel's segfault lines of QEMUs so far: a crash below prints only the new ones
    segv0=$(dmesg 2>/dev/null | grep -ac 'qemu-system.*segfault')
    : >"$LOG"
    rm -f "$MON"
    [ -z "$tier_file" ] || : >"$tier_file" # a new boot sees a blank NVDIMM (QEMU sizes the file)
    # timeout without --foreground: qemu gets its own process group and is SIGKILLed 10 s after
    # TERM; a backstop: the loop below ends it first, at the deadline, with its state read
    timeout -k 10 $((deadline - SECONDS + 30)) \
        qemu-system-x86_64 -name vnuma-ground -machine "$machine" "${accel[@]}" -cpu "$cpu_model" \
        -m "$memory" -smp "$smp" "${numa[@]}" \
        -nodefaults -no-user-config -display none -no-reboot \
        -serial "file:$LOG" -monitor "unix:$MON,server=on,wait=off" \
        -device virtio-rng-pci \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$RESULTS,mount_tag=results,security_model=none,multidevs=remap" \
        -virtfs "local,path=$GROUND_CACHE,mount_tag=gcache,security_model=none,multidevs=remap" \
        -virtfs "local,path=$REPO,mount_tag=repo,security_model=none,readonly=on,multidevs=remap" \
        -kernel "$GROUND_CACHE/vmlinuz" -initrd "$GROUND_CACHE/initramfs.cpio.gz" \
        -append "$append" ${EXTRA_QEMU:-} </dev/null &
    qpid=$!
    while kill -0 "$qpid" 2>/dev/null; do
        [ $booted = 1 ] || ! grep -aq 'GROUND: rootfs ready' "$LOG" || booted=1
        if [ $booted = 0 ] && [ $((SECONDS - t0)) -ge "$BOOT_TIMEOUT" ]; then
            hang_state boot-hang
            kill "$qpid"; wait "$qpid"; qpid=""
            qrc=125
            return
        fi
        # The ground's kernel says a vCPU has been stuck for 100 s or more (a soft lockup; a
        # shorter one can be a starved vCPU on a loaded host, which goes on) while the scenario
        # script waits for the ground's libvirtd, before any vnuma code ran: QEMU's TCG hung
        # (seen once: CPU 3 stuck in the idle task 10 s into the run, the run killed at its
        # timeout 15 minutes later). A boot hang: state read, booted once more, said as
        # "retried:". After libvirt is up (vnumad's scenarios) a lockup is a failure.
        if [ $booted = 1 ] && grep -aq '^GROUND-T .* scenarios start' "$LOG" &&
            ! grep -aq '^GROUND-T .* libvirt ready' "$LOG" &&
            grep -aqE 'soft lockup - CPU#[0-9]+ stuck for [0-9]{3,}s' "$LOG"; then
            echo "the ground's kernel reported a stuck vCPU before its libvirtd was up, $((SECONDS - t0)) s into the run" |
                sed 's/^/boot-hang: /' >&2
            hang_state boot-hang
            kill "$qpid"; wait "$qpid"; qpid=""
            qrc=125
            return
        fi
        if [ "$SECONDS" -ge "$deadline" ]; then
            hang_state hang
            kill "$qpid"; wait "$qpid"; qpid=""
            qrc=124
            return
        fi
        sleep 1 # how often the console is looked at, not a bound: the bounds are the deadlines
    done
    wait "$qpid"
    qrc=$?
    qpid=""
    # QEMU itself died before the kernel reached the init (seen: a TCG vCPU thread's SIGSEGV
    # 7 s into a boot, qemu 7.2): no vnuma code ran yet, a boot failure like a hang
    if [ $booted = 0 ] && [ $qrc != 0 ]; then
        {
            echo "QEMU exited with status $qrc before the kernel reached its init, after $((SECONDS - t0)) s"
            dmesg 2>/dev/null | grep -a 'qemu-system.*segfault' | tail -n +$((segv0 + 1))
        } | sed 's/^/boot-hang: /' >&2
        hang_state boot-hang
        qrc=125
    fi
}
start=$(date +%s.%N)
deadline=$((SECONDS + TIMEOUT))
boot_once
if [ $qrc = 125 ] && [ "$SECONDS" -lt "$deadline" ]; then
    boot_once
    [ $qrc = 125 ] || echo "retried: the ground's first QEMU hung or died before its kernel reached the init, or its kernel reported a stuck vCPU before libvirt was up (state above, \"boot-hang:\"); a new QEMU booted it" >&2
fi
wall=$(echo "$(date +%s.%N) - $start" | bc)
if [ $qrc = 125 ]; then
    say "BOOT HANG: the ground's kernel did not reach its init, twice (within ${BOOT_TIMEOUT} s of QEMU's start; state above); wall ${wall}s; console $LOG"
    exit 124
fi
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
    say "TIMEOUT: the ground did not power off within ${TIMEOUT}s (state above; killed); wall ${wall}s; console $LOG"
    exit 124
fi
rc=$(cat "$RESULTS/.ground-rc" 2>/dev/null)
[ -n "$rc" ] || rc=$(grep -ao 'GROUND: script rc=[0-9]*' "$LOG" | tail -n 1 | sed 's/.*rc=//')
if [ -z "$rc" ]; then
    say "FAILED: no script exit status (qemu rc $qrc; panic or crash?); wall ${wall}s; console $LOG"
    hang_state crash
    exit 99
fi
say "script rc=$rc, qemu rc=$qrc, wall ${wall}s"
exit "$rc"
