#!/bin/bash
# What a person watches, against a live vnumad and two opted-in domains (real libvirtd, QEMU):
#   a. `vnumactl top` in a real terminal (tmux, 80x24, as over ssh): the head, the columns,
#      a row per cell of each domain with its home node, locality, busy vCPUs, memory and
#      decision, the picked domain's details; `s` and `l` sort, down picks the next domain,
#      `q` quits with status 0 and gives the terminal back; nothing is drawn past 80x24.
#   b. stdout not a terminal: the table once, every cell, exit 0; no vnumad: one error line.
#   c. `vnumactl history DOMAIN`: the charts and the table from the journal vnumad writes
#      (found by asking vnumad), and --json with one entry per record of the domain there.
#   d. bash completion offers the names of the domains vnumad tracks.
#   e. a UTF-8 name wider than the name column (2-column characters): cut in whole characters,
#      the columns after it in line, in a UTF-8 terminal, in the C locale ('?') and piped.
# The screen tmux captured in (a) is kept as $BUILD/top-screen.txt (the README shows one).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl --tool tmux "Debian package tmux; make deps installs it"

TMUX_SOCK=$E2E_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
e2e_at_exit 'for s in "$E2E_TMP"/tmux*.sock; do tmux -S "$s" kill-server 2>/dev/null; done'
screen() { tm capture-pane -p -t top 2>/dev/null; }
screen_has() { screen | grep -q -- "$1"; }

# B is advised on, so read without QEMU's monitor: its cells of 64 and 96 MiB are told apart in
# QEMU's maps by their sizes (equal anonymous cells would be left uncounted: docs/records.md)
A=$(define_domain top-a "$T") && B=$(define_domain top-b "$T" \
    "s|<cell id='1' cpus='1' memory='64' unit='MiB'/>|<cell id='1' cpus='1' memory='96' unit='MiB'/>|" \
    "s|<memory unit='MiB'>128</memory>|<memory unit='MiB'>160</memory>|")
ok $? "domains $A and $B (cells of 64 and 96 MiB) defined and started"
start_vnumad
set_meta "$A" '<balancer mode="auto"/>' >/dev/null
set_meta "$B" '<balancer mode="advise"/>' >/dev/null
wait_for 30 bash -c "grep -q \"decision domain='$A'\" '$VN_LOG' && grep -q \"decision domain='$B'\" '$VN_LOG'"
ok $? "vnumad decided on both"

# ---- a. the live view in an 80x24 terminal ----
tm new-session -d -s top -x 80 -y 24 \
    "TERM=xterm-256color $BUILD/vnumactl --socket $VN_SOCK top -d 0.5; echo \"exit=\$?\" >$E2E_TMP/top.exit; sleep 600"
wait_for 20 screen_has "^vnumad pass"
ok $? "top draws its head line in tmux"
wait_for 10 bash -c "$(declare -f screen tm); TMUX_SOCK=$TMUX_SOCK; [ \$(screen | grep -c -- '$E2E_PREFIX') -ge 5 ]"
screen >"$E2E_TMP/screen1"
sed 's/^/# | /' "$E2E_TMP/screen1"
grep -Eq '^DOMAIN +CELL +HOME +LOCAL +BUSY +MEMORY +HOT +MOVING +ETA +DECISION' "$E2E_TMP/screen1"
ok $? "the column heads: DOMAIN CELL HOME LOCAL BUSY MEMORY HOT MOVING ETA DECISION"
for d in "$A" "$B"; do
    for c in 0 1; do
        mem=64M
        [ "$d" = "$B" ] && [ $c = 1 ] && mem=96M
        grep -Eq "^$d +$c +0 +100% +[0-9]+/1 +$mem +- +- +- +[a-z-]+" "$E2E_TMP/screen1"
        ok $? "a row for $d cell $c: home node 0, 100% local, busy of 1 vCPU, $mem, one tier, nothing moving, a decision"
    done
done
grep -q "^$A: mode auto, state ok" "$E2E_TMP/screen1" && grep -q "^  last: pass [0-9]" "$E2E_TMP/screen1"
ok $? "the picked domain's details: mode, state, its last decision"
awk 'length($0) > 80 { bad = 1 } END { exit bad }' "$E2E_TMP/screen1" && [ "$(wc -l <"$E2E_TMP/screen1")" -le 24 ]
ok $? "nothing past 80 columns and 24 lines"
cp "$E2E_TMP/screen1" "$BUILD/top-screen.txt"

