"""top_hits as Elasticsearch 8 answers it: the best hits of each bucket (the
"latest log line per host" dashboard panel), with size, from, sort,
_source filtering, docvalue_fields, fields, version, seq_no_primary_term,
stored_fields, track_scores, explain and highlight, merged over the
segments and shards of an index and over several indices; top_metrics,
answered from the same collection; and the 400s of what they do not
take.  Expected hits are worked out by brute force over the documents
(every sort key unique, so no tie decides an answer)."""
import json
import unittest

from fdsserver import ServerTestCase

HOSTS = ["web-1", "web-2", "db-1", "cache"]
T0 = 1767225600000  # 2026-01-01T00:00:00Z
HOUR = 3600000


def make_docs(n, seed):
    """n docs: host, t (unique ms), n (unique long), msg (text), lvl."""
    docs = []
    x = seed
    for i in range(n):
        x = (x * 1103515245 + 12345) % (1 << 31)
        docs.append({
            "host": HOSTS[x % len(HOSTS)],
            "t": T0 + (x % 7200) * 1000 + i,  # unique: i < 1000 ms
            "n": (x >> 8) % 100000 * 1000 + i,
            "msg": "request %s %s" % (["ok", "slow", "failed"][x % 3],
                                       "again" if x % 5 == 0 else ""),
            "lvl": ["info", "warn", "error"][(x >> 3) % 3],
        })
    return docs


def iso(ms):
    import datetime
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


MAPPING = {"properties": {"host": {"type": "keyword"}, "t": {"type": "date"},
                          "n": {"type": "long"}, "msg": {"type": "text"},
                          "lvl": {"type": "keyword"}}}


