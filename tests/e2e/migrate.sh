#!/bin/bash
# A real live migration between two hosts on this one machine (issue 13): host A is the
# system libvirtd; host B is a second libvirtd (and virtlogd) in its own mount namespace, with
# its own /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt, /etc/libvirt
# (another host_uuid: libvirt refuses a migration to the same host) and /etc/machine-id, so
# its vnumad, started in that namespace, has another host id. virsh migrate --live goes from A
# to B through B's unix socket, QEMU's stream over TCP on 127.0.0.1 only. Each vnumad runs with
# a private config; B's connects to B's socket (uri). Checked (TCG; VN_ACCEL=kvm makes the
# domain type='kvm', not run yet: no /dev/kvm here when it was written), once with plain --live (B gets a transient domain) and once with
# --persistent (B is defined from A's definition):
#   - on A the domain opted in, vnumad A saved <original host=A> (the hand-narrowed pins it
#     found), then it is set to advise and its live pins are set by hand to THERE, pins that
#     neither A's saved originals nor B's definition have;
#   - vnumad B logs the arrival (the "started, migrated" event) and writes B's originals,
#     stamped with B's id: transient, every vCPU and the emulator unpinned within <vcpu
#     cpuset>; persistent, the <vcpupin> of the definition; the pins it came with stay;
#   - vnumad B balances it (auto) without taking its pins as originals, and an opt-out on B
#     restores B's originals (virsh vcpupin, emulatorpin, the threads' Cpus_allowed_list),
#     never A's saved ones; no <original> is left;
#   - vnumad A forgot the domain ("migrated away") and restored nothing.
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
B_ID=5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a     # host B's machine id
A_ORIG="0:0 1:0"                           # narrowed by hand on A: vnumad A saves these
THERE="0:1 1:1"                            # the live pins the domain leaves A with (emulator 1)
B_TRANSIENT="0:0-1 1:0-1"                  # B's originals of a transient domain
B_DEFINED="0:1 1:0-1"                      # B's of the persistent one: its <cputune> (A's)

e2e_preamble --built vnumad --tool unshare "a mount namespace for the second libvirtd" \
    --tool nsenter "the second vnumad runs in that namespace"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 1)"

HB=$E2E_TMP/hostb                          # host B's directories
B_SOCK=$HB/run/libvirt-sock
VIRSH_B="virsh -q -c qemu+unix:///system?socket=$B_SOCK"
B_LIBVIRTD="" B_VIRTLOGD="" B_VN="" B_LOG="" B_VNSOCK=""

# hostb_start: host B's virtlogd and libvirtd in a new mount namespace (pids in B_LIBVIRTD,
# B_VIRTLOGD); 0 once B's libvirtd answers on its socket (30 s)
hostb_start() {
    local d
    for d in run lib/qemu cache/qemu log/qemu etc/qemu; do mkdir -p "$HB/$d"; done
    chmod 755 "$HB"/run "$HB"/lib "$HB"/cache "$HB"/log "$HB"/etc
    echo "host_uuid = \"$(cat /proc/sys/kernel/random/uuid)\"" >"$HB/etc/libvirtd.conf"
    : >"$HB/etc/qemu.conf"
    echo "$B_ID" >"$HB/machine-id"
    # unshare's mount namespace is private: nothing of these mounts reaches host A
    unshare -m --propagation private bash -c '
        h=$1
        mount --bind "$h/run" /run/libvirt && mount --bind "$h/lib" /var/lib/libvirt &&
            mount --bind "$h/cache" /var/cache/libvirt && mount --bind "$h/log" /var/log/libvirt &&
            mount --bind "$h/etc" /etc/libvirt && mount --bind "$h/machine-id" /etc/machine-id &&
            virtlogd -d -p "$h/virtlogd.pid" && libvirtd -d -p "$h/libvirtd.pid"' _ "$HB" \
        200>&- >"$HB/start.out" 2>&1 || { cat "$HB/start.out" >&2; return 1; }
    B_VIRTLOGD=$(cat "$HB/virtlogd.pid" 2>/dev/null)
    wait_for 10 test -s "$HB/libvirtd.pid" && B_LIBVIRTD=$(cat "$HB/libvirtd.pid")
    [ -n "$B_LIBVIRTD" ] && wait_for 30 b_answers
}

