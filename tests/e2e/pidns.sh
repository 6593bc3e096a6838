#!/bin/bash
# A libvirt daemon in a PID namespace of its own, as a KubeVirt launcher's virtqemud runs in its
# pod (docs/fleet.md, "Launchers in their own PID and mount namespaces"). A "pod" here: a libvirtd
# started by `unshare --pid --fork --mount-proc` in new PID and mount namespaces, with its own
# directories bound from the test's; a small init of the test's is the namespace's pid 1 and reaps
# what is left to it (QEMU daemonizes).
#   A  a root launcher: libvirtd as root (and its virtlogd), its /run/libvirt, /var/lib/libvirt,
#      /var/cache/libvirt, /var/log/libvirt and /etc/libvirt bound as lib-hostb.sh's host B;
#      vnumad's uri = qemu+unix:///system?socket=...
#   B  a non-root launcher, KubeVirt's default: a session libvirtd as libvirt-qemu with
#      XDG_RUNTIME_DIR=/var/run (as KubeVirt sets it) and its /run/libvirt bound, so its socket
#      and its status files ($XDG_RUNTIME_DIR/libvirt/qemu/run) are the test's (its HOME and XDG
#      config and cache directories there too: the channel sockets under them must fit
#      sun_path's 108 bytes);
#      uri = qemu+unix:///session?socket=...
# In each, one TCG domain with two cells, opted in (mode auto), allowed CPUs 0-1 and live-pinned
# to CPU 0. Its status file names QEMU by its pid in the pod, which is not the host's, and QEMU
# reports its vCPU threads by the pod's ids. A private vnumad in the host's namespaces must:
#   - read the status file in the daemon's root and map its pid (vnumactl status shows both
#     cells with their memory and vCPUs: the QEMU process and its threads were found);
#   - balance the domain: its vCPUs pinned to the node's CPUs 0-1, on libvirt (the pod's
#     daemon) and on the kernel (each vCPU thread's affinity, read in the host's /proc);
#   - log no failed sample, no refusal;
#   - put the pins back (CPU 0) when it stops.
# Then in A, a booted TCG guest with vnuma-agent (vm-images/build-guest.sh; this part says why
# when the guest cannot be built here): its agent channel's socket is where the pod's libvirt made
# it, in the pod's /var/lib/libvirt (the path in its XML names nothing on the host), and vnumad
# connects to it through the daemon's root and is served hints.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl --tool unshare "util-linux: new namespaces" \
    --tool setpriv "util-linux: the session daemon's user" --tool python3 "the namespace's init"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 0-1)"
chmod 711 "$E2E_TMP" # (the session daemon's user goes through it)

POD="" MODE="" SOCK="" PVIRSH="" POD_INIT="" POD_LIBVIRTD="" POD_VIRTLOGD=""

# The namespace's pid 1: starts the pod's daemons (argv: its directory, the command line), then
# reaps every child it is left (QEMU daemonizes, libvirtd -d too); exits on SIGTERM (the kernel
# then kills what is left in the namespace).
INIT='
import os, signal, sys
signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
signal.signal(signal.SIGCHLD, lambda *a: None)
h = sys.argv[1]
if os.system(sys.argv[2]) != 0:
    open(h + "/start.failed", "w").close()
open(h + "/init.ready", "w").close()
while True:
    try:
        os.wait()
    except ChildProcessError:
        signal.pause()
'

