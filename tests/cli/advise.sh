#!/bin/bash
# vnumad --advise end to end: every bundled topology with its example snapshot, the demo and its
# golden plan, convergence, the properties checked from outside (allowed sets, opt-in), and bad
# input (a clear error naming file and field, non-zero exit, no plan printed).
set -u
BUILD=${BUILD:-build}
VNUMAD=$BUILD/vnumad
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Checks a plan (JSON on stdin-file $1) against its snapshot $2 and topology JSON $3 from outside:
# domains that did not opt in are absent, every pin is inside the vCPU's allowed set and one
# node's CPUs, no vCPU is pinned to a CPU-less node.
check_plan() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
def cpus(s):
    out = set()
    for part in filter(None, s.split(',')):
        a, _, b = part.partition('-')
        out.update(range(int(a), int(b or a) + 1))
    return out
plan = json.load(open(sys.argv[1])); snap = json.load(open(sys.argv[2])); topo = json.load(open(sys.argv[3]))
if 'passes' in plan: plans = plan['passes']
else: plans = [plan]
node_cpus = {n['node']: cpus(n['cpus']) for n in topo['nodes']}
doms = {d['name']: d for d in snap['domains']}
for p in plans:
    for d in p['domains']:
        sd = doms[d['name']]
        mode = sd.get('balancer', {}).get('mode', 'off')
        assert mode in ('auto', 'advise'), f"{d['name']} did not opt in but is planned"
        allowed = {v['id']: cpus(v['allowed']) for c in sd['cells'] for v in c['vcpus']}
        for c in d['cells']:
            for pin in c['pins']:
                s = cpus(pin['cpus'])
                assert s and s <= allowed[pin['vcpu']], f"pin outside allowed set: {d['name']} {pin}"
                assert s <= node_cpus[c['target_node']], f"pin outside target node: {pin}"
                assert node_cpus[c['target_node']], "pinned to a CPU-less node"
                assert pin['rules'], "pin without rules"
            for m in c['moves']:
                assert m['rules'] and m['to_node'] == c['target_node'], f"bad move {m}"
            assert bool(c['pins'] or c['moves']) == (c['reason'] == 'act'), f"reason mismatch {c}"
print("plan ok")
PY
}

