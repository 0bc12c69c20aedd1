"""Search over index expressions, as Elasticsearch 8 answers it: comma lists,
wildcards, exclusions, `_all` and no index at all; ignore_unavailable,
allow_no_indices and expand_wildcards; hits, totals and pages merged across
indices, each hit with its `_index`; a failing index as a shard failure.
Daily indices (`logs-YYYY.MM.DD`, as rsyslog and syslog-ng write them) are
the case it is for; the official Python client searches them too."""
import collections
import json
import time
import unittest

from fdsserver import ServerTestCase

DAYS = ["logs-2026.11.29", "logs-2026.11.30", "logs-2026.12.01"]
PER_DAY = [7, 11, 5]


class MultiIndex(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        lines = []
        cls.docs = []  # (index, id, n, msg)
        k = 0
        for day, count in zip(DAYS, PER_DAY):
            for i in range(count):
                msg = "get page%d" % (k % 4) + (" error" if k % 3 == 0 else "")
                lines.append(json.dumps({"index": {"_index": day, "_id": "d%d" % k}}))
                lines.append(json.dumps({"n": (k * 37) % 101, "msg": msg, "day": day}))
                cls.docs.append((day, "d%d" % k, (k * 37) % 101, msg))
                k += 1
        lines.append(json.dumps({"index": {"_index": "metrics", "_id": "m1"}}))
        lines.append(json.dumps({"v": 1, "msg": "error metric"}))
        lines.append(json.dumps({"index": {"_index": ".hidden", "_id": "h1"}}))
        lines.append(json.dumps({"msg": "hidden error"}))
        lines.append(json.dumps({"index": {"_index": "closed-1", "_id": "c1"}}))
        lines.append(json.dumps({"msg": "closed error"}))
        st, body, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                      "\n".join(lines) + "\n",
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and not body["errors"], str(body)[:400]
        st, body, _ = cls.srv.request("POST", "/closed-1/_close")
        assert st == 200, body

    def search(self, path, body=None, status=200):
        st, out, _ = self.req("POST", path, body)
        self.assertEqual(st, status, out)
        return out

    def count(self, path):
        return self.search(path + "/_count")["count"]

    def test_expressions(self):
        logs = sum(PER_DAY)
        self.assertEqual(self.count("/logs-*"), logs)
        self.assertEqual(self.count("/%s,%s" % (DAYS[0], DAYS[2])), PER_DAY[0] + PER_DAY[2])
        self.assertEqual(self.count("/logs-*,-%s" % DAYS[1]), PER_DAY[0] + PER_DAY[2])
        self.assertEqual(self.count("/logs-*,-logs-2026.11.*"), PER_DAY[2])
        self.assertEqual(self.count("/logs-*,metrics"), logs + 1)
        self.assertEqual(self.count("/%s,%s" % (DAYS[0], DAYS[0])), PER_DAY[0])
        # every open index that is not hidden
        for path in ("/_count", "/_all/_count", "/*/_count"):
            self.assertEqual(self.search(path)["count"], logs + 1, path)
        out = self.search("/_search", {"size": 100})
        self.assertEqual(out["hits"]["total"]["value"], logs + 1)
        self.assertEqual(out["_shards"], {"total": 4, "successful": 4, "skipped": 0,
                                          "failed": 0})
        # hidden (dot) names: only a dot pattern or expand_wildcards=hidden
        self.assertEqual(self.count("/.h*"), 1)
        st, out, _ = self.req("PUT", "/.dothidden", {"settings": {"index.hidden": True}})
        try:
            self.req("PUT", "/.dothidden/_doc/1?refresh=true", {"x": 1})
            self.assertEqual(self.count("/.doth*"), 1)  # a dot pattern finds a hidden dot name
            self.assertEqual(self.count("/*hidden"), 0)
        finally:
            self.req("DELETE", "/.dothidden")
        self.assertEqual(self.count("/*") + 1,
                         self.search("/*/_count?expand_wildcards=open,hidden")["count"])

    def test_hits_carry_their_index(self):
        out = self.search("/logs-*/_search", {"size": 100})
        got = {(h["_index"], h["_id"]) for h in out["hits"]["hits"]}
        self.assertEqual(got, {(d[0], d[1]) for d in self.docs})
        for h in out["hits"]["hits"]:
            self.assertEqual(h["_source"]["day"], h["_index"])

    def test_sorted_pages_across_indices(self):
        want = sorted(self.docs, key=lambda d: (-d[2], DAYS.index(d[0])))
        for frm, size in ((0, 10), (3, 4), (9, 20), (20, 10), (23, 5)):
            out = self.search("/logs-*/_search", {"from": frm, "size": size,
                                                   "sort": [{"n": "desc"}]})
            got = [(h["_index"], h["_id"], h["sort"][0]) for h in out["hits"]["hits"]]
            self.assertEqual(got, [(d[0], d[1], d[2]) for d in want[frm:frm + size]],
                             (frm, size))
            self.assertEqual(out["hits"]["total"]["value"], sum(PER_DAY))
        out = self.search("/logs-*/_search?sort=n:asc&size=3")
        self.assertEqual([h["sort"][0] for h in out["hits"]["hits"]],
                         sorted(d[2] for d in self.docs)[:3])

    def test_scored_merge(self):
        q = {"query": {"match": {"msg": "error"}}, "size": 50}
        out = self.search("/logs-*/_search", q)
        hits = out["hits"]["hits"]
        self.assertEqual(len(hits), sum(1 for d in self.docs if "error" in d[3]))
        scores = [h["_score"] for h in hits]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(out["hits"]["max_score"], scores[0])
        # each index scores with its own statistics: its hits as it alone ranks them
        for day in DAYS:
            alone = self.search("/%s/_search" % day, q)["hits"]["hits"]
            mine = [h for h in hits if h["_index"] == day]
            self.assertEqual([(h["_id"], h["_score"]) for h in mine],
                             [(h["_id"], h["_score"]) for h in alone])

    def test_track_total_hits_across_indices(self):
        out = self.search("/logs-*/_search", {"track_total_hits": 10, "size": 0})
        self.assertEqual(out["hits"]["total"], {"value": 10, "relation": "gte"})
        out = self.search("/logs-*/_search?rest_total_hits_as_int=true", {"size": 0})
        self.assertEqual(out["hits"]["total"], sum(PER_DAY))

    def test_count_terminate_after(self):
        out = self.search("/logs-*/_count?terminate_after=6")
        # each index (shard) stops at 6: 6 + 6 + 5
        self.assertEqual((out["count"], out["terminated_early"]), (17, True))
        out = self.search("/%s/_count?terminate_after=100" % DAYS[0])
        self.assertEqual((out["count"], out["terminated_early"]), (PER_DAY[0], False))
        self.assertNotIn("terminated_early", self.search("/logs-*/_count"))
        out = self.search("/logs-*/_count?terminate_after=-1", status=400)
        self.assertIn("terminateAfter must be > 0", out["error"]["reason"])

    def test_search_terminate_after(self):
        # each index (shard) collects its first N matches in doc order --
        # counted, aggregated, offered to the page -- and stops
        # (Elasticsearch's QueryPhaseCollector); terminated_early when one
        # did; the URL's value over the body's
        def first(n, pred=lambda d: True):
            out = []
            for day in DAYS:
                out += [d for d in self.docs if d[0] == day and pred(d)][:n]
            return out

        def check(out, docs, early):
            self.assertEqual(out["terminated_early"], early)
            self.assertEqual(out["hits"]["total"], {"value": len(docs), "relation": "eq"})
            want = sorted(docs, key=lambda d: (-d[2], DAYS.index(d[0])))
            self.assertEqual([h["_id"] for h in out["hits"]["hits"]], [d[1] for d in want])
            self.assertEqual(out["aggregations"]["s"]["value"], float(sum(d[2] for d in docs)))

        body = {"size": 50, "sort": [{"n": "desc"}], "aggs": {"s": {"sum": {"field": "n"}}}}
        check(self.search("/logs-*/_search?terminate_after=4", body), first(4), True)
        check(self.search("/logs-*/_search?terminate_after=2",
                          dict(body, terminate_after=100)), first(2), True)
        err = lambda d: "error" in d[3]
        q = dict(body, query={"match": {"msg": "error"}})
        check(self.search("/logs-*/_search", dict(q, terminate_after="2")), first(2, err), True)
        check(self.search("/logs-*/_search", dict(q, terminate_after=100)), first(100, err),
              False)
        self.assertNotIn("terminated_early", self.search("/logs-*/_search", body))
        # no shard has more than 11 docs
        check(self.search("/logs-*/_search?terminate_after=11", body), first(11), False)
        out = self.msearch([{"index": "logs-*"}, dict(body, terminate_after=1)])
        check(out["responses"][0], first(1), True)
        for bad, etype in ((-1, "illegal_argument_exception"),
                           ("x", "x_content_parse_exception")):
            out = self.search("/logs-*/_search", {"terminate_after": bad}, status=400)
            self.assertEqual(out["error"]["type"], etype)

    def msearch(self, lines, path="/_msearch", status=200):
        body = "".join(json.dumps(l) + "\n" for l in lines)
        st, out, _ = self.req("POST", path, body, {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, status, out)
        return out

    def test_msearch(self):
        out = self.msearch([{"index": "logs-*"}, {"query": {"match": {"msg": "error"}}, "size": 0},
                            {"index": [DAYS[0], DAYS[1]]}, {"size": 1, "sort": [{"n": "desc"}]},
                            {}, {"size": 0},
                            {"index": "nope"}, {},
                            {"index": DAYS[0]}, {"query": {"bogus": {}}},
                            {"index": "logs-*", "ignore_unavailable": True,
                             "search_type": "query_then_fetch"}, {"size": 0}])
        r = out["responses"]
        self.assertEqual(len(r), 6)
        self.assertEqual(r[0]["hits"]["total"]["value"],
                         sum(1 for d in self.docs if "error" in d[3]))
        best = max((d for d in self.docs if d[0] in DAYS[:2]), key=lambda d: d[2])
        self.assertEqual((r[1]["hits"]["hits"][0]["_id"], r[1]["status"]), (best[1], 200))
        self.assertEqual(r[2]["hits"]["total"]["value"], sum(PER_DAY) + 1)  # every index
        self.assertEqual((r[3]["status"], r[3]["error"]["type"]), (404, "index_not_found_exception"))
        self.assertEqual((r[4]["status"], r[4]["error"]["type"]), (400, "parsing_exception"))
        self.assertEqual(r[5]["status"], 200)
        # /{index}/_msearch: the default index; URL options reach every item
        out = self.msearch([{}, {"size": 0}], "/%s/_msearch?rest_total_hits_as_int=true" % DAYS[2])
        self.assertEqual(out["responses"][0]["hits"]["total"], PER_DAY[2])
        # refused as a whole: an unknown header key, no final newline
        out = self.msearch([{"index": "logs-*", "bogus": 1}, {}], status=400)
        self.assertIn("key [bogus] is not supported in the metadata section",
                      out["error"]["reason"])
        st, out, _ = self.req("POST", "/_msearch", '{}\n{}', {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 400)
        self.assertIn("must be terminated by a newline", out["error"]["reason"])
        st, out, _ = self.req("POST", "/_msearch", '{}\n', {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 400)
        # allow_partial_search_results false with no failed shard: the answer
        out = self.msearch([{"index": "logs-*", "allow_partial_search_results": False}, {}])
        self.assertEqual(out["responses"][0]["status"], 200)
        # a header index is a name or a list of names: a number is its
        # digits (no such index), anything else is refused, never "every index"
        out = self.msearch([{"index": 5}, {}, {"index": None}, {}, {"index": {}}, {},
                            {"index": [DAYS[0], 7]}, {}, {"index": [DAYS[0]]}, {"size": 0}],
                           "/%s/_msearch" % DAYS[1])
        r = out["responses"]
        for x in (r[0], r[3]):  # index "5"; DAYS[0] and "7"
            self.assertEqual((x["status"], x["error"]["type"]), (404, "index_not_found_exception"))
        for x in r[1:3]:
            self.assertEqual((x["status"], x["error"]["type"]), (400, "illegal_argument_exception"))
        self.assertEqual(r[4]["hits"]["total"]["value"], PER_DAY[0])

    def test_no_match_and_missing(self):
        out = self.search("/nomatch-*/_search")
        self.assertEqual(out["hits"], {"total": {"value": 0, "relation": "eq"},
                                       "max_score": None, "hits": []})
        self.assertEqual(out["_shards"]["total"], 0)
        self.assertEqual(self.count("/nomatch-*"), 0)
        out = self.search("/nomatch-*/_search?allow_no_indices=false", status=404)
        self.assertEqual(out["error"]["type"], "index_not_found_exception")
        out = self.search("/%s,nope/_search" % DAYS[0], status=404)
        self.assertEqual(out["error"]["type"], "index_not_found_exception")
        self.assertEqual(out["error"]["reason"], "no such index [nope]")
        self.assertEqual(out["error"]["index"], "nope")
        out = self.search("/%s,nope/_search?ignore_unavailable=true" % DAYS[0])
        self.assertEqual(out["hits"]["total"]["value"], PER_DAY[0])
        # a malformed body is refused even when no index matches
        out = self.search("/nomatch-*/_search", {"query": {"bogus": {}}}, status=400)
        self.assertEqual(out["error"]["type"], "parsing_exception")

    def test_aggs_on_index_field(self):
        # terms on the _index metadata field, as Kibana and Grafana split by
        # index: one bucket per index, its docs the index's matches
        # (Elasticsearch's ConstantIndexFieldData: every doc of an index has
        # its name); cardinality and value_count read it too, `missing`
        # finds no doc without it, a numeric aggregation refuses it
        errors = collections.Counter(d[0] for d in self.docs if "error" in d[3])
        errors["metrics"] = 1
        out = self.search("/logs-*,metrics/_search?typed_keys", {
            "size": 0, "query": {"match": {"msg": "error"}}, "aggs": {
                "i": {"terms": {"field": "_index", "missing": "x"},
                      "aggs": {"n": {"max": {"field": "n"}}}},
                "all": {"terms": {"field": "_index", "min_doc_count": 0,
                                  "order": {"_key": "desc"}, "size": 3}},
                "c": {"cardinality": {"field": "_index"}},
                "vc": {"value_count": {"field": "_index"}},
                "m": {"missing": {"field": "_index"}},
                "inc": {"terms": {"field": "_index", "include": ["metrics", DAYS[1]]}}}})
        a = out["aggregations"]
        want = sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))
        self.assertEqual([(b["key"], b["doc_count"]) for b in a["sterms#i"]["buckets"]], want)
        for b in a["sterms#i"]["buckets"]:
            ns = [d[2] for d in self.docs if d[0] == b["key"] and "error" in d[3]]
            self.assertEqual(b["max#n"]["value"], max(ns) if ns else None)
        self.assertEqual([(b["key"], b["doc_count"]) for b in a["sterms#all"]["buckets"]],
                         [("metrics", 1)] + [(d, errors[d]) for d in DAYS[::-1][:2]])
        self.assertEqual(a["sterms#all"]["sum_other_doc_count"], errors[DAYS[0]])
        self.assertEqual(a["cardinality#c"]["value"], len(errors))
        self.assertEqual(a["value_count#vc"]["value"], sum(errors.values()))
        self.assertEqual(a["missing#m"]["doc_count"], 0)
        self.assertEqual([b["key"] for b in a["sterms#inc"]["buckets"]],
                         sorted([DAYS[1], "metrics"], key=lambda k: (-errors[k], k)))
        out = self.search("/logs-*/_search", {"size": 0, "aggs": {
            "s": {"avg": {"field": "_index"}}}}, status=400)
        self.assertEqual(out["error"]["reason"],
                         "Field [_index] of type [_index] is not supported for "
                         "aggregation [avg]")

    def test_count_is_exact_across_indices(self):
        # past the default track_total_hits (10,000): _count counts every match
        for name, count in (("big1", 6000), ("big2", 5000)):
            lines = "".join('{"index":{"_index":"%s"}}\n{"v":%d}\n' % (name, i)
                            for i in range(count))
            st, out, _ = self.req("POST", "/_bulk?refresh=true", lines,
                                  {"Content-Type": "application/x-ndjson"})
            self.assertFalse(out["errors"])
        try:
            self.assertEqual(self.count("/big1,big2"), 11000)
            self.assertEqual(self.count("/big*"), 11000)
            out = self.search("/big*/_search?size=0&rest_total_hits_as_int=true")
            self.assertEqual(out["hits"]["total"], 11000)
            out = self.search("/big*/_search?size=0&rest_total_hits_as_int=true"
                              "&track_total_hits=2", status=400)
            self.assertIn("cannot be used if the tracking of total hits is not accurate",
                          out["error"]["reason"])
        finally:
            self.req("DELETE", "/big1")
            self.req("DELETE", "/big2")

    def test_exclusion_needs_a_wildcard_before(self):
        out = self.search("/-%s/_count" % DAYS[0], status=404)
        self.assertEqual(out["error"]["reason"], "no such index [-%s]" % DAYS[0])
        self.search("/%s,-%s/_count" % (DAYS[0], DAYS[0]), status=404)

    def test_closed(self):
        # wildcards skip closed indices unless expand_wildcards asks for them
        self.assertEqual(self.count("/closed-*"), 0)
        out = self.search("/closed-1/_search", status=400)
        self.assertEqual(out["error"]["type"], "index_closed_exception")
        out = self.search("/closed-1,metrics/_search?ignore_unavailable=true")
        self.assertEqual(out["hits"]["total"]["value"], 1)
        # in a list, or expanded by expand_wildcards: refused unless ignore_unavailable
        out = self.search("/closed-1,metrics/_count", status=400)
        self.assertEqual(out["error"]["type"], "index_closed_exception")
        self.search("/closed-*/_count?expand_wildcards=all", status=400)
        self.assertEqual(self.search("/*/_count?expand_wildcards=all&ignore_unavailable=true")
                         ["count"], sum(PER_DAY) + 2)
        out = self.search("/logs-*/_search?expand_wildcards=sideways", status=400)
        self.assertEqual(out["error"]["type"], "illegal_argument_exception")
        out = self.search("/logs-*/_search?ignore_unavailable=perhaps", status=400)

    def test_shard_failure(self):
        # `n` is mapped in the logs indices only: metrics fails, the others answer
        out = self.search("/logs-*,metrics/_search", {"sort": [{"n": "asc"}], "size": 1})
        self.assertEqual(out["_shards"]["total"], 4)
        self.assertEqual(out["_shards"]["failed"], 1)
        f = out["_shards"]["failures"][0]
        self.assertEqual((f["shard"], f["index"]), (0, "metrics"))
        self.assertEqual(f["reason"]["type"], "query_shard_exception")
        self.assertEqual(out["hits"]["total"]["value"], sum(PER_DAY))
        # all fail: Elasticsearch's "all shards failed" with the causes
        out = self.search("/metrics/_search", {"sort": [{"n": "asc"}]}, status=400)
        err = out["error"]
        self.assertEqual((err["type"], err["reason"], err["phase"], err["grouped"]),
                         ("search_phase_execution_exception", "all shards failed",
                          "query", True))
        self.assertEqual(err["root_cause"][0]["type"], "query_shard_exception")
        self.assertEqual(err["root_cause"][0]["index"], "metrics")
        self.assertEqual(err["failed_shards"][0]["index"], "metrics")
        self.assertEqual(err["failed_shards"][0]["reason"]["reason"],
                         "No mapping found for [n] in order to sort on")
        # one root cause per distinct cause
        out = self.search("/metrics,closed-1/_search?ignore_unavailable=true",
                          {"sort": [{"zz": "asc"}]}, status=400)
        self.assertEqual(len(out["error"]["root_cause"]), 1)

    def test_allow_partial_search_results(self):
        # false: a search with a failed shard fails whole, Elasticsearch's
        # search_phase_execution_exception "Partial shards failure" with the
        # failed shards only (AbstractSearchAsyncAction); true (the
        # default) answers the others; the value is a boolean
        body = {"sort": [{"n": "asc"}], "size": 1}
        path = "/logs-*,metrics/_search"
        for qs in ("", "?allow_partial_search_results=true"):
            out = self.search(path + qs, body)
            self.assertEqual(out["_shards"]["failed"], 1)
        out = self.search(path + "?allow_partial_search_results=false", body, status=400)
        err = out["error"]
        self.assertEqual((err["type"], err["reason"], err["phase"], err["grouped"]),
                         ("search_phase_execution_exception", "Partial shards failure",
                          "query", True))
        self.assertEqual([(f["index"], f["reason"]["type"]) for f in err["failed_shards"]],
                         [("metrics", "query_shard_exception")])
        self.assertEqual([c["index"] for c in err["root_cause"]], ["metrics"])
        # no shard fails: the answer
        out = self.search("/logs-*/_search?allow_partial_search_results=false", body)
        self.assertEqual(out["hits"]["total"]["value"], sum(PER_DAY))
        out = self.search(path + "?allow_partial_search_results=maybe", body, status=400)
        self.assertEqual(out["error"]["type"], "illegal_argument_exception")
        # an _msearch header takes it too, item by item
        out = self.msearch([{"index": "logs-*,metrics", "allow_partial_search_results": False},
                            body, {"index": "logs-*,metrics"}, body])
        r0, r1 = out["responses"]
        self.assertEqual((r0["status"], r0["error"]["reason"]), (400, "Partial shards failure"))
        self.assertEqual((r1["status"], r1["_shards"]["failed"]), (200, 1))
        # a shard its timeout stops fails instead of answering partially
        # (QueryPhase's "Time exceeded"): every shard, so all failed
        body = {"size": 0, "timeout": "1nanos"}
        out = self.search("/logs-*/_search", body)
        self.assertEqual((out["timed_out"], out["_shards"]["failed"]), (True, 0))
        out = self.search("/logs-*/_search?allow_partial_search_results=false", body,
                          status=500)
        err = out["error"]
        self.assertEqual((err["type"], err["reason"]),
                         ("search_phase_execution_exception", "all shards failed"))
        self.assertEqual({(f["index"], f["reason"]["type"], f["reason"]["reason"])
                          for f in err["failed_shards"]},
                         {(d, "query_phase_execution_exception", "Time exceeded")
                          for d in DAYS})
        # _count does not take it, as Elasticsearch's RestCountAction
        self.search("/logs-*/_count?allow_partial_search_results=false", status=400)

    def test_profile_one_index_only(self):
        self.search("/%s/_search" % DAYS[0], {"profile": True})
        out = self.search("/logs-*/_search", {"profile": True}, status=400)
        self.assertIn("[profile]", out["error"]["reason"])

    def test_broadcast_over_expressions(self):
        st, out, _ = self.req("POST", "/logs-*,metrics/_refresh")
        self.assertEqual((st, out["_shards"]["total"]), (200, 4), out)
        st, out, _ = self.req("POST", "/%s,%s/_refresh" % (DAYS[0], DAYS[1]))
        self.assertEqual(out["_shards"]["total"], 2)
        st, out, _ = self.req("POST", "/nomatch-*/_refresh")
        self.assertEqual((st, out["_shards"]["total"]), (200, 0))
        st, out, _ = self.req("POST", "/%s,nope/_refresh" % DAYS[0])
        self.assertEqual((st, out["error"]["type"]), (404, "index_not_found_exception"))

    def test_cat_indices(self):
        st, raw, _ = self.req("GET", "/_cat/indices/logs-*?v=true&s=docs.count:desc")
        lines = raw.splitlines()
        self.assertEqual(lines[0].split(), ["health", "status", "index", "uuid", "pri",
                                            "rep", "docs.count", "docs.deleted",
                                            "store.size", "pri.store.size",
                                            "dataset.size"])
        rows = [l.split() for l in lines[1:]]
        self.assertEqual([r[2] for r in rows], [DAYS[1], DAYS[0], DAYS[2]])
        self.assertEqual([int(r[6]) for r in rows], sorted(PER_DAY, reverse=True))
        for r in rows:
            self.assertRegex(r[3], r"^[A-Za-z0-9_-]{22}$")
            self.assertEqual(r[:2] + r[4:6], ["green", "open", "1", "0"])
        # aliases, columns on request only, json
        st, out, _ = self.req("GET", "/_cat/indices/%s?h=i,dc,cd,cds,codec,sc&format=json"
                              % DAYS[2])
        self.assertEqual(set(out[0]), {"index", "docs.count", "creation.date",
                                       "creation.date.string", "codec",
                                       "segments.count"})
        self.assertEqual((out[0]["index"], out[0]["docs.count"]), (DAYS[2], str(PER_DAY[2])))
        self.assertRegex(out[0]["creation.date.string"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        # closed indices are listed (open and closed expand), hidden only when asked
        st, raw, _ = self.req("GET", "/_cat/indices?h=index,status&s=index")
        names = [l.split()[0] for l in raw.splitlines()]
        self.assertIn("closed-1", names)
        self.assertNotIn(".hidden", names)
        st, raw, _ = self.req("GET", "/_cat/indices?h=index&expand_wildcards=all")
        self.assertIn(".hidden", raw.split())
        st, raw, _ = self.req("GET", "/_cat/indices?health=green&h=index&s=index")
        self.assertEqual(raw.split(), sorted(DAYS + ["metrics", "closed-1"]))  # closed: green too
        st, raw, _ = self.req("GET", "/_cat/indices/%s?h=d*" % DAYS[2])
        self.assertEqual(raw.split(), [str(PER_DAY[2]), "0", raw.split()[2]])  # docs.*, dataset.size
        st, out, _ = self.req("GET", "/_cat/indices?s=bogus")
        self.assertEqual(st, 400)
        self.assertIn("Unable to sort by unknown sort key `bogus`", out["error"]["reason"])
        st, raw, _ = self.req("GET", "/_cat")
        self.assertTrue(raw.startswith("=^.^=\n") and "/_cat/indices" in raw)
        st, out, _ = self.req("GET", "/_cat/indices?health=purple")
        self.assertEqual((st, out["error"]["type"]), (400, "illegal_argument_exception"))
        st, out, _ = self.req("GET", "/_cat/indices/nope")
        self.assertEqual((st, out["error"]["type"]), (404, "index_not_found_exception"))

    def test_cat_count_is_count(self):
        for path, want in (("/_cat/count/logs-*", sum(PER_DAY)),
                           ("/_cat/count", sum(PER_DAY) + 1),  # not hidden, not closed
                           ("/_cat/count/logs-*?q=msg:error",
                            sum(1 for d in self.docs if "error" in d[3]))):
            st, raw, _ = self.req("GET", path + ("&" if "?" in path else "?") + "h=count")
            self.assertEqual((st, str(raw).strip()), (200, str(want)), path)
        st, out, _ = self.req("GET", "/_cat/count/closed-1")
        self.assertEqual((st, out["error"]["type"]), (400, "index_closed_exception"))
        st, out, _ = self.req("GET", "/_cat/count/nope")
        self.assertEqual(st, 404)

    def test_replicas_make_yellow(self):
        # one node cannot hold a replica: Elasticsearch reports yellow
        self.assertEqual(self.req("GET", "/_cluster/health")[1]["status"], "green")
        st, out, _ = self.req("PUT", "/rep", {"settings": {"number_of_replicas": 1}})
        self.assertEqual(st, 200, out)
        try:
            h = self.req("GET", "/_cluster/health")[1]
            self.assertEqual((h["status"], h["unassigned_shards"]), ("yellow", 1))
            st, raw, _ = self.req("GET", "/_cat/indices/rep?h=health,rep")
            self.assertEqual(raw.split(), ["yellow", "1"])
            self.req("PUT", "/rep/_settings", {"index": {"number_of_replicas": 0}})
            self.assertEqual(self.req("GET", "/_cluster/health")[1]["status"], "green")
        finally:
            self.req("DELETE", "/rep")

    def test_cluster_health_options(self):
        """Elasticsearch's cluster.health YAML: index expressions, level,
        wait_for_* conditions and a timeout that answers 200 timed_out."""
        st, out, _ = self.req("PUT", "/hrep", {"settings": {"number_of_replicas": 2}})
        self.assertEqual(st, 200, out)
        try:
            h = self.req("GET", "/_cluster/health/hrep?level=shards")[1]
            self.assertEqual((h["status"], h["unassigned_shards"]), ("yellow", 2))
            ih = h["indices"]["hrep"]
            self.assertEqual((ih["number_of_replicas"], ih["active_primary_shards"],
                              ih["shards"]["0"]["primary_active"]), (2, 1, True))
            self.assertNotIn("shards", self.req("GET", "/_cluster/health/hrep?level=indices")
                             [1]["indices"]["hrep"])
            self.assertNotIn("indices", self.req("GET", "/_cluster/health")[1])
            # a single other index is green on its own
            self.assertEqual(self.req("GET", "/_cluster/health/logs-*")[1]["status"], "green")
            t0 = time.monotonic()
            st, h, _ = self.req("GET", "/_cluster/health/hrep?wait_for_status=green&timeout=200ms")
            waited = time.monotonic() - t0
            self.assertEqual((st, h["status"], h["timed_out"]), (200, "yellow", True))
            self.assertGreaterEqual(waited, 0.2)
            st, h, _ = self.req("GET", "/_cluster/health/hrep?wait_for_status=yellow")
            self.assertEqual((st, h["timed_out"]), (200, False))
            h = self.req("GET", "/_cluster/health?wait_for_active_shards=all&timeout=1ms")[1]
            self.assertTrue(h["timed_out"])
        finally:
            self.req("DELETE", "/hrep")
        # a missing concrete index is red until it exists; a wildcard is not
        h = self.req("GET", "/_cluster/health/nope-1?timeout=1ms")[1]
        self.assertEqual((h["status"], h["timed_out"]), ("red", True))
        h = self.req("GET", "/_cluster/health/nope-*?timeout=1ms")[1]
        self.assertEqual((h["status"], h["timed_out"]), ("green", False))
        for q in ("wait_for_nodes=10", "wait_for_nodes=>=2", "wait_for_nodes=lt(1)"):
            self.assertTrue(self.req("GET", "/_cluster/health?timeout=1ms&" + q)[1]["timed_out"], q)
        for q in ("wait_for_nodes=1", "wait_for_nodes=>=1", "wait_for_nodes=le(1)",
                  "wait_for_events=languid", "wait_for_no_relocating_shards=true"):
            self.assertFalse(self.req("GET", "/_cluster/health?" + q)[1]["timed_out"], q)
        for q in ("level=nodes", "wait_for_status=blue", "wait_for_nodes=x",
                  "wait_for_nodes=ge(1", "wait_for_active_shards=-1", "timeout=5",
                  "wait_for_events=soon", "local=maybe", "frobnicate=1",
                  "return_200_for_cluster_health_timeout=false"):
            st, out, _ = self.req("GET", "/_cluster/health?" + q)
            self.assertEqual((st, out["error"]["type"]), (400, "illegal_argument_exception"), q)

    def test_put_settings_over_expressions(self):
        """PUT /{expr}/_settings and PUT /_settings (Elasticsearch's
        indices.put_settings YAML): every named index, all or nothing,
        preserve_existing, reopen for static settings, null resets."""
        for n in ("ps-1", "ps-2"):
            self.assertEqual(self.req("PUT", "/" + n)[0], 200)
        try:
            def interval(n):
                return self.req("GET", "/%s/_settings/index.refresh_interval?include_defaults"
                                % n)[1][n]
            st, out, _ = self.req("PUT", "/ps-*/_settings", {"index": {"refresh_interval": "7s"}})
            self.assertEqual((st, out), (200, {"acknowledged": True}))
            for n in ("ps-1", "ps-2"):
                self.assertEqual(interval(n)["settings"]["index"]["refresh_interval"], "7s")
            # one bad index stops all of them: ps-1 is untouched
            st, out, _ = self.req("PUT", "/ps-1,nope/_settings", {"index.refresh_interval": "9s"})
            self.assertEqual(st, 404, out)
            st, out, _ = self.req("PUT", "/ps-1,nope/_settings?ignore_unavailable=true",
                                  {"index.refresh_interval": "9s"})
            self.assertEqual(st, 200, out)
            self.assertEqual(interval("ps-1")["settings"]["index"]["refresh_interval"], "9s")
            self.assertEqual(interval("ps-2")["settings"]["index"]["refresh_interval"], "7s")
            st, out, _ = self.req("PUT", "/nomatch-*/_settings", {"index.refresh_interval": "9s"})
            self.assertEqual(st, 404, out)
            # preserve_existing: a setting the index has stays; null resets
            st, _, _ = self.req("PUT", "/ps-2/_settings?preserve_existing=true",
                                {"index.refresh_interval": "3s"})
            self.assertEqual(interval("ps-2")["settings"]["index"]["refresh_interval"], "7s")
            self.req("PUT", "/ps-2/_settings", {"index.refresh_interval": None})
            self.assertEqual(interval("ps-2")["defaults"]["index"]["refresh_interval"], "1s")
            # static settings: refused on an open index unless reopen=true
            st, out, _ = self.req("PUT", "/ps-1/_settings", {"index.codec": "best_compression"})
            self.assertEqual(st, 400, out)
            self.assertIn("Can't update non dynamic settings", out["error"]["reason"])
            st, out, _ = self.req("PUT", "/ps-1/_settings?reopen=true",
                                  {"index.codec": "best_compression"})
            self.assertEqual(st, 200, out)
            got = self.req("GET", "/ps-1/_settings")[1]["ps-1"]["settings"]["index"]
            self.assertEqual(got["codec"], "best_compression")
            self.assertEqual(str(self.req("GET", "/_cat/indices/ps-1?h=status")[1]).strip(), "open")
            st, out, _ = self.req("PUT", "/ps-1/_settings?flat_settings=true",
                                  {"index.refresh_interval": "1s"})
            self.assertEqual(st, 400, out)
        finally:
            self.req("DELETE", "/ps-1")
            self.req("DELETE", "/ps-2")

    def test_hidden_setting(self):
        st, out, _ = self.req("PUT", "/logs-hidden", {"settings": {"index.hidden": True}})
        self.assertEqual(st, 200, out)
        try:
            self.req("PUT", "/logs-hidden/_doc/1?refresh=true", {"msg": "x"})
            self.assertEqual(self.count("/logs-*"), sum(PER_DAY))
            self.assertEqual(self.count("/logs-hidden"), 1)  # by name it is there
            self.assertEqual(self.search("/logs-*/_count?expand_wildcards=open,hidden")
                             ["count"], sum(PER_DAY) + 1)
            st, out, _ = self.req("GET", "/logs-hidden/_settings")
            self.assertEqual(out["logs-hidden"]["settings"]["index"]["hidden"], "true")
            self.req("PUT", "/logs-hidden/_settings", {"index.hidden": False})
            self.assertEqual(self.count("/logs-*"), sum(PER_DAY) + 1)
            st, out, _ = self.req("PUT", "/logs-hidden/_settings", {"index.hidden": "maybe"})
            self.assertEqual(st, 400)
        finally:
            self.req("DELETE", "/logs-hidden")

    def test_official_client(self):
        from elasticsearch import Elasticsearch  # Debian's python3-elasticsearch
        es = Elasticsearch("http://127.0.0.1:%d" % self.srv.port)
        r = es.search(index="logs-*", query={"match": {"msg": "page1"}}, size=100)
        want = {(d[0], d[1]) for d in self.docs if "page1" in d[3]}
        self.assertEqual({(h["_index"], h["_id"]) for h in r["hits"]["hits"]}, want)
        self.assertEqual(es.count(index=",".join(DAYS[:2]))["count"], sum(PER_DAY[:2]))
        r = es.search(index="nomatch-*")
        self.assertEqual(r["hits"]["hits"], [])
        r = es.msearch(body=[{"index": "logs-*"}, {"query": {"match_all": {}}, "size": 0},
                             {"index": DAYS[2]}, {"size": 0}])
        self.assertEqual([x["hits"]["total"]["value"] for x in r["responses"]],
                         [sum(PER_DAY), PER_DAY[2]])


if __name__ == "__main__":
    unittest.main()
