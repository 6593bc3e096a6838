#!/bin/bash
# One vnumad, several libvirt daemons (issue 33): four hosts on this machine, each a libvirtd
# (and virtlogd) in its own mount namespace with its own /run/libvirt, /var/lib/libvirt,
# /etc/libvirt... and host_uuid (tests/e2e/lib-hosts.sh, as migrate.sh runs its host B), each
# with its socket in a directory of its own under one directory: $HOSTS/hN/libvirt-sock. One
# private vnumad with `uri = qemu+unix:///system?socket=$HOSTS/*/libvirt-sock` and
# `scan_interval = 1` (docs/configuration.md). Every domain is opted in (auto), allowed CPUs 0-1
# (<vcpu cpuset='0-1'>) and defined pinned to CPU 0 (<cputune>), which vnumad keeps as its
# originals; balanced is pinned to the node's CPUs 0-1. Pins are checked on libvirt (virsh
# vcpupin) and on the kernel (each vCPU thread's affinity). Checked:
#   - hosts 1-3 running, vnumad finds all three (a "Connected to" line naming each socket;
#     vnumactl status --json: three connections, labelled h1 h2 h3, connected) and balances the
#     domain of each; hosts 1 and 2 have a domain of the same name: both balanced, each with its
#     "connection", and vnumactl status shows them NAME@h1 and NAME@h2;
#   - the UUID rule (one section, to drop if the rule changes): a domain on host 3 with the UUID
#     of host 1's is left alone (stays on CPU 0) and the log says why;
#   - host 4, started later, is found by the scan and its domain balanced;
#   - host 2's libvirtd killed (SIGKILL; its QEMU runs on): vnumad logs the loss, vnumactl status
#     says h2 is not connected, and host 1's domain, pinned back to CPU 0 by hand, is balanced
#     again;
#   - host 3's libvirtd stopped (SIGSTOP): passes go on, hosts 1 and 4's domains pinned back to
#     CPU 0 are balanced again, and vnumad gives host 3 up (its keepalive gets no answer: h3 not
#     connected); vnumactl status, called every 0.5 s from host 2's kill until then, answered
#     every time within 10 s (every vnumactl call here is bounded so: a hang is a failed check,
#     never a hung test); after SIGCONT h3 is connected again and its domain acted on;
#   - host 2's libvirtd restarted in its namespace (it takes its running QEMU back): vnumad
#     reconnects and balances its domain again;
#   - host 4's libvirtd stopped (its socket goes): vnumad drops the connection (three left);
#     started again: found again;
#   - SIGTERM (restore_on_exit = yes): every domain back on CPU 0, on libvirt and the kernel;
#   - nothing of the hosts is left once they are stopped (no libvirtd, virtlogd or QEMU).
# TCG only: what it proves is vnumad's connections, which do not depend on the accelerator
# (tests/run.sh runs [kvm] variants of the tests in its KVM_TESTS only; this is not one).
# Prints "ok N - ..." lines and "N passed, N failed"; exit 77 when it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
UUID_RULE=1 # 0: no check of the UUID rule (its section below)
e2e_preamble --built vnumad --built vnumactl \
    --tool unshare "a mount namespace per libvirtd" \
    --tool nsenter "a killed libvirtd is restarted in its namespace"
[ "$(nproc)" -ge 2 ] || skip_all "needs 2 CPUs (the pins tell CPU 0 from CPUs 0-1)"

. tests/e2e/lib-hosts.sh

# every vnumactl call of this test (lib.sh's too) answers within 10 s or fails: a hang is a
# failed check, never a hung test
vnctl() { timeout 10 "$BUILD/vnumactl" --socket "$VN_SOCK" "$@"; }

CPUSET="s|<vcpu placement='static'>|<vcpu placement='static' cpuset='0-1'>|"
CPU0="s|</vcpu>|</vcpu><cputune><vcpupin vcpu='0' cpuset='0'/><vcpupin vcpu='1' cpuset='0'/></cputune>|"
AUTO=$(optin_sed 'mode="auto"')

