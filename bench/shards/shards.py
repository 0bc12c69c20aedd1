"""bench/shards/shards.py: the same search on a 1-shard and a 2-shard index
of the same documents (a benchmark, never a test).

Why it exists: a multi-shard index runs one query phase per shard, in
parallel up to one thread per core; this shows what that costs or saves
against one shard on this machine.

Usage: start a server (fieldstore --data DIR --port PORT), write the two bulk
files with the deterministic generator (same seed, same documents):
    build/datasets/synthlogs --docs 1000000 --seed 1 --format bulk --index b1 -o B/b1.ndjson
    build/datasets/synthlogs --docs 1000000 --seed 1 --format bulk --index b2 -o B/b2.ndjson
then run  shards.py PORT B.  Indices b1 (1 shard) and b2 (2 shards) are loaded
in 20,000-document _bulk requests (skipped when they exist), refreshed and
force-merged to one segment per shard; each query (track_total_hits true,
so both count every match) runs once to warm up, then REPS times from one
client.  Output: JSON on stdout, per index and query the median and p90
latency in milliseconds and the total hits (equal on both: the proof the
same work was done); load_s is the load time in seconds.  Standard library
only."""
import http.client, json, statistics, sys, time
PORT = int(sys.argv[1])
DIR = sys.argv[2] if len(sys.argv) > 2 else "."
REPS = 60
def req(method, path, body=None, ctype="application/json"):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=600)
    c.request(method, path, body=body, headers={"Content-Type": ctype})
    r = c.getresponse(); raw = r.read(); c.close()
    return r.status, json.loads(raw) if raw else None
def load(name, shards, path):
    req("PUT", "/" + name, json.dumps({"settings": {"number_of_shards": shards,
                                                    "refresh_interval": "-1"}}))
    t0 = time.time()
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    chunk = 40000
    for i in range(0, len(lines), chunk):
        body = b"\n".join(lines[i:i + chunk]).strip(b"\n") + b"\n"
        if len(body) > 1:
            st, b = req("POST", "/_bulk", body, "application/x-ndjson")
            assert st == 200 and not b["errors"], str(b)[:300]
    req("POST", "/%s/_refresh" % name)
    req("POST", "/%s/_forcemerge?max_num_segments=1" % name)
    return time.time() - t0
QUERIES = {
    "match url, size 10": {"query": {"match": {"url": "product"}}, "size": 10},
    "term status 404, count": {"query": {"term": {"status": 404}}, "size": 0},
    "match_all sort @timestamp, size 100": {"query": {"match_all": {}}, "size": 100,
                                             "sort": [{"@timestamp": "desc"}]},
    "bool match+range, size 10": {"query": {"bool": {
        "must": [{"match": {"user_agent": "mozilla"}}],
        "filter": [{"range": {"body_bytes_sent": {"gte": 1000}}}]}}, "size": 10},
}
if __name__ == "__main__":
    out = {}
    for name, shards in (("b1", 1), ("b2", 2)):
        if req("GET", "/" + name)[0] == 200:
            out[name] = {"shards": shards}
        else:
            out[name] = {"shards": shards, "load_s": round(load(name, shards, "%s/%s.ndjson" % (DIR, name)), 1)}
    for qn, q in QUERIES.items():
        for name in ("b1", "b2"):
            body = json.dumps(dict(q, track_total_hits=True))
            st, b = req("POST", "/%s/_search" % name, body)  # warm
            assert st == 200, b
            ts = []
            for _ in range(REPS):
                t0 = time.perf_counter(); req("POST", "/%s/_search" % name, body)
                ts.append((time.perf_counter() - t0) * 1000)
            ts.sort()
            out[name][qn] = {"median_ms": round(statistics.median(ts), 2),
                             "p90_ms": round(ts[int(0.9 * len(ts)) - 1], 2),
                             "total": b["hits"]["total"]["value"]}
    print(json.dumps(out, indent=1))