b_answers() { $VIRSH_B version >/dev/null 2>&1; }

# hostb_stop: B's domains destroyed and undefined, its vnumad, libvirtd and virtlogd stopped
# (by pid); the namespace goes with its last process
hostb_stop() {
    local d p
    [ -n "$B_VN" ] && stop_vnumad_b >/dev/null
    if [ -n "$B_LIBVIRTD" ]; then
        for d in $($VIRSH_B list --all --name 2>/dev/null); do
            $VIRSH_B destroy "$d" >/dev/null 2>&1
            $VIRSH_B undefine "$d" >/dev/null 2>&1
        done
    fi
    for p in $B_LIBVIRTD $B_VIRTLOGD; do
        kill -TERM "$p" 2>/dev/null && wait_for 15 bash -c "! kill -0 $p 2>/dev/null"
    done
    B_LIBVIRTD="" B_VIRTLOGD=""
}
e2e_at_exit hostb_stop

# start_vnumad_b: host B's vnumad, in B's mount namespace (B's /etc/machine-id and
# /run/libvirt), connected to B's libvirtd; like start_vnumad
start_vnumad_b() {
    local dir=$E2E_TMP/vnumad-b
    mkdir -p "$dir"
    B_VNSOCK=$dir/run/vnumad.sock
    B_LOG=$dir/vnumad.log
    printf '%s\n' "interval = 1" "event_delay = 0.2" "socket = $B_VNSOCK" \
        "state_dir = $dir/state" "log_level = debug" "restore_on_exit = yes" \
        "uri = qemu+unix:///system?socket=$B_SOCK" >"$dir/vnumad.conf"
    nsenter -t "$B_LIBVIRTD" -m -- "$PWD/$BUILD/vnumad" --foreground --config "$dir/vnumad.conf" \
        2>>"$B_LOG" 200>&- &
    B_VN=$!
    wait_for 30 test -S "$B_VNSOCK"
}
stop_vnumad_b() {
    [ -n "$B_VN" ] || return 0
    kill -TERM "$B_VN" 2>/dev/null
    wait_for 15 bash -c "! kill -0 $B_VN 2>/dev/null" || kill -KILL "$B_VN" 2>/dev/null
    wait "$B_VN"
    B_VN_EXIT=$?
    B_VN=""
}
b_pass() {
    "$BUILD/vnumactl" --socket "$B_VNSOCK" status --json 2>/dev/null |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("return", j)["pass"])' 2>/dev/null
}
b_pass_reached() { local p; p=$(b_pass); [ -n "$p" ] && [ "$p" -ge "$1" ]; }
b_wait_passes() { local p0; p0=$(b_pass); [ -n "$p0" ] && wait_for 30 b_pass_reached $((p0 + $1)); }

# on_b COMMAND...: a lib.sh helper run against host B (its virsh, its QEMU pid files)
on_b() { VIRSH=$VIRSH_B LIBVIRT_RUN=$HB/run "$@"; }
pins_are() { [ "$(vcpu_pins "$1")" = "$2" ]; }
emulator_pin() { $VIRSH emulatorpin "$1" --live 2>/dev/null | awk -F: '{gsub(/[ *]/, "", $NF); if ($NF != "") print $NF}'; }
# state_of DOM HOST PINS EMULATOR: the live <state> has one <original>, of HOST, with PINS
# ("0:0 1:0") and the emulator pin EMULATOR
state_of() {
    live_state "$1" | python3 -c '
import sys, xml.etree.ElementTree as E
os = E.fromstring(sys.stdin.read()).findall("original")
o = os[0] if len(os) == 1 else None
pins = " ".join("%s:%s" % (p.get("vcpu"), p.get("cpuset")) for p in o.iter("vcpupin")) if o is not None else ""
emu = o.find("emulatorpin") if o is not None else None
sys.exit(0 if o is not None and o.get("host") == sys.argv[1] and pins == sys.argv[2]
         and emu is not None and emu.get("cpuset") == sys.argv[3] else 1)' "$2" "$3" "$4" 2>/dev/null
}
originals() { live_state "$1" | grep -E 'original|pin' | tr -d ' \n'; }
no_original() { ! live_state "$1" | grep -q '<original'; }
b_log_has() { grep -Eq -- "$1" "$B_LOG"; }