# dom_on N NAME [SED...]: define NAME on host N, opted in, CPUs 0-1 allowed, pinned to CPU 0
dom_on() { local n=$1 name=$2; shift 2; on_host "$n" define_stopped "$name" "$T" "$CPUSET" "$CPU0" "$AUTO" "$@"; }
# start_dom N NAME: host N's domain NAME started (what virsh said in $E2E_TMP/start-N-NAME.out)
start_dom() {
    vir "$1" start "$2" >"$E2E_TMP/start-$1-$2.out" 2>&1 || { cat "$E2E_TMP/start-$1-$2.out" >&2; return 1; }
}
# start_doms N:NAME...: each host N's domain NAME started, all at once; 0 when all started
start_doms() {
    local x
    for x in "$@"; do host_bg start_dom "${x%%:*}" "${x#*:}"; done
    hosts_wait
}
# vir N ARGS...: virsh on host N
vir() { local n=$1; shift; $(host_virsh "$n") "$@" </dev/null; }
to_cpu0() { $VIRSH vcpupin "$1" 0 0 --live >/dev/null && $VIRSH vcpupin "$1" 1 0 --live >/dev/null; }
# on_cpu0 DOM: libvirt's vCPU pins and each vCPU thread's affinity are CPU 0 (on_host N ...)
on_cpu0() { [ "$(vcpu_pins "$1")" = "0:0 1:0" ] && [ "$(vcpu_thread_affinity "$1")" = "0:0 1:0" ]; }
# balanced DOM: pinned by vnumad to the node's CPUs, on libvirt and on the kernel
balanced() { [ "$(vcpu_pins "$1")" = "0:0-1 1:0-1" ] && [ "$(vcpu_thread_affinity "$1")" = "0:0-1 1:0-1" ]; }
where() { echo "vCPUs $(vcpu_pins "$1"), threads $(vcpu_thread_affinity "$1")"; }

# st PYTHON-EXPR [ARG...]: vnumactl status --json answers (10 s) and PYTHON-EXPR holds, with j
# the reply, conns its "connections", conn(LABEL) the one labelled LABEL (None), doms(NAME
# [, LABEL]) the domains named NAME (of connection LABEL), args the ARGs
st() {
    vnctl status --json >"$E2E_TMP/st.json" 2>"$E2E_TMP/st.err" || return 1
    python3 - "$E2E_TMP/st.json" "$@" <<'PY' 2>/dev/null
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("return", j)
args = sys.argv[3:]
conns = j.get("connections") or []
def conn(label): return next((c for c in conns if c.get("label") == label), None)
def doms(name, label=None):
    return [d for d in j.get("domains") or [] if d.get("name") == name and (label is None or d.get("connection") == label)]
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
# up LABEL...: each connection LABEL is there and connected
up() {
    st 'all(conn(l) is not None and conn(l).get("connected") is True for l in args)' "$@"
}
# conns_now: the connections as vnumactl status --json shows them, "LABEL:up|down(DOMAINS)"
conns_now() {
    vnctl status --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin); j = j.get("return", j)
print(" ".join("%s:%s(%s)" % (c.get("label"), "up" if c.get("connected") else "down", c.get("domains"))
               for c in j.get("connections") or []) or "none")' 2>/dev/null || echo "(no answer)"
}
# status_watch FILE: in the background until watch_stop FILE (or vnumad exits), vnumactl status
# every 0.5 s, each call bounded (10 s): a line per call in FILE, "ok MS" or "fail MS"
status_watch() {
    touch "$1.on"
    (
        while [ -e "$1.on" ] && vnumad_alive; do
            t=$(date +%s%N)
            if vnctl status --json >/dev/null 2>&1; then r=ok; else r=fail; fi
            echo "$r $((($(date +%s%N) - t) / 1000000))"
            sleep 0.5
        done >"$1"
    ) 200>&- &
    WATCH=$!
}
watch_stop() { rm -f "$1.on"; wait "$WATCH"; }
uri_of() { echo "qemu+unix:///system?socket=$(host_sock "$1")"; }
# connected_times N: the "Connected to" lines of vnumad's log that name host N's socket
connected_times() { grep -cF "Connected to $(uri_of "$1")" "$VN_LOG"; }
more_connects() { [ "$(connected_times "$1")" -gt "$2" ]; }
connected_to() { local n; for n in "$@"; do more_connects "$n" 0 || return 1; done; }
lost() { grep -qF "Lost the connection to libvirt ($(uri_of "$1")); reconnecting" "$VN_LOG"; }

