#!/bin/bash
# No decision on unmeasured input (issue 16): the first decision vnumad records for a domain
# is made on busy fractions it measured. Two opted-in domains are running when vnumad starts
# (it has read neither's vCPUs yet): one whose two vCPUs spin (the proving ground's spin.elf
# as its kernel: every vCPU 100% busy) and one idle (firmware, halted). vnumad's first pass
# opens a CPU time window on each, samples them when it is long enough and decides: the
# first record of each must count its cells' vCPUs as they really are (busy_vcpus 1 per cell
# for the spinning one, 0 for the idle one, measured against /proc), never "unmeasured".
# TCG only: under this machine's KVM (PVM) a halted vCPU's thread runs up to half a CPU in
# halt polling, which the kernel's schedstat cannot tell from guest work (vnumad takes KVM's
# halt-poll statistics off; the e2e tests' [kvm] variants all begin with such a window).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad
[ "${VN_ACCEL:-tcg}" = tcg ] || skip_all "TCG only (see the head of this script)"
command -v as >/dev/null && command -v ld >/dev/null || skip_all "no as/ld (binutils) to build spin.elf"
as --32 -o "$E2E_TMP/spin.o" vm-images/ground/spin.S && ld -m elf_i386 -Ttext=0x100000 -e _start \
    -o "$E2E_TMP/spin.elf" "$E2E_TMP/spin.o" || skip_all "cannot build spin.elf"
chmod 711 "$E2E_TMP"
chmod 644 "$E2E_TMP/spin.elf"

SPIN=$(define_domain spin "$T" "$(optin_sed 'mode="auto"')" \
    "s|<os><type arch='x86_64' machine='pc'>hvm</type></os>|<os><type arch='x86_64' machine='pc'>hvm</type><kernel>$E2E_TMP/spin.elf</kernel></os>|")
ok $? "opted-in domain $SPIN started with spin.elf as its kernel (every vCPU spins)"
IDLE=$(define_domain idle "$T" "$(optin_sed 'mode="auto"')")
ok $? "opted-in domain $IDLE started (firmware only, halted)"

# the kernel's view: each vCPU thread's run time over 2 s (schedstat's sum_exec_runtime, ns)
thread_busy() { # thread_busy DOMAIN: "min max" busy fraction over its vCPU threads
    local pid tids a b
    pid=$(cat "/run/libvirt/qemu/$1.pid")
    tids=$(grep -l 'CPU [0-9]*/' /proc/"$pid"/task/*/comm | sed 's|/comm||')
    a=$(for t in $tids; do awk '{print $1}' "$t/schedstat"; done)
    sleep 2
    b=$(for t in $tids; do awk '{print $1}' "$t/schedstat"; done)
    paste <(echo "$a") <(echo "$b") | awk \
        '{f = ($2 - $1) / 2e9; if (NR == 1 || f < mn) mn = f; if (NR == 1 || f > mx) mx = f} END {printf "%.2f %.2f\n", mn, mx}'
}
read -r smin smax <<<"$(thread_busy "$SPIN")"
read -r imin imax <<<"$(thread_busy "$IDLE")"
# busy_threshold 0.05 for this test (default 0.25): on a loaded machine (issue 28: two busy
# loops per core, the proving ground's eight TCG vCPUs beside: tests/run.sh) a spinning vCPU
# thread gets a sixth of a CPU or less, not all of it, while a halted TCG vCPU's thread sleeps
# (0.00-0.01 seen); what is tested is that the first decision is made on what was measured, on
# either side of the threshold
awk -v a="$smin" -v b="$imax" 'BEGIN {exit !(a >= 0.08 && b < 0.03)}'
ok $? "the kernel sees $SPIN's vCPU threads busy ($smin..$smax of a CPU, >= 0.08) and $IDLE's idle ($imin..$imax, < 0.03), on either side of busy_threshold 0.05"

start_vnumad "interval = 2" "busy_threshold = 0.05"
first_record() { # first_record DOMAIN: the first journal record of DOMAIN
    python3 - "$VN_JOURNAL" "$1" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("domain") == sys.argv[2]:
        print(json.dumps(r))
        break
else:
    sys.exit(1)
PY
}
wait_for 30 first_record "$SPIN" >/dev/null && wait_for 30 first_record "$IDLE" >/dev/null
ok $? "vnumad recorded a first decision for both"
first_record "$SPIN" >"$E2E_TMP/spin.json"
first_record "$IDLE" >"$E2E_TMP/idle.json"
note "first record of $SPIN: $(head -c 700 "$E2E_TMP/spin.json")"
note "first record of $IDLE: $(head -c 700 "$E2E_TMP/idle.json")"
cells() { # cells FILE EXPR: EXPR holds for every cell c of the record, and there are 2
    python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cs = r.get("cells", [])
sys.exit(0 if len(cs) == 2 and all(eval(sys.argv[2]) for c in cs) else 1)
PY
}
cells "$E2E_TMP/spin.json" 'c.get("busy_vcpus") == 1 and c["reason"] != "unmeasured"'
ok $? "$SPIN's first decision counts each cell's vCPU busy (busy_vcpus 1), measured"
cells "$E2E_TMP/idle.json" 'c.get("busy_vcpus") == 0 and c["reason"] != "unmeasured"'
ok $? "$IDLE's first decision counts its vCPUs idle (busy_vcpus 0), measured"
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pass"])' "$E2E_TMP/spin.json")" = 1 ]
ok $? "... in vnumad's first pass (the window is opened and closed inside it)"
! grep -q '"unmeasured"' "$VN_JOURNAL"
ok $? "no record in the journal says unmeasured"
finish
