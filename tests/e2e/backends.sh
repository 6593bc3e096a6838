#!/bin/bash
# End-to-end test of vnumad on the memory backends QEMU really runs (issue 12), against the
# real libvirtd and QEMU of this machine (TCG, and type='kvm' with VN_ACCEL=kvm):
#   huge    memory-backend-file on hugetlbfs, 2 MiB pages: sampled and shown in 2 MiB pages,
#           the reserve pool's pages counted; no policy set on it (hugetlbfs has no shared
#           policy: none recorded either)
#   shm     memory-backend-memfd, shared (vhost-user, virtiofs): cell 0 given a policy of the
#           operator's own (interleave:0) before vnumad sees it; vnumad makes the target
#           each cell's preferred node (never bind) and, on opt-out, puts back exactly what
#           was there: interleave:0 on cell 0, the default on cell 1
#   dimm    a pc-dimm of 64 MiB in cell 1: counted with the cell's boot RAM; a second one
#           hotplugged into cell 0 is found (libvirt's DEVICE_ADDED) and counted there
#   memonly a third cell of 64 MiB without CPUs (memory-only, as CXL memory shows in a guest):
#           sampled and shown with no vCPU
#   locked  <memoryBacking><locked/>: recognised from the XML, its memory never moved
#           (the ground shows its vCPUs going to it instead), shown as pinned in status and
#           records
# Moves between nodes need more than this machine's one node: tests/e2e/ground.sh.
# Prints "ok N - ..." lines and "N passed, N failed"; 77 when libvirtd cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh
policy=tests/e2e/backend-policy.py

e2e_preamble --built vnumad --built vnumactl --tool python3 "reads numa_maps, sets a policy"

# ---- hugetlbfs: a mount (systemd's dev-hugepages.mount on an operator's host; tests/services.sh
# mounts it here before libvirtd starts) and 2 MiB pages for two 64 MiB cells
grep -q ' hugetlbfs ' /proc/mounts
ok $? "a hugetlbfs is mounted ($(awk '$3 == "hugetlbfs" {print $2}' /proc/mounts | head -n 1))"
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
was=$(cat $hp/nr_hugepages)
need=$(($(cat $hp/free_hugepages) < 64 ? 64 - $(cat $hp/free_hugepages) : 0))
if [ "$need" -gt 0 ]; then
    e2e_at_exit "echo $was >$hp/nr_hugepages"
    echo $((was + need)) >$hp/nr_hugepages
fi
[ "$(cat $hp/free_hugepages)" -ge 64 ]
ok $? "64 free 2 MiB huge pages (nr_hugepages $was -> $(cat $hp/nr_hugepages))"

start_vnumad "metrics_file = $E2E_TMP/metrics.prom"
ok $? "vnumad started"

huge_backing="<hugepages><page size='2048' unit='KiB'/></hugepages><allocation mode='immediate'/>"
if ! huge=$(define_domain huge tests/data/domains/e2e-two-cell.xml.in "$(optin_sed 'mode="auto"')" \
    "s|<allocation mode='immediate'/>|$huge_backing|" 2>"$E2E_TMP/huge.err"); then
    # a libvirtd started before hugetlbfs was mounted does not know it: start it again
    if grep -q hugetlbfs "$E2E_TMP/huge.err"; then
        echo "# libvirtd did not know the hugetlbfs mount: restarting it"
        kill_libvirtd >/dev/null && start_libvirtd
        huge=$(define_domain huge2 tests/data/domains/e2e-two-cell.xml.in \
            "$(optin_sed 'mode="auto"')" "s|<allocation mode='immediate'/>|$huge_backing|")
    fi
fi
ok $? "hugetlbfs-backed domain started ($huge) $(tail -n 1 "$E2E_TMP/huge.err" 2>/dev/null)"
shm=$(define_domain shm tests/data/domains/e2e-two-cell.xml.in \
    "s|<allocation mode='immediate'/>|<source type='memfd'/><access mode='shared'/><allocation mode='immediate'/>|")
ok $? "memfd-shared domain started, not opted in ($shm)"
dimm=$(define_domain dimm tests/data/domains/e2e-two-cell.xml.in "$(optin_sed 'mode="auto"')" \
    "s|<memory unit='MiB'>128</memory>|<maxMemory slots='4' unit='MiB'>1024</maxMemory><memory unit='MiB'>192</memory>|" \
    "s|</os>|</os><features><acpi/></features>|" \
    "s|<memballoon model='none'/>|<memballoon model='none'/><memory model='dimm'><target><size unit='MiB'>64</size><node>1</node></target></memory>|")
ok $? "domain with a 64 MiB pc-dimm in cell 1 started ($dimm)"
memonly=$(define_domain memonly tests/data/domains/e2e-two-cell.xml.in "$(optin_sed 'mode="auto"')" \
    "s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>192</memory>|" \
    "s|</numa>|<cell id='2' memory='64' unit='MiB'/></numa>|")
