#!/usr/bin/env python3
"""make demo, inside the proving ground (see ground-demo.sh): two misplaced domains and vnumad.

The start is scenario 1's (tests/e2e/ground/scenarios.py): each domain has 2 cells x 64 MiB,
1 vCPU per cell, its RAM preallocated while QEMU runs pinned to the last node, so all guest
memory is touched there; then its vCPUs are pinned to the other nodes only (an old pinning),
so the memory has to move for the cells to be local. The tables come from the kernel
(/proc/PID/numa_maps of each QEMU, thread affinity) and libvirt (virsh vcpupin), through
probe.py; the decisions from vnumactl and from QEMU (qom-get).
"""
import json, os, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../e2e/ground"))
import probe  # noqa: E402
import scenarios as sc  # noqa: E402  (scenario 1's helpers: start_dom, set_mode, cell_view, ...)

R = os.environ.get("GROUND_RESULTS", "/results")
OUT = open(os.path.join(R, "demo.out"), "a", buffering=1)
SOCK = "/run/vnuma-demo/vnumad.sock"
STATE = os.path.join(R, "demo-state")
DOMS = ("demo-a", "demo-b")
NODES = sc.NODES
LAST = NODES[-1]
ALLOWED = NODES[:-1]
VNUMACTL = os.path.join(sc.BUILD, "vnumactl")
QOM = '{"execute":"qom-get","arguments":{"path":"/objects/vnuma-decision","property":"identity"}}'


def say(msg):
    """a progress line (tests/demo.sh prefixes it with its clock)"""
    OUT.write(f"@ {msg}\n")
    sc.log(msg)


def show(text=""):
    OUT.write(text + "\n")


def nodes_str(nodes):
    nodes = sorted(nodes)
    if len(nodes) > 1 and nodes == list(range(nodes[0], nodes[-1] + 1)):
        return f"{nodes[0]}-{nodes[-1]}"
    return ",".join(map(str, nodes))


def virsh_batch(cmds):
    """several virsh commands in one virsh process (each virsh start costs ~2 s in the ground)"""
    return sc.virsh("; ".join(cmds))


def state(d):
    """probe.quick (kernel) plus libvirt's pins, in one virsh call"""
    st = probe.quick(d)
    pins, emu = {}, None
    for line in virsh_batch([f"vcpupin {d} --live", f"emulatorpin {d} --live"]).splitlines():
        p = line.split()
        if len(p) >= 2 and p[0].isdigit():
            pins[p[0]] = p[1]
        elif p:  # emulatorpin -q prints only the CPU list ("*: LIST" without -q)
            emu = p[-1]
    st.update({"vcpupin": pins, "emulatorpin": emu})
    return st


def parallel(fn, items):
    """fn(item) for every item in threads (virsh and QEMU start-up overlap); re-raises"""
    import threading
    res, errs = {}, []

    def one(x):
        try:
            res[x] = fn(x)
        except Exception as e:  # noqa: BLE001
            errs.append(e)
    ts = [threading.Thread(target=one, args=(x,)) for x in items]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise errs[0]
    return res


