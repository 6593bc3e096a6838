#!/usr/bin/env python3
"""Side-by-side comparison, inside ONE boot of the proving ground (see inside.sh, compare.sh).

The same misplaced start, once per balancer, on the same two domains (booted once: an L2 kernel
takes minutes to boot here, TCG inside TCG):
  - the test guest of vm-images/build-guest.sh (Debian kernel + busybox initramfs), 2 cells x
    CELL_MIB, 1 vCPU per cell, no agent; in the guest memtouch writes every page of MIB0 MiB on
    guest node 0 and MIB1 MiB on guest node 1 in a loop (both vCPUs busy), so each QEMU has
    more than numad's 300 MB threshold resident;
  - QEMU starts with every vCPU and the emulator pinned to the last node's CPUs, so everything the
    guest touches is allocated there;
  - before each run: vCPUs and emulator pinned to the last node again, `migratepages PID all LAST`
    (everything back there, also what the previous balancer moved), 3 s of touching, then every
    vCPU and the emulator re-pinned to the other nodes' CPUs (an old pinning: the memory must move
    for the cells to be local); at t=0 the balancer starts; afterwards it is stopped.
  - order none, numad, vnumad, kernel: the kernel's balancer last, because the PROT_NONE hinting
    entries it leaves behind would still migrate pages on fault after numa_balancing=0.
Every second for SECONDS s: per cell the pages per node (numa_maps of the QEMU process, through
probe.py), per vCPU thread the CPU it runs on and its utime+stime, /proc/vmstat, the balancer's
own CPU time. Locality of one sample = sum over vCPUs of (busy ticks x share of its cell's
resident pages on the node of the CPU it ran on) / sum of busy ticks.
Writes /results/compare.json; progress lines ("@ ...") to /results/progress.out.

With hot_mib=H (tests/bench/hotset.sh): the hot-set experiment of issue 16 instead, on two domains
of the same guest, hs-agent (its vnuma-agent running, the org.vnuma.agent.0 channel) and hs-plain
(no agent). In each, guest node 0 holds a cold filler (memtouch writes COLD_MIB once and keeps
it, `--hold 1`) and, allocated after it, a hot set (memtouch writes H MiB in a loop and prints the
guest-physical ranges that hold it, `--gpa 1`); vCPU 1 idles. Runs "agent" and "plain" are vnumad
with only that domain opted in (both domains get the same misplaced start, both keep running).
Every sample adds the hot set's pages per node (move_pages(2) on every page of its ranges,
through HMP gpa2hva), and the hot set's locality: its share on the node vCPU 0 runs on.
"""
import json, os, shutil, signal, subprocess, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "../../.."))
sys.path.insert(0, os.path.join(REPO, "tests/e2e/ground"))
import probe  # noqa: E402

R = os.environ.get("GROUND_RESULTS", "/results")
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
SECONDS = int(ARGS.get("seconds", 90))
RUNS = ARGS.get("runs", "none+numad+vnumad+kernel").split("+")
CELL_MIB = int(ARGS.get("cell_mib", 384))
MIB0, MIB1 = int(ARGS.get("mib0", 192)), int(ARGS.get("mib1", 64))
READY_TIMEOUT = int(ARGS.get("ready_timeout", 480))
HOT_MIB, COLD_MIB = int(ARGS.get("hot_mib", 0)), int(ARGS.get("cold_mib", 256))
HOT_START = ARGS.get("start", "warm")  # hot-set mode: vnumad warm (warm_up) or started at t=0
GUEST = os.path.join(BUILD, "guest")
DOMS = ("hs-agent", "hs-plain") if HOT_MIB else ("cmp-a", "cmp-b")
# the domains each vnumad run opts in
OPTIN = {"vnumad": DOMS, "agent": ("hs-agent",), "plain": ("hs-plain",)}
if HOT_MIB and "runs" not in ARGS:
    RUNS = ["agent", "plain"]
OUT = open(os.path.join(R, "progress.out"), "a", buffering=1)
HZ = os.sysconf("SC_CLK_TCK")
PAGE = 4096


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


