#!/bin/sh
# Install the Debian packages vnuma needs to build and test, only those missing.
# Idempotent: a machine that has them all runs no apt-get at all.
set -eu

# linux-image-amd64 busybox-static: the proving ground's kernel and initramfs (vm-images/);
# ndctl daxctl: run inside it from this root, they online its tier node (run-ground.sh --tier-node)
PKGS="gcc make pkg-config libc6-dev
libvirt-dev libjson-c-dev libnuma-dev libhwloc-dev hwloc libxml2-dev libxml2-utils liburing-dev libsystemd-dev libcap-ng-dev
numactl clang libclang-rt-14-dev valgrind groff-base man-db python3
libvirt-daemon-system libvirt-clients qemu-system-x86 util-linux procps
systemd dpkg-dev debhelper lintian python3-prometheus-client python3-libvirt
linux-image-amd64 busybox-static ndctl daxctl
prometheus prometheus-node-exporter libncurses-dev tmux bash-completion logrotate
meson ninja-build rpcsvc-proto xsltproc libglib2.0-dev libgnutls28-dev libtirpc-dev libsasl2-dev libyajl-dev"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
# npm for the Kubernetes manifest's check (tests/k8s): Debian's nodejs and npm only where the
# machine has no npm of its own (a Node.js from elsewhere that brings npm is kept)
command -v npm >/dev/null 2>&1 || missing="$missing nodejs npm"

# npm_packages: the manifest check's npm packages (tests/k8s/install.sh, npm ci, exact
# versions); when they cannot be installed, tests/cli/k8s-manifest.sh skips and says why
npm_packages() {
    "$(dirname "$0")/k8s/install.sh" || echo "deps: the npm packages of tests/k8s are not installed (see above)" >&2
}
if [ -z "$missing" ]; then
    echo "deps: all build and test packages present"
    npm_packages
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "deps: missing packages:$missing (run make check as root, or install them)" >&2
    exit 1
fi
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# The packages with services (prometheus, prometheus-node-exporter, libvirt) are not
# started by their install: the tests start what they need, on their own ports. A
# policy-rc.d that says 101 keeps invoke-rc.d from starting them; one already there is kept.
guard=""
if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    guard=/usr/sbin/policy-rc.d
fi
trap '[ -z "$guard" ] || rm -f "$guard"' EXIT
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq $missing
npm_packages