def table(title):
    show(title)
    show("  per cell: its memory per host node in MiB (kernel: /proc/PID/numa_maps of the QEMU process),")
    show("  'local' = share of it on the nodes its vCPUs may run on, the vCPU's pin (virsh vcpupin --live)")
    show("  and the thread's affinity and current CPU (kernel: /proc/PID/task/TID/status, stat)")
    show()
    head = f"  {'domain':<8} {'cell':>4} " + "".join(f"{'node' + str(n):>8}" for n in NODES)
    show(head + f"  {'local':>6}   {'vCPU':>4} {'vcpupin':<8} {'affinity (nodes)':<18} {'on CPU':>6}")
    sts = parallel(state, DOMS)
    for d in DOMS:
        st = sts[d]
        for c in st["cells"]:
            vcpus = [v for v in st["vcpus"] if v["cell"] == c["cell"]]
            vnodes = sorted({n for v in vcpus for n in sc.nodes_of(v["allowed"])})
            tot = sum(c["pages"].values())
            loc = sum(c["pages"].get(str(n), 0) for n in vnodes) / tot if tot else 0.0
            mib = "".join(f"{c['pages'].get(str(n), 0) * 4096 / 2**20:8.1f}" for n in NODES)
            for i, v in enumerate(vcpus):
                pre = f"  {d:<8} {c['cell']:>4} {mib}  {loc * 100:5.1f}%" if i == 0 else " " * (17 + 8 * len(NODES) + 8)
                aff = f"{v['allowed']} ({nodes_str(sc.nodes_of(v['allowed']))})"
                show(f"{pre}   {v['vcpu']:>4} {st['vcpupin'].get(str(v['vcpu']), '?'):<8} {aff:<18} {v['cpu']:>6}")
        show(f"  {'':<8} {'':>4} emulator thread pin (virsh emulatorpin): {st['emulatorpin']}")
    show()


def progress_line(t):
    parts = []
    done = True
    for d in DOMS:
        cv = sc.cell_view(probe.quick(d))
        cells = []
        for c in cv:
            if c["node"] is None:
                cells.append(f"cell{c['cell']} vCPUs on nodes {nodes_str(c['vcpu_nodes']) or '?'}")
                done = False
            else:
                cells.append(f"cell{c['cell']} -> node{c['node']} {c['share'] * 100:3.0f}% local")
                done &= c["node"] in ALLOWED and c["share"] >= 0.95
        parts.append(f"{d}: " + ", ".join(cells))
    say(f"t+{t:4.1f}s  " + "; ".join(parts))
    return done


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return (r.stdout + r.stderr).rstrip("\n")


