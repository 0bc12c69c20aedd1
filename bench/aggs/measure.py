"""Measure search bodies over one keep-alive connection (bench/aggs/run.sh).

Per round the bodies run in alternating order (forward, backward, ...), each
WARMUP unmeasured then REQUESTS measured requests, one at a time.  Service
time: request sent to response read (ms).  Server CPU: the sum of the
server's threads' schedstat run time over a body's measured requests, per
request (ms).  Prints a Markdown report: per body the median over all
measured requests, the min-max of the rounds' medians, the CPU median, and
a digest of the first answer (doc counts, to show the work was done).
"""
import argparse
import glob
import hashlib
import http.client
import json
import os
import statistics
import time


def cpu_ns(pid):
    total = 0
    for f in glob.glob("/proc/%d/task/*/schedstat" % pid):
        try:
            with open(f) as fh:
                total += int(fh.read().split()[0])
        except (OSError, ValueError):
            pass
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--docs", type=int, default=0)
    ap.add_argument("--seed", default="1")
    ap.add_argument("--command", default="")
    a = ap.parse_args()
    queries = [json.loads(line) for line in open(a.queries) if line.strip()]
    conn = http.client.HTTPConnection("127.0.0.1", a.port, timeout=600)
    path = "/%s/_search" % a.index

    def once(body):
        t0 = time.perf_counter_ns()
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        t1 = time.perf_counter_ns()
        if resp.status != 200:
            raise SystemExit("%s: %d %s" % (path, resp.status, data[:300]))
        return (t1 - t0) / 1e6, data

    times = {q["name"]: [] for q in queries}
    round_medians = {q["name"]: [] for q in queries}
    cpu = {q["name"]: [] for q in queries}
    digest = {}
    for r in range(a.repeats):
        order = queries if r % 2 == 0 else list(reversed(queries))
        for q in order:
            body = json.dumps(q["body"])
            data = None
            for _ in range(a.warmup):
                _, data = once(body)
            c0 = cpu_ns(a.pid)
            ts = []
            for _ in range(a.requests):
                ms, data = once(body)
                ts.append(ms)
            cpu[q["name"]].append((cpu_ns(a.pid) - c0) / 1e6 / a.requests)
            if q["name"] not in digest and data is not None:
                # the answer of a warm-up or, with --warmup 0, of a measured request
                ans = json.loads(data)
                digest[q["name"]] = (ans["hits"]["total"]["value"],
                                     len(json.dumps(ans.get("aggregations", {}))),
                                     hashlib.sha1(json.dumps(ans.get("aggregations", {}),
                                                             sort_keys=True).encode())
                                     .hexdigest()[:10])
            times[q["name"]] += ts
            round_medians[q["name"]].append(statistics.median(ts))
    print("# Aggregations at %s documents\n" % format(a.docs, ","))
    print("Command: `%s`  " % a.command)
    synth_args = os.environ.get("SYNTH_ARGS", "").strip()
    print("Index: synthlogs %s--docs %d --seed %s, datasets/nginx-mapping.json, ZSTD, "
          "one segment.  One keep-alive connection, one request at a time; %d rounds "
          "x %d requests per body (after %d warm-up), bodies in alternating order.  "
          "Service time in ms: median of all requests, and the min-max of the "
          "rounds' medians; server CPU ms per request (thread schedstat), median "
          "over rounds.  The machine's 2 cores are shared with other work.\n"
          % (synth_args + " " if synth_args else "", a.docs, a.seed, a.repeats,
             a.requests, a.warmup))
    print("| body | median ms | rounds' medians min-max | server CPU ms | hits | "
          "answer bytes / sha1 |")
    print("|---|---:|---:|---:|---:|---|")
    for q in queries:
        n = q["name"]
        rm = round_medians[n]
        tot, size, h = digest[n]
        print("| %s | %.2f | %.2f-%.2f | %.2f | %d | %d / %s |"
              % (n, statistics.median(times[n]), min(rm), max(rm),
                 statistics.median(cpu[n]), tot, size, h))
    print("\nBodies (bench/aggs/queries.ndjson):\n")
    for q in queries:
        print("- %s: `%s`" % (q["name"], json.dumps(q["body"])))


if __name__ == "__main__":
    main()
