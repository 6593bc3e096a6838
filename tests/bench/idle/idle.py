#!/usr/bin/env python3
"""Inside the ground for tests/bench/idle-cost.sh: idle-pass cost of each vnumad build."""
import os, re, signal, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../e2e/ground"))
import probe

R = os.environ.get("GROUND_RESULTS", "/results")
ARGS = dict(a.split("=", 1) for a in sys.argv[1:] if "=" in a)
BINS = [b.split(":", 1) for b in ARGS["bins"].split(";")]
NDOM, CELL_MIB, SECS = int(ARGS.get("domains", 2)), int(ARGS.get("cell_mib", 256)), float(ARGS.get("seconds", 40))
LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../vm-images/ground/lib.sh")
SOCK = "/run/vnuma-bench/vnumad.sock"
HZ = os.sysconf("SC_CLK_TCK")


def sh(cmd):
    subprocess.run(["bash", "-c", f". {LIB}; {cmd}"], check=True)


def cpus(n):
    return open(f"/sys/devices/system/node/node{n}/cpulist").read().strip()


def metrics(path):
    out = {}
    try:
        for l in open(path):
            m = re.match(r"(vnuma_pass_duration_seconds_(?:count|sum)|vnuma_domain_memory_scans_total)(\{[^}]*\})? (\S+)", l)
            if m:
                out[m.group(1)] = out.get(m.group(1), 0) + float(m.group(3))
    except OSError:
        pass
    return out


def ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def run(path, tag, secs, restore="no"):
    conf = f"/tmp/vnumad-{tag}.conf"
    mfile = f"/tmp/vnuma-{tag}.prom"
    open(conf, "w").write(f"interval = 5\nsocket = {SOCK}\nstate_dir = /tmp/state-{tag}\n"
                          f"metrics_file = {mfile}\nrestore_on_exit = {restore}\n")
    log = open(os.path.join(R, f"vnumad-{tag}.log"), "w")
    vn = subprocess.Popen([path, "--foreground", "--config", conf], stdout=log, stderr=log)
    return vn, mfile


def main():
    doms = [f"idle{i}" for i in range(NDOM)]
    for i, d in enumerate(doms):
        node = 1 + i % 3
        sh(f"dom_start {d} cells=2 cell_mib={CELL_MIB} vcpupin={cpus(node)} emulatorpin={cpus(node)} optin=auto")
    # balance once with the first build, then keep the placement (restore_on_exit = no)
    name0, path0 = BINS[0]
    vn, _ = run(path0, "settle", 0)
    time.sleep(25)
    vn.send_signal(signal.SIGTERM); vn.wait(30)
    rows = []
    placed = {d: [c["pages"] for c in probe.quick(d)["cells"]] for d in doms}
    for name, path in BINS:
        vn, mfile = run(path, name, SECS)
        time.sleep(12)  # start-up, first passes (the cache of the RAM layout, first counts)
        m0, t0, w0 = metrics(mfile), ticks(vn.pid), time.monotonic()
        time.sleep(SECS)
        m1, t1, w1 = metrics(mfile), ticks(vn.pid), time.monotonic()
        vn.send_signal(signal.SIGTERM); vn.wait(30)
        passes = m1.get("vnuma_pass_duration_seconds_count", 0) - m0.get("vnuma_pass_duration_seconds_count", 0)
        psum = m1.get("vnuma_pass_duration_seconds_sum", 0) - m0.get("vnuma_pass_duration_seconds_sum", 0)
        scans = m1.get("vnuma_domain_memory_scans_total", 0) - m0.get("vnuma_domain_memory_scans_total", 0)
        cpu = (t1 - t0) / HZ
        rows.append((name, int(passes), cpu, cpu / passes * 1000 if passes else 0, psum / passes * 1000 if passes else 0, int(scans)))
    after = {d: [c["pages"] for c in probe.quick(d)["cells"]] for d in doms}
    with open(os.path.join(R, "idle-cost.txt"), "w") as f:
        f.write(f"# {NDOM} idle domains x 2 cells x {CELL_MIB} MiB, interval 5 s, {SECS:.0f} s per build (TCG ground)\n")
        f.write("build        passes  cpu_s  cpu_ms/pass  pass_ms  status_queries\n")
        for r in rows:
            f.write("%-12s %6d %6.2f %12.1f %8.1f %15d\n" % r)
        f.write(f"# placement unchanged while measured: {placed == after}\n")
    print(open(os.path.join(R, "idle-cost.txt")).read())


if __name__ == "__main__":
    main()
