#!/bin/bash
# Issue 31's tiers in the proving ground: a ground with a tier node (run-ground.sh --tier-node 1G:
# a CPU-less NVDIMM that the ground makes system RAM in a lower memory tier, as the kernel does CXL
# or persistent memory), a cell larger than its home node's room placed on two tiers with
# tier="cold-first", and a uniformly warm one (no hints) that stays off the tier
# (tests/e2e/ground/tiers.py); then, in the same boot, live migrations between two libvirtds
# with and without vnuma's qemu hook (tests/e2e/ground/migrate.py); last, issue 13's operator
# layout (tests/e2e/ground/layout.py): CPU 3 isolated (the boot's isolcpus=3), vnumad in a
# housekeeping cgroup (CPU 0), the guests' cgroup on CPUs 1-7, an opted-in domain whose XML pins
# its emulator, a busy domain that did not opt in and a wide guest. The boot and the checks are
# tests/e2e/ground.sh's.
GROUND_SUITE=tiers exec "$(dirname "$0")/ground.sh" "$@"
