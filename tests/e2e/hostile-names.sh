#!/bin/bash
# Hostile domain names against the real libvirtd, QEMU (TCG) and a private vnumad:
#   names with spaces, ' and ", backslashes, UTF-8 ("vm-é-名前"), shell metacharacters
#   ($(...), backticks, ; | & * ? < > !), a forged log field (x' action=acted reason='...),
#   a name holding another domain's decision line (z decision domain='...vm-é-名前' ...),
#   and the control characters libvirt lets through (CR and tab; it refuses '/' and a
#   newline, checked first) are opted in (mode auto), and then:
#   a. the log: one line per decision, every decision line parses, the name is quoted with
#      ' and \ escaped and reads back, no control character in the file, no forged field;
#   b. the metrics file: valid for tests/cli/promcheck.py and prometheus_client, every name
#      reads back exactly (CR and tab as U+FFFD, the uuid label tells them apart);
#   c. vnumactl status --json (exact names, also asked for by name over the control
#      socket), status as text (no raw control character), pause/resume by name;
#   d. the records: the live metadata's <decision> (virsh metadata), the QOM object and
#      the journal carry the exact name and uuid;
#   e. nothing was executed: no vnuma-pwned-* file anywhere a shell could have made it;
#   f. the state dir holds journal.jsonl and originals/ (records named by uuid: no file named
#      after a domain), the run dir the socket only;
#   g. vnumad run with umask 000: socket 0600 (dir 0700), state dir 0700, journal 0600,
#      metrics file 0644: nothing it writes is world-writable; a world-writable config
#      file is refused at start.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/hostile-name.xml.in
REAL_BUILD=$BUILD
PY=/usr/bin/python3  # Debian's, with python3-prometheus-client (not a pyenv one)
started=$SECONDS

e2e_preamble --built vnumad --built vnumactl \
    --need "python3-prometheus-client is not installed" "$PY -c 'import prometheus_client' 2>/dev/null"

PWN=vnuma-pwned-$$
CHECK=$E2E_TMP/check.py
cat >"$CHECK" <<'PY'
# check.py KIND ARGS...: one check of tests/e2e/hostile-names.sh; exit 0 when it holds,
# else 1 with the reason on stderr. NAMES is a file of the domain names, one per line.
import json, re, sys
import xml.etree.ElementTree as ET

def names_of(path):
    return [l.rstrip("\n") for l in open(path, encoding="utf-8", newline="\n") if l.rstrip("\n")]

def fail(msg):
    print("# " + msg[:600], file=sys.stderr)
    sys.exit(1)

def unquote(s):
    return re.sub(r"\\(.)", r"\1", s)

DECISION = re.compile(r"^<[67]>vnumad: (?:info|debug): decision domain='((?:[^'\\]|\\.)*)' pass=(\d+) "
                      r"action=([a-z-]+) reason='((?:[^'\\]|\\.)*)'((?: cell\d+=\S+)*)$")
kind, args = sys.argv[1], sys.argv[2:]

if kind == "log":
    log, names = open(args[0], "rb").read(), names_of(args[1])
    bad = [c for c in set(log) if (c < 0x20 and c != 0x0a) or c == 0x7f]
    if bad:
        fail("control characters in the log: %r" % bad)
    text = log.decode("utf-8")
    seen = {}
    for line in text.splitlines():
        # a decision that repeats the last one is logged at debug (issue 14), a change at info
        if not re.match(r"<[67]>vnumad: (info|debug): decision ", line):
            continue
        m = DECISION.match(line)
        if not m:
            fail("a decision line does not parse: %r" % line)
        seen.setdefault(unquote(m.group(1)), []).append(m.group(3))
        if m.group(3) == "error" and len(args) > 2:
            fail("a pass failed: %r" % line)
    for n in names:
        flat = n.replace("\r", " ").replace("\t", " ")
        if not seen.get(flat):
            fail("no decision line reads back as %r (seen: %r)" % (flat, list(seen)))
    forged = [d for d in seen if d not in [n.replace("\r", " ").replace("\t", " ") for n in names]
              and d.startswith("vnuma-e2e-")]
    if forged:
        fail("decision lines for names that do not exist: %r" % forged)
    print("%d decision lines, %d names" % (sum(len(v) for v in seen.values()), len(seen)))

