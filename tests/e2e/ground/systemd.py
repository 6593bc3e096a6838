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
  25-systemd-restart     `systemctl restart vnumad`: the old vnumad learns from systemd that its
                         SIGTERM is a restart's and restores nothing, the new one carries out
                         nothing: pins, pages per node and the saved originals are unchanged
  26-systemd-upgrade     the same across `dpkg -i` of the package again (prerm upgrade leaves
                         vnumad running, postinst restarts it)
  23-systemd-stop        `systemctl stop` puts the original pins back within TimeoutStopSec;
                         `systemctl start` returns once vnumad said READY=1 (Type=notify): active
  24-systemd-modular     the modular layout: libvirtd's units stopped and disabled, virtqemud's
                         sockets listening (libvirt's daemon built from Debian's source package,
                         tests/lib/build-virtqemud.sh); vnumad's connection socket-activates
                         virtqemud, a misplaced guest started there is balanced, a virtqemud
                         restart is survived and a stopped virtqemud is activated again by
                         vnumad's reconnection
Every verdict is systemd's (systemctl show, journalctl), the kernel's or libvirt's.
"""
import glob
import json
import os
import re
import shutil
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
    # man-db's dpkg trigger (mandb over this machine's 9p root, in the ground's TCG) is none of
    # the package's doing: off, as man-db's own switch turns it off (the overlay's copy only)
    if os.path.exists("/var/lib/man-db/auto-update"):
        os.unlink("/var/lib/man-db/auto-update")
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
    # the passes go on after the reload: 3 more of them (a wait for the passes, not a 3 s window
    # they must fall in: issue 28). How long they took is reported, never a bound: how often
    # passes come is a rate, which belongs in docs/benchmarks.md; status's interval_s says the
    # new interval is the daemon's
    p1 = (vnctl("status", "--json") or {}).get("pass", 0)
    t1 = time.monotonic()
    p2 = S.wait_until(60, lambda: (lambda p: p if p >= p1 + 3 else None)((vnctl("status", "--json") or {}).get("pass", 0)), 0.2)
    secs = round(time.monotonic() - t1, 1)
    if not p2:
        S.log(f"vnumad did not run 3 passes after pass {p1} within 60 s (systemd-reload)")
    num.update({"same_pid": active_pid() == pid0, "metrics_file": bool(metrics), "passes_seen": bool(p2),
                "seconds_for_3_passes": secs, "interval_s": (vnctl("status", "--json") or {}).get("interval_s")})
    ev["journal"] = journal()[-10:]
    ok = (r.returncode == 0 and bool(reloaded) and num["same_pid"] and bool(metrics)
          and num["interval_s"] == 1.0 and bool(p2))
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
    # what the mover moved reaches the domain's counters at the pass after it (mover_take):
    # a move done between two passes is seen local before it is counted
    S.wait_until(60, lambda: ((status_dom("sd-a") or {}).get("counters") or {}).get("bytes_moved"), 0.5)
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
                "lost_line": any("Lost the connection to libvirt (qemu:///system)" in l for l in journal())})
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

    # ---- 25. systemctl restart, 26. a package upgrade: every guest stays where it is
    out.append(keeps_across(25, "systemd-restart", lambda: run("systemctl", "restart", UNIT), want))
    out.append(keeps_across(26, "systemd-upgrade", lambda: run("dpkg", "-i", host_deb), want))

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

    out.append(modular(S.ARGS.get("virtqemud", ""), allowed))
    return out


JOURNAL_FILE = "/var/lib/vnuma/journal.jsonl"


def journal_records(skip):
    try:
        lines = open(JOURNAL_FILE).read().splitlines()
    except OSError:
        return 0, []
    return len(lines), [json.loads(l) for l in lines[skip:] if l.strip()]


def keeps_across(idx, name, action, originals):
    """A restart of vnumad (action: `systemctl restart`, or `dpkg -i` of the package again,
    whose prerm (upgrade) leaves vnumad running and whose postinst restarts it): the old vnumad
    learns from systemd that its SIGTERM is a restart's and restores nothing; the new one finds
    the originals in the live metadata and carries out nothing: the guest's pins and pages per
    node are what they were, its originals are still the first ones. The host's pgmigrate_success
    over the restart is reported, not judged: compaction migrates pages too."""
    num, ev = {}, {}
    pid0 = active_pid()
    st0 = probe.state("sd-a")
    view0 = [(c["node"], round(c["share"], 2)) for c in S.cell_view(st0)]
    n_log = len(journal())
    n_rec, _ = journal_records(0)
    mig0 = S.vmstat().get("pgmigrate_success", 0)
    t = time.monotonic()
    r = action()
    num["rc"] = r.returncode
    ev["output"] = (r.stdout + r.stderr)[-1500:]
    back = S.wait_until(60, lambda: (lambda p: p if p and p != pid0 else None)(active_pid()), 0.5)
    num["new_pid_after_s"] = round(time.monotonic() - t, 1)
    # three passes of the new vnumad (its own pass count: it started at 0), the guest tracked
    decided = S.wait_until(90, lambda: ((vnctl("status", "--json") or {}).get("pass", 0) >= 3
                                        and status_dom("sd-a")) or None, 1.0)
    st1 = probe.state("sd-a")
    view1 = [(c["node"], round(c["share"], 2)) for c in S.cell_view(st1)]
    lines = journal()[n_log:]
    _, recs = journal_records(n_rec)
    carried = [{"pass": x.get("pass"), "action": x.get("action"), "reason": x.get("reason")}
               for x in recs if x.get("domain") == "sd-a" and x.get("action") in ("acted", "moving", "restored")]
    meta = S.virsh("metadata", "sd-a", "urn:vnuma:state:1", check=False)
    num.update({"new_pid": bool(back), "three_passes_tracking_it": bool(decided),
                "sigterm_for_a_restart": any("for a restart (systemd job" in l for l in lines),
                "restored_lines": sum("Restored the original" in l for l in lines),
                "pins_kept": st1["vcpupin"] == st0["vcpupin"] and st1["emulatorpin"] == st0["emulatorpin"],
                "pages_kept": view1 == view0, "cells": view1,
                "originals_kept": S.original_pins(meta) == originals,
                "carried_out": carried,
                "pgmigrate_success": S.vmstat().get("pgmigrate_success", 0) - mig0})
    ev.update({"journal": lines[-12:], "pins_before": st0["vcpupin"], "pins_after": st1["vcpupin"]})
    ok = (r.returncode == 0 and bool(back) and bool(decided) and num["sigterm_for_a_restart"]
          and num["restored_lines"] == 0 and num["pins_kept"] and num["pages_kept"] and num["originals_kept"]
          and not carried)
    return S.write(idx, name, ok, num, ev)


def ts(unit, prop):
    return int(show(unit, prop).get(prop) or 0)


def vq_clients():
    """PIDs of virtqemud's clients, as virtqemud itself reports them (virt-admin)."""
    pids = []
    r = run("virt-admin", "-c", "virtqemud:///system", "srv-clients-list", "virtqemud")
    for m in re.finditer(r"^\s*(\d+)\s+unix", r.stdout, re.M):
        info = run("virt-admin", "-c", "virtqemud:///system", "client-info", "virtqemud", m.group(1)).stdout
        p = re.search(r"unix_process_id\s*:\s*(\d+)", info)
        if p:
            pids.append(int(p.group(1)))
    return pids


