"""Indices of several shards, as Elasticsearch 8 keeps them: documents
routed by Murmur3 of `_routing` (default `_id`) to index.number_of_shards
shards, each with its own segments; `routing` on writes, gets and
searches; searches over every shard (or the routed ones) giving the same
totals and matches as a one-shard index of the same documents; shard counts
in `_cat/shards`, `_cat/indices`, `_stats` and `_cluster/health`; shards
kept across a restart and force-merged each on its own."""
import json
import unittest

from fdsserver import Server, ServerTestCase

NDOCS = 1000
WORDS = ["alpha", "beta", "gamma", "delta", "omega"]


def doc(i):
    return {"n": i, "msg": "%s %s" % (WORDS[i % 5], WORDS[(i * 7) % 5]),
            "status": 200 if i % 4 else 404}


class Shards(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for name, shards in (("one", 1), ("five", 5)):
            st, b, _ = cls.srv.request("PUT", "/" + name, {
                "settings": {"number_of_shards": shards, "refresh_interval": "-1"}})
            assert st == 200, b
            lines = []
            for i in range(NDOCS):
                lines.append(json.dumps({"index": {"_id": str(i)}}))
                lines.append(json.dumps(doc(i)))
            st, b, _ = cls.srv.request("POST", "/%s/_bulk?refresh=true" % name,
                                       "\n".join(lines) + "\n",
                                       {"Content-Type": "application/x-ndjson"})
            assert st == 200 and not b["errors"], str(b)[:300]

    def search(self, path, body):
        st, b, _ = self.req("POST", path, body)
        self.assertEqual(st, 200, b)
        return b

    def test_settings(self):
        s = self.req("GET", "/five/_settings?flat_settings=true&include_defaults=true")[1]
        self.assertEqual(s["five"]["settings"]["index.number_of_shards"], "5")
        self.assertEqual(s["five"]["defaults"]["index.number_of_routing_shards"], "640")
        st, b, _ = self.req("PUT", "/five/_settings", {"index.number_of_shards": 2})
        self.assertEqual(st, 400, b)
        self.assertError(self.req("PUT", "/bad", {"settings": {
            "number_of_shards": 2, "number_of_routing_shards": 3}}),
            400, "illegal_argument_exception",
            "the number of source shards [2] must be a factor of [3]")
        st, b, _ = self.req("PUT", "/rs", {"settings": {
            "number_of_shards": 2, "number_of_routing_shards": 8}})
        self.assertEqual(st, 200, b)
        s = self.req("GET", "/rs/_settings?flat_settings=true")[1]
        self.assertEqual(s["rs"]["settings"]["index.number_of_routing_shards"], "8")
        self.assertEqual(self.req("DELETE", "/rs")[0], 200)

    def test_docs_spread_over_shards(self):
        rows = self.req("GET", "/_cat/shards/five?format=json")[1]
        self.assertEqual([r["shard"] for r in rows], ["0", "1", "2", "3", "4"])
        docs = [int(r["docs"]) for r in rows]
        self.assertEqual(sum(docs), NDOCS)
        self.assertTrue(all(d > 0 for d in docs), docs)
        self.assertTrue(all(r["state"] == "STARTED" and r["prirep"] == "p"
                            for r in rows))
        segs = self.req("GET", "/_cat/segments/five?format=json")[1]
        self.assertEqual(sorted({s["shard"] for s in segs}), ["0", "1", "2", "3", "4"])
        ind = self.req("GET", "/_cat/indices/five?format=json&h=pri,docs.count")[1]
        self.assertEqual(ind, [{"pri": "5", "docs.count": str(NDOCS)}])
        health = self.req("GET", "/_cluster/health/five?level=shards")[1]
        self.assertEqual(health["active_primary_shards"], 5)
        self.assertEqual(len(health["indices"]["five"]["shards"]), 5)
        self.assertEqual(self.req("GET", "/five/_stats")[1]["_shards"]["total"], 5)

    def test_pages_aggs_and_alias_filters_over_shards(self):
        """Every shard of an index runs the request parsed once for the
        index: a deep page (from + size widened on each shard), aggregations
        and a filtered alias's clause give what one shard gives."""
        page = {"query": {"match_all": {}}, "from": 37, "size": 11,
                "sort": [{"n": "asc"}]}
        self.assertEqual([h["_id"] for h in self.search("/five/_search", page)["hits"]["hits"]],
                         [str(i) for i in range(37, 48)])
        aggs = {"size": 0, "aggs": {"s": {"terms": {"field": "status", "size": 10}},
                                    "n": {"stats": {"field": "n"}}}}
        a1 = self.search("/one/_search", aggs)["aggregations"]
        a5 = self.search("/five/_search", aggs)["aggregations"]
        self.assertEqual(a1["s"]["buckets"], a5["s"]["buckets"])
        self.assertEqual(a1["n"], a5["n"])
        for name in ("one", "five"):
            st, b, _ = self.req("POST", "/_aliases", {"actions": [{"add": {
                "index": name, "alias": name + "-404",
                "filter": {"term": {"status": 404}}}}]})
            self.assertEqual(st, 200, b)
        try:
            want = self.search("/one/_count", {"query": {"term": {"status": 404}}})["count"]
            self.assertGreater(want, 0)
            for name in ("one", "five"):
                got = self.search("/%s-404/_search" % name,
                                  {"size": NDOCS, "query": {"match_all": {}}})
                self.assertEqual(got["hits"]["total"]["value"], want, name)
                self.assertTrue(all(h["_source"]["status"] == 404
                                    for h in got["hits"]["hits"]), name)
        finally:
            for name in ("one", "five"):
                self.req("DELETE", "/%s/_alias/%s-404" % (name, name))

    def test_search_and_count_match_one_shard(self):
        for q in ({"match": {"msg": "alpha"}}, {"term": {"status": 404}},
                  {"match_all": {}},
                  {"bool": {"must": [{"match": {"msg": "beta"}}],
                            "filter": [{"range": {"n": {"gte": 100, "lt": 700}}}]}}):
            body = {"query": q, "size": 50, "sort": [{"n": "desc"}]}
            one = self.search("/one/_search", body)
            five = self.search("/five/_search", body)
            self.assertEqual(five["_shards"], {"total": 5, "successful": 5,
                                               "skipped": 0, "failed": 0})
            self.assertEqual(one["hits"]["total"], five["hits"]["total"], q)
            self.assertEqual([h["_id"] for h in one["hits"]["hits"]],
                             [h["_id"] for h in five["hits"]["hits"]], q)
            # scores are per shard (BM25 statistics): the same set of matches
            big = {"query": q, "size": NDOCS}
            hits = self.search("/five/_search", big)["hits"]["hits"]
            self.assertEqual(
                sorted(h["_id"] for h in self.search("/one/_search", big)["hits"]["hits"]),
                sorted(h["_id"] for h in hits))
            # each hit's _source is its own (fetched from its shard)
            self.assertTrue(all(h["_source"] == doc(int(h["_id"])) for h in hits))
            c1 = self.search("/one/_count", {"query": q})["count"]
            c5 = self.search("/five/_count", {"query": q})
            self.assertEqual(c1, c5["count"])
            self.assertEqual(c5["_shards"]["total"], 5)
        # a page deep into the sorted list, merged over shards
        body = {"query": {"match_all": {}}, "from": 480, "size": 20, "sort": ["n"]}
        self.assertEqual([h["_source"]["n"] for h in
                          self.search("/five/_search", body)["hits"]["hits"]],
                         list(range(480, 500)))
        # both indices at once: 6 shards
        b = self.search("/one,five/_search", {"size": 0})
        self.assertEqual(b["_shards"]["total"], 6)
        self.assertEqual(b["hits"]["total"]["value"], 2 * NDOCS)

    def test_routing_narrows_search(self):
        b = self.search("/five/_search?routing=7", {"size": 0})
        self.assertEqual(b["_shards"]["total"], 1)
        ids = {h["_id"] for h in self.search(
            "/five/_search?routing=7", {"size": NDOCS})["hits"]["hits"]}
        self.assertIn("7", ids)  # routed by its id: in the shard of "7"
        self.assertLess(len(ids), NDOCS)
        rows = self.req("GET", "/_cat/shards/five?format=json")[1]
        self.assertIn(str(len(ids)), [r["docs"] for r in rows])
        c = self.search("/five/_count?routing=7,8,9,10,11,12", {})
        self.assertLessEqual(c["_shards"]["total"], 5)
        ss = self.req("GET", "/five/_search_shards?routing=7")[1]
        self.assertEqual(len(ss["shards"]), 1)

    def test_get_delete_update_with_and_without_routing(self):
        st, b, _ = self.req("PUT", "/five/_doc/r1?routing=user7&refresh=true",
                            {"n": -1, "msg": "routed"})
        self.assertEqual(st, 201, b)
        # only with its routing (unless "user7" and "r1" share a shard)
        shard_r = self.search("/five/_search_shards?routing=user7", {})
        shard_i = self.search("/five/_search_shards?routing=r1", {})
        differ = shard_r["shards"] != shard_i["shards"]
        if differ:
            self.assertEqual(self.req("GET", "/five/_doc/r1")[0], 404)
        got = self.req("GET", "/five/_doc/r1?routing=user7")[1]
        self.assertEqual(got["_source"]["msg"], "routed")
        self.assertEqual(got["_routing"], "user7")
        got = self.req("GET", "/five/_doc/r1?routing=user7&stored_fields=_routing")[1]
        self.assertEqual((got["_routing"], "_source" in got), ("user7", False))
        self.assertNotIn("_routing", self.req("GET", "/five/_doc/42")[1])
        hits = self.search("/five/_search?routing=user7",
                           {"query": {"ids": {"values": ["r1", "42"]}}})["hits"]["hits"]
        self.assertEqual([(h["_id"], h.get("_routing")) for h in hits], [("r1", "user7")])
        hits = self.search("/five/_search", {"query": {"ids": {"values": ["r1", "42"]}},
                                             "sort": ["n"]})["hits"]["hits"]
        self.assertEqual([(h["_id"], h.get("_routing")) for h in hits],
                         [("r1", "user7"), ("42", None)])
        st, b, _ = self.req("POST", "/five/_update/r1?routing=user7",
                            {"doc": {"msg": "updated"}})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.req("GET", "/five/_doc/r1?routing=user7")[1]
                         ["_source"]["msg"], "updated")
        mg = self.req("POST", "/five/_mget", {"docs": [
            {"_id": "r1", "routing": "user7"}, {"_id": "5"}]})[1]
        self.assertEqual([d["found"] for d in mg["docs"]], [True, True])
        self.assertEqual(mg["docs"][0]["_routing"], "user7")
        # bulk items with their own routing
        lines = [json.dumps({"index": {"_id": "b1", "routing": "user7"}}),
                 json.dumps({"n": -2}),
                 json.dumps({"delete": {"_id": "r1", "routing": "user7"}})]
        b = self.req("POST", "/five/_bulk?refresh=true", "\n".join(lines) + "\n",
                     {"Content-Type": "application/x-ndjson"})[1]
        self.assertFalse(b["errors"], b)
        self.assertEqual(b["items"][1]["delete"]["result"], "deleted")
        self.assertEqual(self.req("GET", "/five/_doc/r1?routing=user7")[0], 404)
        self.assertEqual(self.req("GET", "/five/_doc/b1?routing=user7")[0], 200)
        self.assertEqual(self.req("DELETE", "/five/_doc/b1?routing=user7&refresh=true")[0],
                         200)
        # by id alone: the id's shard
        self.assertEqual(self.req("GET", "/five/_doc/42")[1]["_source"], doc(42))
        self.assertEqual(self.req("DELETE", "/five/_doc/999?refresh=true")[0], 200)
        self.assertEqual(self.req("GET", "/five/_doc/999")[0], 404)
        self.assertEqual(self.search("/five/_count", {})["count"], NDOCS - 1)
        self.assertEqual(self.req("PUT", "/five/_doc/999?refresh=true", doc(999))[0], 201)

    def test_reindex_keeps_routing(self):
        self.req("PUT", "/rx", {"settings": {"number_of_shards": 3}})
        self.req("PUT", "/rx/_doc/k1?routing=user9&refresh=true", {"n": 1})
        st, b, _ = self.req("PUT", "/rx2", {"settings": {"number_of_shards": 3}})
        st, b, _ = self.req("POST", "/_reindex?refresh=true",
                            {"source": {"index": "rx"}, "dest": {"index": "rx2"}})
        self.assertEqual((st, b["created"]), (200, 1), b)
        self.assertEqual(self.req("GET", "/rx2/_doc/k1?routing=user9")[1]["_routing"],
                         "user9")
        for name in ("rx", "rx2"):
            self.req("DELETE", "/" + name)

    def test_seq_no_unique_across_shards(self):
        seqs = set()
        for i in range(20):
            b = self.req("PUT", "/five/_doc/s%d" % i, {"n": i})[1]
            seqs.add(b["_seq_no"])
        self.assertEqual(len(seqs), 20)
        for i in range(20):
            self.req("DELETE", "/five/_doc/s%d" % i)
        self.req("POST", "/five/_refresh")


