#!/bin/bash
# own-host.sh DIR COMMAND...: COMMAND run on a libvirt host of its own, so that tests/run.sh can
# run several tests at once with nothing shared between them. The host is a new mount namespace
# whose /run/libvirt, /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and /etc/libvirt
# are DIR/run, DIR/lib, DIR/cache, DIR/log and DIR/etc: qemu:///system there is a libvirtd of
# the test's own, which tests/services.sh's start_services starts when the test asks for one
# (its pid files DIR/libvirtd.pid and DIR/virtlogd.pid: VN_HOST=DIR). /etc/libvirt is a copy of
# this machine's, without its domains and autostart links; the QEMU capabilities libvirt probed
# here already are copied too (a libvirtd probes QEMU again when they no longer match it).
# /etc/machine-id, /tmp, /dev/hugepages, the cgroup tree and the pid namespace stay this
# machine's (the domains' names carry the test's pid: tests/e2e/lib.sh).
#
# After COMMAND, still in the namespace: what it left is written to DIR/leftovers, one thing a
# line (a domain named vnuma-e2e-* still defined, its configuration file, a process of the test
# still running in the namespace, a QEMU of the host still running), then removed: the domains
# destroyed and undefined, libvirtd and virtlogd stopped, the QEMUs they leave killed, the
# processes left killed, all while the namespace is still there (once it is gone, the kernel
# gives its inode number to the next namespace made). Exits with COMMAND's status.
set -u
if [ "${1:-}" = --inside ]; then
    shift
    dir=$1
    shift
    mount --bind "$dir/run" /run/libvirt && mount --bind "$dir/lib" /var/lib/libvirt &&
        mount --bind "$dir/cache" /var/cache/libvirt && mount --bind "$dir/log" /var/log/libvirt &&
        mount --bind "$dir/etc" /etc/libvirt || {
        echo "own-host.sh: cannot bind the host's directories" >&2
        exit 1
    }
    export VN_HOST=$dir
    # shellcheck source=tests/services.sh
    . "$(dirname "$0")/../services.sh"
    "$@" 200>&-
    rc=$?
    : >"$dir/leftovers"
    left() { echo "$*" >>"$dir/leftovers"; }
    me=$(readlink /proc/self/ns/mnt)
    # processes of the test still in this namespace (not its libvirtd and virtlogd, nor this)
    for p in /proc/[0-9]*; do
        p=${p#/proc/}
        [ "$p" = $$ ] && continue
        [ "$(readlink "/proc/$p/ns/mnt" 2>/dev/null)" = "$me" ] || continue
        comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        case $comm in libvirtd | virtlogd | own-host.sh) continue ;; esac
        # (this script's own subshells and commands: their parent is this script)
        [ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)" = $$ ] && continue
        left "process:$p($comm: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 120))"
        kill -KILL "$p" 2>/dev/null
    done
    v="virsh -q -c qemu:///system"
    if [ -S /run/libvirt/libvirt-sock ] && [ -n "$(own_pids libvirtd)" ]; then
        while IFS= read -r u; do
            [ -n "$u" ] || continue
            name=$($v domname "$u" 2>/dev/null </dev/null)
            case $name in vnuma-e2e-*) left "domain:$(printf %q "$name")" ;; esac
            $v destroy "$u" >/dev/null 2>&1 </dev/null
            $v undefine "$u" >/dev/null 2>&1 </dev/null
        done < <($v list --all --uuid 2>/dev/null </dev/null)
    fi
    for f in "$dir"/etc/qemu/vnuma-e2e-*.xml; do
        [ -f "$f" ] && left "config:$(printf %q "$(basename "$f")")"
    done
    for p in $(own_pids libvirtd) $(own_pids virtlogd); do
        kill -TERM "$p" 2>/dev/null
        for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null
    done
    # a QEMU whose libvirtd was killed, or that the destroy above could not stop
    for f in "$dir"/run/qemu/*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f" 2>/dev/null)
        [ -n "$p" ] && grep -q '^qemu' "/proc/$p/comm" 2>/dev/null || continue
        left "qemu:$p($(basename "$f" .pid))"
        kill -KILL "$p" 2>/dev/null
    done
    exit $rc
fi

dir=$1
shift
for d in run lib/qemu cache/qemu/capabilities log/qemu etc; do mkdir -p "$dir/$d"; done
for d in lib/qemu cache/qemu log/qemu; do
    [ -d "/var/$d" ] || continue
    chown --reference="/var/${d%%/*}/libvirt/${d#*/}" "$dir/$d" 2>/dev/null
    chmod --reference="/var/${d%%/*}/libvirt/${d#*/}" "$dir/$d" 2>/dev/null
done
chmod 755 "$dir" "$dir/run" "$dir/lib" "$dir/cache" "$dir/log" "$dir/etc"
# this machine's libvirt configuration, not its domains, networks' or pools' autostart links
cp -a /etc/libvirt/. "$dir/etc/" 2>/dev/null
rm -rf "$dir"/etc/qemu/*.xml "$dir"/etc/qemu/autostart "$dir"/etc/qemu/networks/autostart/* \
    "$dir"/etc/storage/autostart/* 2>/dev/null
cp -a /var/cache/libvirt/qemu/capabilities/. "$dir/cache/qemu/capabilities/" 2>/dev/null
# unshare's mount namespace is private: nothing of these mounts reaches this machine's
exec unshare -m --propagation private "$0" --inside "$dir" "$@"
