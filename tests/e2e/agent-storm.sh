#!/bin/bash
# Guest agent disconnect/reconnect storms (issue 7). The test guest of vm-images/build-guest.sh
# (TCG, 2 vCPUs, 2 cells, the org.vnuma.agent.0 channel, opted in) runs vnuma-agent --verbose;
# a small /storm-init appended to its initramfs (a second cpio archive: the kernel unpacks
# both) starts /init and, in the background, kills and restarts the agent. vnumad (interval
# 1 s) must follow every break:
#   A. in the guest: the agent killed AGENT_CYCLES (4) times, each time once it has served a
#      get-hints request, and restarted 2 s later (the guest closes and reopens its port:
#      VSERPORT_CHANGE closed/opened);
#   B. on the host: the channel's chardev moved away and back (QMP chardev-change to another
#      socket, then to the original path) HOST_CYCLES (3) times: vnumad's socket hits EOF, the
#      guest's port stays open (no VSERPORT_CHANGE), vnumad connects again on its own;
#   B2. another process's socket (a listener of the test's) at the channel's path: vnumad does
#      not connect to it (it connects only where the domain's QEMU listens), says so, and
#      reconnects when QEMU's channel is back;
#   C. the channel device hot-unplugged and plugged again (virsh detach-device/attach-device
#      --live) PLUG_CYCLES (3) times: the agent reopens the new port, the guest opens it,
#      vnumad connects on VSERPORT_CHANGE.
# After each break: vnumad reconnects and gets a fresh hint set. Meanwhile the metrics (polled
# every 0.5 s) show the agent disconnected and no hint age while it is; at the end: vnumad
# alive, its fds as many as before the storms, its RSS bounded, no refused input counted for
# a break, no warning storm, and it stops cleanly.
# Exits 77 only when no guest can be built or booted here.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

AGENT_CYCLES=${AGENT_CYCLES:-4}
HOST_CYCLES=${HOST_CYCLES:-3}
PLUG_CYCLES=${PLUG_CYCLES:-3}
e2e_preamble --tool python3 "status parsing" --tool cpio "the guest's storm script"
out=$(vm-images/build-guest.sh 2>"$E2E_TMP/build.log") ||
    skip_all "cannot build the test guest: $(tail -n 1 "$E2E_TMP/build.log")"
CACHE=$(echo "$out" | tail -n 1)
DIR=$E2E_TMP/guest
mkdir -p "$DIR/cpio"
chmod 711 "$E2E_TMP"
chmod 755 "$DIR"

# /storm-init: phase A, driven by the agent's own log (--verbose logs every request), so each
# cycle waits for vnumad instead of for a clock
cat >"$DIR/cpio/storm-init" <<EOF
#!/bin/busybox sh
# tests/e2e/agent-storm.sh: /init in the foreground; in the background, once the agent has
# served vnumad, kill it and start it again $AGENT_CYCLES times
/bin/busybox mount -t devtmpfs devtmpfs /dev # a background job needs /dev/null at once
(
    B=/bin/busybox
    say() { echo "VNUMA: storm \$*" >/dev/console; }
    served() { # served N: more than N get-hints requests served, within 120 s
        local i=0 c
        while :; do
            c=\$(\$B grep -c vnuma-get-hints /tmp/agent.log 2>/dev/null)
            [ "\${c:-0}" -gt "\$1" ] && return 0
            i=\$((i + 1)); [ \$i -ge 600 ] && return 1; \$B sleep 0.2
        done
    }
    served 8 || say "no request in 120 s" # the host takes its "before" numbers meanwhile
    for i in \$(\$B seq $AGENT_CYCLES); do
        \$B killall vnuma-agent
        say "cycle \$i agent killed"
        \$B sleep 2
        n=\$(\$B grep -c vnuma-get-hints /tmp/agent.log)
        /sbin/vnuma-agent --verbose 2>>/tmp/agent.log &
        say "cycle \$i agent started"
        served "\$n" || say "cycle \$i: no request in 120 s"
    done
    say "done"
) &
exec /init
EOF
chmod 755 "$DIR/cpio/storm-init"
(cd "$DIR/cpio" && echo storm-init | cpio -o -H newc --quiet | gzip -1) >"$DIR/storm.cpio.gz" ||
    skip_all "cannot build the storm cpio archive"
