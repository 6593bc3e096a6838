#!/bin/bash
# Metrics: the renderer's output for hostile domain names (tests/unit/test-metrics.c
# writes it) and a live vnumad's metrics_file and `vnumactl metrics`, each checked by
# tests/cli/promcheck.py (the text format's grammar and python3-prometheus-client's
# parser). The live vnumad runs with a private socket, state dir and a libvirt URI it
# cannot use (test:///default lacks keepalive), so it touches no domain: it must still
# write its metrics every pass, count the failed connections, notice a fake numad
# (a copy of sleep named numad) at start, tell systemd READY=1 on $NOTIFY_SOCKET, and
# follow a metrics_file change on SIGHUP.
set -u
BUILD=${BUILD:-build}
PY=/usr/bin/python3
# shellcheck source=tests/lib/check.sh
. "$(dirname "$0")/../lib/check.sh"
tmp=$(mktemp -d /tmp/vnuma-metrics.XXXXXX)
pid="" numad="" listener=""
cleanup() {
    for p in $pid $numad $listener; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
$PY -c 'import prometheus_client' 2>/dev/null; ok $? "python3-prometheus-client is installed (the real parser)"

"$BUILD/tests/test-metrics" --write "$tmp/sample.prom" >"$tmp/unit.log" 2>&1
ok $? "test-metrics renders hostile domain names and writes the sample"
$PY tests/cli/promcheck.py "$tmp/sample.prom" >"$tmp/check" 2>&1
ok $? "the sample passes the grammar and the parser ($(tail -n 1 "$tmp/check"))"
$PY - "$tmp/sample.prom" <<'PYEOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
names = {s.labels['domain'] for f in text_string_to_metric_families(open(sys.argv[1]).read())
         for s in f.samples if f.name == 'vnuma_domain_info'}
want = {'quote"d', 'back\\slash', 'new\nline', 'caf\u00e9-\u6570\u636e-\U0001F600'}
sys.exit(0 if want <= names else 1)
PYEOF
ok $? "quotes, backslashes, newlines and non-ASCII names read back exactly"
# negative controls: the checker must refuse what a scraper refuses
printf 'vnuma_x{domain="a"b"} 1\n' >"$tmp/bad1.prom"
printf 'vnuma_x{domain="a\\tb"} 1\n' >"$tmp/bad2.prom"
printf '# TYPE vnuma_x counter\nvnuma_x{a="1"} 1\nvnuma_y 1\nvnuma_x{a="2"} 1\n' >"$tmp/bad3.prom"
printf 'vnuma_x{domain="a\nb"} 1\n' >"$tmp/bad4.prom"
for b in 1 2 3 4; do
    ! $PY tests/cli/promcheck.py "$tmp/bad$b.prom" >/dev/null 2>&1
    ok $? "promcheck refuses broken file $b ($(head -c 40 "$tmp/bad$b.prom" | tr '\n' ' '))"
done

[ "$(id -u)" = 0 ] || { note "not root: the live part needs root (vnumad refuses otherwise)"; finish; }
cp /bin/sleep "$tmp/numad"
"$tmp/numad" 60 &
numad=$!
$PY -c "
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind(sys.argv[1]); s.settimeout(20)
while True:
    print(s.recv(200).decode(), flush=True)
" "$tmp/notify" >"$tmp/notify.out" 2>&1 &
listener=$!
wait_for 60 test -S "$tmp/notify"
cat >"$tmp/vnumad.conf" <<EOC
interval = 0.3
uri = test:///default
socket = $tmp/run/vnumad.sock
state_dir = $tmp/state
metrics_file = $tmp/one.prom
EOC
NOTIFY_SOCKET=$tmp/notify "$BUILD/vnumad" --foreground --config "$tmp/vnumad.conf" 2>"$tmp/log" &
pid=$!
wait_for 60 test -s "$tmp/one.prom"
[ -s "$tmp/one.prom" ]; ok $? "vnumad writes metrics_file even while libvirt is unreachable"
[ "$(stat -c %a "$tmp/one.prom")" = 644 ]; ok $? "metrics_file is mode 0644 (node-exporter's user reads it)"
! ls "$tmp"/*.tmp >/dev/null 2>&1; ok $? "no temporary file left beside it"
wait_for 5 grep -qx READY=1 "$tmp/notify.out"; ok $? "READY=1 sent to \$NOTIFY_SOCKET"
grep -q 'numad is running' "$tmp/log"; ok $? "a running numad is warned about at start"
"$BUILD/vnumactl" --socket "$tmp/run/vnumad.sock" metrics >"$tmp/ctl.prom" 2>"$tmp/ctl.err"
ok $? "vnumactl metrics answers"
$PY tests/cli/promcheck.py "$tmp/ctl.prom" "$tmp/one.prom" >"$tmp/check" 2>&1
ok $? "vnumactl metrics and metrics_file pass the check ($(tail -n 1 "$tmp/check"))"
diff <(grep -v '^#' "$tmp/ctl.prom" | sed 's/[{ ].*//' | sort -u) \
     <(grep -v '^#' "$tmp/one.prom" | sed 's/[{ ].*//' | sort -u) >/dev/null
ok $? "both have the same metric names"
grep -qx 'vnuma_libvirt_connected 0' "$tmp/ctl.prom" &&
    grep -qE '^vnuma_errors_total\{kind="libvirt-connect"\} [1-9]' "$tmp/ctl.prom"
ok $? "not connected, failed connections counted as errors by kind"
grep -qx 'vnuma_conflict{kind="numad"} 1' "$tmp/ctl.prom"; ok $? "vnuma_conflict{kind=\"numad\"} 1"
"$BUILD/vnumactl" --socket "$tmp/run/vnumad.sock" metrics --json >"$tmp/ctl.json" 2>&1 &&
    $PY -c 'import json,sys; assert "vnuma_passes_total" in json.load(open(sys.argv[1]))["text"]' "$tmp/ctl.json"
ok $? "vnumactl metrics --json: {\"text\": ...}"
sed -i "s|^metrics_file = .*|metrics_file = $tmp/two.prom|" "$tmp/vnumad.conf"
kill -HUP "$pid"
wait_for 60 test -s "$tmp/two.prom"
[ -s "$tmp/two.prom" ]; ok $? "SIGHUP: the new metrics_file is written"
wait_for 5 grep -qx RELOADING=1 "$tmp/notify.out"; ok $? "RELOADING=1 sent around the reload"
sed -i "s|^metrics_file = .*|metrics_file = $tmp/missing-dir/x.prom|" "$tmp/vnumad.conf"
kill -HUP "$pid"
# more than 5 failed writes counted (interval 0.3 s: about 2 s on an idle machine)
write_failures_over_5() {
    "$BUILD/vnumactl" --socket "$tmp/run/vnumad.sock" metrics >"$tmp/ctl2.prom" 2>&1 &&
        [ "$(grep -oE 'metrics-file"\} [0-9]+' "$tmp/ctl2.prom" | awk '{print $2}')" -gt 5 ] 2>/dev/null
}
wait_for 15 write_failures_over_5
grep -qE '^vnuma_errors_total\{kind="metrics-file"\} [1-9]' "$tmp/ctl2.prom"
ok $? "an unwritable metrics_file is counted (vnuma_errors_total{kind=\"metrics-file\"})"
failures=$(grep -oE 'metrics-file"\} [0-9]+' "$tmp/ctl2.prom" | awk '{print $2}')
[ "$(grep -c 'Cannot write the metrics' "$tmp/log")" -le 5 ] && [ "${failures:-0}" -gt 5 ]
ok $? "and its warning is rate-limited ($(grep -c 'Cannot write the metrics' "$tmp/log") lines for $(grep -oE 'metrics-file"\} [0-9]+' "$tmp/ctl2.prom" | awk '{print $2}') failures)"
kill -TERM "$pid"
wait "$pid"
ok $? "SIGTERM: exit 0"
pid=""
wait_for 5 grep -qx STOPPING=1 "$tmp/notify.out"; ok $? "STOPPING=1 sent"
finish