NODES = sorted(int(d[4:]) for d in os.listdir("/sys/devices/system/node") if d[4:].isdigit() and d.startswith("node"))
NODE_CPUS = {n: probe.cpulist(open(f"/sys/devices/system/node/node{n}/cpulist").read()) for n in NODES}
CPU_NODE = {c: n for n, cs in NODE_CPUS.items() for c in cs}
LAST = NODES[-1]
ALLOWED = NODES[:-1]


def cpus_str(nodes):
    return ",".join(open(f"/sys/devices/system/node/node{n}/cpulist").read().strip() for n in nodes)


def vmstat():
    out = {}
    for line in open("/proc/vmstat"):
        k, v = line.split()
        if k.startswith("numa_") or k.startswith("pgmigrate"):
            out[k] = int(v)
    return out


def proc_ticks(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except OSError:
        return None


def thread_stat(pid, tid):
    f = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12]), int(f[36])


def sched_numa(pid, tid):
    out = {}
    try:
        for line in open(f"/proc/{pid}/task/{tid}/sched"):
            if line.startswith(("numa_preferred_nid", "total_numa_faults", "numa_pages_migrated", "mm->numa_scan_seq")):
                k, v = line.split(":", 1)
                out[k.strip()] = int(v.strip())
    except OSError:
        pass
    return out


def dom_xml(name):
    d = f"/tmp/cmp"
    base = "console=ttyS0 rdinit=/init panic=-1 loglevel=4 mitigations=off"
    channel = ""
    if HOT_MIB:
        agent = name == "hs-agent"
        # the filler first (it keeps its pages, untouched), then the hot set: allocated after
        # it, so it is not where a walk in guest-physical order finds it first by chance
        cmdline = (f"{base} vnuma.agent={int(agent)} vnuma.workload=memtouch,node=0,mib={COLD_MIB},hold=1,ready=filled "
                   f"vnuma.workload=memtouch,node=0,mib={HOT_MIB},gpa=1,wait=filled")
        if agent:
            channel = "<channel type='unix'><target type='virtio' name='org.vnuma.agent.0'/></channel>"
    else:
        cmdline = (f"{base} vnuma.agent=0 "
                   f"vnuma.workload=memtouch,node=0,mib={MIB0} vnuma.workload=memtouch,node=1,mib={MIB1}")
    last = cpus_str([LAST])
    return f"""<domain type='qemu'>
  <name>{name}</name>
  <memory unit='MiB'>{2 * CELL_MIB}</memory>
  <vcpu placement='static' cpuset='{cpus_str(ALLOWED)}'>2</vcpu>
  <cputune>
    <vcpupin vcpu='0' cpuset='{last}'/>
    <vcpupin vcpu='1' cpuset='{last}'/>
    <emulatorpin cpuset='{last}'/>
  </cputune>
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
      <cell id='1' cpus='1' memory='{CELL_MIB}' unit='MiB'/>
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


def start_domains():
    os.makedirs("/tmp/cmp", exist_ok=True)
    os.chmod("/tmp/cmp", 0o755)
    for f in ("vmlinuz", "initramfs.cpio.gz"):
        if not os.path.exists(f"/tmp/cmp/{f}"):
            shutil.copy(os.path.join(GUEST, f), f"/tmp/cmp/{f}")
            os.chmod(f"/tmp/cmp/{f}", 0o644)
    for d in DOMS:
        con = f"/tmp/cmp/{d}.console"
        open(con, "w").close()
        os.chmod(con, 0o666)
        with open(f"/tmp/cmp/{d}.xml", "w") as f:
            f.write(dom_xml(d))
        virsh("define", f"/tmp/cmp/{d}.xml")
        virsh("start", d)


def stop_domains():
    for d in DOMS:
        virsh("destroy", d, check=False)
        virsh("undefine", d, check=False)
    probe._LAYOUT.clear()


def guest_ready(d):
    try:
        con = open(f"/tmp/cmp/{d}.console", errors="replace").read()
    except OSError:
        return False
    if HOT_MIB:  # the filler has written its pages and the hot set's ranges are printed
        return con.count("memtouch: pid") >= 2 and " gpa done " in con
    return con.count("memtouch: pid") >= 2


HOT = {}  # domain -> [hva of every page of the hot set]
HOT_INFO = {}  # domain -> what the console said of it


def hot_set(d):
    """the hot memtouch's guest-physical ranges (its --gpa lines), as host virtual addresses"""
    if d not in HOT:
        HOT[d], HOT_INFO[d] = probe.memtouch_hot_hvas(d, open(f"/tmp/cmp/{d}.console", errors="replace").read())
    return HOT[d]


