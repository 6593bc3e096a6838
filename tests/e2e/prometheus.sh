#!/bin/bash
# vnumad's metrics as an operator scrapes them, with Debian's real parts: vnumad writes
# metrics_file into a directory Debian's prometheus-node-exporter reads (textfile collector),
# Debian's prometheus scrapes the exporter and loads dist/prometheus/vnuma-alerts.yml, and
# PromQL through Prometheus' HTTP API returns the per-cell locality and the bytes moved of a
# live opted-in domain, equal to what vnumactl metrics says. The rules load healthy and none
# fires on this healthy host. Then vnumad is stopped (SIGSTOP: the file stays, as after a
# hang or a crash) and the staleness VnumadNotPassing alerts on grows in Prometheus.
# Both servers listen on free 127.0.0.1 ports of their own, with their data in the test's
# temporary directory; the packages' own services are never started.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl \
    --tool prometheus "Debian package prometheus; make deps installs it" \
    --tool prometheus-node-exporter "Debian package prometheus-node-exporter; make deps installs it"

PROM_PID="" EXP_PID=""
e2e_at_exit 'for p in $PROM_PID $EXP_PID; do kill "$p" 2>/dev/null; done; wait $PROM_PID $EXP_PID 2>/dev/null'

# free_port: a TCP port on 127.0.0.1 nobody listens on now (the kernel's pick).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# promql EXPR: Prometheus' instant query result, one "LABELS VALUE" line per series
# (LABELS as k=v,k=v sorted); nothing when the query returned no series; 1 on an API error.
promql() {
    local out
    out=$(curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1") ||
        return 1
    python3 -c '
import json, sys
r = json.load(sys.stdin)
if r.get("status") != "success":
    sys.exit(1)
for s in r["data"]["result"]:
    m = s["metric"]
    print(",".join("%s=%s" % (k, m[k]) for k in sorted(m) if k != "__name__"), s["value"][1])
' <<<"$out"
}
# has_series EXPR [N]: the query returns at least N series (default 1)
has_series() { [ "$(promql "$1" | wc -l)" -ge "${2:-1}" ]; }
# metric_value NAME LABEL-MATCH: the value in `vnumactl metrics` of the first NAME{...} line
# whose labels contain LABEL-MATCH
metric_value() {
    vnctl metrics | awk -v n="$1" -v m="$2" 'index($0, n "{") == 1 && index($0, m) { print $NF; exit }'
}

D=$(define_domain prom "$T")
ok $? "domain $D defined and started"
textdir=$E2E_TMP/textfile
mkdir -p "$textdir"
start_vnumad "metrics_file = $textdir/vnuma.prom"
set_meta "$D" '<balancer mode="auto"/>' >/dev/null
wait_for 30 log_has "decision domain='$D'"
ok $? "vnumad decided on $D"
wait_for 10 grep -q "vnuma_cell_locality_ratio{domain=\"$D\"" "$textdir/vnuma.prom"
ok $? "vnumad writes the cell locality of $D into $textdir/vnuma.prom"

EXP_PORT=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$EXP_PORT" --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$textdir" >"$E2E_TMP/exporter.log" 2>&1 &
EXP_PID=$!
wait_for 20 bash -c "curl -sf --max-time 2 http://127.0.0.1:$EXP_PORT/metrics | grep -q 'vnuma_cell_locality_ratio{.*domain=\"$D\"'"
ok $? "prometheus-node-exporter serves vnumad's metrics on 127.0.0.1:$EXP_PORT (textfile collector)"
curl -sf --max-time 2 "http://127.0.0.1:$EXP_PORT/metrics" | grep -q '^node_textfile_scrape_error 0'
ok $? "the exporter read vnuma.prom without error (node_textfile_scrape_error 0)"

PROM_PORT=$(free_port)
cat >"$E2E_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $PWD/dist/prometheus/vnuma-alerts.yml
scrape_configs:
  - job_name: node
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
EOF
prometheus --config.file="$E2E_TMP/prometheus.yml" --storage.tsdb.path="$E2E_TMP/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" >"$E2E_TMP/prometheus.log" 2>&1 &
PROM_PID=$!
wait_for 60 has_series 'up{job="node"} == 1'
ok $? "Prometheus on 127.0.0.1:$PROM_PORT scrapes the exporter (up == 1)"
[ $fail -eq 0 ] || { tail -n 20 "$E2E_TMP/prometheus.log" | sed 's/^/# /'; finish; }

wait_for 20 has_series "vnuma_cell_locality_ratio{domain=\"$D\"}" 2
ok $? "PromQL returns the locality of both cells of $D"
promql "vnuma_cell_locality_ratio{domain=\"$D\"}" >"$E2E_TMP/loc"
sed 's/^/# /' "$E2E_TMP/loc"
bad=0
for c in 0 1; do
    want=$(metric_value vnuma_cell_locality_ratio "domain=\"$D\",uuid=\"$($VIRSH domuuid "$D")\",cell=\"$c\"")
    got=$(sed -n "s/.*cell=$c,.*domain=$D,.* \([0-9.e+-]*\)$/\1/p" "$E2E_TMP/loc")
    python3 -c "import sys; sys.exit(0 if abs(float('${got:-nan}') - float('${want:-nan}')) < 1e-9 else 1)" || bad=1
    note "cell $c: Prometheus $got, vnumactl metrics $want"
done
ok $bad "the cells' locality in Prometheus is what vnumad wrote"
wait_for 10 has_series "vnuma_domain_moved_bytes_total{domain=\"$D\"} >= 0"
ok $? "PromQL returns the bytes moved of $D: $(promql "vnuma_domain_moved_bytes_total{domain=\"$D\"}" | awk '{print $NF}')"
want=$(metric_value vnuma_domain_moved_bytes_total "domain=\"$D\"")
[ "$(promql "vnuma_domain_moved_bytes_total{domain=\"$D\"}" | awk '{print $NF}')" = "$want" ]
ok $? "the bytes moved in Prometheus are what vnumad wrote ($want)"
wait_for 20 has_series 'rate(vnuma_passes_total[10s]) > 0'
ok $? "vnumad's passes grow in Prometheus (rate(vnuma_passes_total[10s]) > 0)"

# the shipped rules: loaded, healthy, and quiet on a healthy host
curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/rules" >"$E2E_TMP/rules.json"
python3 - "$E2E_TMP/rules.json" "$(grep -c '^ *- alert:' dist/prometheus/vnuma-alerts.yml)" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rules = [x for g in r["data"]["groups"] for x in g["rules"] if x["type"] == "alerting"]
bad = [x["name"] for x in rules if x.get("health") not in ("ok", "unknown")]
print("# %d alerting rules loaded, unhealthy: %s" % (len(rules), bad or "none"))
sys.exit(0 if len(rules) == int(sys.argv[2]) and not bad else 1)
PY
ok $? "Prometheus loaded every alert of dist/prometheus/vnuma-alerts.yml, all healthy"
wait_for 20 bash -c "curl -sf --max-time 5 http://127.0.0.1:$PROM_PORT/api/v1/rules | python3 -c '
import json, sys
r = json.load(sys.stdin)
sys.exit(0 if all(x.get(\"health\") == \"ok\" for g in r[\"data\"][\"groups\"] for x in g[\"rules\"]) else 1)'"
ok $? "every rule has been evaluated with health ok"
alerts=$(curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/api/v1/alerts" |
    python3 -c 'import json, sys; print(" ".join(a["labels"]["alertname"] for a in json.load(sys.stdin)["data"]["alerts"]))')
[ -z "$alerts" ]
ok $? "no alert is pending or firing on this healthy host${alerts:+ (got: $alerts)}"

# a stopped vnumad: the file stays, its last pass ages, the alert's expression sees it
kill -STOP "$VN_PID"
wait_for 30 has_series 'time() - vnuma_last_pass_timestamp_seconds > 10'
ok $? "with vnumad stopped, Prometheus sees its last pass age past 10 s (VnumadNotPassing's signal)"
kill -CONT "$VN_PID"
wait_for 30 has_series 'time() - vnuma_last_pass_timestamp_seconds < 5'
ok $? "resumed, vnumad passes again and the age falls back under 5 s"
finish
