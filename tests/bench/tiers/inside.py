#!/usr/bin/env python3
"""Tiered memory, side by side (issue 31), inside ONE boot of the proving ground with a lower tier
(run-ground.sh --tier-node: node TIER is CPU-less memory the kernel counts as a lower tier).

Two domains of the test guest (vm-images/build-guest.sh), each with a cell 0 larger than its home
node's room: guest node 0 holds a cold filler (memtouch writes COLD_MIB once and keeps it) and,
allocated after it, a hot set (HOT_MIB written in a loop; memtouch prints its guest-physical
ranges). tier-agent (vnuma-agent and its channel) lives on node 0, tier-plain (no agent) on node 2:
each domain's vCPUs may run on its home node's CPUs only. A process holds memory on each home node
(the "hog") so that the home node's room above vnumad's reserve is ROOM_MIB.

The same start before every run ("misplace"): of each cell 0, the hot set and the filler that does
not fit at home are on the home's neighbour (node 1, node 3: the other node of the same socket),
the rest of the filler at home; nothing on the tier node. Then, for SECONDS s, every second: the
hot set's pages per node (move_pages(2) of every page, through HMP gpa2hva), every page of cell 0
(the same, so that a page that moves twice is seen), /proc/vmstat.

Runs, in this order:
  none     nothing balances                              (measured on tier-agent)
  agent    vnumad, tier-agent opted in (tier="auto"), a cold start: vnumad starts at t=0 with
           the domain opted in, its link to the agent comes up in the first pass, the agent primes
           its first hint set, memory waits for it (hints-pending)  (tier-agent)
  plain    vnumad, tier-plain opted in (no agent)        (tier-plain)
  kernel   numa_balancing=2 (memory tiering) with demotion_enabled=1: the kernel promotes hot
           pages from the lower tier and demotes cold ones under pressure (tier-agent)
  huge, kernel-huge  agent and kernel on tier-huge, the same guest with a hugetlbfs backing
           (2 MiB pages; it lives on node 2, booted after tier-agent and tier-plain are gone).
           Its start is the same in whole pages, no hog: the home node's room is ROOM_MIB of free
           pages in its pool (what vnumad counts for a hugetlb cell); the neighbour's and the tier
           node's pools have free pages for every move. The kernel's tiering never scans hugetlb.
  NAME@tier  the same from the other start: the hot set on the tier node, where the kernel's
           tiering promotes from (the rest as above)
For plain, vnumad starts warm (in advise mode until it sampled the domain 3 times; t=0 is the
switch to auto). The agent's run cannot: an advise domain gets no monitor command, and vnumad
opens the agent's channel only for a domain it may sample through the monitor.
Writes /results/tiers.json; progress lines ("@ ...") to /results/progress.out.
"""
import ctypes, json, os, shutil, signal, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "../../.."))
sys.path.insert(0, os.path.join(REPO, "tests/e2e/ground"))
import probe  # noqa: E402

R = os.environ.get("GROUND_RESULTS", "/results")
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
SECONDS = int(ARGS.get("seconds", 60))
RUNS = ARGS.get("runs", "none+agent+plain+kernel").split("+")
HOT_MIB, COLD_MIB = int(ARGS.get("hot_mib", 64)), int(ARGS.get("cold_mib", 448))
CELL_MIB = int(ARGS.get("cell_mib", 640))
ROOM_MIB = int(ARGS.get("room_mib", 32))
TIER = int(ARGS.get("tier", 4))
READY_TIMEOUT = int(ARGS.get("ready_timeout", 600))
GUEST = os.path.join(BUILD, "guest")
DOMS = {"tier-agent": {"home": 0, "near": 1, "agent": True}, "tier-plain": {"home": 2, "near": 3, "agent": False},
        "tier-huge": {"home": 2, "near": 3, "agent": True, "huge": True}}
WATCH = {"none": "tier-agent", "agent": "tier-agent", "plain": "tier-plain", "kernel": "tier-agent",
         "huge": "tier-huge", "kernel-huge": "tier-huge"}
KIND = {"huge": "agent", "kernel-huge": "kernel"}  # what the run does, by its name
# NAME@tier: the run NAME from the other start, the hot set on the tier node (where the kernel's
# tiering promotes from)
OUT = open(os.path.join(R, "progress.out"), "a", buffering=1)
PAGE = 4096
VNUMACTL_SOCK = "/run/vnuma-tiers/vnumad.sock"
HUGE_KIB = 2048
HUGE = "/sys/devices/system/node/node{}/hugepages/hugepages-2048kB/{}"
RESERVE_MIB = 256 + 16  # vnumad's default reserve on a 1 GiB node (max(256 MiB, 3%)) and its slack
libc = ctypes.CDLL("libc.so.6", use_errno=True)


