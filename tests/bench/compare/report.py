#!/usr/bin/env python3
"""Table (markdown, stdout) and plot (SVG, no third-party modules) of tests/bench/compare.sh.

  report.py RESULTS/compare.json OUT.svg
  report.py RESULTS/compare.json           (tests/bench/hotset.sh: a table only)
"""
import json, sys

PAGE = 4096
MIB = 1 << 20
COLORS = {"none": "#7f7f7f", "kernel": "#1f77b4", "numad": "#ff7f0e", "vnumad": "#2ca02c"}
LABELS = {"none": "no balancer", "kernel": "kernel NUMA balancing (numa_balancing=1)",
          "numad": "numad", "vnumad": "vnumad"}


def summarize(name, r, cfg):
    s = r.get("samples") or []
    if not s:
        return None
    last = cfg["last_node"]
    loc = [x["locality"] for x in s]
    t95 = next((x["t"] for x in s if x["locality"] >= 0.95), None)
    t99 = next((x["t"] for x in s if x["locality"] >= 0.99), None)
    held = t95 is not None and all(x["locality"] >= 0.95 for x in s if x["t"] >= t95)
    # first change of any kind: guest pages left their node, or a vCPU's affinity changed
    s0 = r["s0"]

    def cells_on_last(x):
        return sum(c.get(str(last), c.get(last, 0)) for d in x["doms"].values() for c in d["cells"])

    def affinity(x):
        return [v["allowed"] for d in sorted(x["doms"]) for v in x["doms"][d]["vcpus"]]
    on0 = cells_on_last(s0)
    first = next((x["t"] for x in s if cells_on_last(x) < on0 - 256 or affinity(x) != affinity(s0)), None)
    v0, v1 = s0["vmstat"], s[-1]["vmstat"]
    dv = {k: v1.get(k, 0) - v0.get(k, 0) for k in v1}
    guest_moved = (on0 - cells_on_last(s[-1])) * PAGE
    total0 = sum(d["total"].get(str(last), d["total"].get(last, 0)) for d in s0["doms"].values())
    total1 = sum(d["total"].get(str(last), d["total"].get(last, 0)) for d in s[-1]["doms"].values())
    vnodes = sorted({v["node"] for d in s[-1]["doms"].values() for v in d["vcpus"]})
    allowed = sorted({v["allowed"] for d in s[-1]["doms"].values() for v in d["vcpus"]})
    # the minimum: every guest page on the last node at t=0 has to leave it (no vCPU may run
    # there); moved more than once: migrations beyond the pages that left (vmstat), and for
    # vnumad the bytes its journal moved for a cell toward a target it later left
    minimum = on0 * PAGE
    extra_vmstat = max(0, dv.get("pgmigrate_success", 0) * PAGE - guest_moved)
    twice_journal = None
    acting = None
    if name == "vnumad":
        per_cell = {}
        # per domain: passes that decided and acted ("acted") and passes that only moved
        # more memory toward the same targets ("moving")
        acting = {}
        for rec in r.get("journal") or []:
            if rec.get("action") not in ("acted", "moving"):
                continue
            a = acting.setdefault(rec["domain"], {"acted": 0, "moving": 0})
            a[rec["action"]] += 1
            for c in rec.get("cells", []):
                if c.get("bytes_moved"):
                    per_cell.setdefault((rec["domain"], c["cell"]), []).append((c.get("target"), c["bytes_moved"]))
        twice_journal = sum(b for moves in per_cell.values() for t, b in moves if t != moves[-1][0])
    return {"name": name, "t_end": s[-1]["t"], "t99": t99, "minimum": minimum, "extra_vmstat": extra_vmstat,
            "twice_journal": twice_journal, "acting": acting, "loc0": s0["locality"], "loc_end": sum(loc[-5:]) / len(loc[-5:]),
            "loc_max": max(loc), "t95": t95, "held": held, "first": first, "guest_moved": guest_moved,
            "qemu_left_last": (total0 - total1) * PAGE, "numa_pages_migrated": dv.get("numa_pages_migrated", 0) * PAGE,
            "pgmigrate_success": dv.get("pgmigrate_success", 0) * PAGE, "hint_faults": dv.get("numa_hint_faults", 0),
            "hint_faults_local": dv.get("numa_hint_faults_local", 0), "pte_updates": dv.get("numa_pte_updates", 0),
            "cpu": r.get("balancer_cpu_s"), "vcpu_nodes": vnodes, "allowed": allowed, "guest_ready_s": r.get("guest_ready_s")}


