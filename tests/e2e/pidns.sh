#!/bin/bash
# A libvirt daemon in a PID namespace of its own, as a KubeVirt launcher's virtqemud runs in its
# pod (docs/fleet.md, "Launchers in their own PID and mount namespaces"): a second libvirtd (and
# its virtlogd) started by `unshare --pid --fork --mount-proc` in new PID and mount namespaces,
# with its own /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and
# /etc/libvirt bound from the test's directory (as lib-hostb.sh's host B); a small init of the
# test's is the namespace's pid 1 and reaps what is left to it (QEMU daemonizes). One TCG domain
# with two cells, opted in (mode auto), allowed CPUs 0-1 and live-pinned to CPU 0, runs there.
# Its status file names QEMU by its pid in that namespace, which is not the host's; QEMU reports
# its vCPU threads by that namespace's ids too.
# A private vnumad in the host's namespaces connects with uri = qemu+unix:///system?socket=...,
# and must:
#   - read the status file in the daemon's root and map its pid (vnumactl status shows both
#     cells with their memory and vCPUs: the QEMU process and its threads were found);
#   - balance the domain: its vCPUs pinned to the node's CPUs 0-1, on libvirt (the pod's
#     daemon) and on the kernel (each vCPU thread's affinity, read in the host's /proc);
#   - log no failed sample, no refusal of the namespace;
#   - put the pins back (CPU 0) when it stops.
# Then a booted TCG guest with vnuma-agent in the same pod (vm-images/build-guest.sh; this part
# says why when the guest cannot be built or boot here): its agent channel's socket is where the
# pod's libvirt made it, in the pod's /var/lib/libvirt (the path in its XML names nothing on the
# host), and vnumad connects to it through the daemon's root and is served hints.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl --tool unshare "util-linux: new namespaces" \
    --tool python3 "the namespace's init"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 0-1)"

POD=$E2E_TMP/pod
SOCK=$POD/run/libvirt-sock
PVIRSH="virsh -q -c qemu+unix:///system?socket=$SOCK"
POD_INIT="" POD_LIBVIRTD="" POD_VIRTLOGD=""

# the namespace's pid 1: reaps every child it is left (QEMU daemonizes, libvirtd -d too), exits
# on SIGTERM (the kernel then kills what is left in the namespace)
INIT='
import os, signal, sys
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
signal.signal(signal.SIGCHLD, lambda *a: None)
h = sys.argv[1]
cmd = ("mount --bind {0}/run /run/libvirt && mount --bind {0}/lib /var/lib/libvirt && "
       "mount --bind {0}/cache /var/cache/libvirt && mount --bind {0}/log /var/log/libvirt && "
       "mount --bind {0}/etc /etc/libvirt && virtlogd -d -p {0}/virtlogd.pid && "
       "libvirtd -d -p {0}/libvirtd.pid").format(h)
if os.system(cmd) != 0:
    open(h + "/start.failed", "w").close()
open(h + "/init.ready", "w").close()
while True:
    try:
        os.wait()
    except ChildProcessError:
        signal.pause()
'

# pod_start: the pod's namespaces, init, virtlogd and libvirtd; 0 once its libvirtd answers on
# its socket (30 s: only "it never did")
pod_start() {
    local d
    for d in run lib/qemu cache/qemu log/qemu etc/qemu; do mkdir -p "$POD/$d"; done
    chmod 755 "$POD"/run "$POD"/lib "$POD"/cache "$POD"/log "$POD"/etc
    echo "host_uuid = \"$(cat /proc/sys/kernel/random/uuid)\"" >"$POD/etc/libvirtd.conf"
    : >"$POD/etc/qemu.conf"
    unshare --pid --fork --mount-proc --mount --propagation private \
        python3 -c "$INIT" "$POD" 200>&- >"$POD/start.out" 2>&1 &
    POD_UNSHARE=$!
    wait_for 30 test -e "$POD/init.ready" || return 1
    [ ! -e "$POD/start.failed" ] || { cat "$POD/start.out" >&2; return 1; }
    POD_INIT=$(pgrep -P "$POD_UNSHARE" -x python3)
    POD_LIBVIRTD=$(pod_host_pid "$(cat "$POD/libvirtd.pid")")
    POD_VIRTLOGD=$(pod_host_pid "$(cat "$POD/virtlogd.pid")")
    [ -n "$POD_INIT" ] && [ -n "$POD_LIBVIRTD" ] && wait_for 30 pod_answers
}
pod_answers() { $PVIRSH version >/dev/null 2>&1; }