class ShardsRestart(unittest.TestCase):
    def test_restart_and_forcemerge(self):
        srv = Server().start()
        try:
            srv.request("PUT", "/p", {"settings": {"number_of_shards": 3,
                                                   "refresh_interval": "-1"}})
            for part in range(3):
                lines = []
                for i in range(part * 100, part * 100 + 100):
                    lines.append(json.dumps({"index": {"_id": str(i)}}))
                    lines.append(json.dumps(doc(i)))
                srv.request("POST", "/p/_bulk?refresh=true", "\n".join(lines) + "\n",
                            {"Content-Type": "application/x-ndjson"})
            srv.request("PUT", "/p/_doc/t1?routing=x", {"n": 1})  # translog only
            before = srv.request("GET", "/_cat/shards/p?format=json")[1]
            self.assertEqual(len(srv.request("GET", "/_cat/segments/p?format=json")[1]), 9)
            srv.stop()
            srv.start()
            after = srv.request("GET", "/_cat/shards/p?format=json")[1]
            self.assertEqual([r["docs"] for r in before], [r["docs"] for r in after])
            self.assertEqual(srv.request("GET", "/p/_doc/t1?routing=x")[1]["_routing"], "x")
            self.assertEqual(srv.request("POST", "/p/_forcemerge?max_num_segments=1")[1]
                             ["_shards"]["total"], 3)
            segs = srv.request("GET", "/_cat/segments/p?format=json")[1]
            self.assertEqual(sorted(s["shard"] for s in segs), ["0", "1", "2"])
            self.assertEqual(srv.request("POST", "/p/_count", {})[1]["count"], 301)
            self.assertEqual(srv.request("GET", "/p/_doc/t1?routing=x")[1]["_routing"], "x")
            srv.kill9()
            srv.start()
            self.assertEqual(srv.request("POST", "/p/_count", {})[1]["count"], 301)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
