#!/usr/bin/env python3
"""nginx2json on crafted input: unparsable lines are reported with their line
number and reason, counted, never silently dropped; exit codes 0 / 3 / 2;
awkward bytes (quotes, backslashes, control bytes, invalid UTF-8) still give
valid JSON.

usage: check_malformed.py NGINX2JSON TMPDIR
"""
import os
import sys

import dsutil
from dsutil import fail

exe, tmp = sys.argv[1:3]
os.makedirs(tmp, exist_ok=True)

good = (b'192.0.2.1 - - [22/Jan/2019:03:56:14 +0330] "GET /product/1 HTTP/1.1" '
        b'200 10 "-" "ua"')
lines = [
    good,                                                          # 1
    good.replace(b"200 10", b"404 0"),                             # 2
    good.replace(b"Jan", b"Jxn"),                                  # 3 bad month
    b'192.0.2.2 - - [22/Jan/2019:03:56:15 +0330] "GET /a\\"b HTTP/1.1" 200 1 '
    b'"-" "q\\"\\\\ \x01\x1f\xff\xc3\xa9\xe2\x82" "198.51.100.1"',   # 4 awkward
    good[:60],                                                     # 5 truncated
    b"",                                                           # 6 empty
    good + b" \"-\"\r",                                            # 7 CRLF
]
src = b"\n".join(lines)   # no newline after the last line
path = os.path.join(tmp, "crafted.log")
with open(path, "wb") as f:
    f.write(src)

rc, out, err = dsutil.run([exe, path])
if rc != 3:
    fail(f"exit code {rc}, expected 3")
errl = err.strip().splitlines()
for no, reason in ((3, "bad month in timestamp"), (5, "unterminated request"),
                   (6, "empty line")):
    if not any(l.startswith(f"nginx2json: line {no}: {reason}") for l in errl):
        fail(f"line {no} not reported with reason '{reason}': {err!r}")
if errl[-1:] != ["converted 4 lines, 3 unparsable"]:
    fail(f"summary {errl[-1:]}")
docs = out.decode("utf-8").split("\n")
if docs[-1] != "" or len(docs) != 5:
    fail(f"expected 4 documents, got {out!r}")
parsed = [dsutil.check_doc(l, f"doc {i + 1}") for i, l in enumerate(docs[:-1])]
if all(parsed):
    ua = parsed[2]["user_agent"]
    if ua != 'q\\"\\\\ \x01\x1f\u00ff\u00e9\u00e2\u0082':
        fail(f"user_agent decoded as {ua!r}")
    if parsed[2]["url"] != '/a\\"b':
        fail(f"url decoded as {parsed[2]['url']!r}")
    if "\\u0001" not in docs[2] or "\\u00ff" not in docs[2]:
        fail("control/invalid bytes not written as \\u00XX")
    if [d["status"] for d in parsed] != [200, 404, 200, 200]:
        fail("wrong documents kept")

# Bulk ids keep the source line numbers of the converted lines.
rc, bout, _ = dsutil.run([exe, "--format", "bulk", "--index", "t", path])
ids, _ = dsutil.check_bulk(bout, "t", True, "bulk")
if rc != 3 or ids != ["1", "2", "4", "7"]:
    fail(f"bulk ids {ids}, rc {rc}")

# A clean input gives 0; usage and I/O errors give 2.
rc, _, err = dsutil.run([exe], stdin=good + b"\n")
if rc != 0 or not err.strip().endswith("converted 1 lines, 0 unparsable"):
    fail(f"clean stdin: rc {rc} {err!r}")
for args in (["--format", "xml"], ["--format", "bulk"],
             ["--format", "bulk", "--index", "Bad"], ["--seed", "x"],
             ["--bogus"], [os.path.join(tmp, "does-not-exist.log")],
             ["-o", os.path.join(tmp, "no-such-dir", "x.json")]):
    rc, _, _ = dsutil.run([exe] + args, stdin=good + b"\n")
    if rc != 2:
        fail(f"{args}: exit code {rc}, expected 2")
if os.path.exists("/dev/full"):
    rc, _, _ = dsutil.run(["sh", "-c", f'"{exe}" "{path}" > /dev/full'])
    if rc != 2:
        fail(f"write error: exit code {rc}, expected 2")

dsutil.finish("check_malformed")
