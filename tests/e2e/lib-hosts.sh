# Libvirt hosts on this machine (sourced after lib.sh: by conns.sh, and by lib-hostb.sh for its
# host B; tests/run.sh runs no lib-*.sh as a test). A host is a libvirtd and its virtlogd in a
# mount namespace of their own, with their own /run/libvirt, /var/lib/libvirt,
# /var/cache/libvirt, /var/log/libvirt, /etc/libvirt (their own host_uuid) and /etc/machine-id,
# each bind-mounted from one directory of the test's; nothing of those mounts reaches this
# machine's own libvirt. Their QEMUs run beside every other process (one pid namespace, one
# cgroup tree: see host_skip_ids).
#   ns_libvirt_start DIR MACHINE_ID SOCK_DIR [HOOK] / ns_libvirt_stop: one such host, anywhere
#     (lib-hostb.sh's host B)
#   hosts_start N... (1..9): numbered hosts, started at once: host N's everything under
#     $HOSTS/hN, its sockets there too ($HOSTS/hN/libvirt-sock: every host's socket in a
#     directory of its own under one directory, as a glob finds them)
#   host_sock N, host_virsh N, host_pid N libvirtd|virtlogd, on_host N COMMAND... (a lib.sh
#     helper run against host N: define_stopped, vcpu_pins, vcpu_thread_affinity...; the
#     domains it defines are destroyed and undefined by host_stop, not by lib.sh's cleanup)
#   host_bg COMMAND... / hosts_wait: things done to hosts at once (domain starts...)
#   host_kill N SIGNAL: a signal to host N's libvirtd; host_restart N: a new libvirtd in host N's
#     namespace (libvirtd takes its running QEMUs back from their status files)
#   host_stop N: its domains destroyed and undefined, its libvirtd and virtlogd stopped, every
#     QEMU it left killed; the namespace goes with its last process. Every numbered host is
#     stopped at exit (e2e_at_exit), after a failure or a signal too. hosts_left: what of the
#     numbered hosts still runs.
# shellcheck shell=bash
HOSTS=$E2E_TMP/hosts

# ns_libvirt_start DIR MACHINE_ID SOCK_DIR [HOOK]: a virtlogd and a libvirtd in a new mount
# namespace whose /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt,
# /etc/libvirt and /etc/machine-id are DIR/run, DIR/lib, DIR/cache, DIR/log, DIR/etc and
# DIR/machine-id (MACHINE_ID), with a host_uuid of its own; its sockets in SOCK_DIR ("": in
# its /run/libvirt, DIR/run). HOOK, when given, is installed as DIR/etc/hooks/qemu.d/vnuma
# before libvirtd starts (libvirtd looks for hooks then). Pid files DIR/virtlogd.pid and
# DIR/libvirtd.pid; sets NS_LIBVIRTD and NS_VIRTLOGD (pids); 0 once libvirtd answers on its
# socket (30 s).
ns_libvirt_start() {
    local h=$1 id=$2 sockdir=$3 hook=${4:-} d
    # shellcheck disable=SC2034 # NS_VIRTLOGD: for the caller
    NS_LIBVIRTD="" NS_VIRTLOGD=""
    for d in run lib/qemu cache/qemu log/qemu etc/qemu; do mkdir -p "$h/$d"; done
    chmod 755 "$h"/run "$h"/lib "$h"/cache "$h"/log "$h"/etc
    {
        echo "host_uuid = \"$(cat /proc/sys/kernel/random/uuid)\""
        if [ -n "$sockdir" ]; then
            mkdir -p "$sockdir" && echo "unix_sock_dir = \"$sockdir\""
        fi
    } >"$h/etc/libvirtd.conf"
    : >"$h/etc/qemu.conf"
    echo "$id" >"$h/machine-id"
    if [ -n "$hook" ]; then
        mkdir -p "$h/etc/hooks/qemu.d" && install -m 0755 "$hook" "$h/etc/hooks/qemu.d/vnuma"
    fi
    # unshare's mount namespace is private: nothing of these mounts reaches this machine's
    unshare -m --propagation private bash -c '
        h=$1
        mount --bind "$h/run" /run/libvirt && mount --bind "$h/lib" /var/lib/libvirt &&
            mount --bind "$h/cache" /var/cache/libvirt && mount --bind "$h/log" /var/log/libvirt &&
            mount --bind "$h/etc" /etc/libvirt && mount --bind "$h/machine-id" /etc/machine-id &&
            virtlogd -d -p "$h/virtlogd.pid" && libvirtd -d -p "$h/libvirtd.pid"' _ "$h" \
        200>&- >"$h/start.out" 2>&1 || { cat "$h/start.out" >&2; return 1; }
    # shellcheck disable=SC2034
    NS_VIRTLOGD=$(cat "$h/virtlogd.pid" 2>/dev/null)
    wait_for 10 test -s "$h/libvirtd.pid" && NS_LIBVIRTD=$(cat "$h/libvirtd.pid")
    [ -n "$NS_LIBVIRTD" ] && wait_for 30 ns_answers "${sockdir:-$h/run}/libvirt-sock"
}

