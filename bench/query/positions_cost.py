#!/usr/bin/env python3
"""bench/query/positions_cost.py: what term positions cost and what phrase
queries take.

For each server binary given (LABEL=BINARY; typically the build before
positions and the one after), on a fresh data directory:
  1. creates index `pc` with datasets/nginx-mapping.json (url, referrer and
     user_agent are text fields, with keyword sub-fields), codec ZSTD,
     refresh_interval -1, translog durability async;
  2. loads the documents in _bulk requests of --bulk documents and
     refreshes: `bulk+refresh s` is the wall time of both, `docs/s` the
     documents over it (one request at a time, loopback), `CPU s` the
     server's CPU time over both (thread schedstat: what a shared machine
     does not distort);
  3. force-merges to one segment and reports the bytes of the segment index
     files (*.tim: terms, postings, positions, columns) and of the whole
     data directory;
  4. --phrases phrases (2-3
     consecutive tokens of the url, referrer or user_agent of documents
     picked with --seed) and, beside each, the `match` with operator and of
     the same terms (the phrases only if the binary answers match_phrase),
     each run --repeats times, size 10; service time p50 /
     p99 / max in ms per class, each with a hash of its hit totals (the
     same across runs and binaries proves the same work was done).
Documents: --log FILE (a combined log, converted by nginx2json: the real
10k sample) or --synth N (synthlogs, seed --seed).  Results print as a
Markdown table.

usage: positions_cost.py --build DIR (--log FILE | --synth N)
                         [--server LABEL=BIN ...] [--bulk N] [--phrases N]
                         [--repeats N] [--seed S] [--work DIR]
"""
import argparse
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT_FIELDS = ("url", "referrer", "user_agent")
TOKEN = re.compile(r"\w+", re.UNICODE)


