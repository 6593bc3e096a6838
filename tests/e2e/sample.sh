#!/bin/bash
# End-to-end test of the sample stage (host/sample.c) on real domains: starts three TCG
# guests and runs build/tests/test-sample-live against them:
#   two-cell         2 guest cells x 64 MiB (RAM allocated at start), vCPU n in cell n
#   two-cell-strict  the same with <numatune><memory mode='strict' nodeset='0'/>: rule 2,
#                    no page queries
#   no-numa          no guest NUMA (one "pc.ram" backend), <vcpu cpuset='0'>
# Prints "ok N - ..." lines and "N passed, N failed"; exits 77 when libvirtd cannot run
# here. The domains are destroyed and undefined on exit, also after a failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
E2E_PREFIX="vnuma-test-sample-$$-"

live=$BUILD/tests/test-sample-live
# shellcheck disable=SC2016 # TEST is eval'd
e2e_preamble --need "$live is not built (make tests)" '[ -x "$live" ]' --any-vnumad

dom=$(define_domain two-cell tests/data/domains/two-cell.xml.in)
ok $? "two-cell domain started ($dom)"
strict=$(define_domain strict tests/data/domains/two-cell-strict.xml.in)
ok $? "two-cell strict domain started ($strict)"
nonuma=$(define_domain no-numa tests/data/domains/no-numa.xml.in)
ok $? "no-NUMA domain started ($nonuma)"
[ $fail -eq 0 ] || finish

out=$E2E_TMP/live.out
VN_LIVE_DOMAIN=$dom VN_LIVE_DOMAIN_STRICT=$strict VN_LIVE_DOMAIN_NONUMA=$nonuma \
    "$live" >"$out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
    cat "$out"
    skip_all "test-sample-live cannot run: $(tail -n 1 "$out")"
fi
# forward its checks, numbered after ours
while IFS= read -r line; do
    case $line in
    "ok "*) ok 0 "${line#ok * - }" ;;
    "not ok "*) ok 1 "${line#not ok * - }" ;;
    *" passed, "*" failed") ;;
    *) echo "# $line" ;;
    esac
done <"$out"
grep -Eq '^[0-9]+ passed, [0-9]+ failed' "$out" || ok 1 "test-sample-live finished (exit $rc)"
[ $rc -eq 0 ] || [ $fail -gt 0 ] || ok 1 "test-sample-live exited with $rc"

# the domains were sampled through the monitor: libvirt marks them
$VIRSH dominfo "$dom" 2>/dev/null | grep -q "custom monitor"
ok $? "$dom is marked custom-monitor (QMP was used)"
finish
