#!/bin/bash
# A dry run on a live host with nothing opted in (real libvirtd, QEMU): the operator saves a
# snapshot of every running VM with `vnumactl snapshot` and reads vnumad's advice for it with
# `vnumad --advise --snapshot`:
#   a. vnumactl snapshot -o FILE: exit 0; the file is a snapshot vnumad --advise takes; every
#      running domain is in it, in mode advise; the one with cells of 64 and 96 MiB has both
#      counted (told apart in QEMU's maps), the one with equal anonymous cells is said to be
#      left uncounted
#   b. nothing changed: no domain tainted (no monitor command), pins unchanged, no vnumad
#      metadata on any of them
#   c. vnumad --advise --snapshot FILE (this host's topology): exit 0, a plan with every domain
#   d. vnumactl snapshot --table: a row per cell of each domain with its memory per node
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl --tool python3 "reads the snapshot"
taint() { $VIRSH dominfo "$1" 2>/dev/null | grep -i 'taint' | tr -s ' '; }

U=$(define_domain uneq "$T" \
    "s|<cell id='1' cpus='1' memory='64' unit='MiB'/>|<cell id='1' cpus='1' memory='96' unit='MiB'/>|" \
    "s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>160</memory>|")
ok $? "$U defined and started, not opted in (cells of 64 and 96 MiB)"
Q=$(define_domain equal "$T")
ok $? "$Q defined and started, not opted in (two anonymous cells of 64 MiB)"
$VIRSH vcpupin "$U" 0 1 --live >/dev/null && $VIRSH vcpupin "$U" 1 0 --live >/dev/null
pins_U=$(vcpu_pins "$U") pins_Q=$(vcpu_pins "$Q")
start_vnumad
ok $? "vnumad started (no domain opted in)"

# ---- a. the snapshot ----
"$BUILD/vnumactl" --socket "$VN_SOCK" snapshot -o "$E2E_TMP/s.json" 2>"$E2E_TMP/snap.err"
ok $? "a: vnumactl snapshot -o FILE exits 0 ($(tr '\n' ' ' <"$E2E_TMP/snap.err" | head -c 300))"
python3 - "$E2E_TMP/s.json" "$U" "$Q" >"$E2E_TMP/check.out" 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
doms = {d["name"]: d for d in s["domains"]}
assert s["version"] == 1, s["version"]
for n in sys.argv[2:]:
    assert n in doms, (n, sorted(doms))
    assert doms[n]["balancer"]["mode"] == "advise", doms[n]["balancer"]
    assert not doms[n].get("busy_unmeasured"), n
u = doms[sys.argv[2]]
assert len(u["cells"]) == 2, u["cells"]
mem = sorted(int(c["pages"].get("0", 0)) * c.get("page_size", 4096) for c in u["cells"])
assert mem == [64 << 20, 96 << 20], mem
assert [len(c["vcpus"]) for c in u["cells"]] == [1, 1], u["cells"]
assert u["cells"][0]["vcpus"][0]["pinned"] == "1", u["cells"][0]["vcpus"][0]
q = doms[sys.argv[3]]
assert len(q["cells"]) == 2 and all(not c.get("pages") for c in q["cells"]), q["cells"]
print("%d domains; %s: %s" % (len(doms), sys.argv[2], mem))
PY
ok $? "a: every running domain in mode advise, busy measured; $U's cells counted, 64 and 96 MiB; $Q's left uncounted ($(tr '\n' ' ' <"$E2E_TMP/check.out" | head -c 300))"
grep -q "$Q: memory not counted: cells 0, 1: 2 of 64 MiB in 2 unnamed mappings" "$E2E_TMP/snap.err"
ok $? "a: vnumactl says which domain's memory it could not count, and why"

# ---- b. nothing changed ----
[ -z "$(taint "$U")" ] && [ -z "$(taint "$Q")" ]
ok $? "b: no domain tainted: no monitor command was sent ('$(taint "$U")' '$(taint "$Q")')"
[ "$(vcpu_pins "$U")" = "$pins_U" ] && [ "$(vcpu_pins "$Q")" = "$pins_Q" ]
ok $? "b: pins unchanged ($(vcpu_pins "$U"); $(vcpu_pins "$Q"))"
[ -z "$(live_state "$U")" ] && [ -z "$(live_state "$Q")" ]
ok $? "b: no vnumad metadata on either domain"

# ---- c. the advice ----
"$BUILD/vnumad" --advise --snapshot "$E2E_TMP/s.json" --json >"$E2E_TMP/plan.json" 2>"$E2E_TMP/plan.err"
rc=$?
python3 - "$E2E_TMP/plan.json" "$U" "$Q" >"$E2E_TMP/plan.out" 2>&1 <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
text = json.dumps(p)
for n in sys.argv[2:]:
    assert n in text, n
print(text[:200])
PY
[ $rc = 0 ] && [ -s "$E2E_TMP/plan.json" ] && grep -q . "$E2E_TMP/plan.out"
ok $? "c: vnumad --advise --snapshot FILE (this host) exits 0 with a plan naming both domains (rc $rc: $(head -c 200 "$E2E_TMP/plan.err") $(head -c 200 "$E2E_TMP/plan.out"))"

# ---- d. the per-VM view ----
vnctl snapshot --table >"$E2E_TMP/table.txt" 2>&1
rc=$?
sed 's/^/# | /' "$E2E_TMP/table.txt"
[ $rc = 0 ] && grep -Eq "^$U +advise +0 +1 " "$E2E_TMP/table.txt" &&
    grep -Eq " 0:64$| 0:96$" "$E2E_TMP/table.txt" && grep -q "0:96" "$E2E_TMP/table.txt" &&
    grep -Eq "^$Q +advise +0 +1 " "$E2E_TMP/table.txt"
ok $? "d: vnumactl snapshot --table: a row per cell with its vCPUs and memory per node"
stop_vnumad
finish
