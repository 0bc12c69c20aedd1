"""End-to-end: both codecs, the real nginx sample bulk-loaded over HTTP,
counts checked against the values the sample is known to hold (see
datasets/SOURCES.md: GET 9,803 / HEAD 175 / POST 22; 200 9,018 / 404 306),
documents fetched by id equal to what their line converts to, and a restart
that keeps every refreshed document."""
import json
import unittest

from fdsserver import Server, convert

INDICES = {"logs-zstd": "ZSTD", "logs-deflate": "best_compression"}


class WalkingSkeleton(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        cls.docs = convert("json").decode().splitlines()
        for name, codec in INDICES.items():
            st, body, _ = cls.srv.request("PUT", "/" + name, {
                "settings": {"index": {"codec": codec}}})
            assert st == 200, body
            bulk = convert("bulk", index=name)
            st, body, _ = cls.srv.request("POST", "/_bulk", bulk,
                                          {"Content-Type": "application/x-ndjson"})
            assert st == 200 and body["errors"] is False, str(body)[:500]
            assert len(body["items"]) == 10000
            st, body, _ = cls.srv.request("POST", "/%s/_refresh" % name)
            assert st == 200, body

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def count(self, index, query):
        st, body, _ = self.srv.request("POST", "/%s/_search" % index, {
            "query": query, "size": 0, "track_total_hits": True})
        self.assertEqual(st, 200, body)
        return body["hits"]["total"]["value"]

    def test_converter_gives_10000_docs(self):
        self.assertEqual(len(self.docs), 10000)

    def test_doc_count(self):
        for name in INDICES:
            st, body, _ = self.srv.request("GET", "/%s/_count" % name)
            self.assertEqual(st, 200, body)
            self.assertEqual(body["count"], 10000)

    def test_match_method(self):
        for name in INDICES:
            for method, n in (("GET", 9803), ("HEAD", 175), ("POST", 22)):
                self.assertEqual(self.count(name, {"match": {"method": method}}), n,
                                 (name, method))

    def test_match_status(self):
        for name in INDICES:
            self.assertEqual(self.count(name, {"match": {"status": 200}}), 9018)
            self.assertEqual(self.count(name, {"match": {"status": "404"}}), 306)

    def test_hits_shape_and_source_from_blocks(self):
        for name in INDICES:
            st, body, _ = self.srv.request("POST", "/%s/_search" % name, {
                "query": {"match": {"method": "POST"}}, "size": 30})
            self.assertEqual(st, 200)
            hits = body["hits"]["hits"]
            self.assertEqual(len(hits), 22)
            self.assertEqual(body["hits"]["total"], {"value": 22, "relation": "eq"})
            for h in hits:
                self.assertEqual(h["_index"], name)
                self.assertGreater(h["_score"], 0)
                self.assertEqual(h["_source"]["method"], "POST")
                line = int(h["_id"])
                self.assertEqual(h["_source"], json.loads(self.docs[line - 1]))

    def test_term_on_id(self):
        for name in INDICES:
            st, b, _ = self.srv.request("POST", "/%s/_search" % name, {
                "query": {"term": {"_id": "777"}}})
            self.assertEqual(st, 200, b)
            self.assertEqual([h["_id"] for h in b["hits"]["hits"]], ["777"])
            st, b, _ = self.srv.request("POST", "/%s/_search" % name, {
                "query": {"terms": {"_id": ["5", "6", "nope"]}}})
            self.assertEqual(sorted(h["_id"] for h in b["hits"]["hits"]), ["5", "6"])

    def test_get_by_id_is_the_converted_line(self):
        for name in INDICES:
            for line in (1, 2, 777, 5000, 9999, 10000):
                st, body, raw = self.srv.request("GET", "/%s/_source/%d" % (name, line))
                self.assertEqual(st, 200)
                self.assertEqual(raw.decode(), self.docs[line - 1])
                st, body, _ = self.srv.request("GET", "/%s/_doc/%d" % (name, line))
                self.assertEqual(st, 200)
                self.assertTrue(body["found"])
                self.assertEqual(body["_version"], 1)

    def test_zstd_not_larger_than_deflate(self):
        sizes = {}
        for name in INDICES:
            st, body, _ = self.srv.request("GET", "/%s/_stats/store" % name)
            self.assertEqual(st, 200)
            sizes[name] = body["_all"]["primaries"]["store"]["size_in_bytes"]
            self.assertGreater(sizes[name], 0)
        self.assertLessEqual(sizes["logs-zstd"], sizes["logs-deflate"], sizes)

    def test_settings_roundtrip(self):
        st, body, _ = self.srv.request("GET", "/logs-zstd/_settings")
        self.assertEqual(st, 200)
        self.assertEqual(body["logs-zstd"]["settings"]["index"]["codec"], "ZSTD")
        st, body, _ = self.srv.request("GET", "/logs-deflate/_settings?flat_settings=true")
        self.assertEqual(body["logs-deflate"]["settings"]["index.codec"],
                         "best_compression")

    def test_cat_indices(self):
        st, body, _ = self.srv.request("GET", "/_cat/indices?format=json&bytes=b&h=index,docs.count,codec,health")
        self.assertEqual(st, 200)
        rows = {r["index"]: r for r in body}
        for name, codec in INDICES.items():
            self.assertEqual(rows[name]["docs.count"], "10000")
            self.assertEqual(rows[name]["codec"], codec)
            self.assertEqual(rows[name]["health"], "green")


class Restart(unittest.TestCase):
    def test_restart_keeps_documents(self):
        srv = Server().start()
        try:
            # no background refresh: the count below must see only what the
            # explicit refresh made visible
            srv.request("PUT", "/r", {"settings": {"index.codec": "ZSTD",
                                                   "index.refresh_interval": "-1"}})
            docs = convert("json").decode().splitlines()[:500]
            bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, d)
                           for i, d in enumerate(docs))
            st, body, _ = srv.request("POST", "/r/_bulk?refresh=true", bulk)
            self.assertFalse(body["errors"])
            # and some that are acknowledged but not refreshed: the translog
            st, body, _ = srv.request("PUT", "/r/_doc/late", {"msg": "after refresh"})
            self.assertEqual(st, 201)
            srv.stop()
            srv.start()
            st, body, _ = srv.request("GET", "/r/_count")
            self.assertEqual(body["count"], 500)
            st, body, raw = srv.request("GET", "/r/_source/250")
            self.assertEqual(raw.decode(), docs[249])
            st, body, _ = srv.request("GET", "/r/_doc/late")
            self.assertEqual(st, 200)
            self.assertEqual(body["_source"], {"msg": "after refresh"})
            srv.request("POST", "/r/_refresh")
            st, body, _ = srv.request("GET", "/r/_count")
            self.assertEqual(body["count"], 501)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