elif kind == "metrics":
    from prometheus_client.parser import text_string_to_metric_families
    text, names, uuids = open(args[0], encoding="utf-8").read(), names_of(args[1]), names_of(args[2])
    info = {}
    for f in text_string_to_metric_families(text):
        for s in f.samples:
            if s.name == "vnuma_domain_info":
                info[s.labels["uuid"]] = s.labels["domain"]
    for n, u in zip(names, uuids):
        want = n.replace("\r", "\ufffd").replace("\t", "\ufffd")
        if info.get(u) != want:
            fail("uuid %s: domain label %r, want %r" % (u, info.get(u), want))
    print("%d domains in vnuma_domain_info" % len(info))

elif kind == "status":
    j = json.load(open(args[0]))
    j = j.get("return", j)
    got = [d.get("name") for d in j.get("domains", [])]
    want = names_of(args[1]) if len(args) > 1 else []
    if len(args) > 2:  # one domain asked for by name: exactly it
        if got != [args[2]]:
            fail("asked for %r, got %r" % (args[2], got))
    elif not set(want) <= set(got):
        fail("missing from status: %r" % sorted(set(want) - set(got)))

elif kind == "record":
    el = ET.fromstring(open(args[0], encoding="utf-8").read())
    d = el.find("decision")
    rec = json.loads(d.text) if d is not None and d.text else None
    if not rec or rec.get("domain") != args[1] or rec.get("uuid") != args[2]:
        fail("record %r" % (rec if rec is None else {k: rec.get(k) for k in ("domain", "uuid")}))

elif kind == "qom":
    reply = json.load(open(args[0]))
    rec = json.loads(reply["return"])
    if rec.get("domain") != args[1] or rec.get("uuid") != args[2]:
        fail("QOM record %r" % {k: rec.get(k) for k in ("domain", "uuid")})

elif kind == "journal":
    names = set(names_of(args[1]))
    seen = set()
    for line in open(args[0], encoding="utf-8"):
        seen.add(json.loads(line).get("domain"))
    if not names <= seen:
        fail("not in the journal: %r" % sorted(names - seen))

elif kind == "xml":  # write the domain XML of name args[1] from template args[0] to args[2]
    from xml.sax.saxutils import escape
    name = escape(args[1]).replace("\r", "&#13;").replace("\t", "&#9;")
    open(args[2], "w", encoding="utf-8").write(open(args[0]).read().replace("@NAME@", name))
else:
    fail("unknown check " + kind)
PY

# uuid_of NAME: the UUID of the defined domain called NAME (by UUID, as virsh cannot look up
# every name libvirt accepts)
uuid_of() {
    local u
    for u in $($VIRSH list --all --uuid); do
        [ "$($VIRSH domname "$u" 2>/dev/null)" = "$1" ] && { echo "$u"; return 0; }
    done
    return 1
}

# ---- libvirt's own limits on names ----
for bad in "a/../b" $'new\nline'; do
    $PY "$CHECK" xml "$T" "$E2E_PREFIX$bad" "$E2E_TMP/bad.xml"
    if $VIRSH define "$E2E_TMP/bad.xml" >"$E2E_TMP/bad.out" 2>&1; then
        uuid_of "$E2E_PREFIX$bad" >>"$E2E_TMP/domains"
        ok 1 "libvirt refuses the name $(printf %q "$bad")"
    else
        ok 0 "libvirt refuses the name $(printf %q "$bad") ($(grep -o 'cannot contain.*\|invalid char.*' "$E2E_TMP/bad.out" | head -n 1))"
    fi
done

