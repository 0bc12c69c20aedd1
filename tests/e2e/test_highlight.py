"""multi_match (its types, options and refusals) and the search body's
`highlight`, as Elasticsearch 8 answers them; Kibana Discover's highlight
request on the real nginx log."""
import json
import unittest

from fdsserver import ServerTestCase, convert

DOCS = [
    {"title": "The quick brown fox", "body": "A fox jumps. Over the lazy dog.",
     "tag": "fox", "n": 1},
    {"title": "Lazy dogs", "body": "Dogs sleep all day. The fox runs.",
     "tag": "dog", "n": 2},
    {"title": "Nothing here", "body": "<b>bold</b> & 'quotes' / slash fox",
     "tag": "other", "n": 3},
]

KIBANA_HL = {"pre_tags": ["@kibana-highlighted-field@"],
             "post_tags": ["@/kibana-highlighted-field@"],
             "fields": {"*": {}}, "fragment_size": 2147483647}


class Base(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/mm", {
            "mappings": {"properties": {"title": {"type": "text"},
                                        "body": {"type": "text"},
                                        "tag": {"type": "keyword"},
                                        "n": {"type": "long"}}}})
        assert st == 200, body
        for i, d in enumerate(DOCS):
            st, body, _ = cls.srv.request("PUT", "/mm/_doc/%d" % i, d)
            assert st in (200, 201), body
        cls.srv.request("POST", "/mm/_refresh")

    def search(self, body, status=200):
        st, out, _ = self.req("POST", "/mm/_search", body)
        self.assertEqual(st, status, out)
        return out

    def scores(self, query):
        hits = self.search({"query": query})["hits"]["hits"]
        return {h["_id"]: h["_score"] for h in hits}

    def per_field(self, text, fields, **opts):
        return [{"match": {f.split("^")[0]: dict(
            {"query": text, "boost": float(f.split("^")[1]) if "^" in f else 1.0},
            **opts)}} for f in fields]



