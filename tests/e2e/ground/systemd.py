#!/usr/bin/env python3
"""Issue 15: vnumad as an operator runs it, in a proving ground booted with Debian's systemd 252
as PID 1 (tests/e2e/ground-systemd.sh; run-ground.sh --init systemd), the host package installed
from the .deb the suite built, beside the monolithic libvirtd of Debian 12 (libvirtd.socket
activation, systemd-machined registering the guests in machine.slice).

  17-systemd-install     dpkg -i starts vnumad (postinst, no policy-rc.d): active through
                         Type=notify, connected to libvirt
  18-systemd-reload      a changed vnumad.conf (interval, metrics_file into the node
                         exporter's directory) applied by `systemctl reload` (SIGHUP), same PID
  19-systemd-balance     under the unit's hardening vnumad pins and moves a misplaced guest
                         (memory on the last node, vCPUs allowed elsewhere) until it is local
  20-systemd-journal     `journalctl -u vnumad -p warning` shows the warning for a bad
                         <balancer> element and no info lines; -p info has the decisions
  21-systemd-libvirtd    `systemctl restart libvirtd`: vnumad stays up (same PID), reconnects
                         and decides again
  22-systemd-sigkill     SIGKILL: Restart=on-failure brings vnumad back; it finds the first
                         originals in the live metadata and keeps them
  23-systemd-stop        `systemctl stop` puts the original pins back within TimeoutStopSec;
                         `systemctl start` returns once vnumad said READY=1 (Type=notify): active
Every verdict is systemd's (systemctl show, journalctl), the kernel's or libvirt's.
"""
import glob
import json
import os
import re
import subprocess
import time

import probe
import scenarios as S

UNIT = "vnumad.service"
CONF = "/etc/vnuma/vnumad.conf"
SOCK = "/run/vnuma/vnumad.sock"
METRICS = "/var/lib/prometheus/node-exporter/vnuma.prom"


def run(*cmd, check=False):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: rc {r.returncode}: {r.stderr.strip()[-400:]}")
    return r


def show(unit, *props):
    out = run("systemctl", "show", unit, *[f"--property={p}" for p in props]).stdout
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)


def journal(*args):
    return run("journalctl", "-u", UNIT, "--no-pager", "-o", "cat", *args).stdout.splitlines()


def vnctl(*args):
    r = run("vnumactl", "--socket", SOCK, *args)  # the packaged one
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None
    return j.get("return", j) if isinstance(j, dict) else j


def status_dom(name):
    return S.status_dom(vnctl("status", "--json"), name)


def active_pid():
    p = show(UNIT, "ActiveState", "MainPID")
    return int(p.get("MainPID", "0")) if p.get("ActiveState") == "active" else 0


