#!/usr/bin/env python3
"""Tiered memory on the real stack (issue 31), inside a proving ground booted with a tier node
(run-ground.sh --tier-node: node TIER is a CPU-less NVDIMM that ground_tier_online makes system RAM
in a lower memory tier, as the kernel does CXL or persistent memory) by tests/e2e/ground-tiers.sh.
Runs after scenarios.sh brought libvirt up. No guest OS (spin.elf): no agent, no hints.

  27 tiers-cold-first  T-cold, one cell of CELL_MIB, its vCPU allowed on node 0 only, all its
                       memory on node 1; node 0 has ROOM_MIB of room above vnumad's reserve (a
                       process holds the rest). <balancer mode="auto" tier="cold-first"/>: what
                       fits at home goes home, the rest to the tier node, nothing stays on node 1,
                       node 0 never below its reserve, the record names the tier and why; opted
                       out, its pins are put back and its memory stays where the domain's own
                       (default) policy lets it be.
  28 tiers-warm-stays  T-warm, the same shape on node 2 (memory on node 3), mode="auto" (tier auto):
                       without hints a cell is uniformly warm, so nothing goes to the tier node.
  29 tiers-hugetlb     T-huge, one hugetlbfs-backed cell of HUGE_MIB in 2 MiB pages, its vCPU allowed
                       on node 2 only, all its pages on node 3; node 2's pool has HUGE_ROOM free
                       pages, the tier node's pool the rest and some. tier="cold-first": what fits
                       in node 2's pool goes home, the rest to the tier node's pool, in whole pages
                       (each pool's free count changes by exactly the pages the cell moved, the
                       journal's bytes are the cell's size), nothing left on node 3, the record
                       names 2 MiB pages and the tier; a few passes later nothing moved again;
                       opted out, the pins come back and the pages stay (hugetlbfs has no policy).
The topology first: vnumactl topology shows the tier node in a lower tier and as every CPU node's
lower tier. Writes scenario-27-tiers-cold-first.json, scenario-28-tiers-warm-stays.json and
scenario-29-tiers-hugetlb.json."""
import json, os, shutil, subprocess, sys, time

import probe
import scenarios as S

CELL_MIB = int(S.ARGS.get("cell_mib_tiers", 384))
ROOM_MIB = int(S.ARGS.get("room_mib", 64))
PAGE = 4096
HUGE_MIB = int(S.ARGS.get("huge_mib_tiers", 96))
HUGE_ROOM = int(S.ARGS.get("huge_room", 16))  # free 2 MiB pages in the home node's pool