class MultiMatch(Base):
    def test_best_fields_is_dis_max(self):
        f = ["title^2", "body"]
        for tb in (None, 0.3):
            mm = {"query": "fox dog", "fields": f}
            dm = {"queries": self.per_field("fox dog", f)}
            if tb is not None:
                mm["tie_breaker"] = tb
                dm["tie_breaker"] = tb
            self.assertEqual(self.scores({"multi_match": mm}),
                             self.scores({"dis_max": dm}))

    def test_most_fields_is_bool_should(self):
        f = ["title", "body^0.5"]
        got = self.scores({"multi_match": {"query": "lazy fox", "fields": f,
                                           "type": "most_fields",
                                           "operator": "and"}})
        want = self.scores({"bool": {"should": self.per_field(
            "lazy fox", f, operator="and")}})
        self.assertEqual(got, want)
        self.assertTrue(got)

    def test_wildcards_and_default_field(self):
        a = self.scores({"multi_match": {"query": "fox", "fields": ["t*", "b*"]}})
        b = self.scores({"multi_match": {"query": "fox", "fields": ["title", "body", "tag"]}})
        self.assertEqual(a, b)
        # no fields: every field, leniently (n is a long: "fox" matches nothing there)
        c = self.scores({"multi_match": {"query": "fox"}})
        self.assertEqual(c, self.scores({"multi_match": {"query": "fox",
                                                         "fields": ["*"]}}))
        self.assertEqual(set(c), {"0", "1", "2"})
        self.assertEqual(set(self.scores({"multi_match": {"query": "2"}})), {"1"})

    def test_options(self):
        self.assertEqual(set(self.scores({"multi_match": {
            "query": "foz", "fields": ["title"], "fuzziness": 1}})), {"0"})
        self.assertEqual(self.scores({"multi_match": {
            "query": "the", "fields": ["title"], "zero_terms_query": "all"}}),
            self.scores({"multi_match": {"query": "the", "fields": ["title"]}}))
        self.assertEqual(len(self.scores({"multi_match": {
            "query": "!!", "fields": ["title"], "zero_terms_query": "all"}})), 3)
        self.assertEqual(self.scores({"multi_match": {
            "query": "abc", "fields": ["n", "title"], "lenient": True}}), {})
        s = self.scores({"multi_match": {"query": "fox", "fields": ["title"],
                                         "boost": 2}})
        s1 = self.scores({"multi_match": {"query": "fox", "fields": ["title"]}})
        self.assertAlmostEqual(s["0"], 2 * s1["0"], places=5)

    def test_errors(self):
        def err(mm):
            st, out, _ = self.req("POST", "/mm/_search", {"query": {"multi_match": mm}})
            self.assertEqual(st, 400, out)
            return out["error"]["reason"]
        self.assertIn("Fuzziness not allowed for type [phrase]",
                      err({"query": "a b", "fields": ["title"], "type": "phrase",
                           "fuzziness": 1}))
        self.assertIn("not supported", err({"query": "a", "type": "cross_fields"}))
        self.assertIn("not supported", err({"query": "a", "type": "bool_prefix"}))
        self.assertIn("analyzer", err({"query": "a", "analyzer": "whitespace"}))
        self.assertIn("does not support", err({"query": "a", "bogus": 1}))
        self.assertIn("No text", err({"fields": ["title"]}))
        err({"query": "abc", "fields": ["n"]})  # not lenient: a number field
        # removed in Elasticsearch 8
        self.assertIn("[multi_match] query does not support [cutoff_frequency]",
                      err({"query": "a", "cutoff_frequency": 0.01}))
        # slop loosens the phrase types; for best_fields and most_fields it
        # would change nothing (no phrases without synonyms): only the
        # default 0 is taken
        st, out, _ = self.req("POST", "/mm/_search", {"query": {"multi_match": {
            "query": "a b", "fields": ["title"], "type": "phrase", "slop": 2}}})
        self.assertEqual(st, 200, out)
        for t in ("best_fields", "most_fields"):
            st, out, _ = self.req("POST", "/mm/_search", {"query": {"multi_match": {
                "query": "a b", "fields": ["title"], "type": t, "slop": 0}}})
            self.assertEqual(st, 200, out)
            self.assertIn("[slop] changes nothing for type [%s]" % t,
                          err({"query": "a b", "fields": ["title"], "type": t, "slop": 2}))