tm send-keys -t top l
wait_for 10 screen_has "^sort: locality"
ok $? "'l' sorts by locality"
tm send-keys -t top s
wait_for 10 screen_has "^sort: moving"
ok $? "'s' goes on to the next sort key (moving)"
tm send-keys -t top n Down Down
wait_for 10 bash -c "$(declare -f screen tm); TMUX_SOCK=$TMUX_SOCK; screen | grep -q '^$B: mode advise'"
ok $? "down, down picks the next domain ($B, its details shown)"
p1=$(screen | sed -n 's/^vnumad pass \([0-9]*\).*/\1/p')
wait_for 10 bash -c "$(declare -f screen tm); TMUX_SOCK=$TMUX_SOCK; [ \"\$(screen | sed -n 's/^vnumad pass \([0-9]*\).*/\1/p')\" -gt ${p1:-0} ]"
ok $? "the view refreshes by itself (pass ${p1:-?} and later)"
tm send-keys -t top q
wait_for 10 test -s "$E2E_TMP/top.exit"
[ "$(cat "$E2E_TMP/top.exit" 2>/dev/null)" = "exit=0" ]
ok $? "'q' quits with status 0 ($(cat "$E2E_TMP/top.exit" 2>/dev/null))"
! screen_has "^DOMAIN .* CELL"
ok $? "the terminal is given back (the table is gone from the screen)"

# ---- b. not a terminal ----
"$BUILD/vnumactl" --socket "$VN_SOCK" top >"$E2E_TMP/once" 2>&1
rc=$?
sed 's/^/# | /' "$E2E_TMP/once"
[ $rc = 0 ] && [ "$(grep -c "^vnuma-e2e-" "$E2E_TMP/once")" = 4 ] && ! grep -q $'\e' "$E2E_TMP/once"
ok $? "piped, top prints the table once: 4 rows, no escape sequences, exit 0"
"$BUILD/vnumactl" --socket "$E2E_TMP/nobody.sock" top >"$E2E_TMP/none" 2>&1
[ $? = 1 ] && [ "$(wc -l <"$E2E_TMP/none")" = 1 ] && grep -q "cannot connect to vnumad" "$E2E_TMP/none"
ok $? "no vnumad: one error line, exit 1 ($(cat "$E2E_TMP/none"))"

# ---- c. history from the journal ----
want=$(grep -c "\"domain\":\"$A\"" "$VN_JOURNAL")
"$BUILD/vnumactl" --socket "$VN_SOCK" history "$A" --json >"$E2E_TMP/hist.json"
python3 - "$E2E_TMP/hist.json" "$want" "$VN_JOURNAL" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))
ok = (len(h["records"]) == int(sys.argv[2]) and h["journal"] == sys.argv[3]
      and all(r["locality"] == 100.0 and r["bytes_moved"] == 0 and len(r["cells"]) == 2
              for r in h["records"]))