# ---- the domains ----
SUFFIXES=(
    "sp ace 'single' \"double\""
    'back\slash\'
    'vm-é-名前'
    "sh \$(cd;touch $PWN);\`cd;touch $PWN-bt\`|&*?<>!#~%{}"
    "x' action=acted reason='forged"
    $'cr\rtab\t..'
    "z decision domain='${E2E_PREFIX}vm-é-名前' pass=1 action=acted reason='ok'"
)
NAMES=() UUIDS=()
: >"$E2E_TMP/names"
: >"$E2E_TMP/uuids"
for s in "${SUFFIXES[@]}"; do
    name=$E2E_PREFIX$s
    xml=$E2E_TMP/dom-${#NAMES[@]}.xml
    # the cleanup destroys and undefines by UUID: virsh cannot look up a name with a CR
    $PY "$CHECK" xml "$T" "$name" "$xml" &&
        $VIRSH define "$xml" >"$E2E_TMP/define.out" 2>&1 &&
        uuid_of "$name" >>"$E2E_TMP/domains" &&
        $VIRSH start "$name" >"$E2E_TMP/define.out" 2>&1
    ok $? "define and start $(printf %q "$name") ($(head -c 200 "$E2E_TMP/define.out" | tr '\n' ' '))"
    NAMES+=("$name")
    UUIDS+=("$($VIRSH domuuid "$name" 2>/dev/null)")
    printf '%s\n' "$name" >>"$E2E_TMP/names"
    printf '%s\n' "${UUIDS[-1]}" >>"$E2E_TMP/uuids"
done
[ $fail -eq 0 ] || finish

# ---- vnumad under umask 000 (a wrapper: start_vnumad and vnctl run $BUILD/...) ----
WRAP=$E2E_TMP/umask000
mkdir -p "$WRAP"
printf '#!/bin/sh\numask 000\nexec "%s/vnumad" "$@"\n' "$(realpath "$REAL_BUILD")" >"$WRAP/vnumad"
printf '#!/bin/sh\nexec "%s/vnumactl" "$@"\n' "$(realpath "$REAL_BUILD")" >"$WRAP/vnumactl"
chmod 755 "$WRAP/vnumad" "$WRAP/vnumactl"
BUILD=$WRAP
METRICS=$E2E_TMP/metrics/vnuma.prom
mkdir -p "$(dirname "$METRICS")"
start_vnumad "metrics_file = $METRICS"
ok $? "vnumad (umask 000) starts and listens on its socket"
vnumad_alive || { tail -n 20 "$VN_LOG" | sed 's/^/#   /'; finish; }
grep -q '^Umask:[[:space:]]*0000$' "/proc/$VN_PID/status"
ok $? "g: vnumad runs with umask 000 ($(grep Umask "/proc/$VN_PID/status" 2>/dev/null))"

status_json() { vnctl status --json >"$E2E_TMP/status.json" 2>"$E2E_TMP/status.err"; }
all_tracked() {
    status_json && $PY "$CHECK" status "$E2E_TMP/status.json" "$E2E_TMP/names" 2>/dev/null
}
# every domain recorded at least twice in the log (a decision line per pass: info when it
# changed, debug when it repeats the last one)
passes_done() {
    local n
    n=$(grep -Ec '^<[67]>vnumad: (info|debug): decision ' "$VN_LOG")
    [ "$n" -ge $((2 * ${#NAMES[@]})) ] && [ -s "$METRICS" ]
}
wait_for 30 all_tracked
ok $? "c: vnumactl status --json lists every name exactly ($($PY "$CHECK" status "$E2E_TMP/status.json" "$E2E_TMP/names" 2>&1 | head -c 300))"
wait_for 30 passes_done
ok $? "vnumad ran passes over all ${#NAMES[@]} domains ($(grep -Ec '^<[67]>vnumad: (info|debug): decision ' "$VN_LOG") decision lines)"

# ---- a. the log ----
out=$($PY "$CHECK" log "$VN_LOG" "$E2E_TMP/names" 2>&1)
ok $? "a: every decision line parses, names read back, no control character, no forged field ($out)"
out=$($PY "$CHECK" log "$VN_LOG" "$E2E_TMP/names" no-errors 2>&1)
ok $? "a: every domain is sampled and decided, none fails (libvirt names the pid file of a name with ' or \" after its escaped name: vnumad reads the status file, named after the raw name) $out"
! grep -q "decision domain='x' " "$VN_LOG"
ok $? "a: the forged name never ends its quoted field early (no decision domain='x' line)"
# the last name holds "decision domain='<the UTF-8 name>' ...": operations.md's grep for that
# domain's decisions must find its own decision lines only
real_re="^<[67]>vnumad: (info|debug): decision domain='${NAMES[2]}' pass="
all=$(grep -cF "decision domain='${NAMES[2]}'" "$VN_LOG")
real=$(grep -cE "$real_re" "$VN_LOG")
forged=$(grep -F "decision domain='${NAMES[2]}'" "$VN_LOG" | grep -vE "$real_re" | head -n 1)
[ "$all" = "$real" ] && [ "$real" -ge 1 ]
ok $? "a: no name makes a line that greps as another domain's decision: the $all lines with decision domain='${NAMES[2]}' are its own ($real) ${forged:+(forged: $forged)}"
[ "$(grep -c '' "$VN_LOG")" = "$(grep -c '^<[0-7]>vnumad: ' "$VN_LOG")" ]
ok $? "a: every line of the log is a vnumad message (no line made by a name)"

# ---- b. the metrics ----
$PY tests/cli/promcheck.py "$METRICS" >"$E2E_TMP/promcheck.out" 2>&1
ok $? "b: the metrics file passes promcheck and prometheus_client ($(tail -n 1 "$E2E_TMP/promcheck.out"))"
out=$($PY "$CHECK" metrics "$METRICS" "$E2E_TMP/names" "$E2E_TMP/uuids" 2>&1)
ok $? "b: every name reads back from vnuma_domain_info by its uuid ($out)"
vnctl metrics >"$E2E_TMP/metrics.txt" 2>&1 && $PY tests/cli/promcheck.py "$E2E_TMP/metrics.txt" >/dev/null 2>&1
ok $? "b: vnumactl metrics is valid as well"

# ---- c. vnumactl ----
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]}
    vnctl status "$name" --json >"$E2E_TMP/one.json" 2>"$E2E_TMP/one.err" &&
        $PY "$CHECK" status "$E2E_TMP/one.json" "$E2E_TMP/names" "$name"
    ok $? "c: vnumactl status $(printf %q "$name") --json: the control socket finds it by name ($(head -c 200 "$E2E_TMP/one.err"))"
done
vnctl status >"$E2E_TMP/status.txt" 2>&1
rc=$?
$PY - "$E2E_TMP/status.txt" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
sys.exit(1 if any((c < 0x20 and c != 0x0a) or c == 0x7f for c in b) else 0)
PY
ok $(( rc || $? )) "c: vnumactl status (text): no raw control character (CR, tab) from a name"
grep -qF "${E2E_PREFIX}cr?tab?.." "$E2E_TMP/status.txt" && grep -qF "${NAMES[2]}" "$E2E_TMP/status.txt" &&
    grep -qF "${NAMES[3]}" "$E2E_TMP/status.txt"
ok $? "c: ... and shows the names (CR and tab as '?', UTF-8 and metacharacters as they are)"
vnctl decisions "${NAMES[4]}" >"$E2E_TMP/dec.txt" 2>&1 && [ -s "$E2E_TMP/dec.txt" ]
ok $? "c: vnumactl decisions $(printf %q "${NAMES[4]}") answers ($(head -c 150 "$E2E_TMP/dec.txt" | tr '\n' ' '))"
LC_ALL=C.UTF-8 vnctl advise "${NAMES[2]}" >"$E2E_TMP/advise.txt" 2>&1
$PY - "$E2E_TMP/advise.txt" "${NAMES[2]}" <<'PY'
import sys, unicodedata
def width(s):
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
rows = [l for l in lines[1:] if l.startswith(sys.argv[2][:10])]
# the DOMAIN column is 20 terminal columns: the name cut in whole characters, then the cell
ok = lines and lines[0].startswith("DOMAIN ") and rows and all(
    any(width(l[:i]) == 20 and l[i] == " " and l[:i].rstrip() and sys.argv[2].startswith(l[:i].rstrip())
        and l[i:].split()[0].isdigit() for i in range(len(l))) for l in rows)
for l in lines:
    print("# | " + l)
sys.exit(0 if ok else 1)
PY
ok $? "c: vnumactl advise $(printf %q "${NAMES[2]}") (UTF-8 locale): the name cut to 20 columns in whole characters, the cell column in line"
for i in 3 4; do
    name=${NAMES[$i]}
    vnctl pause "$name" >"$E2E_TMP/pause.txt" 2>&1 &&
        vnctl status "$name" --json >"$E2E_TMP/one.json" 2>&1 &&
        $PY -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j["domains"][0]["paused"] else 1)' "$E2E_TMP/one.json" &&
        vnctl resume "$name" >"$E2E_TMP/resume.txt" 2>&1
    ok $? "c: pause and resume $(printf %q "$name") by name ($(head -c 150 "$E2E_TMP/pause.txt" "$E2E_TMP/resume.txt" 2>&1 | tr '\n' ' '))"
done

# ---- d. the records ----
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]} uuid=${UUIDS[$i]}
    live_state "$name" >"$E2E_TMP/meta.xml"
    out=$($PY "$CHECK" record "$E2E_TMP/meta.xml" "$name" "$uuid" 2>&1)
    ok $? "d: $(printf %q "$name"): vnumad's live <state> metadata's <decision> has the exact name and uuid $out"
    $VIRSH qemu-monitor-command "$name" \
        '{"execute":"qom-get","arguments":{"path":"/objects/vnuma-decision","property":"identity"}}' \
        >"$E2E_TMP/qom.json" 2>&1
    out=$($PY "$CHECK" qom "$E2E_TMP/qom.json" "$name" "$uuid" 2>&1)
    ok $? "d: $(printf %q "$name"): the QOM record has the exact name and uuid $out"
