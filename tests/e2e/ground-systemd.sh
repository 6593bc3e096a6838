#!/bin/bash
# Issue 15: the host package under systemd as PID 1. A ground booted with Debian's systemd
# (run-ground.sh --init systemd) installs the vnuma .deb the suite built (tests/lib/build-deb.sh)
# and runs vnumad as vnumad.service beside libvirtd.service: Type=notify, reload, balancing
# under the unit's hardening, journal priorities, a libvirtd restart, Restart= after SIGKILL,
# `systemctl restart` and a package upgrade leaving the guests where they are, stop restoring
# the pins, then the modular layout: virtqemud (tests/lib/build-virtqemud.sh)
# socket-activated by vnumad's connection, restarted and stopped under it
# (tests/e2e/ground/systemd.py; the boot and the checks are tests/e2e/ground.sh's).
GROUND_SUITE=systemd exec "$(dirname "$0")/ground.sh" "$@"