print("# %d records from %s" % (len(h["records"]), h["journal"]))
sys.exit(0 if ok and h["records"] else 1)
PY
ok $? "history --json: every record of $A in vnumad's journal ($want), 100% local, nothing moved"
"$BUILD/vnumactl" --socket "$VN_SOCK" history "$A" >"$E2E_TMP/hist.txt"
sed 's/^/# | /' "$E2E_TMP/hist.txt" | head -n 20
grep -q "^$A: $want records in $VN_JOURNAL" "$E2E_TMP/hist.txt" &&
    [ "$(grep -c "^ *\(100%\)\? |#" "$E2E_TMP/hist.txt")" = 8 ] &&
    grep -A1 "^bytes moved per recorded pass" "$E2E_TMP/hist.txt" | grep -q "none in these passes"
ok $? "history draws the locality chart (8 rows full at 100%) and says nothing moved"

# ---- d. completion of the domains vnumad tracks ----
mkdir -p "$E2E_TMP/bin"
ln -sf "$PWD/$BUILD/vnumactl" "$E2E_TMP/bin/vnumactl"
got=$(PATH="$E2E_TMP/bin:$PATH" bash --norc --noprofile -c '
    . /usr/share/bash-completion/bash_completion; . dist/bash-completion/vnumactl
    COMP_WORDS=(vnumactl --socket "$1" explain "$2"); COMP_CWORD=4
    _vnumactl vnumactl "$2" explain; printf "%s\n" "${COMPREPLY[@]}" | sort | paste -sd" "' _ "$VN_SOCK" "$E2E_PREFIX")
[ "$got" = "$(printf '%s\n' "$A" "$B" | sort | paste -sd' ')" ]
ok $? "'vnumactl --socket S explain ${E2E_PREFIX}<Tab>' offers the two domains ($got)"

# ---- e. a UTF-8 name wider than the column, in a UTF-8 terminal and in the C locale ----
# "é" is 2 bytes and 1 column, "名" and "前" 3 bytes and 2 columns: cut in bytes, the name
# column would end early (the columns after it out of line) or inside a character.
C=$(define_domain "top-é-名前-名前-名前-名前-名前" "$T")
ok $? "a third domain with a UTF-8 name wider than top's 40-column name column ($C)"
set_meta "$C" '<balancer mode="advise"/>' >/dev/null
wait_for 30 grep -qF "decision domain='$C'" "$VN_LOG"
ok $? "vnumad decided on it"
# check_screen FILE LOCALE MAXW: every row of the three domains (cut or not) has its CELL column
# where the head has it, C's rows show a prefix of its name in whole characters (as '?'
# bytes in the C locale), no line is wider than MAXW columns (0: any), no U+FFFD.
check_screen() {
    python3 - "$1" "$2" "$3" "$E2E_PREFIX" "$A" "$B" "$C" <<'PY'
import sys, unicodedata
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
loc, maxw, prefix, a, b, c = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
def width(s):
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)
lines = text.splitlines()
shown = c if loc == "utf8" else "".join(ch if ord(ch) < 128 else "?" * len(ch.encode()) for ch in c)
head = [l for l in lines if l.startswith("DOMAIN ")]
rows = [l for l in lines if l.startswith(prefix) and ": mode " not in l]
c_rows = [l for l in rows if not l.startswith(a + " ") and not l.startswith(b + " ")]
bad = []
if not head:
    bad.append("no head line")
else:
    col = width(head[0][:head[0].index(" CELL") + 1])
    for l in rows:
        i = 0
        while i < len(l) and width(l[:i]) < col:
            i += 1
        if width(l[:i]) != col or not l[i:].lstrip().split()[0].isdigit():
            bad.append("CELL out of line: %r" % l)
        elif l in c_rows and not shown.startswith(l[:i].rstrip()):
            bad.append("not a prefix of the name in whole characters: %r" % l[:i])
if len(c_rows) != 2:
    bad.append("%d rows for the UTF-8 domain, want 2" % len(c_rows))
bad += ["wider than %d: %r" % (maxw, l) for l in lines if maxw and width(l) > maxw]
bad += ["U+FFFD (a cut character) in %r" % l for l in lines if "\ufffd" in l]
for m in bad:
    print("# " + m)
sys.exit(1 if bad else 0)
PY
}
for loc in utf8 C; do
    [ $loc = utf8 ] && lang=C.UTF-8 || lang=C
    # a server of its own for each: killing the last session makes a server exit on its own,
    # and a client that reached it meanwhile failed ("server exited unexpectedly", seen once)
    tm kill-server 2>/dev/null
    TMUX_SOCK=$E2E_TMP/tmux-$loc.sock
    tm -u new-session -d -s top -x 80 -y 24 \
        "LC_ALL=$lang TERM=xterm-256color $BUILD/vnumactl --socket $VN_SOCK top -d 0.5; sleep 600"
    wait_for 20 bash -c "$(declare -f screen tm); TMUX_SOCK=$TMUX_SOCK; [ \$(screen | grep -c -- '^$E2E_PREFIX') -ge 6 ]"
    screen >"$E2E_TMP/screen-$loc"
    sed 's/^/# | /' "$E2E_TMP/screen-$loc"
    check_screen "$E2E_TMP/screen-$loc" $loc 80
    ok $? "LC_ALL=$lang: the UTF-8 name is cut in whole characters to the name column, every CELL in line, nothing past 80 columns"
done
LC_ALL=C.UTF-8 "$BUILD/vnumactl" --socket "$VN_SOCK" top >"$E2E_TMP/once-utf8" 2>&1
check_screen "$E2E_TMP/once-utf8" utf8 0
ok $? "piped in a UTF-8 locale: the table's columns line up with the UTF-8 name too"
finish