def main():
    # vnumad: interval 1 s (the default is 5 s) so that the demo is short
    os.makedirs(STATE, exist_ok=True)
    for f in os.listdir(STATE):
        os.unlink(os.path.join(STATE, f))
    conf = os.path.join(R, "demo-vnumad.conf")
    with open(conf, "w") as f:
        f.write(f"interval = 1\nevent_delay = 0.2\nsocket = {SOCK}\nstate_dir = {STATE}\n")
    vlog = open(os.path.join(R, "demo-vnumad.log"), "w")
    say(f"starting vnumad ({sc.BUILD}/vnumad --foreground, pass interval 1 s for the demo; the default is 5 s)")
    vn = subprocess.Popen([f"{sc.BUILD}/vnumad", "--foreground", "--config", conf], stdout=vlog, stderr=vlog)
    if not sc.wait_until(20, lambda: os.path.exists(SOCK), 0.2):
        say(f"FAILED: vnumad's control socket did not appear (exit status {vn.poll()}; log results/demo-vnumad.log)")
        return 1

    cpus_allowed, cpus_last = sc.cpus_str(ALLOWED), sc.cpus_str([LAST])
    say(f"starting {' and '.join(DOMS)} (together): 2 cells x 64 MiB each, 1 vCPU per cell, RAM preallocated "
        f"while QEMU runs pinned to node {LAST} (CPUs {cpus_last}); about 15 s (TCG inside TCG)")
    t = time.monotonic()

    def start(d):
        sc.start_dom(d, cells=2, cell_mib=64, cpuset=cpus_allowed, emulatorpin=cpus_last, vcpupin=cpus_last)
        return probe.quick(d)  # also learns the cell layout (QMP), once per domain
    sts = parallel(start, DOMS)
    say(f"{' and '.join(DOMS)} running ({time.monotonic() - t:.1f} s)")
    for d in DOMS:
        st = sts[d]
        tot = sum(sum(c["pages"].values()) for c in st["cells"])
        on = sum(c["pages"].get(str(LAST), 0) for c in st["cells"])
        if tot and on / tot < 0.99:
            say(f"{d}: {100 * (1 - on / tot):.1f}% of its RAM was first touched elsewhere: migratepages {st['pid']} all {LAST}")
            subprocess.run(["migratepages", str(st["pid"]), "all", str(LAST)])
    say(f"pinning every vCPU and the emulator thread to nodes {nodes_str(ALLOWED)} (CPUs {cpus_allowed}): "
        f"virsh vcpupin DOM N {cpus_allowed} --live; the memory stays on node {LAST}")
    cmds = []
    for d in DOMS:
        cmds += [f"vcpupin {d} {v['vcpu']} {cpus_allowed} --live" for v in sts[d]["vcpus"]]
        cmds.append(f"emulatorpin {d} {cpus_allowed} --live")
    virsh_batch(cmds)
    show()
    table(f"BEFORE: all guest memory on node {LAST}, vCPUs allowed on nodes {nodes_str(ALLOWED)} only (not opted in yet)")

    say("opting both domains in: virsh metadata DOM urn:vnuma:balancer:1 --key vnuma "
        "--set '<balancer mode=\"auto\"/>' --live")
    t0 = time.monotonic()
    virsh_batch([f"metadata {d} urn:vnuma:balancer:1 --key vnuma --set '<balancer mode=\"auto\"/>' --live" for d in DOMS])
    done = False
    while time.monotonic() - t0 < 60:
        time.sleep(1)
        if progress_line(time.monotonic() - t0):
            done = True
            break
    conv_s = time.monotonic() - t0
    if done:
        say(f"every cell has >= 95% of its memory on its vCPUs' node after {conv_s:.1f} s")
    else:
        say("NOT converged within 60 s (see build/ground/results-demo/demo-vnumad.log)")
    show()
    table("AFTER:")

    show("The decisions and the rules behind them (vnumactl, newest first; a record every pass, the")
    show("passes that changed nothing after the last action are folded into one line):")
    for d in DOMS:
        show(f"$ vnumactl decisions {d}")
        out = run([VNUMACTL, "--socket", SOCK, "decisions", d]).splitlines()
        acted = [i for i, l in enumerate(out) if any(f" {w}:" in l or f" {w} " in l for w in ("acted", "moving"))]
        keep = sorted({0} | set(acted)) if acted else list(range(min(3, len(out))))
        prev = -1
        for i in keep:
            if i - prev > 1:
                n = i - prev - 1
                show(f"  ... {n} more pass{'' if n == 1 else 'es'} with the same decision")
            show("  " + out[i])
            prev = i
        if keep and keep[-1] < len(out) - 1:
            show(f"  ... {len(out) - 1 - keep[-1]} earlier records")
    show()
    show("The same record inside QEMU, where anyone with libvirt access can read it:")
    show(f"$ virsh qemu-monitor-command {DOMS[0]} '{QOM}'")
    raw = run(probe.VIRSH + ["qemu-monitor-command", DOMS[0], QOM])
    show(raw)
    try:
        rec = json.loads(json.loads(raw)["return"])
        show(f"(the \"return\" string decoded: pass {rec.get('pass')}, action {rec.get('action')}; per cell: "
             + "; ".join(f"cell {c['cell']} node {c['node']} reason {c['reason']} rules {','.join(c.get('rules') or [])}"
                         for c in rec.get("cells", [])) + ")")
    except (ValueError, KeyError, TypeError):
        pass
    moved = 0
    for line in open(os.path.join(STATE, "journal.jsonl")):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("domain") in DOMS and r.get("action") in ("acted", "moving"):
            moved += r.get("bytes_moved") or 0
    show()
    show(f"vnumad moved {moved / 2**20:.1f} MiB of guest memory in {conv_s:.1f} s; "
         f"log and journal: build/ground/results-demo/demo-vnumad.log, demo-state/journal.jsonl")
    vn.terminate()
    try:
        vn.wait(15)
    except subprocess.TimeoutExpired:
        vn.kill()
    return 0 if done else 1


if __name__ == "__main__":
    try:
        rc = main()
    except Exception:
        import traceback
        say("FAILED: the in-ground demo script crashed:")
        show(traceback.format_exc())
        rc = 1
    sys.exit(rc)
