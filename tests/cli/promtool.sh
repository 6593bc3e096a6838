#!/bin/bash
# The Prometheus alerting rules shipped in dist/prometheus/vnuma-alerts.yml: Debian's promtool
# checks them (`promtool check rules`) and runs their unit tests
# (tests/prometheus/vnuma-alerts.test.yml: each alert where it must fire and where it must
# not). Negative controls show that both steps can fail, and every vnuma_* metric the rules
# query is one vnumad writes (host/metrics.c), so a renamed metric cannot leave an alert that
# never fires. tests/e2e/prometheus.sh loads the same rules into a live Prometheus.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/lib/check.sh
. tests/lib/check.sh
command -v promtool >/dev/null || skip_all "promtool is not installed (Debian package prometheus; make deps installs it)"
rules=dist/prometheus/vnuma-alerts.yml
tmp=$(mktemp -d /tmp/vnuma-promtool.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

promtool check rules "$rules" >"$tmp/check" 2>&1
ok $? "promtool check rules $rules ($(grep -o 'SUCCESS.*' "$tmp/check"))"
nr=$(grep -c '^ *- alert:' "$rules")
grep -q "SUCCESS: $nr rules found" "$tmp/check"
ok $? "promtool found all $nr alerts"
promtool test rules tests/prometheus/vnuma-alerts.test.yml >"$tmp/test" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$tmp/test" | head -n 40
ok $rc "promtool test rules tests/prometheus/vnuma-alerts.test.yml"
# every alert has a test that expects it to fire
missing=""
for a in $(sed -n 's/^ *- alert: *//p' "$rules"); do
    grep -q "alertname: $a\$" tests/prometheus/vnuma-alerts.test.yml || missing="$missing $a"
done
[ -z "$missing" ]
ok $? "every alert is tested (untested:${missing:- none})"

# negative controls: a broken expression fails the check, a wrong expectation fails the test
sed 's/expr: vnuma_libvirt_connected == 0/expr: vnuma_libvirt_connected ==/' "$rules" >"$tmp/bad.yml"
! promtool check rules "$tmp/bad.yml" >/dev/null 2>&1
ok $? "negative control: promtool check rules refuses a broken expression"
mkdir -p "$tmp/t/tests/prometheus" "$tmp/t/dist/prometheus"
cp "$rules" "$tmp/t/dist/prometheus/"
sed 's/{severity: critical, instance: dead, job: node}/{severity: critical, instance: ok, job: node}/' \
    tests/prometheus/vnuma-alerts.test.yml >"$tmp/t/tests/prometheus/vnuma-alerts.test.yml"
! cmp -s tests/prometheus/vnuma-alerts.test.yml "$tmp/t/tests/prometheus/vnuma-alerts.test.yml" &&
    ! promtool test rules "$tmp/t/tests/prometheus/vnuma-alerts.test.yml" >/dev/null 2>&1
ok $? "negative control: promtool test rules fails when an alert fires on the wrong host"

# the metrics the rules query exist in vnumad's exposition
unknown=""
for m in $(grep -o 'vnuma_[a-z_]*' "$rules" | sort -u); do
    grep -q "\"$m\"" host/metrics.c || unknown="$unknown $m"
done
[ -z "$unknown" ]
ok $? "every vnuma_* metric in the rules is one vnumad writes (unknown:${unknown:- none})"
finish
