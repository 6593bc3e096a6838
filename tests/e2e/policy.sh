#!/bin/bash
# The host policy on the real stack: real libvirtd and QEMU (TCG; type='kvm' with VN_ACCEL=kvm),
# one private vnumad with default_mode = auto and a policy_dir (docs/configuration.md, "Host
# policy"). Four firmware-only domains, none with a <balancer> element but O, each allowed
# CPUs 0-1 and live-pinned to CPU 0 (what the restore must put back):
#   P  plain: the default (auto) balances it: pinned to the node's CPUs 0-1, its decision object
#      readable through virsh qemu-monitor-command, "opt_in": "default";
#   X  left out by a rule on its name;
#   O  <balancer mode="off">: the element wins over the default;
#   N  Nova-shaped (a <nova:instance> block as Nova writes it, flavor numa.large), left out by a
#      rule on the flavor.
# Then SIGHUPs: the rules change to "auto nova.flavor=numa.*" only: X and N are taken up (N by
# the rule, its record says which); default_mode = off: P and X are restored (CPU 0 back), N
# stays; the rule becomes "off nova.flavor=numa.*": N is restored. O is never touched. Pins are
# checked on libvirt (virsh vcpupin) and on the kernel (each vCPU thread's affinity).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPU 0-1)"

NOVA='<nova:instance xmlns:nova="http://openstack.org/xmlns/libvirt/nova/1.1"><nova:package version="27.1.0"/><nova:name>web-1</nova:name><nova:creationTime>2024-05-01 10:00:00</nova:creationTime><nova:flavor name="numa.large"><nova:memory>128</nova:memory><nova:disk>0</nova:disk><nova:swap>0</nova:swap><nova:ephemeral>0</nova:ephemeral><nova:vcpus>2</nova:vcpus></nova:flavor><nova:owner><nova:user uuid="9a2e0b0f">alice</nova:user><nova:project uuid="4c1a9a77">demo</nova:project></nova:owner><nova:root type="image" uuid="d3b0c1e2"/></nova:instance>'
CPUSET="s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|"
P=$(define_domain policy-p "$T" "$CPUSET" "s|@OPTIN@||")
X=$(define_domain policy-x "$T" "$CPUSET" "s|@OPTIN@||")
O=$(define_domain policy-o "$T" "$CPUSET" "$(optin_sed 'mode="off"')")
N=$(define_domain policy-n "$T" "$CPUSET" "s|@OPTIN@|<metadata>$NOVA</metadata>|")
[ -n "$P" ] && [ -n "$X" ] && [ -n "$O" ] && [ -n "$N" ]
ok $? "four domains defined with <vcpu cpuset='0-1'> and started ($P $X $O $N)"
[ $fail -eq 0 ] || finish

to_cpu0() { $VIRSH vcpupin "$1" 0 0 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null; }
# on_cpu0 DOM: libvirt's vCPU pins and each vCPU thread's affinity are CPU 0
on_cpu0() { [ "$(vcpu_pins "$1")" = "0:0 1:0" ] && [ "$(vcpu_thread_affinity "$1")" = "0:0 1:0" ]; }
# balanced DOM: pinned by vnumad to the node's CPUs, on libvirt and on the kernel
balanced() { [ "$(vcpu_pins "$1")" = "0:0-1 1:0-1" ] && [ "$(vcpu_thread_affinity "$1")" = "0:0-1 1:0-1" ]; }
where() { echo "vCPUs $(vcpu_pins "$1"), threads $(vcpu_thread_affinity "$1")"; }
tracked() { vnctl status --json 2>/dev/null | grep -q "\"name\": *\"$1\""; }
for d in "$P" "$X" "$O" "$N"; do to_cpu0 "$d"; done
on_cpu0 "$P" && on_cpu0 "$X" && on_cpu0 "$O" && on_cpu0 "$N"
ok $? "all four live-pinned to CPU 0 ($P: $(where "$P"))"

POLICY=$E2E_TMP/policy.d
mkdir -p "$POLICY"
rules() { printf '%s\n' "$@" >"$POLICY/10-fleet.rules"; }
rules "off name=$X" "off nova.flavor=numa.*"
start_vnumad "default_mode = auto" "policy_dir = $POLICY"

# ---- default auto: P balanced; X, O, N untouched ----
wait_for 30 balanced "$P"
ok $? "default auto: $P (no element) is balanced: $(where "$P")"
# record_opt_in DOM: the "opt_in" of the decision record in the domain's QOM object
record_opt_in() {
    $VIRSH qemu-monitor-command "$1" \
        '{"execute":"qom-get","arguments":{"path":"/objects/vnuma-decision","property":"identity"}}' 2>/dev/null |
        python3 -c 'import json,sys; r=json.loads(json.load(sys.stdin)["return"]); assert r["domain"] == sys.argv[1]; print(r.get("opt_in", ""))' "$1" 2>/dev/null
}
opt_in_is() { [ "$(record_opt_in "$1")" = "$2" ]; }
wait_for 30 opt_in_is "$P" default
ok $? "default auto: $P's decision object (qom-get vnuma-decision) says \"opt_in\": \"default\" ($(record_opt_in "$P"))"
wait_passes 2
on_cpu0 "$X" && ! tracked "$X"
ok $? "rule 'off name=$X': $X untouched: $(where "$X")"
on_cpu0 "$O" && ! tracked "$O"
ok $? "element mode=\"off\" wins over default auto: $O untouched: $(where "$O")"
on_cpu0 "$N" && ! tracked "$N"
ok $? "rule 'off nova.flavor=numa.*': the Nova instance $N untouched: $(where "$N")"
vnctl status --json 2>/dev/null | grep -q '"opt_in": *"default"'
ok $? "vnumactl status --json says \"opt_in\": \"default\""

# ---- SIGHUP: the rule on X dropped, the Nova flavor in auto ----
rules "auto nova.flavor=numa.*"
kill -HUP "$VN_PID"
wait_for 30 balanced "$X"
ok $? "reload without the rule on $X: it is taken up by the default: $(where "$X")"
wait_for 30 balanced "$N"
ok $? "reload with 'auto nova.flavor=numa.*': the Nova instance $N is taken up: $(where "$N")"
wait_for 30 opt_in_is "$N" "rule $POLICY/10-fleet.rules:1"
ok $? "its decision object names the rule ($(record_opt_in "$N"))"

# ---- SIGHUP: default off ----
sed -i 's/^default_mode = auto$/default_mode = off/' "$VN_CONF"
kill -HUP "$VN_PID"
wait_for 30 on_cpu0 "$P"
ok $? "reload with default_mode = off: $P is restored (CPU 0 back): $(where "$P")"
wait_for 30 on_cpu0 "$X"
ok $? "and $X too: $(where "$X")"
log_has "Restored the original pinning and binding of '$P' \(opted out: host policy \(default\)\)"
ok $? "the log says the host policy restored $P"
wait_passes 2
balanced "$N" && tracked "$N"
ok $? "the Nova instance stays balanced by its rule: $(where "$N")"

# ---- SIGHUP: the Nova flavor left out ----
rules "off nova.flavor=numa.*"
kill -HUP "$VN_PID"
wait_for 30 on_cpu0 "$N"
ok $? "reload with 'off nova.flavor=numa.*': the Nova instance $N is restored: $(where "$N")"
on_cpu0 "$O" && ! log_has "Restored the original pinning and binding of '$O'"
ok $? "$O (mode=\"off\") was never touched: $(where "$O")"
! log_has "Not reloading"
ok $? "every reload was taken"
stop_vnumad
finish