done
out=$($PY "$CHECK" journal "$VN_JOURNAL" "$E2E_TMP/names" 2>&1)
ok $? "d: the journal has records with every exact name $out"

# ---- e. nothing was executed ----
pwned=$(find / /root /tmp /run /var/lib/libvirt /var/lib/vnuma /var/log/libvirt "$E2E_TMP" \
    "$(readlink "/proc/$VN_PID/cwd")" "$(readlink "/proc/$(own_pids libvirtd | head -n 1)/cwd")" \
    -maxdepth 3 -name "$PWN*" 2>/dev/null | sort -u)
[ -z "$pwned" ]
ok $? "e: no $PWN* file was created: no shell ran a name ($pwned)"

# ---- f. file names ----
# state_files_ok: journal.jsonl, and originals/ holding records named by uuid only
state_files_ok() {
    local f
    for f in $(ls -A "$VN_STATE"); do
        case $f in journal.jsonl | originals) ;; *) return 1 ;; esac
    done
    [ -f "$VN_JOURNAL" ] || return 1
    [ -d "$VN_STATE/originals" ] || return 0
    ! ls -A "$VN_STATE/originals" | grep -Evq '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
}
state_files_ok
ok $? "f: the state dir holds journal.jsonl and originals/ with files named by uuid only ($(cd "$VN_STATE" && find . -mindepth 1 | tr '\n' ' '))"
[ "$(ls -A "$(dirname "$VN_SOCK")")" = "vnumad.sock" ]
ok $? "f: the run dir holds the socket only ($(ls -A "$(dirname "$VN_SOCK")" | tr '\n' ' '))"
[ "$(ls -A "$(dirname "$METRICS")")" = "vnuma.prom" ]
ok $? "f: the metrics dir holds vnuma.prom only, no temporary file left"

