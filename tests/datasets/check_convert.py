#!/usr/bin/env python3
"""nginx2json on the real sample: every line converts, counts match the
published profile of the sample (SOURCES.md), every document is valid, and
the json and bulk modes, file and stdin input, -o and stdout agree.

usage: check_convert.py NGINX2JSON SAMPLE TMPDIR
"""
import collections
import os
import sys

import dsutil
from dsutil import fail

exe, sample, tmp = sys.argv[1:4]
os.makedirs(tmp, exist_ok=True)
with open(sample, "rb") as f:
    src = f.read()
nlines = src.count(b"\n")

rc, out, err = dsutil.run([exe, sample])
if rc != 0:
    fail(f"exit code {rc}, stderr: {err[-500:]}")
if err.strip().splitlines()[-1:] != [f"converted {nlines} lines, 0 unparsable"]:
    fail(f"summary line: {err[-300:]!r}")
lines = out.decode("utf-8").split("\n")
if lines[-1] != "":
    fail("output does not end with a newline")
lines = lines[:-1]
if len(lines) != 10000 or nlines != 10000:
    fail(f"{len(lines)} documents from {nlines} lines, expected 10000")

docs = [dsutil.check_doc(l, f"doc {i + 1}") for i, l in enumerate(lines)]
docs = [d for d in docs if d is not None]
methods = collections.Counter(d["method"] for d in docs)
statuses = collections.Counter(d["status"] for d in docs)
want_methods = {"GET": 9803, "HEAD": 175, "POST": 22}
want_status = {200: 9018, 404: 306, 302: 438, 301: 205, 304: 17, 499: 10,
               403: 4, 500: 1, 400: 1}
if dict(methods) != want_methods:
    fail(f"methods {dict(methods)} != {want_methods}")
if dict(statuses) != want_status:
    fail(f"statuses {dict(statuses)} != {want_status}")
xff = sum("x_forwarded_for" in d for d in docs)
if xff != 18:
    fail(f"{xff} documents with x_forwarded_for, expected 18")
if len({d["request_id"] for d in docs}) != len(docs):
    fail("request_id values are not unique")
if any(d["host"] != "www.zanbil.ir" for d in docs):
    fail("host is not the default www.zanbil.ir")
if docs and docs[0]["@timestamp"] != "2019-01-22T03:56:14+03:30":
    fail(f"first @timestamp {docs[0]['@timestamp']}")
if docs and docs[-1]["@timestamp"] != "2019-01-22T04:36:57+03:30":
    fail(f"last @timestamp {docs[-1]['@timestamp']}")
print("methods", dict(methods), "statuses", dict(statuses))

# stdin and -o give the same bytes.
rc2, out2, _ = dsutil.run([exe, "-"], stdin=src)
if rc2 != 0 or out2 != out:
    fail("stdin input differs from file input")
path = os.path.join(tmp, "convert.json")
rc3, out3, _ = dsutil.run([exe, "-o", path, sample])
with open(path, "rb") as f:
    if rc3 != 0 or out3 != b"" or f.read() != out:
        fail("-o FILE differs from stdout")

# Bulk: action + doc pairs, _id = line number, docs identical to json mode.
rc, bout, err = dsutil.run([exe, "--format", "bulk", "--index", "nginx", sample])
if rc != 0:
    fail(f"bulk exit code {rc}")
ids, bdocs = dsutil.check_bulk(bout, "nginx", True, "bulk")
if ids != [str(i) for i in range(1, 10001)]:
    fail("bulk _id values are not 1..10000")
if bdocs != lines:
    fail("bulk documents differ from json documents")
rc, bout, err = dsutil.run([exe, "--format", "bulk", "--index", "nginx",
                            "--no-ids", sample])
ids, bdocs = dsutil.check_bulk(bout, "nginx", False, "bulk --no-ids")
if rc != 0 or len(bdocs) != 10000:
    fail("bulk --no-ids")

# Options: --host and --seed change exactly what they should.
rc, hout, _ = dsutil.run([exe, "--host", "example.org", "--seed", "1", sample])
if hout != out.replace(b'"host":"www.zanbil.ir"', b'"host":"example.org"'):
    fail("--host changed more than the host field")
rc, sout, _ = dsutil.run([exe, "--seed", "2", sample])
d2 = [dsutil.loads_pairs(l) for l in sout.decode().split("\n")[:-1]]
same = sum(dict(a)["request_id"] == b["request_id"] for a, b in zip(d2, docs))
if rc != 0 or len(d2) != 10000 or same:
    fail("--seed 2 did not change every request_id")
strip = lambda p: [kv for kv in p if kv[0] not in
                   ("request_time", "upstream_response_time", "request_id")]
if [strip(p) for p in d2] != [strip(dsutil.loads_pairs(l)) for l in lines]:
    fail("--seed changed fields other than the synthesized ones")

dsutil.finish("check_convert")