def up():
    return float(open("/proc/uptime").read().split()[0])


def say(msg):
    OUT.write(f"@ {msg}\n")
    print(f"GROUND-T {up():.2f} {msg}", flush=True)


def virsh(*a, check=True):
    r = subprocess.run(probe.VIRSH + list(a), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"virsh {' '.join(a)}: {r.stderr.strip()}")
    return r.stdout


def cpus_of(n):
    return open(f"/sys/devices/system/node/node{n}/cpulist").read().strip()


def node_free_mib(n):
    for line in open(f"/sys/devices/system/node/node{n}/meminfo"):
        if "MemFree:" in line:
            return int(line.split()[-2]) // 1024
    return 0


def vmstat():
    out = {}
    for line in open("/proc/vmstat"):
        k, v = line.split()
        if k.startswith(("numa_", "pgmigrate", "pgdemote", "pgpromote", "thp_migration", "thp_split")):
            out[k] = int(v)
    return out


def move_pages(pid, hvas, node=None):
    """move_pages(2) of every page: to `node`, or (None) a status query. Returns the status list."""
    out = []
    for i in range(0, len(hvas), 65536):
        chunk = hvas[i:i + 65536]
        n = len(chunk)
        pages = (ctypes.c_void_p * n)(*chunk)
        status = (ctypes.c_int * n)()
        nodes = (ctypes.c_int * n)(*([node] * n)) if node is not None else None
        libc.syscall(279, pid, n, pages, nodes, status, 2 if node is not None else 0)  # MPOL_MF_MOVE_ALL
        out += list(status)
    return out


def dom_xml(name, home, agent, huge=False):
    d = "/tmp/tiers"
    base = "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off"
    cmdline = (f"{base} vnuma.agent={int(agent)} vnuma.workload=memtouch,node=0,mib={COLD_MIB},hold=1,ready=filled "
               f"vnuma.workload=memtouch,node=0,mib={HOT_MIB},gpa=1,wait=filled")
    channel = "<channel type='unix'><target type='virtio' name='org.vnuma.agent.0'/></channel>" if agent else ""
    cpus = cpus_of(home)
    backing = ("<memoryBacking><hugepages><page size='2048' unit='KiB'/></hugepages>"
               "<allocation mode='immediate'/></memoryBacking>") if huge else ""
    return f"""<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>{CELL_MIB + 128}</memory>
  {backing}
  <vcpu placement='static' cpuset='{cpus}'>2</vcpu>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <kernel>{d}/vmlinuz</kernel>
    <initrd>{d}/initramfs.cpio.gz</initrd>
    <cmdline>{cmdline}</cmdline>
  </os>
  <features><acpi/><apic/></features>
  <cpu mode='custom' match='exact' check='none'>
    <model fallback='forbid'>qemu64</model>
    <topology sockets='2' dies='1' cores='1' threads='1'/>
    <numa>
      <cell id='0' cpus='0' memory='{CELL_MIB}' unit='MiB'/>
      <cell id='1' cpus='1' memory='128' unit='MiB'/>
    </numa>
  </cpu>
  <on_poweroff>destroy</on_poweroff>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    {channel}
    <serial type='file'><source path='{d}/{name}.console'/><target port='0'/></serial>
    <console type='file'><source path='{d}/{name}.console'/><target type='serial' port='0'/></console>
    <memballoon model='none'/>
  </devices>
</domain>
"""


def boot_guests(names):
    os.makedirs("/tmp/tiers", exist_ok=True)
    os.chmod("/tmp/tiers", 0o755)
    for f in ("vmlinuz", "initramfs.cpio.gz"):
        shutil.copy(os.path.join(GUEST, f), f"/tmp/tiers/{f}")
        os.chmod(f"/tmp/tiers/{f}", 0o644)
    for name in names:
        d = DOMS[name]
        con = f"/tmp/tiers/{name}.console"
        open(con, "w").close()
        os.chmod(con, 0o666)
        with open(f"/tmp/tiers/{name}.xml", "w") as f:
            f.write(dom_xml(name, d["home"], d["agent"], d.get("huge", False)))
        virsh("define", f"/tmp/tiers/{name}.xml")
        virsh("start", name)
    t0 = time.monotonic()
    last = 0
    while True:
        ready = []
        for name in names:
            con = open(f"/tmp/tiers/{name}.console", errors="replace").read()
            shutil.copy(f"/tmp/tiers/{name}.console", os.path.join(R, f"{name}.console"))
            ready.append(con.count("memtouch: pid") >= 2 and " gpa done " in con)
        el = time.monotonic() - t0
        if all(ready):
            return round(el, 1)
        if el > READY_TIMEOUT:
            return None
        if el - last >= 30:
            last = el
            say(f"  guests booting, {el:.0f} s")
        time.sleep(2)


