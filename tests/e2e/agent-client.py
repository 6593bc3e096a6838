#!/usr/bin/env python3
# A minimal host-side client of the vnuma guest protocol, for tests/e2e/agent-guest.sh and
# tests/bench/pft.sh: newline-framed JSON over the domain's channel socket.
#   agent-client.py SOCKET hello                       -> prints the hello reply
#   agent-client.py SOCKET hints [N] [INTERVAL_MS] [MAX_PROCS] [BUDGET_MIB]
#       hello, then N get-hints requests INTERVAL_MS apart; prints each reply as one JSON line
#       prefixed with its size in bytes ("BYTES <n> <json>")
#   agent-client.py SOCKET poll SECONDS [INTERVAL_MS]  same, for SECONDS, prints sizes only
import json, socket, sys, time

def connect(path, timeout=60):
    deadline = time.time() + timeout
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            return s
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.5)

class Peer:
    def __init__(self, path):
        self.s = connect(path)
        self.buf = b""
        self.id = 0

    def call(self, execute, arguments, timeout=60):
        self.id += 1
        msg = json.dumps({"execute": execute, "arguments": arguments, "id": self.id}) + "\n"
        self.s.sendall(msg.encode())
        deadline = time.time() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                if not line.strip():
                    continue
                rep = json.loads(line)
                if rep.get("id") == self.id:
                    return len(line) + 1, rep
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no reply to %s within %ss" % (execute, timeout))
            self.s.settimeout(left)
            data = self.s.recv(65536)
            if not data:
                raise EOFError("channel closed")
            self.buf += data

# As vnumad does (host/agentlink.c, AGENTLINK_REPLY_TIMEOUT_S): a hello unanswered for this
# long is asked again on a new connection. The guest kernel can learn of a host connection
# after the request that came with it (virtio_console handles the port-open message in a
# work queue, the data at once): the agent's reply then fails with EPIPE and it waits for
# the next host; the old hello is never answered (seen under load in CI, agent-guest test 6:
# "Failed to send a reply of 139 bytes: Broken pipe", the client waited 180 s).
HELLO_RETRY_S = 10


def hello(path, timeout=180):
    """a Peer that has had its hello answered, and the reply's (size, message); the guest may
    still be booting (the agent answers once it has opened its port)"""
    deadline = time.time() + timeout
    while True:
        p = Peer(path)
        left = deadline - time.time()
        try:
            n, rep = p.call("vnuma-hello", {"versions": [1], "capabilities": []},
                            timeout=max(1, min(HELLO_RETRY_S, left)))
            return p, n, rep
        except (TimeoutError, socket.timeout):
            p.s.close()
            if time.time() >= deadline:
                raise TimeoutError("no reply to vnuma-hello within %ss" % timeout)
            print("agent-client: no hello reply within %ss: connecting again" % HELLO_RETRY_S,
                  file=sys.stderr, flush=True)


def main():
    path, cmd = sys.argv[1], sys.argv[2]
    p, n, rep = hello(path)
    if cmd == "hello":
        print(json.dumps(rep))
        return
    if cmd == "hints":
        count = int(sys.argv[3]) if len(sys.argv) > 3 else 1
        interval = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
        maxp = int(sys.argv[5]) if len(sys.argv) > 5 else 8
        budget = int(sys.argv[6]) if len(sys.argv) > 6 else 256
        for i in range(count):
            n, rep = p.call("vnuma-get-hints", {"interval_ms": interval, "max_processes": maxp,
                                                "scan_budget_mib": budget})
            print("BYTES", n, json.dumps(rep), flush=True)
            if i + 1 < count:
                time.sleep(interval / 1000.0)
        return
    if cmd == "poll":
        secs = float(sys.argv[3])
        interval = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
        end = time.time() + secs
        while time.time() < end:
            n, rep = p.call("vnuma-get-hints", {"interval_ms": interval, "max_processes": 8,
                                                "scan_budget_mib": 256})
            print("BYTES", n, "processes", len(rep.get("return", {}).get("processes", [])),
                  flush=True)
            time.sleep(interval / 1000.0)
        return
    sys.exit("unknown command " + cmd)

if __name__ == "__main__":
    main()