def modular(root, allowed):
    """24: the modular layout. The units and daemon of tests/lib/build-virtqemud.sh are what a
    distribution with modular daemons ships; the switch is libvirt's documented one (stop and
    disable libvirtd and its sockets, enable and start virtqemud's sockets, not the service)."""
    num, ev = {}, {}
    if not root or not os.path.exists(os.path.join(root, "usr/sbin/virtqemud")):
        return S.write(24, "systemd-modular", False, num, {"error": f"no virtqemud tree in '{root}'"})
    S.virsh("destroy", "sd-a", check=False)
    shutil.copytree(root, "/", dirs_exist_ok=True)
    run("systemctl", "daemon-reload")
    libvirtd_units = ["libvirtd.service", "libvirtd.socket", "libvirtd-ro.socket", "libvirtd-admin.socket"]
    run("systemctl", "stop", *libvirtd_units)
    run("systemctl", "disable", *libvirtd_units)
    socks = ["virtqemud.socket", "virtqemud-ro.socket", "virtqemud-admin.socket"]
    r = run("systemctl", "enable", "--now", *socks)
    num["enable_rc"] = r.returncode
    ev["enable"] = (r.stdout + r.stderr)[-600:]
    num["before"] = {"virtqemud": show("virtqemud.service", "ActiveState")["ActiveState"],
                     "libvirtd": show("libvirtd.service", "ActiveState")["ActiveState"],
                     "virtqemud_sock": os.path.exists("/run/libvirt/virtqemud-sock"),
                     "libvirt_sock": os.path.exists("/run/libvirt/libvirt-sock")}
    num["vnumad_after"] = sorted(set(show(UNIT, "After")["After"].split()) & {"virtqemud.socket", "virtqemud.service"})

    # vnumad's own connection starts virtqemud
    n_conn = sum("Connected to qemu:///system" in l for l in journal())
    r = run("systemctl", "start", UNIT)
    connected = S.wait_until(60, lambda: sum("Connected to qemu:///system" in l for l in journal()) > n_conn, 0.5)
    vq = show("virtqemud.service", "ActiveState", "MainPID", "TriggeredBy", "ExecMainStartTimestampMonotonic")
    vn_start = ts(UNIT, "ExecMainStartTimestampMonotonic")
    vq_start = int(vq.get("ExecMainStartTimestampMonotonic") or 0)
    clients = S.wait_until(10, lambda: vq_clients() or None, 0.5) or []
    num["activation"] = {"vnumad_start_rc": r.returncode, "connected": bool(connected),
                         "virtqemud": vq.get("ActiveState"), "triggered_by": vq.get("TriggeredBy"),
                         "virtqemud_started_after_vnumad_s": round((vq_start - vn_start) / 1e6, 2),
                         "vnumad_is_a_client": active_pid() in clients}
    activated = (r.returncode == 0 and bool(connected) and vq.get("ActiveState") == "active"
                 and "virtqemud.socket" in (vq.get("TriggeredBy") or "") and vq_start > vn_start
                 and active_pid() in clients)

    # a misplaced guest started under virtqemud is balanced through it
    S.misplace("sd-m", allowed, cell_mib=64)
    t = time.monotonic()
    S.set_mode("sd-m", "auto")
    conv = S.wait_until(120, lambda: S.local_on("sd-m", allowed), 1.0)
    conv_s = round(time.monotonic() - t, 1)
    # counted at the pass after the move (as in 19)
    S.wait_until(60, lambda: ((status_dom("sd-m") or {}).get("counters") or {}).get("bytes_moved"), 0.5)
    d = status_dom("sd-m") or {}
    num["balance"] = {"seconds_to_converge": conv_s,
                      "final": [(c["node"], c["share"]) for c in (conv or [])],
                      "bytes_moved": d.get("counters", {}).get("bytes_moved")}
    balanced = bool(conv) and (num["balance"]["bytes_moved"] or 0) > 0

    def decided_after(p0):
        dd = status_dom("sd-m")
        return dd if dd and (dd.get("last_decision") or {}).get("pass", 0) > p0 else None

    # a restart of virtqemud: vnumad stays, reconnects, decides again
    pid_v, vq_pid0 = active_pid(), int(vq.get("MainPID") or 0)
    n_conn = sum("Connected to qemu:///system" in l for l in journal())
    r = run("systemctl", "restart", "virtqemud.service")
    again = S.wait_until(60, lambda: sum("Connected to qemu:///system" in l for l in journal()) > n_conn, 0.5)
    p0 = (vnctl("status", "--json") or {}).get("pass", 0)
    decided = S.wait_until(30, lambda: decided_after(p0), 1.0)
    vq_pid1 = int(show("virtqemud.service", "MainPID").get("MainPID") or 0)
    num["restart"] = {"rc": r.returncode, "virtqemud_pid_changed": vq_pid1 not in (0, vq_pid0),
                      "lost_lines": sum("Lost the connection to libvirt (qemu:///system)" in l for l in journal()),
                      "vnumad_pid_kept": active_pid() == pid_v, "reconnected": bool(again),
                      "decided_after": bool(decided)}
    restarted = (r.returncode == 0 and num["restart"]["virtqemud_pid_changed"] and num["restart"]["vnumad_pid_kept"]
                 and bool(again) and bool(decided))

    # virtqemud stopped, its socket still listening: vnumad's reconnection starts it again
    n_conn = sum("Connected to qemu:///system" in l for l in journal())
    r = run("systemctl", "stop", "virtqemud.service")
    back = S.wait_until(60, lambda: sum("Connected to qemu:///system" in l for l in journal()) > n_conn, 0.5)
    vq2 = show("virtqemud.service", "ActiveState", "MainPID")
    p0 = (vnctl("status", "--json") or {}).get("pass", 0)
    decided2 = S.wait_until(30, lambda: decided_after(p0), 1.0)
    clients2 = S.wait_until(10, lambda: vq_clients() or None, 0.5) or []
    num["reactivation"] = {"stop_rc": r.returncode, "reconnected": bool(back), "virtqemud": vq2.get("ActiveState"),
                           "virtqemud_pid_changed": int(vq2.get("MainPID") or 0) not in (0, vq_pid1),
                           "vnumad_is_a_client": active_pid() in clients2, "decided_after": bool(decided2),
                           "vnumad_pid_kept": active_pid() == pid_v}
    rea = num["reactivation"]
    reactivated = (r.returncode == 0 and rea["reconnected"] and rea["virtqemud"] == "active"
                   and rea["virtqemud_pid_changed"] and rea["vnumad_is_a_client"] and rea["decided_after"]
                   and rea["vnumad_pid_kept"])
    ev["journal"] = journal()[-12:]
    ev["virtqemud_journal"] = run("journalctl", "-u", "virtqemud.service", "--no-pager", "-o", "cat").stdout.splitlines()[-10:]
    b = num["before"]
    switched = (num["enable_rc"] == 0 and b["virtqemud"] == "inactive" and b["libvirtd"] == "inactive"
                and b["virtqemud_sock"] and num["vnumad_after"] == ["virtqemud.service", "virtqemud.socket"])
    ok = switched and activated and balanced and restarted and reactivated
    num["parts"] = {"switched": switched, "activated": activated, "balanced": balanced,
                    "restarted": restarted, "reactivated": reactivated}
    return S.write(24, "systemd-modular", ok, num, ev)


if __name__ == "__main__":
    S.watchdog()
    S.log("systemd suite start")
    res = main()
    S.log(f"systemd suite end: {sum(bool(x) for x in res)}/{len(res)} passed")
    raise SystemExit(0 if res and all(res) else 1)
