#!/usr/bin/env python3
"""Staggered opt-ins (issue 56), for the benchmark and the issue's work: GROUND_SUITE=stagger
tests/e2e/ground.sh (STAGGER_ARGS="gap=SECONDS order=A:B:C:I"), not yet in make check. Busy
1-vCPU cells of three domains, A (1 cell), B (1 cell) and C (2 cells), and an idle domain I
(2 cells), all with their memory on node M (2 CPUs) and their vCPUs and emulator free to run on
every CPU, opt in one by one with `gap` seconds between them. Once no record has been written
for 12 passes: how many busy cells have their memory off M (the minimum is 2: two busy cells
fill M), and every record of each domain (scenario-40-stagger.json)."""
import json, os, shutil, subprocess, sys, time
import probe
import scenarios as S

M = 1


def off_m(st):
    """per cell: share of its pages not on M"""
    out = []
    for c in st["cells"]:
        tot = sum(c["pages"].values())
        out.append(round((tot - c["pages"].get(str(M), 0)) / tot, 2) if tot else None)
    return out


def main():
    gap = float(S.ARGS.get("gap", "3"))
    spin = "/tmp/spin.elf"
    shutil.copy(os.path.join(os.environ.get("GROUND_CACHE", "/ground-cache"), "spin.elf"), spin)
    os.chmod(spin, 0o644)
    S.clear_state()
    conf = os.path.join(S.R, "vnumad-stagger.conf")
    with open(conf, "w") as f:
        f.write(f"interval = 1\nevent_delay = 0.2\nsocket = {S.SOCK}\nstate_dir = {S.STATE}\nlog_level = debug\n")
    vlog = open(os.path.join(S.R, "vnumad-stagger.log"), "w")
    vn = S.start_vnumad(conf, vlog)
    mcpus = S.cpus_str([M])
    allc = S.cpus_str(S.NODES)
    doms = [("A", 1, spin), ("B", 1, spin), ("C", 2, spin), ("I", 2, "")]
    for name, cells, k in doms:
        kw = dict(cells=cells, cell_mib=48, vcpus_per_cell=1, vcpupin=mcpus, emulatorpin=mcpus)
        if k:
            kw["kernel"] = k
        S.start_dom(name, **kw)
    for name, cells, k in doms:
        st = probe.state(name)
        subprocess.run(["migratepages", str(st["pid"]), "all", str(M)])
        for v in st["vcpus"]:
            S.virsh("vcpupin", name, str(v["vcpu"]), allc, "--live")
        S.virsh("emulatorpin", name, allc, "--live")
    time.sleep(5)
    before = {d: off_m(probe.state(d)) for d, _, _ in doms}
    order = S.ARGS.get("order", "A:B:C:I").split(":")
    t0 = time.monotonic()
    for i, d in enumerate(order):
        if i:
            time.sleep(gap)
        S.set_mode(d, "auto")
        S.log(f"opted in {d} at {time.monotonic() - t0:.1f}s")

    def quiet():
        recs = S.journal_lines()
        last = max([r["pass"] for r in recs] or [0])
        p = S.cur_pass() or 0
        return p if p >= last + 12 else None
    S.wait_until(180, quiet, 1.0)
    after = {d: off_m(probe.state(d)) for d, _, _ in doms}
    recs = S.journal_lines()
    hist = {}
    for r in recs:
        hist.setdefault(r["domain"], []).append(
            {"pass": r["pass"], "action": r["action"], "bytes": r.get("bytes_moved"),
             "cells": [(c["cell"], c.get("node"), c.get("target"), c.get("reason"), c.get("rules"), c.get("busy_vcpus"), c.get("bytes_planned")) for c in r["cells"]]})
    busy_moved = sum(1 for d in ("A", "B", "C") for s in after[d] if s and s > 0.5)
    num = {"gap": gap, "order": order, "before_off_M": before, "after_off_M": after,
           "busy_cells_moved": busy_moved, "minimum": 2}
    olines = [l for l in open(os.path.join(S.R, "vnumad-stagger.log"), errors="replace").read().splitlines() if "Other load" in l]
    ev = {"history": hist, "other_load": olines[-40:]}
    for d, _, _ in doms:
        S.virsh("destroy", d, check=False)
    S.stop_vnumad(vn)
    return S.write(40, "stagger", busy_moved <= 2, num, ev)


if __name__ == "__main__":
    S.watchdog()
    sys.exit(0 if main() else 1)
