#!/bin/bash
# A domain's name cannot make vnumad take another domain's QEMU for its own (real libvirtd,
# QEMU under TCG, a private vnumad). libvirt 9.0 names a domain's pid file after its name with
# XML's escapes: the pid file of the domain called x'y is x&apos;y.pid, which is also the raw
# name of a domain a tenant may call x&apos;y. vnumad read <name>.pid first: it sampled, counted
# and moved pages in the other domain's QEMU and mbind(2)-ed its shared RAM. vnumad now takes
# the pid from libvirt's status file of the domain (<name>.xml, root's), believed only when it
# names the domain's uuid and run.
#   - the victim x'y (not opted in) and the tenant's x&apos;y (opted in) run; the pid file under
#     the tenant's raw name is the victim's (the attack's ground, checked first);
#   - vnumad samples and places the tenant's domain with the tenant's own QEMU (the pid it
#     logs), never mentions the victim's QEMU, and leaves the victim as it was.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad
RUN=${LIBVIRT_RUN:-/run/libvirt}

# pid_of_uuid UUID: the QEMU process started with -uuid UUID (the kernel's view, not libvirt's)
pid_of_uuid() { pgrep -f -- "-uuid $1" | head -n 1; }

# define NAME_SUFFIX NEW_NAME OPTIN_SED: defined under a plain name, renamed (sed cannot write
# every name), started; prints its uuid
define_renamed() {
    local plain uuid
    plain=$(define_stopped "$1" "$T" "$3") || return 1
    uuid=$($VIRSH domuuid "$plain") || return 1
    echo "$uuid" >>"$E2E_TMP/domains"
    $VIRSH domrename "$plain" "$2" >"$E2E_TMP/rename.out" 2>&1 &&
        $VIRSH start "$2" >>"$E2E_TMP/rename.out" 2>&1 || { cat "$E2E_TMP/rename.out" >&2; return 1; }
    echo "$uuid"
}

V=${E2E_PREFIX}x\'y
A=${E2E_PREFIX}x\&apos\;y
VU=$(define_renamed victim "$V" "s|@OPTIN@||")
ok $? "the victim $V defined (not opted in) and started"
AU=$(define_renamed tenant "$A" "$(optin_sed 'mode="auto"')")
ok $? "the tenant's $A defined (mode auto) and started"
[ $fail -eq 0 ] || finish
VPID=$(pid_of_uuid "$VU")
APID=$(pid_of_uuid "$AU")
[ -n "$VPID" ] && [ -n "$APID" ] && [ "$VPID" != "$APID" ]
ok $? "two QEMUs: the victim's pid $VPID, the tenant's $APID"
[ "$(cat "$RUN/qemu/$A.pid" 2>/dev/null)" = "$VPID" ]
ok $? "the ground of the attack: $RUN/qemu/$A.pid, named as the tenant's domain is, is the victim's ($(cat "$RUN/qemu/$A.pid" 2>/dev/null))"
before=$(vcpu_pins "$V")

start_vnumad "interval = 1"
decided() { [ "$(grep -cE "decision domain='${E2E_PREFIX}x&apos;y' pass=" "$VN_LOG")" -ge 2 ]; }
wait_for 60 decided
ok $? "vnumad decided on the tenant's domain in two passes ($(grep -cE "decision domain='${E2E_PREFIX}x&apos;y'" "$VN_LOG") decision lines)"
log_has "\(pid $APID\)"
ok $? "it sampled the tenant's own QEMU: $(grep -E "\(pid $APID\)" "$VN_LOG" | head -n 1 | sed 's/^<[0-9]>vnumad: //')"
! log_has "\(pid $VPID\)"
ok $? "and never the victim's (pid $VPID): $(grep -E "\(pid $VPID\)" "$VN_LOG" | head -n 1 | sed 's/^<[0-9]>vnumad: //')"
! grep -E "Failed to sample|went away" "$VN_LOG" | grep -qF "x&apos;y"
ok $? "no sample of it failed ($(grep -E "Failed to sample|went away" "$VN_LOG" | head -n 1))"
[ "$(vcpu_pins "$V")" = "$before" ] && [ -z "$(live_state "$V" 2>/dev/null)" ]
ok $? "the victim is as it was: vCPU pins $(vcpu_pins "$V") (were $before), no vnumad state in its metadata"
stop_vnumad
finish
