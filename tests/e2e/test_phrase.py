"""Phrase queries over indexed term positions, as Elasticsearch 8 answers
them: match_phrase (slop, zero_terms_query, boost), match_phrase_prefix
(max_expansions), multi_match phrase / phrase_prefix, quoted phrases of
query_string / simple_query_string (~N, phrase_slop), position_increment_gap
between the values of an array, scores (BM25 of the phrase frequency with
the terms' idfs summed), index_options in the mapping and the refusal of a
phrase on a field indexed without positions, phrases after a force merge."""
import math
import unittest

from fdsserver import ServerTestCase

DOCS = [
    {"t": "the quick brown fox", "f": "quick brown"},
    {"t": "quick fox brown", "f": "quick brown"},
    {"t": ["brown", "fox jumps"]},
    {"t": "quick quick brown brown fox"},
    {"t": "brownie quick brown"},
]


def bm25(idf, freq, dl, avgdl):
    # Elasticsearch's LegacyBM25Similarity: boost * (1 + k1) * idf * tf
    return 2.2 * idf * freq / (freq + 1.2 * (0.25 + 0.75 * dl / avgdl))


def idf(n, N):
    return math.log(1 + (N - n + 0.5) / (n + 0.5))


class Phrase(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("PUT", "/ph", {"mappings": {"properties": {
            "t": {"type": "text"},
            "f": {"type": "text", "index_options": "freqs"},
            "d": {"type": "text", "index_options": "docs"}}}})
        assert st == 200, body
        for i, d in enumerate(DOCS):
            st, body, _ = cls.srv.request("PUT", "/ph/_doc/%d" % i, d)
            assert st in (200, 201), body
            if i == 2:  # two segments
                cls.srv.request("POST", "/ph/_refresh")
        cls.srv.request("POST", "/ph/_refresh")

    def q(self, query, status=200, index="ph", **extra):
        body = dict(extra)
        body["query"] = query
        st, out, _ = self.req("POST", "/%s/_search" % index, body)
        self.assertEqual(st, status, out)
        return out

    def scores(self, query, index="ph"):
        return {h["_id"]: h["_score"] for h in self.q(query, index=index)["hits"]["hits"]}

    def ids(self, query, index="ph"):
        return sorted(self.scores(query, index))

    def err(self, query, index="ph"):
        out = self.q(query, 400, index)
        return out["error"]["root_cause"][0]

    def test_exact_and_score(self):
        s = self.scores({"match_phrase": {"t": "quick brown"}})
        self.assertEqual(sorted(s), ["0", "3", "4"])
        # N = 5 docs with t; quick in 0,1,3,4; brown in all; 18 tokens
        w = idf(4, 5) + idf(5, 5)
        self.assertAlmostEqual(s["0"], bm25(w, 1, 4, 18 / 5), places=5)
        self.assertAlmostEqual(s["3"], bm25(w, 1, 5, 18 / 5), places=5)
        b = self.scores({"match_phrase": {"t": {"query": "quick brown", "boost": 3}}})
        self.assertAlmostEqual(b["0"], 3 * s["0"], places=5)
        # one term is a term query; no term: zero_terms_query
        self.assertEqual(self.scores({"match_phrase": {"t": "fox"}}),
                         self.scores({"term": {"t": "fox"}}))
        self.assertEqual(self.ids({"match_phrase": {"t": "the"}}), ["0"])
        self.assertEqual(self.ids({"match_phrase": {"t": "!!"}}), [])
        self.assertEqual(len(self.ids({"match_phrase": {"t": {
            "query": "!!", "zero_terms_query": "all"}}})), 5)
        self.assertEqual(self.ids({"match_phrase": {"t": "fox quick"}}), [])

    def test_slop(self):
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "quick brown", "slop": 1}}}),
                         ["0", "1", "3", "4"])
        # reversed order costs 2 (Lucene's sloppy phrase); doc 1 needs 3
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "brown quick", "slop": 1}}}),
                         [])
        s = self.scores({"match_phrase": {"t": {"query": "brown quick", "slop": 2}}})
        self.assertEqual(sorted(s), ["0", "3", "4"])
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "brown quick", "slop": 3}}}),
                         ["0", "1", "3", "4"])
        # doc 0: one window of length 2, freq 1/3
        w = idf(5, 5) + idf(4, 5)
        self.assertAlmostEqual(s["0"], bm25(w, 1 / 3, 4, 18 / 5), places=5)

    def test_position_increment_gap(self):
        # ["brown", "fox jumps"]: fox is 101 positions after brown
        self.assertEqual(self.ids({"match_phrase": {"t": "brown fox"}}), ["0", "3"])
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "brown fox", "slop": 99}}}),
                         ["0", "1", "3"])
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "brown fox", "slop": 100}}}),
                         ["0", "1", "2", "3"])

    def test_position_increment_gap_mapping(self):
        st, out, _ = self.req("PUT", "/gap", {"mappings": {"properties": {
            "t": {"type": "text", "position_increment_gap": 0},
            "u": {"type": "text", "position_increment_gap": 10}}}})
        self.assertEqual(st, 200, out)
        self.req("PUT", "/gap/_doc/1?refresh=true",
                 {"t": ["john abraham", "lincoln smith"], "u": ["john abraham", "lincoln smith"]})
        # gap 0: the values run on; gap 10: slop 10 spans it
        self.assertEqual(self.ids({"match_phrase": {"t": "abraham lincoln"}}, "gap"), ["1"])
        self.assertEqual(self.ids({"match_phrase": {"u": {"query": "abraham lincoln",
                                                          "slop": 9}}}, "gap"), [])
        self.assertEqual(self.ids({"match_phrase": {"u": {"query": "abraham lincoln",
                                                          "slop": 10}}}, "gap"), ["1"])
        st, out, _ = self.req("GET", "/gap/_mapping")
        props = out["gap"]["mappings"]["properties"]
        self.assertEqual((props["t"]["position_increment_gap"],
                          props["u"]["position_increment_gap"]), (0, 10))
        for body, what in (
                ({"type": "text", "position_increment_gap": -1}, "must be a non-negative"),
                ({"type": "text", "index_options": "freqs", "position_increment_gap": 5},
                 "without positions enabled"),
                ({"type": "keyword", "position_increment_gap": 5}, "unknown parameter")):
            st, out, _ = self.req("PUT", "/gap2", {"mappings": {"properties": {"x": body}}})
            self.assertEqual(st, 400, out)
            self.assertIn(what, out["error"]["reason"])
        st, out, _ = self.req("PUT", "/gap/_mapping", {"properties": {
            "u": {"type": "text", "position_increment_gap": 11}}})
        self.assertEqual(st, 400, out)
        self.assertIn("Cannot update parameter [position_increment_gap]", out["error"]["reason"])

    def test_prefix(self):
        self.assertEqual(self.ids({"match_phrase_prefix": {"t": "quick br"}}), ["0", "3", "4"])
        # the last term a prefix, one position: any expansion
        self.assertEqual(self.ids({"match_phrase_prefix": {"t": "brow"}}),
                         ["0", "1", "2", "3", "4"])
        # max_expansions: the first terms in term order (brown before brownie)
        self.assertEqual(self.ids({"match_phrase_prefix": {"t": {
            "query": "brow", "max_expansions": 1}}}), ["0", "1", "2", "3", "4"])
        self.assertEqual(self.ids({"match_phrase_prefix": {"t": "quick zz"}}), [])
        self.assertEqual(self.ids({"match_phrase_prefix": {"t": {
            "query": "fox qu", "slop": 3}}}), ["0", "1"])

    def test_multi_match_and_query_string(self):
        want = self.scores({"match_phrase": {"t": "quick brown"}})
        self.assertEqual(self.scores({"multi_match": {"query": "quick brown",
                                                      "type": "phrase", "fields": ["t"]}}), want)
        self.assertEqual(self.ids({"multi_match": {"query": "quick br",
                                                   "type": "phrase_prefix", "fields": ["t"]}}),
                         ["0", "3", "4"])
        self.assertEqual(self.ids({"multi_match": {"query": "brown quick", "slop": 2,
                                                   "type": "phrase", "fields": ["t"]}}),
                         ["0", "3", "4"])
        self.assertEqual(self.scores({"query_string": {"query": "t:\"quick brown\""}}), want)
        self.assertEqual(self.ids({"query_string": {"query": "t:\"brown quick\"~2"}}),
                         ["0", "3", "4"])
        self.assertEqual(self.ids({"query_string": {"query": "t:\"brown quick\"",
                                                    "phrase_slop": 2}}), ["0", "3", "4"])
        self.assertEqual(self.ids({"simple_query_string": {"query": "\"quick brown\"",
                                                           "fields": ["t"]}}), ["0", "3", "4"])
        st, out, _ = self.req("GET", "/ph/_count?q=t:%22quick%20brown%22")
        self.assertEqual((st, out["count"]), (200, 3))

    def test_explain_and_highlight(self):
        out = self.q({"match_phrase": {"t": "quick brown"}}, explain=True,
                     highlight={"fields": {"t": {}}})
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertIn('t:"quick brown"', h["0"]["_explanation"]["description"])
        self.assertAlmostEqual(h["0"]["_explanation"]["value"], h["0"]["_score"], places=5)
        e = h["0"]["_explanation"]["details"][0]
        self.assertEqual(e["description"],
                         "score(freq=1), computed as boost * idf * tf from:")
        idf_node = e["details"][1]
        self.assertEqual(idf_node["description"], "idf, sum of:")
        self.assertAlmostEqual(idf_node["value"], sum(x["value"] for x in idf_node["details"]),
                               places=5)
        self.assertAlmostEqual(e["value"], e["details"][0]["value"] * idf_node["value"] *
                               e["details"][2]["value"], places=5)
        # only the tokens of a phrase match are marked, as Elasticsearch's
        # unified highlighter marks them
        self.assertEqual(h["0"]["highlight"]["t"], ["the <em>quick</em> <em>brown</em> fox"])
        self.assertEqual(h["3"]["highlight"]["t"],
                         ["quick <em>quick</em> <em>brown</em> brown fox"])
        self.assertEqual(h["4"]["highlight"]["t"], ["brownie <em>quick</em> <em>brown</em>"])
        # a term query beside the phrase marks its term everywhere
        out = self.q({"bool": {"must": [{"match_phrase": {"t": "quick brown"}}],
                               "should": [{"term": {"t": "fox"}}]}},
                     highlight={"fields": {"t": {}}})
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertEqual(h["3"]["highlight"]["t"],
                         ["quick <em>quick</em> <em>brown</em> brown <em>fox</em>"])
        # a prefix phrase, and quoted phrases of query_string
        out = self.q({"match_phrase_prefix": {"t": "quick br"}},
                     highlight={"fields": {"t": {}}})
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertEqual(h["3"]["highlight"]["t"],
                         ["quick <em>quick</em> <em>brown</em> brown fox"])
        out = self.q({"query_string": {"query": '"brown fox"', "default_field": "t"}},
                     highlight={"fields": {"t": {}}})
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertEqual(h["0"]["highlight"]["t"], ["the quick <em>brown</em> <em>fox</em>"])
        self.assertEqual(h["3"]["highlight"]["t"],
                         ["quick quick brown <em>brown</em> <em>fox</em>"])
        # with slop, each term of the phrase is marked wherever it is
        out = self.q({"match_phrase": {"t": {"query": "quick brown", "slop": 1}}},
                     highlight={"fields": {"t": {}}})
        h = {x["_id"]: x for x in out["hits"]["hits"]}
        self.assertEqual(h["1"]["highlight"]["t"], ["<em>quick</em> fox <em>brown</em>"])

    def test_profile(self):
        out = self.q({"match_phrase": {"t": {"query": "quick brown", "slop": 2}}},
                     profile=True)
        q = out["profile"]["shards"][0]["searches"][0]["query"][0]
        self.assertEqual((q["type"], q["description"]), ("PhraseQuery", 't:"quick brown"~2'))

    def test_without_positions(self):
        for f in ("f", "d"):
            c = self.err({"match_phrase": {f: "quick brown"}})
            self.assertEqual(c["type"], "query_shard_exception")
            self.assertIn("field:[%s] was indexed without position data; cannot run "
                          "PhraseQuery" % f, c["reason"])
        # one term needs no positions; docs keeps tf 1
        self.assertEqual(self.ids({"match_phrase": {"f": "quick"}}), ["0", "1"])
        st, out, _ = self.req("GET", "/ph/_mapping")
        props = out["ph"]["mappings"]["properties"]
        self.assertEqual(props["f"].get("index_options"), "freqs")
        self.assertEqual(props["d"].get("index_options"), "docs")
        self.assertNotIn("index_options", props["t"])
        st, out, _ = self.req("PUT", "/ph/_mapping", {"properties": {
            "f": {"type": "text", "index_options": "positions"}}})
        self.assertEqual(st, 400, out)
        self.assertIn("Cannot update parameter [index_options]", out["error"]["reason"])

    def test_errors(self):
        def bad(q, what):
            st, out, _ = self.req("POST", "/ph/_search", {"query": q})
            self.assertEqual(st, 400, out)
            self.assertIn(what, out["error"]["root_cause"][0]["reason"])
        bad({"match_phrase": {"t": {"query": "a b", "slop": -1}}}, "No negative slop allowed")
        bad({"match_phrase_prefix": {"t": {"query": "a b", "max_expansions": -1}}},
            "No negative maxExpansions allowed")
        bad({"match_phrase": {"t": {"query": "a b", "operator": "and"}}},
            "[match_phrase] query does not support [operator]")
        bad({"match_phrase": {"t": {"query": "a b", "analyzer": "whitespace"}}},
            "analyzer [whitespace] not found")
        bad({"match_phrase": {"t": {"slop": 1}}}, "No text specified")
        bad({"multi_match": {"query": "a b", "type": "phrase", "fuzziness": 1}},
            "Fuzziness not allowed for type [phrase]")

    def test_after_force_merge(self):
        st, body, _ = self.req("PUT", "/ph2", {"mappings": {"properties": {
            "t": {"type": "text"}}}})
        self.assertEqual(st, 200, body)
        for i, d in enumerate(DOCS):
            self.req("PUT", "/ph2/_doc/%d?refresh=true" % i, {"t": d["t"]})
        self.req("DELETE", "/ph2/_doc/3?refresh=true")
        before = self.ids({"match_phrase": {"t": {"query": "brown fox", "slop": 100}}}, "ph2")
        st, out, _ = self.req("POST", "/ph2/_forcemerge?max_num_segments=1")
        self.assertEqual(st, 200, out)
        self.req("POST", "/ph2/_refresh")
        self.assertEqual(before, ["0", "1", "2"])
        self.assertEqual(self.ids({"match_phrase": {"t": {"query": "brown fox", "slop": 100}}},
                                  "ph2"), before)
        self.assertEqual(self.ids({"match_phrase": {"t": "quick brown"}}, "ph2"), ["0", "4"])


if __name__ == "__main__":
    unittest.main()
