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
# The screen tmux captured in (a) is kept as $BUILD/top-screen.txt (the README shows one).
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
e2e_preamble --built vnumad --built vnumactl --tool tmux "Debian package tmux; make deps installs it"

TMUX_SOCK=$E2E_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
e2e_at_exit 'tmux -S "$TMUX_SOCK" kill-server 2>/dev/null'
screen() { tm capture-pane -p -t top 2>/dev/null; }
screen_has() { screen | grep -q -- "$1"; }

A=$(define_domain top-a "$T") && B=$(define_domain top-b "$T")
ok $? "domains $A and $B defined and started"
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
grep -Eq '^DOMAIN +CELL +HOME +LOCAL +BUSY +MEMORY +MOVING +ETA +DECISION' "$E2E_TMP/screen1"
ok $? "the column heads: DOMAIN CELL HOME LOCAL BUSY MEMORY MOVING ETA DECISION"
for d in "$A" "$B"; do
    for c in 0 1; do
        grep -Eq "^$d +$c +0 +100% +[0-9]+/1 +64M +- +- +[a-z-]+" "$E2E_TMP/screen1"
        ok $? "a row for $d cell $c: home node 0, 100% local, busy of 1 vCPU, 64M, nothing moving, a decision"
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
finish