# pod_host_pid PID: the host's pid of the process that is PID in the pod's namespace (NSpid)
pod_host_pid() {
    local ns p
    ns=$(readlink "/proc/$POD_INIT/ns/pid") || return 1
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] || continue
        [ "$(awk '/^NSpid:/ {print $NF}' "$p/status" 2>/dev/null)" = "$1" ] || continue
        echo "${p#/proc/}"
        return 0
    done
    return 1
}

# pod_stop: its domains destroyed, libvirtd and virtlogd stopped, then its init (the namespace
# goes with it: the kernel kills whatever is left)
pod_stop() {
    local d p
    if [ -n "$POD_LIBVIRTD" ]; then
        for d in $($PVIRSH list --all --name 2>/dev/null); do
            $PVIRSH destroy "$d" >/dev/null 2>&1
            $PVIRSH undefine "$d" >/dev/null 2>&1
        done
    fi
    for p in $POD_LIBVIRTD $POD_VIRTLOGD $POD_INIT; do
        kill -TERM "$p" 2>/dev/null && wait_for 15 bash -c "! kill -0 $p 2>/dev/null"
    done
    POD_LIBVIRTD="" POD_VIRTLOGD="" POD_INIT=""
}
e2e_at_exit pod_stop

pod_start
ok $? "a libvirtd in PID and mount namespaces of its own answers on $SOCK (its pid here $POD_LIBVIRTD, $(cat "$POD/libvirtd.pid" 2>/dev/null) there)"
[ $fail -eq 0 ] || finish
[ "$(readlink "/proc/$POD_LIBVIRTD/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
    [ "$(readlink "/proc/$POD_LIBVIRTD/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
ok $? "its PID and mount namespaces are not this host's ($(readlink "/proc/$POD_LIBVIRTD/ns/pid"))"

NAME=${E2E_PREFIX}pidns
sed -e "s|@NAME@|$NAME|" -e "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|" \
    -e "$(optin_sed 'mode="auto"')" "$T" >"$E2E_TMP/dom.xml"
$PVIRSH create "$E2E_TMP/dom.xml" >"$E2E_TMP/create.out" 2>&1
ok $? "a TCG domain with two cells started by that libvirtd ($NAME: $(tr '\n' ' ' <"$E2E_TMP/create.out"))"
[ $fail -eq 0 ] || finish
$PVIRSH vcpupin "$NAME" 0 0 --live >/dev/null && $PVIRSH vcpupin "$NAME" 1 0 --live >/dev/null

INNER=$(cat "$POD/run/qemu/$NAME.pid" 2>/dev/null)
QPID=$(pod_host_pid "$INNER")
[ -n "$INNER" ] && [ -n "$QPID" ] && [ "$INNER" != "$QPID" ] &&
    grep -q "pid='$INNER'" "$POD/run/qemu/$NAME.xml"
ok $? "its status file names QEMU by its pid in the pod ($INNER), which is $QPID here"

# pins DOM (libvirt's, through the pod's daemon) and threads (each vCPU thread's affinity here)
pins() { $PVIRSH vcpupin "$NAME" --live 2>/dev/null | awk '$1 ~ /^[0-9]+$/ {printf "%s%s:%s", sep, $1, $2; sep=" "}'; }
threads() {
    local t comm out=""
    for t in /proc/"$QPID"/task/*; do
        comm=$(cat "$t/comm" 2>/dev/null) || continue
        case $comm in "CPU "*/*)
            local v=${comm#CPU }
            out="$out ${v%%/*}:$(awk '/^Cpus_allowed_list:/ {print $2}' "$t/status")" ;;
        esac
    done
    echo "$out" | tr ' ' '\n' | sed '/^$/d' | sort -n | paste -sd' '
}
where() { echo "vCPUs $(pins), threads $(threads)"; }
on_cpu0() { [ "$(pins)" = "0:0 1:0" ] && [ "$(threads)" = "0:0 1:0" ]; }
balanced() { [ "$(pins)" = "0:0-1 1:0-1" ] && [ "$(threads)" = "0:0-1 1:0-1" ]; }
on_cpu0
ok $? "live-pinned to CPU 0 before vnumad starts: $(where)"
qmp_tids() {
    $PVIRSH qemu-monitor-command "$NAME" '{"execute":"query-cpus-fast"}' 2>/dev/null |
        python3 -c 'import json,sys; print(" ".join(str(c["thread-id"]) for c in json.load(sys.stdin)["return"]))'
}
TIDS=$(qmp_tids)
HOST_TIDS=$(cd "/proc/$QPID/task" && echo *)
# none_here TIDS: none of TIDS is a thread of QEMU's here
none_here() {
    local t
    [ -n "$1" ] || return 1
    for t in $1; do [ ! -e "/proc/$QPID/task/$t" ] || return 1; done
}
none_here "$TIDS"
ok $? "QEMU names its vCPU threads by the pod's ids ($TIDS), none of which is one of its threads here ($HOST_TIDS)"

start_vnumad "uri = qemu+unix:///system?socket=$SOCK" "restore_on_exit = yes"
wait_for 60 balanced
ok $? "vnumad in the host's namespaces balanced it: pinned to the node's CPUs on libvirt and on the kernel: $(where)"

# cells: both, each with its memory found and its vCPU (QEMU's process and threads were read)
cells_ok() {
    vnctl status --json 2>/dev/null >"$E2E_TMP/status.json" || return 1
    python3 - "$E2E_TMP/status.json" "$NAME" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("return", j)
d = [d for d in j["domains"] if d["name"].split("@")[0] == sys.argv[2]]
ok = (len(d) == 1 and len(d[0]["cells"]) == 2 and
      all(sum(c["memory"].values()) > 0 and sum(c["vcpus"].values()) == 1 for c in d[0]["cells"]))
sys.exit(0 if ok else 1)
PY
}
wait_for 30 cells_ok
ok $? "vnumactl status --json: both cells with their memory and vCPUs ($(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return", j); print([(c["memory"], c["vcpus"]) for d in j["domains"] for c in d["cells"]])' "$E2E_TMP/status.json" 2>/dev/null))"
! log_has "PID namespace of its own|finding its QEMU failed|which none of its threads|reading the vCPU threads failed"
ok $? "no refusal and no failed sample in its log"
ACTED="decision domain='${NAME}[^']*' pass=[0-9]+ action=(acted|moving)"
log_has "$ACTED"
ok $? "its decision is logged as acted ($(grep -Eo "$ACTED" "$VN_LOG" | head -n 1))"

stop_vnumad
wait_for 15 on_cpu0
ok $? "vnumad stopped: the pins are put back through the pod's daemon: $(where)"
$PVIRSH destroy "$NAME" >/dev/null 2>&1

# ---- a guest with vnuma-agent in the pod: its channel reached through the daemon's root ----
GUEST=$E2E_TMP/guest
if ! out=$(vm-images/build-guest.sh 2>"$E2E_TMP/build.log"); then
    note "the agent channel through the pod's root is not checked here: cannot build the test guest: $(tail -n 1 "$E2E_TMP/build.log")"
    finish
fi
mkdir -p "$GUEST"
chmod 711 "$E2E_TMP"
chmod 755 "$GUEST"
cp "$(tail -n 1 <<<"$out")"/{vmlinuz,initramfs.cpio.gz} "$GUEST/"
AG=${E2E_PREFIX}pidns-agent
CONSOLE=$GUEST/$AG.console
: >"$CONSOLE"
chmod 666 "$CONSOLE"
agent_guest_xml "$AG" "$GUEST" "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off" \
    "$CONSOLE" 128 'mode="auto"' >"$GUEST/$AG.xml"
start_vnumad "uri = qemu+unix:///system?socket=$SOCK"
$PVIRSH create "$GUEST/$AG.xml" >"$E2E_TMP/create.out" 2>&1
ok $? "a guest with vnuma-agent started by the pod's libvirtd ($AG: $(tr '\n' ' ' <"$E2E_TMP/create.out"))"
VIRSH=$PVIRSH guest_booted "$AG" "$CONSOLE"
ok $? "its kernel booted into the init"
CHAN=$($PVIRSH dumpxml "$AG" 2>/dev/null | sed -n "s|.*<source mode='bind' path='\([^']*org.vnuma.agent.0\)'.*|\1|p")
case $CHAN in /var/lib/libvirt/*) POD_CHAN=$POD/lib/${CHAN#/var/lib/libvirt/} ;; *) POD_CHAN="" ;; esac
[ -n "$POD_CHAN" ] && [ -S "$POD_CHAN" ] && [ ! -e "$CHAN" ]
ok $? "its channel's socket is in the pod's /var/lib/libvirt ($POD_CHAN), its path in the XML ($CHAN) names nothing on the host"
wait_for 300 log_has "vnuma-agent .* of '$AG' connected"
ok $? "vnumad connected to the agent through the daemon's root ($(grep -o "vnuma-agent .* of '$AG' connected[^)]*)" "$VN_LOG" | head -n 1))"
hints() { vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
d = [d for d in j["domains"] if d["name"] == sys.argv[1]]
sys.exit(0 if d and d[0]["agent"].get("hint_sets", 0) > 0 else 1)' "$AG"; }
wait_for 60 hints
ok $? "and is served hint sets over it (vnumactl status)"
! log_has "Not opening the agent channel|Cannot open the agent channel"
ok $? "no refused or failed channel in its log"
stop_vnumad
finish
