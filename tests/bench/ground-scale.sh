#!/bin/bash
# Issue 14 in the proving ground: 20 opted-in domains and one of them misplaced; the misplaced
# one must be moved within two passes (tests/e2e/ground/scale.py says how). One ground boot
# (about 8 minutes here); the boot and the checks are tests/e2e/ground.sh's, the results in
# build/ground/results-e2e-scale/scenario-16-scale-20.json.
#   usage: tests/bench/ground-scale.sh
GROUND_SUITE=scale exec "$(dirname "$0")/../e2e/ground.sh" "$@"
