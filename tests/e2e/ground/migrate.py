#!/usr/bin/env python3
"""Placement that travels with live migration, on the real stack of the proving ground: two
libvirtds on the ground's 4 nodes as tests/e2e/lib-hostb.sh sets them up on the host (host A: the
ground's libvirtd; host B: a second one in its own mount namespace, with its own /etc/libvirt,
/run/libvirt and machine id), each with its own vnumad; vnuma's qemu hook in B's
/etc/libvirt/hooks/qemu.d as make install puts it. Runs after scenarios.sh brought libvirt up.

  30 migrate-placed     M (2 cells of CELL_MIB, a busy vCPU each: spin.elf) is placed on node 3 by
                        vnumad A (nodes 0-2 busy with other work), vnumad A stops keeping its
                        placement (vnumactl stop --keep), node 3 gets busy and nodes 0-2 idle, and
                        M migrates live to B. The hook asked vnumad B: M arrives with each cell's
                        vCPUs and >= 95% of its memory on the node B chose (off node 3: <placed>
                        in its live <state>, the kernel's numa_maps and thread affinity), vnumad B
                        records the arrival as placed and moves < 5% of M's memory in the passes
                        after it.
  31 migrate-unhooked   the same with M2 and no hook (today's path): how much of each cell's
                        memory is at arrival on the node vnumad B keeps it on (its vCPUs' node
                        10 passes later), what vnumad B moves after the arrival, and how long
                        until 99% of each cell's memory is there (numa_maps every 0.5 s from the
                        first reading after the migration returned); the same numbers of 30
                        side by side in docs/benchmarks.md.
  32 migrate-hook-down  with vnumad B stopped, then stopped by SIGSTOP (the hook's 5 s timeout),
                        M2 migrates B -> A -> B and arrives unchanged (no <placed>).
Writes scenario-30-migrate-placed.json, scenario-31-migrate-unhooked.json and
scenario-32-migrate-hook-down.json; with migrate_unhooked=0 (make check's ground-tiers) the first
alone: what 31 and 32 check runs on the host (tests/e2e/migrate.sh, tests/e2e/migrate-hook.sh)."""
import json, os, re, shutil, signal, subprocess, sys, threading, time, uuid

import probe
import scenarios as S

CELL_MIB = int(S.ARGS.get("cell_mib_migrate", 128))
# migrate_unhooked=0 (tests/e2e/ground-tiers.sh): scenario 30 alone; 31 and 32 are run by
# GROUND_SUITE=migrate (the numbers of docs/benchmarks.md, "Placement before arrival")
ARGS_UNHOOKED = S.ARGS.get("migrate_unhooked", "1")
HB = "/tmp/hostb"
B_ID = "5e1f0c2a9d8b4c7e8f6a5b4c3d2e1f0a"
B_SOCK = f"{HB}/run/libvirt-sock"
B_URI = f"qemu+unix:///system?socket={B_SOCK}"
B_VNSOCK = "/run/vnuma-ground-b/vnumad.sock"
B_STATE = os.path.join(S.R, "vnumad-state-b")
HOOK = f"{HB}/etc/hooks/qemu.d/vnuma"
SPIN = "/tmp/spin.elf"


def virsh_b(*a, check=True):
    r = subprocess.run(["virsh", "-q", "-c", B_URI] + list(a), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"virsh(B) {' '.join(a)}: {r.stderr.strip()}")
    return r.stdout


def install_hook():
    """vnuma's hook in B's qemu.d as make install writes it: this build's vnumactl, B's socket"""
    hook = open(os.path.join(S.REPO, "dist/libvirt/vnuma-hook.in")).read()
    hook = hook.replace("@SBINDIR@/vnumactl", f"{S.BUILD}/vnumactl").replace("@SYSCONFDIR@", "/etc")
    with open(HOOK, "w") as f:
        f.write(hook.replace("/run/vnuma/vnumad.sock", B_VNSOCK))
    os.chmod(HOOK, 0o755)


