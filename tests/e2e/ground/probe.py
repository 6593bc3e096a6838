#!/usr/bin/env python3
"""What the kernel and libvirt say about an L2 domain, as JSON (runs inside the ground).

  probe.py state DOM     {"pid", "cells": [{"cell", "size", "hva", "pages": {node: n}}],
                          "vcpus": [{"vcpu", "tid", "cell", "allowed", "cpu"}],
                          "vcpupin": {vcpu: list} (virsh vcpupin --live), "emulatorpin",
                          "total_pages": {node: n} (all of numa_maps)}
  probe.py record DOM    the decision record from QEMU (qom-get /objects/vnuma-decision), or null

Cell memory: query-memdev gives each cell's backend size (cells are laid out in guest-physical
order from 0, all below the 4 GiB split here); HMP gpa2hva gives the host virtual address of a
guest address inside the cell; the backend is one mapping in QEMU, so [hva - offset, + size)
is the cell; pages per node are the N<node>= counts of numa_maps over the VMAs in that range.

The monitor commands and the live pins go through one libvirt connection (python3-libvirt):
a virsh process per call took seconds inside the TCG ground with busy guests, and the
scenarios poll these in loops.
"""
import json, re, subprocess, sys

import libvirt
import libvirt_qemu

VIRSH = ["virsh", "-q", "-c", "qemu:///system"]
_CONN = None
_URI = "qemu:///system"  # the libvirtd asked (use_host: the second one of a migration)
_RUN = "/run/libvirt"    # ... and its run directory, where QEMU's pid files are


def use_host(uri, run):
    """Probe the domains of another libvirtd (migrate.py's host B) from now on."""
    global _CONN, _URI, _RUN
    _CONN, _URI, _RUN = None, uri, run


def virsh(*a):
    return subprocess.run(VIRSH + list(a), check=True, capture_output=True, text=True).stdout


def _call(fn):
    """fn(conn) on the cached connection; opened again once if libvirtd went away meanwhile"""
    global _CONN
    for attempt in (0, 1):
        if _CONN is None:
            _CONN = libvirt.open(_URI)
        try:
            return fn(_CONN)
        except libvirt.libvirtError:
            alive = False
            try:
                alive = _CONN.isAlive() == 1
            except libvirt.libvirtError:
                pass
            if alive or attempt:
                raise
            _CONN = None


def cpus_fmt(bits):
    """a libvirt CPU map (tuple of bools) as virsh prints it: "0-1,3" """
    out, i, n = [], 0, len(bits)
    while i < n:
        if not bits[i]:
            i += 1
            continue
        j = i
        while j + 1 < n and bits[j + 1]:
            j += 1
        out.append(str(i) if i == j else f"{i}-{j}")
        i = j + 1
    return ",".join(out)


class QMPError(Exception):
    """QEMU answered a command with an error (virsh exits 1 on it)"""


def qmp(dom, cmd, **args):
    m = {"execute": cmd}
    if args:
        m["arguments"] = args
    out = json.loads(_call(lambda c: libvirt_qemu.qemuMonitorCommand(c.lookupByName(dom), json.dumps(m), 0)))
    if "return" not in out:
        raise QMPError(f"{cmd}: {out.get('error')}")
    return out["return"]


def hmp(dom, line):
    return _call(lambda c: libvirt_qemu.qemuMonitorCommand(
        c.lookupByName(dom), line, libvirt_qemu.VIR_DOMAIN_QEMU_MONITOR_COMMAND_HMP))


def live_pins(dom):
    """({vcpu: cpulist}, emulator cpulist) as `virsh vcpupin/emulatorpin --live` print them"""
    def get(c):
        d = c.lookupByName(dom)
        live = libvirt.VIR_DOMAIN_AFFECT_LIVE
        return d.vcpuPinInfo(live), d.emulatorPinInfo(live)
    vcpus, emu = _call(get)
    return {str(i): cpus_fmt(b) for i, b in enumerate(vcpus)}, cpus_fmt(emu)


def cpulist(s):
    out = set()
    for part in s.strip().split(","):
        if not part:
            continue
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        else:
            out.add(int(part))
    return sorted(out)


def numa_vmas(pid):
    ends = {}
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            a, b = line.split()[0].split("-")
            ends[int(a, 16)] = int(b, 16)
    vmas = []
    with open(f"/proc/{pid}/numa_maps") as f:
        for line in f:
            parts = line.split()
            start = int(parts[0], 16)
            pages = {}
            for p in parts[2:]:
                m = re.match(r"N(\d+)=(\d+)$", p)
                if m:
                    pages[m.group(1)] = pages.get(m.group(1), 0) + int(m.group(2))
            vmas.append((start, ends.get(start, start), pages))
    return vmas


_LAYOUT = {}  # (dom, pid) -> (cell ranges, vCPU list): fixed for one QEMU run


