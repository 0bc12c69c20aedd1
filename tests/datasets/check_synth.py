#!/usr/bin/env python3
"""synthlogs: same seed -> same bytes, different seed -> different bytes,
valid documents that follow the sample's mix, bulk pairs parse.

usage: check_synth.py SYNTHLOGS SAMPLE TMPDIR
"""
import collections
import hashlib
import os
import sys

import dsutil
from dsutil import fail

exe, sample, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
N = 5000

rc, a, err = dsutil.run([exe, "--docs", str(N), "--seed", "7"])
rc2, b, _ = dsutil.run([exe, "--docs", str(N), "--seed", "7",
                        "--sample", sample])
rc3, c, _ = dsutil.run([exe, "--docs", str(N), "--seed", "8"])
if (rc, rc2, rc3) != (0, 0, 0):
    fail(f"exit codes {rc} {rc2} {rc3}: {err}")
if a != b:
    fail("same seed gave different bytes (or default --sample differs)")
if a == c:
    fail("different seeds gave the same bytes")
print("seed 7 sha256", hashlib.sha256(a).hexdigest())

lines = a.decode("utf-8").split("\n")
if lines[-1] != "" or len(lines) != N + 1:
    fail(f"expected {N} lines")
docs = [dsutil.check_doc(l, f"doc {i + 1}") for i, l in enumerate(lines[:-1])]
docs = [d for d in docs if d]
methods = collections.Counter(d["method"] for d in docs)
if set(methods) - {"GET", "HEAD", "POST"}:
    fail(f"methods {methods}")
share200 = sum(d["status"] == 200 for d in docs) / max(1, len(docs))
if not 0.86 < share200 < 0.94:   # sample: 0.9018
    fail(f"status 200 share {share200:.3f} far from the sample's 0.902")
ts = [d["@timestamp"] for d in docs]
if ts != sorted(ts) or ts[0] != "2019-01-22T03:56:14+03:30":
    fail("timestamps do not start at the sample's first and advance")
if len({d["url"] for d in docs}) < 1000 or len({d["remote_addr"] for d in docs}) < 300:
    fail("too little variety in url / remote_addr")
if len({d["request_id"] for d in docs}) != len(docs):
    fail("request_id values are not unique")

# -o FILE gives the same bytes; prefix property: fewer docs = a prefix.
path = os.path.join(tmp, "synth.json")
rc, o, _ = dsutil.run([exe, "--docs", str(N), "--seed", "7", "-o", path])
with open(path, "rb") as f:
    if rc != 0 or o != b"" or f.read() != a:
        fail("-o FILE differs from stdout")
rc, p, _ = dsutil.run([exe, "--docs", "100", "--seed", "7"])
if not a.startswith(p) or p.count(b"\n") != 100:
    fail("--docs 100 is not a prefix of --docs N")

# Bulk: pairs parse, _id 1..N, documents equal to json mode.
rc, bout, _ = dsutil.run([exe, "--docs", str(N), "--seed", "7", "--format",
                          "bulk", "--index", "synth"])
ids, bdocs = dsutil.check_bulk(bout, "synth", True, "bulk")
if rc != 0 or ids != [str(i) for i in range(1, N + 1)] or bdocs != lines[:-1]:
    fail("bulk output does not pair up with json output")
rc, bout, _ = dsutil.run([exe, "--docs", "10", "--format", "bulk", "--index",
                          "synth", "--no-ids"])
ids, bdocs = dsutil.check_bulk(bout, "synth", False, "bulk --no-ids")
if rc != 0 or len(bdocs) != 10:
    fail("bulk --no-ids")

# --resample: the earlier generator (vocabularies stay the sample's), also
# deterministic, a prefix for fewer docs, and valid documents.
rc, r1, _ = dsutil.run([exe, "--resample", "--docs", str(N), "--seed", "7"])
rc2, r2, _ = dsutil.run([exe, "--resample", "--docs", "100", "--seed", "7"])
if (rc, rc2) != (0, 0) or r1 == a or not r1.startswith(r2):
    fail("--resample: exit code, same bytes as the default, or not a prefix")
rdocs = [dsutil.check_doc(l, f"resample doc {i + 1}")
         for i, l in enumerate(r1.decode("utf-8").split("\n")[:-1])]
if len(rdocs) != N or len({d["url"] for d in rdocs if d}) > 7047:
    fail("--resample: documents or url vocabulary beyond the sample's")

rc, z, _ = dsutil.run([exe, "--docs", "0"])
if rc != 0 or z != b"":
    fail("--docs 0 should write nothing")
for args in (["--docs", "-1"], ["--format", "bulk"], ["--seed", "abc"],
             ["--sample", os.path.join(tmp, "missing.log")], ["--x"]):
    rc, _, _ = dsutil.run([exe] + args)
    if rc != 2:
        fail(f"{args}: exit code {rc}, expected 2")

dsutil.finish("check_synth")