A_ID=$(cat /etc/machine-id)
[ -n "$A_ID" ] && [ "$A_ID" != "$B_ID" ]
ok $? "host A's machine id is $A_ID, host B's will be $B_ID"
hostb_start
ok $? "host B: a second libvirtd in its own mount namespace answers on $B_SOCK (pid $B_LIBVIRTD)"
[ $fail -eq 0 ] || finish
ua=$(virsh -c qemu:///system capabilities | sed -n 's|.*<uuid>\(.*\)</uuid>.*|\1|p' | head -n 1)
ub=$($VIRSH_B capabilities | sed -n 's|.*<uuid>\(.*\)</uuid>.*|\1|p' | head -n 1)
[ -n "$ub" ] && [ "$ua" != "$ub" ]
ok $? "the two libvirtds have different host UUIDs ($ua, $ub)"
start_vnumad "restore_on_exit = yes"
ok $? "vnumad A started"
start_vnumad_b
ok $? "vnumad B started in host B's namespace"
wait_for 10 grep -q . "$B_LOG"
b_log_has "vnumad started"
ok $? "vnumad B runs ($(grep -m1 'vnumad started' "$B_LOG" | cut -c1-100))"
[ $fail -eq 0 ] || finish

D=$(define_domain migrate "$T" "s|</vcpu>|</vcpu><cputune><vcpupin vcpu='0' cpuset='1'/></cputune>|")
ok $? "domain $D defined on A (vCPU 0 pinned to CPU 1 in its <cputune>)"
[ $fail -eq 0 ] || finish

# migrate_run FLAG EXPECTED: one migration of $D from A to B (virsh migrate --live FLAG)
migrate_run() {
    local flag=$1 want=$2 tag=${1:-transient} id out
    tag=${tag#--}
    # a fresh QEMU run on A; B numbers its domains from 1, and a cgroup machine/qemu-ID-NAME
    # shared by the two would be the same cgroup: A's id stays above B's
    $VIRSH domstate "$D" 2>/dev/null | grep -q running || $VIRSH start "$D" >/dev/null
    id=$($VIRSH domid "$D")
    while [ "${id:-0}" -le 4 ]; do
        $VIRSH destroy "$D" >/dev/null && $VIRSH start "$D" >/dev/null || break
        id=$($VIRSH domid "$D")
    done
    $VIRSH vcpupin "$D" 0 0 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null &&
        $VIRSH emulatorpin "$D" 0 --live >/dev/null
    set_meta "$D" '<balancer mode="auto"/>' >/dev/null
    wait_for 15 state_of "$D" "$A_ID" "$A_ORIG" 0
    ok $? "$tag: vnumad A saved <original host=\"$A_ID\"> $A_ORIG, emulator 0 ($(originals "$D"))"
    wait_for 15 pins_are "$D" "0:0-1 1:0-1"
    ok $? "$tag: and balanced it on A ($(vcpu_pins "$D"))"
    set_meta "$D" '<balancer mode="advise"/>' >/dev/null
    wait_passes 2
    $VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 1 --live >/dev/null &&
        $VIRSH emulatorpin "$D" 1 --live >/dev/null
    wait_passes 2
    pins_are "$D" "$THERE" && [ "$(emulator_pin "$D")" = 1 ] && state_of "$D" "$A_ID" "$A_ORIG" 0
    ok $? "$tag: advise on A, live pins set by hand to $THERE, emulator 1 ($(vcpu_pins "$D"), emulator $(emulator_pin "$D")); A's <original> kept"

    # ---- the migration ----
    out=$($VIRSH migrate --live $flag "$D" "qemu+unix:///system?socket=$B_SOCK" \
        --migrateuri tcp://127.0.0.1 --listen-address 127.0.0.1 2>&1)
    ok $? "$tag: virsh migrate --live${flag:+ $flag} $D to host B (QEMU over tcp://127.0.0.1)${out:+: $out}"
    $VIRSH_B domstate "$D" 2>/dev/null | grep -q running
    ok $? "$tag: $D runs on B ($($VIRSH_B domstate "$D" 2>&1)), persistent there: $($VIRSH_B dominfo "$D" | awk '/^Persistent/ {print $2}')"
    [ "$($VIRSH_B dominfo "$D" | awk '/^Persistent/ {print $2}')" = "$([ -n "$flag" ] && echo yes || echo no)" ]
    ok $? "$tag: ... $([ -n "$flag" ] && echo defined || echo transient) on B"

    # ---- host A's vnumad ----
    wait_for 10 log_has "Domain '$D' stopped \(migrated away\); no longer tracked"
    ok $? "$tag: vnumad A forgot it: $(grep "Domain '$D' stopped" "$VN_LOG" | tail -n 1 | cut -c1-120)"
    ! log_has "Restored .*'$D'"
    ok $? "$tag: vnumad A restored nothing"

    # ---- host B's vnumad ----
    wait_for 15 b_log_has "Domain '$D' arrived from another host"
    ok $? "$tag: vnumad B logged the arrival ($(grep -E "'$D' (started|resumed|arrived)" "$B_LOG" | sed 's/^<[0-9]>//' | cut -c1-60 | paste -sd'|'))"
    wait_for 15 on_b state_of "$D" "$B_ID" "$want" 0-1
    ok $? "$tag: B's <original host=\"$B_ID\"> holds B's originals $want, emulator 0-1: $(on_b originals "$D")"
    ! on_b live_state "$D" | grep -q "$A_ID"
    ok $? "$tag: nothing of A's <original> is left in B's live metadata"
    on_b pins_are "$D" "$THERE" && [ "$(on_b emulator_pin "$D")" = 1 ]
    ok $? "$tag: the pins it came with stay while it is advised ($(on_b vcpu_pins "$D"), emulator $(on_b emulator_pin "$D"))"
    on_b set_meta "$D" '<balancer mode="auto"/>' >/dev/null
    wait_for 15 on_b pins_are "$D" "0:0-1 1:0-1"
    ok $? "$tag: auto on B: vnumad B balanced it ($(on_b vcpu_pins "$D"))"
    b_wait_passes 2
    on_b state_of "$D" "$B_ID" "$want" 0-1
    ok $? "$tag: ... and kept B's originals, not the pins it found ($(on_b originals "$D"))"
    on_b set_meta "$D" '<balancer mode="off"/>' >/dev/null
    wait_for 15 on_b pins_are "$D" "$want"
    ok $? "$tag: opt-out on B restores B's originals $want ($(on_b vcpu_pins "$D"); A's were $A_ORIG)"
    [ "$(on_b emulator_pin "$D")" = 0-1 ] && [ "$(on_b vcpu_thread_affinity "$D")" = "$want" ]
    ok $? "$tag: ... emulator $(on_b emulator_pin "$D"), vCPU threads' Cpus_allowed_list $(on_b vcpu_thread_affinity "$D")"
    wait_for 10 on_b no_original "$D"
    ok $? "$tag: no <original> left on B"
    b_log_has "Restored the original pinning and binding of '$D' \(opted out: mode off\)"
    ok $? "$tag: ($(grep "Restored.*'$D'" "$B_LOG" | tail -n 1 | sed 's/^<[0-9]>//'))"
    $VIRSH_B destroy "$D" >/dev/null
    [ -n "$flag" ] && $VIRSH_B undefine "$D" >/dev/null
    wait_for 10 b_log_has "Domain '$D' stopped"
}

migrate_run "" "$B_TRANSIENT"
migrate_run --persistent "$B_DEFINED"

stop_vnumad_b
[ "$B_VN_EXIT" = 0 ]
ok $? "vnumad B exited 0 on SIGTERM"
[ -z "$(sanitizer_report "$B_LOG")" ]
ok $? "vnumad B left no sanitizer report in its log"
grep -Eq '^<[0-3]>' "$B_LOG" && note "vnumad B's errors: $(grep -E '^<[0-3]>' "$B_LOG" | head -n 3 | paste -sd'|')"
finish