class TopHits(ServerTestCase):
    @classmethod
    def load(cls, name, docs, shards, parts):
        st, body, _ = cls.srv.request("PUT", "/" + name, {
            "settings": {"index": {"number_of_shards": shards}},
            "mappings": MAPPING})
        assert st == 200, body
        step = (len(docs) + parts - 1) // parts
        for p in range(parts):  # one bulk and refresh each: several segments
            lines = []
            for i in range(p * step, min(len(docs), (p + 1) * step)):
                d = dict(docs[i])
                d["t"] = iso(d["t"])
                lines.append(json.dumps({"index": {"_id": "%s-%d" % (name, i)}}))
                lines.append(json.dumps(d))
            st, body, _ = cls.srv.request("POST", "/%s/_bulk?refresh=true" % name,
                                          "\n".join(lines) + "\n",
                                          {"Content-Type": "application/x-ndjson"})
            assert st == 200 and not body["errors"], body

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.docs = {"th-a": make_docs(300, 7), "th-b": make_docs(120, 11)}
        cls.load("th-a", cls.docs["th-a"], 3, 3)
        cls.load("th-b", cls.docs["th-b"], 1, 2)

    def search(self, index, body, status=200):
        st, out, _ = self.req("POST", "/%s/_search" % index, body)
        self.assertEqual(st, status, out)
        return out

    def all_docs(self, indices):
        return [(ix, "%s-%d" % (ix, i), d) for ix in indices
                for i, d in enumerate(self.docs[ix])]

    def expect(self, docs, key, reverse, frm, size):
        docs = sorted(docs, key=lambda e: e[2][key], reverse=reverse)
        return docs[frm:frm + size]

    def test_latest_per_host(self):
        for indices in (["th-a"], ["th-b"], ["th-a", "th-b"]):
            out = self.search(",".join(indices), {"size": 0, "aggs": {"h": {
                "terms": {"field": "host", "order": {"_key": "asc"}},
                "aggs": {"last": {"top_hits": {
                    "size": 1, "sort": [{"t": {"order": "desc"}}],
                    "_source": {"includes": ["msg", "host"]}}}}}}})
            buckets = out["aggregations"]["h"]["buckets"]
            docs = self.all_docs(indices)
            self.assertEqual([b["key"] for b in buckets],
                             sorted({d["host"] for _, _, d in docs}))
            for b in buckets:
                mine = [e for e in docs if e[2]["host"] == b["key"]]
                (ix, did, d), = self.expect(mine, "t", True, 0, 1)
                th = b["last"]["hits"]
                self.assertEqual(th["total"], {"value": len(mine), "relation": "eq"})
                self.assertIsNone(th["max_score"])
                self.assertEqual(th["hits"], [{
                    "_index": ix, "_id": did, "_score": None,
                    "_source": {"host": d["host"], "msg": d["msg"]},
                    "sort": [d["t"]]}])

    def test_from_size_sort_by_long(self):
        for indices in (["th-a"], ["th-a", "th-b"]):
            for order, frm, size in (("asc", 0, 3), ("desc", 2, 5), ("asc", 7, 1),
                                     ("desc", 0, 0)):
                out = self.search(",".join(indices), {"size": 0, "aggs": {"h": {
                    "date_histogram": {"field": "t", "fixed_interval": "30m"},
                    "aggs": {"top": {"top_hits": {
                        "from": frm, "size": size, "_source": False,
                        "sort": [{"n": order}]}}}}}})
                docs = self.all_docs(indices)
                for b in out["aggregations"]["h"]["buckets"]:
                    mine = [e for e in docs if b["key"] <= e[2]["t"] < b["key"] + 1800000]
                    want = self.expect(mine, "n", order == "desc", frm, size)
                    got = b["top"]["hits"]["hits"]
                    self.assertEqual([(h["_index"], h["_id"], h["sort"]) for h in got],
                                     [(ix, did, [d["n"]]) for ix, did, d in want])
                    self.assertEqual(b["top"]["hits"]["total"]["value"], len(mine))
                    self.assertTrue(all("_source" not in h for h in got))

    def test_default_size_and_score(self):
        out = self.search("th-a,th-b", {"size": 0, "query": {"match": {"msg": "failed again"}},
                                        "aggs": {"top": {"top_hits": {}}}})
        th = out["aggregations"]["top"]["hits"]
        n = sum(1 for _, _, d in self.all_docs(["th-a", "th-b"])
                if "failed" in d["msg"] or "again" in d["msg"])
        self.assertEqual(th["total"]["value"], n)
        self.assertEqual(len(th["hits"]), 3)
        scores = [h["_score"] for h in th["hits"]]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(th["max_score"], scores[0])
        self.assertTrue(all("sort" not in h and "_source" in h for h in th["hits"]))
        # the page's best hit is the aggregation's best
        page = self.search("th-a,th-b", {"size": 1, "query": {"match": {"msg": "failed again"}}})
        self.assertEqual(page["hits"]["max_score"], th["max_score"])

    def test_track_scores_and_score_sort(self):
        body = {"size": 0, "query": {"match": {"msg": "slow"}}, "aggs": {"top": {
            "top_hits": {"size": 2, "sort": [{"t": "asc"}], "track_scores": True}}}}
        hits = self.search("th-a", body)["aggregations"]["top"]["hits"]
        self.assertIsNotNone(hits["max_score"])
        self.assertTrue(all(isinstance(h["_score"], float) for h in hits["hits"]))
        body["aggs"]["top"]["top_hits"] = {"size": 2, "sort": ["_score", {"t": "desc"}]}
        hits = self.search("th-a", body)["aggregations"]["top"]["hits"]["hits"]
        self.assertEqual(len(hits[0]["sort"]), 2)
        self.assertEqual(hits[0]["sort"][0], hits[0]["_score"])

    def test_hit_shape_options(self):
        out = self.search("th-b", {"size": 0, "aggs": {"top": {"top_hits": {
            "size": 1, "sort": [{"n": "desc"}], "version": True,
            "seq_no_primary_term": True, "docvalue_fields": ["lvl"],
            "fields": [{"field": "t", "format": "epoch_millis"}],
            "_source": ["host"]}}}})
        h, = out["aggregations"]["top"]["hits"]["hits"]
        (ix, did, d), = self.expect(self.all_docs(["th-b"]), "n", True, 0, 1)
        self.assertEqual((h["_id"], h["_version"], h["_primary_term"]), (did, 1, 1))
        self.assertIn("_seq_no", h)
        self.assertEqual(h["_source"], {"host": d["host"]})
        self.assertEqual(h["fields"]["lvl"], [d["lvl"]])
        self.assertEqual(h["fields"]["t"], [str(d["t"])])
        out = self.search("th-b", {"size": 0, "aggs": {"top": {"top_hits": {
            "size": 1, "sort": [{"n": "desc"}], "stored_fields": "_none_"}}}})
        h, = out["aggregations"]["top"]["hits"]["hits"]
        self.assertEqual(set(h), {"_index", "_score", "sort"})

    def test_explain(self):
        out = self.search("th-a", {"size": 1, "explain": True,
                                   "query": {"match": {"msg": "slow"}},
                                   "aggs": {"top": {"top_hits": {"size": 1, "explain": True}}}})
        h, = out["aggregations"]["top"]["hits"]["hits"]
        page, = out["hits"]["hits"]
        self.assertEqual((h["_id"], h["_score"]), (page["_id"], page["_score"]))
        self.assertEqual(h["_explanation"], page["_explanation"])
        out = self.search("th-a", {"size": 0, "aggs": {"top": {"top_hits": {"size": 1}}}})
        self.assertNotIn("_explanation", out["aggregations"]["top"]["hits"]["hits"][0])

    def test_highlight(self):
        out = self.search("th-b", {"size": 0, "query": {"match": {"msg": "failed"}},
                                   "aggs": {"top": {"top_hits": {
                                       "size": 1, "highlight": {"fields": {"msg": {}}}}}}})
        h, = out["aggregations"]["top"]["hits"]["hits"]
        self.assertIn("<em>failed</em>", h["highlight"]["msg"][0])

    def test_typed_keys_and_filters_parent(self):
        st, out, _ = self.req("POST", "/th-a/_search?typed_keys", {"size": 0, "aggs": {
            "f": {"filters": {"filters": {"e": {"term": {"lvl": "error"}},
                                          "w": {"term": {"lvl": "warn"}}}},
                  "aggs": {"top": {"top_hits": {"size": 2, "sort": [{"t": "asc"}]}}}}}})
        self.assertEqual(st, 200, out)
        bk = out["aggregations"]["filters#f"]["buckets"]
        for key, lvl in (("e", "error"), ("w", "warn")):
            mine = [e for e in self.all_docs(["th-a"]) if e[2]["lvl"] == lvl]
            got = bk[key]["top_hits#top"]["hits"]["hits"]
            self.assertEqual([h["_id"] for h in got],
                             [did for _, did, _ in self.expect(mine, "t", False, 0, 2)])

    def test_empty_composite_unmapped(self):
        out = self.search("th-a", {"size": 0, "query": {"term": {"host": "nope"}},
                                   "aggs": {"top": {"top_hits": {}}}})
        self.assertEqual(out["aggregations"]["top"], {"hits": {
            "total": {"value": 0, "relation": "eq"}, "max_score": None, "hits": []}})
        out = self.search("th-a", {"size": 0, "aggs": {"c": {
            "composite": {"sources": [{"h": {"terms": {"field": "host"}}}], "size": 2},
            "aggs": {"top": {"top_hits": {"size": 1, "_source": False, "sort": [
                {"nosuch": {"order": "asc", "unmapped_type": "long"}}, {"t": "desc"}]}}}}}})
        for b in out["aggregations"]["c"]["buckets"]:
            mine = [e for e in self.all_docs(["th-a"]) if e[2]["host"] == b["key"]["h"]]
            (ix, did, d), = self.expect(mine, "t", True, 0, 1)
            h, = b["top"]["hits"]["hits"]
            self.assertEqual((h["_id"], h["sort"]), (did, [None, d["t"]]))

    def test_top_metrics(self):
        # top_metrics: the metrics of the best docs by one sort key, merged
        # over segments, shards and indices; date sort values as text
        for indices in (["th-a"], ["th-a", "th-b"]):
            out = self.search(",".join(indices), {"size": 0, "aggs": {"h": {
                "terms": {"field": "host", "order": {"_key": "asc"}},
                "aggs": {"m": {"top_metrics": {
                    "metrics": [{"field": "n"}, {"field": "lvl"}, {"field": "t"}],
                    "sort": {"t": "desc"}, "size": "2"}}}}}})
            docs = self.all_docs(indices)
            for b in out["aggregations"]["h"]["buckets"]:
                mine = [e for e in docs if e[2]["host"] == b["key"]]
                want = self.expect(mine, "t", True, 0, 2)
                self.assertEqual(b["m"], {"top": [
                    {"sort": [iso(d["t"])],
                     "metrics": {"n": d["n"], "lvl": d["lvl"], "t": iso(d["t"])}}
                    for _, _, d in want]})
        out = self.search("th-b", {"size": 0, "aggs": {"m": {"top_metrics": {
            "metrics": {"field": "missing_field"}, "sort": [{"n": {"order": "asc"}}]}}}})
        d = min(self.docs["th-b"], key=lambda d: d["n"])
        self.assertEqual(out["aggregations"]["m"],
                         {"top": [{"sort": [d["n"]], "metrics": {"missing_field": None}}]})
        st, out, _ = self.req("POST", "/th-a/_search?typed_keys", {"size": 0, "aggs": {
            "m": {"top_metrics": {"metrics": {"field": "n"}, "sort": {"n": "asc"}}}}})
        self.assertEqual(st, 200, out)
        self.assertIn("top_metrics#m", out["aggregations"])

    def test_refused(self):
        for kind, th, etype, part in (
                ("top_hits", {"script_fields": {"x": {"script": "1"}}},
                 "illegal_argument_exception", "script_fields"),
                ("top_hits", {"query": {"match_all": {}}}, "x_content_parse_exception",
                 "[top_hits] unknown field [query]"),
                ("top_hits", {"size": 90, "from": 11}, "illegal_argument_exception",
                 "Top hits result window is too large"),
                ("top_metrics", {"metrics": {"field": "n"}, "size": 11},
                 "illegal_argument_exception",
                 "[top_metrics.size] must not be more than [10]"),
                ("top_metrics", {"sort": {"n": "asc"}}, "illegal_argument_exception",
                 "[metrics]"),
                ("top_metrics", {"metrics": {"field": "n"},
                                 "sort": [{"n": "asc"}, {"t": "asc"}]},
                 "illegal_argument_exception", "single field"),
                ("top_metrics", {"metrics": {"field": "n"}, "from": 1},
                 "x_content_parse_exception", "[top_metrics] unknown field [from]")):
            st, out, _ = self.req("POST", "/th-a/_search", {"size": 0, "aggs": {
                "top": {kind: th}}})
            self.assertEqual(st, 400, out)
            self.assertEqual(out["error"]["type"], etype, out)
            self.assertIn(part, out["error"]["reason"])
        st, out, _ = self.req("POST", "/th-a/_search", {"size": 0, "aggs": {
            "top": {"top_hits": {}, "aggs": {"x": {"max": {"field": "n"}}}}}})
        self.assertEqual(st, 400, out)
        self.assertIn("cannot accept sub-aggregations", out["error"]["reason"])


if __name__ == "__main__":
    unittest.main()
