"""Server CPU per request of each dashboard class, servers A and B in turn.

Why it exists: the dashboard workload (`loadgen --workload dashboard`,
docs/loadgen.md) mixes six request shapes whose costs differ by 10x; its
QPS per server CPU % says how the mix does, this says which class a change
moved.  Both servers serve copies of one data directory (a data directory
has one server).  Each round sends every class's bodies one at a time over
one keep-alive connection, to A then to B (B first in odd rounds), and
counts the server's CPU time (its threads' schedstat run time, as
bench/aggs/measure.py does) per request.  It prints per class the median
over rounds of CPU ms per request with the rounds' min-max, for A and B,
and whether every answer of B equals A's (took and timed_out aside).

The bodies are those loadgen generates: `loadgen run --workload dashboard
--dump-queries FILE ...` writes them one a line; each is given its class
by its shape, as fds_lgdash.c writes them.

    python3 bench/discover/classes_ab.py --a PORT_A:PID_A --b PORT_B:PID_B \\
        --index IDX --bodies FILE [--per-class 40] [--rounds 5]
"""
import argparse
import http.client
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "aggs"))
from measure import cpu_ns  # noqa: E402

CLASSES = ["discover", "discover_histogram", "lens_top_values", "time_series",
           "phrase", "lens_metric"]


def klass(body):
    """The class of a loadgen dashboard body (fds_lgdash.c's shapes)."""
    if "match_phrase" in body:
        return "phrase"
    if '"fixed_interval":"30s"' in body:
        return "discover_histogram"
    if '"fixed_interval":"1m"' in body:
        return "time_series"
    if "url.keyword" in body:
        return "lens_top_values"
    if '"fields"' in body:
        return "discover"
    return "lens_metric"


def strip(ans):
    ans.pop("took", None)
    return ans


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="PORT:PID of server A (reference)")
    ap.add_argument("--b", required=True, help="PORT:PID of server B")
    ap.add_argument("--index", required=True)
    ap.add_argument("--bodies", required=True, help="loadgen --dump-queries output")
    ap.add_argument("--per-class", type=int, default=40, help="bodies of each class")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    srv = []
    for spec in (args.a, args.b):
        port, pid = spec.split(":")
        srv.append([http.client.HTTPConnection("127.0.0.1", int(port)), int(pid)])
    by = {c: [] for c in CLASSES}
    with open(args.bodies) as f:
        for line in f:
            line = line.strip()
            if line and len(by[klass(line)]) < args.per_class:
                by[klass(line)].append(line)
    path = "/%s/_search" % args.index

    def one(k, body):
        srv[k][0].request("POST", path, body=body,
                          headers={"Content-Type": "application/json"})
        r = srv[k][0].getresponse()
        data = r.read()
        if r.status != 200:
            raise SystemExit("server %s: HTTP %d: %s" % ("AB"[k], r.status, data[:300]))
        return data

    def stat(v):
        v = sorted(v)
        return "%.3f (%.3f-%.3f)" % (v[len(v) // 2], v[0], v[-1])

    print("| class | bodies | A CPU ms | B CPU ms | B / A | same answers |")
    print("|---|---:|---:|---:|---:|---|")
    for c in CLASSES:
        bodies = by[c]
        if not bodies:
            continue
        same = all(strip(json.loads(one(0, b))) == strip(json.loads(one(1, b)))
                   for b in bodies)
        cpu = [[], []]
        for r in range(args.rounds):
            for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                c0 = cpu_ns(srv[k][1])
                for b in bodies:
                    one(k, b)
                cpu[k].append((cpu_ns(srv[k][1]) - c0) / len(bodies) / 1e6)
        ma, mb = sorted(cpu[0])[len(cpu[0]) // 2], sorted(cpu[1])[len(cpu[1]) // 2]
        print("| %s | %d | %s | %s | %.2f | %s |" % (
            c, len(bodies), stat(cpu[0]), stat(cpu[1]), mb / ma if ma else 0,
            "yes" if same else "NO"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
