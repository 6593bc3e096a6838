#!/bin/bash
# Build the agent test guest into a cache directory (default build/guest/, never committed):
#   vmlinuz             the Debian kernel (linux-image-amd64; installed only when missing)
#   initramfs.cpio.gz   static busybox, the virtio-pci and virtio-serial (virtio_console)
#                       modules with their dependencies (modprobe --show-depends), the static
#                       vnuma-agent, the static workloads memtouch and pft (vm-images/guest/),
#                       and vm-images/guest/init.
# Idempotent: rebuilds the initramfs only when one of its inputs changed.
#   usage: vm-images/build-guest.sh [CACHE_DIR]      (env: KVER=6.1.0-..-amd64, FORCE=1)
# Prints the cache directory on the last line.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-build}
CACHE=${1:-${GUEST_CACHE:-$REPO/$BUILD/guest}}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
say() { echo "build-guest: $*" >&2; }

need=()
ls /boot/vmlinuz-* >/dev/null 2>&1 || need+=(linux-image-amd64)
{ [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; } || need+=(busybox-static)
[ -f /usr/lib/x86_64-linux-gnu/libjson-c.a ] || need+=(libjson-c-dev)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { say "missing ${need[*]} and not root: cannot install"; exit 1; }
    say "installing ${need[*]} (once)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >"$CACHE/apt.log" 2>&1 ||
        { say "apt-get install ${need[*]} failed: see $CACHE/apt.log"; exit 1; }
fi
KVER=${KVER:-$(ls /lib/modules | sort -V | tail -1)}
[ -f "/boot/vmlinuz-$KVER" ] || { say "no /boot/vmlinuz-$KVER"; exit 1; }

# the static agent and workloads (make knows when they are up to date)
make -C "$REPO" --no-print-directory -s BUILD="$BUILD" agent-static guest-tools >&2
AGENT=$REPO/$BUILD/vnuma-agent-static
TOOLS=$REPO/$BUILD/guest-tools

stamp=$CACHE/initramfs.stamp
want="$KVER $(md5sum "$HERE/guest/init" /bin/busybox "$0" "$AGENT" "$TOOLS/memtouch" "$TOOLS/pft" "$TOOLS/hostile" |
    awk '{print $1}' | paste -sd,)"
if [ "${FORCE:-0}" != 1 ] && [ -f "$CACHE/initramfs.cpio.gz" ] && [ -f "$CACHE/vmlinuz" ] &&
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    say "up to date ($CACHE)"
    echo "$CACHE"
    exit 0
fi
W=$CACHE/initramfs.d
rm -rf "$W"
mkdir -p "$W"/{bin,sbin,proc,sys,dev,tmp,lib/modules}
cp /bin/busybox "$W/bin/busybox"
install -m755 "$AGENT" "$W/sbin/vnuma-agent"
install -m755 "$TOOLS/memtouch" "$TOOLS/pft" "$TOOLS/hostile" "$W/bin/"
# modules in load order (modprobe --show-depends prints dependencies first)
for m in virtio_pci virtio_console; do
    modprobe -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' >"$CACHE/modules.list"
: >"$W/lib/modules/order"
while read -r ko; do
    base=$(basename "$ko"); base=${base%.xz}; base=${base%.zst}
    case "$ko" in
    *.ko) cp "$ko" "$W/lib/modules/$base" ;;
    *.ko.xz) xz -dc "$ko" >"$W/lib/modules/$base" ;;
    *.ko.zst) zstd -dc "$ko" >"$W/lib/modules/$base" ;;
    esac
    echo "$base" >>"$W/lib/modules/order"
done <"$CACHE/modules.list"
install -m755 "$HERE/guest/init" "$W/init"
(cd "$W" && find . | cpio -o -H newc --quiet | gzip -1) >"$CACHE/initramfs.cpio.gz.tmp"
mv "$CACHE/initramfs.cpio.gz.tmp" "$CACHE/initramfs.cpio.gz"
cp "/boot/vmlinuz-$KVER" "$CACHE/vmlinuz"
echo "$want" >"$stamp"
say "built $CACHE/initramfs.cpio.gz ($(du -k "$CACHE/initramfs.cpio.gz" | cut -f1) KiB; modules: $(paste -sd' ' "$W/lib/modules/order"))"
echo "$CACHE"
