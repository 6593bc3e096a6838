#!/bin/bash
# tests/lib/build-virtqemud.sh OUTDIR: libvirt's modular QEMU daemon, virtqemud, for the modular
# layout of tests/e2e/ground-systemd.sh (issue 15).
#
# Debian builds virtqemud and does not ship it (debian/not-installed of the libvirt source
# package lists usr/sbin/virtqemud and its units, in 12's 9.0 as in sid's 12.x), so no Debian
# package has the modular daemons. This builds that very daemon from Debian's own source package
# of the installed libvirt (apt-get source from Debian's archive, Debian's patches applied,
# Debian's daemon options: SASL, polkit, legacy remote default) and links it against the
# installed libvirt0, as Debian's libvirtd is linked; the QEMU driver it loads is the installed
# libvirt-daemon-driver-qemu. Only the daemon's own objects are compiled (about 20 s), not
# libvirt. The units and virtqemud.conf are the ones that build generates.
#
# OUTDIR gets a tree to copy over / (usr/sbin/virtqemud, usr/lib/systemd/system/virtqemud*,
# etc/libvirt/virtqemud.conf) in OUTDIR/root, the build log in OUTDIR/build.log, and
# OUTDIR/stamp (the libvirt0 version it was built for: a second call for it reuses the tree).
# Prints the seconds the build took ("reused" when it did not run); exit status 0 when the
# daemon was built and says the installed version.
set -u
out=$1
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$(dpkg-query -W -f='${Version}' libvirt0 2>/dev/null)
if [ -z "$ver" ]; then
    echo "build-virtqemud: libvirt0 is not installed" >&2
    exit 1
fi
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$ver" ] && [ -x "$out/root/usr/sbin/virtqemud" ]; then
    echo reused
    exit 0
fi
start=$SECONDS
log=$out/build.log
rm -rf "$out/src" "$out/b" "$out/root" "$out/apt" "$out/stamp"
mkdir -p "$out/src" "$out/apt/lists/partial" "$out/apt/parts"
# the machine's own sources.list has no deb-src lines: a private list for this one download
cat >"$out/apt/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm-updates main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
EOF
apt_o=(-o "Dir::Etc::SourceList=$out/apt/sources.list" -o "Dir::Etc::SourceParts=$out/apt/parts"
    -o "Dir::State::Lists=$out/apt/lists" -o "APT::Sandbox::User=root")
(
    set -e
    # PATH: Debian's python3 for meson's checks, not a python of another origin first in PATH
    export PATH=/usr/sbin:/usr/bin:/sbin:/bin
    cd "$out/src"
    apt-get "${apt_o[@]}" update -q
    apt-get "${apt_o[@]}" source -q "libvirt=$ver"
    lv=$(find . -maxdepth 1 -type d -name 'libvirt-*' | head -n 1)
    grep -q 'usr/sbin/virtqemud' "$lv/debian/not-installed" &&
        echo "build-virtqemud: Debian's $ver builds virtqemud and lists it in debian/not-installed"
    # the options that shape the daemon's own code (remote_daemon*.c) as debian/rules sets them;
    # drivers and storage backends live in the installed modules and are left out here
    meson setup "$out/b" "$lv" --prefix=/usr --libdir=lib/x86_64-linux-gnu \
        --libexecdir=/usr/lib/libvirt --sysconfdir=/etc --localstatedir=/var -Drunstatedir=/run \
        -Ddriver_qemu=enabled -Ddriver_libvirtd=enabled -Ddriver_remote=enabled \
        -Dremote_default_mode=legacy -Dqemu_user=libvirt-qemu -Dqemu_group=libvirt-qemu \
        -Dsasl=enabled -Dpolkit=enabled -Dyajl=enabled -Dinit_script=systemd \
        -Ddocs=disabled -Dtests=disabled -Ddriver_network=disabled -Ddriver_lxc=disabled \
        -Ddriver_libxl=disabled -Ddriver_vbox=disabled -Ddriver_esx=disabled -Ddriver_ch=disabled \
        -Dstorage_lvm=disabled -Dnumactl=disabled -Dnumad=disabled -Dselinux=disabled \
        -Dapparmor=disabled -Dsecdriver_apparmor=disabled -Dsecdriver_selinux=disabled \
        -Dnss=disabled -Dlibssh=disabled -Dlibssh2=disabled -Dudev=disabled
    cd "$out/b"
    objs=$(ninja -t targets all | sed -n 's/^\(src\/virtqemud\.p\/[^:]*\.o\):.*/\1/p')
    [ -n "$objs" ]
    # the generated protocol headers and dispatch stubs the daemon includes, then its objects
    # (the units and virtqemud.conf are written by meson setup itself)
    # shellcheck disable=SC2086
    ninja src/rpc/virnetprotocol.h src/rpc/virkeepaliveprotocol.h src/remote/remote_protocol.h \
        src/remote/qemu_protocol.h src/remote/lxc_protocol.h \
        src/remote/remote_daemon_dispatch_stubs.h src/remote/qemu_daemon_dispatch_stubs.h \
        src/remote/lxc_daemon_dispatch_stubs.h src/admin/admin_protocol.h \
        src/admin/admin_server_dispatch_stubs.h src/admin/libvirt_admin_driver.a $objs
    lib=/usr/lib/x86_64-linux-gnu
    # shellcheck disable=SC2086,SC2046
    cc -o virtqemud $objs -pie -Wl,--as-needed src/admin/libvirt_admin_driver.a \
        $lib/libvirt.so.0 $lib/libvirt-lxc.so.0 $lib/libvirt-qemu.so.0 \
        $(pkg-config --libs gnutls glib-2.0 gobject-2.0 gio-2.0 libxml-2.0 libsasl2 libtirpc)
    r=$out/root
    install -D -m 0755 virtqemud "$r/usr/sbin/virtqemud"
    for u in virtqemud.service virtqemud.socket virtqemud-ro.socket virtqemud-admin.socket; do
        install -D -m 0644 "src/$u" "$r/usr/lib/systemd/system/$u"
    done
    install -D -m 0644 src/virtqemud.conf "$r/etc/libvirt/virtqemud.conf"
) >"$log" 2>&1
rc=$?
if [ $rc != 0 ]; then
    tail -n 20 "$log" >&2
    exit $rc
fi
got=$("$out/root/usr/sbin/virtqemud" --version 2>&1)
got=${got##*/}
want="virtqemud (libvirt) ${ver%%-*}"
if [ "$got" != "$want" ]; then
    echo "build-virtqemud: '$got', not '$want'" >&2
    exit 1
fi
rm -rf "$out/src" "$out/b" "$out/apt"
echo "$ver" >"$out/stamp"
echo $((SECONDS - start))
