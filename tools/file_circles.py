#!/usr/bin/env python3
"""tools/file_circles.py: circles of source files inside each folder, read
from a build's object files.

Why: a folder whose files call each other in a loop has no bottom and no
top; a reader cannot learn one file without the others.  The structure
rule (docs/architecture.md) is that calls inside a folder run one way, the
query DSL's own grammar recursion excepted.

How: every object file of the build (`nm`) gives the global symbols its
source defines and the ones it uses; file A calls file B when A uses a
symbol B defines.  The strongly connected components of that graph
(Tarjan's algorithm) with more than one file are the circles.  Only calls
between translation units are seen: a static inline function in a header
is part of each file that includes it.

Usage: tools/file_circles.py [BUILD_DIR]   (from the project root; default: build)
Prints each circle with the symbols that tie it; exits 1 when a folder
other than src/query/dsl has one, else 0.
"""
import collections
import os
import subprocess
import sys

# The grammar's recursion: a query holds queries (bool, dis_max, query_string).
ALLOWED = {"src/query/dsl"}


def objects(build):
    """(source path relative to the project, object path) of every object."""
    for root, _, files in os.walk(build):
        for f in files:
            if not f.endswith(".c.o") or "CMakeFiles" not in root:
                continue
            rel = os.path.relpath(root, build).split(os.sep)
            i = rel.index("CMakeFiles")
            src = "/".join(rel[:i] + rel[i + 2:] + [f[:-2]])
            # an object whose source is gone is left over from an older tree
            if src.startswith("src/") and os.path.exists(src):
                yield src, os.path.join(root, f)


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBR":
            defined.add(parts[2])
    return defined, used


def circles(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    files = {}
    for src, obj in objects(build):
        files.setdefault(src, symbols(obj))
    owner = {}
    for src, (defined, _) in files.items():
        for s in defined:
            owner.setdefault(s, src)
    edges = collections.defaultdict(set)
    ties = collections.defaultdict(set)
    for src, (_, used) in files.items():
        for s in used:
            dst = owner.get(s)
            if dst and dst != src and os.path.dirname(dst) == os.path.dirname(src):
                edges[src].add(dst)
                ties[(src, dst)].add(s)
    bad = False
    found = circles(files.keys(), edges)
    for comp in found:
        folder = os.path.dirname(comp[0])
        allowed = folder in ALLOWED
        bad |= not allowed
        print("circle in %s%s: %s" % (folder, " (the grammar's recursion)"
                                      if allowed else "", ", ".join(comp)))
        for a in comp:
            for b in comp:
                if (a, b) in ties:
                    print("  %s -> %s: %s" % (a, b, ", ".join(sorted(ties[(a, b)]))))
    print("%d source files, %d circles" % (len(files), len(found)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
