"""Search phase timers (GET /{index}/_stats[/search], GET /_nodes/stats
[/indices/search]) and the `profile` section of a search, in Elasticsearch's
shapes: what a codec A/B reads to see the fetch phase's share."""
import threading
import unittest

from fdsserver import Server

N = 25
PHASE_KEYS = ("query_total", "query_time_in_millis", "query_time_in_micros",
              "query_current", "fetch_total", "fetch_time_in_millis",
              "fetch_time_in_micros", "fetch_current")


class SearchStats(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        bulk = "".join('{"index":{"_id":"%d"}}\n{"method":"GET","n":%d,"f":%d.5,"msg":"hello %d"}\n'
                       % (i, i, i, i % 3) for i in range(50))
        for name in ("ss", "ss2"):
            st, b, _ = cls.srv.request("PUT", "/" + name, {})
            assert st == 200, b
            st, b, _ = cls.srv.request("POST", "/%s/_bulk?refresh=true" % name, bulk)
            assert st == 200 and not b["errors"], b

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def search_stats(self, index):
        st, b, _ = self.req("GET", "/%s/_stats/search" % index)
        self.assertEqual(st, 200, b)
        return b

    def check_consistent(self, s):
        for k in PHASE_KEYS:
            self.assertIsInstance(s[k], int, k)
            self.assertGreaterEqual(s[k], 0, k)
        self.assertEqual(s["query_time_in_micros"] // 1000, s["query_time_in_millis"])
        self.assertEqual(s["fetch_time_in_micros"] // 1000, s["fetch_time_in_millis"])

    def test_search_counts_query_and_fetch(self):
        before = self.search_stats("ss")["_all"]["primaries"]["search"]
        for i in range(N):
            st, b, _ = self.req("POST", "/ss/_search",
                                {"query": {"match": {"msg": "hello"}}, "size": 5})
            self.assertEqual(st, 200, b)
            self.assertTrue(b["hits"]["hits"])
        body = self.search_stats("ss")
        after = body["_all"]["primaries"]["search"]
        self.check_consistent(after)
        self.assertEqual(after["query_total"] - before["query_total"], N)
        self.assertEqual(after["fetch_total"] - before["fetch_total"], N)
        self.assertGreater(after["query_time_in_micros"] + after["fetch_time_in_micros"],
                           before["query_time_in_micros"] + before["fetch_time_in_micros"])
        self.assertEqual((after["query_current"], after["fetch_current"]), (0, 0))
        # Elasticsearch's shape: _all and indices.{name}, primaries and total
        self.assertEqual(body["_all"]["total"]["search"], after)
        self.assertEqual(body["indices"]["ss"]["primaries"]["search"], after)
        self.assertEqual(body["indices"]["ss"]["total"]["search"], after)
        for k in ("open_contexts", "scroll_total", "suggest_total"):
            self.assertEqual(after[k], 0)

    def test_concurrent_searches_all_counted(self):
        threads, each = 4, 15
        before = self.search_stats("ss2")["_all"]["primaries"]["search"]
        errors = []

        def run():
            for _ in range(each):
                st, b, _ = self.req("POST", "/ss2/_search", {"size": 3})
                if st != 200:
                    errors.append(b)
        ts = [threading.Thread(target=run) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errors, [])
        after = self.search_stats("ss2")["_all"]["primaries"]["search"]
        self.check_consistent(after)
        self.assertEqual(after["query_total"] - before["query_total"], threads * each)
        self.assertEqual(after["fetch_total"] - before["fetch_total"], threads * each)
        self.assertEqual((after["query_current"], after["fetch_current"]), (0, 0))

    def test_count_is_query_only(self):
        before = self.search_stats("ss2")["_all"]["primaries"]["search"]
        for _ in range(N):
            st, b, _ = self.req("POST", "/ss2/_count", {"query": {"match": {"msg": "hello"}}})
            self.assertEqual((st, b["count"]), (200, 50))
        # a page without hits has no fetch phase either, as in Elasticsearch
        st, b, _ = self.req("POST", "/ss2/_search", {"size": 0})
        self.assertEqual(st, 200, b)
        after = self.search_stats("ss2")["_all"]["primaries"]["search"]
        self.check_consistent(after)
        self.assertEqual(after["query_total"] - before["query_total"], N + 1)
        self.assertEqual(after["fetch_total"], before["fetch_total"])
        self.assertEqual(after["fetch_time_in_micros"], before["fetch_time_in_micros"])

    def test_failed_search_not_counted(self):
        before = self.search_stats("ss")["_all"]["primaries"]["search"]
        st, _, _ = self.req("POST", "/ss/_search", {"query": {"nope": {}}})
        self.assertEqual(st, 400)
        after = self.search_stats("ss")["_all"]["primaries"]["search"]
        self.assertEqual(after["query_total"], before["query_total"])

    def test_stats_metrics(self):
        st, b, _ = self.req("GET", "/ss/_stats")
        self.assertEqual(st, 200)
        self.assertEqual(set(b["_all"]["primaries"]),
                         {"docs", "store", "segments", "search", "fielddata"})
        self.assertEqual(b["_all"]["primaries"]["docs"]["count"], 50)
        self.check_consistent(b["_all"]["primaries"]["search"])
        st, b, _ = self.req("GET", "/ss/_stats/search")
        self.assertEqual(set(b["_all"]["primaries"]), {"search"})
        self.assertEqual(set(b["indices"]["ss"]["primaries"]), {"search"})
        st, b, _ = self.req("GET", "/ss/_stats/store")
        self.assertEqual(set(b["_all"]["primaries"]), {"store"})
        self.assertGreater(b["_all"]["primaries"]["store"]["size_in_bytes"], 0)
        st, b, _ = self.req("GET", "/ss/_stats/docs,search")
        self.assertEqual(set(b["_all"]["primaries"]), {"docs", "search"})
        st, b, _ = self.req("GET", "/ss/_stats/_all")
        self.assertIn("search", b["_all"]["primaries"])
        st, b, _ = self.req("GET", "/ss/_stats/bogus")
        self.assertEqual((st, b["error"]["type"]), (400, "illegal_argument_exception"))
        self.assertIn("unrecognized metric: [bogus]", b["error"]["reason"])

    def test_nodes_stats_sum_indices(self):
        for _ in range(3):
            self.assertEqual(self.req("POST", "/ss/_search", {"size": 1})[0], 200)
            self.assertEqual(self.req("POST", "/ss2/_search", {"size": 1})[0], 200)
        a = self.search_stats("ss")["_all"]["primaries"]["search"]
        b = self.search_stats("ss2")["_all"]["primaries"]["search"]
        for path in ("/_nodes/stats", "/_nodes/stats/indices/search",
                     "/_nodes/_local/stats/indices/search"):
            st, body, _ = self.req("GET", path)
            self.assertEqual(st, 200, body)
            (node,) = body["nodes"].values()
            s = node["indices"]["search"]
            self.check_consistent(s)
            for k in ("query_total", "fetch_total"):
                self.assertEqual(s[k], a[k] + b[k], (path, k))
            # each figure truncates its own nanosecond sum
            for k in ("query_time_in_micros", "fetch_time_in_micros"):
                self.assertLessEqual(abs(s[k] - a[k] - b[k]), 1, (path, k))
        st, body, _ = self.req("GET", "/_nodes/stats")
        (node,) = body["nodes"].values()
        self.assertIn("process", node)
        self.assertIn("os", node)
        st, body, _ = self.req("GET", "/_nodes/stats/indices/search")
        (node,) = body["nodes"].values()
        self.assertEqual(set(node["indices"]), {"search"})
        self.assertNotIn("process", node)
        st, body, _ = self.req("GET", "/_nodes/stats/process")
        (node,) = body["nodes"].values()
        self.assertIn("process", node)
        self.assertNotIn("indices", node)

    def check_profile(self, b, index):
        prof = b["profile"]
        (shard,) = prof["shards"]
        self.assertRegex(shard["id"], r"^\[[^\]]+\]\[%s\]\[0\]$" % index)
        self.assertEqual((shard["index"], shard["shard_id"]), (index, 0))
        self.assertEqual(shard["id"], "[%s][%s][0]" % (shard["node_id"], index))
        q = shard["searches"][0]["query"][0]
        self.assertIsInstance(q["time_in_nanos"], int)
        self.assertGreater(q["time_in_nanos"], 0)
        self.assertGreater(shard["fetch"]["time_in_nanos"], 0)
        self.assertEqual(shard["fetch"]["type"], "fetch")
        self.assertGreaterEqual(shard["fetch"]["time_in_nanos"],
                                shard["fetch"]["breakdown"]["load_stored_fields"])
        return q

    def test_profile(self):
        st, b, _ = self.req("POST", "/ss/_search",
                            {"profile": True, "query": {"term": {"method.keyword": "GET"}}})
        self.assertEqual(st, 200, b)
        self.assertTrue(b["hits"]["hits"])
        q = self.check_profile(b, "ss")
        self.assertEqual((q["type"], q["description"]), ("TermQuery", "method.keyword:GET"))
        st, b, _ = self.req("GET", "/ss/_search?profile=true")
        self.assertEqual(st, 200, b)
        q = self.check_profile(b, "ss")
        self.assertEqual((q["type"], q["description"]), ("MatchAllDocsQuery", "*:*"))
        st, b, _ = self.req("POST", "/ss/_search", {"profile": True, "query": {
            "bool": {"must": [{"match": {"msg": "hello"}}],
                     "must_not": [{"term": {"n": 3}}]}}})
        self.assertEqual(st, 200, b)
        q = self.check_profile(b, "ss")
        self.assertEqual(q["type"], "BooleanQuery")
        self.assertIn("+msg:hello", q["description"])
        self.assertIn("-n:", q["description"])
        for query, want in (
                ({"range": {"n": {"gte": 3, "lte": 7}}}, ("IndexOrDocValuesQuery", "n:[3 TO 7]")),
                ({"range": {"f": {"gte": 0.01}}},
                 ("IndexOrDocValuesQuery", "f:[0.01 TO Infinity]")),
                ({"match": {"msg": "hello 1"}}, ("BooleanQuery", "msg:hello msg:1")),
                ({"terms": {"method.keyword": ["GET", "PUT"]}},
                 ("TermInSetQuery", "method.keyword:(GET PUT)"))):
            st, b, _ = self.req("POST", "/ss/_search", {"profile": True, "query": query})
            self.assertEqual(st, 200, b)
            q = self.check_profile(b, "ss")
            self.assertEqual((q["type"], q["description"]), want)
        # _count has no profile
        st, b, _ = self.req("GET", "/ss/_count?profile=true")
        self.assertEqual((st, b["error"]["type"]), (400, "illegal_argument_exception"))
        st, b, _ = self.req("POST", "/ss/_count", {"profile": True})
        self.assertEqual(st, 400)
        # without it, no profile
        st, b, _ = self.req("POST", "/ss/_search", {"profile": False})
        self.assertNotIn("profile", b)
        st, b, _ = self.req("GET", "/ss/_search")
        self.assertNotIn("profile", b)


if __name__ == "__main__":
    unittest.main()
