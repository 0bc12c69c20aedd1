"""Reading everything: scroll, point in time, _delete_by_query,
_update_by_query and tasks, against a running server -- exact paging while
writes, deletes and merges go on beside it, clearing and expiry, the open
scroll limit, and the answer shapes Elasticsearch 8 gives."""
import json
import time
import unittest

from fdsserver import Server, ServerTestCase

ND = {"Content-Type": "application/x-ndjson"}
MAX_OPEN_SCROLL_CONTEXT = 500  # Elasticsearch's search.max_open_scroll_context


class Scroll(ServerTestCase):

    def bulk(self, index, docs, refresh=True):
        lines = "".join('{"index":{"_index":"%s","_id":"%s"}}\n%s\n'
                        % (index, i, json.dumps(d)) for i, d in docs)
        st, b, _ = self.req("POST", "/_bulk" + ("?refresh=true" if refresh else ""),
                            lines, ND)
        self.assertEqual((st, b["errors"]), (200, False))

    def docs(self, index, n, base=0):
        self.bulk(index, ((base + i, {"n": base + i, "g": (base + i) % 7,
                                      "k": "k%02d" % ((base + i) % 13),
                                      "t": "red blue" if i % 3 else "red"})
                          for i in range(n)))

    def scroll_all(self, path, body, between=None):
        """Every hit of a scroll, page by page; `between(page)` runs after
        each page.  Returns (ids, sort values or scores, first answer)."""
        st, r, _ = self.req("POST", path, body)
        self.assertEqual(st, 200, r)
        first = r
        sid = r["_scroll_id"]
        ids, keys, page = [], [], 0
        while r["hits"]["hits"]:
            for h in r["hits"]["hits"]:
                ids.append(h["_id"])
                keys.append(h.get("sort", h["_score"]))
            self.assertEqual(r["hits"]["total"], first["hits"]["total"])
            self.assertEqual(r["hits"]["max_score"], first["hits"]["max_score"])
            if between:
                between(page)
            page += 1
            st, r, _ = self.req("POST", "/_search/scroll", {"scroll": "1m", "scroll_id": sid})
            self.assertEqual(st, 200, r)
            self.assertEqual(r["_scroll_id"], sid)
        st, c, _ = self.req("DELETE", "/_search/scroll", {"scroll_id": sid})
        self.assertEqual((st, c), (200, {"succeeded": True, "num_freed": 1}))
        return ids, keys, first

    def test_paging_exact_beside_writes(self):
        self.docs("sa", 2000)
        expect = {str(i) for i in range(2000)}
        red = {str(i) for i in range(2000)}  # every doc has "red"
        state = {"next": 5000}

        def churn(page):
            # delete docs not read yet, add new ones, refresh and merge: the
            # scroll's view is what it was when it began
            self.bulk("sa", ((state["next"] + i, {"n": -1, "g": 1, "k": "new", "t": "red"})
                             for i in range(50)), refresh=False)
            state["next"] += 50
            lines = "".join('{"delete":{"_index":"sa","_id":"%d"}}\n' % (1999 - page * 7 - j)
                            for j in range(5))
            self.req("POST", "/_bulk?refresh=true", lines, ND)
            if page % 3 == 2:
                self.req("POST", "/sa/_forcemerge?max_num_segments=1")

        cases = [
            ({"size": 97, "sort": ["_doc"]}, lambda ks: ks == sorted(ks)),
            ({"size": 150, "query": {"match": {"t": "blue red"}}},   # by score
             lambda ks: ks == sorted(ks, reverse=True)),
            ({"size": 61, "sort": [{"g": "desc"}]}, lambda ks: ks == sorted(ks, reverse=True)),
            ({"size": 200, "sort": [{"k.keyword": "asc"}, {"n": "desc"}]},
             lambda ks: ks == sorted(ks, key=lambda k: (k[0], -k[1]))),
        ]
        for body, ordered in cases:
            ids, keys, first = self.scroll_all("/sa/_search?scroll=1m", body, churn)
            self.assertEqual(len(ids), len(set(ids)), body)  # each once
            self.assertEqual(set(ids), expect & red, body)    # every one
            self.assertTrue(ordered(keys), body)
            self.assertEqual(first["hits"]["total"], {"value": len(expect & red),
                                                      "relation": "eq"})
            # the next case starts from what this one left
            st, c, _ = self.req("GET", "/sa/_count")
            expect = set(h["_id"] for h in self.req("POST", "/sa/_search", {
                "size": 10000, "_source": False})[1]["hits"]["hits"])
            self.assertEqual(len(expect), c["count"])
            red = expect

    def test_several_indices_and_source(self):
        self.docs("sm1", 300)
        self.docs("sm2", 300, base=1000)
        ids, keys, first = self.scroll_all(
            "/sm1,sm2/_search?scroll=1m&_source=n",
            {"size": 64, "sort": [{"g": "asc"}]})
        self.assertEqual(sorted(ids, key=int),
                         [str(i) for i in list(range(300)) + list(range(1000, 1300))])
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(first["_shards"]["total"], 2)
        self.assertEqual(set(first["hits"]["hits"][0]["_source"]), {"n"})
        # rest_total_hits_as_int on a continuation
        st, r, _ = self.req("POST", "/sm1/_search?scroll=1m", {"size": 5})
        st, r2, _ = self.req("GET", "/_search/scroll/%s?scroll=1m&rest_total_hits_as_int=true"
                             % r["_scroll_id"])
        self.assertEqual((st, r2["hits"]["total"]), (200, 300))
        st, r3, _ = self.req("GET", "/_search/scroll?scroll_id=%s" % r["_scroll_id"])
        self.assertEqual(r3["hits"]["total"], {"value": 300, "relation": "eq"})
        self.assertEqual([h["_id"] for h in r2["hits"]["hits"] + r3["hits"]["hits"]],
                         [str(i) for i in range(5, 15)])
        self.req("DELETE", "/_search/scroll/%s" % r["_scroll_id"])

    def test_refusals(self):
        self.docs("sr", 20)
        for path, body, reason in (
                ("/sr/_search?scroll=1m", {"from": 5}, "using [from] is not allowed in a scroll context"),
                ("/sr/_search?scroll=1m", {"size": 0}, "[size] cannot be [0] in a scroll context"),
                ("/sr/_search?scroll=1m", {"sort": ["_doc"], "search_after": [1]},
                 "[search_after] cannot be used in a scroll context"),
                ("/sr/_search?scroll=1m", {"track_total_hits": False},
                 "disabling [track_total_hits] is not allowed in a scroll context"),
                ("/sr/_search?scroll=1m&request_cache=true", {},
                 "[request_cache] cannot be used in a scroll context")):
            st, b, _ = self.req("POST", path, body)
            self.assertEqual(st, 400, b)
            self.assertIn(reason, b["error"]["reason"])
        st, b, _ = self.req("POST", "/sr/_search?scroll=1m", {"size": 10010})
        self.assertEqual(st, 400)
        self.assertIn("Batch size is too large, size must be less than or equal to: [10000] "
                      "but was [10010]. Scroll batch sizes cost as much memory as result "
                      "windows so they are controlled by the [index.max_result_window] "
                      "index level setting.", b["error"]["reason"])
        st, b, _ = self.req("POST", "/sr/_search?scroll=2d", {})
        self.assertEqual(st, 400)
        self.assertIn("search.max_keep_alive", b["error"]["reason"])
        st, b, _ = self.req("POST", "/sr/_search?scroll=soon", {})
        self.assertEqual(st, 400)
        # nothing was left open by the refusals
        st, s, _ = self.req("GET", "/sr/_stats/search")
        self.assertEqual(s["_all"]["total"]["search"]["open_contexts"], 0)
        # unknown, expired and malformed ids
        gone = self.req("POST", "/sr/_search?scroll=1m", {})[1]["_scroll_id"]
        self.req("DELETE", "/_search/scroll/" + gone)
        st, b, _ = self.req("POST", "/_search/scroll", {"scroll_id": gone})
        self.assertEqual((st, b["error"]["type"]), (404, "search_context_missing_exception"))
        st, b, _ = self.req("POST", "/_search/scroll", {"scroll_id": "not an id!"})
        self.assertEqual(st, 400)
        # clearing an id that does not parse: Elasticsearch's 400, in each form
        live = self.req("POST", "/sr/_search?scroll=1m", {})[1]["_scroll_id"]
        for method, path, body in (
                ("DELETE", "/_search/scroll", {"scroll_id": "garbage"}),
                ("DELETE", "/_search/scroll", {"scroll_id": ["garbage", live]}),
                ("DELETE", "/_search/scroll/garbage", None)):
            st, b, _ = self.req(method, path, body)
            self.assertEqual((st, b["error"]["type"], b["error"]["reason"]),
                             (400, "illegal_argument_exception", "Cannot parse scroll id"), b)
        self.req("DELETE", "/_search/scroll/" + live)
        st, b, _ = self.req("POST", "/_search/scroll", {"scroll_id": "x", "bogus": 1})
        self.assertEqual(st, 400)
        self.assertIn("Unknown parameter [bogus]", b["error"]["reason"])

    def test_clear_and_expiry(self):
        self.docs("sx", 30)
        ids = [self.req("POST", "/sx/_search?scroll=1m", {"size": 2})[1]["_scroll_id"]
               for _ in range(4)]
        st, s, _ = self.req("GET", "/sx/_stats/search")
        srch = s["indices"]["sx"]["total"]["search"]
        self.assertEqual((srch["open_contexts"], srch["scroll_current"]), (4, 4))
        # a list in the body, then ids in the path, then all
        st, b, _ = self.req("DELETE", "/_search/scroll", {"scroll_id": ids[:2]})
        self.assertEqual((st, b), (200, {"succeeded": True, "num_freed": 2}))
        st, b, _ = self.req("DELETE", "/_search/scroll", {"scroll_id": ids[:2]})
        self.assertEqual((st, b), (404, {"succeeded": True, "num_freed": 0}))
        st, b, _ = self.req("DELETE", "/_search/scroll/%s" % ids[2])
        self.assertEqual((st, b["num_freed"]), (200, 1))
        st, b, _ = self.req("DELETE", "/_search/scroll/_all")
        self.assertEqual((st, b["num_freed"]), (200, 1))
        st, s, _ = self.req("GET", "/sx/_stats/search")
        srch = s["indices"]["sx"]["total"]["search"]
        self.assertEqual((srch["open_contexts"], srch["scroll_current"], srch["scroll_total"]),
                         (0, 0, 4))
        # expiry: a context not used for its keep-alive goes by itself (the
        # reaper checks every second), also on an idle server
        sid = self.req("POST", "/sx/_search?scroll=1s", {"size": 2})[1]["_scroll_id"]
        st, r, _ = self.req("POST", "/_search/scroll", {"scroll_id": sid})
        self.assertEqual(st, 200)  # in use: its keep-alive starts again
        time.sleep(2.5)
        st, s, _ = self.req("GET", "/sx/_stats/search")
        self.assertEqual(s["indices"]["sx"]["total"]["search"]["open_contexts"], 0)
        st, b, _ = self.req("POST", "/_search/scroll", {"scroll_id": sid})
        self.assertEqual((st, b["error"]["type"]), (404, "search_context_missing_exception"))

    def test_open_scroll_limit(self):
        self.docs("sl", 3)
        ids = []
        for _ in range(MAX_OPEN_SCROLL_CONTEXT):
            st, r, _ = self.req("POST", "/sl/_search?scroll=1m", {"size": 1})
            self.assertEqual(st, 200, r)
            ids.append(r["_scroll_id"])
        st, b, _ = self.req("POST", "/sl/_search?scroll=1m", {"size": 1})
        self.assertEqual((st, b["error"]["type"]), (429, "too_many_scroll_contexts_exception"))
        self.assertIn("Trying to create too many scroll contexts. Must be less than or equal "
                      "to: [500]", b["error"]["reason"])
        # searches without a scroll go on; one freed context makes room
        self.assertEqual(self.req("POST", "/sl/_search", {})[0], 200)
        self.req("DELETE", "/_search/scroll", {"scroll_id": ids[0]})
        self.assertEqual(self.req("POST", "/sl/_search?scroll=1m", {"size": 1})[0], 200)
        st, b, _ = self.req("DELETE", "/_search/scroll/_all")
        self.assertEqual(b["num_freed"], MAX_OPEN_SCROLL_CONTEXT)

    def test_point_in_time(self):
        self.docs("pa", 500)
        st, p, _ = self.req("POST", "/pa/_pit?keep_alive=1m")
        self.assertEqual(st, 200, p)
        pid = p["id"]
        self.assertEqual(p["_shards"]["total"], 1)
        # writes after the pit are not in it
        self.docs("pa", 100, base=10000)
        lines = "".join('{"delete":{"_index":"pa","_id":"%d"}}\n' % i for i in range(50))
        self.req("POST", "/_bulk?refresh=true", lines, ND)
        seen, sorts = [], []
        body = {"size": 40, "pit": {"id": pid, "keep_alive": "1m"}, "sort": [{"g": "asc"}]}
        while True:
            st, r, _ = self.req("POST", "/_search", body)
            self.assertEqual(st, 200, r)
            self.assertEqual(r["pit_id"], pid)
            hits = r["hits"]["hits"]
            if not hits:
                break
            for h in hits:
                seen.append(h["_id"])
                sorts.append(h["sort"])
                self.assertEqual(len(h["sort"]), 2)  # the implicit _shard_doc
            body["search_after"] = hits[-1]["sort"]
        self.assertEqual(sorted(seen, key=int), [str(i) for i in range(500)])
        self.assertEqual(sorts, sorted(sorts))
        # no sort: _score, then the tiebreaker
        st, r, _ = self.req("POST", "/_search", {"size": 3, "pit": {"id": pid},
                                                 "query": {"match": {"t": "blue"}}})
        self.assertEqual(len(r["hits"]["hits"][0]["sort"]), 2)
        # an explicit _shard_doc, descending
        st, r, _ = self.req("POST", "/_search", {"size": 2, "pit": {"id": pid},
                                                 "sort": [{"_shard_doc": "desc"}]})
        self.assertEqual([h["sort"] for h in r["hits"]["hits"]], [[499], [498]])
        # refusals
        st, b, _ = self.req("POST", "/pa/_search", {"pit": {"id": pid}})
        self.assertEqual(st, 400)
        self.assertIn("[indices] cannot be used with point in time", b["error"]["reason"])
        st, b, _ = self.req("POST", "/pa/_search", {"sort": ["_shard_doc"]})
        self.assertEqual(st, 400)
        self.assertIn("[_shard_doc] sort field cannot be used without [point in time]",
                      b["error"]["reason"])
        st, b, _ = self.req("POST", "/pa/_pit")
        self.assertEqual(st, 400)
        st, b, _ = self.req("DELETE", "/_pit", {"id": pid})
        self.assertEqual((st, b), (200, {"succeeded": True, "num_freed": 1}))
        st, b, _ = self.req("DELETE", "/_pit", {"id": pid})
        self.assertEqual((st, b), (404, {"succeeded": True, "num_freed": 0}))
        st, b, _ = self.req("POST", "/_search", {"pit": {"id": pid}})
        self.assertEqual((st, b["error"]["type"]), (404, "search_context_missing_exception"))