def hot_nodes(pid, hvas):
    """{node: pages} of the hot set now (move_pages(2) status query of every page)"""
    import ctypes
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    n = len(hvas)
    pages = (ctypes.c_void_p * n)(*hvas)
    status = (ctypes.c_int * n)()
    libc.syscall(279, pid, n, pages, None, status, 0)
    out = {}
    for x in status:
        out[x] = out.get(x, 0) + 1
    return out


def cell_pages(st):
    return [{int(k): v for k, v in c["pages"].items()} for c in st["cells"]]


def sample(prev):
    """one sample of both domains; prev: the previous sample (for tick deltas) or None"""
    s = {"t": None, "vmstat": vmstat(), "doms": {}}
    num = den = 0.0
    unweighted = []
    for d in DOMS:
        st = probe.quick(d)
        cells = cell_pages(st)
        vc = []
        for v in st["vcpus"]:
            ticks, cpu = thread_stat(st["pid"], v["tid"])
            pticks = prev["doms"][d]["vcpus"][v["vcpu"]]["ticks"] if prev else ticks
            busy = max(0, ticks - pticks)
            node = CPU_NODE[cpu]
            c = cells[v["cell"]]
            tot = sum(c.values())
            share = c.get(node, 0) / tot if tot else 0.0
            num += busy * share
            den += busy
            unweighted.append(share)
            vc.append({"vcpu": v["vcpu"], "cell": v["cell"], "cpu": cpu, "node": node, "allowed": v["allowed"],
                       "ticks": ticks, "busy": busy, "share": round(share, 4)})
        s["doms"][d] = {"pid": st["pid"], "cells": cells, "vcpus": vc, "total": {int(k): v for k, v in st["total_pages"].items()}}
        if HOT_MIB:
            hn = hot_nodes(st["pid"], hot_set(d))
            on = hn.get(vc[0]["node"], 0)
            s["doms"][d]["hot"] = hn
            s["doms"][d]["hot_local"] = round(on / len(hot_set(d)), 4) if hot_set(d) else None
    s["locality"] = round(num / den, 4) if den else round(sum(unweighted) / len(unweighted), 4)
    s["weighted"] = den > 0
    return s


