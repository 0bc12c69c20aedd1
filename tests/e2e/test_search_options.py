"""What a search hit carries, as Elasticsearch 8 answers it: `version`,
`seq_no_primary_term`, `stored_fields` (a list, `_source` among them,
`_none_`), `rest_total_hits_as_int`, and the URL forms `_source`,
`_source_includes`, `_source_excludes`, `sort` and the booleans."""
import json
import unittest

from fdsserver import ServerTestCase


class SearchOptions(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/o", {"mappings": {"properties": {
            "n": {"type": "long"}, "k": {"type": "keyword"}}}})
        assert st == 200, body
        for i in range(3):
            st, body, _ = cls.srv.request(
                "PUT", "/o/_doc/%d" % i, {"n": i, "k": "k%d" % i, "o": {"a": i, "b": -i}})
            assert st in (200, 201), body
        # doc 1 written twice: version 2, seq_no 3
        st, body, _ = cls.srv.request("PUT", "/o/_doc/1?refresh=true",
                                      {"n": 1, "k": "k1", "o": {"a": 1, "b": -1}})
        assert st == 200 and body["_version"] == 2, body

    def search(self, body=None, qs="", status=200):
        st, out, raw = self.req("POST", "/o/_search" + qs, body)
        self.assertEqual(st, status, out)
        return out, raw

    def hit(self, out, doc_id):
        return next(h for h in out["hits"]["hits"] if h.get("_id") == doc_id)

    def test_no_effect_parameters_take_only_valid_values(self):
        """request_cache, ccs_minimize_roundtrips, typed_keys and
        batched_reduce_size change nothing an answer shows on one node, but
        their values are checked as Elasticsearch checks them."""
        for q in ("request_cache=true", "ccs_minimize_roundtrips=false", "typed_keys",
                  "batched_reduce_size=64"):
            self.assertEqual(self.req("GET", "/_search?size=0&" + q)[0], 200, q)
        for q, kind in (("request_cache=maybe", "illegal_argument_exception"),
                        ("ccs_minimize_roundtrips=2", "illegal_argument_exception"),
                        ("typed_keys=x", "illegal_argument_exception"),
                        ("batched_reduce_size=1", "action_request_validation_exception"),
                        ("batched_reduce_size=x", "action_request_validation_exception")):
            self.assertError(self.req("GET", "/_search?size=0&" + q), 400, kind)

    def test_version_and_seq_no(self):
        body = {"query": {"term": {"k": "k1"}}, "version": True,
                "seq_no_primary_term": True}
        out, raw = self.search(body)
        h = out["hits"]["hits"][0]
        self.assertEqual((h["_version"], h["_seq_no"], h["_primary_term"]), (2, 3, 1))
        # Elasticsearch's order of a hit's metadata
        keys = list(json.loads(raw)["hits"]["hits"][0])
        self.assertEqual(keys, ["_index", "_id", "_version", "_seq_no",
                                "_primary_term", "_score", "_source"])
        st, got, _ = self.req("GET", "/o/_doc/1")
        self.assertEqual((got["_version"], got["_seq_no"]), (h["_version"], h["_seq_no"]))
        h0 = self.hit(self.search({"version": True})[0], "0")
        self.assertEqual((h0["_version"], "_seq_no" in h0), (1, False))
        # not asked: not there
        h = self.search({"query": {"term": {"k": "k1"}}})[0]["hits"]["hits"][0]
        self.assertNotIn("_version", h)
        self.assertNotIn("_seq_no", h)

    def test_version_url(self):
        out, _ = self.search(None, "?q=k:k1&version=true&seq_no_primary_term")
        h = out["hits"]["hits"][0]
        self.assertEqual((h["_version"], h["_seq_no"]), (2, 3))
        out, _ = self.search(None, "?version=false")
        self.assertNotIn("_version", out["hits"]["hits"][0])
        out, _ = self.search(None, "?version=yes", status=400)
        self.assertEqual(out["error"]["type"], "illegal_argument_exception")

    def test_version_must_be_boolean(self):
        out, _ = self.search({"version": 1}, status=400)
        self.assertIn("[version]", out["error"]["reason"])

    def test_stored_fields(self):
        # a list: metadata only, unless _source is asked for
        for sf in ([], ["k"], "k", ["o.a", "n"]):
            out, _ = self.search({"stored_fields": sf})
            for h in out["hits"]["hits"]:
                self.assertIn("_id", h)
                self.assertNotIn("_source", h)
                self.assertNotIn("fields", h)  # no field is stored apart from _source
        out, _ = self.search({"stored_fields": ["k", "_source"]})
        self.assertEqual(self.hit(out, "2")["_source"]["k"], "k2")
        out, _ = self.search({"stored_fields": ["k"], "_source": ["o.a"]})
        self.assertEqual(self.hit(out, "2")["_source"], {"o": {"a": 2}})
        # _none_: neither _id nor _source
        out, _ = self.search({"stored_fields": "_none_"})
        self.assertEqual(len(out["hits"]["hits"]), 3)
        for h in out["hits"]["hits"]:
            self.assertEqual(set(h), {"_index", "_score"})
        out, _ = self.search({"stored_fields": "_none_", "_source": True}, status=400)
        self.assertEqual(out["error"]["reason"],
                         "[stored_fields] cannot be disabled if [_source] is requested")
        out, _ = self.search({"stored_fields": ["_none_", "k"]}, status=400)
        out, _ = self.search(None, "?stored_fields=_none_")
        self.assertEqual(set(out["hits"]["hits"][0]), {"_index", "_score"})
        out, _ = self.search(None, "?stored_fields=k,_source")
        self.assertIn("_source", out["hits"]["hits"][0])

    def test_rest_total_hits_as_int(self):
        out, _ = self.search(None, "?rest_total_hits_as_int=true")
        self.assertEqual(out["hits"]["total"], 3)
        # a number must be exact: a limit on counting is refused
        out, _ = self.search({"track_total_hits": 2}, "?rest_total_hits_as_int=true", status=400)
        self.assertIn("tracking of total hits is not accurate, got 2", out["error"]["reason"])
        out, _ = self.search(None, "?rest_total_hits_as_int=false")
        self.assertEqual(out["hits"]["total"], {"value": 3, "relation": "eq"})

    def test_source_url(self):
        out, _ = self.search(None, "?_source=false")
        self.assertNotIn("_source", out["hits"]["hits"][0])
        out, _ = self.search({"_source": False}, "?_source=true")
        self.assertIn("_source", out["hits"]["hits"][0])
        out, _ = self.search(None, "?_source=k,o.b")
        self.assertEqual(self.hit(out, "2")["_source"], {"k": "k2", "o": {"b": -2}})
        out, _ = self.search(None, "?_source_includes=o.*&_source_excludes=o.b")
        self.assertEqual(self.hit(out, "2")["_source"], {"o": {"a": 2}})
        # the URL replaces the body's filter
        out, _ = self.search({"_source": ["k"]}, "?_source_excludes=o,k")
        self.assertEqual(self.hit(out, "2")["_source"], {"n": 2})

    def test_sort_url(self):
        out, _ = self.search(None, "?sort=n:desc")
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["2", "1", "0"])
        self.assertEqual(out["hits"]["hits"][0]["sort"], [2])
        out, _ = self.search(None, "?sort=k:asc,_doc")
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["0", "1", "2"])
        out, _ = self.search(None, "?sort=n:sideways", status=400)
        out, _ = self.search(None, "?sort=nope", status=400)
        self.assertEqual(out["error"]["root_cause"][0]["type"], "query_shard_exception")

    def test_q_default_field_and_operator(self):
        st, body, _ = self.req("PUT", "/q", {"mappings": {"properties": {
            "a": {"type": "text"}, "b": {"type": "text"}}}})
        for i, (a, b) in enumerate((("red fox", "blue"), ("blue fox", "red"),
                                    ("red", "fox"))):
            self.req("PUT", "/q/_doc/%d" % i, {"a": a, "b": b})
        self.req("POST", "/q/_refresh")
        ids = lambda qs: sorted(h["_id"] for h in
                                self.req("GET", "/q/_search" + qs)[1]["hits"]["hits"])
        self.assertEqual(ids("?q=red"), ["0", "1", "2"])  # every text field
        self.assertEqual(ids("?q=red&df=a"), ["0", "2"])
        self.assertEqual(ids("?q=red%20fox&df=a"), ["0", "1", "2"])
        self.assertEqual(ids("?q=red%20fox&df=a&default_operator=AND"), ["0"])
        self.assertEqual(ids("?q=red%20fox&default_operator=and"), ["0", "1", "2"])
        self.assertEqual(self.req("GET", "/q/_count?q=fox&df=b")[1]["count"], 1)
        # Lucene syntax (dsl_parse_qs.c)
        for q, want in (("-red", []), ("%2Bred", ["0", "1", "2"]),
                        ("NOT%20red", []), ("re*", ["0", "1", "2"]),
                        ("_exists_:a", ["0", "1", "2"]),
                        ("a:blue%20AND%20b:red", ["1"]),
                        ("a:(red%20OR%20blue)%20-b:fox", ["0", "1"]),
                        ("a:fo%3F", ["0", "1"]), ("a:%2Ff.x%2F", ["0", "1"]),
                        ("a:RE*", ["0", "2"]), ("red%5E2%20%26%26%20b:fox", ["2"]),
                        ("a:rod~", ["0", "2"]), ("a:bleu~1", ["1"]), ("a:bleu~0", []),
                        ("*:*", ["0", "1", "2"]), ("*", ["0", "1", "2"]),
                        ("*:fox%20-a:fox", ["2"]), ("_id:1%20OR%20_id:2", ["1", "2"])):
            self.assertEqual(ids("?q=" + q), want, q)
        # phrases and groups close, at most 2 edits
        for q in ("%22red%20fox", "red~3", "(red"):
            st, out, _ = self.req("GET", "/q/_count?q=" + q)
            self.assertEqual((st, out["error"]["type"]), (400, "search_phase_execution_exception"), q)
            cause = out["error"]["root_cause"][0]
            self.assertEqual(cause["type"], "query_shard_exception")
            self.assertIn("Failed to parse query", cause["reason"])
        st, out, _ = self.req("GET", "/q/_search?q=red&default_operator=XOR")
        self.assertEqual(st, 400)
        self.assertIn("defaultOperator", out["error"]["reason"])

    def test_range_dates(self):
        st, out, _ = self.req("PUT", "/dates", {"mappings": {"properties": {
            "t": {"type": "date"}, "n": {"type": "long"}}}})
        lines = []
        for i in range(48):  # 2020-06-01T00:00Z + i hours
            lines.append(json.dumps({"index": {"_index": "dates", "_id": str(i)}}))
            lines.append(json.dumps({"t": "2020-06-%02dT%02d:00:00Z" % (1 + i // 24, i % 24),
                                     "n": i}))
        st, out, _ = self.req("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              {"Content-Type": "application/x-ndjson"})
        self.assertFalse(out["errors"])

        def count(rng, status=200):
            st, out, _ = self.req("POST", "/dates/_count", {"query": {"range": {"t": rng}}})
            self.assertEqual(st, status, out)
            return out["count"] if status == 200 else out
        self.assertEqual(count({"gte": "2020-06-01||+1d/d"}), 24)
        self.assertEqual(count({"lte": "2020-06-01||/d"}), 24)  # up: 23:59:59.999
        self.assertEqual(count({"gt": "2020-06-01||/d"}), 24)   # up
        self.assertEqual(count({"lt": "2020-06-02||/d"}), 24)   # down
        self.assertEqual(count({"gte": "2020-06-01T10:00:00Z||/d", "lt": "2020-06-01||+12h"}), 12)
        self.assertEqual(count({"lte": "now"}), 48)
        self.assertEqual(count({"gte": "now-1d/d"}), 0)
        # time_zone: dates without an offset are read in it, rounding too
        self.assertEqual(count({"gte": "2020-06-02T05:00:00", "time_zone": "+05:00"}), 24)
        self.assertEqual(count({"gte": "2020-06-02T05:00:00Z", "time_zone": "+05:00"}), 19)
        self.assertEqual(count({"gte": "2020-06-02||/d", "time_zone": "-02:00"}), 22)
        # format
        self.assertEqual(count({"gte": 1591056000, "format": "epoch_second"}), 24)
        self.assertEqual(count({"gte": "1591056000000", "format": "epoch_millis"}), 24)
        self.assertEqual(count({"gte": "2020-06-02", "format": "strict_date"}), 24)
        self.assertEqual(count({"gte": "02/06/2020 00", "format": "dd/MM/yyyy HH"}), 24)
        # from/to with include_lower/include_upper
        self.assertEqual(count({"from": "2020-06-01T01:00:00Z", "to": "2020-06-01T03:00:00Z",
                                "include_lower": False, "include_upper": True}), 2)
        self.assertEqual(count({"gte": "2020-06-01", "relation": "within"}), 48)
        # refused, not ignored
        for rng, etype, reason in (
                ({"gte": "2020", "relation": "disjoint"}, "query_shard_exception", "disjoint"),
                ({"gte": "2020-06-01", "format": "yyyy/MM/dd hh"}, "illegal_argument_exception",
                 "format [yyyy/MM/dd hh] is not supported"),
                ({"gte": "2020-06-01", "time_zone": "Asia/Teheran_"},
                 "illegal_argument_exception", "Unknown time-zone ID: Asia/Teheran_"),
                ({"gte": "now-1x"}, "parse_exception", "failed to parse date field"),
                ({"gte": "2020-06-01", "_name": 1}, "parsing_exception", "[_name]"),
                ({"gte": "2020-06-01T10:00:00Z\u0000junk"}, "parse_exception",
                 "failed to parse date field"),
                ({"gte": "2020-06-01", "format": "strict_date\u0000xx"}, "parsing_exception",
                 "NUL")):
            out = count(rng, 400)
            cause = out["error"]["root_cause"][0]  # wrapped or not, the cause
            self.assertEqual(cause["type"], etype, out)
            self.assertIn(reason, cause["reason"])
        st, out, _ = self.req("POST", "/dates/_count", {"query": {"range": {"n": {
            "gte": 1, "format": "epoch_millis"}}}})
        cause = out["error"]["root_cause"][0]
        self.assertEqual((st, cause["type"]), (400, "query_shard_exception"))
        self.assertIn("can not be applied to non date field [n]", cause["reason"])

    def test_sort_options(self):
        out, _ = self.search({"sort": [{"nope": {"order": "asc", "unmapped_type": "long"}},
                                       {"n": "desc"}]})
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["2", "1", "0"])
        self.assertEqual(out["hits"]["hits"][0]["sort"], [None, 2])
        out, _ = self.search({"sort": [{"nope": {"unmapped_type": "geo_shape"}}]}, status=400)
        for opt in ({"mode": "max"}, {"numeric_type": "long"}, {"format": "x"},
                    {"missing": 0}):
            out, _ = self.search({"sort": [{"n": dict(order="asc", **opt)}]}, status=400)
            self.assertEqual(out["error"]["type"], "illegal_argument_exception")
        out, _ = self.search({"sort": [{"n": {"order": "asc", "missing": "_first"}}]})
        self.assertEqual(out["hits"]["hits"][0]["_id"], "0")

    def test_search_after_values(self):
        out, _ = self.search({"sort": [{"n": "asc"}], "search_after": [0]})
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["1", "2"])
        out, _ = self.search({"sort": [{"n": "asc"}], "search_after": ["0"]})
        self.assertEqual(len(out["hits"]["hits"]), 2)
        for after in (["x"], [1.5], [1e30], ["99999999999999999999999"]):
            out, _ = self.search({"sort": [{"n": "asc"}], "search_after": after}, status=400)
            self.assertIn("Failed to parse search_after value for field [n]",
                          out["error"]["root_cause"][0]["reason"])

    def test_search_after_a_score_that_ties(self):
        """A _score key is read back as a float, as Elasticsearch reads it:
        the shortest decimal of a score parses to a double off the float,
        and the docs tying the page's last score were skipped."""
        body = "".join('{"index":{"_id":"%d"}}\n{"url":"%s"}\n'
                       % (i, "/favicon.ico" if i < 10 else "/favicon.ico extra")
                       for i in range(13))
        st, out, _ = self.req("POST", "/ties/_bulk?refresh=true", body,
                              {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 200, out)
        self.assertFalse(out["errors"])
        q = {"match": {"url": "/favicon.ico"}}
        # by _score, then _doc: pages of 3 walk every doc once, in order
        seen, after = [], None
        for _ in range(10):
            body = {"query": q, "size": 3, "sort": ["_score", "_doc"]}
            if after:
                body["search_after"] = after
            st, out, _ = self.req("POST", "/ties/_search", body)
            self.assertEqual(st, 200, out)
            hits = out["hits"]["hits"]
            if not hits:
                break
            seen += [h["_id"] for h in hits]
            after = hits[-1]["sort"]
        self.assertEqual(seen, [str(i) for i in range(13)])
        # by score alone: past the tied score come only the lower ones
        st, out, _ = self.req("POST", "/ties/_search", {"query": q, "size": 20})
        top = out["hits"]["hits"][0]["_score"]
        st, out, _ = self.req("POST", "/ties/_search",
                              {"query": q, "size": 20, "search_after": [top]})
        self.assertEqual(st, 200, out)
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["10", "11", "12"])

    def test_search_type(self):
        for t in ("query_then_fetch", "dfs_query_then_fetch"):
            self.search(None, "?search_type=" + t)
        for t in ("query_and_fetch", "dfs_query_and_fetch", "scan"):
            out, _ = self.search(None, "?search_type=" + t, status=400)
            self.assertEqual(out["error"]["reason"], "No search type for [%s]" % t)

    def test_info(self):
        st, out, _ = self.req("GET", "/")
        v = out["version"]
        self.assertEqual((v["number"][:2], v["build_flavor"], v["build_type"]),
                         ("8.", "default", "tar"))
        self.assertEqual(v["minimum_wire_compatibility_version"], "7.17.0")
        self.assertNotIn("distribution", v)
        self.assertRegex(v["build_date"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$")
        self.assertEqual(out["tagline"], "You Know, for Search")


if __name__ == "__main__":
    unittest.main()
