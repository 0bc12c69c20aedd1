"""The multi-term queries (prefix, wildcard, regexp), the compound ones
(constant_score, dis_max, boosting), query_string / simple_query_string,
min_score, and the index limits a search is checked against, as
Elasticsearch 8 answers them."""
import json
import os
import random
import unittest

from fdsserver import ServerTestCase, convert

HERE = os.path.dirname(os.path.abspath(__file__))
MAPPING = os.path.join(HERE, "..", "..", "datasets", "nginx-mapping.json")

DOCS = [
    {"k": "GET", "t": "the red fox", "n": 1},
    {"k": "POST", "t": "a blue fox jumps", "n": 2},
    {"k": "PUT", "t": "red red red", "n": 3},
    {"k": "get", "t": "Brown bear", "n": 4},
]


class QueryTypes(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/qt", {
            "settings": {"index.max_terms_count": 3, "index.max_regex_length": 10,
                         "index.max_result_window": 5},
            "mappings": {"properties": {"k": {"type": "keyword"},
                                        "t": {"type": "text"},
                                        "n": {"type": "long"}}}})
        assert st == 200, body
        for i, d in enumerate(DOCS):
            st, body, _ = cls.srv.request("PUT", "/qt/_doc/%d" % i, d)
            assert st in (200, 201), body
        cls.srv.request("POST", "/qt/_refresh")

    def q(self, query, status=200, **extra):
        body = dict(extra)
        body["query"] = query
        body.setdefault("size", 5)  # index.max_result_window is 5
        st, out, _ = self.req("POST", "/qt/_search", body)
        self.assertEqual(st, status, out)
        return out

    def ids(self, query, **extra):
        return sorted(h["_id"] for h in self.q(query, **extra)["hits"]["hits"])

    def scores(self, query):
        return {h["_id"]: h["_score"] for h in self.q(query)["hits"]["hits"]}

    def test_boost_range(self):
        # a negative boost is refused (Elasticsearch's checkNegativeBoost), at
        # any depth, and so is one past the float range (an infinite score
        # is not JSON); 0 is a boost like any other
        for q in ({"match": {"t": {"query": "fox", "boost": -1}}},
                  {"bool": {"should": [{"term": {"k": {"value": "a", "boost": -0.5}}}]}},
                  {"constant_score": {"filter": {"match_all": {}}, "boost": -2}}):
            out = self.q(q, 400)
            self.assertEqual(out["error"]["root_cause"][0]["reason"],
                             "negative [boost] are not allowed.", q)
        out = self.q({"match": {"t": {"query": "fox quick", "boost": 1e39}}}, 400)
        self.assertEqual(out["error"]["root_cause"][0]["reason"],
                         "[boost] must be a finite number")
        out = self.q({"match": {"t": {"query": "fox", "boost": 0}}})
        self.assertEqual({h["_score"] for h in out["hits"]["hits"]}, {0.0})

    def test_match_options(self):
        # zero_terms_query: a text without tokens matches nothing or all
        self.assertEqual(self.ids({"match": {"t": {"query": "!!"}}}), [])
        self.assertEqual(self.ids({"match": {"t": {"query": "!!",
                                                   "zero_terms_query": "all"}}}),
                         ["0", "1", "2", "3"])
        out = self.q({"match": {"t": {"query": "x", "zero_terms_query": "most"}}}, 400)
        self.assertEqual(out["error"]["root_cause"][0]["reason"],
                         "Unsupported zero_terms_query value [most]")
        # analyzer: the standard one is the only one there is
        self.assertEqual(self.ids({"match": {"t": {"query": "fox", "analyzer": "standard"}}}),
                         ["0", "1"])
        out = self.q({"match": {"t": {"query": "fox", "analyzer": "whitespace"}}}, 400)
        self.assertEqual(out["error"]["root_cause"][0]["reason"],
                         "[match] analyzer [whitespace] not found")
        # lenient: a value a long cannot read matches nothing instead of failing
        self.q({"match": {"n": {"query": "two"}}}, 400)
        self.assertEqual(self.ids({"match": {"n": {"query": "two", "lenient": True}}}), [])
        self.assertEqual(self.ids({"match": {"n": {"query": "2", "lenient": True}}}), ["1"])

    def test_named_queries(self):
        # each hit lists the _names of the queries it matches (in no set
        # order, as in Elasticsearch: compared sorted)
        def matched(query, **extra):
            out = self.q(query, **extra)
            return {h["_id"]: sorted(h["matched_queries"]) if "matched_queries" in h else None
                    for h in out["hits"]["hits"]}
        got = matched({"bool": {"should": [
            {"match": {"t": {"query": "fox", "_name": "fox"}}},
            {"term": {"k": {"value": "PUT", "_name": "put"}}},
            {"match_phrase": {"t": {"query": "red fox", "_name": "red fox"}}},
            {"range": {"n": {"gte": 2, "_name": "n2"}}}], "_name": "any"}})
        self.assertEqual(got, {"0": ["any", "fox", "red fox"], "1": ["any", "fox", "n2"],
                               "2": ["any", "n2", "put"], "3": ["any", "n2"]})
        # filter context, must_not, query_string, fuzzy, prefix, terms, exists
        got = matched({"bool": {"filter": [{"exists": {"field": "t", "_name": "e"}}],
                                "must_not": [{"term": {"k": {"value": "GET", "_name": "g"}}}],
                                "should": [
            {"query_string": {"query": "t:bear", "_name": "qs"}},
            {"fuzzy": {"t": {"value": "jumsp", "_name": "fz"}}},
            {"prefix": {"k": {"value": "PO", "_name": "pre"}}},
            {"terms": {"n": [3, 4], "_name": "tt"}}]}})
        self.assertEqual(got, {"1": ["e", "fz", "pre"], "2": ["e", "tt"], "3": ["e", "qs", "tt"]})
        # no name matched: the key is left out, as Elasticsearch does
        got = matched({"bool": {"should": [{"match_all": {}},
                                           {"term": {"k": {"value": "x", "_name": "x"}}}]}})
        self.assertEqual(set(got.values()), {None})
        # include_named_queries_score: each name's query's score on the hit;
        # a name given twice is listed once
        st, out, _ = self.req("POST", "/qt/_search?include_named_queries_score=true", {
            "size": 5, "query": {"bool": {"should": [
                {"term": {"k": {"value": "PUT", "_name": "put"}}},
                {"constant_score": {"filter": {"match": {"t": "red"}}, "boost": 3,
                                    "_name": "red"}},
                {"match_all": {"_name": "put"}}]}}})
        self.assertEqual(st, 200, out)
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertEqual(set(h["2"]["matched_queries"]), {"put", "red"})
        self.assertEqual(h["2"]["matched_queries"]["red"], 3.0)
        self.assertAlmostEqual(h["2"]["matched_queries"]["put"] + 3.0, h["2"]["_score"] - 1.0,
                               places=5)  # the term's BM25, the boost, match_all's 1
        self.assertEqual(h["3"]["matched_queries"], {"put": 1.0})
        # a name is a string
        out = self.q({"term": {"k": {"value": "GET", "_name": 5}}}, 400)
        self.assertIn("[term] query does not support [_name] of type",
                      out["error"]["root_cause"][0]["reason"])

    def test_prefix_wildcard_regexp(self):
        self.assertEqual(self.ids({"prefix": {"k": "P"}}), ["1", "2"])
        self.assertEqual(self.ids({"prefix": {"k": {"value": "g", "case_insensitive": True}}}),
                         ["0", "3"])
        self.assertEqual(self.ids({"wildcard": {"k": "?E?"}}), ["0"])
        self.assertEqual(self.ids({"wildcard": {"k": {"wildcard": "*T"}}}), ["0", "1", "2"])
        # a wildcard on a text field is normalized (lower-cased) like the analyzer
        self.assertEqual(self.ids({"wildcard": {"t": "F*X"}}), ["0", "1"])
        self.assertEqual(self.ids({"regexp": {"k": "P(OST|UT)"}}), ["1", "2"])
        self.assertEqual(self.ids({"regexp": {"t": {"value": "b.*", "flags": "NONE"}}}),
                         ["1", "3"])
        # constant score: the boost
        self.assertEqual(set(self.scores({"prefix": {"k": {"value": "P", "boost": 2}}}).values()),
                         {2.0})
        # on a numeric field: Elasticsearch's refusal
        out = self.q({"prefix": {"n": "1"}}, status=400)
        self.assertIn("Can only use prefix queries on keyword and text fields",
                      out["error"]["root_cause"][0]["reason"])
        out = self.q({"prefix": {"k": {"value": "P", "rewrite": "top_terms_10"}}}, status=400)
        self.assertIn("not supported", out["error"]["root_cause"][0]["reason"])
        out = self.q({"regexp": {"k": "a{1,100}b{1,100}(c{1,100}){1,100}"}}, status=400)
        self.assertIn("The length of regex", out["error"]["root_cause"][0]["reason"])

    def test_regexp_states_bound(self):
        st, out, _ = self.req("PUT", "/qt2", {"mappings": {"properties": {
            "k": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("POST", "/qt2/_search", {"query": {"regexp": {
            "k": {"value": "(a{1,100}){1,100}"}}}})
        self.assertEqual(st, 400, out)
        self.assertIn("more than 10000 states", out["error"]["root_cause"][0]["reason"])
        self.req("DELETE", "/qt2")

    def test_compound(self):
        red = self.scores({"term": {"t": "red"}})
        fox = self.scores({"term": {"t": "fox"}})
        self.assertEqual(self.scores({"constant_score": {"filter": {"term": {"t": "red"}},
                                                         "boost": 1.5}}),
                         {"0": 1.5, "2": 1.5})
        dm = self.scores({"dis_max": {"queries": [{"term": {"t": "red"}},
                                                  {"term": {"t": "fox"}}],
                                      "tie_breaker": 0.5}})
        self.assertEqual(set(dm), {"0", "1", "2"})
        best = max(red["0"], fox["0"])
        self.assertAlmostEqual(dm["0"], best + 0.5 * (red["0"] + fox["0"] - best), places=5)
        self.assertAlmostEqual(dm["2"], red["2"], places=6)
        b = self.scores({"boosting": {"positive": {"term": {"t": "red"}},
                                      "negative": {"term": {"t": "fox"}},
                                      "negative_boost": 0.25}})
        self.assertAlmostEqual(b["0"], red["0"] * 0.25, places=6)
        self.assertAlmostEqual(b["2"], red["2"], places=6)

    def test_fuzzy(self):
        fox = self.scores({"term": {"t": "fox"}})
        # "fax" is 1 edit from "fox" (3 letters): boost 1 - 1/3; the doc freq
        # of the expansion is the largest of its terms' (both words in 2 docs
        # here would score alike; "fox" alone: its own)
        got = self.scores({"fuzzy": {"t": {"value": "fax", "fuzziness": 1}}})
        self.assertEqual(set(got), {"0", "1"})
        for d in got:
            self.assertAlmostEqual(got[d], fox[d] * (1 - 1 / 3), places=5)
        self.assertEqual(self.ids({"fuzzy": {"t": "fxo"}}), ["0", "1"])  # a transposition
        self.assertEqual(self.ids({"fuzzy": {"t": {"value": "fxo", "transpositions": False}}}), [])
        self.assertEqual(self.ids({"fuzzy": {"t": {"value": "fax", "prefix_length": 2}}}), [])
        self.assertEqual(self.ids({"fuzzy": {"k": {"value": "GOT", "fuzziness": "AUTO"}}}), ["0"])
        self.assertEqual(self.ids({"fuzzy": {"k": {"value": "GE", "fuzziness": "AUTO"}}}), [])
        m = self.scores({"match": {"t": {"query": "rad fax", "fuzziness": "AUTO"}}})
        self.assertEqual(set(m), {"0", "1", "2"})
        self.assertEqual(self.ids({"match": {"t": {"query": "rad fax", "fuzziness": 1,
                                                   "operator": "and"}}}), ["0"])
        out = self.q({"fuzzy": {"n": "1"}}, status=400)
        self.assertIn("Can only use fuzzy queries on keyword and text fields",
                      out["error"]["root_cause"][0]["reason"])
        out = self.q({"fuzzy": {"t": {"value": "fox", "fuzziness": 3}}}, status=400)
        self.assertIn("not supported", out["error"]["root_cause"][0]["reason"])

    def test_query_string(self):
        qs = lambda q, **o: self.ids({"query_string": dict(o, query=q)})
        self.assertEqual(qs("k:P*"), ["1", "2"])
        self.assertEqual(qs("red AND NOT t:fox"), ["2"])
        self.assertEqual(qs("n:[2 TO 3]"), ["1", "2"])
        self.assertEqual(qs("n:{2 TO *}"), ["2", "3"])
        self.assertEqual(qs("n:>=3"), ["2", "3"])
        self.assertEqual(qs("_exists_:k AND (bear OR jumps)"), ["1", "3"])
        self.assertEqual(qs("red fox", default_field="t", default_operator="AND"), ["0"])
        self.assertEqual(qs("red fox", fields=["t"]), ["0", "1", "2"])
        self.assertEqual(qs("n:abc", lenient=True), [])
        st, out, _ = self.req("POST", "/qt/_search", {"query": {"query_string": {
            "query": "n:abc"}}})
        self.assertEqual(st, 400, out)
        self.assertEqual(qs("\"red fox\"", fields=["t"]), ["0"])
        st, out, _ = self.req("POST", "/qt/_search", {"query": {"query_string": {
            "query": "t:\"red fox"}}})
        self.assertEqual(st, 400, out)
        self.assertIn("not closed", out["error"]["root_cause"][0]["reason"])
        sq = lambda q, **o: self.ids({"simple_query_string": dict(o, query=q)})
        self.assertEqual(sq("red -fox", fields=["t"], default_operator="and"), ["2"])
        self.assertEqual(sq("bro* | jumps", fields=["t"]), ["1", "3"])
        # q= takes the same syntax
        st, out, _ = self.req("GET", "/qt/_count?q=k:P*%20OR%20t:bear")
        self.assertEqual(out["count"], 3, out)

    def test_min_score(self):
        red = self.scores({"term": {"t": "red"}})
        cut = (red["0"] + red["2"]) / 2
        self.assertEqual(self.ids({"term": {"t": "red"}}, min_score=cut), ["2"])
        st, out, _ = self.req("POST", "/qt/_count", {"query": {"term": {"t": "red"}},
                                                     "min_score": cut})
        self.assertEqual(out.get("count"), 1, out)
        st, out, _ = self.req("GET", "/qt/_count?q=t:red&min_score=%f" % cut)
        self.assertEqual(out.get("count"), 1, out)
        # sorted by a field, hits show no score (null, as Elasticsearch's
        # TopFieldCollector leaves it) though min_score needs one; with
        # track_scores they show it
        out = self.q({"term": {"t": "red"}}, min_score=cut, sort=[{"n": "asc"}])
        self.assertEqual([(h["_id"], h["_score"]) for h in out["hits"]["hits"]],
                         [("2", None)])
        self.assertIsNone(out["hits"]["max_score"])
        out = self.q({"term": {"t": "red"}}, min_score=cut, sort=["_doc"],
                     track_scores=True)
        self.assertEqual([(h["_id"], h["_score"]) for h in out["hits"]["hits"]],
                         [("2", red["2"])])
        self.assertEqual(out["hits"]["max_score"], red["2"])

    def test_profile_names_the_queries(self):
        st, out, _ = self.req("POST", "/qt/_search", {"profile": True, "size": 1, "query": {
            "dis_max": {"queries": [{"prefix": {"k": "P"}},
                                    {"fuzzy": {"t": {"value": "fax", "fuzziness": 1}}}]}}})
        self.assertEqual(st, 200, out)
        q = out["profile"]["shards"][0]["searches"][0]["query"][0]
        self.assertEqual(q["type"], "DisjunctionMaxQuery")
        self.assertEqual(q["description"], "(k:P* | t:fax~1)")

    def test_kibana_shapes(self):
        # script_fields {} asks for nothing; a terms lookup takes doc 1's k
        out = self.q({"match_all": {}}, script_fields={})
        self.assertEqual(len(out["hits"]["hits"]), 4)
        self.assertEqual(self.ids({"terms": {"k": {"index": "qt", "id": "1", "path": "k"}}}),
                         ["1"])

    def test_limits(self):
        out = self.q({"terms": {"k": ["a", "b", "c", "d"]}}, status=400)
        self.assertIn("exceeded the allowed maximum of [3]", out["error"]["root_cause"][0]["reason"])
        out = self.q({"ids": {"values": ["1", "2", "3", "4", "5", "6"]}}, status=400)
        self.assertEqual(out["error"]["root_cause"][0]["type"], "query_shard_exception")
        self.assertIn("Too many ids specified", out["error"]["root_cause"][0]["reason"])
        out = self.q({"match_all": {}}, status=400,
                     rescore={"window_size": 20000, "query": {}})
        self.assertIn("Rescore window [20000] is too large", out["error"]["root_cause"][0]["reason"])
        out = self.q({"match_all": {}}, status=400, rescore={"window_size": 5, "query": {}})
        self.assertIn("[rescore] is not supported", out["error"]["root_cause"][0]["reason"])
        st, out, _ = self.req("PUT", "/qt/_settings", {"index.max_script_fields": 1})
        self.assertEqual(st, 200, out)
        sf = {"a": {"script": "1"}, "b": {"script": "2"}}
        out = self.q({"match_all": {}}, status=400, script_fields=sf)
        self.assertIn("too many script_fields", out["error"]["root_cause"][0]["reason"])
        st, out, _ = self.req("GET", "/qt/_settings")
        self.assertEqual(out["qt"]["settings"]["index"]["max_script_fields"], "1")
        st, out, _ = self.req("PUT", "/qt/_settings", {"index.max_inner_result_window": 5})
        self.assertEqual(st, 400, out)

    def test_count_terminate_after_checked_first(self):
        st, out, _ = self.req("GET", "/nosuch/_count?terminate_after=-1")
        self.assertEqual(st, 400, out)
        self.assertIn("terminateAfter must be > 0", out["error"]["reason"])

    def test_date_math_index_names(self):
        import time
        month = time.strftime("%Y.%m.01", time.gmtime())
        st, out, _ = self.req("GET", "/%3Clogstash-%7Bnow%2FM%7D%3E/_search")
        self.assertEqual(st, 404, out)
        self.assertEqual(out["error"]["index"], "logstash-" + month)
        st, out, _ = self.req("PUT", "/logs-" + time.strftime("%Y-%m", time.gmtime()), {})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("GET", "/qt,%3Clogs-%7Bnow%2FM%7Byyyy-MM%7D%7D%3E/_count")
        self.assertEqual((st, out.get("count")), (200, 4), out)
        st, out, _ = self.req("GET", "/%3Clogs-%7Bnow%2FQ%7D%3E/_count")
        self.assertEqual(st, 400, out)

    def test_search_after_date_in_field_format(self):
        st, out, _ = self.req("PUT", "/sa", {"mappings": {"properties": {
            "ts": {"type": "date", "format": "yyyy-MM-dd HH:mm:ss.SSS"}}}})
        self.assertEqual(st, 200, out)
        for i, t in enumerate(("2019-10-21 00:30:04.828", "2019-10-21 08:30:04.828")):
            self.req("PUT", "/sa/_doc/%d?refresh=true" % i, {"ts": t})
        body = {"size": 1, "sort": [{"ts": "desc"}],
                "search_after": ["2019-10-21 08:30:04.828"]}
        st, out, _ = self.req("POST", "/sa/_search", body)
        self.assertEqual(st, 200, out)
        self.assertEqual(out["hits"]["hits"][0]["sort"], [1571617804828])
        st, out, _ = self.req("POST", "/sa/_search", {"sort": ["_shard_doc"]})
        self.assertEqual(st, 400, out)
        self.assertIn("[_shard_doc] sort field cannot be used without [point in time]",
                      out["error"]["root_cause"][0]["reason"])
        self.req("DELETE", "/sa")

    def test_query_string_time_zone(self):
        st, out, _ = self.req("PUT", "/tz", {"mappings": {"properties": {
            "ts": {"type": "date"}, "m": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        self.req("PUT", "/tz/_doc/1?refresh=true", {"ts": "2020-01-01T23:30:00Z", "m": "GET"})
        def count(q, tz):
            st, out, _ = self.req("POST", "/tz/_count", {"query": {"query_string": {
                "query": q, "time_zone": tz}}})
            return st, out.get("count")
        # 23:30 UTC is already January 2nd at +01:00
        self.assertEqual(count("ts:[2020-01-02 TO 2020-01-02]", "+01:00")[1], 1)
        self.assertEqual(count("ts:[2020-01-02 TO 2020-01-02]", "Z")[1], 0)
        # a named zone: 23:30 UTC is 00:30 on the 2nd in Paris (+01:00 in
        # January); an unknown zone is refused even without a date range
        self.assertEqual(count("m:GET", "Europe/Paris"), (200, 1))
        self.assertEqual(count("ts:[2020-01-02 TO *]", "Europe/Paris"), (200, 1))
        self.assertEqual(count("ts:[2020-01-02 TO *]", "America/New_York"), (200, 0))
        self.assertEqual(count("m:GET", "Europe/Pariss")[0], 400)
        self.req("DELETE", "/tz")

    def test_track_total_hits_messages(self):
        st, out, _ = self.req("POST", "/qt/_search?size=1&track_total_hits=-2")
        self.assertEqual(st, 400, out)
        self.assertIn("must be positive or equals to -1, got -2", out["error"]["reason"])
        st, out, _ = self.req("POST", "/qt/_search?size=1&track_total_hits=false"
                              "&rest_total_hits_as_int=true")
        self.assertEqual(out["hits"]["total"], -1)


class ScoreBits(ServerTestCase):
    """A whole url's `match` (tens of should-terms) scores each hit the same
    to the last bit on the pruned top-k path, doc at a time (`min_score`),
    and in its `_explanation`: the terms are summed in one order on every
    path (docs/query.md).  Before, min_score pages differed from the plain
    ones in the last bits in about two searches of three."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(MAPPING) as f:
            st, body, _ = cls.srv.request("PUT", "/sb", {"mappings": json.load(f)})
        assert st == 200, body
        docs = convert("json").decode().splitlines()[:3000]
        cls.urls = [u for u in (json.loads(d)["url"] for d in docs)
                    if len(u) > 30]  # several terms each
        for at in (0, 1500):  # two segments
            lines = []
            for d in docs[at:at + 1500]:
                lines.append('{"index":{}}')
                lines.append(d)
            st, out, _ = cls.srv.request("POST", "/sb/_bulk?refresh=true",
                                         "\n".join(lines) + "\n",
                                         {"Content-Type": "application/x-ndjson"})
            assert st == 200 and not out["errors"], str(out)[:300]

    def test_same_bits_on_every_path(self):
        rnd = random.Random(3)
        differ = []
        for url in rnd.sample(self.urls, 80):
            body = {"query": {"match": {"url": url}}, "size": 10}
            st, plain, _ = self.req("POST", "/sb/_search", body)
            self.assertEqual(st, 200, plain)
            st, daat, _ = self.req("POST", "/sb/_search",
                                   dict(body, min_score=0, explain=True))
            self.assertEqual(st, 200, daat)
            a = [(h["_id"], h["_score"]) for h in plain["hits"]["hits"]]
            b = [(h["_id"], h["_score"]) for h in daat["hits"]["hits"]]
            self.assertTrue(a, url)
            if a != b:
                differ.append(url)
            for h in daat["hits"]["hits"]:
                self.assertEqual(h["_explanation"]["value"], h["_score"], url)
        self.assertEqual(differ, [])

    def test_tied_pages_in_one_order_on_every_sort(self):
        """A page by score is sorted by a heapsort of its heap; an explicit
        `sort` on `_score` by the general comparator; explain and named
        queries sort the page before reading it.  Ties (every GET of one
        url length scores alike) must come out in one order, segment then
        doc, on all of them."""
        for q in ({"match": {"method": "GET"}},
                  {"match": {"url": "product"}},
                  {"term": {"status": 200}}):
            body = {"query": q, "size": 40}
            pages = []
            for extra in ({}, {"explain": True},
                          {"query": {"bool": {"should": [dict(q)],
                                              "_name": "n"}}},
                          {"sort": ["_score"], "track_scores": True}):
                st, out, _ = self.req("POST", "/sb/_search", dict(body, **extra))
                self.assertEqual(st, 200, out)
                pages.append([(h["_id"], h["_score"]) for h in out["hits"]["hits"]])
            self.assertEqual(len(pages[0]), 40, q)
            scores = [s for _, s in pages[0]]
            self.assertEqual(scores, sorted(scores, reverse=True), q)
            self.assertGreater(len(scores) - len(set(scores)), 10, q)  # ties
            for p in pages[1:]:
                self.assertEqual(p, pages[0], q)

    def test_exact_value_seed_counts_only_docs_with_the_field(self):
        """The docs whose url.keyword is the match text seed the k-th score
        (docs/query.md) when k of them hold the url.  A doc that set
        url.keyword directly was counted among them and cut every hit
        below the first one's score; such a doc is now refused (as in
        Elasticsearch, the path would need url to be an object), alone or
        beside a url, and the pages of the docs that were taken are the
        doc-at-a-time ones (min_score) and the counted ones."""
        def bulk(docs, refused=False):
            body = "".join('{"index":{"_id":"%s"}}\n%s\n' % (i, json.dumps(d))
                           for i, d in docs)
            st, out, _ = self.req("POST", "/ev/_bulk?refresh=true", body,
                                  {"Content-Type": "application/x-ndjson"})
            self.assertEqual(st, 200, out)
            self.assertEqual(out["errors"], refused, out)
            for it in out["items"]:
                if refused:
                    self.assertEqual(it["index"]["status"], 400, it)
                    self.assertEqual(it["index"]["error"]["type"],
                                     "document_parsing_exception", it)
                    self.assertIn("Existing mapping for [url] must be of type "
                                  "object but found [text]",
                                  it["index"]["error"]["reason"], it)
        st, out, _ = self.req("PUT", "/ev", {})
        self.assertEqual(st, 200, out)
        bulk([(0, {"url": "alpha beta"})] +
             [(i, {"url": "alpha beta gamma"}) for i in range(1, 6)])
        bulk([(i, {"other": "z", "url.keyword": "alpha beta"})
              for i in range(100, 103)], refused=True)
        bulk([(i, {"url": "alpha beta gamma", "url.keyword": "alpha beta"})
              for i in range(103, 106)], refused=True)
        st, out, _ = self.req("POST", "/ev/_forcemerge?max_num_segments=1")
        self.assertEqual(st, 200, out)
        for size in range(1, 8):
            for frm in range(0, 3):
                body = {"query": {"match": {"url": "alpha beta"}},
                        "size": size, "from": frm}
                pages = []
                for extra in ({}, {"min_score": 0}, {"track_total_hits": True}):
                    st, out, _ = self.req("POST", "/ev/_search", dict(body, **extra))
                    self.assertEqual(st, 200, out)
                    pages.append([(h["_id"], h["_score"]) for h in out["hits"]["hits"]])
                self.assertEqual(pages[0], pages[1], (size, frm))
                self.assertEqual(pages[0], pages[2], (size, frm))
                self.assertEqual(len(pages[0]), max(0, min(size, 6 - frm)), (size, frm))
        self.req("DELETE", "/ev")

    def test_exact_value_seed_on_long_values(self):
        """A url past the keyword's ignore_above (256 bytes) has no keyword
        term: the seed finds the docs of the url by the field's own value
        ids (docs/query.md).  Its pages equal the doc-at-a-time ones
        (min_score) with copies deleted, over two segments and merged,
        beside urls that hold every term of it and more, or all but one."""
        url = "/filter/" + "%2C".join("b%d" % i for i in range(70))
        self.assertGreater(len(url), 256)
        more = url + "%2Cb999"
        less = url.replace("%2Cb69", "")
        twice = url.replace("b7%2C", "b7%2Cb7%2C")
        docs = ([("c%d" % i, url) for i in range(12)] +
                [("m%d" % i, more) for i in range(4)] +
                [("l%d" % i, less) for i in range(4)] +
                [("t%d" % i, twice) for i in range(4)] +
                [("f%d" % i, "/filter/b%d%%2Cb%d" % (i, i + 1)) for i in range(30)])
        random.Random(7).shuffle(docs)
        st, out, _ = self.req("PUT", "/lv", {})
        self.assertEqual(st, 200, out)
        for half in (docs[:len(docs) // 2], docs[len(docs) // 2:]):
            body = "".join('{"index":{"_id":"%s"}}\n%s\n' % (i, json.dumps({"url": u}))
                           for i, u in half)
            st, out, _ = self.req("POST", "/lv/_bulk?refresh=true", body,
                                  {"Content-Type": "application/x-ndjson"})
            self.assertEqual(st, 200, out)
            self.assertFalse(out["errors"], out)

        def check(live):
            for size in (1, 3, 5, 10, 14):
                for frm in (0, 2):
                    body = {"query": {"match": {"url": url}}, "size": size, "from": frm}
                    pages = []
                    for extra in ({}, {"min_score": 0}):
                        st, out, _ = self.req("POST", "/lv/_search", dict(body, **extra))
                        self.assertEqual(st, 200, out)
                        pages.append([(h["_id"], h["_score"]) for h in out["hits"]["hits"]])
                    self.assertEqual(pages[0], pages[1], (live, size, frm))
                    self.assertEqual(len(pages[0]), size, (live, size, frm))

        check(12)
        for i in range(9):  # 3 copies left: too few for a page of 5
            st, out, _ = self.req("DELETE", "/lv/_doc/c%d?refresh=true" % i)
            self.assertEqual(st, 200, out)
        check(3)
        st, out, _ = self.req("POST", "/lv/_forcemerge?max_num_segments=1")
        self.assertEqual(st, 200, out)
        check(3)
        self.req("DELETE", "/lv")


class LegacyBM25(ServerTestCase):
    """Elasticsearch scores text with LegacyBM25Similarity: Lucene's
    BM25Similarity handed the boost times (1 + k1), so one doc matching one
    term scores its idf and explain shows the boost as 2.2 (count's
    30_min_score REST test shows the thresholds)."""

    def test_scores_and_min_score_as_elasticsearch(self):
        st, out, _ = self.req("PUT", "/lb", {})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("PUT", "/lb/_doc/1?refresh=true",
                              {"user": "kimchy", "field": "foo bar"})
        self.assertIn(st, (200, 201), out)
        st, out, _ = self.req("POST", "/lb/_search", {
            "query": {"match": {"user": "kimchy"}}, "explain": True})
        self.assertEqual(st, 200, out)
        h = out["hits"]["hits"][0]
        self.assertEqual(h["_score"], 0.2876821)  # ln(1 + 0.5 / 1.5)
        tf = h["_explanation"]["details"][0]
        self.assertEqual(tf["details"][0], {"value": 2.2, "description": "boost",
                                            "details": []})
        st, out, _ = self.req("PUT", "/lb/_doc/2?refresh=true",
                              {"field": "foo bar bar bar bar"})
        self.assertIn(st, (200, 201), out)
        for min_score, count in ((0.2, 1), (0.1, 2), (0.5, 0)):
            st, out, _ = self.req("POST", "/lb/_count?q=field:foo&min_score=%s"
                                  % min_score)
            self.assertEqual(st, 200, out)
            self.assertEqual(out["count"], count, min_score)
        self.req("DELETE", "/lb")

    def test_a_boost_is_passed_down_to_each_term(self):
        """A boost on a query of several clauses goes into each term's
        weight, as Lucene's BoostQuery and BooleanWeight pass it down:
        each term scores with boost 3 * 2.2 = 6.6000004, and the sum is of
        the boosted terms (a bool multiplying its sum by 3 is 1 ulp off,
        3.7446074)."""
        st, out, _ = self.req("PUT", "/bq", {})
        self.assertEqual(st, 200, out)
        body = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i, json.dumps({"body": d}))
                       for i, d in enumerate(["a b", "a a b c", "b c d", "a d",
                                              "c d e f"]))
        st, out, _ = self.req("POST", "/bq/_bulk?refresh=true", body,
                              {"Content-Type": "application/x-ndjson"})
        self.assertFalse(out["errors"], out)
        st, out, _ = self.req("POST", "/bq/_search", {"explain": True, "query": {
            "match": {"body": {"query": "a b", "boost": 3}}}})
        self.assertEqual(st, 200, out)
        h = out["hits"]["hits"][0]
        self.assertEqual((h["_id"], h["_score"]), ("0", 3.744608))
        e = h["_explanation"]
        self.assertEqual(e["value"], h["_score"])
        self.assertEqual(len(e["details"]), 2)
        for term in e["details"]:
            self.assertEqual(term["value"], 1.872304)
            self.assertEqual(term["details"][0]["details"][0]["value"], 6.6000004)
        for q in ({"bool": {"should": [{"match": {"body": "a"}}, {"match": {"body": "b"}}],
                            "boost": 3}},
                  {"bool": {"should": [{"match": {"body": {"query": "a", "boost": 3}}},
                                       {"match": {"body": {"query": "b", "boost": 3}}}]}}):
            st, out, _ = self.req("POST", "/bq/_search", {"query": q})
            self.assertEqual(st, 200, out)
            self.assertEqual(out["hits"]["hits"][0]["_score"], 3.744608, q)
        # dis_max explains as Lucene's DisjunctionMaxWeight: its matching
        # clauses, "max of:" or "max plus <tie> times others of:"
        for tie, desc in ((None, "max of:"), (0.3, "max plus 0.3 times others of:")):
            q = {"dis_max": {"queries": [{"match": {"body": "a"}},
                                         {"match": {"body": "b"}},
                                         {"match": {"body": "zzz"}}]}}
            if tie is not None:
                q["dis_max"]["tie_breaker"] = tie
            st, out, _ = self.req("POST", "/bq/_search", {"query": q, "explain": True})
            self.assertEqual(st, 200, out)
            for h in out["hits"]["hits"]:
                e = h["_explanation"]
                self.assertEqual(e["description"], desc)
                self.assertEqual(e["value"], h["_score"])
                vals = [d["value"] for d in e["details"]]
                self.assertTrue(vals, h)
                best = max(vals)
                self.assertAlmostEqual(h["_score"], best + (tie or 0) * (sum(vals) - best),
                                       places=5)
        self.req("DELETE", "/bq")


class ExistsPatterns(ServerTestCase):
    """exists on an object field (any field under it) and on a field
    pattern, as Elasticsearch's ExistsQueryBuilder resolves them."""

    def test_object_and_pattern(self):
        st, out, _ = self.req("PUT", "/ex", {"mappings": {"properties": {
            "g": {"properties": {"who": {"type": "keyword"}, "n": {"type": "long"},
                                 "deep": {"properties": {"t": {"type": "text"}}}}},
            "h": {"type": "long"}}}})
        self.assertEqual(st, 200, out)
        for i, d in enumerate([{"g": {"who": "x"}}, {"g": {"n": 1}}, {"h": 1},
                               {"g": {"deep": {"t": "a b"}}}, {"g": {}}]):
            st, out, _ = self.req("PUT", "/ex/_doc/%d" % i, d)
            self.assertIn(st, (200, 201), out)
        self.req("POST", "/ex/_refresh")

        def ids(field, boost=None):
            q = {"field": field}
            if boost:
                q["boost"] = boost
            st, out, _ = self.req("POST", "/ex/_search", {"query": {"exists": q}})
            self.assertEqual(st, 200, out)
            return sorted((h["_id"], h["_score"]) for h in out["hits"]["hits"])
        self.assertEqual(ids("g"), [("0", 1.0), ("1", 1.0), ("3", 1.0)])
        self.assertEqual(ids("g.deep"), [("3", 1.0)])
        self.assertEqual(ids("g*", boost=3), [("0", 3.0), ("1", 3.0), ("3", 3.0)])
        self.assertEqual(ids("*.who"), [("0", 1.0)])
        self.assertEqual(ids("h"), [("2", 1.0)])
        self.assertEqual(ids("nothing*"), [])
        self.assertEqual(ids("nothing"), [])
        self.req("DELETE", "/ex")


class TermsLookup(ServerTestCase):
    """The terms query's lookup form fetches the terms from a document, as
    Elasticsearch's TermsLookup (search/170_terms_query.yml)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/tl", {
            "settings": {"index.max_terms_count": 2, "index.number_of_shards": 2},
            "mappings": {"properties": {"user": {"type": "keyword"},
                                        "followers": {"type": "keyword"},
                                        "n": {"type": "long"}}}})
        assert st == 200, body
        docs = [("u1", {"user": "u1", "followers": ["u2", "u3"], "n": 1}),
                ("u2", {"user": "u2", "followers": ["u1", "u3", "u4"], "n": 2}),
                ("u3", {"user": "u3", "followers": ["u1"], "n": 3}),
                ("u4", {"user": "u4", "n": 4})]
        for i, d in docs:
            st, body, _ = cls.srv.request("PUT", "/tl/_doc/" + i, d)
            assert st in (200, 201), body
        # the lists: nested objects, a dotted key, numbers; one routed doc
        st, body, _ = cls.srv.request("PUT", "/lists", {
            "settings": {"index.number_of_shards": 2}})  # r's shard is not x's
        assert st == 200, body
        for path, d in [("/lists/_doc/a", {"g": [{"who": "u4"}, {"who": ["u3"]}]}),
                        ("/lists/_doc/b", {"g.who": "u1", "nums": [2, 4]}),
                        ("/lists/_doc/r?routing=x", {"g": {"who": "u2"}})]:
            st, body, _ = cls.srv.request("PUT", path, d)
            assert st in (200, 201), body
        cls.srv.request("POST", "/tl,lists/_refresh")

    def ids(self, terms, path="/tl/_search", status=200):
        st, out, _ = self.req("POST", path, {"query": {"terms": terms}})
        self.assertEqual(st, status, out)
        return out if status != 200 else sorted(h["_id"] for h in out["hits"]["hits"])

    def test_lookup(self):
        self.assertEqual(self.ids({"user": {"index": "tl", "id": "u1", "path": "followers"}}),
                         ["u2", "u3"])
        # values under arrays of objects, and a key holding the dots
        self.assertEqual(self.ids({"user": {"index": "lists", "id": "a", "path": "g.who"}}),
                         ["u3", "u4"])
        self.assertEqual(self.ids({"user": {"index": "lists", "id": "b", "path": "g.who"}}),
                         ["u1"])
        self.assertEqual(self.ids({"n": {"index": "lists", "id": "b", "path": "nums"}}),
                         ["u2", "u4"])
        # a doc written with a routing is found with it only
        self.assertEqual(self.ids({"user": {"index": "lists", "id": "r", "path": "g.who"}}), [])
        self.assertEqual(self.ids({"user": {"index": "lists", "id": "r", "path": "g.who",
                                            "routing": "x"}}), ["u2"])
        # no document, or no value at the path: no terms, no hits
        self.assertEqual(self.ids({"user": {"index": "tl", "id": "u9", "path": "followers"}}), [])
        self.assertEqual(self.ids({"user": {"index": "tl", "id": "u4", "path": "followers"}}), [])
        # inside a bool, and in _count
        st, out, _ = self.req("POST", "/tl/_count", {"query": {"bool": {"filter": [
            {"terms": {"user": {"index": "tl", "id": "u1", "path": "followers"}}}]}}})
        self.assertEqual((st, out["count"]), (200, 2), out)

    def test_lookup_values_keep_their_digits(self):
        # numbers come from the source's digits, not through a double
        st, out, _ = self.req("PUT", "/big", {"mappings": {"properties": {
            "uid": {"type": "long"}, "k": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        for i, d in [("1", {"uid": 1234567890123456789, "k": "1234567890123456789"}),
                     ("2", {"uid": 1234567890123456768, "k": "x"}),
                     ("3", {"uid": 1, "k": "1.0"})]:
            self.req("PUT", "/big/_doc/" + i, d)
        self.req("PUT", "/big/_doc/src1", '{"f":[1234567890123456789]}')
        self.req("PUT", "/big/_doc/src2", '{"f":[1.0]}')
        self.req("POST", "/big/_refresh")
        def hits(field, src):
            return self.ids({field: {"index": "big", "id": src, "path": "f"}}, path="/big/_search")
        self.assertEqual(hits("uid", "src1"), ["1"])
        self.assertEqual(hits("k", "src1"), ["1"])
        self.assertEqual(hits("k", "src2"), ["3"])
        self.assertEqual(hits("uid", "src2"), ["3"])
        self.req("DELETE", "/big")

    def test_lookup_only_in_queries(self):
        # a terms aggregation named like a lookup key is no lookup
        st, out, _ = self.req("POST", "/tl/_search", {"size": 0, "aggs": {
            "terms": {"terms": {"field": "user"},
                      "aggs": {"path": {"terms": {"field": "n"}},
                               "id": {"max": {"field": "n"}}}}}})
        self.assertEqual(st, 200, out)
        self.assertEqual(len(out["aggregations"]["terms"]["buckets"]), 4)
        # in a filter aggregation it is one
        st, out, _ = self.req("POST", "/tl/_search", {"size": 0, "aggs": {"f": {"filter": {
            "terms": {"user": {"index": "tl", "id": "u1", "path": "followers"}}}}}})
        self.assertEqual((st, out["aggregations"]["f"]["doc_count"]), (200, 2), out)
        # escaped keys are the same keys
        st, out, _ = self.req("POST", "/tl/_search",
                              '{"query":{"terms":{"user":{"ind\\u0065x":"tl","\\u0069d":"u1",'
                              '"p\\u0061th":"followers"}}}}')
        self.assertEqual((st, out["hits"]["total"]["value"]), (200, 2), out)

    def test_lookup_source_alias_and_nul(self):
        st, out, _ = self.req("PUT", "/nosrc", {"mappings": {"_source": {"enabled": False},
                                                             "properties": {"f": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        self.req("PUT", "/nosrc/_doc/1?refresh=true", {"f": ["u2"]})
        # an index that keeps no _source gives no terms, as in Elasticsearch
        self.assertEqual(self.ids({"user": {"index": "nosrc", "id": "1", "path": "f"}}), [])
        self.req("DELETE", "/nosrc")
        # an alias of one index will do; of two, 400
        self.req("POST", "/_aliases", {"actions": [{"add": {"index": "tl", "alias": "tla"}},
                                                   {"add": {"index": "tl", "alias": "two"}},
                                                   {"add": {"index": "lists", "alias": "two"}}]})
        self.assertEqual(self.ids({"user": {"index": "tla", "id": "u1", "path": "followers"}}),
                         ["u2", "u3"])
        out = self.ids({"user": {"index": "two", "id": "u1", "path": "followers"}}, status=400)
        self.assertIn("more than one index", out["error"]["reason"])
        self.req("POST", "/_aliases", {"actions": [{"remove": {"index": "*", "alias": "tla"}},
                                                   {"remove": {"index": "*", "alias": "two"}}]})
        # a NUL in an id is refused, not cut
        out = self.ids({"user": {"index": "tl", "id": "u1\u0000x", "path": "followers"}},
                       status=400)
        self.assertIn("NUL", out["error"]["reason"])

    def test_lookup_errors(self):
        # the fetched terms count against index.max_terms_count
        out = self.ids({"user": {"index": "tl", "id": "u2", "path": "followers"}}, status=400)
        self.assertIn("has exceeded the allowed maximum of [2]", out["error"]["reason"])
        out = self.ids({"user": {"index": "nope", "id": "u1", "path": "followers"}}, status=404)
        self.assertEqual(out["error"]["type"], "index_not_found_exception")
        out = self.ids({"user": {"index": "tl", "id": "u1"}}, status=400)
        self.assertEqual(out["error"]["reason"],
                         "[terms] query lookup element requires specifying the path.")
        out = self.ids({"user": {"index": "tl", "id": "u1", "path": "followers", "x": 1}},
                       status=400)
        self.assertEqual(out["error"]["type"], "parsing_exception")
        out = self.ids({"user": {"index": "tl", "id": 1, "path": "followers"}}, status=400)
        self.assertIn("must be a string", out["error"]["reason"])

    def test_named_queries_over_shards_and_indices(self):
        # tl has two shards: the names come with each shard's hits
        st, out, _ = self.req("POST", "/tl,lists/_search", {"query": {"bool": {"should": [
            {"terms": {"user": {"index": "tl", "id": "u1", "path": "followers"},
                       "_name": "u1's"}},
            {"range": {"n": {"gte": 3, "_name": "n3"}}},
            {"exists": {"field": "g.who", "_name": "lists"}}]}}})
        self.assertEqual(st, 200, out)
        got = {h["_id"]: sorted(h.get("matched_queries", [])) for h in out["hits"]["hits"]}
        self.assertEqual(got, {"u2": ["u1's"], "u3": ["n3", "u1's"], "u4": ["n3"],
                               "a": ["lists"], "b": ["lists"], "r": ["lists"]})

    def test_lookup_in_msearch_and_delete_by_query(self):
        body = ('{"index":"tl"}\n'
                '{"query":{"terms":{"user":{"index":"tl","id":"u3","path":"followers"}}}}\n')
        st, out, _ = self.req("POST", "/_msearch", body,
                              headers={"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 200, out)
        self.assertEqual([h["_id"] for h in out["responses"][0]["hits"]["hits"]], ["u1"])
        st, out, _ = self.req("PUT", "/tl_copy/_doc/u1?refresh=true", {"user": "u1"})
        self.assertIn(st, (200, 201), out)
        st, out, _ = self.req("POST", "/tl_copy/_delete_by_query?refresh=true", {
            "query": {"terms": {"user": {"index": "tl", "id": "u3", "path": "followers"}}}})
        self.assertEqual((st, out.get("deleted")), (200, 1), out)
        self.req("DELETE", "/tl_copy")


class DocvalueFields(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/dv", {
            "settings": {"index.max_docvalue_fields_search": 4},
            "mappings": {"properties": {
                "k": {"type": "keyword", "ignore_above": 5},
                "t": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
                "n": {"type": "integer"}, "f": {"type": "float"},
                "d": {"type": "double"}, "b": {"type": "boolean"},
                "ts": {"type": "date"},
                "day": {"type": "date", "format": "yyyy/MM/dd"}}}})
        assert st == 200, body
        st, body, _ = cls.srv.request("PUT", "/dv/_doc/1?refresh=true", {
            "k": ["zz", "aa", "zz", "toolong"], "t": "Hello World", "n": [3, 1, 3],
            "f": 3.14, "d": 2.5, "b": [True, False], "ts": "2019-10-21T08:30:04.828Z",
            "day": "2020/02/29"})
        assert st in (200, 201), body

    def fields(self, dv, status=200, qs=""):
        st, out, _ = self.req("POST", "/dv/_search" + qs,
                              {"docvalue_fields": dv} if dv is not None else None)
        self.assertEqual(st, status, out)
        return out if status != 200 else out["hits"]["hits"][0].get("fields")

    def test_values_in_doc_value_order(self):
        f = self.fields(["k", "t.raw", "n", "b"])
        # keywords sorted and deduplicated, past ignore_above left out;
        # numbers sorted with duplicates; booleans false first
        self.assertEqual(f, {"k": ["aa", "zz"], "t.raw": ["Hello World"],
                             "n": [1, 3, 3], "b": [False, True]})
        f = self.fields(["f", "d"])
        self.assertAlmostEqual(f["f"][0], 3.14, places=5)
        self.assertNotEqual(f["f"][0], 3.14)  # float precision, widened
        self.assertEqual(f["d"], [2.5])

    def test_formats_and_patterns(self):
        f = self.fields(["ts", "day", {"field": "n", "format": "#.0"},
                         {"field": "ts", "format": "epoch_millis"}])
        self.assertEqual(f["day"], ["2020/02/29"])
        self.assertEqual(f["n"], ["1.0", "3.0", "3.0"])
        self.assertEqual(f["ts"], ["1571646604828"])  # the later entry wins
        f = self.fields([{"field": "ts", "format": "yyyy-MM-dd HH:mm"}])
        self.assertEqual(f["ts"], ["2019-10-21 08:30"])
        f = self.fields(["t*"])  # a pattern: fields with doc values only
        self.assertEqual(sorted(f), ["t.raw", "ts"])
        f = self.fields(None, qs="?docvalue_fields=n,k")
        self.assertEqual(f, {"n": [1, 3, 3], "k": ["aa", "zz"]})
        self.assertIsNone(self.fields(["nope"]))

    def test_fields_api(self):
        st, out, _ = self.req("POST", "/dv/_search", {
            "_source": False,
            "fields": ["k", "t", "n", "f", "b", "day", {"field": "ts", "format": "epoch_millis"},
                       "t.*", "nope"]})
        self.assertEqual(st, 200, out)
        f = out["hits"]["hits"][0]["fields"]
        # _source order, parsed by the mapping; dates formatted; floats as floats
        self.assertEqual(f, {"k": ["zz", "aa", "zz"], "t": ["Hello World"], "n": [3, 1, 3],
                             "f": [3.14], "b": [True, False], "day": ["2020/02/29"],
                             "ts": ["1571646604828"], "t.raw": ["Hello World"]})
        self.assertNotIn("_source", out["hits"]["hits"][0])

    def test_fields_api_formats(self):
        # the fields API formats dates only: every other type's value
        # fetcher refuses a format (Elasticsearch's NumberFieldType,
        # KeywordFieldType, BooleanFieldType valueFetcher), where before it
        # was taken and not applied; docvalue_fields keep number formats
        for name, typ in (("n", "integer"), ("d", "double"), ("k", "keyword"),
                          ("b", "boolean")):
            st, out, _ = self.req("POST", "/dv/_search", {
                "fields": [{"field": name, "format": "0.00"}]})
            self.assertEqual(st, 400, out)
            self.assertEqual(out["error"]["root_cause"][0]["reason"],
                             "Field [%s] of type [%s] doesn't support formats." % (name, typ))
        st, out, _ = self.req("POST", "/dv/_search", {
            "fields": [{"field": "ts", "format": "yyyy-MM-dd"}, "n"],
            "docvalue_fields": [{"field": "d", "format": "0.00"}]})
        self.assertEqual(st, 200, out)
        f = out["hits"]["hits"][0]["fields"]
        self.assertEqual((f["ts"], f["n"], f["d"]), (["2019-10-21"], [3, 1, 3], ["2.50"]))

    def test_fields_include_unmapped(self):
        st, out, _ = self.req("PUT", "/um", {"mappings": {"dynamic": False, "properties": {
            "k": {"type": "keyword"}}}})
        self.assertEqual(st, 200, out)
        self.req("PUT", "/um/_doc/1?refresh=true",
                 {"k": "a", "extra": {"s": "x", "n": [2, 1.5], "b": True}})
        # as Kibana's Discover asks: every field, unmapped ones too
        st, out, _ = self.req("POST", "/um/_search", {
            "_source": False, "fields": [{"field": "*", "include_unmapped": "true"}]})
        self.assertEqual(st, 200, out)
        self.assertEqual(out["hits"]["hits"][0]["fields"],
                         {"k": ["a"], "extra.s": ["x"], "extra.n": [2, 1.5],
                          "extra.b": [True]})
        st, out, _ = self.req("POST", "/um/_search", {"fields": ["*"]})
        self.assertEqual(out["hits"]["hits"][0]["fields"], {"k": ["a"]})
        self.req("DELETE", "/um")

    def test_refusals(self):
        out = self.fields(["t"], status=400)
        self.assertIn("Text fields are not optimised", out["error"]["root_cause"][0]["reason"])
        out = self.fields(["k", "n", "b", "d", "f"], status=400)
        self.assertIn("Trying to retrieve too many docvalue_fields. Must be less than or "
                      "equal to: [4] but was [5]", out["error"]["root_cause"][0]["reason"])
        out = self.fields([{"field": "k", "format": "x"}], status=400)
        self.assertIn("doesn't support formats", out["error"]["root_cause"][0]["reason"])


if __name__ == "__main__":
    unittest.main()
