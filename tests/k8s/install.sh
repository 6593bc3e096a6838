#!/bin/sh
# Installs the npm packages that check the Kubernetes manifest (tests/k8s/validate.js) into
# tests/k8s/node_modules: `npm ci`, the exact versions of package-lock.json, no install
# scripts. Does nothing when they are there for this lock already (node_modules/.vnuma-lock is
# the lock they were installed from). Run by tests/install-deps.sh (make deps, make check) and
# by tests/cli/k8s-manifest.sh when they are missing.
# Exit 0: installed; 1: they cannot be installed here (no npm, the registry unreachable), and
# the last lines say why.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
stamp=$dir/node_modules/.vnuma-lock
if [ -f "$stamp" ] && cmp -s "$dir/package-lock.json" "$stamp"; then
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "k8s: npm is not installed (Debian packages nodejs and npm; tests/install-deps.sh installs them)"
    exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --fetch-retries=1 \
    --fetch-timeout=60000 --loglevel=error) >"$log" 2>&1; then
    tail -n 5 "$log"
    echo "k8s: npm ci in tests/k8s failed: $(grep . "$log" | tail -n 1)"
    exit 1
fi
cp "$dir/package-lock.json" "$stamp"
echo "k8s: installed $(cd "$dir" && node -e 'const l=require("./package-lock.json").packages[""].dependencies; console.log(Object.entries(l).map(([n,v])=>n+"@"+v).join(" "))')"