def hostb_start():
    """host B's virtlogd and libvirtd in a new mount namespace; its libvirtd's pid"""
    for d in ("run", "lib/qemu", "cache/qemu/capabilities", "log/qemu", "etc/qemu", "etc/hooks/qemu.d"):
        os.makedirs(f"{HB}/{d}", exist_ok=True)
    with open(f"{HB}/etc/libvirtd.conf", "w") as f:
        f.write(f'host_uuid = "{uuid.uuid4()}"\n')
    shutil.copy("/etc/libvirt/qemu.conf", f"{HB}/etc/qemu.conf")  # the ground's (security_driver)
    for x in os.listdir("/ground-cache/libvirt-caps") if os.path.isdir("/ground-cache/libvirt-caps") else []:
        shutil.copy(os.path.join("/ground-cache/libvirt-caps", x), f"{HB}/cache/qemu/capabilities/")
    with open(f"{HB}/machine-id", "w") as f:
        f.write(B_ID + "\n")
    install_hook()
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                        'h=$1; mount --bind "$h/run" /run/libvirt && mount --bind "$h/lib" /var/lib/libvirt && '
                        'mount --bind "$h/cache" /var/cache/libvirt && mount --bind "$h/log" /var/log/libvirt && '
                        'mount --bind "$h/etc" /etc/libvirt && mount --bind "$h/machine-id" /etc/machine-id && '
                        'virtlogd -d -p "$h/virtlogd.pid" && libvirtd -d -p "$h/libvirtd.pid"', "_", HB],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"host B: {r.stderr[-1000:]}")
    pid = S.wait_until(30, lambda: open(f"{HB}/libvirtd.pid").read().strip() if os.path.exists(f"{HB}/libvirtd.pid") else None, 0.2)
    S.wait_until(60, lambda: subprocess.run(["virsh", "-c", B_URI, "version"], capture_output=True).returncode == 0, 0.5)
    return int(pid)


def vn_b(*a):
    try:
        r = subprocess.run([f"{S.BUILD}/vnumactl", "--socket", B_VNSOCK, *a, "--json"], capture_output=True,
                           text=True, timeout=30)
        j = json.loads(r.stdout)
    except (subprocess.TimeoutExpired, ValueError):
        return None
    return j.get("return", j) if isinstance(j, dict) else j


def start_vnumad_b(libvirtd_pid):
    conf = os.path.join(S.R, "vnumad-b.conf")
    os.makedirs(B_STATE, exist_ok=True)
    with open(conf, "w") as f:
        f.write(f"interval = 1\nevent_delay = 0.2\nsocket = {B_VNSOCK}\nstate_dir = {B_STATE}\n"
                f"log_level = debug\nuri = {B_URI}\n")
    log = open(os.path.join(S.R, "vnumad-b.log"), "a")
    # -r: the root of B's libvirtd (the ground's init chroots: the namespace's own root is not it)
    vn = subprocess.Popen(["nsenter", "-t", str(libvirtd_pid), "-m", "-r", "--", f"{S.BUILD}/vnumad", "--foreground",
                           "--config", conf], stdout=log, stderr=log)
    S.wait_until(30, lambda: vn_b("status") is not None, 0.2)
    return vn


def b_pass():
    return (vn_b("status") or {}).get("pass")


def b_wait_passes(n):
    p0 = b_pass()
    return p0 is not None and S.wait_until(max(60, 10 * n), lambda: (b_pass() or 0) >= p0 + n + 1, 0.2)


def b_log():
    return open(os.path.join(S.R, "vnumad-b.log"), errors="replace").read()


def b_placed_load(dom):
    """the busy CPUs per node vnumad B placed dom against ({node: busy CPUs}), from its log"""
    lines = [l for l in b_log().splitlines() if f"Placed incoming domain '{dom}'" in l]
    return {int(k): float(v) for k, v in re.findall(r"(\d+):([\d.]+)", lines[-1].split("busy CPUs per node", 1)[1])} if lines else {}


def b_journal(dom):
    try:
        lines = open(os.path.join(B_STATE, "journal.jsonl")).read().splitlines()
    except OSError:
        return []
    return [j for j in (json.loads(l) for l in lines if l.strip()) if j.get("domain") == dom]


def hogs(nodes):
    """a busy loop on each CPU of nodes"""
    ps = []
    for n in nodes:
        for c in S.node_cpus(n):
            ps.append(subprocess.Popen(["taskset", "-c", str(c), "sh", "-c", "while :; do :; done"]))
    return ps