def layout(dom, pid):
    key = (dom, pid)
    if key in _LAYOUT:
        return _LAYOUT[key]
    memdevs = sorted(qmp(dom, "query-memdev"), key=lambda m: int(re.sub(r"\D", "", m.get("id", "0")) or 0))
    ranges, gpa = [], 0
    for i, m in enumerate(memdevs):
        size = m["size"]
        probe = gpa + min(2 << 20, size // 2)
        out = hmp(dom, f"gpa2hva {probe:#x}")
        mm = re.search(r"is (0x[0-9a-f]+)", out)
        if not mm:
            raise SystemExit(f"gpa2hva {probe:#x}: {out!r}")
        ranges.append((i, m.get("id"), size, int(mm.group(1), 16) - (probe - gpa)))
        gpa += size
    cpus = [(c["cpu-index"], c["thread-id"], c.get("props", {}).get("node-id", 0)) for c in qmp(dom, "query-cpus-fast")]
    _LAYOUT[key] = (ranges, cpus)
    return _LAYOUT[key]


def quick(dom, pid=None):
    """kernel-only view (numa_maps, /proc affinity): no libvirt call once the layout is known"""
    pid = pid or int(open(f"{_RUN}/qemu/{dom}.pid").read())
    ranges, cpus = layout(dom, pid)
    vmas = numa_vmas(pid)
    cells = []
    for i, mid, size, base in ranges:
        pages = {}
        for start, end, pg in vmas:
            if start >= base and end <= base + size:
                for k, v in pg.items():
                    pages[k] = pages.get(k, 0) + v
        cells.append({"cell": i, "id": mid, "size": size, "hva": hex(base), "pages": pages})
    vcpus = []
    for idx, tid, node in cpus:
        st = open(f"/proc/{pid}/task/{tid}/status").read()
        allowed = re.search(r"Cpus_allowed_list:\s*(\S+)", st).group(1)
        stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        vcpus.append({"vcpu": idx, "tid": tid, "cell": node, "allowed": allowed,
                      "cpu": int(stat.rsplit(")", 1)[1].split()[36])})
    total = {}
    for _, _, pages in vmas:
        for k, v in pages.items():
            total[k] = total.get(k, 0) + v
    return {"dom": dom, "pid": pid, "cells": cells, "vcpus": vcpus, "total_pages": total}


def state(dom):
    """quick() plus what libvirt says about the pins"""
    s = quick(dom)
    pins, emu = live_pins(dom)
    s.update({"vcpupin": pins, "emulatorpin": emu or None})
    return s


def query_pages(pid, hva, size, stride=64):
    """move_pages(2) status query (nodes=NULL) of every stride-th page of [hva, hva+size) in
    process pid, from this process: {node or errno: count of sampled pages}"""
    import ctypes
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    addrs = list(range(hva, hva + size, 4096 * stride))
    n = len(addrs)
    pages = (ctypes.c_void_p * n)(*addrs)
    status = (ctypes.c_int * n)()
    rc = libc.syscall(279, pid, n, pages, None, status, 0)
    out = {"rc": rc, "errno": ctypes.get_errno() if rc < 0 else 0}
    for s in status:
        out[str(s)] = out.get(str(s), 0) + 1
    return out


def memtouch_hot_hvas(dom, console):
    """The pages a `memtouch --gpa 1` in the guest reported on its console (its "gpa" lines: the
    guest-physical ranges of what it writes), as host virtual addresses of QEMU, every page.
    Returns (hvas, info); RuntimeError when the ranges do not add up to what memtouch wrote."""
    ranges, want = [], None
    for line in console.splitlines():
        f = line.split()
        if len(f) > 4 and f[0] == "memtouch:" and f[3] == "gpa":
            if f[4] == "done" and len(f) > 7:
                want = int(f[7])
                continue
            for r in f[4:]:
                try:
                    start, length = (int(x, 16) for x in r.split("+"))
                except ValueError:
                    continue  # a line another writer cut in two: the page count below tells
                ranges.append((start, length))
    got = sum(length for _, length in ranges) // 4096
    info = {"ranges": len(ranges), "pages": got, "pages_memtouch": want}
    if want is None or got != want:
        raise RuntimeError(f"{dom}: the hot set's ranges on the console add up to {got} pages, memtouch wrote {want}")
    st = quick(dom)
    lay, _ = layout(dom, st["pid"])
    bases, gpa = [], 0
    for _i, _id, size, hva in lay:
        bases.append((gpa, size, hva))
        gpa += size
    hvas = []
    for start, length in ranges:
        for a in range(start, start + length, 4096):
            for g, size, hva in bases:
                if g <= a < g + size:
                    hvas.append(hva + a - g)
                    break
    return hvas, info


def record(dom):
    try:
        r = qmp(dom, "qom-get", path="/objects/vnuma-decision", property="identity")
    except (libvirt.libvirtError, QMPError):
        return None
    return json.loads(r)


if __name__ == "__main__":
    what, dom = sys.argv[1], sys.argv[2]
    print(json.dumps(state(dom) if what == "state" else record(dom)))
