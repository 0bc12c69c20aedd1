#!/usr/bin/env python3
"""What a user sees after one flipped bit in one segment file, and the way
back: the before/after figures of docs/store.md ("Damaged segments").

usage: bench/damage/flip_demo.py FIELDSTORE_BINARY [--docs N] [--parts P]

Builds index `logs` (ZSTD, no replicas) of N documents (default 20,000) in
P segments (default 4, one per _bulk + refresh) and index `other` of 1,000,
then two scenarios, each on a fresh data directory in /tmp:

  tim   one bit flipped in the middle of the first segment's .tim with the
        node stopped, then started;
  block one bit flipped in the first stored-fields block of the first
        segment's .fdt while the node runs, then a GET of a document in it,
        then a restart.

For each it prints what the node answers (health, _cat/indices, _count, a
wildcard search's _shards, _cluster/allocation/explain), then runs
`check-index` and `check-index --exorcise` on the stopped node and prints
their summary lines, the count after the next start, and whether every
remaining document came back with its exact source.  Deterministic (the
documents are a function of their number); one line of JSON per step.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "e2e"))
import fdsserver  # noqa: E402


def source(i):
    return {"msg": "GET /api/v1/item/%d HTTP/1.1" % (i % 977), "status": 200 + i % 5,
            "n": i}


def show(step, **kv):
    print(json.dumps(dict(step=step, **kv)), flush=True)


def build(binary, data, docs, parts):
    fdsserver.SERVER = binary
    srv = fdsserver.Server(data).start()
    for name, codec in (("logs", "ZSTD"), ("other", "default")):
        srv.request("PUT", "/" + name, {"settings": {"index.codec": codec,
                                                      "number_of_replicas": 0,
                                                      "refresh_interval": -1}})
    per = docs // parts
    for p in range(parts):
        body = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i, json.dumps(source(i)))
                       for i in range(p * per, (p + 1) * per))
        srv.request("POST", "/logs/_bulk?refresh=true", body,
                    {"Content-Type": "application/x-ndjson"})
    body = "".join('{"index":{"_id":"o%d"}}\n%s\n' % (i, json.dumps(source(i)))
                   for i in range(1000))
    srv.request("POST", "/other/_bulk?refresh=true", body,
                {"Content-Type": "application/x-ndjson"})
    uuid = srv.request("GET", "/logs/_settings?flat_settings=true")[1]["logs"][
        "settings"]["index.uuid"]
    return srv, uuid


def first_seg(data, uuid, ext):
    folder = os.path.join(data, "indices", uuid)
    gens = sorted(int(f[4:-4]) for f in os.listdir(folder) if f.endswith(".fdt"))
    return os.path.join(folder, "seg_%d.%s" % (gens[0], ext))


def flip(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x10]))


def err(st, b):
    """An error answer as "status type" (a non-JSON answer: its text)."""
    e = b.get("error") if isinstance(b, dict) else b
    return "%d %s" % (st, e["type"] if isinstance(e, dict) else str(e)[:60])


def observe(srv, step):
    health = srv.request("GET", "/_cluster/health")[1]["status"]
    row = [r for r in srv.request("GET", "/_cat/indices?format=json")[1]
           if r["index"] == "logs"][0]
    st, b, _ = srv.request("GET", "/logs/_count")
    count = b.get("count") if st == 200 else err(st, b)
    st, w, _ = srv.request("GET", "/*/_search?size=0&track_total_hits=true")
    shards = w.get("_shards") if st == 200 else err(st, w)
    hits = w["hits"]["total"]["value"] if st == 200 else None
    st, x, _ = srv.request("GET", "/_cluster/allocation/explain")
    explain = x.get("can_allocate") if st == 200 else err(st, x)
    show(step, health=health, cat_indices="%s/%s" % (row["health"], row["status"]),
         logs_count=count, wildcard_shards=shards, wildcard_hits=hits,
         allocation_explain=explain)


def repair(binary, data, docs, step):
    for args in ([], ["--exorcise"]):
        p = subprocess.run([binary, "check-index", "--data", data, "logs"] + args,
                           capture_output=True, text=True)
        lines = [ln.strip() for ln in (p.stdout + p.stderr).splitlines()
                 if ln.strip().startswith(("repaired", "usage")) or "the repair loses" in ln
                 or "unrecognized" in ln]
        show(step + " check-index " + " ".join(args), exit=p.returncode,
             summary=lines[:2])
    srv = fdsserver.Server(data).start()
    try:
        health = srv.request("GET", "/_cluster/health")[1]["status"]
        st, b, _ = srv.request("GET", "/logs/_count")
        count = b.get("count") if st == 200 else err(st, b)
        # every document, fetched: "exact" when each source is the one
        # written, "WRONG" otherwise, or the error answered
        st, s, _ = srv.request("GET", "/logs/_search?size=10000",
                               {"query": {"match_all": {}}})
        fetched = err(st, s) if st != 200 else (
            "exact" if all(h["_source"] == source(int(h["_id"]))
                           for h in s["hits"]["hits"]) else "WRONG")
        show(step + " after restart", health=health, logs_count=count,
             docs_lost=docs - count if isinstance(count, int) else None,
             fetch_all=fetched)
    finally:
        srv.stop()


def main():
    binary = os.path.abspath(sys.argv[1])
    docs = int(sys.argv[sys.argv.index("--docs") + 1]) if "--docs" in sys.argv else 20000
    parts = int(sys.argv[sys.argv.index("--parts") + 1]) if "--parts" in sys.argv else 4
    root = tempfile.mkdtemp(prefix="fds-flipdemo-")
    try:
        data = os.path.join(root, "tim")
        srv, uuid = build(binary, data, docs, parts)
        srv.stop()
        tim = first_seg(data, uuid, "tim")
        flip(tim, os.path.getsize(tim) // 2)
        srv = fdsserver.Server(data).start()
        t0 = time.time()
        observe(srv, "tim flipped, restarted")
        srv.stop()
        repair(binary, data, docs, "tim")

        data = os.path.join(root, "block")
        srv, uuid = build(binary, data, docs, parts)
        flip(first_seg(data, uuid, "fdt"), 8 + 45)
        st, b, _ = srv.request("GET", "/logs/_doc/1")
        show("block flipped at run time: GET /logs/_doc/1",
             answer=err(st, b) if st != 200 else 200)
        observe(srv, "block flipped, after the GET")
        srv.stop()
        srv = fdsserver.Server(data).start()
        observe(srv, "block flipped, restarted")
        srv.stop()
        repair(binary, data, docs, "block")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