def stop_all(ps):
    for p in ps:
        p.kill()
        p.wait()


def placed_on_a(dom, node):
    st = probe.quick(dom)
    ok = all(S.nodes_of(v["allowed"]) == [node] for v in st["vcpus"]) and all(
        c["pages"].get(str(node), 0) >= 0.95 * sum(c["pages"].values()) > 0 for c in st["cells"])
    return st if ok else None


_PADDED = []


def pad_ids():
    """A's libvirt ids one ahead of B's (which numbers from 1): the cgroup machine/qemu-ID-NAME
    of a domain's run on A and of its run on B must differ while both exist. A starts one more
    domain than B receives before every migration here: a small one, once, first."""
    if not _PADDED:
        S.start_dom("idpad", cells=1, cell_mib=16)
        S.virsh("destroy", "idpad", check=False)
        _PADDED.append(True)


def on_node3_at_a(name, vn_a_conf, vlog):
    """name started on A and placed on node 3 by vnumad A (opted in with nodes="3", nodes 0-2 busy);
    vnumad A then stops
    keeping the placement. (its state, the hogs on nodes 0-2) or (None, ...)"""
    # started before the busy loops: a domain start under them took 26-30 s of the ground's time
    # (TCG: eight vCPUs on the host's two cores), against 5 s without; what vnumad A decides is
    # still decided with them running
    pad_ids()
    S.start_dom(name, cells=2, cell_mib=CELL_MIB, kernel=SPIN)
    busy = hogs([0, 1, 2])
    vn = S.start_vnumad(vn_a_conf, vlog)
    S.wait_passes(3, "migrate: vnumad A reads the other load")
    # nodes="3": vnumad A's own choice under the busy loops depends on how it reads a node its
    # threads share (seen: a cell put on busy node 2); the element makes node 3 certain
    S.virsh("metadata", name, "urn:vnuma:balancer:1", "--key", "vnuma", "--set",
            '<balancer mode="auto" nodes="3"/>', "--live")
    st = S.wait_until(240, lambda: placed_on_a(name, 3), 1.0)
    # the record of the placement (with the cells' busy vCPUs) is in the live <state>
    S.wait_until(60, lambda: "busy_vcpus" in S.virsh("metadata", name, "urn:vnuma:state:1", check=False), 0.5)
    subprocess.run([f"{S.BUILD}/vnumactl", "--socket", S.SOCK, "stop", "--keep"], capture_output=True)
    try:
        vn.wait(30)
    except subprocess.TimeoutExpired:
        S.stop_vnumad(vn)
    S.set_mode(name, "auto")  # the element it travels with: no node bound (vnumad A is down)
    return st, busy


def migrate(dom, src_uri, dst_uri):
    """virsh migrate --live from src to dst (virsh opens both: the paths are this namespace's)"""
    t = time.monotonic()
    r = subprocess.run(["virsh", "-q", "-c", src_uri, "migrate", "--live", dom, dst_uri, "--migrateuri",
                        "tcp://127.0.0.1", "--listen-address", "127.0.0.1"], capture_output=True, text=True)
    return r.returncode, r.stderr.strip()[-500:], round(time.monotonic() - t, 1)


def placed_of(dom):
    """{cell: node} of the <placed> in B's live XML of dom, {} none"""
    x = virsh_b("dumpxml", dom, check=False)
    return {int(c): int(n) for c, n in re.findall(r'<[a-z]*:?cell id="(\d+)" node="(\d+)" memory="1"', x)}


def locality(st):
    """per cell: (node of its vCPUs or None, share of its memory there, pages per node)"""
    out = {}
    for c in st["cells"]:
        vn = set()
        for v in st["vcpus"]:
            if v["cell"] == c["cell"]:
                vn.update(S.nodes_of(v["allowed"]))
        node = vn.pop() if len(vn) == 1 else None
        tot = sum(c["pages"].values())
        out[c["cell"]] = (node, round(c["pages"].get(str(node), 0) / tot, 4) if node is not None and tot else 0.0,
                          c["pages"])
    return out