def main():
    out = []
    debs = S.ARGS.get("debs", "")
    host_deb = (glob.glob(os.path.join(debs, "vnuma_*.deb")) or [None])[0]
    last = S.NODES[-1]
    allowed = S.NODES[:-1]

    # ---- 17. install: the package starts vnumad, Type=notify reaches active
    num, ev = {"pid1": open("/proc/1/comm").read().strip()}, {}
    # this machine's Docker policy-rc.d (exit 101) would keep the postinst from starting
    # vnumad; an operator's host has none (the ground's copy is an overlay: the host keeps it)
    if os.path.exists("/usr/sbin/policy-rc.d"):
        os.unlink("/usr/sbin/policy-rc.d")
    t = time.monotonic()
    r = run("dpkg", "-i", host_deb) if host_deb else None
    num["dpkg_rc"] = r.returncode if r else None
    ev["dpkg"] = (r.stdout + r.stderr)[-2000:] if r else f"no vnuma_*.deb in {debs}"
    up = S.wait_until(60, lambda: active_pid() or None, 0.5)
    num["active_after_s"] = round(time.monotonic() - t, 1)
    props = show(UNIT, "Type", "ActiveState", "SubState", "MainPID", "NRestarts", "NotifyAccess",
                 "UnitFileState", "TimeoutStopUSec", "FragmentPath")
    num["unit"] = props
    connected = S.wait_until(30, lambda: any("Connected to qemu:///system" in l for l in journal()), 0.5)
    ev["journal"] = journal()[-20:]
    ok = (num["pid1"] == "systemd" and num["dpkg_rc"] == 0 and bool(up) and props.get("Type") == "notify"
          and props.get("SubState") == "running" and props.get("UnitFileState") == "enabled"
          and props.get("FragmentPath") == "/lib/systemd/system/vnumad.service" and bool(connected))
    out.append(S.write(17, "systemd-install", ok, num, ev))
    if not up:
        return out
    pid0 = up

    # ---- 18. reload: interval 1 s and a metrics file, applied by SIGHUP (ExecReload)
    num, ev = {}, {}
    with open(CONF, "a") as f:
        f.write("\ninterval = 1\nevent_delay = 0.2\nmetrics_file = %s\n" % METRICS)
    r = run("systemctl", "reload", UNIT)
    num["reload_rc"] = r.returncode
    reloaded = S.wait_until(20, lambda: any("Reloaded /etc/vnuma/vnumad.conf" in l for l in journal()), 0.5)
    metrics = S.wait_until(20, lambda: os.path.exists(METRICS) and "vnuma_passes_total" in open(METRICS).read(), 0.5)
    p1 = (vnctl("status", "--json") or {}).get("pass", 0)
    time.sleep(3)
    p2 = (vnctl("status", "--json") or {}).get("pass", 0)
    num.update({"same_pid": active_pid() == pid0, "metrics_file": bool(metrics), "passes_in_3s": p2 - p1,
                "interval_s": (vnctl("status", "--json") or {}).get("interval_s")})
    ev["journal"] = journal()[-10:]
    ok = (r.returncode == 0 and bool(reloaded) and num["same_pid"] and bool(metrics)
          and num["interval_s"] == 1.0 and num["passes_in_3s"] >= 2)
    out.append(S.write(18, "systemd-reload", ok, num, ev))

    # ---- 19. balance a misplaced guest under the unit's hardening
    num, ev = {}, {}
    orig = S.misplace("sd-a", allowed, cell_mib=64)
    orig_pins = {"vcpupin": orig["vcpupin"], "emulatorpin": orig["emulatorpin"]}
    ev["cgroup"] = open(f"/proc/{orig['pid']}/cgroup").read().strip()
    num["in_machine_slice"] = "machine.slice" in ev["cgroup"]
    ev["before"] = S.cell_view(orig)
    t = time.monotonic()
    S.set_mode("sd-a", "auto")

    conv = S.wait_until(120, lambda: S.local_on("sd-a", allowed), 1.0)
    num["seconds_to_converge"] = round(time.monotonic() - t, 1)
    num["final"] = [(c["node"], c["share"]) for c in (conv or [])]
    d = status_dom("sd-a") or {}
    num["bytes_moved"] = d.get("counters", {}).get("bytes_moved")
    denied = [l for l in journal() if re.search(r"ermission denied|not permitted|EPERM|EACCES", l)]
    ev["denied"] = denied[-10:]
    ev["status"] = d
    ok = bool(conv) and (num["bytes_moved"] or 0) > 0 and not denied and num["in_machine_slice"]
    out.append(S.write(19, "systemd-balance", ok, num, ev))

    # ---- 20. journal priorities: a bad <balancer> element is a warning, decisions are info
    num, ev = {}, {}
    S.start_dom("sd-bad", cells=1, cell_mib=16, vcpupin=S.cpus_str([0]))
    S.virsh("metadata", "sd-bad", "urn:vnuma:balancer:1", "--key", "vnuma", "--set",
            '<balancer mode="sometimes"/>', "--live")
    warn = S.wait_until(20, lambda: [l for l in journal("-p", "warning") if "sd-bad" in l], 0.5)
    info = journal("-p", "info")
    err = journal("-p", "err")
    jj = [json.loads(l) for l in run("journalctl", "-u", UNIT, "--no-pager", "-o", "json").stdout.splitlines() if l.strip()]
    prio = sorted({e.get("PRIORITY") for e in jj if "Leaving 'sd-bad' alone" in e.get("MESSAGE", "")})
    num.update({"warning_lines_for_sd_bad": len(warn or []),
                "decisions_in_warning": sum("decision domain=" in l for l in journal("-p", "warning")),
                "decisions_in_info": sum("decision domain='sd-a'" in l for l in info),
                "sd_bad_in_err": sum("sd-bad" in l for l in err), "priority_field": prio})
    ev.update({"warning": (warn or [])[:5], "err": err[-5:]})
    ok = (bool(warn) and num["decisions_in_warning"] == 0 and num["decisions_in_info"] > 0
          and num["sd_bad_in_err"] == 0 and prio == ["4"])
    out.append(S.write(20, "systemd-journal", ok, num, ev))
    S.virsh("destroy", "sd-bad", check=False)

    # ---- 21. libvirtd restarted: vnumad stays, reconnects, decides again
    num, ev = {}, {}
    n_conn = sum("Connected to qemu:///system" in l for l in journal())
    before = show(UNIT, "MainPID", "NRestarts")
    r = run("systemctl", "restart", "libvirtd.service")
    num["restart_rc"] = r.returncode
    again = S.wait_until(60, lambda: sum("Connected to qemu:///system" in l for l in journal()) > n_conn, 0.5)
    p0 = (vnctl("status", "--json") or {}).get("pass", 0)
    decided = S.wait_until(30, lambda: (lambda d: d if d and (d.get("last_decision") or {}).get("pass", 0) > p0 else None)(status_dom("sd-a")), 1.0)
    after = show(UNIT, "MainPID", "NRestarts")
    num.update({"reconnected": bool(again), "decided_after": bool(decided), "pid_kept": before == after,
                "lost_line": any("Lost the connection to libvirtd" in l for l in journal())})
    ev["journal"] = journal()[-8:]
    ok = r.returncode == 0 and bool(again) and bool(decided) and num["pid_kept"]
    out.append(S.write(21, "systemd-libvirtd", ok, num, ev))

    # ---- 22. SIGKILL: Restart=on-failure, and the originals survive in the live metadata
    num, ev = {}, {}
    pid_k = active_pid()
    meta0 = S.virsh("metadata", "sd-a", "urn:vnuma:state:1", check=False)
    orig_meta = S.original_pins(meta0)
    run("systemctl", "kill", "--kill-whom=main", "--signal=SIGKILL", UNIT)
    back = S.wait_until(30, lambda: (lambda p: p if p and p != pid_k else None)(active_pid()), 0.5)
    props = show(UNIT, "NRestarts", "ActiveState", "Result")
    S.wait_until(20, lambda: (status_dom("sd-a") or {}).get("last_decision"), 1.0)
    meta1 = S.virsh("metadata", "sd-a", "urn:vnuma:state:1", check=False)
    want = {str(v): probe.cpulist(c) for v, c in orig_pins["vcpupin"].items()}
    num.update({"restarted": bool(back), "NRestarts": props.get("NRestarts"),
                "originals_before_kill": orig_meta == want, "originals_after_restart": S.original_pins(meta1) == want})
    ev.update({"metadata_after_restart": meta1, "props": props})
    ok = bool(back) and props.get("NRestarts") == "1" and num["originals_before_kill"] and num["originals_after_restart"]
    out.append(S.write(22, "systemd-sigkill", ok, num, ev))

    # ---- 23. systemctl stop puts the original pins back within TimeoutStopSec
    num, ev = {}, {}
    t = time.monotonic()
    r = run("systemctl", "stop", UNIT)
    took = time.monotonic() - t
    st = probe.state("sd-a")
    props = show(UNIT, "ActiveState", "Result", "ExecMainStatus", "TimeoutStopUSec")
    num.update({"stop_rc": r.returncode, "stop_s": round(took, 1), "props": props,
                "pins_restored": st["vcpupin"] == orig_pins["vcpupin"],
                "emulator_restored": st["emulatorpin"] == orig_pins["emulatorpin"]})
    ev.update({"pins_now": {"vcpupin": st["vcpupin"], "emulatorpin": st["emulatorpin"]}, "originals": orig_pins,
               "journal": journal()[-6:]})
    limit = 90.0
    m = re.fullmatch(r"(?:(\d+)min ?)?(\d+)s", props.get("TimeoutStopUSec", ""))
    if m:
        limit = int(m.group(1) or 0) * 60 + int(m.group(2))
    num["timeout_stop_s"] = limit
    # start again: with Type=notify, systemctl start returns when vnumad sent READY=1 (its
    # control socket listens), so it is active and answers at once, not some time later
    t = time.monotonic()
    r2 = run("systemctl", "start", UNIT)
    num["start_s"] = round(time.monotonic() - t, 1)
    num["after_start"] = show(UNIT, "ActiveState", "SubState")
    num["answers_at_once"] = vnctl("status", "--json") is not None
    ok = (r.returncode == 0 and took < limit and props.get("Result") == "success" and props.get("ExecMainStatus") == "0"
          and num["pins_restored"] and num["emulator_restored"] and r2.returncode == 0
          and num["after_start"].get("ActiveState") == "active" and num["answers_at_once"])
    run("systemctl", "stop", UNIT)
    out.append(S.write(23, "systemd-stop", ok, num, ev))
    return out


if __name__ == "__main__":
    S.log("systemd suite start")
    res = main()
    S.log(f"systemd suite end: {sum(bool(x) for x in res)}/{len(res)} passed")
    raise SystemExit(0 if res and all(res) else 1)
