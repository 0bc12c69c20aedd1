"""No search request can crash, stall or starve the server: counting
without a page, duplicate keys, `_source` patterns, out-of-range bounds,
request size limits and exact answers, each against a started server and
checked against the answer Elasticsearch gives."""
import json
import time
import unittest

from fdsserver import Server

NDOCS = 300
LONG_NAME = "a" * 40  # a field name many-star patterns are matched against


class SearchBounds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        st, body, _ = cls.srv.request("PUT", "/b", {"mappings": {"properties": {
            "url": {"type": "text"}, "status": {"type": "long"},
            "kw": {"type": "keyword"}, "big": {"type": "long"}}}})
        assert st == 200, body
        lines = []
        for i in range(NDOCS):
            lines.append(json.dumps({"index": {"_index": "b", "_id": str(i)}}))
            lines.append(json.dumps({
                "url": "/static/style%d.css page%d" % (i % 3, i % 7),
                "status": 200 + i, "kw": "k%d" % i, "big": 2 ** 53 + i,
                LONG_NAME: i}))
        st, body, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                      "\n".join(lines) + "\n",
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and body["errors"] is False, str(body)[:500]

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def tearDown(self):
        # whatever a test sent, the server still answers
        st, body, _ = self.srv.request("GET", "/b/_count")
        self.assertEqual((st, body["count"]), (200, NDOCS), body)

    def search(self, body, path="/b/_search", status=200):
        st, out, _ = self.srv.request("POST", path, body)
        self.assertEqual(st, status, out)
        return out

    def assertError(self, body, etype, reason, path="/b/_search"):
        out = self.search(body, path, 400)
        self.assertEqual(out["status"], 400)
        # a shard's failure comes wrapped, as Elasticsearch's "all shards failed"
        err = out["error"]
        if err["type"] == "search_phase_execution_exception":
            self.assertEqual(err["failed_shards"][0]["reason"]["type"], etype, out)
            err = err["root_cause"][0]
        self.assertEqual(err["type"], etype, out)
        self.assertEqual(out["error"]["root_cause"][0]["type"], etype)
        self.assertIn(reason, err["reason"])
        return out

    # ---- counting without a page -------------------------------------------

    def test_count_multi_term_match(self):
        # "style2.css" is two terms (the standard analyzer breaks at the
        # dot), "css" in every document
        for body, path in (({"query": {"match": {"url": "style2.css"}}}, "/b/_count"),
                           ({"query": {"match": {"url": "style2.css"}}, "size": 0},
                            "/b/_search")):
            out = self.search(body, path)
            self.assertEqual(out.get("count", out.get("hits", {}).get("total", {}).get("value")),
                             NDOCS)
        want = sum(1 for i in range(NDOCS) if i % 3 == 2 or i % 7 == 1)
        q = {"match": {"url": "style2 page1"}}
        self.assertEqual(self.search({"query": q}, "/b/_count")["count"], want)
        out = self.search({"query": q, "size": 0, "track_total_hits": True})
        self.assertEqual((out["hits"]["total"]["value"], out["hits"]["hits"]),
                         (want, []))

    def test_count_bool_two_should(self):
        want = sum(1 for i in range(NDOCS) if i % 3 == 0 or i % 7 == 3)
        q = {"bool": {"should": [{"match": {"url": "style0"}},
                                 {"match": {"url": "page3"}}]}}
        self.assertEqual(self.search({"query": q}, "/b/_count")["count"], want)
        out = self.search({"query": q, "size": 0})
        self.assertEqual(out["hits"]["total"]["value"], want)

    def test_size_zero_q_param(self):
        want = sum(1 for i in range(NDOCS) if i % 7 in (2, 4))
        st, out, _ = self.srv.request(
            "GET", "/b/_search?size=0&q=url:page2%20url:page4")
        self.assertEqual(st, 200, out)
        self.assertEqual(out["hits"]["total"]["value"], want)


    # ---- duplicate keys ----------------------------------------------------

    def test_duplicate_source_includes(self):
        body = '{"_source":{"includes":["a","b"],"includes":["c"]}}'
        self.assertError(body, "x_content_parse_exception",
                         "[1:44] Duplicate field 'includes'")
        # "include" and "includes" name one list: the last one wins
        out = self.search('{"query":{"ids":{"values":["1"]}},'
                          '"_source":{"include":["url","kw"],"includes":["kw"]}}')
        self.assertEqual(out["hits"]["hits"][0]["_source"], {"kw": "k1"})

    def test_duplicate_keys_in_search_and_count(self):
        self.assertError('{"size":1,"size":2}', "x_content_parse_exception",
                         "[1:17] Duplicate field 'size'")
        self.assertError('{"query":{"bool":{"should":[],"should":[]}}}',
                         "x_content_parse_exception", "Duplicate field 'should'",
                         path="/b/_count")

    def test_duplicate_keys_in_settings_mappings_bulk(self):
        st, out, _ = self.srv.request("PUT", "/dup1", '{"settings":{"index.codec":'
                                      '"ZSTD","index.codec":"default"}}')
        self.assertEqual((st, out["error"]["type"]), (400, "x_content_parse_exception"), out)
        self.assertIn("Duplicate field 'index.codec'", out["error"]["reason"])
        st, out, _ = self.srv.request("PUT", "/dup2", '{"mappings":{"properties":'
                                      '{"a":{"type":"long"},"a":{"type":"text"}}}}')
        self.assertEqual((st, out["error"]["type"]), (400, "x_content_parse_exception"), out)
        st, _, _ = self.srv.request("HEAD", "/dup2")
        self.assertEqual(st, 404)
        st, out, _ = self.srv.request("PUT", "/b/_settings",
                                      '{"index":{"refresh_interval":"1s",'
                                      '"refresh_interval":"2s"}}')
        self.assertEqual((st, out["error"]["type"]), (400, "x_content_parse_exception"), out)
        st, out, _ = self.srv.request(
            "POST", "/_bulk", '{"index":{"_index":"b","_index":"c"}}\n{"kw":"x"}\n',
            {"Content-Type": "application/x-ndjson"})
        self.assertEqual((st, out["error"]["type"]), (400, "x_content_parse_exception"), out)
        self.assertIn("[1:32] Duplicate field '_index'", out["error"]["reason"])


    # ---- _source patterns ---------------------------------------------------

    def test_many_star_source_pattern_is_fast(self):
        # 16 stars, matches no field: the recursive matcher tried every way
        # to split the 40-byte name (12 stars took 38 s)
        pat = "a*" * 16 + "b"
        t0 = time.monotonic()
        out = self.search({"_source": [pat, "k*"], "size": 50})
        self.assertLess(time.monotonic() - t0, 5)
        self.assertEqual(len(out["hits"]["hits"]), 50)
        self.assertEqual(set(out["hits"]["hits"][0]["_source"]), {"kw"})


    # ---- range bounds past a long ----------------------------------------------

    def test_range_bound_past_long_clamps(self):
        def total(op, v):
            body = '{"query":{"range":{"status":{"%s":%s}}},"track_total_hits":true}' % (op, v)
            return self.search(body)["hits"]["total"]["value"]
        for op, v, want in (("lt", "1e19", NDOCS), ("lte", "1e19", NDOCS),
                            ("gt", "1e19", 0), ("gte", "1e19", 0),
                            ("gt", "-1e19", NDOCS), ("gte", "-1e19", NDOCS),
                            ("lt", "-1e19", 0), ("lte", "-1e19", 0),
                            ("lt", "99999999999999999999", NDOCS)):
            self.assertEqual(total(op, v), want, (op, v))
        self.assertError({"query": {"range": {"status": {"lt": "Infinity"}}}},
                         "illegal_argument_exception",
                         "Value [Infinity] is out of range for a long")
        self.assertError({"query": {"range": {"status": {"gt": "NaN"}}}},
                         "number_format_exception", 'For input string: "NaN"')


    # ---- bounded work ----------------------------------------------------------

    def test_clause_count_limit(self):
        def should(n):
            return {"query": {"bool": {"should": [
                {"term": {"kw": "k%d" % i}} for i in range(n)]}}}
        out = self.search(dict(should(4096), track_total_hits=True))
        self.assertEqual(out["hits"]["total"]["value"], NDOCS)
        self.assertError(should(4097), "too_many_nested_clauses",
                         "Query contains too many nested clauses; maxClauseCount is set to 4096")
        self.assertError(should(4097), "too_many_nested_clauses", "maxClauseCount",
                         path="/b/_count")

    def test_nested_depth_limit(self):
        q = {"term": {"kw": "k1"}}
        for _ in range(29):
            q = {"bool": {"must": [q]}}
        self.assertEqual(self.search({"query": q})["hits"]["total"]["value"], 1)
        self.assertError({"query": {"bool": {"must": [q]}}}, "illegal_argument_exception",
                         "[indices.query.bool.max_nested_depth]")

    def test_terms_and_source_limits(self):
        self.assertError({"query": {"terms": {"kw": ["k%d" % i for i in range(65537)]}}},
                         "illegal_argument_exception",
                         "The number of terms [65537] used in the Terms Query request")
        self.assertError({"_source": ["f%d" % i for i in range(65)]},
                         "illegal_argument_exception", "more than the limit of [64]")
        self.assertError({"_source": "a" * 257}, "illegal_argument_exception",
                         "longer than the limit of [256]")


    # ---- exact answers -----------------------------------------------------------

    def test_term_with_nul_byte(self):
        st, out, _ = self.srv.request("PUT", "/nul", {"mappings": {"properties": {
            "k": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        for i, k in enumerate((r"a\u0000b", "a")):
            st, out, _ = self.srv.request("PUT", "/nul/_doc/%d?refresh=true" % i,
                                          '{"k":"%s"}' % k)
            self.assertEqual(st, 201, out)
        out = self.search('{"query":{"term":{"k":"a\\u0000b"}}}', "/nul/_search")
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["0"])
        self.assertEqual(out["hits"]["hits"][0]["_source"], {"k": "a\u0000b"})

    def test_invalid_utf8_body(self):
        st, out, _ = self.srv.request("POST", "/b/_search",
                                      b'{"query":{"term":{"kw":"\xff"}}}')
        self.assertEqual((st, out["error"]["type"]), (400, "x_content_parse_exception"), out)


    def test_max_result_window_from_settings(self):
        st, out, _ = self.srv.request("PUT", "/win", {"settings": {
            "index.max_result_window": 20}})
        self.assertEqual(st, 200, out)
        self.assertError({"size": 21}, "illegal_argument_exception",
                         "from + size must be less than or equal to: [20] but was [21]",
                         path="/win/_search")
        self.search({"size": 20}, "/win/_search")
        st, out, _ = self.srv.request("PUT", "/win/_settings",
                                      {"index": {"max_result_window": 20000}})
        self.assertEqual(st, 200, out)
        self.search({"size": 15000}, "/win/_search")
        st, out, _ = self.srv.request("GET", "/win/_search?size=10000&from=10001")
        self.assertEqual((st, out["error"]["type"]), (400, "illegal_argument_exception"), out)


    def test_search_after_past_2_53_skips_nothing(self):
        after, seen = None, []
        for _ in range(12):
            body = {"size": 1, "sort": [{"big": "asc"}]}
            if after is not None:
                body["search_after"] = [after]
            hit = self.search(body)["hits"]["hits"][0]
            self.assertEqual(hit["sort"], [2 ** 53 + int(hit["_id"])])
            seen.append(int(hit["_id"]))
            after = hit["sort"][0]
        self.assertEqual(seen, list(range(12)))
        out = self.search({"size": 3, "sort": [{"big": "desc"}],
                           "search_after": [str(2 ** 53 + 5)]})
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["4", "3", "2"])


if __name__ == "__main__":
    unittest.main()