def balancer_start(name):
    """start the balancer at t=0; returns (pid to account CPU time to or None, stop function)"""
    if name == "none":
        return None, lambda: None
    if name == "kernel":
        subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=1"], check=True)
        return None, lambda: subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=0"])
    if name == "numad":
        try:
            os.unlink("/var/run/numad.pid")
        except OSError:
            pass
        open("/var/log/numad.log", "w").close()
        khp = "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"
        khp0 = open(khp).read().strip()  # numad sets it to 1000 ms and leaves it so: put it back after
        subprocess.run(["numad", "-l", "6"], check=True)  # daemonizes; defaults otherwise (-i 5:15)
        pid = None
        for _ in range(50):
            try:
                pid = int(open("/var/run/numad.pid").read().strip())
                break
            except (OSError, ValueError):
                time.sleep(0.1)

        def stop():
            if pid:
                try:
                    os.kill(pid, signal.SIGTERM)
                except OSError:
                    pass
            time.sleep(1)
            with open(khp, "w") as f:
                f.write(khp0)
            shutil.copy("/var/log/numad.log", os.path.join(R, "numad.log"))
        return pid, stop
    if name in OPTIN:
        state = os.path.join(R, "vnumad-state")
        shutil.rmtree(state, ignore_errors=True)
        os.makedirs(state)
        conf = os.path.join(R, "vnumad.conf")
        with open(conf, "w") as f:  # the defaults (interval 5 s, 256 MiB/s, ...) but where things go
            f.write(f"socket = /run/vnuma-cmp/vnumad.sock\nstate_dir = {state}\nlog_level = debug\n")
        log = open(os.path.join(R, "vnumad.log"), "w")
        t0 = time.monotonic()
        p = subprocess.Popen([os.path.join(BUILD, "vnumad"), "--foreground", "--config", conf],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")

        def stamp():  # each line with the seconds since the start: where the first move's delay goes
            for line in p.stdout:
                log.write(f"{time.monotonic() - t0:8.3f} {line}")
                log.flush()
        reader = threading.Thread(target=stamp, daemon=True)
        reader.start()

        def stop():
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
            reader.join(5)
            log.close()
        return p.pid, stop
    raise SystemExit(f"unknown balancer {name}")


def boot_guests():
    """start both domains once, pinned to the last node, and wait until memtouch runs in both"""
    work = (f"memtouch {COLD_MIB} MiB once and {HOT_MIB} MiB in a loop on guest node 0" if HOT_MIB else
            f"memtouch {MIB0} MiB on guest node 0, {MIB1} MiB on guest node 1")
    say(f"starting {DOMS[0]} and {DOMS[1]} (test guest: Debian kernel + {work}), pinned to node {LAST}; "
        "the guests boot TCG inside TCG (minutes)")
    start_domains()
    t0 = time.monotonic()
    last_note = 0
    while not all(guest_ready(d) for d in DOMS):
        el = time.monotonic() - t0
        for d in DOMS:  # the consoles, for whoever watches the results directory
            shutil.copy(f"/tmp/cmp/{d}.console", os.path.join(R, f"{d}.console"))
        if el - last_note >= 30:
            last_note = el
            lines = {d: [l for l in open(f"/tmp/cmp/{d}.console", errors="replace").read().splitlines() if l.strip()] for d in DOMS}
            say(f"  guests booting, {el:.0f} s: " + "; ".join(f"{d}: {(lines[d][-1][:70] if lines[d] else '(no console output yet)')}" for d in DOMS))
        if el > READY_TIMEOUT:
            return None
        time.sleep(2)
    for d in DOMS:
        shutil.copy(f"/tmp/cmp/{d}.console", os.path.join(R, f"{d}.console"))
    return round(time.monotonic() - t0, 1)


def guest_policies(st):
    """numa_maps policy words of the mappings that hold the guest's cells"""
    words = set()
    for line in open(f"/proc/{st['pid']}/numa_maps"):
        f = line.split()
        start = int(f[0], 16)
        for c in st["cells"]:
            if int(c["hva"], 16) <= start < int(c["hva"], 16) + c["size"]:
                words.add(f[1])
    return sorted(words)


def start_check():
    """Is this the same start for every balancer? >= 99% of each QEMU's memory on the last node,
    every vCPU and the emulator allowed exactly the other nodes' CPUs, QEMU allowed memory on
    every node, the guest RAM's policy the default one, the kernel's balancer off. [] when it
    is, else what is not."""
    bad = []
    allowed = probe.cpulist(cpus_str(ALLOWED))
    every = ",".join(map(str, NODES))
    for d in DOMS:
        st = probe.quick(d)
        tot = sum(st["total_pages"].values())
        on = st["total_pages"].get(str(LAST), 0)
        if not tot or on / tot < 0.99:
            bad.append(f"{d}: {on * PAGE >> 20} of {tot * PAGE >> 20} MiB on node {LAST} (< 99%)")
        for v in st["vcpus"]:
            if probe.cpulist(v["allowed"]) != allowed:
                bad.append(f"{d}: vCPU {v['vcpu']} allowed {v['allowed']}, not {cpus_str(ALLOWED)}")
        status = open(f"/proc/{st['pid']}/status").read()
        emu = [l.split()[1] for l in status.splitlines() if l.startswith("Cpus_allowed_list")]
        mems = [l.split()[1] for l in status.splitlines() if l.startswith("Mems_allowed_list")]
        if not emu or probe.cpulist(emu[0]) != allowed:
            bad.append(f"{d}: emulator allowed {emu}, not {cpus_str(ALLOWED)}")
        if not mems or probe.cpulist(mems[0]) != probe.cpulist(every):
            bad.append(f"{d}: QEMU may have memory on nodes {mems} only (a cpuset left behind)")
        pol = guest_policies(st)
        if pol != ["default"]:
            bad.append(f"{d}: guest RAM policy {pol} (a policy left behind)")
    if open("/proc/sys/kernel/numa_balancing").read().strip() != "0":
        bad.append("kernel.numa_balancing is not 0")
    return bad


def misplace():
    """the misplaced start: everything on the last node, then vCPUs and emulator on the others;
    migratepages is repeated (the guests keep writing: pages under write may not move at once)
    until >= 99% is there, at most 10 times"""
    last, allowed = cpus_str([LAST]), cpus_str(ALLOWED)
    cmds = []
    for d in DOMS:
        cmds += [f"vcpupin {d} {v} {last} --live" for v in (0, 1)] + [f"emulatorpin {d} {last} --live"]
    virsh("; ".join(cmds))
    share, tries = {}, {}

    def to_last(d, n):
        for k in range(n):
            st = probe.quick(d)
            subprocess.run(["migratepages", str(st["pid"]), "all", str(LAST)])
            st = probe.quick(d)
            tot = sum(st["total_pages"].values())
            share[d] = round(st["total_pages"].get(str(LAST), 0) / tot, 4) if tot else None
            tries[d] = tries.get(d, 0) + 1
            if share[d] is not None and share[d] >= 0.995:
                break
    for d in DOMS:
        to_last(d, 10)
    time.sleep(3)  # the guests keep touching their memory, from node LAST's CPUs
    cmds = []
    for d in DOMS:
        cmds += [f"vcpupin {d} {v} {allowed} --live" for v in (0, 1)] + [f"emulatorpin {d} {allowed} --live"]
    virsh("; ".join(cmds))
    # pages the guests touched for the first time meanwhile landed near their vCPUs (seen:
    # 5 of 507 MiB in the 3 s, and the start refused at 99.0%): once more, from where the vCPUs
    # now run, so that every balancer starts from >= 99.5%
    for d in DOMS:
        to_last(d, 3)
    return share, tries


VNUMACTL_SOCK = "/run/vnuma-cmp/vnumad.sock"


def vnctl_status():
    out = subprocess.run([os.path.join(BUILD, "vnumactl"), "--socket", VNUMACTL_SOCK, "status", "--json"],
                         capture_output=True, text=True).stdout
    j = json.loads(out)
    return j.get("return", j)


def warm_up(name, timeout=240):
    """hot-set mode: vnumad runs with the run's domain in advise mode (it samples, talks to the
    agent, changes nothing) until it has sampled it in 3 passes and, for the agent's domain,
    holds a hint set of a second collection (the first one sees every page written since the
    process began as hot): the steady state of a host where vnumad ran before the memory was
    misplaced. Returns (seconds it took, the domain's status) or (None, last status)."""
    dom = OPTIN[name][0]
    virsh(f"metadata {dom} urn:vnuma:balancer:1 --key vnuma --set '<balancer mode=\"advise\"/>' --live")
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        try:
            ds = [x for x in vnctl_status()["domains"] if x["name"] == dom]
        except (ValueError, OSError, KeyError):
            ds = []
        if ds:
            last = ds[0]
            if last.get("age_passes", 0) >= 3 and (name != "agent" or (last.get("agent") or {}).get("hint_sets", 0) >= 2):
                return round(time.monotonic() - t0, 1), last
        time.sleep(1)
    return None, last


def run(name, ready_s):
    r = {"name": name, "notes": [], "guest_ready_s": ready_s}
    t_start = time.monotonic()
    early = None
    if HOT_MIB and HOT_START == "warm" and name in OPTIN:
        early = balancer_start(name)
        r["warm_up_s"], r["warm_up_status"] = warm_up(name)
        if r["warm_up_s"] is None:
            early[1]()
            r["error"] = f"vnumad did not sample {OPTIN[name][0]} 3 times (and get 2 hint sets) within 240 s"
            say(f"[{name}] FAILED: {r['error']}")
            return r
        say(f"[{name}] vnumad warm after {r['warm_up_s']} s in advise mode: {OPTIN[name][0]} sampled "
            f"{r['warm_up_status'].get('age_passes')} passes, agent {json.dumps(r['warm_up_status'].get('agent'))[:160]}")
    r["share_on_last_after_migratepages"], r["migratepages_tries"] = misplace()
    bad = start_check()
    r["start_check"] = bad
    if bad:
        # not the start the others had: no numbers from it (the table says why)
        say(f"[{name}] REFUSED: not the same start: " + "; ".join(bad))
        r["error"] = "unfair start: " + "; ".join(bad)
        if early:
            early[1]()
        return r
    def opt_in():
        virsh("; ".join(f"metadata {d} urn:vnuma:balancer:1 --key vnuma --set '<balancer mode=\"auto\"/>' --live" for d in OPTIN[name]))
    if name in OPTIN and not early:
        opt_in()  # before vnumad starts at t=0
    time.sleep(1)
    s0 = sample(None)
    r["initial"] = {d: s0["doms"][d]["cells"] for d in DOMS}
    say(f"[{name}] misplaced start: QEMU memory on node {LAST}: "
        + ", ".join(f"{d} {s0['doms'][d]['total'].get(LAST, 0) * PAGE >> 20} of "
                    f"{sum(s0['doms'][d]['total'].values()) * PAGE >> 20} MiB" for d in DOMS)
        + f"; vCPUs allowed on nodes {ALLOWED[0]}-{ALLOWED[-1]}; t=0: balancer '{name}' starts, sampling every 1 s for {SECONDS} s")
    bpid, stop = early or balancer_start(name)
    if early:
        opt_in()  # vnumad runs already (warm_up): t=0 is the switch from advise to auto
    b0 = proc_ticks(bpid) if bpid else None
    T0 = time.monotonic()
    samples = []
    prev = s0
    k = 1
    last_say = 0
    while True:
        nxt = T0 + k
        now = time.monotonic()
        if nxt > now:
            time.sleep(nxt - now)
        s = sample(prev)
        s["t"] = round(time.monotonic() - T0, 2)
        if bpid:
            bt = proc_ticks(bpid)
            s["balancer_cpu_s"] = round((bt - b0) / HZ, 2) if bt is not None and b0 is not None else None
        samples.append(s)
        prev = s
        if s["t"] - last_say >= 10 or s["t"] >= SECONDS:
            last_say = s["t"]
            where = "; ".join(f"{d} vCPUs on nodes {sorted({v['node'] for v in s['doms'][d]['vcpus']})}"
                              + (f", hot set {s['doms'][d]['hot_local'] * 100:.0f}% local" if HOT_MIB else "") for d in DOMS)
            say(f"[{name}] t={s['t']:5.1f}s locality {s['locality'] * 100:5.1f}%  ({where})")
        if s["t"] >= SECONDS:
            break
        k += 1
    # balancer-specific evidence before stopping it
    if name == "kernel":
        r["sched_numa"] = {d: {v["vcpu"]: sched_numa(samples[-1]["doms"][d]["pid"], v["tid"])
                               for v in probe.quick(d)["vcpus"]} for d in DOMS}
    if name in OPTIN:
        r["vnumactl_decisions"] = {d: subprocess.run([os.path.join(BUILD, "vnumactl"), "--socket", VNUMACTL_SOCK,
                                                      "decisions", d], capture_output=True, text=True).stdout[-3000:]
                                   for d in OPTIN[name]}
    if bpid:
        bt = proc_ticks(bpid)
        r["balancer_cpu_s"] = round((bt - b0) / HZ, 2) if bt is not None and b0 is not None else samples[-1].get("balancer_cpu_s")
    stop()
    if name in OPTIN:
        try:
            r["journal"] = [json.loads(l) for l in open(os.path.join(R, "vnumad-state", "journal.jsonl")) if l.strip()]
        except OSError:
            r["journal"] = []
    # compact samples: locality, per-cell node shares, vCPU nodes, vmstat
    r["samples"] = [{"t": s["t"], "locality": s["locality"], "weighted": s["weighted"], "vmstat": s["vmstat"],
                     "balancer_cpu_s": s.get("balancer_cpu_s"),
                     "doms": {d: {"cells": s["doms"][d]["cells"], "total": s["doms"][d]["total"],
                                  "hot": s["doms"][d].get("hot"), "hot_local": s["doms"][d].get("hot_local"),
                                  "vcpus": [{k2: v[k2] for k2 in ("vcpu", "cell", "cpu", "node", "allowed", "busy", "share")}
                                            for v in s["doms"][d]["vcpus"]]} for d in DOMS}} for s in samples]
    r["s0"] = {"locality": s0["locality"], "vmstat": s0["vmstat"],
               "doms": {d: {"cells": s0["doms"][d]["cells"], "total": s0["doms"][d]["total"],
                            "hot": s0["doms"][d].get("hot"), "hot_local": s0["doms"][d].get("hot_local"),
                            "vcpus": [{k2: v[k2] for k2 in ("vcpu", "cell", "node", "allowed")} for v in s0["doms"][d]["vcpus"]]}
                        for d in DOMS}}
    r["wall_s"] = round(time.monotonic() - t_start, 1)
    if name in OPTIN:
        virsh("; ".join(f"metadata {d} urn:vnuma:balancer:1 --key vnuma --set '<balancer mode=\"off\"/>' --live" for d in OPTIN[name]), check=False)
    say(f"[{name}] done: final locality {samples[-1]['locality'] * 100:.1f}% ({r['wall_s']} s for this run)")
    return r


def main():
    out = {"config": {"nodes": len(NODES), "node_cpus": NODE_CPUS, "seconds": SECONDS, "cell_mib": CELL_MIB,
                      "hot_mib": HOT_MIB, "cold_mib": COLD_MIB, "start": HOT_START if HOT_MIB else "cold", "optin": {k: list(v) for k, v in OPTIN.items()},
                      "memtouch_mib": [MIB0, MIB1], "domains": list(DOMS), "last_node": LAST, "allowed_nodes": ALLOWED,
                      "kernel": os.uname().release, "hz": HZ,
                      "numad": subprocess.run(["dpkg-query", "-W", "-f=${Version}", "numad"], capture_output=True, text=True).stdout},
           "runs": {}}
    if not shutil.which("numad") and "numad" in RUNS:
        say("numad is not installed on this machine's root: its run is skipped")
        RUNS.remove("numad")
    path = os.path.join(R, "compare.json")
    ready = boot_guests()
    out["config"]["guest_ready_s"] = ready
    if ready is None:
        out["error"] = f"the guests' memtouch did not start within {READY_TIMEOUT} s"
        out["consoles"] = {d: open(f"/tmp/cmp/{d}.console", errors="replace").read()[-3000:] for d in DOMS}
        say(f"FAILED: {out['error']}")
        with open(path, "w") as f:
            json.dump(out, f)
        return 1
    say(f"both guests' memtouch running after {ready} s")
    if HOT_MIB:
        try:
            for d in DOMS:
                hot_set(d)
        except RuntimeError as e:
            out["error"] = str(e)
            say(f"FAILED: {e}")
            with open(path, "w") as f:
                json.dump(out, f)
            return 1
        out["config"]["hot_set"] = HOT_INFO
        say("hot sets: " + "; ".join(f"{d} {i['pages']} pages in {i['ranges']} guest-physical ranges" for d, i in HOT_INFO.items()))
    for name in RUNS:
        try:
            out["runs"][name] = run(name, ready)
        except Exception:
            import traceback
            out["runs"][name] = {"name": name, "error": traceback.format_exc()}
            say(f"[{name}] FAILED: {traceback.format_exc().splitlines()[-1]}")
            subprocess.run(["sysctl", "-q", "-w", "kernel.numa_balancing=0"])
        with open(path, "w") as f:
            json.dump(out, f)
    stop_domains()
    return 0 if all("error" not in r for r in out["runs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
