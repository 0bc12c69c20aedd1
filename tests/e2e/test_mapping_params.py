"""Mapping parameters: the ones we apply take any valid value; the ones
whose only value we implement is Elasticsearch's default are accepted with
exactly that value; every other value or parameter is a 400
mapper_parsing_exception naming it, and no index is half-created.  A
parameter accepted and not applied would be a silent lie."""
import unittest

from fdsserver import ServerTestCase


class MappingParams(ServerTestCase):
    def create(self, name, mappings, status):
        st, out, _ = self.req("PUT", "/" + name, {"mappings": mappings})
        self.assertEqual(st, status, out)
        if status != 200:
            self.assertEqual(out["error"]["type"], "mapper_parsing_exception", out)
            self.assertEqual(self.req("HEAD", "/" + name)[0], 404)  # nothing left behind
        return out

    def test_defaults_are_accepted(self):
        self.create("ok1", {"dynamic": True, "date_detection": True,
                            "numeric_detection": False, "_source": {"enabled": True},
                            "properties": {
            "k": {"type": "keyword", "doc_values": True, "store": False, "norms": False,
                  "eager_global_ordinals": False, "similarity": "BM25",
                  "ignore_above": 100, "index": True},
            "t": {"type": "text", "analyzer": "standard", "search_analyzer": "standard",
                  "norms": True, "index_options": "positions", "fielddata": False,
                  "fields": {"raw": {"type": "keyword", "doc_values": "true"}}},
            "n": {"type": "long", "ignore_malformed": False, "doc_values": True},
            "d": {"type": "date", "format": "strict_date_optional_time||epoch_millis"},
            "o": {"type": "object", "enabled": True, "dynamic": "true",
                  "properties": {"x": {"type": "integer"}}}}}, 200)
        st, out, _ = self.req("PUT", "/ok1/_doc/1?refresh=true",
                              {"k": "a", "t": "b c", "n": 1, "d": "2026-12-01", "o": {"x": 2}})
        self.assertEqual(st, 201, out)

    def test_other_values_are_refused(self):
        cases = [
            ({"k": {"type": "keyword", "doc_values": False}}, "[doc_values] of [false]"),
            ({"k": {"type": "keyword", "store": True}}, "[store] of [true]"),
            ({"t": {"type": "text", "norms": False}}, "[norms] of [false]"),
            ({"t": {"type": "text", "analyzer": "english"}}, "[analyzer]"),
            ({"t": {"type": "text", "index_options": "offsets"}}, "[index_options]"),
            ({"t": {"type": "text", "index_options": "bogus"}},
             "Unknown value [bogus] for field [index_options]"),
            ({"t": {"type": "text", "index_phrases": True}}, "unknown parameter [index_phrases]"),
            ({"t": {"type": "text", "index_prefixes": {}}}, "unknown parameter [index_prefixes]"),
            ({"t": {"type": "text", "fielddata": True}}, "[fielddata]"),
            ({"d": {"type": "date", "format": "yyyy-MM-dd hh:mm a"}},
             "Invalid format: [yyyy-MM-dd hh:mm a]"),
            ({"o": {"type": "object", "enabled": "sometimes"}}, "[enabled]"),
            ({"o": {"properties": {"x": {"type": "long"}}, "dynamic": "strict"}},
             "[dynamic]"),
            ({"t": {"type": "text", "null_value": "NULL"}},
             "unknown parameter [null_value] on mapper [t] of type [text]"),
            ({"k": {"type": "keyword", "enabled": False}},
             "unknown parameter [enabled] on mapper [k] of type [keyword]"),
            ({"k": {"type": "keyword", "copy_to": 5}}, "[copy_to] on field [k]"),
            ({"t": {"type": "text", "doc_values": True}},
             "unknown parameter [doc_values] on mapper [t] of type [text]"),
            ({"n": {"type": "long", "ignore_above": 3}}, "unknown parameter [ignore_above]"),
            ({"k": {"type": "keyword", "ignore_above": "abc"}}, "[ignore_above] on field [k]"),
            ({"k": {"type": "keyword", "ignore_above": -5}}, "must be a non-negative integer"),
            ({"t": {"type": "text", "fields": {"r": {"type": "keyword", "store": True}}}},
             "on field [t.r]"),
        ]
        for i, (props, reason) in enumerate(cases):
            out = self.create("bad%d" % i, {"properties": props}, 400)
            self.assertIn(reason, out["error"]["reason"], props)

    def test_root_values_are_refused(self):
        for i, (root, reason) in enumerate([
                ({"dynamic": "runtime"}, "runtime fields are not supported"),
                ({"dynamic": 3}, "[dynamic] must be true, false or strict"),
                ({"date_detection": "sometimes"}, "[date_detection]"),
                ({"numeric_detection": True}, "[numeric_detection]"),
                ({"_source": {"enabled": "no"}}, "[_source.enabled]"),
                ({"_source": {"excludes": ["a"]}}, "[_source] parameter [excludes] is not supported"),
                ({"_source": {"mode": "synthetic"}}, "[_source] parameter [mode] is not supported"),
                ({"_meta": {"beat": "x"}}, "unsupported parameters:  [_meta]"),
                ({"_routing": {"required": True}}, "[_routing]")]):
            out = self.create("root%d" % i, root, 400)
            self.assertIn(reason, out["error"]["reason"])

    def test_dynamic_strict(self):
        self.create("strict", {"dynamic": "strict", "properties": {
            "a": {"type": "keyword"}, "o": {"properties": {"x": {"type": "long"}}}}}, 200)
        st, out, _ = self.req("PUT", "/strict/_doc/1", {"a": "x", "o": {"x": 1}, "n": None})
        self.assertEqual(st, 201, out)
        for doc, name, within in (({"a": "x", "b": 1}, "b", "_doc"),
                                  ({"o": {"y": 2}}, "y", "o")):
            st, out, _ = self.req("PUT", "/strict/_doc/2", doc)
            self.assertEqual((st, out["error"]["type"]),
                             (400, "strict_dynamic_mapping_exception"), out)
            self.assertEqual(out["error"]["reason"],
                             "mapping set to strict, dynamic introduction of [%s] "
                             "within [%s] is not allowed" % (name, within))
        st, out, _ = self.req("POST", "/_bulk", '{"index":{"_index":"strict","_id":"3"}}\n'
                              '{"zz":1}\n', {"Content-Type": "application/x-ndjson"})
        self.assertEqual(out["items"][0]["index"]["error"]["type"],
                         "strict_dynamic_mapping_exception")
        self.assertEqual(self.req("GET", "/strict/_doc/2")[0], 404)  # nothing was written
        st, out, _ = self.req("GET", "/strict/_mapping")
        self.assertEqual(out["strict"]["mappings"]["dynamic"], "strict")

    def test_dynamic_false_and_date_detection(self):
        self.create("loose", {"dynamic": False, "date_detection": False,
                              "properties": {"a": {"type": "keyword"}}}, 200)
        st, out, _ = self.req("PUT", "/loose/_doc/1?refresh=true",
                              {"a": "x", "b": "hello", "d": "2026-12-01"})
        self.assertEqual(st, 201, out)
        st, out, _ = self.req("GET", "/loose/_mapping")
        m = out["loose"]["mappings"]
        self.assertEqual((m["dynamic"], m["date_detection"]), ("false", False))
        self.assertEqual(set(m["properties"]), {"a"})  # b and d stay unmapped
        hits = self.req("POST", "/loose/_search",
                        {"query": {"match": {"b": "hello"}}})[1]["hits"]["hits"]
        self.assertEqual(hits, [])
        src = self.req("GET", "/loose/_doc/1")[1]["_source"]
        self.assertEqual(src["b"], "hello")
        # date_detection false: a date-like string maps as text
        self.create("nodates", {"date_detection": False}, 200)
        self.req("PUT", "/nodates/_doc/1", {"d": "2026-12-01"})
        st, out, _ = self.req("GET", "/nodates/_mapping")
        self.assertEqual(out["nodates"]["mappings"]["properties"]["d"]["type"], "text")

    def test_date_format(self):
        fmt = "yyyy-MM-dd HH:mm:ss||dd/MMM/yyyy:HH:mm:ss Z||epoch_millis"
        self.create("df", {"properties": {"t": {"type": "date", "format": fmt}}}, 200)
        docs = {"1": "2026-12-01 10:20:30", "2": "01/Dec/2026:11:20:30 +0100",
                "3": 1796124030000, "4": "2026-12-01 12:00:00"}
        for i, t in docs.items():
            st, out, _ = self.req("PUT", "/df/_doc/%s" % i, {"t": t})
            self.assertEqual(st, 201, out)
        self.req("POST", "/df/_refresh")
        # the ISO default is not among the formats: refused
        st, out, _ = self.req("PUT", "/df/_doc/9", {"t": "2026-12-01T10:20:30Z"})
        self.assertEqual((st, out["error"]["type"]), (400, "document_parsing_exception"))
        st, out, _ = self.req("GET", "/df/_mapping")
        self.assertEqual(out["df"]["mappings"]["properties"]["t"]["format"], fmt)
        # range bounds read with the field's format; sort values are epoch ms
        st, out, _ = self.req("POST", "/df/_search", {
            "query": {"range": {"t": {"gte": "2026-12-01 10:20:30", "lt": "2026-12-01 12:00:00"}}},
            "sort": [{"t": "asc"}]})
        self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["1", "2", "3"])
        self.assertEqual([h["sort"][0] for h in out["hits"]["hits"]],
                         [1796120430000, 1796120430000, 1796124030000])

    def test_index_false(self):
        self.create("nix", {"properties": {"c": {"type": "long", "index": False},
                                           "k": {"type": "keyword", "index": False},
                                           "t": {"type": "text", "index": False}}}, 200)
        self.req("PUT", "/nix/_doc/1?refresh=true", {"c": 5, "k": "x", "t": "hi"})
        # numbers and keywords answer from their doc values, as in Elasticsearch 8
        for q in ({"term": {"c": 5}}, {"range": {"c": {"gte": 4}}}, {"term": {"k": "x"}}):
            st, out, _ = self.req("POST", "/nix/_count", {"query": q})
            self.assertEqual((st, out.get("count")), (200, 1), q)
        st, out, _ = self.req("POST", "/nix/_search", {"sort": ["c"]})
        self.assertEqual(out["hits"]["hits"][0]["sort"], [5])
        # a text field kept out of the index cannot be searched
        st, out, _ = self.req("POST", "/nix/_search", {"query": {"match": {"t": "hi"}}})
        cause = out["error"]["root_cause"][0]
        self.assertEqual((st, cause["type"]), (400, "query_shard_exception"))
        self.assertIn("Cannot search on field [t] since it is not indexed", cause["reason"])

    def test_aliases_in_create(self):
        st, out, _ = self.req("PUT", "/al0", {"aliases": {}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("PUT", "/al1", {"aliases": {"logs": {"bad": 1}}})
        self.assertEqual((st, out["error"]["type"]), (400, "parse_exception"))
        self.assertEqual(self.req("HEAD", "/al1")[0], 404)
        st, out, _ = self.req("PUT", "/al1", {"aliases": {"al1-logs": {}}})
        self.assertEqual(st, 200, out)
        self.assertEqual(self.req("HEAD", "/_alias/al1-logs")[0], 200)


    def test_dynamic_date_formats(self):
        """Elasticsearch's default detection maps yyyy/MM/dd strings as dates
        with yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis; a given list
        replaces the default, in order; an empty list detects no dates."""
        st, out, _ = self.req("PUT", "/dd1/_doc/1?refresh=true",
                              {"c": "2015/09/02", "t": "2015/09/02 10:11:12",
                               "iso": "2015-09-02T10:00:00Z", "s": "2015 09 02"})
        self.assertEqual(st, 201, out)
        props = self.req("GET", "/dd1/_mapping")[1]["dd1"]["mappings"]["properties"]
        slash = {"type": "date", "format": "yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis"}
        self.assertEqual(props["c"], slash)
        self.assertEqual(props["t"], slash)
        self.assertEqual(props["iso"], {"type": "date"})
        self.assertEqual(props["s"]["type"], "text")
        # the detected format is applied: the range reads the same layout
        st, out, _ = self.req("POST", "/dd1/_count",
                              {"query": {"range": {"t": {"gte": "2015/09/02 10:11:00",
                                                         "lt": "2015/09/02 10:12:00"}}}})
        self.assertEqual(out["count"], 1, out)
        self.create("dd2", {"dynamic_date_formats": ["MM/dd/yyyy"]}, 200)
        self.assertEqual(self.req("PUT", "/dd2/_doc/1?refresh=true",
                                  {"d": "09/25/2015", "x": "2015/09/02",
                                   "iso": "2015-09-02"})[0], 201)
        m = self.req("GET", "/dd2/_mapping")[1]["dd2"]["mappings"]
        self.assertEqual(m["dynamic_date_formats"], ["MM/dd/yyyy"])
        self.assertEqual(m["properties"]["d"], {"type": "date", "format": "MM/dd/yyyy"})
        self.assertEqual(m["properties"]["x"]["type"], "text")
        self.assertEqual(m["properties"]["iso"]["type"], "text")
        self.create("dd3", {"dynamic_date_formats": []}, 200)
        self.assertEqual(self.req("PUT", "/dd3/_doc/1", {"iso": "2015-09-02T10:00:00Z"})[0], 201)
        self.assertEqual(self.req("GET", "/dd3/_mapping")[1]["dd3"]["mappings"]
                         ["properties"]["iso"]["type"], "text")
        for bad in (["qqq"], 5, [1], ["yyyy"] * 9):
            out = self.create("dd4", {"dynamic_date_formats": bad}, 400)
            self.assertIn("dynamic_date_formats", out["error"]["reason"])
        # the list survives a restart
        self.srv.stop()
        self.srv.start()
        m = self.req("GET", "/dd2/_mapping")[1]["dd2"]["mappings"]
        self.assertEqual(m["dynamic_date_formats"], ["MM/dd/yyyy"])

if __name__ == "__main__":
    unittest.main()
