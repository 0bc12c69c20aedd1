"""_reindex as Elasticsearch 8 takes it: source._source, source.sort with
max_docs, max_docs with conflicts=proceed, dest.version_type, dest.routing
(keep, discard, =value), requests_per_second as a real rate limit, and the
validation errors in Elasticsearch's words (remote, slices, max_docs,
conflicts, from, stored_fields, _source: false, dest.pipeline)."""
import http.client
import json
import time

from fdsserver import ServerTestCase


class Reindex(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lines = []
        for i in range(40):
            meta = {"_index": "rs", "_id": str(i)}
            if i % 4 == 0:
                meta["routing"] = "k%d" % (i % 3)
            lines.append(json.dumps({"index": meta}))
            lines.append(json.dumps({"n": i, "order": 40 - i, "drop": "x", "keep": {"a": i}}))
        st, b, _ = cls.srv.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                   headers={"Content-Type": "application/x-ndjson"})
        assert st == 200 and not b["errors"], b

    def reindex(self, body, query=""):
        return self.req("POST", "/_reindex?refresh=true" + query, body)

    def test_source_filter_and_sort(self):
        st, b, _ = self.reindex({"source": {"index": "rs", "_source": {"excludes": ["drop"]}},
                                 "dest": {"index": "f1"}})
        self.assertEqual((st, b["created"]), (200, 40), b)
        st, d, _ = self.req("GET", "/f1/_doc/3")
        self.assertEqual(d["_source"], {"n": 3, "order": 37, "keep": {"a": 3}})
        st, b, _ = self.reindex({"source": {"index": "rs", "_source": ["keep.a"]},
                                 "dest": {"index": "f2"}})
        self.assertEqual(self.req("GET", "/f2/_doc/5")[1]["_source"], {"keep": {"a": 5}})
        # sort with max_docs: the first documents of that order
        st, b, _ = self.reindex({"max_docs": 3, "source": {"index": "rs", "sort": "order",
                                                            "size": 2},
                                 "dest": {"index": "f3"}})
        self.assertEqual((st, b["created"], b["batches"]), (200, 3, 2), b)
        st, s, _ = self.req("GET", "/f3/_search", {"sort": "n"})
        self.assertEqual([h["_id"] for h in s["hits"]["hits"]], ["37", "38", "39"])

    def test_deprecation_warnings(self):
        """Elasticsearch's Warning headers for source.sort and the body's
        size; none for a request without them."""
        def warnings(body):
            c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30)
            c.request("POST", "/_reindex?refresh=true", json.dumps(body),
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            r.read()
            c.close()
            return r.status, [v for k, v in r.getheaders() if k.lower() == "warning"]
        st, w = warnings({"size": 1, "source": {"index": "rs", "sort": "order"},
                          "dest": {"index": "w1"}})
        self.assertEqual(st, 200)
        self.assertEqual(w, [
            '299 Elasticsearch-8.11.0 "Deprecated field [size] used, expected [max_docs] instead"',
            '299 Elasticsearch-8.11.0 "The sort option in reindex is deprecated. Instead '
            'consider using query filtering to find the desired subset of data."'])
        self.assertEqual(warnings({"source": {"index": "rs"}, "dest": {"index": "w2"}}),
                         (200, []))

    def test_max_docs_with_conflicts_proceed(self):
        self.reindex({"source": {"index": "rs", "query": {"range": {"n": {"lt": 5}}}},
                      "dest": {"index": "m1"}})
        # the first five conflict; max_docs counts the ones written
        st, b, _ = self.reindex({"max_docs": 10, "conflicts": "proceed",
                                 "source": {"index": "rs", "sort": "n"},
                                 "dest": {"index": "m1", "op_type": "create"}})
        self.assertEqual((st, b["created"], b["version_conflicts"]), (200, 10, 5), b)
        self.assertEqual(self.req("GET", "/m1/_count")[1]["count"], 15)

    def test_version_type_and_routing(self):
        self.req("PUT", "/v1/_doc/1?version=5&version_type=external&refresh=true", {"old": 1})
        st, b, _ = self.reindex({"source": {"index": "rs"}, "conflicts": "proceed",
                                 "dest": {"index": "v1", "version_type": "external"}})
        # the source's version 1 is below 5: that one is a conflict, kept
        self.assertEqual((b["created"], b["version_conflicts"]), (39, 1), b)
        self.assertEqual(self.req("GET", "/v1/_doc/1")[1]["_source"], {"old": 1})
        self.assertEqual(self.req("GET", "/v1/_doc/2")[1]["_version"], 1)
        # external_gte: an equal version is written again, a lower one not
        self.req("PUT", "/v2/_doc/1?version=1&version_type=external&refresh=true", {"old": 1})
        self.req("PUT", "/v2/_doc/2?version=2&version_type=external&refresh=true", {"old": 2})
        st, b, _ = self.reindex({"source": {"index": "rs"}, "conflicts": "proceed",
                                 "dest": {"index": "v2", "version_type": "external_gte"}})
        self.assertEqual((b["created"], b["updated"], b["version_conflicts"]), (38, 1, 1), b)
        self.assertEqual(self.req("GET", "/v2/_doc/1")[1]["_source"]["n"], 1)
        self.assertEqual(self.req("GET", "/v2/_doc/2")[1]["_source"], {"old": 2})
        st, b, _ = self.reindex({"source": {"index": "rs"},
                                 "dest": {"index": "v1", "version_type": "internal"}})
        self.assertEqual(b["updated"], 39 + 1, b)
        self.assertEqual(self.req("GET", "/v1/_doc/1")[1]["_version"], 6)
        # dest.routing
        self.reindex({"source": {"index": "rs"}, "dest": {"index": "r1", "routing": "discard"}})
        st, d, _ = self.req("GET", "/r1/_doc/4")
        self.assertEqual((st, "_routing" in d), (200, False))
        self.reindex({"source": {"index": "rs"}, "dest": {"index": "r2", "routing": "=zz"}})
        self.assertEqual(self.req("GET", "/r2/_doc/5?routing=zz")[1]["_routing"], "zz")
        self.reindex({"source": {"index": "rs"}, "dest": {"index": "r3"}})
        self.assertEqual(self.req("GET", "/r3/_doc/4?routing=k1")[1]["_routing"], "k1")

    def test_slices(self):
        lines = []
        for i in range(120):
            lines.append(json.dumps({"index": {"_index": "sl", "_id": str(i)}}))
            lines.append(json.dumps({"n": i}))
        self.req("PUT", "/sl", {"settings": {"number_of_shards": 4}})
        self.req("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                 headers={"Content-Type": "application/x-ndjson"})
        st, shards, _ = self.req("GET", "/_cat/shards/sl?format=json")
        per_shard = sorted(int(r["docs"]) for r in shards)
        # auto: one slice a shard, each on its own thread
        st, b, _ = self.reindex({"source": {"index": "sl", "size": 7}, "dest": {"index": "sl1"}},
                                "&slices=auto")
        self.assertEqual((st, b["created"], len(b["slices"])), (200, 120, 4), b)
        self.assertEqual(sorted(s["created"] for s in b["slices"]), per_shard)
        self.assertEqual([s["slice_id"] for s in b["slices"]], [0, 1, 2, 3])
        self.assertEqual(self.req("GET", "/sl1/_count")[1]["count"], 120)
        # two slices of two shards each; max_docs divided between them
        st, b, _ = self.reindex({"max_docs": 9, "source": {"index": "sl"},
                                 "dest": {"index": "sl2"}}, "&slices=2")
        self.assertEqual((b["created"], [s["total"] for s in b["slices"]]), (9, [5, 4]), b)
        # by-query too
        st, b, _ = self.req("POST", "/sl1/_delete_by_query?refresh=true&slices=1",
                            {"query": {"range": {"n": {"lt": 60}}}})
        self.assertEqual((b["deleted"], "slices" in b), (60, False))
        self.assertError(self.req("POST", "/_reindex?slices=5", {
            "source": {"index": "sl"}, "dest": {"index": "sl3"}}), 400,
            "illegal_argument_exception")

    def test_requests_per_second(self):
        t0 = time.time()
        st, b, _ = self.reindex({"source": {"index": "rs", "size": 10}, "dest": {"index": "t1"}},
                                "&requests_per_second=40")
        took = time.time() - t0
        self.assertEqual((st, b["created"], b["requests_per_second"]), (200, 40, 40), b)
        # 40 documents at 40 a second: the last batch waits until 1 s
        self.assertGreaterEqual(took, 0.9)
        self.assertGreater(b["throttled_millis"], 500)

    def test_errors(self):
        body = {"source": {"index": "rs"}, "dest": {"index": "e1"}}
        for q, b, etype, reason in (
                ("?requests_per_second=0", body, "illegal_argument_exception",
                 "[requests_per_second] must be a float greater than 0. Use -1 to disable throttling."),
                ("?slices=junk", body, "illegal_argument_exception",
                 '[slices] must be a positive integer or the string "auto"'),
                ("?max_docs=1&slices=2", body, "action_request_validation_exception",
                 "Validation Failed: 1: [max_docs] should be >= [slices];"),
                ("?max_docs=-4", body, "illegal_argument_exception",
                 "[max_docs] parameter cannot be negative, found [-4]"),
                ("?max_docs=5", dict(body, max_docs=4), "illegal_argument_exception",
                 "[max_docs] set to two different values [4] and [5]"),
                ("", dict(body, conflicts="cat"), "illegal_argument_exception",
                 'conflicts may only be "proceed" or "abort" but was [cat]'),
                ("", {"dest": {}}, "action_request_validation_exception",
                 "Validation Failed: 1: use _all if you really want to copy from all "
                 "existing indexes;2: index must be specified;"),
                ("", {"source": {"index": "rs", "from": 1, "stored_fields": ["_id"]},
                      "dest": {"index": "e1"}}, "action_request_validation_exception",
                 "Validation Failed: 1: from is not supported in this context;"
                 "2: stored_fields is not supported in this context;"),
                ("", {"source": {"index": "rs", "_source": False}, "dest": {"index": "e1"}},
                 "action_request_validation_exception",
                 "Validation Failed: 1: _source:false is not supported in this context;"),
                ("", {"source": {"junk": {}}}, "parsing_exception",
                 "Unknown key for a START_OBJECT in [junk]."),
                ("", {"source": {"index": "rs", "remote": {"host": "badremote"}},
                      "dest": {"index": "e1"}}, "illegal_argument_exception",
                 "[host] must be of the form [scheme]://[host]:[port](/[pathPrefix])? but was [badremote]"),
                ("", {"source": {"index": "rs", "remote": {"host": "http://h:9200", "weird": 1}},
                      "dest": {"index": "e1"}}, "illegal_argument_exception",
                 "Unsupported fields in [remote]: [weird]"),
                ("", {"source": {"index": "rs", "remote": {"host": "http://h:9200",
                                                           "socket_timeout": "10"}},
                      "dest": {"index": "e1"}}, "parse_exception",
                 "failed to parse setting [socket_timeout] with value [10] as a time value: "
                 "unit is missing or unrecognized"),
                ("", dict(body, dest={"index": "e1", "pipeline": "p"}),
                 "illegal_argument_exception", None),
                ("", dict(body, dest={"index": "e1", "version_type": "force"}),
                 "illegal_argument_exception", "No version type match [force]"),
                ("", dict(body, dest={"index": "e1", "routing": "bad"}),
                 "illegal_argument_exception", None)):
            self.assertError(self.req("POST", "/_reindex" + q, b), 400, etype, reason)
        b = self.assertError(self.req("POST", "/_reindex", {
            "source": {"index": "rs", "remote": {"host": "http://other:9200"}},
            "dest": {"index": "e1"}}), 400, "illegal_argument_exception")
        self.assertIn("[other:9200] not whitelisted in reindex.remote.whitelist",
                      b["error"]["reason"])
        b = self.assertError(self.req("POST", "/_reindex", {
            "source": {"index": "rs", "remote": {"host": "http://h:9200",
                                                 "connect_timeout": "borked"}},
            "dest": {"index": "e1"}}), 400, "parse_exception", "failed to parse [borked]")
        self.assertEqual(b["error"]["caused_by"], {"type": "number_format_exception",
                                                   "reason": 'For input string: "borke"'})
        self.assertEqual(self.req("HEAD", "/e1")[0], 404)