def hot_hvas(name):
    """every page of the hot memtouch's guest-physical ranges (its --gpa lines), as QEMU addresses"""
    return probe.memtouch_hot_hvas(name, open(f"/tmp/tiers/{name}.console", errors="replace").read())[0]


def cell0_hvas(name):
    st = probe.quick(name)
    c = st["cells"][0]
    base = int(c["hva"], 16)
    return list(range(base, base + c["size"], PAGE))


def hog(node, mib):
    """a process holding mib MiB on node (touched once), or None for 0"""
    if mib <= 0:
        return None
    code = ("import mmap,sys,time\nm=mmap.mmap(-1,%d<<20)\nfor i in range(0,len(m),4096): m[i]=1\n"
            "sys.stdout.write('held\\n');sys.stdout.flush()\ntime.sleep(1e9)\n") % mib
    p = subprocess.Popen(["numactl", f"--membind={node}", "python3", "-c", code], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    return p


HOGS = {}


def huge_pool(n, what):
    return int(open(HUGE.format(n, what)).read())


def set_huge(n, count):
    with open(HUGE.format(n, "nr_hugepages"), "w") as f:
        f.write(str(count))
    return huge_pool(n, "nr_hugepages")


def huge_pools(nodes):
    """2 MiB pages per node: {node: {"total", "free"}}"""
    return {str(n): {"total": huge_pool(n, "nr_hugepages"), "free": huge_pool(n, "free_hugepages")} for n in nodes}


def layout(name, hot_on_tier):
    """the same layout before every run: cell 0 on the home's neighbour, half of its cold pages
    back home, the hot set on the tier node instead when hot_on_tier, the other cells at home"""
    d = DOMS[name]
    st = probe.quick(name)
    pid = st["pid"]
    hot = set(HOT[name])
    cell = CELL0[name]
    move_pages(pid, cell, d["near"])
    cold = [a for a in cell if a not in hot]
    move_pages(pid, cold[:(CELL_MIB // 2) * 256], d["home"])  # half the cell's pages at home
    if hot_on_tier:
        move_pages(pid, HOT[name], TIER)
    for c in st["cells"][1:]:  # the other cell at home
        base = int(c["hva"], 16)
        move_pages(pid, list(range(base, base + c["size"], PAGE)), d["home"])
    return pid


def pages_per_node(pid, pages):
    """{node (or -errno) as a string: how many of `pages` are there}"""
    on = {}
    for s in move_pages(pid, pages):
        on[s] = on.get(s, 0) + 1
    return {str(k): v for k, v in sorted(on.items())}


def misplace_huge(name, hot_on_tier=False):
    """misplace() in whole pages for the hugetlbfs guest: the pools first get free pages for
    every move, then the same layout, then each pool is cut to what it holds plus its free
    pages: the home node ROOM_MIB (its room for a hugetlb cell), the neighbour none, the tier
    node what it has left"""
    d = DOMS[name]

    def used(n):
        return huge_pool(n, "nr_hugepages") - huge_pool(n, "free_hugepages")
    # free pages for the moves below: the neighbour takes all of cell 0, the tier its hot set
    set_huge(d["near"], used(d["near"]) + CELL_MIB // 2 + 8)
    set_huge(TIER, used(TIER) + HOT_MIB // 2 + 8)
    pid = layout(name, hot_on_tier)
    set_huge(d["home"], used(d["home"]) + ROOM_MIB // 2)
    set_huge(d["near"], used(d["near"]))
    # the tier node: what its memory holds beyond what it uses (the cold memory goes there)
    set_huge(TIER, huge_pool(TIER, "nr_hugepages") + max(0, node_free_mib(TIER) - 64) // 2)
    return {"cell0_pages": pages_per_node(pid, CELL0[name]), "home_free_mib": ROOM_MIB,
            "hog_mib": 0, "pools": huge_pools((d["home"], d["near"], TIER))}


def misplace(name, hot_on_tier=False):
    """the same start for every run (layout), then the hog leaves the home ROOM_MIB of room
    above vnumad's reserve"""
    d = DOMS[name]
    if name in HOGS and HOGS[name]:
        HOGS[name].kill()
        HOGS[name].wait()
    pid = layout(name, hot_on_tier)
    free = node_free_mib(d["home"])
    HOGS[name] = hog(d["home"], free - RESERVE_MIB - ROOM_MIB)
    return {"cell0_pages": pages_per_node(pid, CELL0[name]), "home_free_mib": node_free_mib(d["home"]),
            "hog_mib": free - RESERVE_MIB - ROOM_MIB}


def vnctl(*a):
    return subprocess.run([os.path.join(BUILD, "vnumactl"), "--socket", VNUMACTL_SOCK] + list(a),
                          capture_output=True, text=True).stdout


def vnumad_start(run):
    """vnumad with a fresh state directory; its log is vnumad-RUN.log (each run's kept)"""
    state = os.path.join(R, "vnumad-state")
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    conf = os.path.join(R, "vnumad.conf")
    with open(conf, "w") as f:
        f.write(f"socket = {VNUMACTL_SOCK}\nstate_dir = {state}\nlog_level = debug\ninterval = 5\n")
    log = open(os.path.join(R, f"vnumad-{run.replace('@', '-')}.log"), "w")
    p = subprocess.Popen([os.path.join(BUILD, "vnumad"), "--foreground", "--config", conf],
                         stdout=log, stderr=subprocess.STDOUT)

    def stop():
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
        log.close()
    return stop


def warm_up(dom, agent, timeout=300):
    virsh("metadata", dom, "urn:vnuma:balancer:1", "--key", "vnuma", "--set", '<balancer mode="advise"/>', "--live")
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            j = json.loads(vnctl("status", "--json"))
            ds = [x for x in j.get("return", j)["domains"] if x["name"] == dom]
        except (ValueError, KeyError):
            ds = []
        if ds and ds[0].get("age_passes", 0) >= 3 and (not agent or (ds[0].get("agent") or {}).get("hint_sets", 0) >= 2):
            return round(time.monotonic() - t0, 1)
        time.sleep(1)
    return None


def run(name):
    name, _, start = name.partition("@")
    dom = WATCH[name]
    d = DOMS[dom]
    r = {"name": name + (f"@{start}" if start else ""), "domain": dom, "start": start or "near"}
    name = KIND.get(name, name)
    stop = lambda: None  # noqa: E731
    if name == "plain":
        stop = vnumad_start(r["name"])
        r["warm_up_s"] = warm_up(dom, d["agent"])
        if r["warm_up_s"] is None:
            stop()
            r["error"] = "vnumad did not warm up"
            return r
    r["placed"] = (misplace_huge if d.get("huge") else misplace)(dom, start == "tier")
    say(f"[{r['name']}] start: {dom} cell 0 pages per node {r['placed']['cell0_pages']}, home node {d['home']} "
        f"{r['placed']['home_free_mib']} MiB free (hog {r['placed']['hog_mib']} MiB)")
    v0 = vmstat()
    if name in ("agent", "plain"):
        virsh("metadata", dom, "urn:vnuma:balancer:1", "--key", "vnuma", "--set", '<balancer mode="auto"/>', "--live")
    if name == "agent":
        stop = vnumad_start(r["name"])
    elif name == "kernel":
        open("/sys/kernel/mm/numa/demotion_enabled", "w").write("1")
        subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=2"], check=True)
    pid = probe.quick(dom)["pid"]
    cell, hot = CELL0[dom], HOT[dom]
    idx = {a: i for i, a in enumerate(cell)}
    hot_idx = [idx[a] for a in hot if a in idx]
    prev = move_pages(pid, cell)
    moves = [0] * len(cell)
    if d.get("huge"):
        r["pools_start"] = huge_pools((d["home"], d["near"], TIER))
    T0 = time.monotonic()
    r["t0_wall"] = time.time()
    samples = []
    k = 1
    while True:
        nxt = T0 + k
        now = time.monotonic()
        if nxt > now:
            time.sleep(nxt - now)
        cur = move_pages(pid, cell)
        for i, (a, b) in enumerate(zip(prev, cur)):
            if a != b and a >= 0 and b >= 0:
                moves[i] += 1
        prev = cur
        on = {}
        for s in cur:
            on[s] = on.get(s, 0) + 1
        hot_on = {}
        for i in hot_idx:
            hot_on[cur[i]] = hot_on.get(cur[i], 0) + 1
        vm = vmstat()
        s = {"t": round(time.monotonic() - T0, 2), "cell0": {str(a): b for a, b in sorted(on.items())},
             "hot": {str(a): b for a, b in sorted(hot_on.items())},
             "hot_home": round(hot_on.get(d["home"], 0) / len(hot_idx), 4) if hot_idx else None,
             "vmstat": {x: vm[x] - v0.get(x, 0) for x in vm}}
        samples.append(s)
        if k % 10 == 0 or s["t"] >= SECONDS:
            say(f"[{r['name']}] t={s['t']:5.1f}s hot set {s['hot_home'] * 100:5.1f}% home; cell 0 {s['cell0']}; "
                f"migrated {s['vmstat'].get('pgmigrate_success', 0)} pages, hinting faults {s['vmstat'].get('numa_hint_faults', 0)}")
        if s["t"] >= SECONDS:
            break
        k += 1
    if name in ("agent", "plain"):
        r["decisions"] = vnctl("decisions", dom)[-4000:]
    if name == "kernel":
        subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=0"])
        open("/sys/kernel/mm/numa/demotion_enabled", "w").write("0")
    stop()
    if name in ("agent", "plain"):
        try:
            r["journal"] = [json.loads(l) for l in open(os.path.join(R, "vnumad-state", "journal.jsonl")) if l.strip()]
        except OSError:
            r["journal"] = []
        virsh("metadata", dom, "urn:vnuma:balancer:1", "--key", "vnuma", "--set", '<balancer mode="off"/>', "--live", check=False)
    r["samples"] = samples
    if d.get("huge"):
        r["pools_end"] = huge_pools((d["home"], d["near"], TIER))
    r["moved_twice_pages"] = sum(1 for m in moves if m >= 2)
    r["hot_moved_twice_pages"] = sum(1 for i in hot_idx if moves[i] >= 2)
    return r


HOT, CELL0 = {}, {}


def phase(out, path, names):
    """boot the guests `names`, find their hot sets; False (written to tiers.json) when they
    did not come up"""
    ready = boot_guests(names)
    out["config"].setdefault("guest_ready_s", {})[",".join(names)] = ready
    if ready is None:
        out["error"] = f"the guests' memtouch did not start ({', '.join(names)})"
        json.dump(out, open(path, "w"))
        say(f"FAILED: {out['error']}")
        return False
    for name in names:
        HOT[name] = hot_hvas(name)
        CELL0[name] = cell0_hvas(name)
    say(f"guests ready after {ready} s; hot sets " + ", ".join(f"{n} {len(HOT[n])} pages" for n in names))
    return True


def main():
    out = {"config": {"seconds": SECONDS, "hot_mib": HOT_MIB, "cold_mib": COLD_MIB, "cell_mib": CELL_MIB,
                      "room_mib": ROOM_MIB, "tier": TIER, "domains": DOMS, "watch": WATCH,
                      "kernel": os.uname().release,
                      "tiers": {t: open(f"/sys/devices/virtual/memory_tiering/{t}/nodelist").read().strip()
                                for t in sorted(os.listdir("/sys/devices/virtual/memory_tiering")) if t.startswith("memory_tier")}},
           "runs": {}}
    path = os.path.join(R, "tiers.json")
    first = ["tier-agent", "tier-plain"]
    say(f"tiers: {out['config']['tiers']}")
    for name in RUNS:
        huge = DOMS[WATCH[name.partition("@")[0]]].get("huge")
        if not huge and first[0] not in HOT:
            say("starting tier-agent (home node 0) and tier-plain (home node 2)")
            if not phase(out, path, first):
                return 1
        if huge and "tier-huge" not in HOT:
            # the hugetlbfs guest in the others' place: they go, their hogs too
            for p in HOGS.values():
                if p:
                    p.kill()
            HOGS.clear()
            for n in first:
                virsh("destroy", n, check=False)
                virsh("undefine", n, check=False)
            set_huge(DOMS["tier-huge"]["home"], (CELL_MIB + 128) // 2)
            say("tier-agent and tier-plain gone; starting tier-huge (hugetlbfs, home node 2)")
            if not phase(out, path, ["tier-huge"]):
                return 1
        try:
            out["runs"][name] = run(name)
        except Exception:
            import traceback
            out["runs"][name] = {"name": name, "error": traceback.format_exc()}
            say(f"[{name}] FAILED: {traceback.format_exc().splitlines()[-1]}")
            subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=0"])
        json.dump(out, open(path, "w"))
    for p in HOGS.values():
        if p:
            p.kill()
    for name in DOMS:
        virsh("destroy", name, check=False)
        virsh("undefine", name, check=False)
    for n in (0, 1, 2, 3, TIER):
        set_huge(n, 0)
    return 0 if all("error" not in r for r in out["runs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
