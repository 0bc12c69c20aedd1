"""Aggregations in `_search` and `_msearch`, as Elasticsearch 8 answers them:
terms (order, size, min_doc_count, include/exclude, missing, error bounds
over several indices), metrics, date_histogram (calendar and fixed
intervals, time zones, offset, empty buckets, bounds, format), histogram,
range and date_range, filter(s), missing, typed_keys, and the errors
(unknown type, text field, search.max_buckets, unsupported parameters,
multi-valued fields)."""
import json
import unittest

from fdsserver import ServerTestCase

DAY = 86400000
T0 = 1767225600000  # 2026-01-01T00:00:00Z

# (kw, n, x, t, flag): a small data set whose answers are worked out by hand
DOCS = [
    ("GET", 200, 1.5, "2026-01-01T10:00:00Z", True),
    ("GET", 200, 2.5, "2026-01-01T23:30:00Z", False),
    ("POST", 404, 4.0, "2026-01-03T01:00:00Z", True),
    ("GET", 500, None, "2026-01-31T12:00:00Z", True),
    ("PUT", None, 8.0, "2026-02-02T08:00:00Z", None),
    (None, 200, 0.5, "2026-03-15T00:00:00Z", False),
]


class Aggs(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/a", {"mappings": {"properties": {
            "kw": {"type": "keyword"}, "n": {"type": "long"},
            "x": {"type": "double"}, "t": {"type": "date"},
            "flag": {"type": "boolean"}, "msg": {"type": "text"}}}})
        assert st == 200, body
        lines = []
        for i, (kw, n, x, t, flag) in enumerate(DOCS):
            d = {"msg": "hello world", "t": t}
            for k, v in (("kw", kw), ("n", n), ("x", x), ("flag", flag)):
                if v is not None:
                    d[k] = v
            lines.append(json.dumps({"index": {"_id": str(i)}}))
            lines.append(json.dumps(d))
        st, body, _ = cls.srv.request("POST", "/a/_bulk?refresh=true",
                                      "\n".join(lines) + "\n",
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and not body["errors"], body

    def aggs(self, aggs, index="a", qs="", query=None, status=200, **extra):
        body = {"size": 0, "aggs": aggs}
        if query:
            body["query"] = query
        body.update(extra)
        st, out, raw = self.req("POST", "/%s/_search%s" % (index, qs), body)
        self.assertEqual(st, status, out)
        return out if status != 200 else out["aggregations"]

    def err(self, aggs, etype, reason_part, index="a", qs=""):
        st, out, _ = self.req("POST", "/%s/_search%s" % (index, qs),
                              {"size": 0, "aggs": aggs})
        self.assertEqual(st, 400, out)
        self.assertEqual(out["error"]["type"], etype, out)
        self.assertIn(reason_part, out["error"]["reason"])
        return out

    def test_global_ordinals_per_refresh(self):
        """A keyword terms over several segments keeps its global ordinals
        for the published set: counted in `_stats` fielddata, the same
        answer every time, dropped by the refresh that publishes a new
        set (whose first terms builds them again)."""
        st, body, _ = self.req("PUT", "/go", {"mappings": {"properties": {
            "k": {"type": "keyword"}, "n": {"type": "long"}}}})
        self.assertEqual(st, 200, body)
        want = {}
        for seg in range(3):  # three refreshes: three segments
            lines = []
            for i in range(40):
                k = "k%02d" % ((i * 7 + seg * 5) % 23)
                want[k] = want.get(k, 0) + 1
                lines.append(json.dumps({"index": {}}))
                lines.append(json.dumps({"k": k, "n": i}))
            st, out, _ = self.srv.request("POST", "/go/_bulk?refresh=true",
                                          "\n".join(lines) + "\n",
                                          {"Content-Type": "application/x-ndjson"})
            self.assertTrue(st == 200 and not out["errors"], out)

        def fielddata():
            st, out, _ = self.req("GET", "/go/_stats/fielddata")
            self.assertEqual(st, 200, out)
            self.assertNotIn("docs", out["_all"]["primaries"])
            return out["indices"]["go"]["primaries"]["fielddata"]["memory_size_in_bytes"]

        self.assertEqual(fielddata(), 0)
        body = {"k": {"terms": {"field": "k", "size": 30}}}
        first = self.aggs(body, index="go")
        got = {b["key"]: b["doc_count"] for b in first["k"]["buckets"]}
        self.assertEqual(got, want)
        held = fielddata()
        self.assertGreater(held, 0)
        self.assertEqual(self.aggs(body, index="go"), first)
        self.assertEqual(fielddata(), held)  # looked up, not built again
        st, out, _ = self.req("POST", "/go/_doc?refresh=true", {"k": "k99", "n": 1})
        self.assertEqual(st, 201, out)
        self.assertEqual(fielddata(), 0)  # a new set: a new, empty cache
        want["k99"] = 1
        again = self.aggs(body, index="go")
        self.assertEqual({b["key"]: b["doc_count"] for b in again["k"]["buckets"]}, want)
        self.assertGreater(fielddata(), 0)

    def test_numeric_strings(self):
        # Elasticsearch's parser coerces a string holding a number for a
        # numeric parameter (AbstractXContentParser intValue / doubleValue):
        # the same answers as the numbers; other strings are refused as its
        # ObjectParser refuses them
        pairs = (  # (with strings, with numbers)
            ({"terms": {"field": "kw", "size": "1", "shard_size": "5",
                        "min_doc_count": "2"}},
             {"terms": {"field": "kw", "size": 1, "shard_size": 5,
                        "min_doc_count": 2}}),
            ({"histogram": {"field": "x", "interval": "2", "offset": "0.5",
                            "min_doc_count": "1"}},
             {"histogram": {"field": "x", "interval": 2, "offset": 0.5,
                            "min_doc_count": 1}}),
            ({"date_histogram": {"field": "t", "fixed_interval": "1d",
                                 "min_doc_count": "1"}},
             {"date_histogram": {"field": "t", "fixed_interval": "1d",
                                 "min_doc_count": 1}}),
            ({"cardinality": {"field": "kw", "precision_threshold": "100"}},
             {"cardinality": {"field": "kw", "precision_threshold": 100}}),
            ({"percentiles": {"field": "x", "percents": ["50"],
                              "tdigest": {"compression": "200"}}},
             {"percentiles": {"field": "x", "percents": [50],
                              "tdigest": {"compression": 200}}}),
            ({"composite": {"size": "2", "sources": [
                {"h": {"histogram": {"field": "x", "interval": "2"}}}]}},
             {"composite": {"size": 2, "sources": [
                 {"h": {"histogram": {"field": "x", "interval": 2}}}]}}),
        )
        for strs, nums in pairs:
            self.assertEqual(self.aggs({"m": strs})["m"], self.aggs({"m": nums})["m"], strs)
        same = [p[0] for p in pairs]
        self.assertEqual(self.aggs({"m": same[0]})["m"]["buckets"],
                         [{"key": "GET", "doc_count": 3}])
        for typ, key in (("terms", "size"), ("terms", "shard_size"),
                         ("terms", "min_doc_count"),
                         ("cardinality", "precision_threshold"),
                         ("histogram", "interval")):
            body = {"field": "x" if typ == "histogram" else "kw", key: "ten"}
            if typ == "histogram":
                body["interval"] = "ten"
            self.err({"m": {typ: body}}, "x_content_parse_exception",
                     "[%s] failed to parse field [%s]" % (typ, key))
        self.err({"m": {"terms": {"field": "kw", "size": "-1"}}},
                 "illegal_argument_exception", "[size] must be between")

    # ---- terms ---------------------------------------------------------------

    def test_terms_keyword(self):
        a = self.aggs({"m": {"terms": {"field": "kw"}}})["m"]
        self.assertEqual(a, {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0,
                             "buckets": [{"key": "GET", "doc_count": 3},
                                         {"key": "POST", "doc_count": 1},
                                         {"key": "PUT", "doc_count": 1}]})
        a = self.aggs({"m": {"terms": {"field": "kw", "size": 1}}})["m"]
        self.assertEqual((a["buckets"], a["sum_other_doc_count"]),
                         ([{"key": "GET", "doc_count": 3}], 2))
        a = self.aggs({"m": {"terms": {"field": "kw", "order": {"_key": "desc"},
                                       "min_doc_count": 1}}})["m"]
        self.assertEqual([b["key"] for b in a["buckets"]], ["PUT", "POST", "GET"])
        a = self.aggs({"m": {"terms": {"field": "kw", "min_doc_count": 2}}})["m"]
        self.assertEqual(a["buckets"], [{"key": "GET", "doc_count": 3}])
        a = self.aggs({"m": {"terms": {"field": "kw", "missing": "NONE",
                                       "include": ["NONE", "PUT"]}}})["m"]
        self.assertEqual(a["buckets"], [{"key": "NONE", "doc_count": 1},
                                        {"key": "PUT", "doc_count": 1}])
        # min_doc_count 0: the values of the docs the query leaves out too,
        # count 0 (key order among equal counts), `missing` for docs
        # without one, include/exclude applied, under every parent bucket
        q = {"term": {"kw": "POST"}}
        a = self.aggs({"m": {"terms": {"field": "kw", "min_doc_count": 0}}}, query=q)["m"]
        self.assertEqual(a["buckets"], [{"key": "POST", "doc_count": 1},
                                        {"key": "GET", "doc_count": 0},
                                        {"key": "PUT", "doc_count": 0}])
        a = self.aggs({"m": {"terms": {"field": "n", "min_doc_count": 0, "exclude": [500],
                                       "order": {"_key": "desc"}}}}, query=q)["m"]
        self.assertEqual(a["buckets"], [{"key": 404, "doc_count": 1},
                                        {"key": 200, "doc_count": 0}])
        a = self.aggs({"m": {"terms": {"field": "kw", "min_doc_count": 0,
                                       "missing": "NONE", "include": ["NONE", "POST"]}}},
                      query=q)["m"]
        self.assertEqual(a["buckets"], [{"key": "POST", "doc_count": 1},
                                        {"key": "NONE", "doc_count": 0}])
        a = self.aggs({"f": {"terms": {"field": "flag"},
                             "aggs": {"m": {"terms": {"field": "kw", "min_doc_count": 0,
                                                      "size": 2}}}}}, query=q)["f"]
        self.assertEqual([(b["key_as_string"], b["m"]["buckets"]) for b in a["buckets"]],
                         [("true", [{"key": "POST", "doc_count": 1},
                                    {"key": "GET", "doc_count": 0}])])
        a = self.aggs({"m": {"terms": {"field": "kw", "min_doc_count": 0},
                             "aggs": {"s": {"sum": {"field": "n"}},
                                      "h": {"histogram": {"field": "n", "interval": 300,
                                                          "extended_bounds": {
                                                              "min": 0, "max": 600}}}}}},
                      query=q)["m"]
        self.assertEqual(a["buckets"][2], {"key": "PUT", "doc_count": 0, "s": {"value": 0.0},
                                           "h": {"buckets": [
                                               {"key": 0.0, "doc_count": 0},
                                               {"key": 300.0, "doc_count": 0},
                                               {"key": 600.0, "doc_count": 0}]}})
        a = self.aggs({"m": {"terms": {"field": "kw", "exclude": ["GET"]}}})["m"]
        self.assertEqual([b["key"] for b in a["buckets"]], ["POST", "PUT"])
        # a query narrows the docs; the page does not
        a = self.aggs({"m": {"terms": {"field": "kw"}}}, query={"range": {"n": {"gte": 300}}})
        self.assertEqual(a["m"]["buckets"], [{"key": "GET", "doc_count": 1},
                                             {"key": "POST", "doc_count": 1}])

    def test_terms_numeric_bool_date(self):
        a = self.aggs({"n": {"terms": {"field": "n"}},
                       "f": {"terms": {"field": "flag"}},
                       "d": {"terms": {"field": "t", "size": 1, "order": {"_key": "asc"}}},
                       "x": {"terms": {"field": "x", "size": 2, "order": {"_key": "asc"}}}})
        self.assertEqual(a["n"]["buckets"], [{"key": 200, "doc_count": 3},
                                             {"key": 404, "doc_count": 1},
                                             {"key": 500, "doc_count": 1}])
        self.assertEqual(a["f"]["buckets"],
                         [{"key": 1, "key_as_string": "true", "doc_count": 3},
                          {"key": 0, "key_as_string": "false", "doc_count": 2}])
        self.assertEqual(a["d"]["buckets"],
                         [{"key": T0 + 10 * 3600000,
                           "key_as_string": "2026-01-01T10:00:00.000Z", "doc_count": 1}])
        self.assertEqual(a["x"]["buckets"], [{"key": 0.5, "doc_count": 1},
                                             {"key": 1.5, "doc_count": 1}])
        self.assertEqual(a["x"]["sum_other_doc_count"], 3)

    def test_terms_order_by_metric(self):
        a = self.aggs({"m": {"terms": {"field": "kw", "order": [{"mx": "desc"}]},
                             "aggs": {"mx": {"max": {"field": "x"}}}},
                       "s": {"terms": {"field": "kw", "order": {"st.min": "asc"}},
                             "aggs": {"st": {"stats": {"field": "n"}}}}})
        self.assertEqual([(b["key"], b["mx"]["value"]) for b in a["m"]["buckets"]],
                         [("PUT", 8.0), ("POST", 4.0), ("GET", 2.5)])
        # PUT has no n: no value sorts last
        self.assertEqual([b["key"] for b in a["s"]["buckets"]], ["GET", "POST", "PUT"])
        self.err({"m": {"terms": {"field": "kw", "order": {"nope": "desc"}}}},
                 "illegal_argument_exception", "Invalid aggregation order path [nope]")

    # ---- metrics ----------------------------------------------------------------

    def test_metrics(self):
        a = self.aggs({"avg": {"avg": {"field": "n"}}, "sum": {"sum": {"field": "n"}},
                       "min": {"min": {"field": "x"}}, "max": {"max": {"field": "t"}},
                       "vc": {"value_count": {"field": "kw"}},
                       "st": {"stats": {"field": "x"}},
                       "mi": {"avg": {"field": "n", "missing": 0}},
                       "none": {"avg": {"field": "unmapped"}},
                       "nsum": {"sum": {"field": "unmapped"}}})
        self.assertEqual(a["avg"], {"value": 1504 / 5})
        self.assertEqual(a["sum"], {"value": 1504.0})
        self.assertEqual(a["min"], {"value": 0.5})
        self.assertEqual(a["max"], {"value": float(T0 + 73 * DAY),
                                    "value_as_string": "2026-03-15T00:00:00.000Z"})
        self.assertEqual(a["vc"], {"value": 5})
        self.assertEqual(a["st"], {"count": 5, "min": 0.5, "max": 8.0, "avg": 3.3,
                                   "sum": 16.5})
        self.assertEqual(a["mi"], {"value": 1504 / 6})
        self.assertEqual(a["none"], {"value": None})
        self.assertEqual(a["nsum"], {"value": 0.0})

    def test_extended_stats(self):
        a = self.aggs({"e": {"extended_stats": {"field": "x", "sigma": 1}}})["e"]
        xs = [1.5, 2.5, 4.0, 8.0, 0.5]
        n, s, sq = len(xs), sum(xs), sum(v * v for v in xs)
        var = (sq - s * s / n) / n
        vs = (sq - s * s / n) / (n - 1)
        self.assertEqual(a["count"], 5)
        self.assertAlmostEqual(a["sum_of_squares"], sq)
        self.assertAlmostEqual(a["variance"], var)
        self.assertAlmostEqual(a["variance_sampling"], vs)
        self.assertAlmostEqual(a["std_deviation"], var ** 0.5)
        self.assertAlmostEqual(a["std_deviation_bounds"]["upper"], s / n + var ** 0.5)
        self.assertAlmostEqual(a["std_deviation_bounds"]["lower_sampling"],
                               s / n - vs ** 0.5)
        e = self.aggs({"e": {"extended_stats": {"field": "unmapped"}}})["e"]
        self.assertEqual((e["count"], e["avg"], e["variance"], e["sum"]), (0, None, None, 0.0))

    def test_cardinality_percentiles(self):
        a = self.aggs({"c": {"cardinality": {"field": "kw"}},
                       "cn": {"cardinality": {"field": "n", "precision_threshold": 100}},
                       "cm": {"cardinality": {"field": "kw", "missing": "NONE"}},
                       "p": {"percentiles": {"field": "n"}},
                       "p2": {"percentiles": {"field": "x", "percents": [50, 0, 100],
                                              "keyed": False,
                                              "tdigest": {"compression": 200}}},
                       "pr": {"percentile_ranks": {"field": "n", "values": [200, 1000]}},
                       "pe": {"percentiles": {"field": "unmapped", "percents": [50]}},
                       "pd": {"percentiles": {"field": "t", "percents": [0]}},
                       # a percent as a numeric string (Grafana's editor)
                       "ps": {"percentiles": {"field": "n", "percents": ["99", 50]}}})
        self.assertEqual(a["c"], {"value": 3})
        self.assertEqual(a["cn"], {"value": 3})
        self.assertEqual(a["cm"], {"value": 4})
        self.assertEqual(list(a["p"]["values"]),
                         ["1.0", "5.0", "25.0", "50.0", "75.0", "95.0", "99.0"])
        # n: 200, 200, 200, 404, 500: exact below the digest's switch
        self.assertEqual(a["p"]["values"]["50.0"], 200.0)
        self.assertEqual(a["p2"]["values"], [{"key": 0.0, "value": 0.5},
                                             {"key": 50.0, "value": 2.5},
                                             {"key": 100.0, "value": 8.0}])
        self.assertEqual(list(a["pr"]["values"]), ["200.0", "1000.0"])
        self.assertEqual(a["pr"]["values"]["1000.0"], 100.0)
        self.assertEqual(a["pe"], {"values": {"50.0": None}})
        self.assertEqual(a["pd"]["values"]["0.0_as_string"], "2026-01-01T10:00:00.000Z")
        self.assertEqual(list(a["ps"]["values"]), ["50.0", "99.0"])
        self.assertEqual(a["ps"]["values"]["50.0"], 200.0)
        # ordered by cardinality, typed
        st, out, _ = self.req("POST", "/a/_search?typed_keys", {"size": 0, "aggs": {
            "k": {"terms": {"field": "kw", "order": {"u": "desc"}},
                  "aggs": {"u": {"cardinality": {"field": "n"}},
                           "q": {"percentiles": {"field": "n", "percents": [50]}}}}}})
        self.assertEqual(st, 200, out)
        b = out["aggregations"]["sterms#k"]["buckets"][0]
        self.assertEqual((b["key"], b["cardinality#u"]["value"]), ("GET", 2))
        self.assertIn("tdigest_percentiles#q", b)
        self.err({"p": {"percentiles": {"field": "n", "hdr": {}}}},
                 "illegal_argument_exception", "[hdr] is not supported")
        self.err({"p": {"percentile_ranks": {"field": "n"}}},
                 "illegal_argument_exception", "[values]")
        self.err({"p": {"percentiles": {"field": "n", "percents": [101]}}},
                 "illegal_argument_exception", "percent must be in [0,100]")
        self.err({"p": {"percentiles": {"field": "n", "percents": ["101"]}}},
                 "illegal_argument_exception", "percent must be in [0,100], got [101]")
        for bad in ("5O", True):
            out = self.err({"p": {"percentiles": {"field": "n", "percents": [bad]}}},
                           "search_phase_execution_exception", "all shards failed")
            self.assertEqual(out["error"]["root_cause"][0]["type"], "number_format_exception")
            self.assertIn("For input string", out["error"]["root_cause"][0]["reason"])
        self.err({"m": {"terms": {"field": "kw", "order": {"q": "desc"}},
                        "aggs": {"q": {"percentiles": {"field": "n"}}}}},
                 "illegal_argument_exception", "Invalid aggregation order path")

    # ---- parent pipelines ---------------------------------------------------------

    def test_execution_hints(self):
        # how to collect, not what: the names Elasticsearch knows are
        # taken (same answer), others refused
        want = self.aggs({"m": {"terms": {"field": "kw"}}})["m"]
        for hint in ("map", "global_ordinals"):
            self.assertEqual(self.aggs({"m": {"terms": {"field": "kw", "execution_hint": hint,
                                                        "collect_mode": "breadth_first"}}})["m"],
                             want)
        self.assertIn("value", self.aggs({"c": {"cardinality": {
            "field": "kw", "execution_hint": "direct"}}})["c"])
        for agg in ({"terms": {"field": "kw", "execution_hint": "bogus"}},
                    {"terms": {"field": "kw", "collect_mode": "bogus"}},
                    {"cardinality": {"field": "kw", "execution_hint": "map"}}):
            st, out, _ = self.req("POST", "/a/_search", {"size": 0, "aggs": {"m": agg}})
            self.assertEqual(st, 400, (agg, out))

    def test_derivative_cumulative_sum(self):
        # histogram of x by 2: buckets 0 (1.5, 0.5), 2 (2.5), 4 (4.0), 6 (none), 8 (8.0)
        def run(**pipes):
            return self.aggs({"h": {"histogram": {"field": "x", "interval": 2},
                                    "aggs": dict({"s": {"sum": {"field": "x"}},
                                                  "a": {"avg": {"field": "x"}},
                                                  "st": {"stats": {"field": "x"}}},
                                                 **pipes)}})["h"]["buckets"]

        def col(buckets, name):
            return [b[name]["value"] if name in b else "absent" for b in buckets]
        b = run(d={"derivative": {"buckets_path": "s"}},
                z={"derivative": {"buckets_path": "s", "gap_policy": "insert_zeros"}},
                k={"derivative": {"buckets_path": "a", "gap_policy": "keep_values"}},
                c={"cumulative_sum": {"buckets_path": "s"}},
                cc={"cumulative_sum": {"buckets_path": "_count"}},
                cm={"cumulative_sum": {"buckets_path": "st.max"}},
                s1={"serial_diff": {"buckets_path": "s"}},
                s2={"serial_diff": {"buckets_path": "s", "lag": 2}},
                sz={"serial_diff": {"buckets_path": "s", "lag": "1",
                                    "gap_policy": "insert_zeros"}},
                m1={"moving_fn": {"buckets_path": "s", "window": 2,
                                  "script": "MovingFunctions.unweightedAvg(values)"}},
                m2={"moving_fn": {"buckets_path": "s", "window": "2", "shift": 1,
                                  "script": {"source": "MovingFunctions.max(values)"}}},
                m3={"moving_fn": {"buckets_path": "s", "window": 3,
                                  "script": "MovingFunctions.sum(values)"}},
                m4={"moving_fn": {"buckets_path": "s", "window": 3,
                                  "script": "MovingFunctions.linearWeightedAvg(values)"}},
                m5={"moving_fn": {"buckets_path": "s", "window": 2, "script":
                                  "MovingFunctions.stdDev(values, "
                                  "MovingFunctions.unweightedAvg(values))"}},
                m6={"moving_fn": {"buckets_path": "s", "window": 2,
                                  "script": {"inline": "MovingFunctions.min(values);",
                                             "lang": "painless"}}})
        self.assertEqual([x["key"] for x in b], [0.0, 2.0, 4.0, 6.0, 8.0])
        self.assertEqual(col(b, "d"), ["absent", 0.5, 1.5, None, None])
        self.assertEqual(col(b, "z"), ["absent", 0.5, 1.5, -4.0, 8.0])
        self.assertEqual(col(b, "k"), ["absent", 1.5, 1.5, None, None])
        self.assertEqual(col(b, "c"), [2.0, 4.5, 8.5, 8.5, 16.5])
        self.assertEqual(col(b, "cc"), [2.0, 3.0, 4.0, 4.0, 5.0])
        self.assertEqual(col(b, "cm"), [1.5, 4.0, 8.0, 8.0, 16.0])
        # serial_diff: no entry until `lag` buckets back has a value too
        self.assertEqual(col(b, "s1"), ["absent", 0.5, 1.5, "absent", "absent"])
        self.assertEqual(col(b, "s2"), ["absent", "absent", 2.0, "absent", 4.0])
        self.assertEqual(col(b, "sz"), ["absent", 0.5, 1.5, -4.0, 8.0])
        # moving_fn over the values there are (2.0, 2.5, 4.0, 8.0): the
        # window before each, shifted; the empty bucket has no entry
        self.assertEqual(col(b, "m1"), [None, 2.0, 2.25, "absent", 3.25])
        self.assertEqual(col(b, "m2"), [2.0, 2.5, 4.0, "absent", 8.0])
        self.assertEqual(col(b, "m3"), [0.0, 2.0, 4.5, "absent", 8.5])
        self.assertEqual(col(b, "m4")[4], (2.0 + 2.5 * 2 + 4.0 * 3) / 6)
        self.assertEqual(col(b, "m5")[2], 0.25)
        self.assertEqual(col(b, "m6"), [None, 2.0, 2.0, "absent", 2.5])
        # a unit: the value per unit of the keys' distance
        bounds = {"min": T0, "max": T0 + 2 * DAY}
        a = self.aggs({"h": {"date_histogram": {"field": "t", "fixed_interval": "1d",
                                                 "extended_bounds": bounds},
                             "aggs": {"d": {"derivative": {"buckets_path": "_count",
                                                           "unit": "1h",
                                                           "gap_policy": "insert_zeros"}},
                                      "n": {"derivative": {"buckets_path": "_count",
                                                           "unit": "hour"}}}}})
        b = a["h"]["buckets"]
        self.assertNotIn("d", b[0])
        self.assertEqual(b[1]["d"], {"value": -2.0, "normalized_value": -2.0 / 24})
        self.assertEqual(b[2]["d"], {"value": 1.0, "normalized_value": 1.0 / 24})
        # skip changes nothing on `_count`: a doc count has no gaps
        # (BucketHelpers.resolveBucketValue), Jan 2 counts 0
        self.assertEqual([x.get("n") for x in b[:3]], [
            None, {"value": -2.0, "normalized_value": -2.0 / 24},
            {"value": 1.0, "normalized_value": 1.0 / 24}])

    def test_rate(self):
        # per day: Jan 1 (n 200, 200), Jan 2 (none), Jan 3 (404)
        a = self.aggs({"h": {"date_histogram": {"field": "t", "fixed_interval": "1d",
                                                 "extended_bounds": {"min": T0,
                                                                     "max": T0 + 2 * DAY}},
                             "aggs": {"s": {"rate": {"field": "n", "unit": "hour"}},
                                      "c": {"rate": {"field": "n", "unit": "1d",
                                                     "mode": "value_count"}},
                                      "d": {"rate": {"unit": "week"}},
                                      "b": {"rate": {"field": "n"}}}}})
        got = [(b["s"]["value"], b["c"]["value"], b["d"]["value"], b["b"]["value"])
               for b in a["h"]["buckets"][:3]]
        self.assertEqual(got, [(400 / 24, 2.0, 14.0, 400.0), (0.0, 0.0, 0.0, 0.0),
                               (404 / 24, 1.0, 7.0, 404.0)])
        def daily(rate, interval=("fixed_interval", "1d")):
            return {"m": {"date_histogram": dict([interval], field="t"),
                          "aggs": {"r": {"rate": rate}}}}
        for aggs, part in (
                ({"m": {"terms": {"field": "kw"}, "aggs": {"r": {"rate": {"unit": "day"}}}}},
                 "The rate aggregation can only be used inside a date histogram"),
                (daily({"unit": "day"}, ("calendar_interval", "month")),
                 "calendar_interval of a month or more is not supported"),
                (daily({"unit": "month"}), "[rate] unit [month] of [r] is not supported"),
                (daily({"unit": "5m"}), "Unsupported unit [5m]"),
                (daily({"mode": "sum"}), "The mode parameter is only supported with field")):
            out = self.aggs(aggs, status=400)
            self.assertIn(part, out["error"]["root_cause"][0]["reason"])

    def test_pipeline_errors(self):
        def under_h(pipe):
            return {"h": {"histogram": {"field": "x", "interval": 2}, "aggs": {"d": pipe}}}
        for aggs, etype, part in (
                ({"d": {"derivative": {"buckets_path": "_count"}}},
                 "action_request_validation_exception",
                 "derivative aggregation [d] must have a histogram, date_histogram"),
                ({"h": {"histogram": {"field": "x", "interval": 2, "min_doc_count": 1},
                        "aggs": {"d": {"cumulative_sum": {"buckets_path": "_count"}}}}},
                 "action_request_validation_exception",
                 "parent histogram of cumulative_sum aggregation [d] must have "
                 "min_doc_count of 0"),
                (under_h({"derivative": {"buckets_path": "nope"}}),
                 "illegal_argument_exception", "No aggregation found for path [nope]"),
                ({"h": {"histogram": {"field": "x", "interval": 2},
                        "aggs": {"p": {"percentiles": {"field": "x"}},
                                 "d": {"derivative": {"buckets_path": "p"}}}}},
                 "illegal_argument_exception", "buckets_path must reference"),
                (under_h({"cumulative_sum": {"buckets_path": "_count",
                                              "gap_policy": "skip"}}),
                 "x_content_parse_exception", "[cumulative_sum] unknown field [gap_policy]"),
                (under_h({"derivative": {"buckets_path": "_count", "gap_policy": "bogus"}}),
                 "illegal_argument_exception", "Unknown gap policy [bogus]"),
                (under_h({"serial_diff": {"buckets_path": "_count", "lag": 0}}),
                 "illegal_argument_exception", "[lag] must be a positive integer"),
                (under_h({"moving_fn": {"buckets_path": "_count", "window": 2,
                                         "script": "params.x * 2"}}),
                 "illegal_argument_exception", "script [params.x * 2] of [d] is not supported"),
                (under_h({"moving_fn": {"buckets_path": "_count",
                                         "script": "MovingFunctions.max(values)"}}),
                 "illegal_argument_exception", "needs a [script] and a [window]"),
                (under_h({"derivative": {}}),
                 "illegal_argument_exception", "[buckets_path] must be set"),
                (under_h({"derivative": {"buckets_path": "_count"},
                          "aggs": {"s": {"sum": {"field": "x"}}}}),
                 "parsing_exception", "cannot accept sub-aggregations")):
            out = self.aggs(aggs, status=400)
            self.assertEqual(out["error"]["root_cause"][0]["type"], etype, out)
            self.assertIn(part, out["error"]["root_cause"][0]["reason"])

    # ---- date_histogram -----------------------------------------------------------

    def test_date_histogram_terms_on_interval_edges(self):
        """A date_histogram with a terms of an integer field below, over
        docs in time order half of which fall exactly on an interval's
        start: each joins the interval it starts, never the one before
        (the collector counts runs of one interval in a loop of its
        own)."""
        st, body, _ = self.srv.request("PUT", "/edges", {"mappings": {"properties": {
            "t": {"type": "date"}, "st": {"type": "integer"}}}})
        self.assertEqual(st, 200, body)
        lines, want = [], {}
        for i in range(40):  # every 30 minutes from T0; st 200..202
            t, code = T0 + i * 1800000, 200 + i % 3
            lines.append(json.dumps({"index": {}}))
            lines.append(json.dumps({"t": t, "st": code}))
            hour = want.setdefault(t - t % 3600000, {})
            hour[code] = hour.get(code, 0) + 1
        st, body, _ = self.srv.request("POST", "/edges/_bulk?refresh=true",
                                       "\n".join(lines) + "\n",
                                       {"Content-Type": "application/x-ndjson"})
        self.assertTrue(st == 200 and not body["errors"], body)
        out = self.aggs({"h": {"date_histogram": {"field": "t", "fixed_interval": "1h"},
                               "aggs": {"s": {"terms": {"field": "st"}}}}},
                        index="edges")
        got = {b["key"]: {s["key"]: s["doc_count"] for s in b["s"]["buckets"]}
               for b in out["h"]["buckets"]}
        self.assertEqual(got, want)

    def test_disjunction_of_terms_feeding_aggregations(self):
        """A match of several terms whose docs only feed aggregations
        (size 0, no scores): the count and the metrics are over the docs
        any term matches, deleted docs left out (the terms' postings are
        gathered into a bitset of the segment's docs)."""
        st, body, _ = self.srv.request("PUT", "/disj", {"mappings": {"properties": {
            "msg": {"type": "text"}, "n": {"type": "long"}}}})
        self.assertEqual(st, 200, body)
        lines = []
        for i in range(300):
            words = ["alpha"] * (i % 3 == 0) + ["beta"] * (i % 5 == 0) or ["gamma"]
            lines.append(json.dumps({"index": {"_id": str(i)}}))
            lines.append(json.dumps({"msg": " ".join(words), "n": i}))
        st, body, _ = self.srv.request("POST", "/disj/_bulk?refresh=true",
                                       "\n".join(lines) + "\n",
                                       {"Content-Type": "application/x-ndjson"})
        self.assertTrue(st == 200 and not body["errors"], body)

        def check(want):
            st, out, _ = self.req("POST", "/disj/_search", {
                "size": 0, "track_total_hits": True,
                "query": {"match": {"msg": "alpha beta"}},
                "aggs": {"a": {"avg": {"field": "n"}}, "s": {"sum": {"field": "n"}},
                         "c": {"value_count": {"field": "n"}}}})
            self.assertEqual(st, 200, out)
            self.assertEqual(out["hits"]["total"], {"value": len(want), "relation": "eq"})
            self.assertEqual(out["aggregations"]["c"]["value"], len(want))
            self.assertEqual(out["aggregations"]["s"]["value"], float(sum(want)))
            self.assertAlmostEqual(out["aggregations"]["a"]["value"],
                                   sum(want) / len(want))
        check([i for i in range(300) if i % 3 == 0 or i % 5 == 0])
        for i in range(0, 300, 7):
            st, body, _ = self.srv.request("DELETE", "/disj/_doc/%d" % i)
            self.assertEqual(st, 200, body)
        st, body, _ = self.srv.request("POST", "/disj/_refresh")
        self.assertEqual(st, 200, body)
        check([i for i in range(300) if (i % 3 == 0 or i % 5 == 0) and i % 7])

    def test_date_histogram_calendar(self):
        a = self.aggs({"m": {"date_histogram": {"field": "t", "calendar_interval": "month"}}})
        self.assertEqual(a["m"]["buckets"], [
            {"key_as_string": "2026-01-01T00:00:00.000Z", "key": T0, "doc_count": 4},
            {"key_as_string": "2026-02-01T00:00:00.000Z", "key": T0 + 31 * DAY,
             "doc_count": 1},
            {"key_as_string": "2026-03-01T00:00:00.000Z", "key": T0 + 59 * DAY,
             "doc_count": 1}])
        # a day in +05:00: 2026-01-01T23:30Z is already the 2nd there
        a = self.aggs({"m": {"date_histogram": {
            "field": "t", "calendar_interval": "1d", "time_zone": "+05:00",
            "min_doc_count": 1, "format": "yyyy-MM-dd"}}})
        b = a["m"]["buckets"]
        self.assertEqual([(x["key_as_string"], x["doc_count"]) for x in b[:3]],
                         [("2026-01-01", 1), ("2026-01-02", 1), ("2026-01-03", 1)])
        self.assertEqual(b[0]["key"], T0 - 5 * 3600000)
        # min_doc_count 0 (the default) fills the days between
        a = self.aggs({"m": {"date_histogram": {"field": "t", "calendar_interval": "day"}}})
        self.assertEqual(len(a["m"]["buckets"]), 74)
        self.assertEqual(sum(x["doc_count"] for x in a["m"]["buckets"]), 6)
        # weeks start on Monday (2025-12-29)
        a = self.aggs({"m": {"date_histogram": {"field": "t", "calendar_interval": "week",
                                                "min_doc_count": 1}}})
        self.assertEqual(a["m"]["buckets"][0]["key_as_string"], "2025-12-29T00:00:00.000Z")
        a = self.aggs({"m": {"date_histogram": {"field": "t", "calendar_interval": "quarter"}},
                       "y": {"date_histogram": {"field": "t", "calendar_interval": "1y"}}})
        self.assertEqual([x["doc_count"] for x in a["m"]["buckets"]], [6])
        self.assertEqual(a["y"]["buckets"][0]["key"], T0)

    def test_date_histogram_fixed_bounds(self):
        a = self.aggs({"m": {"date_histogram": {
            "field": "t", "fixed_interval": "12h", "offset": "+6h", "min_doc_count": 1}}})
        keys = [(x["key"] - T0) / 3600000 for x in a["m"]["buckets"]]
        self.assertEqual(keys[:3], [6, 18, 42])
        a = self.aggs({"m": {"date_histogram": {
            "field": "t", "calendar_interval": "month", "min_doc_count": 0,
            "extended_bounds": {"min": "2025-11-15", "max": "2026-04-01"}}}})
        self.assertEqual([x["key_as_string"][:7] for x in a["m"]["buckets"]],
                         ["2025-11", "2025-12", "2026-01", "2026-02", "2026-03", "2026-04"])
        a = self.aggs({"m": {"date_histogram": {
            "field": "t", "calendar_interval": "month",
            "hard_bounds": {"min": "2026-02-01", "max": "2026-12-31"}}}})
        self.assertEqual([x["doc_count"] for x in a["m"]["buckets"]], [1, 1])
        a = self.aggs({"m": {"date_histogram": {
            "field": "t", "calendar_interval": "month", "keyed": True,
            "format": "yyyy-MM", "order": {"_count": "desc"}}}})
        self.assertEqual(list(a["m"]["buckets"]), ["2026-01", "2026-02", "2026-03"])
        self.assertEqual(a["m"]["buckets"]["2026-01"]["doc_count"], 4)
        self.err({"m": {"date_histogram": {"field": "t", "interval": "1d"}}},
                 "x_content_parse_exception", "unknown field [interval]")
        self.err({"m": {"date_histogram": {"field": "t", "calendar_interval": "2d"}}},
                 "illegal_argument_exception", "calendar interval")
        self.err({"m": {"date_histogram": {"field": "t", "fixed_interval": "1M"}}},
                 "illegal_argument_exception", "fixedInterval")
        self.err({"m": {"date_histogram": {"field": "t", "calendar_interval": "day",
                                           "time_zone": "Europe/Pariss"}}},
                 "illegal_argument_exception", "Unknown time-zone ID: Europe/Pariss")

    def test_max_buckets(self):
        # 74 days at 1 ms: far past search.max_buckets, refused, not allocated
        self.err({"m": {"date_histogram": {"field": "t", "fixed_interval": "1ms"}}},
                 "too_many_buckets_exception", "[65536]")
        self.err({"m": {"histogram": {"field": "n", "interval": 0.001}}},
                 "too_many_buckets_exception", "search.max_buckets")

    # ---- histogram, range, filters, missing ---------------------------------------------

    def test_histogram(self):
        a = self.aggs({"h": {"histogram": {"field": "n", "interval": 100, "min_doc_count": 1}},
                       "z": {"histogram": {"field": "x", "interval": 2, "offset": 1,
                                           "extended_bounds": {"min": -3, "max": 10}}}})
        self.assertEqual(a["h"]["buckets"], [{"key": 200.0, "doc_count": 3},
                                             {"key": 400.0, "doc_count": 1},
                                             {"key": 500.0, "doc_count": 1}])
        self.assertEqual([(b["key"], b["doc_count"]) for b in a["z"]["buckets"]],
                         [(-3.0, 0), (-1.0, 1), (1.0, 2), (3.0, 1), (5.0, 0), (7.0, 1),
                          (9.0, 0)])

    def test_range_and_date_range(self):
        a = self.aggs({"r": {"range": {"field": "n", "ranges": [
            {"from": 300}, {"to": 300, "key": "low"}, {"from": 200, "to": 404}]}},
            "k": {"range": {"field": "n", "keyed": True, "ranges": [{"to": 250}]}}})
        self.assertEqual(a["r"]["buckets"], [
            {"key": "low", "to": 300.0, "doc_count": 3},
            {"key": "200.0-404.0", "from": 200.0, "to": 404.0, "doc_count": 3},
            {"key": "300.0-*", "from": 300.0, "doc_count": 2}])
        self.assertEqual(a["k"]["buckets"], {"*-250.0": {"to": 250.0, "doc_count": 3}})
        a = self.aggs({"d": {"date_range": {"field": "t", "format": "yyyy-MM-dd", "ranges": [
            {"from": "2026-01-01", "to": "2026-01-01||+1M"}, {"from": "now"}]}}})
        b = a["d"]["buckets"]
        self.assertEqual(b[0], {"key": "2026-01-01-2026-02-01", "from": float(T0),
                                "from_as_string": "2026-01-01", "to": float(T0 + 31 * DAY),
                                "to_as_string": "2026-02-01", "doc_count": 4})
        self.assertEqual(b[1]["doc_count"], 0)

    def test_filter_filters_missing(self):
        a = self.aggs({"f": {"filter": {"term": {"kw": "GET"}},
                             "aggs": {"s": {"sum": {"field": "n"}}}},
                       "fs": {"filters": {"filters": {"z": {"term": {"flag": True}},
                                                      "a": {"exists": {"field": "x"}}},
                                          "other_bucket_key": "rest"}},
                       "an": {"filters": {"filters": [{"term": {"kw": "PUT"}},
                                                      {"match_all": {}}],
                                          "other_bucket": True}},
                       "mi": {"missing": {"field": "kw"},
                              "aggs": {"x": {"max": {"field": "x"}}}}})
        self.assertEqual(a["f"], {"doc_count": 3, "s": {"value": 900.0}})
        self.assertEqual(a["fs"]["buckets"], {"a": {"doc_count": 5}, "z": {"doc_count": 3},
                                              "rest": {"doc_count": 0}})
        self.assertEqual(list(a["fs"]["buckets"]), ["a", "z", "rest"])
        self.assertEqual(a["an"]["buckets"], [{"doc_count": 1}, {"doc_count": 6},
                                              {"doc_count": 0}])
        self.assertEqual(a["mi"], {"doc_count": 1, "x": {"value": 0.5}})

    def test_nested_and_typed_keys(self):
        st, out, raw = self.req("POST", "/a/_search?typed_keys=true", {"size": 0, "aggs": {
            "d": {"date_histogram": {"field": "t", "calendar_interval": "month"},
                  "aggs": {"k": {"terms": {"field": "kw"},
                                 "aggs": {"n": {"avg": {"field": "n"}}}}}},
            "x": {"terms": {"field": "x"}}, "r": {"range": {"field": "n", "ranges": [{"to": 1}]}}}})
        self.assertEqual(st, 200, out)
        a = out["aggregations"]
        self.assertEqual(sorted(a), ["date_histogram#d", "dterms#x", "range#r"])
        jan = a["date_histogram#d"]["buckets"][0]
        self.assertEqual(jan["sterms#k"]["buckets"][0],
                         {"key": "GET", "doc_count": 3, "avg#n": {"value": 300.0}})
        # the answer's members in Elasticsearch's order
        self.assertEqual(list(json.loads(raw)), ["took", "timed_out", "_shards", "hits",
                                                 "aggregations"])

    def test_every_match_counts(self):
        # the page, track_total_hits and size do not limit the docs aggregated
        for extra in ({"size": 1}, {"size": 0, "track_total_hits": False},
                      {"size": 2, "sort": [{"n": "desc"}], "track_total_hits": 1}):
            body = {"aggs": {"c": {"value_count": {"field": "t"}}}}
            body.update(extra)
            st, out, _ = self.req("POST", "/a/_search", body)
            self.assertEqual(st, 200, out)
            self.assertEqual(out["aggregations"]["c"]["value"], 6, extra)
            self.assertEqual(len(out["hits"]["hits"]), extra["size"])

    def test_msearch(self):
        body = "\n".join(json.dumps(x) for x in (
            {"index": "a"}, {"size": 0, "aggs": {"k": {"terms": {"field": "kw", "size": 1}}}},
            {"index": "a"}, {"size": 0, "aggs": {"k": {"nope": {}}}})) + "\n"
        st, out, _ = self.req("POST", "/_msearch", body,
                              {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 200, out)
        r = out["responses"]
        self.assertEqual(r[0]["aggregations"]["k"]["buckets"], [{"key": "GET", "doc_count": 3}])
        self.assertEqual(r[1]["error"]["type"], "parsing_exception")

    # ---- errors --------------------------------------------------------------------

    def test_errors(self):
        self.err({"m": {"nope": {"field": "kw"}}}, "parsing_exception",
                 "Unknown aggregation type [nope]")
        out = self.err({"m": {"terms": {"field": "msg"}}}, "illegal_argument_exception",
                       "Text fields are not optimised for operations that require "
                       "per-document field data like aggregations and sorting")
        self.assertIn("fielddata=true on [msg]", out["error"]["reason"])
        self.err({"m": {"terms": {"field": "kw", "bogus": 1}}},
                 "x_content_parse_exception", "[terms] unknown field [bogus]")
        self.err({"m": {"terms": {"field": "kw", "include": "G.*"}}},
                 "illegal_argument_exception", "regular expression")
        self.err({"m": {"terms": {"field": "kw", "shard_min_doc_count": 2}}},
                 "illegal_argument_exception", "[shard_min_doc_count] is not supported")
        self.err({"m": {"avg": {"field": "kw"}}}, "illegal_argument_exception",
                 "[keyword] is not supported for aggregation [avg]")
        self.err({"m": {"avg": {"field": "n"}, "aggs": {"s": {"sum": {"field": "n"}}}}},
                 "parsing_exception", "cannot accept sub-aggregations")
        self.err({"m": {"terms": {"field": "kw"}, "avg": {"field": "n"}}},
                 "parsing_exception", "Found two aggregation type definitions")
        self.err({"m": {"rare_terms": {"field": "kw"}}}, "illegal_argument_exception",
                 "not supported by fieldstore yet")
        self.err({"m": {"top_metrics": {"size": 1}}}, "illegal_argument_exception",
                 "Required [metrics]")
        self.err({"m": {"composite": {"sources": [{"a": {"terms": {
            "field": "kw", "missing_bucket": True}}}]}}},
            "illegal_argument_exception", "[missing_bucket] is not supported")
        self.err({"m": {"composite": {"sources": []}}}, "illegal_argument_exception",
                 "[sources] cannot be null or empty")
        self.err({"m": {"terms": {"field": "kw"}, "meta": {"a": 1}}},
                 "illegal_argument_exception", "[meta]")
        self.err({"a>b": {"terms": {"field": "kw"}}}, "parsing_exception",
                 "Invalid aggregation name [a>b]")

    def test_multi_valued(self):
        st, _, _ = self.req("PUT", "/mv/_doc/1?refresh=true",
                            {"k": ["a", "b"], "n": [1, 2], "one": 3, "s": "z"})
        self.assertIn(st, (200, 201))
        for agg in ({"terms": {"field": "k.keyword"}}, {"sum": {"field": "n"}},
                    {"histogram": {"field": "n", "interval": 1}}):
            self.err({"m": agg}, "illegal_argument_exception",
                     "does not support multi-valued fields", index="mv")
        a = self.aggs({"m": {"sum": {"field": "one"}}, "k": {"terms": {"field": "s.keyword"}}},
                      index="mv")
        self.assertEqual(a["m"], {"value": 3.0})
        # a merge keeps the mark of the segment it came from
        st, _, _ = self.req("PUT", "/mv/_doc/2?refresh=true", {"n": 5, "one": 4})
        self.assertIn(st, (200, 201))
        st, out, _ = self.req("POST", "/mv/_forcemerge?max_num_segments=1")
        self.assertEqual(st, 200, out)
        self.err({"m": {"sum": {"field": "n"}}}, "illegal_argument_exception",
                 "does not support multi-valued fields", index="mv")
        self.assertEqual(self.aggs({"m": {"sum": {"field": "one"}}}, index="mv")["m"],
                         {"value": 7.0})


class MixedIndices(ServerTestCase):
    """terms over indices where the field has another type, or none."""

    def test_mixed_and_unmapped(self):
        for name, props, doc in (("u-1", {"other": {"type": "long"}}, {"other": 1}),
                                 ("u-2", {"f": {"type": "keyword"}}, {"f": "x"}),
                                 ("v-1", {"f": {"type": "long"}}, {"f": 7})):
            st, body, _ = self.req("PUT", "/" + name, {"mappings": {"properties": props}})
            self.assertEqual(st, 200, body)
            st, body, _ = self.req("PUT", "/%s/_doc/1?refresh=true" % name, doc)
            self.assertIn(st, (200, 201), body)
        # unmapped in the first index: the keys are the second's strings
        st, out, _ = self.req("POST", "/u-*/_search?typed_keys", {"size": 0, "aggs": {
            "t": {"terms": {"field": "f"}}}})
        self.assertEqual(st, 200, out)
        self.assertEqual(out["aggregations"]["sterms#t"]["buckets"],
                         [{"key": "x", "doc_count": 1}])
        st, out, _ = self.req("POST", "/u-2,v-1/_search", {"size": 0, "aggs": {
            "t": {"terms": {"field": "f"}}}})
        self.assertEqual(st, 400, out)
        self.assertEqual(out["error"]["type"], "illegal_argument_exception")
        self.assertIn("two different types", out["error"]["reason"])
        self.check_unmapped_missing()

    def search(self, path, aggs, status=200):
        st, out, _ = self.req("POST", path, {"size": 0, "aggs": aggs})
        self.assertEqual(st, status, out)
        return out if status != 200 else out["aggregations"]

    def check_unmapped_missing(self):
        """`missing` on a field one index does not map: each of that index's
        docs has the missing value, read as the aggregation's default type
        (Elasticsearch's ValuesSourceConfig unmapped field case) -- Grafana's
        logs volume splits by a level field with `missing: "unknown"` over
        indices that may lack it; without `missing`, empty answers."""
        # u-1 lacks f, u-2 maps it as keyword
        a = self.search("/u-*/_search", {
            "t": {"terms": {"field": "f", "missing": "unknown", "min_doc_count": 0}},
            "m": {"missing": {"field": "f"}},
            "c": {"cardinality": {"field": "f", "missing": "unknown"}},
            "vc": {"value_count": {"field": "f", "missing": "unknown"}}})
        self.assertEqual(a["t"]["buckets"], [{"key": "unknown", "doc_count": 1},
                                             {"key": "x", "doc_count": 1}])
        self.assertEqual((a["m"]["doc_count"], a["c"]["value"], a["vc"]["value"]),
                         (1, 2, 2))
        # one index, the field unmapped: every doc has the missing value
        a = self.search("/u-1/_search", {
            "t": {"terms": {"field": "f", "missing": "unknown"}},
            "n": {"terms": {"field": "f", "missing": 5}},
            "avg": {"avg": {"field": "f", "missing": 4}},
            "h": {"histogram": {"field": "f", "interval": 10, "missing": 15}},
            "d": {"date_histogram": {"field": "f", "calendar_interval": "1d",
                                     "missing": "2026-01-02T03:00:00Z"}},
            "r": {"range": {"field": "f", "missing": 5, "ranges": [{"to": 5}, {"from": 5}]}},
            "m": {"missing": {"field": "f"}}})
        self.assertEqual(a["t"]["buckets"], [{"key": "unknown", "doc_count": 1}])
        self.assertEqual(a["n"]["buckets"], [{"key": "5", "doc_count": 1}])  # keyword
        self.assertEqual(a["avg"], {"value": 4.0})
        self.assertEqual(a["h"]["buckets"], [{"key": 10.0, "doc_count": 1}])
        self.assertEqual(a["d"]["buckets"], [{"key_as_string": "2026-01-02T00:00:00.000Z",
                                              "key": 1767312000000, "doc_count": 1}])
        self.assertEqual([b["doc_count"] for b in a["r"]["buckets"]], [0, 1])
        self.assertEqual(a["m"], {"doc_count": 1})
        # without `missing`: empty buckets and null metrics, no failure
        for path in ("/u-1/_search", "/u-*,v-1/_search"):
            st, out, _ = self.req("POST", path, {"size": 0, "aggs": {
                "t": {"terms": {"field": "nope"}}, "avg": {"avg": {"field": "nope"}},
                "h": {"histogram": {"field": "nope", "interval": 1}},
                "p": {"percentiles": {"field": "nope", "percents": [50]}},
                "c": {"cardinality": {"field": "nope"}}}})
            self.assertEqual((st, out["_shards"]["failed"]), (200, 0), out)
            a = out["aggregations"]
            self.assertEqual((a["t"]["buckets"], a["avg"]["value"], a["h"]["buckets"],
                              a["p"]["values"], a["c"]["value"]),
                             ([], None, [], {"50.0": None}, 0))
        # a keyword missing value against a numeric field of another index:
        # two key types, as Elasticsearch's reduce refuses them
        out = self.search("/u-1,v-1/_search", {"t": {"terms": {"field": "f", "missing": 1}}},
                          status=400)
        self.assertIn("two different types", out["error"]["reason"])


class MultiIndexTerms(ServerTestCase):
    """terms over daily indices (`logs-*`), each index a shard: counts merged
    by key, doc_count_error_upper_bound and sum_other_doc_count as
    Elasticsearch's InternalTerms reduce computes them."""

    COUNTS = [  # per index: term -> docs
        {"a": 10, "b": 8, "c": 7, "d": 1},
        {"b": 9, "c": 2, "d": 6, "e": 5},
        {"a": 1, "c": 6, "e": 4, "f": 3},
    ]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for day, counts in enumerate(cls.COUNTS):
            name = "logs-2026.01.%02d" % (day + 1)
            st, body, _ = cls.srv.request("PUT", "/" + name, {"mappings": {"properties": {
                "s": {"type": "keyword"}, "t": {"type": "date"}}}})
            assert st == 200, body
            lines = []
            for term, n in counts.items():
                for i in range(n):
                    lines.append('{"index":{}}')
                    lines.append(json.dumps({"s": term, "t": "2026-01-%02dT%02d:00:00Z"
                                             % (day + 1, i % 24)}))
            st, body, _ = cls.srv.request("POST", "/%s/_bulk?refresh=true" % name,
                                          "\n".join(lines) + "\n",
                                          {"Content-Type": "application/x-ndjson"})
            assert st == 200 and not body["errors"], body

    def expected(self, size, shard_size):
        """Elasticsearch's reduce, written out: each shard returns its top
        shard_size by count (ties by key); its error is its smallest returned
        count when it had more terms, else 0."""
        merged, err, other = {}, 0, 0
        for counts in self.COUNTS:
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            ret, rest = top[:shard_size], top[shard_size:]
            other += sum(n for _, n in rest)
            if len(ret) == shard_size:
                err += min(n for _, n in ret)
            for k, n in ret:
                merged[k] = merged.get(k, 0) + n
        final = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))
        other += sum(n for _, n in final[size:])
        return final[:size], err, other

    def test_error_bounds(self):
        for size, shard_size in ((2, 2), (1, 3), (3, 3), (2, 10)):
            st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {"s": {
                "terms": {"field": "s", "size": size, "shard_size": shard_size}}}})
            self.assertEqual(st, 200, out)
            a = out["aggregations"]["s"]
            top, err, other = self.expected(size, shard_size)
            self.assertEqual([(b["key"], b["doc_count"]) for b in a["buckets"]], top)
            self.assertEqual(a["doc_count_error_upper_bound"], err, (size, shard_size))
            self.assertEqual(a["sum_other_doc_count"], other)
        # the default shard_size (size * 1.5 + 10) returns every term: exact
        st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {"s": {
            "terms": {"field": "s", "size": 3}}}})
        a = out["aggregations"]["s"]
        self.assertEqual(a["doc_count_error_upper_bound"], 0)
        self.assertEqual([(b["key"], b["doc_count"]) for b in a["buckets"]],
                         [("b", 17), ("c", 15), ("a", 11)])
        self.assertEqual(a["sum_other_doc_count"], 62 - 43)

    def test_composite_pages(self):
        """composite over the three indices, paged with after_key: every
        (term, day) pair once, in key order, with its count."""
        want = []
        for term in sorted({t for c in self.COUNTS for t in c}):
            for day, counts in enumerate(self.COUNTS):
                if term in counts:
                    want.append(((term, 1767225600000 + day * 86400000), counts[term]))
        got, after, pages = [], None, 0
        while True:
            comp = {"size": 4, "sources": [{"s": {"terms": {"field": "s"}}},
                                          {"d": {"date_histogram": {
                                              "field": "t", "calendar_interval": "1d"}}}]}
            if after:
                comp["after"] = after
            st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {
                "c": {"composite": comp, "aggs": {"n": {"value_count": {"field": "s"}}}}}})
            self.assertEqual(st, 200, out)
            c = out["aggregations"]["c"]
            if not c["buckets"]:
                self.assertNotIn("after_key", c)
                break
            pages += 1
            for b in c["buckets"]:
                self.assertEqual(b["n"]["value"], b["doc_count"])
                got.append(((b["key"]["s"], b["key"]["d"]), b["doc_count"]))
            self.assertEqual(c["after_key"], c["buckets"][-1]["key"])
            after = c["after_key"]
        self.assertEqual(got, want)
        self.assertEqual(pages, (len(want) + 3) // 4)
        # descending source order
        st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {"c": {
            "composite": {"size": 2, "sources": [{"s": {"terms": {"field": "s",
                                                                   "order": "desc"}}}]}}}})
        self.assertEqual([b["key"]["s"] for b in out["aggregations"]["c"]["buckets"]],
                         ["f", "e"])
        st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {"x": {
            "terms": {"field": "s"}, "aggs": {"c": {"composite": {
                "sources": [{"s": {"terms": {"field": "s"}}}]}}}}}})
        self.assertEqual(st, 400, out)
        self.assertIn("cannot be used with a parent aggregation", out["error"]["reason"])

    def test_histogram_across_indices(self):
        st, out, _ = self.req("POST", "/logs-*/_search", {"size": 0, "aggs": {"d": {
            "date_histogram": {"field": "t", "calendar_interval": "day"},
            "aggs": {"s": {"terms": {"field": "s", "size": 1}}}}}})
        self.assertEqual(st, 200, out)
        b = out["aggregations"]["d"]["buckets"]
        self.assertEqual([x["doc_count"] for x in b], [26, 22, 14])
        self.assertEqual(b[1]["s"]["buckets"], [{"key": "b", "doc_count": 9}])
        # keys key_as_string
        self.assertEqual(b[2]["key_as_string"], "2026-01-03T00:00:00.000Z")


if __name__ == "__main__":
    unittest.main()
