#!/usr/bin/env python3
"""The memory policy of a QEMU memory backend, seen and set from outside, as an operator (or
another tool) would: tests/e2e/backends.sh uses it to give a shared backend a policy of its own
before vnumad touches it, and to read what the kernel says the policy is afterwards.

  backend-policy.py show PID HVA      policy word of numa_maps ("default", "prefer:0",
                                      "interleave:0", ...) of the mapping at HVA
  backend-policy.py pagesize PID HVA  kernelpagesize_kB of that mapping (numa_maps)
  backend-policy.py set PID HVA MODE NODE...
                                      mbind(2) the shared object behind that mapping
                                      (through /proc/PID/map_files), MODE one of
                                      preferred, bind, interleave; moves nothing

HVA is an address inside the mapping (hex, 0x...), e.g. the HVA of a RAM block in QEMU's HMP
"info ramblock" (every memfd backend's file is called memory-backend-memfd: names do not
tell them apart). Exits 1 with a message when there is no such mapping."""
import ctypes
import mmap
import os
import sys

MODES = {"preferred": 1, "bind": 2, "interleave": 3}
SYS_MBIND = 237  # x86_64


def mapping(pid, hva):
    with open(f"/proc/{pid}/numa_maps") as f:
        nm = {}
        for line in f:
            parts = line.split()
            nm[int(parts[0], 16)] = parts
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            if start <= hva < end:
                return start, end, int(parts[2], 16), nm.get(start, [])
    sys.exit(f"backend-policy: no mapping at {hva:#x} in process {pid}")


def main():
    cmd, pid, hva = sys.argv[1], int(sys.argv[2]), int(sys.argv[3], 16)
    start, end, off, nm = mapping(pid, hva)
    if cmd == "show":
        print(nm[1] if len(nm) > 1 else "?")
    elif cmd == "pagesize":
        print(next((w.split("=")[1] for w in nm if w.startswith("kernelpagesize_kB=")), "?"))
    elif cmd == "set":
        mode, nodes = MODES[sys.argv[4]], [int(n) for n in sys.argv[5:]]
        mask = ctypes.c_ulong(sum(1 << n for n in nodes))
        fd = os.open(f"/proc/{pid}/map_files/{start:x}-{end:x}", os.O_RDWR)
        try:
            m = mmap.mmap(fd, end - start, mmap.MAP_SHARED, offset=off)
        finally:
            os.close(fd)
        buf = ctypes.c_char.from_buffer(m)
        addr = ctypes.addressof(buf)
        libc = ctypes.CDLL(None, use_errno=True)
        r = libc.syscall(SYS_MBIND, ctypes.c_void_p(addr), ctypes.c_ulong(end - start), mode,
                         ctypes.byref(mask), ctypes.c_ulong(65), 0)
        err = ctypes.get_errno()
        del buf
        m.close()
        if r != 0:
            sys.exit(f"backend-policy: mbind failed: {os.strerror(err)}")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