def hog(node, mib):
    """a process holding mib MiB on node, touched once"""
    code = ("import mmap,sys,time\nm=mmap.mmap(-1,%d<<20)\nfor i in range(0,len(m),4096): m[i]=1\n"
            "sys.stdout.write('held\\n');sys.stdout.flush()\ntime.sleep(1e9)\n") % max(mib, 1)
    p = subprocess.Popen(["numactl", f"--membind={node}", "python3", "-c", code], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    return p


def pages_mib(st, node):
    return sum(int(c["pages"].get(str(node), 0)) for c in st["cells"]) * PAGE >> 20


def misplaced(name, home, away):
    """one cell, its vCPU allowed on `home` only, all its memory on `away`"""
    S.start_dom(name, cells=1, cell_mib=CELL_MIB, kernel="/tmp/spin.elf", cpuset=S.cpus_str([home]),
                vcpupin=S.cpus_str([away]), emulatorpin=S.cpus_str([away]))
    st = probe.state(name)
    subprocess.run(["migratepages", str(st["pid"]), "all", str(away)])
    S.virsh("vcpupin", name, "0", S.cpus_str([home]), "--live")
    S.virsh("emulatorpin", name, S.cpus_str([home]), "--live")
    return probe.state(name)


def main():
    ev, num = {}, {}
    r = subprocess.run(["bash", "-c", f". {S.LIB}; ground_tier_online"], capture_output=True, text=True)
    if r.returncode != 0:
        return S.write(27, "tiers-cold-first", False, {}, {"error": "ground_tier_online failed", "stderr": r.stderr[-2000:]})
    tier = int(r.stdout.split()[-1])
    num["tier_node"] = tier
    spin = "/tmp/spin.elf"
    shutil.copy(os.path.join(os.environ.get("GROUND_CACHE", "/ground-cache"), "spin.elf"), spin)
    os.chmod(spin, 0o644)

    S.clear_state()
    conf = os.path.join(S.R, "vnumad.conf")
    with open(conf, "w") as f:
        f.write(f"interval = 1\nevent_delay = 0.2\nsocket = {S.SOCK}\nstate_dir = {S.STATE}\nlog_level = debug\n")
    vlog = open(os.path.join(S.R, "vnumad.log"), "w")
    vn = S.start_vnumad(conf, vlog)
    topo = json.loads(subprocess.run([f"{S.BUILD}/vnumactl", "topology", "--json"], capture_output=True, text=True).stdout)
    nodes = {n["node"]: n for n in topo["nodes"]}
    ev["topology"] = {k: {x: v.get(x) for x in ("memory_tier", "lower_tier", "cpus", "latency_ns")} for k, v in nodes.items()}
    topo_ok = (tier in nodes and all(nodes[n].get("lower_tier") == tier for n in S.NODES if n != tier) and
               (nodes[tier].get("memory_tier") or 0) > (nodes[0].get("memory_tier") or 0))

    cold = misplaced("T-cold", 0, 1)
    warm = misplaced("T-warm", 2, 3)
    ev["before"] = {"T-cold": [c["pages"] for c in cold["cells"]], "T-warm": [c["pages"] for c in warm["cells"]]}
    orig_pins = {"vcpupin": cold["vcpupin"], "emulatorpin": cold["emulatorpin"]}
    floor_kib = S.RESERVE_KIB + S.RESERVE_SLACK_KIB
    hogs = {n: hog(n, S.node_free_kib(n) // 1024 - floor_kib // 1024 - ROOM_MIB) for n in (0, 2)}
    num["free_mib_after_hogs"] = {n: S.node_free_kib(n) // 1024 for n in (0, 2, tier)}
    samplers = {n: S.Sampler(n) for n in (0, 2, tier)}
    for s in samplers.values():
        s.start()

    t0 = time.monotonic()
    S.virsh("metadata", "T-cold", "urn:vnuma:balancer:1", "--key", "vnuma", "--set",
            '<balancer mode="auto" tier="cold-first"/>', "--live")
    S.virsh("metadata", "T-warm", "urn:vnuma:balancer:1", "--key", "vnuma", "--set", '<balancer mode="auto"/>', "--live")

    def settled():
        st = probe.quick("T-cold")
        on = {n: pages_mib(st, n) for n in (0, 1, tier)}
        return on if on[1] * 100 <= CELL_MIB and on[tier] >= CELL_MIB - ROOM_MIB - 48 else None
    conv = S.wait_until(240, settled, 1.0)
    num["seconds_to_settle"] = round(time.monotonic() - t0, 1)
    num["T-cold_mib_per_node"] = conv or {n: pages_mib(probe.quick("T-cold"), n) for n in (0, 1, tier)}
    S.wait_passes(5, "tiers: it holds")
    after = {n: pages_mib(probe.quick("T-cold"), n) for n in (0, 1, tier)}
    num["T-cold_mib_per_node_5_passes_later"] = after
    rec = S.record("T-cold") or {}
    cell = (rec.get("cells") or [{}])[0]
    num["T-cold_record"] = {k: cell.get(k) for k in ("target", "lower_tier", "reason", "rules", "tier")}
    moved, recs = S.acted_bytes("T-cold")
    num["T-cold_bytes_moved_mib"] = moved >> 20
    warm_st = probe.quick("T-warm")
    num["T-warm_mib_per_node"] = {n: pages_mib(warm_st, n) for n in (2, 3, tier)}
    wrec = S.record("T-warm") or {}
    wcell = (wrec.get("cells") or [{}])[0]
    num["T-warm_record"] = {k: wcell.get(k) for k in ("target", "reason", "rules", "tier")}
    for s in samplers.values():
        s.stop = True
    num["min_free_mib"] = {n: (s.min or 0) // 1024 for n, s in samplers.items()}

    # opt-out: the pins come back, the memory stays (the domain's own policy is the default one)
    S.set_mode("T-cold", "off")
    back = S.wait_until(30, lambda: (lambda st: st if st["vcpupin"] == orig_pins["vcpupin"] else None)(probe.state("T-cold")), 0.5)
    out = probe.state("T-cold")
    pol = set()
    for line in open(f"/proc/{out['pid']}/numa_maps"):
        f = line.split()
        base = int(out["cells"][0]["hva"], 16)
        if base <= int(f[0], 16) < base + out["cells"][0]["size"]:
            pol.add(f[1])
    num["opt_out"] = {"vcpupin": out["vcpupin"], "original": orig_pins["vcpupin"], "policy": sorted(pol),
                      "mib_per_node": {n: pages_mib(out, n) for n in (0, 1, tier)}}

    tier_rec = cell.get("tier") or {}
    ok27 = (topo_ok and conv is not None and after[1] * 100 <= CELL_MIB and
            after[tier] >= CELL_MIB - ROOM_MIB - 48 and num["min_free_mib"][0] * 1024 >= S.RESERVE_KIB and
            num["min_free_mib"][tier] * 1024 >= S.RESERVE_KIB and
            cell.get("lower_tier") == tier and "lower-tier" in (cell.get("rules") or []) and
            tier_rec.get("why") in ("cold-first", "settling") and moved <= (CELL_MIB << 20) * 105 // 100 and
            back is not None and pol == {"default"} and num["opt_out"]["mib_per_node"][tier] >= CELL_MIB - ROOM_MIB - 48)
    ev["journal"] = recs[-5:]
    S.write(27, "tiers-cold-first", ok27, num, ev)
    ok28 = num["T-warm_mib_per_node"][tier] == 0 and not wcell.get("tier")
    S.write(28, "tiers-warm-stays", ok28, {k: num[k] for k in ("T-warm_mib_per_node", "T-warm_record", "tier_node")},
            {"journal": [x for x in S.journal_lines() if x.get("domain") == "T-warm"][-3:]})
    for p in hogs.values():
        p.kill()
    for d in ("T-cold", "T-warm"):
        S.virsh("destroy", d, check=False)
    try:
        ok29 = tiers_hugetlb(tier)
    finally:
        S.virsh("destroy", "T-huge", check=False)
        for n in S.NODES + [tier]:
            S.set_huge(n, 0)
    S.stop_vnumad(vn)
    return ok27 and ok28 and ok29


def huge_pages_on(name, node):
    """2 MiB pages of the domain's one cell on node (numa_maps counts a hugetlb mapping's pages
    in huge pages)"""
    return sum(int(c["pages"].get(str(node), 0)) for c in probe.quick(name)["cells"])


def tiers_hugetlb(tier):
    """29: a hugetlbfs-backed cell tiered in whole 2 MiB pages (cold-first: no guest OS, no hints;
    the kernel's own tiering never scans hugetlb areas)"""
    ev, num = {}, {}
    pages = HUGE_MIB // 2
    # the cell's pages come from node 3's pool (the only one with pages when it starts); then
    # node 2's pool gets HUGE_ROOM free pages and the tier node's the rest and 16 more
    pools = {n: S.set_huge(n, pages if n == 3 else 0) for n in S.NODES + [tier]}
    S.start_dom("T-huge", cells=1, cell_mib=HUGE_MIB, kernel="/tmp/spin.elf", backing="hugetlb",
                cpuset=S.cpus_str([2]), vcpupin=S.cpus_str([3]), emulatorpin=S.cpus_str([3]))
    before = {n: huge_pages_on("T-huge", n) for n in (2, 3, tier)}
    pools[2] = S.set_huge(2, HUGE_ROOM)
    pools[tier] = S.set_huge(tier, pages - HUGE_ROOM + 16)
    num["pools"], num["pages_before"] = pools, before
    free0 = {n: S.huge_free(n) for n in (2, 3, tier)}
    num["huge_free_at_start"] = free0
    S.virsh("vcpupin", "T-huge", "0", S.cpus_str([2]), "--live")
    S.virsh("emulatorpin", "T-huge", S.cpus_str([2]), "--live")
    orig_pins = probe.state("T-huge")["vcpupin"]  # what vnumad finds when the domain opts in
    start_ok = before[3] == pages and free0 == {2: HUGE_ROOM, 3: 0, tier: pages - HUGE_ROOM + 16}
    S.virsh("metadata", "T-huge", "urn:vnuma:balancer:1", "--key", "vnuma", "--set",
            '<balancer mode="auto" tier="cold-first"/>', "--live")

    def placed():
        # every page off node 3, and the journal has the moves (the record of the pass that
        # finished them comes after the pages moved)
        on = {n: huge_pages_on("T-huge", n) for n in (2, 3, tier)}
        return on if on[3] == 0 and on[2] + on[tier] == pages and S.moved_bytes("T-huge") >= HUGE_MIB << 20 else None
    conv = S.wait_until(180, placed, 1.0)
    num["pages_placed"] = conv
    moved = S.moved_bytes("T-huge")
    S.wait_passes(3, "tiers-hugetlb: it holds")
    after = {n: huge_pages_on("T-huge", n) for n in (2, 3, tier)}
    moved_later, recs = S.moved_bytes("T-huge"), S.acted_bytes("T-huge")[1]
    free1 = {n: S.huge_free(n) for n in (2, 3, tier)}
    num.update({"pages_3_passes_later": after, "huge_free_after": free1, "bytes_moved": moved,
                "bytes_moved_3_passes_later": moved_later})
    rec = S.record("T-huge") or {}
    cell = (rec.get("cells") or [{}])[0]
    num["record"] = {k: cell.get(k) for k in ("target", "lower_tier", "reason", "rules", "page_size", "tier")}
    ev["journal"] = recs[-4:]

    S.set_mode("T-huge", "off")
    back = S.wait_until(30, lambda: (lambda s: s if s["vcpupin"] == orig_pins else None)(probe.state("T-huge")), 0.5)
    num["opt_out"] = {"vcpupin": (back or probe.state("T-huge"))["vcpupin"], "original": orig_pins,
                      "pages": {n: huge_pages_on("T-huge", n) for n in (2, 3, tier)}}
    tier_rec = cell.get("tier") or {}
    ok = (start_ok and conv is not None and after == conv and conv[2] == HUGE_ROOM and conv[tier] == pages - HUGE_ROOM
          # whole pages: each pool's free count moved by exactly the cell's pages, the journal's
          # bytes are the cell's (every page moved once)
          and free1[2] == free0[2] - conv[2] and free1[3] == free0[3] + pages and free1[tier] == free0[tier] - conv[tier]
          and moved == HUGE_MIB << 20 and moved_later == moved
          and cell.get("page_size") == 2 << 20 and cell.get("lower_tier") == tier
          and "lower-tier" in (cell.get("rules") or []) and tier_rec.get("why") in ("cold-first", "settling")
          and back is not None and num["opt_out"]["pages"] == after)
    return S.write(29, "tiers-hugetlb", ok, num, ev)


if __name__ == "__main__":
    S.watchdog()
    try:
        r = main()
    except Exception:
        import traceback
        traceback.print_exc()
        S.write(27, "tiers-cold-first", False, {}, {"exception": traceback.format_exc()})
        r = False
    sys.exit(0 if r else 1)
