#!/bin/bash
# Hot memory first, shown (issue 16): does the guest agent's hint pay? One boot of the proving
# ground, two domains of the test guest (vm-images/build-guest.sh), both misplaced the way
# tests/bench/compare.sh misplaces them (all memory on the last node, vCPUs on the others):
#   hs-agent  with vnuma-agent and its channel;  hs-plain  without.
# In each, guest node 0's cell holds a cold filler (COLD_MIB written once) and a hot set
# (HOT_MIB written in a loop; memtouch prints its guest-physical ranges). Run "agent" is vnumad
# with hs-agent opted in, run "plain" vnumad with hs-plain opted in. Per second: the hot set's
# locality (its pages, every one, on the node vCPU 0 runs on), the cell's, /proc/vmstat.
# HOT_START=warm (default): vnumad runs first with the domain in advise mode (it samples and
# talks to the agent, changes nothing) until it has sampled it 3 times and, with the agent, got
# a second hint set; then the misplaced start, and t=0 is the switch to auto: the steady state
# of a host where vnumad ran before the memory was misplaced. HOT_START=cold: vnumad starts at
# t=0 (as in compare.sh): the agent's link, and its first hint sets, come with the first passes.
# Prints a table: time until the hot set is 95% local, bytes migrated before that, time to
# 95%/99% of all of the domain's memory, bytes migrated in all.
#   usage: tests/bench/hotset.sh [SECONDS]   (default 60 s of sampling per run)
#   env: HOT_MIB=32 COLD_MIB=512 CELL_MIB=640 HOT_START=warm RUNS=agent+plain COMPARE_TIMEOUT=1500 (s)
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=60
. tests/bench/args.sh
bench_args SECS:int -- "$@"
HOT_MIB=${HOT_MIB:-32} COLD_MIB=${COLD_MIB:-512} CELL_MIB=${CELL_MIB:-640} exec tests/bench/compare.sh "$SECS"