class ByQuery(ServerTestCase):

    def load(self, index, n):
        lines = "".join('{"index":{"_index":"%s","_id":"%d"}}\n{"n":%d,"g":%d}\n'
                        % (index, i, i, i % 4) for i in range(n))
        self.req("POST", "/_bulk?refresh=true", lines, ND)

    def test_delete_by_query(self):
        self.load("dq", 1000)
        st, b, _ = self.req("POST", "/dq/_delete_by_query?refresh=true&scroll_size=100",
                            {"query": {"term": {"g": 1}}})
        self.assertEqual(st, 200, b)
        self.assertEqual({k: b[k] for k in ("total", "deleted", "batches", "version_conflicts",
                                            "noops", "failures", "timed_out",
                                            "throttled_millis", "requests_per_second")},
                         {"total": 250, "deleted": 250, "batches": 3, "version_conflicts": 0,
                          "noops": 0, "failures": [], "timed_out": False,
                          "throttled_millis": 0, "requests_per_second": -1})
        self.assertEqual(b["retries"], {"bulk": 0, "search": 0})
        self.assertEqual(self.req("GET", "/dq/_count")[1]["count"], 750)
        st, b, _ = self.req("POST", "/dq/_delete_by_query?refresh=true",
                            {"query": {"range": {"n": {"gte": 500}}}, "max_docs": 10})
        self.assertEqual((b["total"], b["deleted"]), (10, 10))
        self.assertEqual(self.req("GET", "/dq/_count")[1]["count"], 740)
        # a document changed since the snapshot: a version conflict
        self.req("PUT", "/dq/_doc/0", {"n": 0, "g": 0, "changed": True})
        st, b, _ = self.req("POST", "/dq/_delete_by_query?refresh=true",
                            {"query": {"term": {"g": 0}}})
        self.assertEqual((st, b["version_conflicts"], len(b["failures"])), (409, 1, 1), b)
        self.assertEqual(b["failures"][0]["cause"]["type"], "version_conflict_engine_exception")
        self.req("PUT", "/dq/_doc/0", {"n": 0, "g": 0, "changed": False})
        st, b, _ = self.req("POST", "/dq/_delete_by_query?conflicts=proceed",
                            {"query": {"term": {"g": 0}}})
        self.assertEqual((st, b["version_conflicts"], b["failures"]), (200, 1, []), b)
        # the query as q= (with df), as a search takes it
        n3 = self.req("GET", "/dq/_count?q=g:3")[1]["count"]
        self.assertGreater(n3, 0)
        st, b, _ = self.req("POST", "/dq/_delete_by_query?q=3&df=g&refresh=true")
        self.assertEqual((st, b["deleted"]), (200, n3), b)
        self.assertEqual(self.req("GET", "/dq/_count?q=g:3")[1]["count"], 0)

    def test_requests_per_second(self):
        # a by-query scan is throttled as _reindex is: 40 documents in
        # batches of 10 at 40 a second, so the last batch waits until 1 s
        self.load("rq", 40)
        for path, key in (("/rq/_update_by_query", "updated"),
                          ("/rq/_delete_by_query", "deleted")):
            t0 = time.time()
            st, b, _ = self.req("POST", path + "?refresh=true&scroll_size=10"
                                "&requests_per_second=40", {"query": {"match_all": {}}})
            took = time.time() - t0
            self.assertEqual((st, b[key], b["requests_per_second"]), (200, 40, 40), b)
            self.assertGreaterEqual(took, 0.9, b)
            self.assertGreater(b["throttled_millis"], 500, b)

    def test_update_by_query(self):
        self.load("uq", 300)
        st, b, _ = self.req("POST", "/uq/_update_by_query?refresh=true",
                            {"query": {"term": {"g": 2}}})
        self.assertEqual((st, b["total"], b["updated"], b["batches"]), (200, 75, 75, 1), b)
        st, d, _ = self.req("GET", "/uq/_doc/2")
        self.assertEqual((d["_version"], d["_source"]), (2, {"n": 2, "g": 2}))
        st, d, _ = self.req("GET", "/uq/_doc/1")
        self.assertEqual(d["_version"], 1)
        # no body: every doc (unrefreshed updates would be version conflicts)
        st, b, _ = self.req("POST", "/uq/_update_by_query?refresh=true")
        self.assertEqual(b["updated"], 300)
        self.assertEqual(self.req("GET", "/uq/_count")[1]["count"], 300)
        # refused, not ignored
        for path, body, reason in (
                ("/uq/_update_by_query", {"script": {"source": "ctx._source.n++"}}, "[script]"),
                ("/uq/_update_by_query?slices=2", {}, "[slices]"),
                ("/uq/_delete_by_query", {}, "query is missing"),
                ("/uq/_update_by_query", {"bogus": 1}, "[bogus]"),
                ("/uq/_update_by_query?conflicts=maybe", {}, "conflicts")):
            st, b, _ = self.req("POST", path, body)
            self.assertEqual(st, 400, (path, b))
            self.assertIn(reason, b["error"]["reason"])
        for sl in ("1", "auto"):
            self.assertEqual(self.req("POST", "/uq/_update_by_query?refresh=true&slices="
                                      + sl, {})[0], 200)

    def test_tasks(self):
        self.load("tq", 2000)
        st, b, _ = self.req("POST", "/tq/_delete_by_query?wait_for_completion=false&refresh=true"
                            "&scroll_size=50", {"query": {"range": {"n": {"lt": 1000}}}})
        self.assertEqual(st, 200, b)
        tid = b["task"]
        self.assertRegex(tid, r"^.+:\d+$")
        self.assertEqual(set(b), {"task"})
        # the server answers while it runs
        self.assertEqual(self.req("GET", "/tq/_count")[0], 200)
        st, l, _ = self.req("GET", "/_tasks?actions=*byquery&detailed")
        self.assertEqual(st, 200)
        for node in l["nodes"].values():
            for t in node["tasks"].values():
                self.assertEqual(t["action"], "indices:data/write/delete/byquery")
        st, t, _ = self.req("GET", "/_tasks/%s?wait_for_completion=true&timeout=30s" % tid)
        self.assertEqual((st, t["completed"]), (200, True), t)
        self.assertEqual((t["response"]["deleted"], t["response"]["batches"]), (1000, 20))
        self.assertEqual(t["task"]["status"]["deleted"], 1000)
        self.assertEqual(t["task"]["action"], "indices:data/write/delete/byquery")
        self.assertEqual(self.req("GET", "/tq/_count")[1]["count"], 1000)
        # a finished task keeps its answer
        st, t2, _ = self.req("GET", "/_tasks/" + tid)
        self.assertEqual((st, t2["completed"], t2["response"]), (200, True, t["response"]))
        st, b, _ = self.req("GET", "/_tasks/%s:999999" % t["task"]["node"])
        self.assertEqual((st, b["error"]["type"]), (404, "resource_not_found_exception"))
        st, b, _ = self.req("GET", "/_tasks/nonsense")
        self.assertEqual(st, 400)
        st, b, _ = self.req("POST", "/_tasks/%s/_cancel" % tid)
        self.assertEqual(st, 404)  # done: nothing to cancel
        # an update in the background, then _reindex
        st, b, _ = self.req("POST", "/tq/_update_by_query?wait_for_completion=false", {})
        st, t, _ = self.req("GET", "/_tasks/%s?wait_for_completion=true" % b["task"])
        self.assertEqual(t["response"]["updated"], 1000)
        st, b, _ = self.req("POST", "/_reindex?wait_for_completion=false&refresh=true",
                            {"source": {"index": "tq"}, "dest": {"index": "tq2"}})
        st, t, _ = self.req("GET", "/_tasks/%s?wait_for_completion=true" % b["task"])
        self.assertEqual(t["response"]["created"], 1000)
        self.assertEqual(self.req("GET", "/tq2/_count")[1]["count"], 1000)