class Follow(threading.Thread):
    """dom's pages per cell and node every 0.5 s (the kernel's numa_maps), from its arrival"""
    def __init__(self, dom):
        super().__init__(daemon=True)
        self.dom, self.t0, self.samples, self.stop = dom, time.monotonic(), [], False

    def run(self):
        while not self.stop:
            try:
                st = probe.quick(self.dom)
                self.samples.append((time.monotonic() - self.t0, {c["cell"]: c["pages"] for c in st["cells"]}))
            except (OSError, ValueError):
                pass
            time.sleep(0.5)


def seconds_to(samples, final, share):
    """the first sample's time when every cell had `share` of its pages on its final node"""
    for t, cells in samples:
        if all(cells.get(c, {}).get(str(n), 0) >= share * max(1, sum(cells.get(c, {}).values()))
               for c, n in final.items()):
            return round(t, 1)
    return None


def arrive_and_measure(dom, num):
    """dom (on node 3 at A, node 3 busy now) migrated to B; what B's kernel and vnumad show:
    where its memory is at arrival on the nodes its cells end up on (where vnumad B keeps them
    10 passes later), what vnumad B moves after the arrival, and when 99% of each cell's memory
    is on that node (from the first reading after the migration returned)"""
    b_wait_passes(4)  # vnumad B has read the host's load with node 3 busy
    rc, err, secs = migrate(dom, "qemu:///system", B_URI)
    num["migrate_rc"], num["migrate_s"] = rc, secs
    if rc != 0:
        num["migrate_error"] = err
        return False
    probe.use_host(B_URI, f"{HB}/run")
    st = probe.quick(dom)  # (its layout, read once through B's libvirtd)
    follow = Follow(dom)
    follow.start()
    num["placed"] = placed_of(dom)
    num["b_busy_cpus_per_node"] = b_placed_load(dom)
    num["at_arrival"] = {c: {"vcpu_node": n, "share": s, "pages": p} for c, (n, s, p) in locality(st).items()}
    b_wait_passes(10)
    S.wait_until(120, lambda: all(v is not None and sh >= 0.99 for v, sh, _ in locality(probe.quick(dom)).values()), 0.5)
    b_wait_passes(3)
    follow.stop = True
    follow.join()
    end = locality(probe.quick(dom))
    final = {c: n for c, (n, _, _) in end.items()}
    num["final"] = {c: {"vcpu_node": n, "share": s} for c, (n, s, _) in end.items()}
    first = follow.samples[0][1] if follow.samples else {}
    num["at_arrival_on_final"] = {c: round(first.get(c, {}).get(str(n), 0) / max(1, sum(first.get(c, {}).values())), 4)
                                  for c, n in final.items()}
    num["seconds_to_99"] = seconds_to(follow.samples, final, 0.99)
    num["samples"] = len(follow.samples)
    moved = sum(j.get("bytes_moved", 0) or 0 for j in b_journal(dom))
    num["b_bytes_moved_after_arrival"] = moved
    num["b_moved_percent"] = round(100.0 * moved / (2 * CELL_MIB << 20), 2)
    num["arrival_placed_logged"] = f"Domain '{dom}' came placed by the qemu hook (arrival-placed)" in b_log()
    num["records_arrival"] = sorted({str(j.get("arrival")) for j in b_journal(dom)})
    probe.use_host("qemu:///system", "/run/libvirt")
    return True


def one_migration(name, conf, vlog, num):
    """name placed on node 3 at A, node 3 made busy and nodes 0-2 idle, migrated to B and
    measured there (num); False when it never got to B"""
    st, busy = on_node3_at_a(name, conf, vlog)
    num["at_a"] = {c: {"vcpu_node": n, "share": s} for c, (n, s, _) in locality(st).items()} if st else None
    stop_all(busy)
    busy = hogs([3])
    try:
        return st is not None and arrive_and_measure(name, num)
    finally:
        stop_all(busy)


