"""Two fieldstore servers, A and B, measured in turn on the same bodies.

Why it exists: on a shared machine the load moves service times by more than
a change does, and two bench/aggs/run.sh runs minutes apart do not see the
same load.  Here both servers are up at once (each on its own copy of the
bench's data directory: a data directory has one server) and each round runs
N requests on A then N on B (B first in odd rounds), so both see the same
load within seconds.  Per body it prints A's and B's server CPU ms per
request (the servers' threads' schedstat run time, as bench/aggs/measure.py
counts it) and service time in ms -- medians over ROUNDS rounds with their
min-max -- and whether the two answers' `aggregations` are the same.

    cp -a DATA /tmp/data-b
    OLD --data DATA --port 9301 & NEW --data /tmp/data-b --port 9302 &
    python3 bench/aggs/ab.py --a 9301:PID_OLD --b 9302:PID_NEW \\
        [--requests 10] [--rounds 10] [--names 'date_histogram 1h > terms status']
        [--queries bench/aggs/dbbench.ndjson] [--index NAME]
"""
import argparse
import http.client
import json
import os
import time

from measure import cpu_ns

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = "aggs-nginx-d1000000-s1"  # run.sh's default index name
WARMUP = 3                        # unmeasured requests per server per body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="PORT:PID of server A")
    ap.add_argument("--b", required=True, help="PORT:PID of server B")
    ap.add_argument("--index", default=INDEX)
    ap.add_argument("--requests", type=int, default=10, help="per server per round")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=WARMUP,
                    help="unmeasured requests per server per body")
    ap.add_argument("--names", nargs="*", help="bodies of queries.ndjson (default all)")
    ap.add_argument("--queries", default=os.path.join(HERE, "queries.ndjson"),
                    help="file of bodies, one JSON object a line (name, body)")
    args = ap.parse_args()
    srv = []
    for spec in (args.a, args.b):
        port, pid = spec.split(":")
        srv.append((http.client.HTTPConnection("127.0.0.1", int(port)), int(pid)))
    with open(args.queries) as f:
        bodies = [json.loads(line) for line in f if line.strip()]
    path = "/%s/_search" % args.index

    def one(k, body):
        # a keep-alive connection left idle while the other server works
        # (seconds, on a large index) may have been closed: open it again
        for attempt in (0, 1):
            try:
                srv[k][0].request("POST", path, body=body,
                                  headers={"Content-Type": "application/json"})
                return srv[k][0].getresponse().read()
            except (ConnectionError, http.client.HTTPException):
                if attempt:
                    raise
                srv[k][0].close()
                srv[k] = (http.client.HTTPConnection("127.0.0.1", srv[k][0].port),
                          srv[k][1])

    def stat(v):
        v = sorted(v)
        return "%.2f (%.2f-%.2f)" % (v[len(v) // 2], v[0], v[-1])

    print("| body | A CPU ms | A ms | B CPU ms | B ms | same answer |")
    print("|---|---:|---:|---:|---:|---|")
    for q in bodies:
        if args.names and q["name"] not in args.names:
            continue
        body = json.dumps(q["body"])
        ans = [None, None]
        for k in (0, 1):
            for _ in range(max(args.warmup, 1)):
                ans[k] = json.loads(one(k, body)).get("aggregations")
        cpu, wall = [[], []], [[], []]
        for r in range(args.rounds):
            for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                c0, t0 = cpu_ns(srv[k][1]), time.perf_counter()
                for _ in range(args.requests):
                    one(k, body)
                cpu[k].append((cpu_ns(srv[k][1]) - c0) / args.requests / 1e6)
                wall[k].append((time.perf_counter() - t0) / args.requests * 1e3)
        print("| %s | %s | %s | %s | %s | %s |" % (
            q["name"], stat(cpu[0]), stat(wall[0]), stat(cpu[1]), stat(wall[1]),
            "yes" if ans[0] == ans[1] else "NO"))


if __name__ == "__main__":
    main()