# ---- hosts 1-3, a domain each (1's and 2's of one name) ----
T0=$SECONDS
hosts_start 1 2 3
ok $? "hosts 1-3: a libvirtd each in its own mount namespace answers on $HOSTS/h{1,2,3}/libvirt-sock (libvirtd $(host_pid 1 libvirtd) $(host_pid 2 libvirtd) $(host_pid 3 libvirtd))"
[ $fail -eq 0 ] || finish
uuids=$(for n in 1 2 3; do vir "$n" capabilities | sed -n 's|.*<uuid>\(.*\)</uuid>.*|\1|p' | head -n 1; done)
[ "$(sort -u <<<"$uuids" | grep -c .)" = 3 ]
ok $? "the three have their own host UUIDs ($(paste -sd' ' <<<"$uuids"))"
D1=$(dom_on 1 conns) && D2=$(dom_on 2 conns) && D3=$(dom_on 3 conns-3) && start_doms "1:$D1" "2:$D2" "3:$D3"
ok $? "host 1 and host 2 run a domain named $D1 each, host 3 runs $D3 ($((SECONDS - T0)) s so far)"
[ $fail -eq 0 ] || finish
# cpuset_cg DOM: the cpuset cgroup of the domain's QEMU (on_host N ...)
cpuset_cg() { sed -n 's/^[0-9]*:cpuset://p' "/proc/$(qemu_pid "$1")/cgroup" 2>/dev/null; }
U1=$(vir 1 domuuid "$D1") U2=$(vir 2 domuuid "$D2")
C1=$(on_host 1 cpuset_cg "$D1") C2=$(on_host 2 cpuset_cg "$D2")
[ -n "$U1" ] && [ -n "$U2" ] && [ "$U1" != "$U2" ] && [ -n "$C1" ] && [ -n "$C2" ] && [ "$C1" != "$C2" ]
ok $? "... with their own UUIDs ($U1, $U2) and cgroups ($C1, $C2)"
on_host 1 on_cpu0 "$D1" && on_host 2 on_cpu0 "$D2" && on_host 3 on_cpu0 "$D3"
ok $? "the three pinned to CPU 0 ($D1 on host 1: $(on_host 1 where "$D1"))"

# ---- one vnumad finds the three and balances each ----
start_vnumad "uri = qemu+unix:///system?socket=$HOSTS/*/libvirt-sock" "scan_interval = 1" \
    "restore_on_exit = yes"
ok $? "vnumad started with uri = qemu+unix:///system?socket=$HOSTS/*/libvirt-sock"
[ $fail -eq 0 ] || { sed 's/^/# vnumad: /' "$VN_LOG" | tail -n 5; finish; }
wait_for 60 connected_to 1 2 3
ok $? "vnumad logs a connection to each socket ($(grep -oE 'Connected to [^ ]*' "$VN_LOG" | sed "s|$HOSTS|\$HOSTS|" | paste -sd' '))"
wait_for 60 on_host 1 balanced "$D1"
ok $? "host 1's $D1 balanced: $(on_host 1 where "$D1")"
wait_for 60 on_host 2 balanced "$D2"
ok $? "host 2's $D2 (the same name) balanced: $(on_host 2 where "$D2")"
wait_for 60 on_host 3 balanced "$D3"
ok $? "host 3's $D3 balanced: $(on_host 3 where "$D3")"
wait_for 60 st 'len(conns) == 3 and all(conn(l) and conn(l)["connected"] is True and conn(l)["domains"] == 1 and args[0] + "/" + l + "/libvirt-sock" in conn(l)["uri"] for l in ("h1", "h2", "h3"))' "$HOSTS"
ok $? "vnumactl status --json: connections h1 h2 h3, each connected with one domain and its socket in its uri ($(conns_now))"
st 'len(doms(args[0], "h1")) == 1 and len(doms(args[0], "h2")) == 1 and len(doms(args[1], "h3")) == 1' "$D1" "$D3"
ok $? "... and each domain says its \"connection\": $D1 h1 and h2, $D3 h3"
text=$(vnctl status 2>&1)
grep -qF "$D1@h1" <<<"$text" && grep -qF "$D1@h2" <<<"$text"
ok $? "vnumactl status shows the two $D1 as $D1@h1 and $D1@h2 ($(grep -oF "$D1@h" <<<"$text" | wc -l) found)"

