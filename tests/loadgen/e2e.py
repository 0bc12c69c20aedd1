#!/usr/bin/env python3
"""End-to-end tests of loadgen against the libmicrohttpd test fixture.

Each test starts tests/loadgen/testserver on a free loopback port with a
chosen misbehaviour (fixed delay, one 1 s stall, always 500), runs the real
`loadgen` binary against it, reads the JSON it wrote and checks that the
measurement tells the truth.  Usage: e2e.py LOADGEN TESTSERVER WORKDIR TEST
"""
import json
import os
import subprocess
import sys
import time

LOADGEN, SERVER, WORK, TEST = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


class Server:
    def __init__(self, *args):
        self.p = subprocess.Popen([SERVER, "--port", "0", *args], stdout=subprocess.PIPE,
                                  text=True)
        line = self.p.stdout.readline()
        if not line.startswith("port "):
            raise SystemExit("testserver did not start: %r" % line)
        self.port = int(line.split()[1])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.terminate()
        self.p.wait(timeout=10)


def loadgen(*args, expect_rc=0):
    cmd = [LOADGEN, *[str(a) for a in args]]
    print("+", " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    sys.stderr.write(r.stderr[-3000:])
    sys.stdout.write(r.stdout[-3000:])
    if expect_rc is not None:
        check(r.returncode == expect_rc, "loadgen exit %d, want %d" % (r.returncode, expect_rc))
    return r


def run_json(port, name, *args):
    out = os.path.join(WORK, name + ".json")
    if os.path.exists(out):
        os.remove(out)
    loadgen("run", "--port", port, "--json", out, *args)
    with open(out) as f:
        return json.load(f)


def t_closed_5ms():
    s_port = []
    with Server("--mode", "delay", "--delay-ms", "5") as s:
        s_port.append(s.port)
        d = run_json(s.port, "closed_5ms", "--index", "logs", "--clients", 4, "--threads", 2,
                     "--duration", 3, "--warmup", 1)
    r = d["result"]
    p50 = r["latency_ms"]["p50"]
    print("closed loop vs 5 ms server: p50 = %.3f ms, qps = %.1f" % (p50, r["qps"]))
    check(abs(p50 - 5.0) <= 0.5, "p50 %.3f ms not within 5 +- 0.5 ms" % p50)
    check(r["errors"] == 0, "errors %s" % r["errors"])
    check(r["ok"] > 500, "too few successes %s" % r["ok"])
    # 4 clients x 1 request per ~5 ms: about 800 req/s
    check(500 < r["qps"] < 900, "qps %.1f implausible for 4 clients x 5 ms" % r["qps"])
    check(r["cpu_percent"] is not None, "server CPU not measured via /_nodes/stats")
    # that CPU is the node's, from its process.cpu.total_in_millis, named per node
    nodes = r["nodes"]
    check(len(nodes) == 1 and nodes[0]["cpu_percent"] == r["cpu_percent"]
          and nodes[0]["samples"] >= 1, "per-node CPU %r" % nodes)
    check(r["nodes_cpu"]["cpu_percent"] == r["cpu_percent"], "summed node CPU")
    check(d["cluster"]["nodes"][0]["available_processors"] == 1 and d["cluster"]["index_codec"]["logs"]
          == {"http://127.0.0.1:%d" % s_port[0]: "best_compression"}, "cluster %r" % d["cluster"])
    check(r["codec"] == "best_compression", "codec %r" % r["codec"])
    check(r["store_bytes"] == 1000000, "store_bytes %r" % r["store_bytes"])
    check(d["system"]["cat_nodes_before"][0]["ram.percent"] == "42", "cat nodes not read")
    check(len(d["system"]["loadavg_before"]) == 3, "loadavg")
    check(r["throughput"]["min"] is not None and r["throughput"]["min"] > 0 and r["throughput"]["max"] >= r["throughput"]["min"],
          "throughput buckets")


def t_open_stall():
    with Server("--mode", "stall", "--stall-at-ms", "2000", "--stall-ms", "1000") as s:
        d = run_json(s.port, "open_stall", "--index", "logs", "--rate", 1000, "--clients", 2,
                     "--threads", 1, "--duration", 5, "--warmup", 0.5)
    r = d["result"]
    lat, svc = r["latency_ms"], r["service_time_ms"]
    print("open loop vs one 1 s stall: latency p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms; "
          "service p50 %.3f p99 %.3f p99.9 %.3f max %.3f ms" %
          (lat["p50"], lat["p99"], lat["p99_9"], lat["max"], svc["p50"], svc["p99"], svc["p99_9"],
           svc["max"]))
    # ~1000 requests fall due during the 1 s stall and wait for it to end:
    # latencies spread over 0..1000 ms, ~100 of them (2% of 5000) above 900 ms
    check(lat["p99_9"] >= 900, "latency p99.9 %.1f ms < 900: the stall is hidden" % lat["p99_9"])
    check(lat["p99"] >= 500, "latency p99 %.1f ms: the stall is hidden" % lat["p99"])
    # only the couple of requests on the wire when it began waited in service
    check(svc["p99"] < 100, "service p99 %.1f ms shows the stall" % svc["p99"])
    check(svc["p99_9"] < 100, "service p99.9 %.1f ms shows the stall" % svc["p99_9"])
    check(svc["max"] >= 900, "no request saw the stall in its service time (%.1f)" % svc["max"])
    check(r["errors"] == 0, "errors %s" % r["errors"])
    check(4900 <= r["ok"] <= 5100, "ok %s, want about 1000/s x 5 s" % r["ok"])
    check(r["max_backlog"] >= 800, "backlog %s: requests were not queued during the stall" %
          r["max_backlog"])


def t_closed_stall():
    # the same stall in a closed loop: every client waits, so the few requests
    # caught in it are all the stall leaves in the percentiles (coordinated
    # omission); shown for contrast, checked only for consistency
    with Server("--mode", "stall", "--stall-at-ms", "1000", "--stall-ms", "1000") as s:
        d = run_json(s.port, "closed_stall", "--index", "logs", "--clients", 2, "--threads", 1,
                     "--duration", 3, "--warmup", 0.2)
    r = d["result"]
    check(r["latency_ms"]["max"] >= 900, "closed loop max should show the stall")
    check(r["latency_ms"]["p99"] < 100, "closed loop p99 (coordinated omission) %.1f" %
          r["latency_ms"]["p99"])


def t_errors_500():
    bodies = os.path.join(WORK, "bodies.ndjson")
    with open(bodies, "w") as f:
        f.write('{"query":{"match":{"method":"GET"}},"size":10}\n')
        f.write('{"query":{"match":{"service_name":"product"}},"size":10}\n')
    with Server("--mode", "error") as s:
        d = run_json(s.port, "errors_500", "--index", "logs", "--bodies", bodies, "--clients", 4,
                     "--duration", 2, "--warmup", 0.5)
    r = d["result"]
    print("500 server: ok=%s errors=%s error_rate=%s qps=%s" % (r["ok"], r["errors"],
                                                              r["error_rate"], r["qps"]))
    check(r["ok"] == 0, "successes against a 500 server: %s" % r["ok"])
    check(r["qps"] == 0, "qps %s" % r["qps"])
    check(r["errors"] > 0 and r["error_rate"] == 1.0, "error rate %s" % r["error_rate"])
    check(r["errors_by_kind"]["status"] == r["errors"], "errors are not non-2xx")


def t_short_read():
    with Server("--mode", "short") as s:
        d = run_json(s.port, "short", "--index", "logs", "--clients", 2, "--duration", 1,
                     "--warmup", 0.2)
    r = d["result"]
    print("truncated answers: ok=%s errors=%s by kind %s" % (r["ok"], r["errors"],
                                                            r["errors_by_kind"]))
    check(r["ok"] == 0 and r["qps"] == 0, "truncated responses counted as successes")
    check(r["errors"] > 0 and r["errors_by_kind"]["short_read"] == r["errors"],
          "truncated responses not counted as short reads")


def t_connection_close():
    # a server that closes after every answer: loadgen reconnects, no errors
    with Server("--mode", "delay", "--close") as s:
        d = run_json(s.port, "close", "--index", "logs", "--clients", 4, "--duration", 1,
                     "--warmup", 0.2)
    r = d["result"]
    print("Connection: close server: ok=%s errors=%s qps=%.0f" % (r["ok"], r["errors"], r["qps"]))
    check(r["errors"] == 0 and r["ok"] > 100, "ok %s errors %s" % (r["ok"], r["errors"]))


def t_background_builtin():
    with Server("--mode", "delay", "--delay-ms", "1") as s:
        d = run_json(s.port, "bg_builtin", "--index", "logs", "--clients", 2, "--duration", 3,
                     "--warmup", 0.5, "--background", "cpu=1,load=30,tool=builtin")
    bg = d["system"]["background"]
    print("built-in burner asked for 30%% of a core, took %.1f%%" % bg["cpu_percent"])
    check(bg["tool"] == "builtin" and bg["workers"] == 1, "background %r" % bg)
    # the machine may be busy; the burner must at least run and not exceed its duty cycle much
    check(5 < bg["cpu_percent"] < 45, "burner CPU %.1f%% far from 30%%" % bg["cpu_percent"])
    check(d["result"]["background_cpu_percent"] == bg["cpu_percent"], "side background CPU")


def t_connection_refused():
    # nothing listens on the port: connection errors, never successes
    import socket
    sk = socket.socket()
    sk.bind(("127.0.0.1", 0))
    port = sk.getsockname()[1]
    sk.close()
    d = run_json(port, "refused", "--path", "/", "--clients", 2, "--duration", 1, "--warmup", 0)
    r = d["result"]
    check(r["ok"] == 0 and r["qps"] == 0, "successes without a server")
    check(r["errors_by_kind"]["connect"] > 0, "connect errors not counted")
    # the node is named, with the reason, and the result is marked
    t = r["targets"][0]
    check(t["connect"] > 0 and "refused" in t.get("first_error", ""), "per-node errors %r" % t)
    check("marked" in r and "127.0.0.1:%d" % port in r["marked"], "result not marked")


def t_chunked_and_bounds():
    with Server("--mode", "delay", "--chunked") as s:
        d = run_json(s.port, "chunked", "--index", "logs", "--clients", 4, "--duration", 1,
                     "--warmup", 0.2)
        r = d["result"]
        check(r["errors"] == 0 and r["ok"] > 100, "chunked answers: ok %s errors %s" %
              (r["ok"], r["errors"]))
        d = run_json(s.port, "maxreq", "--index", "logs", "--clients", 4, "--duration", 30,
                     "--warmup", 0, "--max-requests", 200)
        r = d["result"]
        check(r["sent"] <= 200, "sent %s > --max-requests 200" % r["sent"])
        check(r["ok"] + r["errors"] == r["sent"], "requests unaccounted: %s" % r)
        check(r["elapsed_s"] < 10, "max-requests did not end the run")
        # a bad target or a secret on the command line ends before any packet
        r = loadgen("run", "--port", s.port, "--host", "ftp://127.0.0.1", "--path", "/",
                    expect_rc=2)
        check("http://" in r.stderr, "bad scheme message: %r" % r.stderr[-300:])
        r = loadgen("run", "--port", s.port, "--user", "u", "--password", "x", "--path", "/",
                    expect_rc=2)
        check("ps(1)" in r.stderr, "password on the command line not refused")


def fresh(*names):
    """Paths under WORK for these output files, none of them left from before."""
    paths = [os.path.join(WORK, n) for n in names]
    for p in paths:
        if os.path.exists(p):
            os.remove(p)
    return paths


def svg_bars(path):
    """The bars (rects with a title) of an SVG chart loadgen wrote."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    return [e for e in ET.parse(path).getroot().iter(ns + "rect") if e.find(ns + "title")
            is not None]


def t_ab():
    out, md = fresh("ab.json", "ab.md")
    with Server("--mode", "delay", "--delay-ms", "1") as s:
        loadgen("ab", "--port", s.port, "--a", "logs-deflate", "--b", "logs-zstd", "--rounds", 2,
                "--round-duration", 1, "--warmup", 0.3, "--clients", 4, "--json", out, "--md", md,
                "--background", "cpu=1,load=20")
    d = json.load(open(out))
    for side, codec in (("a", "best_compression"), ("b", "ZSTD")):
        o = d[side]
        for k in ("index", "codec", "qps", "errors", "latency_ms", "cpu_percent",
                  "qps_per_cpu_percent", "store_bytes"):
            check(k in o, "ab side %s lacks %s" % (side, k))
        for k in ("mean", "p50", "p90", "p99", "p99_9"):
            check(k in o["latency_ms"], "latency_ms lacks %s" % k)
        check(o["codec"] == codec, "side %s codec %r" % (side, o["codec"]))
        check(len(o["rounds"]) == 2, "rounds")
        check(o["qps"] > 0 and o["errors"] == 0, "side %s qps %s errors %s" % (side, o["qps"],
                                                                               o["errors"]))
    check(abs(d["ratio"]["store_bytes"] - 0.8) < 1e-9, "ratio store_bytes")
    bg = d["system"]["background"]
    check(bg is not None and bg["cpu_percent"] > 5, "background CPU %r" % bg)
    prefix = out[:-5]
    for suffix in ("_qps_rounds.svg", "_latency.svg", "_qps_per_cpu.svg"):
        p = prefix + suffix
        check(os.path.exists(p) and open(p).read().startswith("<?xml"), "svg %s" % p)
        n = len(svg_bars(p))
        check(n >= 4, "svg %s has %d bars" % (p, n))
    check("B / A (min-max over rounds)" in open(md).read(), "markdown table")
    r = loadgen("compare", out, out)
    check("1.000" in r.stdout, "compare of a file with itself")
    # the two sides alternate A B, B A: each round's second side is the other one first
    pos = [(o["round"], o["position"]) for o in d["a"]["rounds"]]
    check(pos == [(1, 1), (2, 2)], "side A positions %s, want A B, B A" % pos)
    check(d["a"]["fetch_share"] is None, "fetch share without server timers %r" %
          d["a"]["fetch_share"])
    check("n/a" in open(md).read(), "missing timers are not n/a in the table")


def t_ab3():
    """N-way: three indices, serpentine order, phase shares, spreads, sentence."""
    out, md = fresh("ab3.json", "ab3.md")
    names = ["logs-zstd", "logs-best_compression", "logs-lucene_best_compression"]
    with Server("--mode", "delay", "--delay-ms", "1", "--timers") as s:
        args = ["ab", "--port", s.port, "--rounds", 2, "--round-duration", 0.6, "--warmup", 0.2,
                "--clients", 2, "--json", out, "--md", md]
        for n in names:
            args += ["--index", n]
        loadgen(*args)
        # --a with --index is refused, one --index is not an A/B test
        loadgen("ab", "--port", s.port, "--a", "x", "--b", "y", "--index", "z", expect_rc=2)
        loadgen("ab", "--port", s.port, "--index", "z", expect_rc=2)
    d = json.load(open(out))
    sides = d["sides"]
    check([o["index"] for o in sides] == names, "sides %s" % [o["index"] for o in sides])
    check([o["codec"] for o in sides] == ["ZSTD", "best_compression", "lucene_best_compression"],
          "codecs %s" % [o["codec"] for o in sides])
    check(d["reference"] == "logs-zstd", "reference %r" % d["reference"])
    check(d["a"]["index"] == names[2] and d["b"]["index"] == names[0], "a/b pair")
    for o in sides:
        for k in ("qps", "latency_ms", "cpu_percent", "system_cpu_percent", "qps_per_cpu_percent",
                  "qps_per_system_cpu_percent", "store_bytes", "query_share", "fetch_share",
                  "cat_store_size", "rounds"):
            check(k in o, "side %s lacks %s" % (o["index"], k))
        check(o["fetch_share"] is not None and abs(o["fetch_share"] - 0.3) < 1e-6,
              "fetch share %r, want 0.3" % o["fetch_share"])
        check(abs(o["query_share"] + o["fetch_share"] - 1) < 1e-9, "shares do not add up")
        check(len(o["rounds"]) == 2, "rounds of %s" % o["index"])
        check(o["rounds"][0]["cat_nodes_before"][0]["ram.percent"] == "42",
              "_cat/nodes not read before the side")
    # A B C, C B A
    order = sorted(((o["round"], o["position"]), o["index"]) for s in sides for o in s["rounds"])
    want = names + names[::-1]
    check([n for _, n in order] == want, "order %s" % [n for _, n in order])
    check(sides[0]["cat_store_size"] == "781.2kb", "cat store size %r" % sides[0]["cat_store_size"])
    rat = {r["index"]: r for r in d["ratios"]}
    check(set(rat) == set(names[1:]), "ratios for %s" % list(rat))
    lb = rat[names[2]]
    check(abs(lb["store_bytes"]["ratio"] - 800000 / 1200000) < 1e-9, "store ratio")
    q = lb["qps"]
    check(q["min"] <= q["max"] and q["verdict"] in ("clear", "spread wider than effect"),
          "qps spread %r" % q)
    check("33% less index disk" in lb["sentence"], "sentence %r" % lb["sentence"])
    check(lb["sentence"].startswith("ZSTD (logs-zstd)"), "sentence %r" % lb["sentence"])
    check("480 KiB" in lb["sentence"], "baseline not described: %r" % lb["sentence"])
    text = open(md).read()
    check(lb["sentence"] in text, "sentence not in the markdown")
    check("A / C" in text and "781.2kb" in text and "## Rounds" in text, "markdown tables")
    for suffix in ("_qps_rounds.svg", "_latency_rounds.svg", "_cpu_rounds.svg", "_latency.svg",
                   "_qps_per_cpu.svg"):
        n = len(svg_bars(out[:-5] + suffix))
        check(n >= 6, "svg %s has %d bars" % (suffix, n))


def t_seed():
    q = {}
    with Server("--mode", "delay") as s:
        for name, seed in (("seed1", 1), ("seed1b", 1), ("seed2", 2)):
            dump = os.path.join(WORK, name + ".queries")
            run_json(s.port, name, "--index", "logs", "--duration", 0.5, "--warmup", 0,
                     "--seed", seed, "--dump-queries", dump)
            q[name] = open(dump).read().splitlines()
    check(len(q["seed1"]) == 1000, "pool size %d" % len(q["seed1"]))
    check(q["seed1"] == q["seed1b"], "same seed, different queries")
    check(q["seed1"] != q["seed2"], "different seed, same queries")
    r = loadgen("compare", os.path.join(WORK, "seed1.json"), os.path.join(WORK, "seed2.json"))
    check("ratio B/A" in r.stdout and "QPS" in r.stdout, "compare of two run files")
    fields = {}
    for line in q["seed1"]:
        d = json.loads(line)
        check(d["size"] == 10, "size")
        (f, v), = d["query"]["match"].items()
        fields.setdefault(f, set()).add(v)
    check(set(fields) == {"service_name", "method", "error_code", "url"}, "fields %s" % fields.keys())
    # values come from the index: fixture services, and urls whole or as tokens
    check(fields["service_name"] <= {"product", "search", "cart", "static", "api", "image"},
          "service values %s" % fields["service_name"])
    check(any(v.startswith("/") for v in fields["url"]), "no whole url picked")
    check(any(not v.startswith("/") for v in fields["url"]), "no url token picked")


TESTS = {k[2:]: v for k, v in globals().items() if k.startswith("t_")}
if TEST not in TESTS:
    raise SystemExit("unknown test %s; have %s" % (TEST, ", ".join(TESTS)))
TESTS[TEST]()
if failures:
    print("%d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("ok")
