#!/usr/bin/env python3
"""house-loops.py [--loops-only] SRCDIR OBJDIR: what keeps SRCDIR's files on floors (tests/cli/house.sh).

Three checks, each line it prints one finding; exit 1 when there is any, else 0:
  include loop  headers of SRCDIR that include each other, directly or through others
                (#pragma once hides such a loop from the compiler, not from the reader);
  call loop     objects of OBJDIR (one per C file) that need each other's symbols, directly or
                through others (`nm`: a function called or a variable used);
  own header    a function a C file defines for others (nm: T) that is not declared in the
                file's own header (X.c: X.h) or in its stage's private header (X_priv.h for
                X.c and X_*.c); a program's main is not for others.
--loops-only: the first two (proto/ is one library behind one header, proto.h).
A floor may use the ones below it only: then there is no loop, and "where is X" is answered by
the file named like its header.
"""
import collections
import glob
import os
import re
import subprocess
import sys

INC = re.compile(r'^#\s*include\s*"([^"/]+\.h)"', re.M)


def cycles(edges):
    """One cycle for each strongly connected component of more than one node (Tarjan)."""
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    out = []
    for comp in comps:  # the shortest way back to the component's first node
        start = min(comp)
        prev, queue, end = {start: None}, [start], None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(edges.get(v, ())):
                if w == start:
                    end = v
                    break
                if w in comp and w not in prev:
                    prev[w] = v
                    queue.append(w)
        path, v = [start], end
        while v != start:
            path.insert(1, v)
            v = prev[v]
        out.append(path + [start])
    return out


def nm(obj):
    defined, needed = {}, set()
    out = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBRGS':
            defined[p[2]] = p[1]
        elif len(p) == 2 and p[0] == 'U':
            needed.add(p[1])
    return defined, needed


def main():
    args = sys.argv[1:]
    loops_only = bool(args) and args[0] == '--loops-only'
    if loops_only:
        args = args[1:]
    src, objdir = args[0], args[1]
    found = 0
    headers = {os.path.basename(h): h for h in glob.glob(os.path.join(src, '*.h'))}
    text = {}
    inc = collections.defaultdict(set)
    for name, path in headers.items():
        with open(path, encoding='utf-8', errors='replace') as f:
            text[name] = f.read()
        inc[name] = {h for h in INC.findall(text[name]) if h in headers and h != name}
    for c in cycles(inc):
        print('include loop: ' + ' -> '.join(c))
        found += 1

    objs = {os.path.splitext(os.path.basename(o))[0]: o for o in glob.glob(os.path.join(objdir, '*.o'))}
    sources = {os.path.splitext(os.path.basename(f))[0] for f in glob.glob(os.path.join(src, '*.c'))}
    objs = {m: o for m, o in objs.items() if m in sources}
    defs, needs, owner = {}, {}, {}
    for m, o in objs.items():
        defs[m], needs[m] = nm(o)
        for s in defs[m]:
            owner[s] = m
    calls = collections.defaultdict(set)
    why = collections.defaultdict(list)
    for m in objs:
        for s in sorted(needs[m]):
            o = owner.get(s)
            if o and o != m:
                calls[m].add(o)
                why[(m, o)].append(s)
    for c in cycles(calls):
        steps = ', '.join(f'{a}.c needs {why[(a, b)][0]}' for a, b in zip(c, c[1:]))
        print('call loop: ' + ' -> '.join(f'{m}.c' for m in c) + f' ({steps})')
        found += 1

    for m in sorted(objs) if not loops_only else []:
        own = [m + '.h'] + [h for h in headers if h.endswith('_priv.h') and
                            (m == h[:-7] or m.startswith(h[:-7] + '_'))]
        for s, kind in sorted(defs[m].items()):
            if kind != 'T' or s == 'main':
                continue
            decl = re.compile(r'\b' + re.escape(s) + r'\s*\(')
            if any(h in text and decl.search(text[h]) for h in own):
                continue
            where = sorted(h for h in text if decl.search(text[h]))
            print(f'own header: {m}.c defines {s}, declared in {", ".join(where) or "no header"}, '
                  f'not in {" or ".join(own)}')
            found += 1
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