# ---- host 4, started later, is found by the scan ----
# (with it, host 3's domain of the UUID rule starts: its section below)
D3U=""
if [ "$UUID_RULE" = 1 ]; then
    D3U=$(dom_on 3 conns-3u "s|</name>|</name><uuid>$U1</uuid>|")
    ok $? "host 3: $D3U defined with the UUID of host 1's $D1 ($U1)"
    host_bg start_dom 3 "$D3U"
fi
host_bg host_start 4
hosts_wait
ok $? "host 4 started later${D3U:+, and $D3U on host 3} ($((SECONDS - T0)) s so far)"
D4=$(dom_on 4 conns-4) && start_doms "4:$D4"
ok $? "host 4 runs $D4 ($((SECONDS - T0)) s so far)"
wait_for 60 on_host 4 balanced "$D4"
ok $? "host 4's $D4 balanced: $(on_host 4 where "$D4")"
more_connects 4 0 && up h1 h2 h3 h4 && st 'len(conns) == 4 and len(doms(args[0], "h4")) == 1' "$D4"
ok $? "vnumad found host 4's socket: four connections ($(conns_now))"

# ---- the UUID rule: a domain with the UUID of host 1's, on host 3, is left alone ----
if [ "$UUID_RULE" = 1 ]; then
    wait_for 60 bash -c "grep -F 'same UUID as' '$VN_LOG' | grep -F '$D3U' | grep -qF 'left alone'"
    ok $? "vnumad warns: $(grep -F 'same UUID as' "$VN_LOG" | tail -n 1 | sed 's/^<[0-9]>//' | cut -c1-200)"
    wait_passes 2
    on_host 3 on_cpu0 "$D3U" && on_host 1 balanced "$D1"
    ok $? "$D3U left on CPU 0 ($(on_host 3 where "$D3U")), host 1's $D1 still balanced"
fi

# ---- host 2's libvirtd killed ----
connects2=$(connected_times 2)
qemu2=$(on_host 2 qemu_pid "$D2")
status_watch "$E2E_TMP/watch"
host_kill 2 KILL
ok $? "host 2's libvirtd killed (SIGKILL)"
wait_for 60 lost 2
ok $? "vnumad logs the loss of host 2: $(grep -F "$(uri_of 2)" "$VN_LOG" | grep -F 'Lost' | tail -n 1 | sed 's/^<[0-9]>//' | sed "s|$HOSTS|\$HOSTS|")"
kill -0 "$qemu2" 2>/dev/null && [ "$(cat "/proc/$qemu2/comm" 2>/dev/null)" = qemu-system-x86 ]
ok $? "host 2's QEMU (pid $qemu2) runs on"
wait_for 60 st 'conn("h2") is not None and conn("h2")["connected"] is False' && up h1 h3 h4
ok $? "vnumactl status answers: h2 not connected, h1 h3 h4 connected ($(conns_now))"
on_host 1 to_cpu0 "$D1"
wait_for 60 on_host 1 balanced "$D1"
ok $? "host 1's $D1, pinned to CPU 0 by hand, is balanced again: $(on_host 1 where "$D1")"

