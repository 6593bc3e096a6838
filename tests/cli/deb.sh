#!/bin/bash
# The Debian packages: builds `vnuma` and `vnuma-guest-agent` with
# `dpkg-buildpackage -us -uc -b` in a copy of the source (tests/lib/build-deb.sh, into
# $BUILD/deb; reused when the sources did not change), runs lintian on them, unpacks
# both into a scratch root with `dpkg -x`, checks the file lists and then runs vnumad
# from the scratch root: `--check-config` with the packaged vnumad.conf, and
# `--foreground` for a few seconds against the running libvirtd with a private socket,
# state dir and metrics file (vnumactl status/metrics from the package answer, the
# metrics parse), then SIGTERM: exit 0. Needs root, dpkg-dev, debhelper, lintian
# (tests/install-deps.sh installs them).
# Prints "ok N - desc" / "not ok N - desc" and "N passed, N failed"; exit 77 when it
# cannot run here, saying why.
set -u
BUILD=${BUILD:-build}
top=$(pwd)
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (starts vnumad against the system libvirtd)"
for tool in dpkg-buildpackage dh lintian; do
    command -v $tool >/dev/null || skip_all "$tool not installed (tests/install-deps.sh installs it)"
done

tmp=$(mktemp -d /tmp/vnuma-deb.XXXXXX)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

# ---- build (into $BUILD/deb: tests/e2e/ground-systemd.sh installs the same packages) ----
debs=$top/$BUILD/deb
took=$(tests/lib/build-deb.sh "$debs")
rc=$?
ok $rc "dpkg-buildpackage -us -uc -b succeeds (${took:-?} s)"
[ $rc = 0 ] || { tail -n 30 "$debs/build.log" | sed 's/^/# /'; finish; }
cp "$debs"/*.deb "$debs"/*.changes "$debs"/*.buildinfo "$debs/build.log" "$tmp/"
host_deb=$(ls "$tmp"/vnuma_0.1.0_*.deb 2>/dev/null)
agent_deb=$(ls "$tmp"/vnuma-guest-agent_0.1.0_*.deb 2>/dev/null)
[ -f "$host_deb" ] && [ -f "$agent_deb" ]; ok $? "two packages: $(basename "$host_deb") $(basename "$agent_deb")"
grep -q -- '-fstack-protector-strong' "$tmp/build.log" && grep -q -- '-D_FORTIFY_SOURCE' "$tmp/build.log"
ok $? "the build used dpkg-buildflags' hardening flags"

# ---- lintian: clean but for the tags explained in debian/README.source ----
lintian --allow-root --display-info --tag-display-limit 0 "$tmp"/*.changes >"$tmp/lintian.log" 2>&1
sed 's/^/# /' "$tmp/lintian.log"
explained=$(sed -n 's/^- `\([a-z0-9.+-]*\)`.*/\1/p' debian/README.source | sort -u)
unexplained=$(grep -E '^[EWIP]: ' "$tmp/lintian.log" | awk '{print $3}' | sort -u | grep -vxF "$explained")
[ -z "$unexplained" ]; ok $? "lintian: every tag is explained in debian/README.source (unexplained: ${unexplained:-none})"
! grep -qE '^[EW]: ' "$tmp/lintian.log"; ok $? "lintian: no errors or warnings"

# ---- contents ----
dpkg-deb -c "$host_deb" | awk '{print $6}' >"$tmp/host.list"
dpkg-deb -c "$agent_deb" | awk '{print $6}' >"$tmp/agent.list"
for f in ./usr/sbin/vnumad ./usr/sbin/vnumactl ./lib/systemd/system/vnumad.service \
         ./etc/vnuma/vnumad.conf ./usr/share/man/man8/vnumad.8.gz ./usr/share/man/man8/vnumactl.8.gz \
         ./usr/share/man/man5/vnumad.conf.5.gz ./usr/share/doc/vnuma/operations.md.gz \
         ./usr/share/vnuma/prometheus/vnuma-alerts.yml ./usr/share/bash-completion/completions/vnumactl \
         ./usr/share/vnuma/kubernetes/vnumad-daemonset.yaml \
         ./etc/logrotate.d/vnuma ./etc/libvirt/hooks/qemu.d/vnuma; do
    grep -qxF "$f" "$tmp/host.list"; ok $? "vnuma contains $f"
done
for f in ./usr/sbin/vnuma-agent ./lib/systemd/system/vnuma-agent.service \
         ./lib/udev/rules.d/60-vnuma-agent.rules ./usr/share/man/man8/vnuma-agent.8.gz; do
    grep -qxF "$f" "$tmp/agent.list"; ok $? "vnuma-guest-agent contains $f"