def mib(b):
    return f"{b / MIB:.0f} MiB"


def table(data):
    cfg = data["config"]
    rows = []
    for name in ("none", "kernel", "numad", "vnumad"):
        r = data["runs"].get(name)
        if not r:
            continue
        if "error" in r and not r.get("samples"):
            rows.append(f"| {LABELS[name]} | run failed: {r['error'].strip().splitlines()[-1][:300]} | | | | | | | | | |")
            continue
        m = summarize(name, r, cfg)
        T = int(round(m["t_end"]))
        t95 = (f"{m['t95']:.0f} s" + ("" if m["held"] else " (not held)")) if m["t95"] is not None else f"not within {T} s"
        t99 = f"{m['t99']:.0f} s" if m["t99"] is not None else f"not within {T} s"
        ratio = f"{m['pgmigrate_success'] / m['minimum']:.2f} x" if m["minimum"] else "-"
        twice = mib(m["extra_vmstat"]) + (f" (journal: {mib(m['twice_journal'])})" if m["twice_journal"] is not None else "")
        first = f"{m['first']:.0f} s" if m["first"] is not None else f"did not act within {T} s"
        if m["acting"]:
            first += " (journal: " + ", ".join(f"{d} {a['acted']} acting + {a['moving']} moving passes"
                                               for d, a in sorted(m["acting"].items())) + ")"
        if name == "kernel":
            cpu = (f"not separable (runs in the vCPU threads); {m['hint_faults']} hint faults "
                   f"({m['hint_faults_local']} local), {m['pte_updates']} PTE updates")
        elif name == "none":
            cpu = "-"
        else:
            cpu = f"{m['cpu']:.2f} s" if m["cpu"] is not None else "?"
        moved = (f"{mib(m['guest_moved'])} guest RAM off node {cfg['last_node']} (numa_maps); "
                 f"vmstat: {mib(m['pgmigrate_success'])} pgmigrate_success, {mib(m['numa_pages_migrated'])} numa_pages_migrated")
        rows.append(f"| {LABELS[name]} | {m['loc0'] * 100:.0f}% -> {m['loc_end'] * 100:.0f}% (max {m['loc_max'] * 100:.0f}%) "
                    f"| {t95} | {t99} | {first} | {moved} | {ratio} of {mib(m['minimum'])} | {twice} | {m['hint_faults']} "
                    f"| {cpu} | {','.join(map(str, m['vcpu_nodes']))} |")
    head = ("| balancer | locality start -> end (last 5 s) | time to 95% | time to 99% | first action | bytes migrated "
            "| migrated / minimum | moved more than once | hinting faults | balancer CPU time | vCPUs end on nodes |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")
    return head + "\n" + "\n".join(rows)


