#!/bin/bash
# make install honours PREFIX and DESTDIR and installs exactly the expected files
# (binaries, systemd units with the right paths, udev rule, man pages, the default
# configuration); an operator's edited configuration survives a re-install and an
# uninstall; make uninstall removes exactly what install put there.
set -u
BUILD=${BUILD:-build}
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inst() { make --no-print-directory -s "$1" BUILD="$BUILD" PREFIX=/opt/vn DESTDIR="$tmp/root" >"$tmp/log" 2>&1; }

inst install
ok $? "make install PREFIX=/opt/vn DESTDIR=... succeeds"
(cd "$tmp/root" && find . -type f | sort) >"$tmp/files"
cat >"$tmp/want" <<EOW
./etc/libvirt/hooks/qemu.d/vnuma
./etc/logrotate.d/vnuma
./etc/vnuma/vnumad.conf
./opt/vn/lib/systemd/system/vnuma-agent.service
./opt/vn/lib/systemd/system/vnumad.service
./opt/vn/lib/udev/rules.d/60-vnuma-agent.rules
./opt/vn/sbin/vnuma-agent
./opt/vn/sbin/vnumactl
./opt/vn/sbin/vnumad
./opt/vn/share/bash-completion/completions/vnumactl
./opt/vn/share/man/man5/vnumad.conf.5
./opt/vn/share/man/man8/vnuma-agent.8
./opt/vn/share/man/man8/vnumactl.8
./opt/vn/share/man/man8/vnumad.8
./opt/vn/share/vnuma/kubernetes/vnumad-daemonset.yaml
./opt/vn/share/vnuma/prometheus/vnuma-alerts.yml
EOW
diff "$tmp/want" "$tmp/files" >"$tmp/diff"; ok $? "exactly the expected files ($(tr '\n' ' ' <"$tmp/diff"))"
for f in sbin/vnumad sbin/vnumactl sbin/vnuma-agent; do
    [ -x "$tmp/root/opt/vn/$f" ]; ok $? "installed $f under DESTDIR/PREFIX, executable"
done
"$tmp/root/opt/vn/sbin/vnumad" --version | grep -q '^vnumad '; ok $? "the installed vnumad runs"
[ -z "$(find "$tmp/root" -type f -perm /022)" ]; ok $? "no installed file is group- or world-writable"
[ -z "$(find "$tmp/root" -type f -name '*.[58]' ! -perm 644)" ] &&
    [ "$(stat -c %a "$tmp/root/etc/vnuma/vnumad.conf")" = 644 ]
ok $? "man pages and the configuration are mode 0644"
unit=$tmp/root/opt/vn/lib/systemd/system/vnumad.service
grep -qx 'ExecStart=/opt/vn/sbin/vnumad --foreground --config /etc/vnuma/vnumad.conf' "$unit"
ok $? "vnumad.service runs the installed binary with SYSCONFDIR's configuration"
! grep -q '@[A-Z]*@' "$tmp/root/opt/vn/lib/systemd/system/"*.service; ok $? "no @PLACEHOLDER@ left in the units"
grep -qx 'ExecStart=/opt/vn/sbin/vnuma-agent' "$tmp/root/opt/vn/lib/systemd/system/vnuma-agent.service"
ok $? "vnuma-agent.service runs the installed agent"
cmp -s dist/vnumad.conf "$tmp/root/etc/vnuma/vnumad.conf"; ok $? "the default configuration is dist/vnumad.conf"

echo "interval = 2" >>"$tmp/root/etc/vnuma/vnumad.conf"
inst install
grep -qx 'interval = 2' "$tmp/root/etc/vnuma/vnumad.conf" && grep -q 'keeping the existing' "$tmp/log"
ok $? "re-install keeps an edited configuration and says so"
inst uninstall
ok $? "make uninstall succeeds"
[ "$(cd "$tmp/root" && find . -type f)" = "./etc/vnuma/vnumad.conf" ] && grep -q 'keeping' "$tmp/log"
ok $? "uninstall removes every installed file but the edited configuration, and says so"
rm "$tmp/root/etc/vnuma/vnumad.conf"
inst install && inst uninstall
[ -z "$(find "$tmp/root" -type f)" ] && [ ! -e "$tmp/root/etc/vnuma" ]
ok $? "install then uninstall leaves no file and no /etc/vnuma"
finish