for topo in tests/data/topologies/*.xml; do
    base=$(basename "$topo" .xml)
    snap=tests/data/snapshots/$base.json
    if [ ! -f "$snap" ]; then
        ok 1 "$base: example snapshot $snap exists"
        continue
    fi
    "$BUILD/vnumactl" topology --input "$topo" --json >"$tmp/topo.json" 2>/dev/null
    "$VNUMAD" --advise --topology "$topo" --snapshot "$snap" --json >"$tmp/plan.json" 2>"$tmp/err"
    ok $? "$base: vnumad --advise --json exits 0"
    check_plan "$tmp/plan.json" "$snap" "$tmp/topo.json" >/dev/null 2>"$tmp/err"
    ok $? "$base: plan respects opt-in and allowed sets ($(tail -n 1 "$tmp/err"))"
    "$VNUMAD" --advise --topology "$topo" --snapshot "$snap" --table >"$tmp/table" 2>&1
    grep -q '^DOMAIN' "$tmp/table" && grep -q ' actions$' "$tmp/table"
    ok $? "$base: the human table is printed"
    "$VNUMAD" --advise --topology "$topo" --snapshot "$snap" --json --passes 10 >"$tmp/passes.json" 2>&1
    python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["passes"]
last = p[-1]
auto = sum(len(c["pins"]) + len(c["moves"]) for d in last["domains"] if d["mode"] == "auto" for c in d["cells"])
sys.exit(0 if auto == 0 and len(p) <= 4 else 1)' "$tmp/passes.json"
    ok $? "$base: converges within 4 passes and the last plans nothing for auto domains"
done

# The demo and its golden plan (VN_TEST_REGENERATE_OUTPUT=1 rewrites it).
topo=tests/data/topologies/32em64t-2n8c2t-pci-normalio.xml
golden=tests/golden/demo-plan.json
"$VNUMAD" --advise --topology "$topo" --snapshot tests/data/demo-snapshot.json --json >"$tmp/demo.json"
ok $? "demo snapshot: advise exits 0"
if [ "${VN_TEST_REGENERATE_OUTPUT:-0}" = 1 ]; then cp "$tmp/demo.json" "$golden"; fi
diff -u "$golden" "$tmp/demo.json" >"$tmp/diff" 2>&1
ok $? "demo plan equals the golden file $golden ($(head -c 300 "$tmp/diff" | tr '\n' ' '))"
python3 - "$tmp/demo.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
d = {x['name']: x for x in p['domains']}
assert 'not-opted-in' not in d
new0 = d['db-new']['cells'][0]
assert 'early-migration' in new0['rules'] and new0['moves'], new0
old = d['web-old']['cells'][0]
assert old['reason'] == 'two-stage-filter' and not old['moves'], old
assert d['batch-advise']['mode'] == 'advise'
PY
ok $? "demo: new domain moves early, old one waits for the filter, not-opted-in absent"
"$VNUMAD" --advise --topology "$topo" --snapshot tests/data/demo-snapshot.json --json >"$tmp/demo2.json"
cmp -s "$tmp/demo.json" "$tmp/demo2.json"
ok $? "demo plan is deterministic across runs"

# Synthetic topology and the live host (one node here).
# hwloc synthetic nodes have 1 GiB each: drop the demo's free-memory figures
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d.pop("nodes"); json.dump(d, open(sys.argv[2], "w"))' \
    tests/data/demo-snapshot.json "$tmp/synth.json"
"$VNUMAD" --advise --synthetic "pack:2 numa:1 l3:1 core:8 pu:2" --snapshot "$tmp/synth.json" --json >"$tmp/out" 2>"$tmp/err"
ok $? "advise on an hwloc synthetic topology ($(head -n 1 "$tmp/err"))"

# Bad input: a clear error that names the file and the field, exit 1, nothing on stdout.
expect_bad() { # file expected-substring
    "$VNUMAD" --advise --topology "$topo" --snapshot "$1" --json >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -ne 0 ] && [ ! -s "$tmp/out" ] && grep -q "$(basename "$1")" "$tmp/err" && grep -q -- "$2" "$tmp/err"
    ok $? "bad snapshot $(basename "$1"): exit $rc, error '$(head -n 1 "$tmp/err")'"
}
expect_bad tests/data/bad/snapshot-busy-string.json 'domains\[0\].cells\[0\].vcpus\[0\].busy'
expect_bad tests/data/bad/snapshot-busy-negative.json 'busy'
expect_bad tests/data/bad/snapshot-pages-huge.json 'pages'
expect_bad tests/data/bad/snapshot-unknown-field.json 'colour'
expect_bad tests/data/bad/snapshot-cpu-out-of-range.json 'allowed'
expect_bad tests/data/bad/snapshot-unknown-node.json '7'
expect_bad tests/data/bad/snapshot-bad-mode.json 'mode'
expect_bad tests/data/bad/snapshot-version-type.json 'version'
expect_bad tests/data/bad/snapshot-truncated.json 'snapshot-truncated'
expect_bad tests/data/bad/snapshot-trailing.json 'snapshot-trailing'
expect_bad "$tmp/missing.json" 'missing.json'

"$VNUMAD" --advise --topology tests/data/bad/topology-malformed.xml --snapshot tests/data/demo-snapshot.json >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -ne 0 ] && grep -q topology-malformed.xml "$tmp/err"
ok $? "malformed topology: exit $rc, error names the file"
"$VNUMAD" --advise --topology "$topo" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "--advise without --snapshot is a usage error (exit $rc)"
"$VNUMAD" --advise --topology "$topo" --snapshot tests/data/demo-snapshot.json --passes 0 >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ]; ok $? "--passes 0 is refused (exit $rc)"
printf 'interval = 5\n' >"$tmp/good.conf"
"$VNUMAD" --check-config --config "$tmp/good.conf" >/dev/null 2>&1
ok $? "vnumad --check-config accepts a valid file"
printf 'interval = 5\ncolour = red\n' >"$tmp/bad.conf"
"$VNUMAD" --check-config --config "$tmp/bad.conf" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -ne 0 ] && grep -q "bad.conf:2: unknown key 'colour'" "$tmp/err"
ok $? "vnumad --check-config names file, line and reason of a bad key (exit $rc)"
"$VNUMAD" --foreground --config "$tmp/bad.conf" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ]; ok $? "vnumad refuses to start with a bad configuration (exit $rc)"

# --check-config says what is wrong and what would be right, and checks what it can on this host
check_conf() { # want-rc expected-substring config-text
    printf '%b' "$3" >"$tmp/cc.conf"
    "$VNUMAD" --check-config --config "$tmp/cc.conf" >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq "$1" ] && grep -q -- "$2" "$tmp/out"
    ok $? "--check-config on '$(printf '%b' "$3" | head -n 1)': exit $rc, '$(head -n 1 "$tmp/out")'"
}
check_conf 1 "interval: value '0' is not a number from 0.1 to 3600" 'interval = 0\n'
check_conf 1 "rate_limit_mib: value '0' is not a number from 1 to 1048576" 'rate_limit_mib = 0\n'
check_conf 0 ": ok" 'interval = 2 # two seconds\nqmp = no\t# pins only\n'
check_conf 1 "metrics_file: directory /nonexistent-vnuma/dir" 'metrics_file = /nonexistent-vnuma/dir/x.prom\n'
check_conf 1 "state_dir: directory /nonexistent-vnuma" 'state_dir = /nonexistent-vnuma/a/b\n'
check_conf 1 "pid_file: directory /nonexistent-vnuma" 'pid_file = /nonexistent-vnuma/vnumad.pid\n'
check_conf 1 "uri: vnumad balances QEMU guests" 'uri = xen:///system\n'
# the host policy's rules (docs/configuration.md "Host policy"): read and checked too
mkdir -p "$tmp/policy.d" && chmod 0755 "$tmp/policy.d"
printf 'off dedicated\nauto nova.flavor=m1.*\n' >"$tmp/policy.d/10-fleet.rules"
printf 'auto name="web 1"\n' >"$tmp/policy.d/20-web.rules"
check_conf 0 "host policy: default auto, 3 rule(s) from $tmp/policy.d" "default_mode = auto\npolicy_dir = $tmp/policy.d\n"
printf 'auto nova.flavour=m1.*\n' >"$tmp/policy.d/20-web.rules"
check_conf 1 "$tmp/policy.d/20-web.rules:1: unknown match 'nova.flavour'" "policy_dir = $tmp/policy.d\n"
rm -f "$tmp/policy.d/20-web.rules"
check_conf 1 "policy_dir: /nonexistent-vnuma/policy.d: No such file" 'policy_dir = /nonexistent-vnuma/policy.d\n'
check_conf 1 "default_mode: expected off, advise or auto" 'default_mode = on\n'
if [ ! -e /etc/vnuma/vnumad.conf ]; then
    "$VNUMAD" --check-config >"$tmp/out" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -q "no such file; the built-in defaults are ok" "$tmp/out"
    ok $? "--check-config without a file says there is none (exit $rc, '$(head -n 1 "$tmp/out")')"
else
    note "/etc/vnuma/vnumad.conf exists here: the no-file message is not checked"
fi

# Options of one mode are refused in another, and options that choose the same thing are refused
# together: exit 2, the option named, nothing on stdout. Where the old parser would have started
# the balancer (an advisor option without --advise) the command line carries the bad
# configuration, so that a regression fails on it (exit 1) instead of starting a daemon.
expect_usage() { # expected-substring args...
    local want=$1
    shift
    "$VNUMAD" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q -- "$want" "$tmp/err"
    ok $? "vnumad $* is a usage error (exit $rc: $(head -n 1 "$tmp/err"))"
}
demo=tests/data/demo-snapshot.json
expect_usage "--topology is an option of --advise" --topology "$topo" --snapshot "$demo" --config "$tmp/bad.conf"
expect_usage "--snapshot is an option of --advise" --snapshot "$demo" --config "$tmp/bad.conf"
expect_usage "--passes is an option of --advise" --foreground --passes 2 --config "$tmp/bad.conf"
expect_usage "--json is an option of --advise" --json --config "$tmp/bad.conf"
expect_usage "--advise and --check-config cannot be combined" --check-config --advise --topology "$topo" --snapshot "$demo"
expect_usage "--json and --table cannot be combined" --advise --topology "$topo" --snapshot "$demo" --json --table
expect_usage "--topology and --synthetic cannot be combined" --advise --topology "$topo" --synthetic "pack:2 core:2 pu:1" --snapshot "$demo"
expect_usage "--foreground is not an option of --advise" --advise --foreground --topology "$topo" --snapshot "$demo"
expect_usage "--config is not an option of --advise" --advise --config "$tmp/good.conf" --topology "$topo" --snapshot "$demo"
expect_usage "--foreground is not an option of --check-config" --check-config --foreground --config "$tmp/good.conf"
expect_usage "--table is not an option of --check-config" --check-config --table --config "$tmp/good.conf"
expect_usage "--snapshot given twice" --advise --topology "$topo" --snapshot "$demo" --snapshot "$tmp/missing.json"

finish