cp "$CACHE/vmlinuz" "$DIR/"
cat "$CACHE/initramfs.cpio.gz" "$DIR/storm.cpio.gz" >"$DIR/initramfs.cpio.gz"
chmod 644 "$DIR"/*.gz "$DIR/vmlinuz"

NAME=${E2E_PREFIX}agentstorm
CONSOLE=$DIR/console.log
: >"$CONSOLE"
chmod 666 "$CONSOLE"
METRICS=$E2E_TMP/metrics.prom
start_vnumad "interval = 1" "log_level = debug" "metrics_file = $METRICS"
ok $? "vnumad started"
agent_guest_xml "$NAME" "$DIR" \
    "console=ttyS0 rdinit=/storm-init panic=-1 loglevel=4 mitigations=off vnuma.agent_args=--verbose" \
    "$CONSOLE" 64 'mode="auto"' >"$DIR/$NAME.xml"
echo "$NAME" >>"$E2E_TMP/domains"
$VIRSH define "$DIR/$NAME.xml" >"$E2E_TMP/define.out" 2>&1 && $VIRSH start "$NAME" >>"$E2E_TMP/define.out" 2>&1 ||
    skip_all "cannot start a TCG guest with direct kernel boot here: $(tail -n 1 "$E2E_TMP/define.out")"

# snap: one copy of the metrics file. vnumad replaces the file (rename) after every pass, so
# values read from two opens can come from two passes: every check reads one snapshot.
SNAP=$E2E_TMP/metrics.snap
snap() { cp "$METRICS" "$SNAP.tmp" 2>/dev/null && mv "$SNAP.tmp" "$SNAP" || : >"$SNAP"; }
# m METRIC: this domain's sample of METRIC in the last snapshot ("" when absent)
m() { awk -v re="^$1[{]domain=\"$NAME\"" '$1 ~ re {print $2}' "$SNAP" 2>/dev/null; }
connects() { grep -c "vnuma-agent .* of '$NAME' connected" "$VN_LOG"; }
hint_sets() { local v; v=$(m vnuma_agent_hint_sets_total); echo "${v:-0}"; }
# fresh_after N: connected, more than N hint sets, the latest less than 3 s old (one snapshot)
fresh_after() {
    local age
    snap
    age=$(m vnuma_agent_hint_age_seconds)
    [ "$(m vnuma_agent_connected)" = 1 ] && [ "$(hint_sets)" -gt "$1" ] && [ -n "$age" ] &&
        awk -v a="$age" 'BEGIN {exit !(a < 3)}'
}
disconnected() { snap; [ "$(m vnuma_agent_connected)" = 0 ] && [ -z "$(m vnuma_agent_hint_age_seconds)" ]; }

if ! guest_booted "$NAME" "$CONSOLE" || ! wait_for 240 fresh_after 0; then
    sed 's/^/# console: /' "$CONSOLE" | tail -n 20
    ok 1 "the guest booted, its agent connected and sent hints (240 s)"
    finish
fi
ok 0 "the guest booted, vnumad connected to its agent and has fresh hints"
# every 0.5 s: "connected hint_age hint_sets" (age "-" when there are no hints)
(
    SNAP=$E2E_TMP/series.snap  # the sampler's own snapshot file
    while vnumad_alive; do
        snap
        a=$(m vnuma_agent_hint_age_seconds)
        echo "$(m vnuma_agent_connected) ${a:--} $(hint_sets)"
        sleep 0.5
    done
) >"$E2E_TMP/series" 200>&- &
fd0=$(vnumad_fds) rss0=$(vnumad_kib VmRSS) warn0=$(vnumad_warnings)
note "before the storms: fds $fd0, VmRSS $rss0 KiB, connects $(connects), hint sets $(hint_sets)"

# ---- A: the agent killed and restarted in the guest (it started once vnumad had asked 8 times) ----
grep -q 'VNUMA: storm cycle' "$CONSOLE" && note "the guest's storm had begun before the 'before' numbers were taken"
wait_for 300 grep -q 'VNUMA: storm done' "$CONSOLE"
ok $? "guest: the agent was killed and restarted $AGENT_CYCLES times ($(grep -c 'VNUMA: storm cycle .* started' "$CONSOLE") restarts)"
! grep -q 'no request in 120 s' "$CONSOLE"
ok $? "after every restart vnumad was back asking for hints within 120 s ($(grep -c 'no request in 120 s' "$CONSOLE") misses)"
closes=$(grep -c "Domain '$NAME' port [^ ]* closed" "$VN_LOG")
[ "$closes" -ge "$AGENT_CYCLES" ]
ok $? "vnumad saw the guest close its port each time (VSERPORT_CHANGE closed: $closes)"
h=$(hint_sets)
wait_for 30 fresh_after "$h"
[ $? = 0 ] && [ $(($(connects) - 1)) -ge "$AGENT_CYCLES" ]
ok $? "vnumad reconnected after each restart ($(($(connects) - 1)) hellos after the first for $AGENT_CYCLES restarts) and has fresh hints"

# ---- B: the host side of the channel moved away and back ----
alias=$($VIRSH dumpxml "$NAME" | awk "/<channel type='unix'>/ {c=1} c && /<alias name=/ {match(\$0, /name='[^']*'/); print substr(\$0, RSTART + 6, RLENGTH - 7); exit}")
SOCK=$($VIRSH dumpxml "$NAME" | grep -o "/var/lib/libvirt/qemu/channel/target/[^'\"]*org.vnuma.agent.0" | head -n 1)
chardev() { # chardev PATH: the channel's chardev becomes a listening socket at PATH
    $VIRSH qemu-monitor-command "$NAME" "{\"execute\":\"chardev-change\",\"arguments\":{\"id\":\"char$alias\",\"backend\":{\"type\":\"socket\",\"data\":{\"addr\":{\"type\":\"unix\",\"data\":{\"path\":\"$1\"}},\"server\":true,\"wait\":false}}}}" >>"$E2E_TMP/chardev.out" 2>&1
}
okb=0
for i in $(seq "$HOST_CYCLES"); do
    c=$(connects) h=$(hint_sets)
    chardev "$(dirname "$SOCK")/storm-away.sock" || { okb=1; note "chardev-change away failed: $(tail -n 1 "$E2E_TMP/chardev.out")"; break; }
    wait_for 15 disconnected || { okb=1; note "cycle $i: vnumad did not notice the host side going away"; }
    wait_passes 2 # vnumad tries the missing socket on every pass meanwhile
    chardev "$SOCK" || { okb=1; note "chardev-change back failed: $(tail -n 1 "$E2E_TMP/chardev.out")"; break; }
    wait_for 30 fresh_after "$h" && [ "$(connects)" -gt "$c" ] ||
        { okb=1; note "cycle $i: vnumad did not reconnect to the restored socket"; }
done
ok $okb "host side (chardev char$alias) moved away and back $HOST_CYCLES times: vnumad saw each loss and reconnected by itself, hints fresh"

# ---- B2: another process's socket at the channel's path: vnumad does not connect to it ----
# (the channel's socket swapped for another listener: whoever may write QEMU's channel directory,
# QEMU after an escape among them. vnumad connects only to a socket of QEMU's user on which the
# domain's QEMU listens; a peer that never answers the hello is test-channel's.)
c=$(connects) h=$(hint_sets)
chardev "$(dirname "$SOCK")/storm-away.sock"
wait_for 15 disconnected
python3 - "$SOCK" "$E2E_TMP/foreign" >"$E2E_TMP/foreign.out" 2>&1 <<'PY' &
import os, socket, sys
p, flag = sys.argv[1], sys.argv[2]
try:
    os.unlink(p)
except OSError:
    pass
s = socket.socket(socket.AF_UNIX)
s.bind(p)
s.listen(4)
s.settimeout(0.2)
open(flag + ".ready", "w").close()
n = 0  # bytes vnumad sent here (its hello)
while not os.path.exists(flag + ".stop"):  # the test says when
    try:
        c, _ = s.accept()
        c.settimeout(1)
        try:
            while True:
                d = c.recv(4096)
                if not d:
                    break
                n += len(d)
        except socket.timeout:
            pass
        c.close()
    except socket.timeout:
        pass
os.unlink(p)
print(n)
PY
fpid=$!
wait_for 30 test -e "$E2E_TMP/foreign.ready"
wait_for 60 log_has "Not opening the agent channel of '$NAME' at $SOCK: not its QEMU's"
refused=$?
wait_passes 3 60 # tried again each pass meanwhile, refused each time
touch "$E2E_TMP/foreign.stop"
wait "$fpid"
accepted=$(cat "$E2E_TMP/foreign.out")
chardev "$SOCK"
[ $refused = 0 ] && [ "$accepted" = 0 ] && wait_for 30 fresh_after "$h" && [ "$(connects)" -gt "$c" ]
ok $? "another process's socket at the channel's path is refused: vnumad sends it nothing ($accepted bytes over 3 passes), and reconnects to QEMU's channel when it is back"

# ---- C: the channel device hot-unplugged and plugged again ----
okc=0
for i in $(seq "$PLUG_CYCLES"); do
    SOCK=$($VIRSH dumpxml "$NAME" | grep -o "/var/lib/libvirt/qemu/channel/target/[^'\"]*org.vnuma.agent.0" | head -n 1)
    echo "<channel type='unix'><source mode='bind' path='$SOCK'/><target type='virtio' name='org.vnuma.agent.0'/></channel>" >"$DIR/chan.xml"
    echo "<channel type='unix'><target type='virtio' name='org.vnuma.agent.0'/></channel>" >"$DIR/chan-new.xml"
    c=$(connects) h=$(hint_sets)
    $VIRSH detach-device "$NAME" "$DIR/chan.xml" --live >>"$E2E_TMP/plug.out" 2>&1 ||
        { okc=1; note "detach-device failed: $(tail -n 1 "$E2E_TMP/plug.out")"; break; }
    wait_for 15 disconnected || { okc=1; note "cycle $i: vnumad did not notice the unplug"; }
    wait_passes 1 # a pass while the device is away
    $VIRSH attach-device "$NAME" "$DIR/chan-new.xml" --live >>"$E2E_TMP/plug.out" 2>&1 ||
        { okc=1; note "attach-device failed: $(tail -n 1 "$E2E_TMP/plug.out")"; break; }
    wait_for 30 fresh_after "$h" && [ "$(connects)" -gt "$c" ] ||
        { okc=1; note "cycle $i: vnumad did not reconnect after the replug"; }
done
ok $okc "channel device unplugged and plugged again $PLUG_CYCLES times: the agent reopened its port, vnumad reconnected (VSERPORT_CHANGE), hints fresh"
grep -q 'No such device; reopening' "$CONSOLE"
ok $? "the agent noticed its port was unplugged (ENODEV) and went looking for it again"

# ---- what the storms left ----
vnumad_alive
ok $? "vnumad is alive after $((AGENT_CYCLES + HOST_CYCLES + 1 + PLUG_CYCLES)) breaks"
wait_for 15 fresh_after "$(hint_sets)"
fd1=$(vnumad_fds) rss1=$(vnumad_kib VmRSS) warn1=$(vnumad_warnings)
note "after the storms: fds $fd1, VmRSS $rss1 KiB, connects $(connects), hint sets $(hint_sets)"
[ "$fd1" -le $((fd0 + 1)) ]
ok $? "no fd leak: $fd0 open before the storms, $fd1 after (connected both times)"
if vnumad_sanitized; then # ASan's quarantine keeps freed memory: LeakSanitizer checks at exit
    note "VmRSS not bounded here: vnumad is an ASan build ($rss0 -> $rss1 KiB); its leak check runs at stop_vnumad"
else
    [ "$rss1" -lt $((rss0 + 2048)) ]
    ok $? "VmRSS bounded: $rss0 -> $rss1 KiB"
fi
# the series: while disconnected no hint age is shown (hints dropped with the link)
python3 - "$E2E_TMP/series" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
down = [r for r in rows if r[0] == "0"]
stale = [r for r in down if r[1] != "-"]
ages = [float(r[1]) for r in rows if r[0] == "1" and r[1] != "-"]
sets = [int(r[2]) for r in rows]
print("# metrics samples: %d, disconnected in %d (with a hint age in %d), max hint age while connected %.1f s"
      % (len(rows), len(down), len(stale), max(ages) if ages else -1))
sys.exit(0 if down and not stale and sets == sorted(sets) else 1)
PY
ok $? "metrics: vnuma_agent_connected went 0 during the breaks with no hint age shown, hint sets only grew"
vnctl status --json >"$E2E_TMP/status.json" 2>/dev/null
python3 - "$E2E_TMP/status.json" "$NAME" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); j = j.get("return", j)
d = [x for x in j["domains"] if x["name"] == sys.argv[2]][0]["agent"]
print("# agent status:", json.dumps({k: d.get(k) for k in ("connected", "hint_age_s", "hint_sets", "errors", "last_error")}))
sys.exit(0 if d["connected"] and sum(d["errors"].values()) == 0 else 1)
PY
ok $? "vnumactl status: connected, and no refused input counted for any break"
refusals=$(grep -c "warning: Not opening the agent channel" "$VN_LOG")
[ $((warn1 - warn0 - refusals)) -le 2 ] && [ "$refusals" -le 2 ]
ok $? "no warning storm: $((warn1 - warn0 - refusals)) warning lines during $((AGENT_CYCLES + HOST_CYCLES + 1 + PLUG_CYCLES)) breaks, and $refusals for B2's refused socket (once per read of the live XML)"
n_enoent=$(grep -c "Cannot open the agent channel of '$NAME'" "$VN_LOG")
note "debug lines 'Cannot open the agent channel': $n_enoent (one per pass while the socket was away)"
grep '^<[0-4]>' "$VN_LOG" | tail -n 5 | sed 's/^/# /'
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad stops cleanly (exit $VN_EXIT)"
finish