def svg(data, path):
    W, H, L, Rm, T, B = 760, 380, 60, 20, 30, 95
    pw, ph = W - L - Rm, H - T - B
    secs = max((x["t"] for r in data["runs"].values() for x in r.get("samples") or []), default=60)
    xmax = max(10, int((secs + 9) // 10 * 10))

    def X(t):
        return L + pw * t / xmax

    def Y(v):
        return T + ph * (1 - v)
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
         f'font-family="sans-serif" font-size="12">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="14">Locality after a misplaced start '
         f'(vCPU-activity weighted; proving ground, {data["config"]["nodes"]} nodes)</text>']
    for i in range(0, 11, 2):
        v = i / 10
        o.append(f'<line x1="{L}" y1="{Y(v):.1f}" x2="{L + pw}" y2="{Y(v):.1f}" stroke="#ddd"/>')
        o.append(f'<text x="{L - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{i * 10}%</text>')
    step = 10 if xmax <= 120 else 20
    for t in range(0, xmax + 1, step):
        o.append(f'<line x1="{X(t):.1f}" y1="{T + ph}" x2="{X(t):.1f}" y2="{T + ph + 4}" stroke="black"/>')
        o.append(f'<text x="{X(t):.1f}" y="{T + ph + 17}" text-anchor="middle">{t}</text>')
    o.append(f'<text x="{L + pw / 2}" y="{T + ph + 33}" text-anchor="middle">seconds after the balancer started</text>')
    o.append(f'<line x1="{L}" y1="{Y(0.95):.1f}" x2="{L + pw}" y2="{Y(0.95):.1f}" stroke="#c00" stroke-dasharray="4 3"/>')
    o.append(f'<text x="{L + pw - 4}" y="{Y(0.95) - 4:.1f}" text-anchor="end" fill="#c00">95%</text>')
    o.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    lx, ly = L, H - 42
    for i, name in enumerate(("none", "kernel", "numad", "vnumad")):
        r = data["runs"].get(name)
        if not r or not r.get("samples"):
            continue
        pts = [(0.0, r["s0"]["locality"])] + [(x["t"], x["locality"]) for x in r["samples"]]
        d = " ".join(f"{X(t):.1f},{Y(v):.1f}" for t, v in pts)
        dash = ' stroke-dasharray="6 3"' if name == "none" else ""
        o.append(f'<polyline points="{d}" fill="none" stroke="{COLORS[name]}" stroke-width="2"{dash}/>')
        cx, cy = lx + (i % 2) * 370, ly + (i // 2) * 18
        o.append(f'<line x1="{cx}" y1="{cy}" x2="{cx + 24}" y2="{cy}" stroke="{COLORS[name]}" stroke-width="2"{dash}/>')
        o.append(f'<text x="{cx + 30}" y="{cy + 4}">{LABELS[name]}</text>')
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")


def dom_locality(dd):
    """share of a domain's resident cell pages on the node of the CPU its cell's vCPU ran on"""
    node = {v["cell"]: v["node"] for v in dd["vcpus"]}
    on = tot = 0
    for k, c in enumerate(dd["cells"]):
        tot += sum(c.values())
        on += c.get(str(node.get(k)), c.get(node.get(k), 0))
    return on / tot if tot else 0.0


def hotset_table(data):
    """tests/bench/hotset.sh: per run, the opted-in domain's hot set and all of its memory"""
    cfg = data["config"]
    head = ("| run | domain | hot set local start -> end | hot set 95% local at | migrated before that | "
            "domain memory 95% / 99% local at | migrated in all | acting passes with hot ranges first (journal) | acting passes |\n"
            "|---|---|---|---|---|---|---|---|---|")
    rows = []
    for name in ("agent", "plain"):
        r = data["runs"].get(name)
        if not r:
            continue
        d = cfg["optin"][name][0]
        s = r.get("samples") or []
        if not s:
            rows.append(f"| {name} | {d} | run failed: {r.get('error', '?').strip().splitlines()[-1][:300]} | | | | | | |")
            continue
        s0 = r["s0"]
        mig0 = s0["vmstat"].get("pgmigrate_success", 0)

        def mig(x):
            return (x["vmstat"].get("pgmigrate_success", 0) - mig0) * PAGE
        h0 = s0["doms"][d].get("hot_local") or 0
        h1 = s[-1]["doms"][d].get("hot_local") or 0
        th = next((x for x in s if (x["doms"][d].get("hot_local") or 0) >= 0.95), None)
        t95 = next((x["t"] for x in s if dom_locality(x["doms"][d]) >= 0.95), None)
        t99 = next((x["t"] for x in s if dom_locality(x["doms"][d]) >= 0.99), None)
        ranges, passes = 0, 0
        for rec in r.get("journal") or []:
            if rec.get("domain") != d or rec.get("action") != "acted":
                continue
            passes += 1
            ranges += any("hot-first" in (c.get("rules") or []) for c in rec.get("cells", []))
        T = int(round(s[-1]["t"]))
        at = f"{th['t']:.0f} s" if th else f"not within {T} s"
        before = mib(mig(th)) if th else "-"
        both = " / ".join(f"{t:.0f} s" if t is not None else f"not within {T} s" for t in (t95, t99))
        rows.append(f"| {name} | {d} | {h0 * 100:.0f}% -> {h1 * 100:.0f}% | {at} | {before} | {both} "
                    f"| {mib(mig(s[-1]))} | {ranges} | {passes} |")
    return (f"Hot set {cfg['hot_mib']} MiB and cold filler {cfg['cold_mib']} MiB in guest node 0's cell "
            f"of {cfg['cell_mib']} MiB; {cfg['seconds']} s per run; vnumad {cfg.get('start', 'cold')} "
            f"({'running in advise mode before t=0' if cfg.get('start') == 'warm' else 'started at t=0'}).\n\n"
            + head + "\n" + "\n".join(rows))


def main():
    data = json.load(open(sys.argv[1]))
    if data["config"].get("hot_mib"):
        print(hotset_table(data))
        return
    print(table(data))
    if len(sys.argv) > 2:
        svg(data, sys.argv[2])
        print(f"\n(plot: {sys.argv[2]})")


if __name__ == "__main__":
    main()