# ns_answers SOCKET: a libvirtd answers on SOCKET
ns_answers() { virsh -c "qemu+unix:///system?socket=$1" version >/dev/null 2>&1 </dev/null; }

# ns_libvirt_stop DIR SOCKET LIBVIRTD VIRTLOGD: every domain of the libvirtd LIBVIRTD (a pid, or
# "" when it is gone) on SOCKET destroyed and undefined (a stopped one continued first), it and
# the virtlogd VIRTLOGD stopped (SIGTERM), then the QEMU of every DIR/run/qemu/*.pid that still
# runs (a libvirtd that was killed cannot destroy its domains) killed, and the cgroups libvirt
# made for them (machine/qemu-ID-NAME, NAME with the test's prefix) removed when empty
ns_libvirt_stop() {
    local h=$1 v="virsh -q -c qemu+unix:///system?socket=$2" d p f killed=0
    if [ -n "$3" ] && kill -CONT "$3" 2>/dev/null; then
        for d in $($v list --all --name 2>/dev/null </dev/null); do
            $v destroy "$d" >/dev/null 2>&1 </dev/null
            $v undefine "$d" >/dev/null 2>&1 </dev/null
        done
    fi
    for p in $3 $4; do
        kill -TERM "$p" 2>/dev/null && wait_for 15 bash -c "! kill -0 $p 2>/dev/null"
    done
    for f in "$h"/run/qemu/*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f" 2>/dev/null)
        [ -n "$p" ] && grep -q '^qemu' "/proc/$p/comm" 2>/dev/null || continue
        kill -KILL "$p" 2>/dev/null && wait_for 15 bash -c "! kill -0 $p 2>/dev/null"
        killed=1
    done
    [ $killed = 1 ] || return 0
    find /sys/fs/cgroup -mindepth 2 -maxdepth 6 -type d -name "qemu-*-$E2E_PREFIX*" 2>/dev/null |
        while read -r d; do find "$d" -depth -type d -exec rmdir {} + 2>/dev/null; done
    return 0
}

# ---- numbered hosts ----

host_sock() { echo "$HOSTS/h$1/libvirt-sock"; }
host_virsh() { echo "virsh -q -c qemu+unix:///system?socket=$(host_sock "$1")"; }
host_answers() { ns_answers "$(host_sock "$1")"; }

# host_pid N libvirtd|virtlogd: the pid of host N's libvirtd or virtlogd; 1 when its pid file
# names no such running process
host_pid() {
    local p
    p=$(cat "$HOSTS/h$1/$2.pid" 2>/dev/null) && [ -n "$p" ] &&
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] && echo "$p"
}

# host_start N: host N, everything of it under $HOSTS/hN (its sockets in $HOSTS/hN, its
# namespace's /run/libvirt $HOSTS/hN/run...); 0 once it answers. Its first domain gets the id
# N (host_skip_ids); $HOSTS/hN/mntns names its mount namespace (hosts_left).
host_start() {
    ns_libvirt_start "$HOSTS/h$1" "$(printf '%032x' "$((0x5e1f0c2a00 + $1))")" "$HOSTS/h$1" &&
        readlink "/proc/$NS_LIBVIRTD/ns/mnt" >"$HOSTS/h$1/mntns" &&
        host_skip_ids "$1" $(($1 - 1))
}

# hosts_start N...: host_start for each N, all at once; 0 when every one answers
hosts_start() {
    local n
    for n in "$@"; do host_bg host_start "$n"; done
    hosts_wait
}

# host_bg COMMAND...: COMMAND in the background, for hosts_wait; host_stop waits for it too
# (a test stopped by a signal must not stop the hosts while one is still starting)
HOST_JOBS=() HOST_WAITING=()
host_bg() {
    "$@" &
    HOST_JOBS+=($!) HOST_WAITING+=($!)
}
# hosts_wait: waits for what host_bg started since the last hosts_wait; 0 when all succeeded
hosts_wait() {
    local p r=0
    for p in "${HOST_WAITING[@]}"; do wait "$p" || r=1; done
    HOST_WAITING=()
    return $r
}

# host_skip_ids N COUNT: host N's next domain id COUNT higher. Every libvirtd names its
# domains' cgroups machine/qemu-ID-NAME in this machine's one cgroup tree, and each numbers its
# domains from 1: two same-named domains of two hosts with one id would share their cgroups
# (one's vcpupin would pin the other's threads). A start takes the domain's id before it looks
# for the domain's kernel: COUNT starts of a domain whose kernel is missing, which fail there.
host_skip_ids() {
    local v name=${E2E_PREFIX}skip-ids xml=$HOSTS/h$1/skip-ids.xml
    [ "$2" -gt 0 ] || return 0
    v=$(host_virsh "$1")
    sed -e "s|@NAME@|$name|" -e "s|@OPTIN@||" -e "s|</type>|</type><kernel>$xml.none</kernel>|" \
        tests/data/domains/e2e-two-cell.xml.in >"$xml" || return 1
    $v define "$xml" >/dev/null </dev/null || return 1
    for _ in $(seq "$2"); do ! $v start "$name" >/dev/null 2>&1 </dev/null || return 1; done
    $v undefine "$name" >/dev/null </dev/null
}

# on_host N COMMAND...: a lib.sh helper run against host N (its virsh, its QEMU pid files; the
# domains it defines are listed in $HOSTS/hN/domains, not in lib.sh's cleanup list)
on_host() {
    local n=$1
    shift
    VIRSH=$(host_virsh "$n") LIBVIRT_RUN=$HOSTS/h$n/run E2E_DOMAIN_LIST=$HOSTS/h$n/domains "$@"
}

# host_kill N SIGNAL: SIGNAL to host N's libvirtd; with TERM or KILL, 0 once it is gone (15 s)
host_kill() {
    local p
    p=$(host_pid "$1" libvirtd) && kill "-$2" "$p" || return 1
    case $2 in TERM | KILL) wait_for 15 bash -c "! kill -0 $p 2>/dev/null" ;; esac
}

# host_restart N: a new libvirtd in host N's namespace (entered through its virtlogd), its
# sockets and pid file where the last one had them; 0 once it answers (30 s)
host_restart() {
    local h=$HOSTS/h$1 lp vp
    vp=$(host_pid "$1" virtlogd) || return 1
    rm -f "$h/libvirtd.pid"
    nsenter -t "$vp" -m -- libvirtd -d -p "$h/libvirtd.pid" 200>&- >"$h/restart.out" 2>&1 ||
        { cat "$h/restart.out" >&2; return 1; }
    wait_for 10 test -s "$h/libvirtd.pid" && lp=$(cat "$h/libvirtd.pid") && [ -n "$lp" ] &&
        wait_for 30 host_answers "$1"
}

# host_stop N: host N gone (ns_libvirt_stop)
host_stop() {
    ns_libvirt_stop "$HOSTS/h$1" "$(host_sock "$1")" "$(host_pid "$1" libvirtd)" \
        "$(host_pid "$1" virtlogd)"
}
# hosts_stop: every numbered host stopped, all at once. The mount namespace of each host still
# running is held open first (HOSTS_HELD: its inode, as $HOSTS/hN/mntns has it), so that its
# number is not given to another namespace while hosts_left looks for what is left in it: a
# gone namespace's number goes to the next one made, another test's or a QEMU's.
HOSTS_HELD=()
hosts_stop() {
    local d p pids=() fd
    for p in "${HOST_JOBS[@]}"; do wait "$p" 2>/dev/null; done
    for d in "$HOSTS"/h*; do
        [ -f "$d/mntns" ] || continue
        p=$(host_pid "${d##*/h}" virtlogd) || p=$(host_pid "${d##*/h}" libvirtd) || continue
        [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$(cat "$d/mntns")" ] || continue
        exec {fd}<"/proc/$p/ns/mnt" && HOSTS_HELD+=("$(cat "$d/mntns")")
    done
    for d in "$HOSTS"/h*; do
        [ -d "$d" ] || continue
        host_stop "${d##*/h}" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    return 0
}
e2e_at_exit hosts_stop

# hosts_left: "PID COMM" of every process still in a numbered host's mount namespace (one that
# hosts_stop held: HOSTS_HELD), and of every QEMU of a domain named with the test's prefix
hosts_left() {
    local ns p
    for ns in "${HOSTS_HELD[@]}"; do
        for p in /proc/[0-9]*; do
            [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$ns" ] && echo "${p#/proc/} $(cat "$p/comm" 2>/dev/null)"
        done
    done
    for p in $(pgrep -f -- "-name guest=$E2E_PREFIX"); do echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"; done
    return 0
}