# pod_start DIR root|session: the pod's namespaces, init and libvirtd (and virtlogd: the session
# daemon starts its own); 0 once its libvirtd answers on its socket (30 s: only "it never did")
pod_start() {
    local d cmd u g
    POD=$1 MODE=$2 SOCK=$1/run/libvirt-sock
    PVIRSH="virsh -q -c qemu+unix:///$MODE?socket=$SOCK"
    if [ "$MODE" = root ]; then
        PVIRSH="virsh -q -c qemu+unix:///system?socket=$SOCK"
        for d in run lib/qemu cache/qemu log/qemu etc/qemu; do mkdir -p "$POD/$d"; done
        chmod 755 "$POD" "$POD"/run "$POD"/lib "$POD"/cache "$POD"/log "$POD"/etc
        echo "host_uuid = \"$(cat /proc/sys/kernel/random/uuid)\"" >"$POD/etc/libvirtd.conf"
        : >"$POD/etc/qemu.conf"
        cmd="mount --bind $POD/run /run/libvirt && mount --bind $POD/lib /var/lib/libvirt &&
             mount --bind $POD/cache /var/cache/libvirt && mount --bind $POD/log /var/log/libvirt &&
             mount --bind $POD/etc /etc/libvirt && virtlogd -d -p $POD/virtlogd.pid &&
             libvirtd -d -p $POD/libvirtd.pid"
    else
        u=$(id -u "$SESSION_USER") && g=$(id -g "$SESSION_USER") || return 1
        mkdir -p "$POD/run"
        chown "$u:$g" "$POD/run"
        chmod 755 "$POD"
        cmd="mount --bind $POD/run /run/libvirt &&
             setpriv --reuid=$u --regid=$g --init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
                 HOME=/run/libvirt/h XDG_CACHE_HOME=/run/libvirt/k XDG_CONFIG_HOME=/run/libvirt/c \
                 XDG_RUNTIME_DIR=/var/run libvirtd -d --timeout 0"
    fi
    unshare --pid --fork --mount-proc --mount --propagation private \
        python3 -c "$INIT" "$POD" "$cmd" 200>&- >"$POD/start.out" 2>&1 &
    POD_UNSHARE=$!
    wait_for 30 test -e "$POD/init.ready" || return 1
    [ ! -e "$POD/start.failed" ] || { cat "$POD/start.out" >&2; return 1; }
    POD_INIT=$(pgrep -P "$POD_UNSHARE" -x python3)
    if [ "$MODE" = root ]; then
        # (libvirtd -d returns once its pid file is written; a libvirtd that starts late, as
        # tests/slow-stack.sh's, may return first: its pid file is waited for, not assumed)
        wait_for 30 test -s "$POD/libvirtd.pid" &&
            POD_LIBVIRTD=$(pod_host_pid "$(cat "$POD/libvirtd.pid")")
        POD_VIRTLOGD=$(pod_host_pid "$(cat "$POD/virtlogd.pid")")
    else
        wait_for 30 test -s "$POD/run/libvirtd.pid" &&
            POD_LIBVIRTD=$(pod_host_pid "$(cat "$POD/run/libvirtd.pid")")
    fi
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

# pod_stop: its domains destroyed, its libvirtd stopped (a session daemon's virtlogd goes with
# the namespace), then its init: the kernel kills whatever is left
pod_stop() {
    local d p
    [ -n "$POD_INIT" ] || return 0
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

# pins (libvirt's, through the pod's daemon) and threads (each vCPU thread's affinity here) of
# the pod's domain $NAME, QEMU $QPID here
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
qmp_tids() {
    $PVIRSH qemu-monitor-command "$NAME" '{"execute":"query-cpus-fast"}' 2>/dev/null |
        python3 -c 'import json,sys; print(" ".join(str(c["thread-id"]) for c in json.load(sys.stdin)["return"]))'
}
# none_here TIDS: none of TIDS is a thread of QEMU's here
none_here() {
    local t
    [ -n "$1" ] || return 1
    for t in $1; do [ ! -e "/proc/$QPID/task/$t" ] || return 1; done
}
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
cells_shown() {
    python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j.get("return", j); print([(c["memory"], c["vcpus"]) for d in j["domains"] for c in d["cells"]])' "$E2E_TMP/status.json" 2>/dev/null
}

# balance_in_pod WHAT STATUS_DIR: the domain part, in the pod started last (STATUS_DIR: where its
# libvirt keeps its status files, on the host's side of the bind)
balance_in_pod() {
    local what=$1 sdir=$2 inner tids acted
    NAME=${E2E_PREFIX}pidns-$MODE
    sed -e "s|@NAME@|$NAME|" -e "s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|" \
        -e "$(optin_sed 'mode="auto"')" "$T" >"$E2E_TMP/$NAME.xml"
    $PVIRSH create "$E2E_TMP/$NAME.xml" >"$E2E_TMP/create.out" 2>&1
    ok $? "$what: a TCG domain with two cells started by that libvirtd ($NAME $(tr '\n' ' ' <"$E2E_TMP/create.out"))"
    [ $fail -eq 0 ] || finish
    $PVIRSH vcpupin "$NAME" 0 0 --live >/dev/null && $PVIRSH vcpupin "$NAME" 1 0 --live >/dev/null
    inner=$(cat "$sdir/$NAME.pid" 2>/dev/null)
    QPID=$(pod_host_pid "$inner")
    [ -n "$inner" ] && [ -n "$QPID" ] && [ "$inner" != "$QPID" ] &&
        grep -q "pid='$inner'" "$sdir/$NAME.xml" &&
        [ "$(stat -c %u "$sdir/$NAME.xml")" = "$(stat -c %u "/proc/$POD_LIBVIRTD")" ]
    ok $? "$what: its status file ($sdir/$NAME.xml, the daemon's user's) names QEMU by its pid in the pod ($inner), which is $QPID here"
    on_cpu0
    ok $? "$what: live-pinned to CPU 0 before vnumad starts: $(where)"
    tids=$(qmp_tids)
    none_here "$tids"
    ok $? "$what: QEMU names its vCPU threads by the pod's ids ($tids), none of which is one of its threads here ($(cd "/proc/$QPID/task" && echo *))"

    start_vnumad "uri = qemu+unix:///$([ "$MODE" = root ] && echo system || echo session)?socket=$SOCK"
    wait_for 60 balanced
    ok $? "$what: vnumad in the host's namespaces balanced it: pinned to the node's CPUs on libvirt and on the kernel: $(where)"
    wait_for 30 cells_ok
    ok $? "$what: vnumactl status --json: both cells with their memory and vCPUs ($(cells_shown))"
    ! log_has "PID namespace of its own|finding its QEMU failed|which none of its threads|reading the vCPU threads failed|status file"
    ok $? "$what: no refusal and no failed sample in its log"
    acted="decision domain='${NAME}[^']*' pass=[0-9]+ action=(acted|moving)"
    log_has "$acted"
    ok $? "$what: its decision is logged as acted ($(grep -Eo "$acted" "$VN_LOG" | head -n 1))"
    stop_vnumad
    wait_for 15 on_cpu0
    ok $? "$what: vnumad stopped: the pins are put back through the pod's daemon: $(where)"
    $PVIRSH destroy "$NAME" >/dev/null 2>&1
}

# ---- A: root's daemon (a root launcher) ----
pod_start "$E2E_TMP/pod-root" root
ok $? "A: a libvirtd (root's) in PID and mount namespaces of its own answers on $SOCK (its pid here $POD_LIBVIRTD, $(cat "$POD/libvirtd.pid" 2>/dev/null) there)"
[ $fail -eq 0 ] || finish
[ "$(readlink "/proc/$POD_LIBVIRTD/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] &&
    [ "$(readlink "/proc/$POD_LIBVIRTD/ns/mnt")" != "$(readlink /proc/self/ns/mnt)" ]
ok $? "A: its PID and mount namespaces are not this host's ($(readlink "/proc/$POD_LIBVIRTD/ns/pid"))"
balance_in_pod A "$POD/run/qemu"

# a guest with vnuma-agent in the pod: its channel reached through the daemon's root
GUEST=$E2E_TMP/guest
if out=$(vm-images/build-guest.sh 2>"$E2E_TMP/build.log"); then
    mkdir -p "$GUEST"
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
    ok $? "A: a guest with vnuma-agent started by the pod's libvirtd ($AG $(tr '\n' ' ' <"$E2E_TMP/create.out"))"
    VIRSH=$PVIRSH guest_booted "$AG" "$CONSOLE"
    ok $? "A: its kernel booted into the init"
    CHAN=$($PVIRSH dumpxml "$AG" 2>/dev/null | sed -n "s|.*<source mode='bind' path='\([^']*org.vnuma.agent.0\)'.*|\1|p")
    case $CHAN in /var/lib/libvirt/*) POD_CHAN=$POD/lib/${CHAN#/var/lib/libvirt/} ;; *) POD_CHAN="" ;; esac
    [ -n "$POD_CHAN" ] && [ -S "$POD_CHAN" ] && [ ! -e "$CHAN" ]
    ok $? "A: its channel's socket is in the pod's /var/lib/libvirt ($POD_CHAN), its path in the XML ($CHAN) names nothing on the host"
    wait_for 300 log_has "vnuma-agent .* of '$AG' connected"
    ok $? "A: vnumad connected to the agent through the daemon's root ($(grep -o "vnuma-agent .* of '$AG' connected[^)]*)" "$VN_LOG" | head -n 1))"
    hints() {
        vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
d = [d for d in j["domains"] if d["name"] == sys.argv[1]]
sys.exit(0 if d and d[0]["agent"].get("hint_sets", 0) > 0 else 1)' "$AG"
    }
    wait_for 60 hints
    ok $? "A: and is served hint sets over it (vnumactl status)"
    ! log_has "Not opening the agent channel|Cannot open the agent channel"
    ok $? "A: no refused or failed channel in its log"
    stop_vnumad
else
    note "A: the agent channel through the pod's root is not checked here: cannot build the test guest: $(tail -n 1 "$E2E_TMP/build.log")"
fi
pod_stop

# ---- B: a session daemon (a non-root launcher, KubeVirt's default) ----
SESSION_USER=libvirt-qemu
if ! id -u "$SESSION_USER" >/dev/null 2>&1; then
    note "B: not run: no user $SESSION_USER (libvirt's QEMU user) for the session daemon"
    finish
fi
pod_start "$E2E_TMP/pod-session" session
ok $? "B: a session libvirtd ($SESSION_USER, XDG_RUNTIME_DIR=/var/run) in namespaces of its own answers on $SOCK (its pid here $POD_LIBVIRTD)"
[ $fail -eq 0 ] || finish
[ "$(stat -c %U "/proc/$POD_LIBVIRTD")" = "$SESSION_USER" ] &&
    [ "$(readlink "/proc/$POD_LIBVIRTD/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]
ok $? "B: it runs as $SESSION_USER in a PID namespace not this host's"
balance_in_pod B "$POD/run/qemu/run"
pod_stop
finish
