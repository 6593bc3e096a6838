#!/bin/bash
# make demo-offline: the offline advisor on a bundled 2-socket topology and a snapshot of four
# domains (one misplaced new domain, one old one, one in advise mode, one that did not opt in).
# Needs no VM, no libvirt and no root; `make demo` falls back to it when the proving ground
# cannot boot here.
set -euo pipefail
BUILD=${BUILD:-build}
topo=tests/data/topologies/32em64t-2n8c2t-pci-normalio.xml
snap=tests/data/demo-snapshot.json
echo "vnuma offline demo: a real 2-socket Xeon (hwloc export $topo), 2 NUMA nodes x 16 CPUs"
echo
"$BUILD/vnumactl" topology --input "$topo"
echo
echo "Deciding on $snap, applying each plan to the snapshot, until nothing is left to do:"
echo "\$ vnumad --advise --topology $topo --snapshot $snap --table --passes 6"
echo
"$BUILD/vnumad" --advise --topology "$topo" --snapshot "$snap" --table --passes 6
echo
echo "The same plan as JSON: vnumad --advise --topology $topo --snapshot $snap --json"
echo "Nothing on this host was touched."