# ---- g. modes under umask 000 ----
modes="$(stat -c '%a' "$VN_SOCK") $(stat -c '%a' "$(dirname "$VN_SOCK")") $(stat -c '%a' "$VN_STATE") $(stat -c '%a' "$VN_JOURNAL") $(stat -c '%a' "$METRICS")"
[ "$modes" = "600 700 700 600 644" ]
ok $? "g: socket 600, run dir 700, state dir 700, journal 600, metrics 644 (got $modes)"
bad=$(find "$VN_STATE/originals" \( -type d ! -perm 0700 \) -o \( -type f ! -perm 0600 \) 2>/dev/null)
[ -z "$bad" ]
ok $? "g: the records of the originals 600 in a 700 directory ($bad)"
ww=$(find "$(dirname "$VN_SOCK")" "$VN_STATE" "$(dirname "$METRICS")" -perm -0002 2>/dev/null)
[ -z "$ww" ]
ok $? "g: nothing vnumad wrote is world-writable ($ww)"

vpid=$VN_PID
stop_vnumad
[ "$VN_EXIT" = 0 ]
ok $? "vnumad (pid $vpid) exits 0 on SIGTERM after all of it (exit $VN_EXIT)"

# a world-writable configuration file is refused at start, with the file and the reason
BUILD=$REAL_BUILD
printf 'interval = 1\n' >"$E2E_TMP/ww.conf"
chmod 666 "$E2E_TMP/ww.conf"
"$BUILD/vnumad" --check-config --config "$E2E_TMP/ww.conf" >"$E2E_TMP/ww.out" 2>&1
rc=$?
[ $rc -ne 0 ] && grep -q "$E2E_TMP/ww.conf: writable by every user" "$E2E_TMP/ww.out"
ok $? "g: a world-writable vnumad.conf is refused (exit $rc: $(head -c 200 "$E2E_TMP/ww.out"))"

note "run time $((SECONDS - started)) s"
finish
