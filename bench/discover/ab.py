"""Discover's shapes on two fieldstore servers, A (reference) and B, in turn.

Why it exists: the query shapes a log dashboard sends -- a phrase of common
words, Discover's time window + match sorted by @timestamp -- must cost what
their window costs, not what the index holds (docs/query.md "Ranges and
sorts by block bounds").  Both servers serve copies of one data directory,
so each round runs REQUESTS requests per shape on A then on B (B first in
odd rounds) and both see the same machine load within seconds.

Bodies are drawn once (seeded) and sent to both servers in the same order:
time windows of WINDOW_MIN minutes at random over the index's @timestamp
range, words from fixed lists of common url words and user-agent phrases.
Per shape it prints, for A and B, p50 and p99 of every measured request's
service time (request sent to response read, ms, one keep-alive connection,
one request at a time), the median of the rounds' p50s with their min-max,
and whether every answer of B equals A's (ids in order, total, scores).

    python3 bench/discover/ab.py --a PORT_A --b PORT_B --index IDX \\
        [--rounds 7] [--requests 40] [--seed 1] [--shapes discover-desc ...]
"""
import argparse
import http.client
import json
import random
import time

WARMUP = 5          # unmeasured requests per server per shape per round
WINDOW_MIN = 15     # Discover's time window, minutes
URL_WORDS = ["image", "filter", "static", "product", "browse", "ajax",
             "settings", "m", "productmodel", "images", "basket", "rapid"]
# three common words of a user agent (the tokenizer splits on / ( ; and space)
UA_PHRASES = ["Mozilla/5.0 (Windows", "(Windows NT 10.0", "(Linux; Android",
              "(KHTML, like", "like Gecko) Chrome", "AppleWebKit/537.36 (KHTML,",
              "Windows NT 6.1", "(iPhone; CPU iPhone"]


def shapes(tmin, tmax, rnd, n):
    """name -> list of n bodies (JSON strings)."""
    def window():
        lo = rnd.randint(tmin, max(tmin, tmax - WINDOW_MIN * 60000))
        return {"range": {"@timestamp": {"gte": lo, "lte": lo + WINDOW_MIN * 60000,
                                         "format": "epoch_millis"}}}

    def discover(order, size, track):
        b = {"size": size, "track_total_hits": track,
             "sort": [{"@timestamp": {"order": order, "unmapped_type": "boolean"}}],
             "query": {"bool": {"filter": [window()],
                                "must": [{"match": {"url": rnd.choice(URL_WORDS)}}]}}}
        return json.dumps(b)

    def phrase():
        return json.dumps({"query": {"match_phrase": {"user_agent": rnd.choice(UA_PHRASES)}}})

    return {
        "discover-desc-500": [discover("desc", 500, True) for _ in range(n)],
        "discover-asc-500": [discover("asc", 500, True) for _ in range(n)],
        "discover-desc-50-default-total": [discover("desc", 50, 10000) for _ in range(n)],
        "match_phrase-ua": [phrase() for _ in range(n)],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", type=int, required=True, help="port of server A (reference)")
    ap.add_argument("--b", type=int, required=True, help="port of server B")
    ap.add_argument("--index", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--requests", type=int, default=40, help="per shape per server per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--shapes", nargs="*")
    ap.add_argument("--label-a", default="A")
    ap.add_argument("--label-b", default="B")
    args = ap.parse_args()
    ports = (args.a, args.b)
    conns = [http.client.HTTPConnection("127.0.0.1", p, timeout=600) for p in ports]
    path = "/%s/_search" % args.index

    def one(k, body):
        t0 = time.perf_counter_ns()
        try:
            conns[k].request("POST", path, body, {"Content-Type": "application/json"})
            r = conns[k].getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed an idle keep-alive connection: a new one
            conns[k].close()
            conns[k] = http.client.HTTPConnection("127.0.0.1", ports[k], timeout=600)
            t0 = time.perf_counter_ns()
            conns[k].request("POST", path, body, {"Content-Type": "application/json"})
            r = conns[k].getresponse()
        data = r.read()
        t1 = time.perf_counter_ns()
        if r.status != 200:
            raise SystemExit("%s: %d %s" % (path, r.status, data[:300]))
        return (t1 - t0) / 1e6, data

    _, data = one(0, json.dumps({"size": 0, "aggs": {
        "lo": {"min": {"field": "@timestamp"}}, "hi": {"max": {"field": "@timestamp"}}}}))
    ag = json.loads(data)["aggregations"]
    tmin, tmax = int(ag["lo"]["value"]), int(ag["hi"]["value"])
    rnd = random.Random(args.seed)
    per_round = args.requests
    bodies = shapes(tmin, tmax, rnd, per_round * args.rounds + WARMUP)
    names = [s for s in bodies if not args.shapes or s in args.shapes]

    def digest(data):
        r = json.loads(data)
        return (r["hits"]["total"], [(h["_id"], h.get("_score"), h.get("sort"))
                                     for h in r["hits"]["hits"]])

    lat = {(s, k): [] for s in names for k in (0, 1)}
    rounds = {(s, k): [] for s in names for k in (0, 1)}
    same = {s: True for s in names}
    for rd in range(args.rounds):
        for s in names:
            order = (0, 1) if rd % 2 == 0 else (1, 0)
            got = {}
            for k in order:
                for body in bodies[s][:WARMUP]:
                    one(k, body)
                v = []
                for i in range(per_round):
                    body = bodies[s][WARMUP + rd * per_round + i]
                    ms, data = one(k, body)
                    v.append(ms)
                    if i < 5:
                        got.setdefault(i, []).append(digest(data))
                lat[(s, k)] += v
                v.sort()
                rounds[(s, k)].append(v[len(v) // 2])
            for i, d in got.items():
                if d[0] != d[1]:
                    same[s] = False

    def pct(v, p):
        v = sorted(v)
        return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]

    def med(v):
        v = sorted(v)
        return "%.2f (%.2f-%.2f)" % (v[len(v) // 2], v[0], v[-1])

    la, lb = args.label_a, args.label_b
    print("| shape | %s p50 | %s p99 | %s p50 | %s p99 | %s rounds' p50 | %s rounds' p50 | same answers |"
          % (la, la, lb, lb, la, lb))
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for s in names:
        a, b = lat[(s, 0)], lat[(s, 1)]
        print("| %s | %.2f | %.2f | %.2f | %.2f | %s | %s | %s |" % (
            s, pct(a, 50), pct(a, 99), pct(b, 50), pct(b, 99),
            med(rounds[(s, 0)]), med(rounds[(s, 1)]), "yes" if same[s] else "**NO**"))
    print()
    print("%d rounds x %d requests per shape per server (after %d unmeasured), seed %d, "
          "index %s (%d-%d ms of @timestamp)." % (args.rounds, per_round, WARMUP, args.seed,
                                                  args.index, tmin, tmax))


if __name__ == "__main__":
    main()
