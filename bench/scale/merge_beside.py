#!/usr/bin/env python3
"""bench/scale/merge_beside.py: refreshed writes beside a force-merge.

For each server binary (alternating A B, B A, ... over --repeats): a fresh
data directory, one ZSTD index (refresh_interval -1) loaded with --docs
synthlogs documents (seed --seed) as --segments refreshed _bulk rounds, then
POST /INDEX/_forcemerge?max_num_segments=1 on one connection while another,
from --delay seconds after it was sent, writes one document at a time with
?refresh=true (PUT /INDEX/_doc/ID, the next one --every seconds after the
previous answer) until the merge answers.  Prints per run:

  merge s        the force-merge's wall time
  writes         refreshed writes answered while the merge ran / sent
  write ms       their latency (request to answer, loopback), p50 and max

then the medians (min-max) per server.  A write that waits for the whole
merge shows as one write with the merge's time; one that does not shows as
many writes of a few milliseconds.  Wall times on a shared 2-core machine:
compare servers within one run of this script only.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INDEX = "merge-beside"


def request(port, method, path, body=None, ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    c.request(method, path, body=body, headers={"Content-Type": ctype})
    r = c.getresponse()
    raw = r.read()
    c.close()
    return r.status, raw


def start(binary, work):
    data = os.path.join(work, "data")
    shutil.rmtree(data, ignore_errors=True)
    os.mkdir(data)
    pf = os.path.join(work, "port")
    if os.path.exists(pf):
        os.unlink(pf)
    log = open(os.path.join(work, "server.log"), "ab")
    p = subprocess.Popen([binary, "--data", data, "--port", "0",
                          "--port-file", pf], stdout=log, stderr=log)
    for _ in range(600):
        if os.path.exists(pf) and os.path.getsize(pf):
            return p, int(open(pf).read())
        time.sleep(0.05)
    p.kill()
    sys.exit("merge_beside: %s did not start" % binary)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def run(binary, chunks, a, work):
    proc, port = start(binary, work)
    try:
        st, raw = request(port, "PUT", "/" + INDEX, json.dumps({"settings": {
            "index": {"codec": "ZSTD", "refresh_interval": "-1"}}}))
        assert st == 200, raw
        for c in chunks:
            st, raw = request(port, "POST", "/_bulk?refresh=true", c,
                              "application/x-ndjson")
            assert st == 200 and b'"errors":false' in raw[:200], raw[:300]
        done = threading.Event()
        ans = {}

        def merge():
            t = time.perf_counter()
            ans["st"], ans["raw"] = request(
                port, "POST", "/%s/_forcemerge?max_num_segments=1" % INDEX)
            ans["s"] = time.perf_counter() - t
            done.set()

        th = threading.Thread(target=merge)
        th.start()
        time.sleep(a.delay)
        lat, during, n = [], 0, 0
        while not done.is_set():
            t = time.perf_counter()
            st, raw = request(port, "PUT", "/%s/_doc/w%d?refresh=true" % (INDEX, n),
                              '{"message":"written beside a merge"}')
            lat.append((time.perf_counter() - t) * 1e3)
            assert st == 201, raw
            n += 1
            during += not done.is_set()
            time.sleep(a.every)
        th.join()
        assert ans["st"] == 200, ans["raw"]
        return ans["s"], during, n, pct(lat, 0.5), max(lat)
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", action="append", default=[],
                    help="LABEL=BINARY (repeatable; default current=build/fieldstore)")
    ap.add_argument("--docs", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--segments", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--every", type=float, default=0.05)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    servers = [s.split("=", 1) for s in a.server] or \
        [["current", os.path.join(a.build, "fieldstore")]]
    synth = os.path.join(a.build, "datasets", "synthlogs")
    body = subprocess.run([synth] + os.environ.get("SYNTH_ARGS", "").split() +
                          ["--docs", str(a.docs), "--seed", str(a.seed),
                           "--format", "bulk", "--index", INDEX],
                          check=True, capture_output=True).stdout.splitlines(True)
    per = -(-len(body) // 2 // a.segments) * 2  # whole action + source pairs
    chunks = [b"".join(body[i:i + per]) for i in range(0, len(body), per)]
    del body
    work = tempfile.mkdtemp(prefix="fieldstore-merge-beside.")
    runs = {label: [] for label, _ in servers}
    try:
        for r in range(a.repeats):
            order = servers if r % 2 == 0 else servers[::-1]
            for label, binary in order:
                m, during, n, p50, mx = run(binary, chunks, a, work)
                runs[label].append((m, during, n, p50, mx))
                print("%s run %d: merge %.2f s, writes %d/%d during it, "
                      "write ms p50 %.1f max %.1f" % (label, r + 1, m, during,
                                                      n, p50, mx), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def mm(v, f):
        return "%s (%s-%s)" % (f % statistics.median(v), f % min(v), f % max(v))

    for label, _ in servers:
        v = runs[label]
        print("%s: merge s %s, writes during %s, write ms p50 %s, max %s, "
              "%d runs" % (label, mm([x[0] for x in v], "%.2f"),
                           mm([x[1] for x in v], "%d"),
                           mm([x[3] for x in v], "%.1f"),
                           mm([x[4] for x in v], "%.1f"), len(v)))


if __name__ == "__main__":
    main()
