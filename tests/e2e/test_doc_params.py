"""Mapping parameters that act on the document side, as Elasticsearch 8
applies them: `_source: {enabled: false}` (indexed, searchable and
aggregatable, doc values kept, no `_source` in any answer, updates and
re-indexing refused), objects with `enabled: false` (kept in `_source`,
never parsed or mapped), `null_value` (a null indexes as the value, the
source keeps null) and `copy_to` (values indexed into other fields, not
transitively, never into an object)."""
import json
import os
import unittest

from fdsserver import ServerTestCase, convert

MAPPING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "datasets", "nginx-mapping.json")
NDJSON = {"Content-Type": "application/x-ndjson"}


class SourceDisabled(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, out, _ = cls.srv.request("PUT", "/nosrc", {"mappings": {
            "_source": {"enabled": False},
            "properties": {"k": {"type": "keyword", "null_value": "NONE"},
                           "t": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
                           "n": {"type": "long"}, "d": {"type": "date"}}}})
        assert st == 200, out

    def test_get_mget_and_source(self):
        doc = {"k": ["b", "a", None], "t": "hello world", "n": 5, "d": "2026-12-01"}
        self.assertEqual(self.req("PUT", "/nosrc/_doc/1", doc)[0], 201)
        for refreshed in (False, True):  # from the buffer, then from a segment
            st, out, _ = self.req("GET", "/nosrc/_doc/1?_source_includes=k")
            self.assertEqual((st, out["found"]), (200, True), out)
            self.assertNotIn("_source", out)
            if not refreshed:
                self.req("POST", "/nosrc/_refresh")
        self.assertError(self.req("GET", "/nosrc/_source/1"), 404,
                         "resource_not_found_exception", "Source not found [nosrc]/[1]")
        self.assertEqual(self.req("HEAD", "/nosrc/_source/1")[0], 404)
        self.assertEqual(self.req("HEAD", "/nosrc/_doc/1")[0], 200)
        out = self.req("POST", "/_mget", {"docs": [{"_index": "nosrc", "_id": "1"},
                                                   {"_index": "nosrc", "_id": "2"}]})[1]
        self.assertEqual([d["found"] for d in out["docs"]], [True, False])
        self.assertNotIn("_source", out["docs"][0])

    def test_search_docvalues_and_refusals(self):
        self.req("POST", "/_bulk?refresh=true",
                 '{"index":{"_index":"nosrc","_id":"s1"}}\n'
                 '{"k":["z","y",null],"t":"search me","n":7}\n'
                 '{"index":{"_index":"nosrc","_id":"s2"}}\n{"t":"only text"}\n', NDJSON)
        st, out, _ = self.req("POST", "/nosrc/_search", {
            "query": {"match": {"t": "search"}},
            "docvalue_fields": ["k", "n", "t.raw"], "fields": ["k", "t"],
            "highlight": {"fields": {"t": {}}}, "aggs": {"n": {"terms": {"field": "n"}}}})
        self.assertEqual(st, 200, out)
        hit = out["hits"]["hits"][0]
        self.assertNotIn("_source", hit)
        self.assertNotIn("highlight", hit)
        # doc values in doc-value order, the null as its null_value; `fields`
        # reads `_source` and has nothing (Elasticsearch 8.3+)
        self.assertEqual(hit["fields"], {"k": ["NONE", "y", "z"], "n": [7],
                                         "t.raw": ["search me"]})
        self.assertEqual([b["key"] for b in out["aggregations"]["n"]["buckets"]], [7])
        st, out, _ = self.req("POST", "/nosrc/_count", {"query": {"term": {"k": "NONE"}}})
        self.assertGreaterEqual(out["count"], 1)
        reason = ("unable to fetch fields from _source field: _source is disabled "
                  "in the mappings for index [nosrc]")
        for body in ({"_source": ["k"]}, {"_source": {"excludes": ["t"]}}):
            self.assertError(self.req("POST", "/nosrc/_search", body), 400,
                             "illegal_argument_exception", reason)
        self.assertEqual(self.req("POST", "/nosrc/_search", {"_source": True})[0], 200)
        self.assertError(self.req("POST", "/nosrc/_update/s1", {"doc": {"n": 8}}), 400,
                         "document_source_missing_exception", "[s1]: document source missing")
        out = self.req("POST", "/_bulk", '{"update":{"_index":"nosrc","_id":"s1"}}\n'
                       '{"doc":{"n":8}}\n', NDJSON)[1]
        self.assertEqual(out["items"][0]["update"]["error"]["type"],
                         "document_source_missing_exception")
        # an upsert of a missing document has no source to miss
        st, out, _ = self.req("POST", "/nosrc/_update/new?refresh=true",
                              {"doc": {"n": 1}, "doc_as_upsert": True})
        self.assertEqual((st, out.get("result")), (201, "created"), out)
        out = self.assertError(self.req("POST", "/nosrc/_update_by_query", {}), 400,
                               "illegal_argument_exception")
        self.assertIn("didn't store _source", out["error"]["reason"])
        out = self.assertError(self.req("POST", "/_reindex", {
            "source": {"index": "nosrc"}, "dest": {"index": "nosrc-copy"}}), 400,
            "illegal_argument_exception")
        self.assertRegex(out["error"]["reason"], r"^\[nosrc\]\[_doc\]\[[^]]+\] didn't store _source$")
        self.assertEqual(self.req("POST", "/nosrc/_delete_by_query",
                                  {"query": {"term": {"_id": "new"}}})[0], 200)

    def test_top_hits_without_source(self):
        self.req("POST", "/_bulk?refresh=true",
                 '{"index":{"_index":"nosrc","_id":"th1"}}\n{"k":"th","n":3}\n', NDJSON)
        st, out, _ = self.req("POST", "/nosrc/_search", {"size": 0, "aggs": {"t": {
            "top_hits": {"size": 1, "docvalue_fields": ["n"],
                         "sort": [{"n": "asc"}]}}}, "query": {"term": {"k": "th"}}})
        self.assertEqual(st, 200, out)
        hit = out["aggregations"]["t"]["hits"]["hits"][0]
        # the stored record holds doc values, never shown as a _source
        self.assertEqual((hit["_id"], hit["fields"]), ("th1", {"n": [3]}))
        self.assertNotIn("_source", hit)

    def test_mapping_and_restart(self):
        m = self.req("GET", "/nosrc/_mapping")[1]["nosrc"]["mappings"]
        self.assertEqual(m["_source"], {"enabled": False})
        self.assertError(self.req("PUT", "/nosrc/_mapping", {"_source": {"enabled": True}}),
                         400, "illegal_argument_exception")
        self.assertEqual(self.req("PUT", "/nosrc/_mapping",
                                  {"_source": {"enabled": False}})[0], 200)
        for bad in ({"excludes": ["a"]}, {"includes": ["a"]}, {"mode": "synthetic"}):
            out = self.assertError(self.req("PUT", "/srcbad", {"mappings": {"_source": bad}}),
                                   400, "mapper_parsing_exception")
            self.assertIn("is not supported", out["error"]["reason"])
        # a text-only index keeps zero-byte records (a codec with a
        # dictionary trains one on nothing): merge, restart, read
        codecs = ("default", "ZSTD", "best_compression", "lucene_best_compression")
        for codec in codecs:
            name = "textonly-" + codec.lower()
            st, out, _ = self.req("PUT", "/" + name, {
                "settings": {"index.codec": codec},
                "mappings": {"_source": {"enabled": False},
                             "properties": {"t": {"type": "text"}}}})
            self.assertEqual(st, 200, out)
            for i in range(3):
                self.req("PUT", "/%s/_doc/%d?refresh=true" % (name, i), {"t": "x%d y" % i})
            self.assertEqual(self.req("POST", "/%s/_count" % name)[1]["count"], 3, codec)
            self.assertEqual(self.req("POST", "/%s/_forcemerge?max_num_segments=1"
                                      % name)[0], 200, codec)
        self.req("PUT", "/nosrc/_doc/r1", {"k": "restart", "n": 3})  # in the translog only
        self.srv.stop()
        self.srv.start()
        for codec in codecs:
            name = "textonly-" + codec.lower()
            out = self.req("GET", "/%s/_doc/1" % name)[1]
            self.assertEqual((out["found"], "_source" in out), (True, False))
            self.assertEqual(self.req("POST", "/%s/_count" % name,
                                      {"query": {"match": {"t": "y"}}})[1]["count"], 3, codec)
        self.req("POST", "/nosrc/_refresh")
        hits = self.req("POST", "/nosrc/_search", {"query": {"term": {"k": "restart"}},
                                                   "docvalue_fields": ["n"]})[1]["hits"]["hits"]
        self.assertEqual([h["fields"] for h in hits], [{"n": [3]}])
        self.assertEqual(self.req("GET", "/nosrc/_mapping")[1]["nosrc"]["mappings"]["_source"],
                         {"enabled": False})

    def test_stored_size(self):
        """The nginx sample under its mapping: without `_source` the stored
        records keep the doc values only (its text fields have keyword
        sub-fields, so most of each document), and the index is smaller."""
        with open(MAPPING) as f:
            mapping = json.load(f)
        sizes = {}
        for name, enabled in (("ng-src", True), ("ng-nosrc", False)):
            body = dict(mapping, _source={"enabled": enabled})
            self.assertEqual(self.req("PUT", "/" + name, {"mappings": body})[0], 200)
            st, out, _ = self.req("POST", "/_bulk?refresh=true",
                                  convert("bulk", index=name), NDJSON)
            self.assertEqual((st, out["errors"]), (200, False))
            self.req("POST", "/%s/_forcemerge?max_num_segments=1" % name)
            st = self.req("GET", "/%s/_stats/store" % name)[1]
            sizes[name] = st["_all"]["primaries"]["store"]["size_in_bytes"]
        self.assertLess(sizes["ng-nosrc"], sizes["ng-src"], sizes)
        a = self.req("POST", "/ng-src/_search", {"size": 0, "aggs": {"s": {"terms": {"field": "status"}}}})[1]
        b = self.req("POST", "/ng-nosrc/_search", {"size": 0, "aggs": {"s": {"terms": {"field": "status"}}}})[1]
        self.assertEqual(a["aggregations"], b["aggregations"])
        q = {"query": {"match": {"url": "product"}}, "size": 3, "sort": ["@timestamp", "_doc"],
             "docvalue_fields": ["status", "url.keyword", "@timestamp"]}
        ha = self.req("POST", "/ng-src/_search", q)[1]["hits"]["hits"]
        hb = self.req("POST", "/ng-nosrc/_search", q)[1]["hits"]["hits"]
        self.assertEqual([h["fields"] for h in ha], [h["fields"] for h in hb])


class DisabledObjects(ServerTestCase):
    def test_object_enabled_false(self):
        st, out, _ = self.req("PUT", "/dis", {"mappings": {"properties": {
            "session": {"type": "object", "enabled": False},
            "meta": {"enabled": False, "properties": {"k": {"type": "keyword"}}},
            "user": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        docs = [{"user": "a", "session": {"x": 1, "y": {"z": [1, "two", {}]}}},
                {"user": "b", "session": {"x": "not a number", "y": 3}},
                {"user": "c", "session": "a concrete value", "meta": [{"k": "p"}]},
                {"user": "d", "session.x": {"deep": True}, "meta": {"k": "q"}}]
        for i, d in enumerate(docs):
            st, out, _ = self.req("PUT", "/dis/_doc/%d" % i, d)
            self.assertEqual(st, 201, out)
        self.req("POST", "/dis/_refresh")
        self.assertEqual(self.req("GET", "/dis/_doc/1")[1]["_source"], docs[1])
        m = self.req("GET", "/dis/_mapping")[1]["dis"]["mappings"]["properties"]
        self.assertEqual(m["session"], {"type": "object", "enabled": False})
        self.assertEqual(m["meta"], {"enabled": False,
                                     "properties": {"k": {"type": "keyword"}}})
        for q in ({"exists": {"field": "session.x"}}, {"exists": {"field": "meta.k"}},
                  {"term": {"meta.k": "p"}}):
            self.assertEqual(self.req("POST", "/dis/_count", {"query": q})[1]["count"], 0, q)
        self.assertEqual(self.req("POST", "/dis/_count",
                                  {"query": {"term": {"user": "c"}}})[1]["count"], 1)
        hit = self.req("POST", "/dis/_search", {"query": {"term": {"user": "d"}},
                                                "docvalue_fields": ["meta.k"]})[1]["hits"]["hits"][0]
        self.assertNotIn("fields", hit)
        # its contents are unmapped: `fields` gives them with include_unmapped only
        out = self.req("POST", "/dis/_search", {"query": {"terms": {"user": ["b", "d"]}},
                                                "sort": ["user"],
                                                "fields": ["session.*", {
            "field": "meta.*", "include_unmapped": True}, {
            "field": "session.*", "include_unmapped": True}]})[1]
        self.assertEqual([h.get("fields") for h in out["hits"]["hits"]],
                         [{"session.x": ["not a number"], "session.y": [3]},
                          {"meta.k": ["q"], "session.x.deep": [True]}])
        self.assertError(self.req("PUT", "/dis/_mapping", {"properties": {
            "session": {"type": "object", "enabled": True}}}), 400, "mapper_parsing_exception")
        out = self.assertError(self.req("PUT", "/dis2", {"mappings": {"properties": {
            "k": {"type": "keyword", "enabled": False}}}}), 400, "mapper_parsing_exception")
        self.assertEqual(out["error"]["reason"],
                         "unknown parameter [enabled] on mapper [k] of type [keyword]")

    def test_root_enabled_false(self):
        self.assertEqual(self.req("PUT", "/rootoff", {"mappings": {"enabled": False}})[0], 200)
        self.assertEqual(self.req("PUT", "/rootoff/_doc/1?refresh=true",
                                  {"a": "x", "b": {"c": 1}})[0], 201)
        m = self.req("GET", "/rootoff/_mapping")[1]["rootoff"]["mappings"]
        self.assertEqual(m, {"enabled": False})
        self.assertEqual(self.req("POST", "/rootoff/_count",
                                  {"query": {"exists": {"field": "a"}}})[1]["count"], 0)
        self.assertEqual(self.req("GET", "/rootoff/_doc/1")[1]["_source"],
                         {"a": "x", "b": {"c": 1}})


class UnmappedFields(ServerTestCase):
    def test_include_unmapped_with_copy_to_and_null_value(self):
        # the raw `_source` paths the mapping lacks, beside the mapped
        # fields' values (null_value, copy_to, multi-fields) of the same doc;
        # a copy_to target the mapping lacks is no `_source` path
        st, out, _ = self.req("PUT", "/um", {"mappings": {"dynamic": False, "properties": {
            "a": {"type": "keyword", "copy_to": "all"}, "all": {"type": "text"},
            "n": {"type": "keyword", "null_value": "NONE"},
            "t": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
            "c": {"type": "keyword", "copy_to": "other"}}}})
        self.assertEqual(st, 200, out)
        doc = {"a": "x", "n": None, "t": "Hello World", "c": "cv",
               "extra": {"p": [1, "two", True], "q": None}, "zz": "\u00e9\u0001"}
        self.assertEqual(self.req("PUT", "/um/_doc/1?refresh=true", doc)[0], 201)
        hit = self.req("POST", "/um/_search", {"_source": False, "fields": [
            "n", {"field": "*", "include_unmapped": True}, "other"]})[1]["hits"]["hits"][0]
        self.assertEqual(list(hit["fields"].items()), [
            ("n", ["NONE"]), ("extra.p", [1, "two", True]), ("zz", ["\u00e9\u0001"]),
            ("a", ["x"]), ("all", ["x"]), ("t", ["Hello World"]),
            ("t.raw", ["Hello World"]), ("c", ["cv"])])
        hit = self.req("POST", "/um/_search", {"_source": False, "fields": [
            {"field": "ext*", "include_unmapped": True},
            {"field": "*", "include_unmapped": True}],
            "docvalue_fields": ["a", "t.raw"]})[1]["hits"]["hits"][0]
        self.assertEqual(list(hit["fields"])[:3], ["extra.p", "zz", "a"])
        self.assertEqual(hit["fields"]["extra.p"], [1, "two", True])


    def test_fields_ignore_above_counts_characters(self):
        # a keyword's value longer than ignore_above characters has no doc
        # value; bytes are not characters ("\u00e9\u00e9\u00e9" is 6 bytes)
        self.assertEqual(self.req("PUT", "/ia", {"mappings": {"properties": {
            "t": {"type": "text", "fields": {"k": {"type": "keyword", "ignore_above": 3}}}}}})[0], 200)
        for i, v in enumerate(["\u00e9\u00e9\u00e9", "abcd", ["ab", "\u00e9\u00e9\u00e9\u00e9", "xyz"]]):
            self.assertEqual(self.req("PUT", "/ia/_doc/%d?refresh=true" % i, {"t": v})[0], 201)
        out = self.req("POST", "/ia/_search", {"sort": ["_doc"], "_source": False,
                                               "fields": ["t", "t.k"]})[1]
        self.assertEqual([h["fields"] for h in out["hits"]["hits"]], [
            {"t": ["\u00e9\u00e9\u00e9"], "t.k": ["\u00e9\u00e9\u00e9"]},
            {"t": ["abcd"]},
            {"t": ["ab", "\u00e9\u00e9\u00e9\u00e9", "xyz"], "t.k": ["ab", "xyz"]}])

class NullValue(ServerTestCase):
    def test_null_value_by_type(self):
        st, out, _ = self.req("PUT", "/nv", {"mappings": {"properties": {
            "k": {"type": "keyword", "null_value": "NULL"},
            "n": {"type": "integer", "null_value": -1},
            "f": {"type": "double", "null_value": "0.5"},
            "d": {"type": "date", "null_value": "2000-01-01"},
            "b": {"type": "boolean", "null_value": False},
            "ip": {"type": "ip", "null_value": "127.0.0.1"}}}})
        self.assertEqual(st, 200, out)
        doc = {"k": None, "n": None, "f": [None, 2.5], "d": None, "b": None, "ip": None}
        self.assertEqual(self.req("PUT", "/nv/_doc/1", doc)[0], 201)
        self.assertEqual(self.req("PUT", "/nv/_doc/2?refresh=true",
                                  {"k": "x", "n": 3, "b": True, "f": []})[0], 201)
        self.assertEqual(self.req("GET", "/nv/_doc/1")[1]["_source"], doc)
        for q in ({"term": {"k": "NULL"}}, {"term": {"n": -1}}, {"term": {"f": 0.5}},
                  {"term": {"d": "2000-01-01"}}, {"term": {"b": False}},
                  {"term": {"ip": "127.0.0.1"}}, {"exists": {"field": "ip"}}):
            self.assertEqual(self.req("POST", "/nv/_count", {"query": q})[1]["count"], 1, q)
        # an empty array is no value, not a null
        self.assertEqual(self.req("POST", "/nv/_count",
                                  {"query": {"exists": {"field": "f"}}})[1]["count"], 1)
        out = self.req("POST", "/nv/_search", {
            "query": {"ids": {"values": ["1"]}}, "fields": ["k"],
            "docvalue_fields": ["n", "f", "d", "b", "ip"],
            "aggs": {"n": {"min": {"field": "n"}}}})[1]
        self.assertEqual(out["hits"]["hits"][0]["fields"], {
            "k": ["NULL"], "n": [-1], "f": [0.5, 2.5], "d": ["2000-01-01T00:00:00.000Z"],
            "b": [False], "ip": ["127.0.0.1"]})
        self.assertEqual(out["aggregations"]["n"]["value"], -1)
        out = self.req("POST", "/nv/_search", {"size": 0, "aggs": {
            "k": {"terms": {"field": "k"}}}})[1]
        self.assertEqual(sorted(b["key"] for b in out["aggregations"]["k"]["buckets"]),
                         ["NULL", "x"])
        m = self.req("GET", "/nv/_mapping")[1]["nv"]["mappings"]["properties"]
        self.assertEqual((m["k"]["null_value"], m["n"]["null_value"], m["b"]["null_value"]),
                         ("NULL", -1, False))

    def test_null_value_checked_at_mapping_time(self):
        cases = [("long", "abc", 'For input string: "abc"'),
                 ("integer", 3000000000, 'For input string: "3000000000"'),
                 ("ip", "not-an-ip", "'not-an-ip' is not an IP string literal."),
                 ("date", "yesterday", "failed to parse date field [yesterday] with "
                                       "format [strict_date_optional_time||epoch_millis]"),
                 ("boolean", "maybe", "Failed to parse value [maybe] as only [true] or "
                                      "[false] are allowed.")]
        for typ, val, why in cases:
            out = self.assertError(self.req("PUT", "/nvbad", {"mappings": {"properties": {
                "f": {"type": typ, "null_value": val}}}}), 400, "mapper_parsing_exception")
            self.assertEqual(out["error"]["reason"], "Failed to parse mapping: Error parsing "
                             "[null_value] on field [f]: " + why)
            self.assertEqual(self.req("HEAD", "/nvbad")[0], 404)
        out = self.assertError(self.req("PUT", "/nvbad", {"mappings": {"properties": {
            "t": {"type": "text", "null_value": "x"}}}}), 400, "mapper_parsing_exception")
        self.assertIn("unknown parameter [null_value]", out["error"]["reason"])


class CopyTo(ServerTestCase):
    def test_copy_to(self):
        st, out, _ = self.req("PUT", "/ct", {"mappings": {"properties": {
            "first": {"type": "text", "copy_to": "full"},
            "last": {"type": "text", "copy_to": ["full", "tags"]},
            "tags": {"type": "keyword", "copy_to": "chain"},
            "code": {"type": "keyword", "null_value": "none", "copy_to": "codes"},
            "codes": {"type": "keyword", "null_value": "missing"}}}})
        self.assertEqual(st, 200, out)
        doc = {"first": "John", "last": "Smith", "tags": "x", "code": None}
        self.assertEqual(self.req("PUT", "/ct/_doc/1?refresh=true", doc)[0], 201)
        self.assertEqual(self.req("GET", "/ct/_doc/1")[1]["_source"], doc)  # not in _source
        for q, n in (({"match": {"full": {"query": "john smith", "operator": "and"}}}, 1),
                     ({"term": {"tags": "Smith"}}, 1),
                     ({"term": {"codes": "missing"}}, 1),  # the target's null_value
                     ({"term": {"codes": "none"}}, 0),
                     ({"term": {"chain": "x"}}, 1),  # tags' own value
                     ({"term": {"chain": "Smith"}}, 0)):  # not transitive
            self.assertEqual(self.req("POST", "/ct/_count", {"query": q})[1]["count"], n, q)
        m = self.req("GET", "/ct/_mapping")[1]["ct"]["mappings"]["properties"]
        # the target absent from the mapping is mapped dynamically, as text
        self.assertEqual(m["full"]["type"], "text")
        self.assertEqual(m["last"]["copy_to"], ["full", "tags"])
        hit = self.req("POST", "/ct/_search", {"docvalue_fields": ["tags", "full.keyword"],
                                               "fields": ["full"]})[1]["hits"]["hits"][0]
        self.assertEqual(hit["fields"], {"tags": ["Smith", "x"],
                                         "full.keyword": ["John", "Smith"],
                                         "full": ["John", "Smith"]})
        # a target highlights from the values copied into it
        hit = self.req("POST", "/ct/_search", {"query": {"match": {"full": "smith"}},
                                               "highlight": {"fields": {"full": {}}}})[1]
        self.assertEqual(hit["hits"]["hits"][0]["highlight"], {"full": ["<em>Smith</em>"]})
        # a copied value that does not fit its target refuses the document
        self.req("PUT", "/ct/_mapping", {"properties": {
            "num": {"type": "long"}, "s": {"type": "keyword", "copy_to": "num"}}})
        out = self.assertError(self.req("PUT", "/ct/_doc/2", {"s": "abc"}), 400,
                               "document_parsing_exception")
        self.assertIn("[num]", out["error"]["reason"])

    def test_copy_to_refusals(self):
        out = self.assertError(self.req("PUT", "/ctbad", {"mappings": {"properties": {
            "a": {"type": "keyword", "copy_to": "o"},
            "o": {"properties": {"x": {"type": "long"}}}}}}), 400,
            "illegal_argument_exception", "Cannot copy to field [o] since it is mapped "
                                          "as an object")
        self.assertEqual(self.req("HEAD", "/ctbad")[0], 404)
        self.assertError(self.req("PUT", "/ctbad", {"mappings": {"properties": {
            "a": {"type": "keyword", "copy_to": "t.raw"},
            "t": {"type": "text", "fields": {"raw": {"type": "keyword"}}}}}}), 400,
            "illegal_argument_exception", "[copy_to] may not be used to copy to a "
                                          "multi-field: [t.raw]")
        out = self.assertError(self.req("PUT", "/ctbad", {"mappings": {"properties": {
            "t": {"type": "text", "fields": {"raw": {"type": "keyword", "copy_to": "x"}}}}}}),
            400, "mapper_parsing_exception")
        self.assertIn("copy_to in multi fields is not allowed", out["error"]["reason"])
        self.req("PUT", "/ctstrict", {"mappings": {"dynamic": "strict", "properties": {
            "a": {"type": "keyword", "copy_to": "b"}}}})
        self.assertError(self.req("PUT", "/ctstrict/_doc/1", {"a": "x"}), 400,
                         "strict_dynamic_mapping_exception")


if __name__ == "__main__":
    unittest.main()
