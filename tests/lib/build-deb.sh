#!/bin/bash
# tests/lib/build-deb.sh OUTDIR: the Debian packages of this tree (`dpkg-buildpackage -us -uc -b`
# in a copy of the source: dh_auto_clean would remove build artefacts in the work tree) into
# OUTDIR, with the build log as OUTDIR/build.log. A second call for the same sources reuses the
# packages (OUTDIR/stamp: a hash of every file the build reads), so tests/cli/deb.sh and
# tests/e2e/ground-systemd.sh build them once per tree. Prints the seconds the build took
# ("reused" when it did not run); exit status of dpkg-buildpackage.
set -u
out=$1
cd "$(dirname "$0")/../.." || exit 1
srcs="Makefile README.md lib host agent proto man dist debian docs"
# shellcheck disable=SC2086
stamp=$(find $srcs -type f -print0 | sort -z | xargs -0 md5sum | md5sum | cut -d' ' -f1)
if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ] &&
    ls "$out"/vnuma_*.deb "$out"/vnuma-guest-agent_*.deb >/dev/null 2>&1; then
    echo reused
    exit 0
fi
rm -rf "$out"
mkdir -p "$out/src/vnuma-0.1.0"
# shellcheck disable=SC2086
cp -a $srcs "$out/src/vnuma-0.1.0/"
start=$SECONDS
(cd "$out/src/vnuma-0.1.0" && dpkg-buildpackage -us -uc -b -j2) >"$out/build.log" 2>&1
rc=$?
echo $((SECONDS - start))
[ $rc = 0 ] || exit $rc
mv "$out"/src/*.deb "$out"/src/*.changes "$out"/src/*.buildinfo "$out/" 2>/dev/null
rm -rf "$out/src"
echo "$stamp" >"$out/stamp"
