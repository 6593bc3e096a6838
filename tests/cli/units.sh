#!/bin/bash
# The systemd units and the udev rule as `make install PREFIX=/usr` writes them:
# `systemd-analyze verify` (directives, ExecStart binaries, Documentation= man pages)
# must print nothing; a unit with a misspelt directive must make it complain (so the
# check is not silent by construction); the hardening settings docs/operations.md
# explains are present; `systemd-analyze security --offline` scores vnumad.service;
# the udev rule has the shape of Debian's qemu-guest-agent rule and names the unit,
# whose BindsTo= device is the port's systemd device name.
# No systemd runs here: nothing is started. Exit 77 when systemd-analyze is missing.
set -u
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed (package systemd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
make --no-print-directory -s install BUILD="$BUILD" PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system \
    UDEVRULESDIR=/lib/udev/rules.d DESTDIR="$root" >"$tmp/log" 2>&1
ok $? "make install PREFIX=/usr into a scratch root"
# verify the units against the scratch root's binaries and man pages
mkdir -p "$tmp/v"
for u in vnumad vnuma-agent; do
    sed "s|/usr/sbin/|$root/usr/sbin/|g; s| /etc/vnuma/| $root/etc/vnuma/|g" \
        "$root/lib/systemd/system/$u.service" >"$tmp/v/$u.service"
done
(cd "$tmp/v" && MANPATH=$root/usr/share/man systemd-analyze verify vnumad.service vnuma-agent.service) >"$tmp/verify" 2>&1
rc=$?
[ $rc = 0 ] && [ ! -s "$tmp/verify" ]; ok $? "systemd-analyze verify: no complaint ($(head -c 300 "$tmp/verify"))"
sed 's/^Restart=on-failure/Restart=on-failure\nRestartt=always/' "$tmp/v/vnumad.service" >"$tmp/v/broken.service"
(cd "$tmp/v" && MANPATH=$root/usr/share/man systemd-analyze verify broken.service) >"$tmp/verify2" 2>&1
grep -q 'Restartt' "$tmp/verify2"; ok $? "negative control: a misspelt directive is reported"
u=$root/lib/systemd/system/vnumad.service
for line in 'Type=notify' 'Restart=on-failure' 'After=libvirtd.service virtqemud.service libvirtd.socket virtqemud.socket' \
    'NoNewPrivileges=yes' 'ProtectSystem=strict' 'RuntimeDirectory=vnuma' 'StateDirectory=vnuma' \
    'RestrictAddressFamilies=AF_UNIX' 'ExecReload=/bin/kill -HUP $MAINPID'; do
    grep -qxF "$line" "$u"; ok $? "vnumad.service: $line"
done
grep -qE '^CapabilityBoundingSet=.*CAP_SYS_NICE' "$u" && grep -qE '^CapabilityBoundingSet=.*CAP_SYS_PTRACE' "$u"
ok $? "vnumad.service keeps CAP_SYS_NICE (move_pages MOVE_ALL) and CAP_SYS_PTRACE (QEMU's pages and /proc)"
! grep -qE '^(Wants|Requires|BindsTo|PartOf)=.*(libvirtd|virtqemud)' "$u"
ok $? "vnumad.service pulls in neither libvirt daemon (they conflict with each other)"
! grep -qE '^(ProtectProc=(invisible|noaccess)|ProcSubset=pid|PrivateUsers=yes|DynamicUser=yes)' "$u"
ok $? "nothing that would hide QEMU's /proc or drop root"
# every hardening directive in the unit is explained in docs/operations.md
missing=""
for k in $(grep -oE '^[A-Za-z]+=' "$u" | tr -d = | sort -u); do
    grep -q "\`$k" docs/operations.md || missing="$missing $k"
done
[ -z "$missing" ]; ok $? "every vnumad.service directive is explained in docs/operations.md (missing:${missing:- none})"
missing=""
for k in $(grep -oE '^[A-Za-z]+=' "$root/lib/systemd/system/vnuma-agent.service" | tr -d = | sort -u); do
    grep -q "\`$k" docs/operations.md || missing="$missing $k"
done
[ -z "$missing" ]; ok $? "every vnuma-agent.service directive is explained too (missing:${missing:- none})"
systemd-analyze security --offline=yes "$tmp/v/vnumad.service" >"$tmp/sec" 2>&1
score=$(sed -n 's/.*Overall exposure level for vnumad.service: \([0-9.]*\).*/\1/p' "$tmp/sec")
[ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }'
ok $? "systemd-analyze security --offline: vnumad.service exposure $score (<= 3.0)"
rule=$root/lib/udev/rules.d/60-vnuma-agent.rules
grep -q 'SUBSYSTEM=="virtio-ports", ATTR{name}=="org.vnuma.agent.0"' "$rule" &&
    grep -q 'TAG+="systemd", ENV{SYSTEMD_WANTS}+="vnuma-agent.service"' "$rule"
ok $? "udev rule: virtio-ports port org.vnuma.agent.0 -> SYSTEMD_WANTS vnuma-agent.service"
dev=$(systemd-escape -p --suffix=device /dev/virtio-ports/org.vnuma.agent.0)
grep -qxF "BindsTo=$dev" "$root/lib/systemd/system/vnuma-agent.service"
ok $? "vnuma-agent.service BindsTo= the port's device unit ($dev)"
# udev's own syntax: every line is a comment, blank, or KEY[{attr}]OP"value" pairs
awk '/^#/ || /^$/ { next } { line = line $0 } /\\$/ { sub(/\\$/, "", line); next }
     { if (line !~ /^([A-Z_]+(\{[A-Za-z_]+\})?(==|!=|=|\+=|:=)"[^"]*"(, *)?[ ]*)+$/) bad = 1; line = "" }
     END { exit bad }' "$rule"
ok $? "udev rule lines are KEY{attr}OP\"value\" lists"
finish