class Server:
    def __init__(self, binary, data):
        self.port_file = os.path.join(data, "port")
        os.makedirs(data, exist_ok=True)
        self.proc = subprocess.Popen([binary, "--data", data, "--port", "0",
                                      "--port-file", self.port_file],
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for _ in range(200):
            if os.path.exists(self.port_file) and open(self.port_file).read().strip():
                break
            time.sleep(0.05)
        self.port = int(open(self.port_file).read())
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)

    def req(self, method, path, body=None, ctype="application/json"):
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        self.conn.request(method, path, body=data, headers={"Content-Type": ctype})
        r = self.conn.getresponse()
        out = r.read()
        return r.status, json.loads(out) if out else None

    def cpu_s(self):
        """Server CPU seconds so far: its threads' schedstat run time (robust
        against other load on the machine, unlike wall time)."""
        total = 0
        tdir = "/proc/%d/task" % self.proc.pid
        for t in os.listdir(tdir):
            try:
                total += int(open(os.path.join(tdir, t, "schedstat")).read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return total / 1e9

    def stop(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait()


def load_docs(args):
    tool = ("nginx2json", [args.log]) if args.log else \
        ("synthlogs", os.environ.get("SYNTH_ARGS", "").split() +
         ["--docs", str(args.synth), "--seed", str(args.seed)])
    out = subprocess.run([os.path.join(args.build, "datasets", tool[0])] + tool[1],
                         check=True, stdout=subprocess.PIPE).stdout
    return out.splitlines()


def pick_phrases(docs, n, seed):
    rnd = random.Random(seed)
    out = []
    while len(out) < n:
        d = json.loads(docs[rnd.randrange(len(docs))])
        f = rnd.choice(TEXT_FIELDS)
        toks = TOKEN.findall(str(d.get(f, "")).lower())
        k = rnd.choice((2, 3))
        if len(toks) < k:
            continue
        i = rnd.randrange(len(toks) - k + 1)
        out.append((f, " ".join(toks[i:i + k])))
    return out


def du(path, suffix=None):
    """Bytes of the files under path (ending in suffix), the disk
    watermarks' reserve files (disk.reserve*, space kept free) left out."""
    total = 0
    for dp, _, fs in os.walk(path):
        for f in fs:
            if f.startswith("disk.reserve"):
                continue
            if suffix is None or f.endswith(suffix):
                total += os.path.getsize(os.path.join(dp, f))
    return total


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]


def run_one(label, binary, docs, phrases, args):
    data = tempfile.mkdtemp(prefix="fds-poscost-", dir=args.work)
    srv = Server(binary, data)
    try:
        mapping = json.load(open(os.path.join(ROOT, "datasets", "nginx-mapping.json")))
        st, out = srv.req("PUT", "/pc", {"settings": {"index": {
            "codec": "ZSTD", "refresh_interval": "-1",
            "translog": {"durability": "async"}}}, "mappings": mapping})
        assert st == 200, out
        t0, c0 = time.monotonic(), srv.cpu_s()
        for i in range(0, len(docs), args.bulk):
            body = b"".join(b'{"index":{}}\n' + d + b"\n" for d in docs[i:i + args.bulk])
            st, out = srv.req("POST", "/pc/_bulk", body, "application/x-ndjson")
            assert st == 200 and not out["errors"], str(out)[:300]
        srv.req("POST", "/pc/_refresh")
        load_s, load_cpu = time.monotonic() - t0, srv.cpu_s() - c0
        st, out = srv.req("POST", "/pc/_forcemerge?max_num_segments=1")
        assert st == 200, out
        srv.req("POST", "/pc/_refresh")
        row = {"label": label, "docs": len(docs), "load_s": load_s, "load_cpu": load_cpu,
               "sidx": du(data, ".tim"), "dir": du(data)}
        st, _ = srv.req("POST", "/pc/_search", {"query": {"match_phrase": {"url": "a b"}}})
        for cls in ("match_phrase", "match_and") if st == 200 else ("match_and",):
            lat, h = [], hashlib.sha256()
            for _ in range(args.repeats):
                for f, text in phrases:
                    q = {"match_phrase": {f: text}} if cls == "match_phrase" else \
                        {"match": {f: {"query": text, "operator": "and"}}}
                    t = time.monotonic()
                    st, out = srv.req("POST", "/pc/_search", {"query": q, "size": 10})
                    lat.append((time.monotonic() - t) * 1000)
                    assert st == 200, out
                    h.update(b"%s %d;" % (cls.encode(), out["hits"]["total"]["value"]))
            row[cls] = (pct(lat, 50), pct(lat, 99), max(lat), h.hexdigest()[:8])
        return row
    finally:
        srv.stop()
        shutil.rmtree(data, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--log")
    ap.add_argument("--synth", type=int)
    ap.add_argument("--server", action="append", default=[])
    ap.add_argument("--bulk", type=int, default=5000)
    ap.add_argument("--phrases", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    if not args.log and not args.synth:
        ap.error("--log FILE or --synth N")
    servers = args.server or ["current=" + os.path.join(args.build, "fieldstore")]
    docs = load_docs(args)
    phrases = pick_phrases(docs, args.phrases, args.seed)
    rows = [run_one(*s.split("=", 1), docs, phrases, args) for s in servers]
    src = args.log and os.path.basename(args.log) or "synthlogs %d (seed %d)" % (args.synth, args.seed)
    print("documents: %s; %d phrases x %d repeats\n" % (src, args.phrases, args.repeats))
    print("| server | docs | bulk+refresh s | docs/s | CPU s | index (.tim) bytes "
          "| data dir bytes | match_phrase p50/p99/max ms (hash) "
          "| match AND p50/p99/max ms (hash) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        fmt = lambda t: "%.2f / %.2f / %.2f (%s)" % t if t else "refused"
        print("| %s | %d | %.2f | %.0f | %.2f | %d | %d | %s | %s |" % (
            r["label"], r["docs"], r["load_s"], r["docs"] / r["load_s"],
            r["load_cpu"], r["sidx"], r["dir"], fmt(r.get("match_phrase")),
            fmt(r.get("match_and"))))


if __name__ == "__main__":
    sys.exit(main())