done
! grep -q vnuma-agent "$tmp/host.list" && ! grep -qE 'vnumad|vnumactl' "$tmp/agent.list"
ok $? "host and guest files are not mixed between the packages"
dpkg-deb -f "$host_deb" Depends | grep -q libvirt; ok $? "vnuma depends on libvirt's library (shlibs)"
dpkg-deb -I "$host_deb" conffiles 2>/dev/null | grep -qx /etc/vnuma/vnumad.conf
ok $? "/etc/vnuma/vnumad.conf is a conffile"
dpkg-deb -I "$host_deb" conffiles 2>/dev/null | grep -qx /etc/logrotate.d/vnuma
ok $? "/etc/logrotate.d/vnuma is a conffile"
dpkg-deb -I "$host_deb" postinst 2>/dev/null | grep -q 'vnumad.service'
ok $? "postinst enables vnumad.service (dh_installsystemd)"

# ---- run vnumad from the unpacked package ----
root=$tmp/root
dpkg -x "$host_deb" "$root" && dpkg -x "$agent_deb" "$root"
ok $? "dpkg -x both packages into a scratch root"
"$root/usr/sbin/vnumad" --check-config --config "$root/etc/vnuma/vnumad.conf" >"$tmp/out" 2>&1
ok $? "packaged vnumad --check-config accepts the packaged vnumad.conf ($(cat "$tmp/out"))"
"$root/usr/sbin/vnuma-agent" --version | grep -q '^vnuma-agent '; ok $? "packaged vnuma-agent runs"

uri=qemu:///system
. tests/services.sh
if ! why=$(start_services); then
    echo "# $why: the daemon part needs libvirtd"
    ok 1 "libvirtd answers on $uri"
    finish
fi
test_lock; ok $? "no other vnuma test run holds the test lock (30 min)"
# Another test's opted-in domains are not ours to balance: count them, and use the
# packaged vnumad with restore_on_exit (it puts back whatever it changed).
opted=0
for d in $(virsh -c "$uri" list --name 2>/dev/null); do
    virsh -c "$uri" metadata "$d" urn:vnuma:balancer:1 >/dev/null 2>&1 && opted=$((opted + 1))
done
echo "# $opted running domain(s) opted in"
conf=$tmp/vnumad.conf
cp "$root/etc/vnuma/vnumad.conf" "$conf"
cat >>"$conf" <<EOC
interval = 0.5
socket = $tmp/run/vnumad.sock
state_dir = $tmp/state
metrics_file = $tmp/metrics/vnuma.prom
uri = $uri
EOC
mkdir -p "$tmp/metrics"
"$root/usr/sbin/vnumad" --check-config --config "$conf" >/dev/null 2>&1
ok $? "the packaged conf with private socket, state dir and metrics_file appended is valid"
"$root/usr/sbin/vnumad" --foreground --config "$conf" 2>"$tmp/vnumad.log" 200>&- &
pid=$!
wait_for 60 test -s "$tmp/metrics/vnuma.prom"
grep -q "Connected to $uri" "$tmp/vnumad.log"; ok $? "vnumad from the package connects to the running libvirtd"
[ -s "$tmp/metrics/vnuma.prom" ]; ok $? "it writes metrics_file after a pass"
"$root/usr/sbin/vnumactl" --socket "$tmp/run/vnumad.sock" status >"$tmp/status" 2>&1
ok $? "packaged vnumactl status answers ($(head -n 1 "$tmp/status"))"
"$root/usr/sbin/vnumactl" --socket "$tmp/run/vnumad.sock" metrics >"$tmp/metrics.txt" 2>&1
grep -q '^vnuma_libvirt_connected 1$' "$tmp/metrics.txt"; ok $? "vnumactl metrics: vnuma_libvirt_connected 1"
/usr/bin/python3 tests/cli/promcheck.py "$tmp/metrics.txt" "$tmp/metrics/vnuma.prom" >"$tmp/check" 2>&1
ok $? "both expositions pass the format check ($(tail -n 1 "$tmp/check"))"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
ok $rc "SIGTERM: vnumad exits 0"
grep -q 'vnumad stopped' "$tmp/vnumad.log"; ok $? "it logs 'vnumad stopped'"
! grep -q '^<[0-3]>' "$tmp/vnumad.log"; ok $? "no error lines in its log"
sed 's/^/# log: /' "$tmp/vnumad.log" | head -n 20
finish