ok $? "domain with a memory-only third cell started ($memonly)"
# QEMU mlock()s all of a locked guest: libvirtd raises its RLIMIT_MEMLOCK, which needs
# CAP_SYS_RESOURCE. Where root lacks it (this machine's sandbox: 8 MiB and no way up) such a
# domain cannot start at all; the proving ground (scenario 12) has it and runs the case there.
locked=""
if ! grep -q "^CapEff:" /proc/self/status ||
    (( (0x$(awk '/^CapEff:/ {print $2}' /proc/self/status) >> 24) & 1 )); then
    locked=$(define_domain locked tests/data/domains/e2e-two-cell.xml.in "$(optin_sed 'mode="auto"')" \
        "s|<allocation mode='immediate'/>|<locked/><allocation mode='immediate'/>|")
    ok $? "locked-memory domain started ($locked)"
else
    note "locked: not here, root has no CAP_SYS_RESOURCE to raise RLIMIT_MEMLOCK ($(ulimit -Hl) KiB): no locked guest can start; tests/e2e/ground.sh scenario 12 runs it"
fi
[ $fail -eq 0 ] || finish

# block_hva DOM NAME: the host address of QEMU's RAM block NAME ("ram-nodeN"): HMP gpa2hva of
# the cell's first guest-physical address (the cells of these 64 MiB guests follow each other
# from 0); "" when QEMU names another block there
block_hva() {
    local gpa
    gpa=$(printf '0x%x' $((${2#ram-node} * (64 << 20))))
    $VIRSH qemu-monitor-command "$1" --hmp "gpa2hva $gpa" 2>/dev/null | tr -d '\r' |
        sed -n "s/^Host virtual address for $gpa ($2) is \(0x[0-9a-f]*\)$/\1/p"
}
# pol DOM CELL: the policy numa_maps shows for the backend of CELL ("default", "prefer:0", ...)
pol() { $policy show "$(qemu_pid "$1")" "$(block_hva "$1" "ram-node$2")" 2>/dev/null; }

# status_json: vnumactl status --json into $E2E_TMP/status.json
status_json() { vnctl status --json >"$E2E_TMP/status.json" 2>/dev/null; }
# cells_are DOM PYTHON-EXPR: every cell c of DOM in the status satisfies EXPR
cells_are() {
    status_json && python3 - "$E2E_TMP/status.json" "$1" "$2" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
d = next((d for d in st["domains"] if d["name"] == sys.argv[2]), None)
ok = d is not None and len(d.get("cells", [])) == 2 and all(eval(sys.argv[3], {}, {"c": c}) for c in d["cells"])
sys.exit(0 if ok else 1)
PY
}

# ---- huge
wait_for 30 cells_are "$huge" 'c["page_size"] == 2 << 20 and c["memory"].get("0") == 64 << 20'
ok $? "huge: status shows each cell as 64 MiB on node 0 in 2 MiB pages ($(python3 -c 'import json,sys; d=[d for d in json.load(open(sys.argv[1]))["domains"] if d["name"]==sys.argv[2]]; print([(c["page_size"], c["memory"]) for c in d[0]["cells"]] if d else "-")' "$E2E_TMP/status.json" "$huge"))"
log_has "Guest cell 0 of '$huge' is on hugetlbfs, 2048 KiB pages"
ok $? "huge: vnumad says the cell is on hugetlbfs"
pid=$(qemu_pid "$huge")
[ "$($policy pagesize "$pid" "$(block_hva "$huge" ram-node0)")" = 2048 ] && [ "$(pol "$huge" 0)" = default ]
ok $? "huge: the kernel agrees (numa_maps: 2048 kB pages, policy $(pol "$huge" 0))"
wait_passes 3
rec() { grep -F "\"domain\":\"$1\"" "$VN_JOURNAL" | tail -n 1; }
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if all(c.get("page_size")==2<<20 for c in r["cells"]) else 1)' "$(rec "$huge")"
ok $? "huge: its decision record gives the page size of each cell"
! live_state "$huge" | grep -q '<memfd'
ok $? "huge: no policy recorded for the hugetlbfs backend (it has no shared policy)"

# ---- shm: the operator's own policy on cell 0, then opt in
$policy set "$(qemu_pid "$shm")" "$(block_hva "$shm" ram-node0)" interleave 0
[ "$(pol "$shm" 0)" = interleave:0 ] && [ "$(pol "$shm" 1)" = default ]
ok $? "shm: cell 0's backend has the operator's interleave:0, cell 1's the default"
set_meta "$shm" '<balancer mode="auto"/>' >/dev/null
prefer_both() { [ "$(pol "$shm" 0)" = prefer:0 ] && [ "$(pol "$shm" 1)" = prefer:0 ]; }
wait_for 30 prefer_both
ok $? "shm: opted in, both backends get the target as preferred node, not bind ($(pol "$shm" 0), $(pol "$shm" 1))"
live_state "$shm" | grep -q '<memfd cell="0" policy="interleave" nodes="0"/>' &&
    live_state "$shm" | grep -q '<memfd cell="1" policy="default"/>'
ok $? "shm: the backends' own policies are saved in vnumad's <state> ($(live_state "$shm" | grep -o '<memfd[^>]*>' | paste -sd' '))"
$VIRSH metadata "$shm" urn:vnuma:balancer:1 --remove --live >/dev/null
back() { [ "$(pol "$shm" 0)" = interleave:0 ] && [ "$(pol "$shm" 1)" = default ]; }
wait_for 30 back
ok $? "shm: opted out, exactly the old policies are back ($(pol "$shm" 0), $(pol "$shm" 1))"
# again, and this time vnumad is killed (-9) while the domain is balanced, the domain opts out
# while it is down, and a new vnumad puts the policies back from vnumad's <state> alone
set_meta "$shm" '<balancer mode="auto"/>' >/dev/null
wait_for 30 prefer_both
ok $? "shm: opted in again, preferred node set again ($(pol "$shm" 0))"
kill -KILL "$VN_PID"
wait "$VN_PID" 2>/dev/null
$VIRSH metadata "$shm" urn:vnuma:balancer:1 --remove --live >/dev/null
start_vnumad "metrics_file = $E2E_TMP/metrics.prom"
ok $? "vnumad killed with SIGKILL, the domain opted out meanwhile, a new vnumad started"
wait_for 30 back
ok $? "shm: the new vnumad puts exactly the old policies back ($(pol "$shm" 0), $(pol "$shm" 1))"

# ---- dimm: boot RAM and memory devices of a cell are counted together
mem_of() { python3 -c 'import json,sys; d=[d for d in json.load(open(sys.argv[1]))["domains"] if d["name"]==sys.argv[2]]; print([sum(c["memory"].values()) >> 20 for c in d[0]["cells"]] if d else "-")' "$E2E_TMP/status.json" "$1"; }
wait_for 30 cells_are "$dimm" 'sum(c["memory"].values()) == (128 if c["cell"] == 1 else 64) << 20'
ok $? "dimm: cell 1 counts its 64 MiB of boot RAM and the 64 MiB pc-dimm, cell 0 its 64 MiB (MiB: $(mem_of "$dimm"))"
echo "<memory model='dimm'><target><size unit='MiB'>32</size><node>0</node></target></memory>" >"$E2E_TMP/dimm2.xml"
$VIRSH attach-device "$dimm" "$E2E_TMP/dimm2.xml" --live >"$E2E_TMP/attach.out" 2>&1
ok $? "dimm: a 32 MiB pc-dimm hotplugged into cell 0 $(tail -n 1 "$E2E_TMP/attach.out")"
wait_for 30 cells_are "$dimm" 'sum(c["memory"].values()) == (128 if c["cell"] == 1 else 96) << 20'
ok $? "dimm: vnumad finds the hotplugged memory and counts it in cell 0 (MiB: $(mem_of "$dimm"))"
log_has "Memory device (mem)?dimm1 of '$dimm' plugged"
ok $? "dimm: it says why it looked again (libvirt's DEVICE_ADDED)"

# ---- memonly: the cell without vCPUs is sampled like the others
cells3() {
    status_json && python3 - "$E2E_TMP/status.json" "$memonly" <<'PY'
import json, sys
d = [d for d in json.load(open(sys.argv[1]))["domains"] if d["name"] == sys.argv[2]]
cells = {c["cell"]: c for c in (d[0]["cells"] if d else [])}
ok = (sorted(cells) == [0, 1, 2] and sum(cells[2]["memory"].values()) == 64 << 20
      and sum(cells[2]["vcpus"].values()) == 0 and all(sum(cells[k]["vcpus"].values()) == 1 for k in (0, 1)))
sys.exit(0 if ok else 1)
PY
}
wait_for 30 cells3
ok $? "memonly: status shows cells 0, 1 and the memory-only cell 2 (64 MiB, no vCPU)"
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if sorted(c["cell"] for c in r["cells"]) == [0, 1, 2] else 1)' "$(rec "$memonly")"
ok $? "memonly: its decision record has the memory-only cell"

# ---- locked
[ -n "$locked" ] && {
wait_for 30 cells_are "$locked" 'c["memory_pinned"] == "locked" and c["memory"].get("0", 0) > 0'
ok $? "locked: status shows the memory as pinned (locked)"
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(0 if all(c.get("memory_pinned")=="locked" for c in r["cells"]) else 1)' "$(rec "$locked")"
ok $? "locked: its decision record says why its memory stays"
}

vnumad_alive
ok $? "vnumad is still running"
finish
