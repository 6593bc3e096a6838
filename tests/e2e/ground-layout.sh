#!/bin/bash
# Issue 13's operator layout in the proving ground: a ground booted with CPU 3 isolated, vnumad
# in a housekeeping cgroup (CPU 0), the guests' cgroup on CPUs 1-7, an opted-in domain whose
# XML pins its emulator, a busy domain that did not opt in and a wide guest
# (tests/e2e/ground/layout.py; the boot and the checks are tests/e2e/ground.sh's).
GROUND_SUITE=layout exec "$(dirname "$0")/ground.sh" "$@"