def main():
    ev, res = {}, {}
    shutil.copy(os.path.join(os.environ.get("GROUND_CACHE", "/ground-cache"), "spin.elf"), SPIN)
    os.chmod(SPIN, 0o644)
    S.clear_state()
    conf = os.path.join(S.R, "vnumad-migrate.conf")
    with open(conf, "w") as f:
        f.write(f"interval = 1\nevent_delay = 0.2\nsocket = {S.SOCK}\nstate_dir = {S.STATE}\nlog_level = debug\n")
    vlog = open(os.path.join(S.R, "vnumad-migrate.log"), "a")
    subprocess.run(["ip", "link", "set", "lo", "up"])  # QEMU's migration stream: tcp://127.0.0.1
    b_libvirtd = hostb_start()
    vn_b_proc = start_vnumad_b(b_libvirtd)

    # ---- 30: with the hook ----
    num = {}
    ok_run = one_migration("M", conf, vlog, num)
    placed = num.get("placed") or {}
    arr = num.get("at_arrival") or {}
    ok30 = (ok_run and len(placed) == 2 and all(n != 3 for n in placed.values()) and
            all(arr.get(c, {}).get("vcpu_node") == n and arr[c]["share"] >= 0.95 for c, n in placed.items()) and
            num["b_moved_percent"] < 5 and num["arrival_placed_logged"] and num["records_arrival"] == ["placed"])
    res["30"] = S.write(30, "migrate-placed", ok30, num, {"b_log": [l for l in b_log().splitlines() if "'M'" in l][-12:]})
    virsh_b("destroy", "M", check=False)
    S.virsh("undefine", "M", check=False)

    if ARGS_UNHOOKED == "0":
        # make check (ground-tiers): 31 and 32 are the benchmark's (GROUND_SUITE=migrate). What
        # they check runs on the host: e2e/migrate (an arrival without the hook: no <placed>, no
        # "arrival": "placed" record, balanced and put back as any domain), e2e/migrate-hook
        # (vnumad B stopped, or stopped by SIGSTOP: the hook lets the domain in unchanged), and
        # scenario 1 here (a misplaced cell's memory moved home)
        S.stop_vnumad(vn_b_proc)
        for p in ("libvirtd", "virtlogd"):
            subprocess.run(["kill", open(f"{HB}/{p}.pid").read().strip()], capture_output=True)
        return all(res.values())

    # ---- 31: without the hook (today's path) ----
    num = {}
    os.unlink(HOOK)  # libvirtd lists qemu.d at every call: gone at once
    ok_run = one_migration("M2", conf, vlog, num)
    ok31 = ok_run and not num.get("placed") and num.get("seconds_to_99") is not None and "placed" not in num["records_arrival"]
    res["31"] = S.write(31, "migrate-unhooked", ok31, num, {"b_log": [l for l in b_log().splitlines() if "'M2'" in l][-12:]})

    # ---- 32: vnumad B down, then stopped by SIGSTOP: unchanged ----
    num = {}
    install_hook()
    S.stop_vnumad(vn_b_proc)
    runs = []
    for how in ("stopped", "sigstop"):
        rc_back = migrate("M2", B_URI, "qemu:///system")
        if how == "sigstop":
            vn_b_proc = start_vnumad_b(b_libvirtd)
            os.kill(vn_b_proc.pid, signal.SIGSTOP)
        rc, err, secs = migrate("M2", "qemu:///system", B_URI)
        if how == "sigstop":
            os.kill(vn_b_proc.pid, signal.SIGCONT)
        runs.append({"how": how, "back_rc": rc_back[0], "rc": rc, "err": err, "seconds": secs,
                     "placed": placed_of("M2")})
    num["runs"] = runs
    ok32 = all(r["back_rc"] == 0 and r["rc"] == 0 and not r["placed"] for r in runs) and runs[1]["seconds"] >= 5
    res["32"] = S.write(32, "migrate-hook-down", ok32, num, ev)
    virsh_b("destroy", "M2", check=False)
    S.stop_vnumad(vn_b_proc)
    for p in ("libvirtd", "virtlogd"):
        subprocess.run(["kill", open(f"{HB}/{p}.pid").read().strip()], capture_output=True)
    return all(res.values())


if __name__ == "__main__":
    S.watchdog()
    try:
        r = main()
    except Exception:
        import traceback
        traceback.print_exc()
        S.write(30, "migrate-placed", False, {}, {"exception": traceback.format_exc()})
        r = False
    sys.exit(0 if r else 1)
