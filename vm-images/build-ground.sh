#!/bin/bash
# Build the proving ground's boot files into a cache directory (default build/ground/, never
# committed): the Debian kernel, an initramfs (static busybox + the kernel's virtio/9p/overlay
# modules + vm-images/ground/init) and spin.elf (a tiny multiboot "guest kernel" whose vCPUs all
# spin, to make L2 vCPUs busy). Installs linux-image-amd64 and busybox-static only when missing.
# Idempotent: rebuilds only when an input is newer than the output.
#   usage: vm-images/build-ground.sh [CACHE_DIR]      (env: KVER=6.1.0-..-amd64, FORCE=1)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
CACHE=${1:-${GROUND_CACHE:-$REPO/build/ground}}
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
say() { echo "build-ground: $*" >&2; }

need=()
ls /boot/vmlinuz-* >/dev/null 2>&1 || need+=(linux-image-amd64)
[ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -x insmod >/dev/null &&  # grep -q would stop reading: SIGPIPE fails the pipe (pipefail)
    ! ldd /bin/busybox >/dev/null 2>&1 || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { say "missing ${need[*]} and not root: cannot install"; exit 1; }
    say "installing ${need[*]} (once, about a minute)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}" >"$CACHE/apt.log" 2>&1 ||
        { say "apt-get install ${need[*]} failed: see $CACHE/apt.log"; exit 1; }
fi
KVER=${KVER:-$(ls /lib/modules | sort -V | tail -1)}
[ -f "/boot/vmlinuz-$KVER" ] || { say "no /boot/vmlinuz-$KVER"; exit 1; }

stamp=$CACHE/initramfs.stamp
want="$KVER $(md5sum "$HERE/ground/init" /bin/busybox "$0" | awk '{print $1}' | paste -sd,)"
if [ "${FORCE:-0}" != 1 ] && [ -f "$CACHE/initramfs.cpio.gz" ] && [ -f "$CACHE/vmlinuz" ] &&
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    say "initramfs up to date ($CACHE)"
else
    W=$CACHE/initramfs.d
    rm -rf "$W"
    mkdir -p "$W"/{bin,proc,sys,dev,lib/modules,lower,upper,newroot}
    cp /bin/busybox "$W/bin/busybox"
    # modules in load order (modprobe --show-depends prints dependencies first)
    for m in virtio_pci 9pnet_virtio 9p overlay; do
        modprobe -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
    done | awk '!seen[$0]++' >"$W/modules.list.src"
    : >"$W/lib/modules/order"
    while read -r ko; do
        base=$(basename "$ko"); base=${base%.xz}; base=${base%.zst}
        case "$ko" in
        *.ko) cp "$ko" "$W/lib/modules/$base" ;;
        *.ko.xz) xz -dc "$ko" >"$W/lib/modules/$base" ;;
        *.ko.zst) zstd -dc "$ko" >"$W/lib/modules/$base" ;;
        esac
        echo "$base" >>"$W/lib/modules/order"
    done <"$W/modules.list.src"
    rm "$W/modules.list.src"
    install -m755 "$HERE/ground/init" "$W/init"
    (cd "$W" && find . | cpio -o -H newc --quiet | gzip -1) >"$CACHE/initramfs.cpio.gz.tmp"
    mv "$CACHE/initramfs.cpio.gz.tmp" "$CACHE/initramfs.cpio.gz"
    cp "/boot/vmlinuz-$KVER" "$CACHE/vmlinuz"
    echo "$want" >"$stamp"
    say "built $CACHE/initramfs.cpio.gz ($(du -k "$CACHE/initramfs.cpio.gz" | cut -f1) KiB, modules: $(paste -sd' ' "$W/lib/modules/order"))"
fi

# spin.elf: 32-bit multiboot image for L2 domains (<os><kernel>): wakes the APs into a
# `jmp $` loop and spins on the BSP, so every vCPU is 100% busy and nothing else happens.
if [ "${FORCE:-0}" = 1 ] || [ ! -f "$CACHE/spin.elf" ] || [ "$HERE/ground/spin.S" -nt "$CACHE/spin.elf" ]; then
    as --32 -o "$CACHE/spin.o" "$HERE/ground/spin.S"
    ld -m elf_i386 -Ttext=0x100000 -e _start -o "$CACHE/spin.elf" "$CACHE/spin.o"
    rm -f "$CACHE/spin.o"
    say "built $CACHE/spin.elf"
fi
echo "$CACHE"