class Highlight(Base):
    def hl(self, query, hl, ids=None):
        out = self.search({"query": query, "highlight": hl})
        return {h["_id"]: h.get("highlight") for h in out["hits"]["hits"]}

    def test_defaults(self):
        got = self.hl({"match": {"body": "fox"}}, {"fields": {"body": {}}})
        self.assertEqual(got["0"], {"body": ["A <em>fox</em> jumps."]})
        self.assertEqual(got["1"], {"body": ["The <em>fox</em> runs."]})

    def test_whole_field_and_tags(self):
        got = self.hl({"multi_match": {"query": "fox dog", "fields": ["body", "title"]}},
                      {"fields": {"*": {}}, "number_of_fragments": 0,
                       "pre_tags": ["["], "post_tags": ["]"]})
        self.assertEqual(got["0"]["body"], ["A [fox] jumps. Over the lazy [dog]."])
        self.assertEqual(got["0"]["title"], ["The quick brown [fox]"])
        self.assertNotIn("tag", got["0"])  # require_field_match: tag was not queried

    def test_require_field_match_false_and_keyword(self):
        got = self.hl({"match": {"title": "fox"}},
                      {"fields": {"*": {}}, "require_field_match": False})
        self.assertEqual(got["0"]["tag"], ["<em>fox</em>"])
        self.assertEqual(got["0"]["body"], ["A <em>fox</em> jumps."])

    def test_html_styled_fragments(self):
        got = self.hl({"match": {"body": "fox"}},
                      {"fields": {"body": {"encoder": "html"}}, "tags_schema": "styled"})
        self.assertEqual(got["2"]["body"],
                         ["&lt;b&gt;bold&lt;&#x2F;b&gt; &amp; &#x27;quotes&#x27; "
                          "&#x2F; slash <em class=\"hlt\">fox</em>"])
        # sentences merge while they fit in fragment_size
        got = self.hl({"match": {"body": "fox dogs"}}, {"fields": {"body": {}}})
        self.assertEqual(got["1"]["body"], ["<em>Dogs</em> sleep all day. The <em>fox</em> runs."])
        got = self.hl({"match": {"body": "fox runs dogs"}},
                      {"fields": {"body": {"number_of_fragments": 2, "order": "score",
                                           "fragment_size": 20}}})
        self.assertEqual(got["1"]["body"], ["The <em>fox</em> <em>runs</em>.",
                                            "<em>Dogs</em> sleep all day."])
        got = self.hl({"match": {"body": "fox runs dogs"}},
                      {"fields": {"body": {"number_of_fragments": 2, "fragment_size": 20}}})
        self.assertEqual(got["1"]["body"], ["<em>Dogs</em> sleep all day.",
                                            "The <em>fox</em> <em>runs</em>."])

    def test_highlight_query_and_no_match(self):
        got = self.hl({"match": {"body": "fox"}},
                      {"fields": {"title": {"no_match_size": 7}},
                       "highlight_query": {"match": {"title": "lazy"}}})
        self.assertEqual(got["1"], {"title": ["<em>Lazy</em> dogs"]})
        self.assertEqual(got["0"], {"title": ["The"]})

    def test_prefix_wildcard_fuzzy(self):
        got = self.hl({"bool": {"should": [{"prefix": {"title": "qui"}},
                                           {"fuzzy": {"title": "browm"}}]}},
                      {"fields": {"title": {}}})
        self.assertEqual(got["0"]["title"], ["The <em>quick</em> <em>brown</em> fox"])

    def test_errors_hl(self):
        st, out, _ = self.req("POST", "/mm/_search", {
            "query": {"match_all": {}}, "highlight": {"type": "fvh", "fields": {"*": {}}}})
        self.assertEqual(st, 400, out)
        self.assertIn("term vectors", out["error"]["reason"])
        st, out, _ = self.req("POST", "/mm/_search", {
            "highlight": {"fields": {"*": {}}, "bogus": 1}})
        self.assertEqual(st, 400, out)


class KibanaDiscover(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, b, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                   convert("bulk", index="logs"),
                                   headers={"Content-Type": "application/x-ndjson"})
        assert st == 200, b

    def test_discover_request(self):
        body = {"size": 50, "query": {"bool": {"filter": [{"multi_match": {
            "type": "best_fields", "query": "GET", "lenient": True}}]}},
            "highlight": KIBANA_HL, "_source": True}
        st, out, _ = self.req("POST", "/logs/_search", body)
        self.assertEqual(st, 200, out)
        hits = out["hits"]["hits"]
        self.assertEqual(len(hits), 50)
        pre, post = KIBANA_HL["pre_tags"][0], KIBANA_HL["post_tags"][0]
        for h in hits:
            hl = h["highlight"]
            marked = [(f, v) for f, vs in hl.items() for v in vs]
            self.assertTrue(marked, h)
            for f, v in marked:
                # each fragment is the whole value with the matches marked
                src = h["_source"][f.split(".keyword")[0]] if "." in f or f in h["_source"] else None
                plain = v.replace(pre, "").replace(post, "")
                if src is not None:
                    self.assertEqual(plain, src)
                self.assertIn(pre + "GET" + post, v)

    def test_discover_query_string(self):
        body = {"size": 10, "query": {"query_string": {"query": "Googlebot"}},
                "highlight": KIBANA_HL}
        st, out, _ = self.req("POST", "/logs/_search", body)
        self.assertEqual(st, 200, out)
        self.assertTrue(out["hits"]["hits"])
        for h in out["hits"]["hits"]:
            self.assertIn("user_agent", h["highlight"], json.dumps(h))
            self.assertIn("@kibana-highlighted-field@Googlebot@/kibana-highlighted-field@",
                          h["highlight"]["user_agent"][0])


if __name__ == "__main__":
    unittest.main()
