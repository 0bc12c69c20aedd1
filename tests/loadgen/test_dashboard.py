"""`loadgen --workload dashboard` against a started fieldstore server loaded
with the bundled nginx sample under datasets/nginx-mapping.json.

What is checked (never a timing): a short run gets HTTP 200 for every
request of every class (0 errors, every class answered), the report lists
each class with its own latency row (stdout table and JSON), the same seed
gives the same bodies, every body of every class answers 200 with results
when replayed one by one, and `loadgen ab --workload dashboard` runs on two
indices.

Environment: FDS_LOADGEN (the loadgen binary) and what tests/e2e/fdsserver.py
reads (FDS_SERVER, FDS_NGINX2JSON, FDS_DATASET).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from fdsserver import Server, convert  # noqa: E402

LOADGEN = os.environ.get("FDS_LOADGEN", "loadgen")
MAPPING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "datasets", "nginx-mapping.json")
CLASSES = ["discover", "discover_histogram", "lens_top_values", "time_series", "phrase",
           "lens_metric"]


def class_of(body):
    """The dashboard class of a body, from its shape."""
    q = body.get("query", {})
    if "match_phrase" in q:
        return "phrase"
    aggs = body.get("aggs", {})
    if body.get("size", 0) > 0:
        return "discover"
    agg = next(iter(aggs.values()))
    if "terms" in agg:
        return "lens_top_values"
    if "cardinality" in agg or "avg" in agg:
        return "lens_metric"
    if agg["date_histogram"]["fixed_interval"] == "30s":
        return "discover_histogram"
    return "time_series"


def has_results(cls, answer):
    """The answer holds what the panel would show."""
    if answer["hits"]["total"]["value"] == 0:
        return False
    if cls in ("discover", "phrase"):
        return len(answer["hits"]["hits"]) > 0
    agg = next(iter(answer["aggregations"].values()))
    if cls == "lens_metric":
        return agg["value"] is not None
    return len(agg["buckets"]) > 0


class LoadgenDashboard(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        cls.work = tempfile.mkdtemp(prefix="fds-lgdash-")
        with open(MAPPING) as f:
            mapping = json.load(f)
        for index, codec in (("logs-zstd", "ZSTD"), ("logs-deflate", "best_compression")):
            st, b, _ = cls.srv.request("PUT", "/" + index, {
                "settings": {"index": {"codec": codec}}, "mappings": mapping})
            assert st == 200, b
            st, b, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                       convert("bulk", index=index),
                                       headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and b["errors"] is False, b

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def loadgen(self, *args):
        cmd = [LOADGEN, *args[:1], "--port", str(self.srv.port), "--quiet", *args[1:]]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, "%s\n%s\n%s" % (cmd, r.stdout, r.stderr))
        return r

    def test_run_every_class_answers(self):
        out = os.path.join(self.work, "run.json")
        dump = os.path.join(self.work, "run.bodies")
        r = self.loadgen("run", "--index", "logs-zstd", "--workload", "dashboard",
                         "--duration", "2", "--warmup", "0.5", "--clients", "2",
                         "--threads", "1", "--pool", "300", "--seed", "7",
                         "--json", out, "--dump-queries", dump)
        with open(out) as f:
            doc = json.load(f)
        res = doc["result"]
        self.assertEqual(doc["config"]["workload"], "dashboard")
        self.assertEqual(res["errors"], 0, res["errors_by_kind"])
        self.assertEqual(list(res["classes"]), CLASSES)
        total_share = 0
        for name, c in res["classes"].items():
            self.assertGreater(c["ok"], 0, name)
            self.assertEqual(c["errors"], 0, name)
            self.assertGreater(c["latency_ms"]["p50"], 0, name)
            self.assertGreaterEqual(c["latency_ms"]["p99"], c["latency_ms"]["p50"], name)
            total_share += c["share"]
            # the table on stdout has the class's row
            self.assertIn("| %s |" % name, r.stdout)
        self.assertAlmostEqual(total_share, 1.0, places=6)
        self.assertEqual(sum(c["ok"] for c in res["classes"].values()), res["ok"])
        # same seed, same bodies
        dump2 = os.path.join(self.work, "run2.bodies")
        self.loadgen("run", "--index", "logs-zstd", "--workload", "dashboard",
                     "--duration", "0.2", "--warmup", "0", "--pool", "300", "--seed", "7",
                     "--dump-queries", dump2)
        with open(dump) as f1, open(dump2) as f2:
            self.assertEqual(f1.read(), f2.read())

    def test_every_body_has_results(self):
        dump = os.path.join(self.work, "all.bodies")
        self.loadgen("run", "--index", "logs-zstd", "--workload", "dashboard",
                     "--duration", "0.2", "--warmup", "0", "--pool", "200", "--seed", "3",
                     "--dump-queries", dump)
        seen = {}
        with open(dump) as f:
            bodies = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(len(bodies), 200)
        for body in bodies:
            cls = class_of(body)
            st, answer, _ = self.srv.request("POST", "/logs-zstd/_search", body)
            self.assertEqual(st, 200, (cls, body, answer))
            self.assertTrue(has_results(cls, answer), (cls, body, answer))
            seen[cls] = seen.get(cls, 0) + 1
        self.assertEqual(sorted(seen), sorted(CLASSES), seen)
        discover = next(b for b in bodies if class_of(b) == "discover")
        self.assertEqual(discover["size"], 500)

    def test_ab_on_two_indices(self):
        out = os.path.join(self.work, "ab.json")
        r = self.loadgen("ab", "--index", "logs-zstd", "--index", "logs-deflate",
                         "--workload", "dashboard", "--rounds", "2",
                         "--round-duration", "1", "--warmup", "0.3", "--clients", "2",
                         "--threads", "1", "--pool", "200", "--json", out,
                         "--md", os.path.join(self.work, "ab.md"),
                         "--svg-prefix", os.path.join(self.work, "ab"))
        with open(out) as f:
            doc = json.load(f)
        side = doc["sides"] if "sides" in doc else [doc["a"], doc["b"]]
        for s in side:
            self.assertEqual(s["errors"], 0)
            self.assertEqual(list(s["classes"]), CLASSES)
            for name, c in s["classes"].items():
                self.assertGreater(c["ok"], 0, (s["index"], name))
        with open(os.path.join(self.work, "ab.md")) as f:
            md = f.read()
        for name in CLASSES:
            self.assertIn("| %s: latency p99 (ms) |" % name, md)

    def test_match_options_refused(self):
        # --fields and --bodies belong to the match workload: refused, not ignored
        for extra in (["--fields", "url"], ["--bodies", os.devnull]):
            cmd = [LOADGEN, "run", "--port", str(self.srv.port), "--quiet",
                   "--index", "logs-zstd", "--workload", "dashboard",
                   "--duration", "1", *extra]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            self.assertNotEqual(r.returncode, 0, (extra, r.stdout))
            self.assertIn(extra[0], r.stderr)


if __name__ == "__main__":
    unittest.main()
