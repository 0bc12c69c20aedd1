#!/usr/bin/env python3
"""synthlogs' default output grows its vocabularies by the sample's law.

- The distinct counts of url, remote_addr, user_agent and referrer that
  `synthlogs --stats` reports stay within +-15% of the law fitted on the
  sample (datasets/heaps.py, independent of the generator's own fit) at 10k,
  20k, 50k and 100k documents.
- Those counts are the output's: recounted here from the documents.
- The status and method mix stay the sample's (shares within 2 points).
- Client shares are heavy-tailed as a real log's: the busiest address has
  between 3% and 40% of the requests, the busiest 1% of addresses over 30%,
  and at least a quarter of the addresses appear once.
- New values look like the sample's: renewed product URLs and percent-encoded
  Persian slugs exist, addresses are dotted IPv4.

- The exact bytes: the sha256 of the 100k documents equals the golden one
  (golden/synth-grow-seed3-100k.sha256; regenerate as docs/datasets.md says).

usage: check_growth.py SYNTHLOGS SAMPLE HEAPS_PY
"""
import collections
import hashlib
import importlib.util
import os
import io
import json
import re
import sys

import dsutil
from dsutil import fail

exe, sample, heaps_py = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("heaps", heaps_py)
heaps = importlib.util.module_from_spec(spec)
spec.loader.exec_module(heaps)
N = 100000

rc, out, err = dsutil.run([exe, "--docs", str(N), "--seed", "3", "--stats"])
if rc != 0:
    fail(f"exit code {rc}: {err}")
    dsutil.finish("check_growth")

digest = hashlib.sha256(out).hexdigest()
golden = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden",
                      "synth-grow-seed3-100k.sha256")
with open(golden) as f:
    want = f.read().split()[0]
if digest != want:
    fail(f"sha256 of --docs {N} --seed 3 is {digest}, golden {want}")

# The band, against the sample's law.
saved = sys.stdin
sys.stdin = io.StringIO(err)
try:
    if heaps.main(["heaps.py", sample, "--stats", "-", "--check", "10000",
                   str(N)]) != 0:
        fail("distinct counts leave the +-15% band of the sample's law")
finally:
    sys.stdin = saved

# --stats counts what was written.
rows = dict(heaps.parse_stats(err))
lines = out.decode("utf-8").split("\n")[:-1]
if len(lines) != N:
    fail(f"{len(lines)} documents, expected {N}")
docs = [json.loads(l) for l in lines]
seen = [set() for _ in heaps.FIELDS]
for i, d in enumerate(docs, 1):
    for s, f in zip(seen, heaps.FIELDS):
        s.add(d[f])
    if i in rows and [len(s) for s in seen] != rows[i]:
        fail(f"--stats at {i} says {rows[i]}, the documents have "
             f"{[len(s) for s in seen]}")
for l in lines[:2000]:
    dsutil.check_doc(l, "doc")

# Status and method mix, against the sample's.
srows, _ = heaps.read_log(sample)
status_re = re.compile(r'" (\d{3}) ')
with open(sample, "rb") as f:
    sample_lines = [l.decode("latin-1") for l in f]
s_status = collections.Counter(status_re.search(l).group(1) for l in sample_lines
                               if status_re.search(l))
s_method = collections.Counter(l.split('"', 2)[1].split(" ")[0]
                               for l in sample_lines if '"' in l)
g_status = collections.Counter(str(d["status"]) for d in docs)
g_method = collections.Counter(d["method"] for d in docs)
for name, s, g in (("status", s_status, g_status), ("method", s_method, g_method)):
    ts, tg = sum(s.values()), sum(g.values())
    for k in set(s) | set(g):
        a, b = s[k] / ts, g[k] / tg
        if abs(a - b) > 0.02:
            fail(f"{name} {k}: share {b:.3f}, the sample's {a:.3f}")

# Heavy-tailed clients.
addr = collections.Counter(d["remote_addr"] for d in docs)
counts = sorted(addr.values(), reverse=True)
top = counts[0] / N
top1pct = sum(counts[:max(1, len(counts) // 100)]) / N
once = sum(1 for c in counts if c == 1) / len(counts)
print(f"addresses {len(counts)}: top {top:.3f}, top 1% {top1pct:.3f}, "
      f"seen once {once:.3f}")
if not 0.03 <= top <= 0.40:
    fail(f"busiest address has {top:.3f} of requests")
if top1pct < 0.30:
    fail(f"busiest 1% of addresses have only {top1pct:.3f} of requests")
if once < 0.25:
    fail(f"only {once:.3f} of addresses appear once")

# New values look like the sample's.
ipv4 = re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
for a in addr:
    m = ipv4.match(a)
    if not m or any(int(o) > 255 for o in m.groups()):
        fail(f"remote_addr {a!r} is not IPv4")
        break
sample_urls = {r[0] for r in srows}
new_urls = {d["url"] for d in docs} - sample_urls
product = [u for u in new_urls if re.match(r"^(/m)?/product/\d+/\d+/%[0-9A-F]{2}", u)]
if len(product) < 100:
    fail(f"only {len(product)} new product URLs with a Persian slug")

dsutil.finish("check_growth")