class TaskCrash(unittest.TestCase):

    def test_kill9_mid_task_loses_nothing(self):
        """An update-by-query task is a sequence of ordinary bulk writes: a
        kill -9 in the middle of it leaves every document there, each
        either as it was or re-indexed."""
        srv = Server().start()
        try:
            n = 20000
            lines = "".join('{"index":{"_index":"kq","_id":"%d"}}\n{"n":%d}\n' % (i, i)
                            for i in range(n))
            st, b, _ = srv.request("POST", "/_bulk?refresh=true", lines, ND)
            self.assertEqual((st, b["errors"]), (200, False))
            st, b, _ = srv.request("POST", "/kq/_update_by_query?wait_for_completion=false"
                                   "&scroll_size=20", {})
            tid = b["task"]
            deadline = time.time() + 30
            done = 0
            while time.time() < deadline and done == 0:
                st, t, _ = srv.request("GET", "/_tasks/" + tid)
                done = t["task"].get("status", {}).get("updated", 0)
                if t["completed"]:
                    break
                time.sleep(0.01)
            self.assertGreater(done, 0)
            srv.kill9()
            srv.start()
            srv.request("POST", "/kq/_refresh")
            st, c, _ = srv.request("GET", "/kq/_count")
            self.assertEqual(c["count"], n)
            st, r, _ = srv.request("POST", "/kq/_search", {
                "size": 0, "track_total_hits": True,
                "query": {"range": {"n": {"gte": 0, "lt": n}}}})
            self.assertEqual(r["hits"]["total"]["value"], n)
            # the task is gone with the process (its record was in memory)
            st, b, _ = srv.request("GET", "/_tasks/" + tid)
            self.assertEqual(st, 404)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
