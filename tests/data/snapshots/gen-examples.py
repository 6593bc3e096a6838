#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write one example snapshot (docs/snapshot-format.md) per host topology.

For each tests/data/topologies/NAME.xml this writes tests/data/snapshots/NAME.json
with 3-5 domains: an "auto" domain whose two cells run on one node while their
memory sits mostly on another (misplaced), an "advise" domain, a domain that is
not opted in, and (with two or more nodes) one whose memory is bound strictly to
one node. The node numbers, CPU lists and memory sizes come from
lstopo-no-graphics and hwloc-calc, read the way host/topology.c reads them:
only allowed nodes and PUs, and each PU belongs to the most local node that
contains it (smallest cpuset, normal memory before MCDRAM/HBM, lowest number).

Usage: gen-examples.py [TOPOLOGY.xml ...]   (default: every topology)
Deterministic: running it again produces the same files. Python 3 stdlib only.
"""
import json
import os
import re
import subprocess
import sys
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
TOPODIR = os.path.join(HERE, "..", "topologies")
PAGE = 4096


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def parse_list(text):
    """'0,2,5' -> [0, 2, 5] (hwloc-calc output, one number per item)."""
    text = text.strip()
    return [int(x) for x in text.split(",")] if text else []


def cpulist(cpus):
    """[0,1,2,5] -> '0-2,5' (the Linux list format)."""
    out, cpus = [], sorted(cpus)
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def load_topology(path):
    """Nodes as [{'os', 'cpus', 'mem', 'special'}] sorted by os, and all allowed CPUs."""
    nodes = []
    numa_re = re.compile(r"NUMANode(?:\((\w+)\))? L#\d+ \(P#(\d+) local=(\d+)KB")
    for line in run("lstopo-no-graphics", "-i", path, "--only", "numa", "-v").splitlines():
        m = numa_re.search(line)
        if m:
            nodes.append({"os": int(m.group(2)), "mem": int(m.group(3)) * 1024,
                          "special": m.group(1) is not None, "near": []})
    for n in nodes:
        n["near"] = parse_list(run("hwloc-calc", "-i", path, "--physical", "--intersect", "pu",
                                   "numa:%d" % n["os"]))
    all_cpus = parse_list(run("hwloc-calc", "-i", path, "--physical", "--intersect", "pu", "all"))
    for n in nodes:
        n["cpus"] = []
    for cpu in all_cpus:
        owners = [n for n in nodes if cpu in n["near"]]
        if owners:
            best = min(owners, key=lambda n: (len(n["near"]), n["special"], n["os"]))
            best["cpus"].append(cpu)
    nodes.sort(key=lambda n: n["os"])
    return nodes, all_cpus


def compact(obj, indent=0, width=100):
    """JSON with small objects and arrays on one line, big ones spread out."""
    one = json.dumps(obj, separators=(", ", ": "), ensure_ascii=False)
    if len(one) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return one
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(obj, dict):
        items = ["%s%s: %s" % (inner, json.dumps(k), compact(v, indent + 2, width))
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + compact(v, indent + 2, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


class Builder:
    """Builds the domains, keeping page totals per node within each node's memory."""

    def __init__(self, name, nodes, all_cpus):
        self.name, self.nodes, self.all_cpus = name, nodes, all_cpus
        self.used = {n["os"]: 0 for n in nodes}
        self.next_vcpu = 0

    def pages(self, wanted):
        """{'node': pages} of 4 KiB pages, scaled down to fit in a quarter of small nodes."""
        out = {}
        for os_, pages in wanted.items():
            node = next(n for n in self.nodes if n["os"] == os_)
            pages = min(pages, node["mem"] // PAGE // 4)
            self.used[os_] += pages
            out[str(os_)] = pages
        return out

    def vcpus(self, first_id, count, pinned, busy, allowed=None):
        out = []
        for i in range(count):
            v = {"id": first_id + i, "busy": busy[i % len(busy)],
                 "allowed": cpulist(allowed or self.all_cpus)}
            if pinned is not None:
                v["pinned"] = cpulist(pinned)
                v["cpu"] = sorted(pinned)[i % len(pinned)]
            out.append(v)
        return out

    def uuid(self, domain):
        return str(uuid.uuid5(uuid.NAMESPACE_URL, "vnuma-example:%s:%s" % (self.name, domain)))


def build(name, nodes, all_cpus):
    b = Builder(name, nodes, all_cpus)
    cpu_nodes = [n for n in nodes if n["cpus"]]
    home = cpu_nodes[0]
    # The node the misplaced memory sits on: another node with CPUs if there is
    # one (the memory could follow or the vCPUs could), else any other node.
    others = [n for n in cpu_nodes if n is not home] + \
        [n for n in nodes if n is not home and not n["cpus"]]
    away = others[0] if others else home
    last = cpu_nodes[-1]
    multi = len(nodes) >= 2
    domains = []

    # 1. auto, two cells, vCPUs pinned on `home`, memory mostly on `away`.
    web_cells = []
    for cell in range(2):
        pages = {away["os"]: 41000 - 3000 * cell, home["os"]: 5200 + 800 * cell} if multi \
            else {home["os"]: 46000 - 3000 * cell}
        c = {"id": cell, "pages": b.pages(pages), "last_candidate": home["os"] if cell == 0 else -1,
             "vcpus": b.vcpus(2 * cell, 2, home["cpus"][:4], [0.82, 0.64] if cell == 0
                              else [0.71, 0.12])}
        web_cells.append(c)
    web_cells[0]["hints"] = {
        "hot_ranges": [
            {"gpa": 1 << 30, "length": 64 << 20, "heat": 0.62},
            {"gpa": 0, "length": 128 << 20, "heat": 0.91, "shared": False},
            {"gpa": 256 << 20, "length": 32 << 20, "heat": 0.48, "shared": True},
        ],
        "shares": [{"cell": 1, "weight": 0.35}],
    }
    web_cells[1]["hints"] = {"shares": [{"cell": 0, "weight": 0.35}]}
    domains.append({
        "name": "web-frontend-01", "uuid": b.uuid("web-frontend-01"),
        "balancer": {"mode": "auto", "priority": 10},
        "age_passes": 37, "preferred_node": -1,
        "cells": web_cells,
    })

    # 2. advise, one cell, memory split, vCPUs floating over the allowed CPUs.
    spread = {n["os"]: p for n, p in zip(cpu_nodes[:2], (18500, 9700))}
    domains.append({
        "name": "ci-runner-07", "uuid": b.uuid("ci-runner-07"),
        "balancer": {"mode": "advise", "priority": -5,
                     "nodes": [n["os"] for n in cpu_nodes[:2]]},
        "age_passes": 2,
        "cells": [{"id": 0, "pages": b.pages(spread),
                   "vcpus": b.vcpus(0, 4, None, [0.97, 0.93, 0.35, 0.02])}],
    })

    # 3. not opted in: parsed, validated and kept, never touched.
    domains.append({
        "name": "legacy-erp", "uuid": b.uuid("legacy-erp"),
        "cells": [{"id": 0, "pages": b.pages({last["os"]: 30500}),
                   "vcpus": b.vcpus(0, 2, last["cpus"], [0.21, 0.18])}],
    })

    # 4. memory bound strictly to one node (rule 2: cpuset skip); its vCPUs may
    #    run elsewhere but are allowed on the bound node.
    if multi:
        bound = away if away["cpus"] else last
        run_on = home if home is not bound else last
        domains.append({
            "name": "redis-cache-02", "uuid": b.uuid("redis-cache-02"),
            "balancer": {"mode": "auto"},
            "age_passes": 210, "preferred_node": bound["os"],
            "numatune": {"mode": "strict", "nodes": [bound["os"]]},
            "cells": [{"id": 0, "pages": b.pages({bound["os"]: 52000}),
                       "vcpus": b.vcpus(0, 2, run_on["cpus"][-2:], [0.55, 0.47],
                                        sorted(set(run_on["cpus"]) | set(bound["cpus"])))}],
        })

    # 5. a third CPU node, when there is one: an auto domain already local,
    #    using per-cell memnode bindings.
    if len(cpu_nodes) >= 3:
        n3 = cpu_nodes[2]
        domains.append({
            "name": "analytics-etl", "uuid": b.uuid("analytics-etl"),
            "balancer": {"mode": "auto", "priority": 50, "nodes": [n3["os"]]},
            "age_passes": 3, "preferred_node": n3["os"],
            "cells": [{"id": 0, "numatune": {"mode": "preferred", "nodes": [n3["os"]]},
                       "pages": b.pages({n3["os"]: 24000}), "last_candidate": n3["os"],
                       "vcpus": b.vcpus(0, 2, n3["cpus"], [0.88, 0.9])}],
        })

    host_nodes = []
    for n in nodes:
        reserved = n["mem"] // 10  # kernel, page cache and QEMU overhead
        free = max(0, n["mem"] - reserved - b.used[n["os"]] * PAGE)
        entry = {"node": n["os"], "free_bytes": free}
        if n["cpus"]:
            entry["other_busy"] = round(min(len(n["cpus"]), 0.3 + 0.05 * len(n["cpus"])), 2)
        host_nodes.append(entry)
    return {"version": 1, "pass": 1200, "nodes": host_nodes, "domains": domains}


def main(argv):
    paths = argv[1:] or sorted(os.path.join(TOPODIR, f) for f in os.listdir(TOPODIR)
                               if f.endswith(".xml"))
    for path in paths:
        base = os.path.splitext(os.path.basename(path))[0]
        nodes, all_cpus = load_topology(path)
        doc = build(base, nodes, all_cpus)
        out = os.path.join(HERE, base + ".json")
        with open(out, "w", encoding="utf-8") as f:
            f.write(compact(doc) + "\n")
        print("wrote %s (%d nodes, %d domains)" % (out, len(nodes), len(doc["domains"])))


if __name__ == "__main__":
    main(sys.argv)
