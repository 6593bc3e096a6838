# Host B on this machine (sourced by migrate.sh and migrate-hook.sh after lib.sh; tests/run.sh
# runs no lib-*.sh as a test): a second
# libvirtd (and virtlogd) in its own mount namespace, with its own /run/libvirt,
# /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt, /etc/libvirt (another host_uuid:
# libvirt refuses a migration to the same host) and /etc/machine-id (B_ID), and its vnumad,
# started in that namespace. virsh migrate --live goes from A (the system libvirtd) to B
# through B's unix socket. hostb_start takes an optional hook: a file installed as B's
# /etc/libvirt/hooks/qemu.d/vnuma before B's libvirtd starts (libvirtd looks for hooks then).
# shellcheck shell=bash
# shellcheck source=tests/e2e/lib-hosts.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib-hosts.sh"
B_ID=${B_ID:-5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a}   # host B's machine id
HB=$E2E_TMP/hostb                          # host B's directories
B_SOCK=$HB/run/libvirt-sock
VIRSH_B="virsh -q -c qemu+unix:///system?socket=$B_SOCK"
B_LIBVIRTD="" B_VIRTLOGD="" B_VN="" B_LOG="" B_VNSOCK=""

# hostb_start [HOOK]: host B's virtlogd and libvirtd in a new mount namespace (lib-hosts.sh's
# ns_libvirt_start; pids in B_LIBVIRTD, B_VIRTLOGD); 0 once B's libvirtd answers on its socket
# (30 s)
hostb_start() {
    local r
    ns_libvirt_start "$HB" "$B_ID" "" "${1:-}"
    r=$?
    B_LIBVIRTD=$NS_LIBVIRTD B_VIRTLOGD=$NS_VIRTLOGD
    return $r
}

b_answers() { $VIRSH_B version >/dev/null 2>&1; }

# hostb_stop: B's domains destroyed and undefined, its vnumad, libvirtd and virtlogd stopped
# (by pid; lib-hosts.sh's ns_libvirt_stop); the namespace goes with its last process
hostb_stop() {
    [ -n "$B_VN" ] && stop_vnumad_b >/dev/null
    [ -n "$B_LIBVIRTD$B_VIRTLOGD" ] && ns_libvirt_stop "$HB" "$B_SOCK" "$B_LIBVIRTD" "$B_VIRTLOGD"
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
    nsenter -t "$B_LIBVIRTD" -m -r -- "$PWD/$BUILD/vnumad" --foreground --config "$dir/vnumad.conf" \
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

