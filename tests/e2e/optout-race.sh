#!/bin/bash
# An opt-out is never lost to vnumad's own metadata writes. libvirt has no compare-and-swap for
# metadata: when vnumad rewrote the operator's <balancer> element every pass (read, add its
# record, write), an opt-out that landed between its read and its write was overwritten with
# mode="auto" and the domain stayed balanced (ground scenario 8 saw 'restored_on_optout:
# false'). vnumad now writes only its own <state> element. Here a domain is opted in and out
# ROUNDS times while vnumad passes every 0.1 s (a metadata write each pass); every opt-out must
# bring the narrowed pins back, and the operator's element must read back exactly as written.
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/e2e/lib.sh

T=tests/data/domains/e2e-two-cell.xml.in
WIDE="0:0-1 1:0-1"
NARROW="0:1 1:0"
ROUNDS=${ROUNDS:-25}

e2e_preamble --built vnumad

D=$(define_domain optout "$T")
ok $? "domain $D defined and started"
narrow() { $VIRSH vcpupin "$D" 0 1 --live >/dev/null && $VIRSH vcpupin "$D" 1 0 --live >/dev/null; }
pins_are() { [ "$(vcpu_pins "$D")" = "$1" ]; }
narrow && pins_are "$NARROW"
ok $? "narrowed pins in place: $(vcpu_pins "$D")"

start_vnumad "interval = 0.1" "event_delay = 0.05" "restore_on_exit = yes"
lost=0 slow=0 foreign=0
for i in $(seq 1 "$ROUNDS"); do
    set_meta "$D" '<balancer mode="auto"/>' >/dev/null
    wait_for 20 pins_are "$WIDE" || { slow=$((slow + 1)); note "round $i: not pinned to $WIDE ($(vcpu_pins "$D"))"; }
    set_meta "$D" '<balancer mode="off"/>' >/dev/null
    if ! wait_for 20 pins_are "$NARROW"; then
        lost=$((lost + 1))
        note "round $i: opt-out not honoured: pins $(vcpu_pins "$D"), element $(live_meta "$D" | head -c 200)"
        narrow
    fi
    [ "$(live_meta "$D")" = '<balancer mode="off"/>' ] || foreign=$((foreign + 1))
done
ok $((slow != 0)) "every opt-in of $ROUNDS was acted on (not pinned in time: $slow)"
ok $((lost != 0)) "every opt-out of $ROUNDS restored the narrowed pins (lost: $lost)"
ok $((foreign != 0)) "the operator's <balancer> read back exactly as written after every round (changed: $foreign)"
passes=$(vnctl status --json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j.get("return", j)["pass"])' 2>/dev/null)
note "vnumad ran ${passes:-?} passes during the rounds"
finish