# ---- host 3's libvirtd stopped ----
host_kill 3 STOP
ok $? "host 3's libvirtd stopped (SIGSTOP)"
wait_passes 3
ok $? "vnumad's passes go on (pass $(vn_pass))"
on_host 1 to_cpu0 "$D1" && on_host 4 to_cpu0 "$D4"
wait_for 60 on_host 1 balanced "$D1"
ok $? "host 1's $D1, pinned to CPU 0 by hand, is balanced again: $(on_host 1 where "$D1")"
wait_for 60 on_host 4 balanced "$D4"
ok $? "host 4's $D4, pinned to CPU 0 by hand, is balanced again: $(on_host 4 where "$D4")"
# a libvirtd that does not answer is given up when the connection's keepalive gets no answer
wait_for 60 st 'conn("h3") is not None and conn("h3")["connected"] is False'
ok $? "vnumad gives host 3 up: h3 not connected ($(conns_now); its log: $(grep -F "$(uri_of 3)" "$VN_LOG" | grep -vF 'Connected to' | tail -n 1 | sed 's/^<[0-9]>//' | sed "s|$HOSTS|\$HOSTS|" | cut -c1-120))"
watch_stop "$E2E_TMP/watch"
calls=$(grep -c . "$E2E_TMP/watch") slow=$(sort -n -k2 "$E2E_TMP/watch" | tail -n 1 | cut -d' ' -f2)
[ "$calls" -gt 0 ] && ! grep -q '^fail' "$E2E_TMP/watch"
ok $? "vnumactl status answered each of its $calls calls (one every 0.5 s from host 2's kill on) within 10 s (slowest: $slow ms; failed: $(grep -c '^fail' "$E2E_TMP/watch"))"
host_kill 3 CONT
wait_for 60 up h3
ok $? "host 3's libvirtd continued (SIGCONT): h3 connected again ($(conns_now))"
on_host 3 to_cpu0 "$D3"
wait_for 60 on_host 3 balanced "$D3"
ok $? "host 3's $D3, pinned to CPU 0 by hand, is balanced again: $(on_host 3 where "$D3")"

# ---- host 2's libvirtd restarted ----
host_restart 2
ok $? "host 2: a new libvirtd in its namespace answers (pid $(host_pid 2 libvirtd))"
vir 2 domstate "$D2" 2>/dev/null | grep -q running && [ "$(on_host 2 qemu_pid "$D2")" = "$qemu2" ]
ok $? "... and has taken $D2 back, the same QEMU (pid $qemu2)"
wait_for 60 more_connects 2 "$connects2"
ok $? "vnumad reconnects to host 2 ($(connected_times 2) connections in its log)"
wait_for 60 st 'conn("h2") is not None and conn("h2")["connected"] is True and len(doms(args[0], "h2")) == 1' "$D2"
ok $? "vnumactl status: h2 connected, with $D2 ($(conns_now))"
on_host 2 to_cpu0 "$D2"
wait_for 60 on_host 2 balanced "$D2"
ok $? "host 2's $D2, pinned to CPU 0 by hand, is balanced again: $(on_host 2 where "$D2")"

# ---- host 4's socket goes, and comes back ----
host_kill 4 TERM && wait_for 30 test ! -e "$(host_sock 4)"
ok $? "host 4's libvirtd stopped (SIGTERM): its socket is gone ($D4's QEMU runs on)"
wait_for 60 st 'len(conns) == 3 and conn("h4") is None'
ok $? "vnumad dropped the connection: three left ($(conns_now))"
host_restart 4
ok $? "host 4: a new libvirtd in its namespace answers"
wait_for 60 st 'len(conns) == 4 and conn("h4") is not None and conn("h4")["connected"] is True and len(doms(args[0], "h4")) == 1' "$D4"
ok $? "vnumad found host 4 again, with $D4 ($(conns_now))"

# ---- SIGTERM: every domain restored ----
ALL="1:$D1 2:$D2 3:$D3 4:$D4"
[ "$UUID_RULE" = 1 ] && ALL="$ALL 3:$D3U"
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad exited $VN_EXIT on SIGTERM"
for x in $ALL; do
    on_host "${x%%:*}" on_cpu0 "${x#*:}"
    ok $? "host ${x%%:*}'s ${x#*:} back on CPU 0: $(on_host "${x%%:*}" where "${x#*:}")"
done
restored() { grep -cE "Restored the original pinning and binding of '$D1(@h[12])?'" "$VN_LOG"; }
[ "$(restored)" = 2 ]
ok $? "the log says both $D1 were restored ($(restored) lines)"

# ---- nothing of the hosts is left ----
hosts_stop
# (a QEMU killed by its host's stop is gone once the kernel has reaped it: waited for, as every
# event here. Seen once with other tests running at once: a qemu-system-x86 "left" in a host's
# namespace, most likely another test's QEMU in a new namespace that had the gone one's inode
# number; hosts_stop now holds each host's namespace open until this look)
hosts_gone() { [ -z "$(hosts_left)" ]; }
wait_for 30 hosts_gone
left=$(hosts_left)
[ -z "$left" ]
ok $? "the hosts stopped: nothing of them runs${left:+ (left: $(paste -sd, <<<"$left"))} ($((SECONDS - T0)) s in all)"
finish
