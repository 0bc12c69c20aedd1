#!/usr/bin/env python3
"""Compare the first LINES lines of a command's stdout with a golden file.

usage: check_golden.py GOLDEN LINES -- COMMAND...
Regenerate a golden file by running the command and keeping its first lines
(see docs/datasets.md); a change in a golden file is a change of the data set.
"""
import subprocess
import sys

golden, nlines = sys.argv[1], int(sys.argv[2])
cmd = sys.argv[sys.argv.index("--") + 1:]
out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
got = b"".join(out.splitlines(keepends=True)[:nlines])
with open(golden, "rb") as f:
    want = f.read()
if got != want:
    g, w = got.splitlines(), want.splitlines()
    for i in range(max(len(g), len(w))):
        if i >= len(g) or i >= len(w) or g[i] != w[i]:
            a = g[i] if i < len(g) else b""
            b = w[i] if i < len(w) else b""
            col = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]),
                       min(len(a), len(b)))
            lo = max(0, col - 60)
            print(f"first difference at line {i + 1}, byte {col + 1}:",
                  file=sys.stderr)
            print(" got: ...", a[lo:col + 60], file=sys.stderr)
            print("want: ...", b[lo:col + 60], file=sys.stderr)
            break
    sys.exit(1)
print(f"{golden}: {nlines} lines match")
