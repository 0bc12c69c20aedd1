"""Document and index life-cycle as Elasticsearch users expect it: versions
and seq_nos, delete/update/create, close/open, settings kinds, a codec change
applied by force-merge, _reindex, _cat/segments, and searches that stay
consistent while bulk indexing and force-merges run beside them."""
import json
import os
import threading
import unittest

from fdsserver import Server, convert


class Lifecycle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()
        cls.docs = convert("json").decode().splitlines()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def test_versions_deletes_updates(self):
        self.req("PUT", "/v", {})
        st, b, _ = self.req("PUT", "/v/_doc/1", {"a": 1})
        self.assertEqual((st, b["result"], b["_version"]), (201, "created", 1))
        seq1 = b["_seq_no"]
        st, b, _ = self.req("PUT", "/v/_doc/1?refresh=true", {"a": 2})
        self.assertEqual((st, b["result"], b["_version"]), (200, "updated", 2))
        self.assertGreater(b["_seq_no"], seq1)
        st, b, _ = self.req("GET", "/v/_doc/1")
        self.assertEqual((b["_version"], b["_source"]), (2, {"a": 2}))
        st, b, _ = self.req("POST", "/v/_search", {"query": {"match_all": {}}})
        self.assertEqual(b["hits"]["total"]["value"], 1)
        self.assertEqual(b["hits"]["hits"][0]["_source"], {"a": 2})
        st, b, _ = self.req("DELETE", "/v/_doc/1?refresh=true")
        self.assertEqual((st, b["result"], b["_version"]), (200, "deleted", 3))
        self.assertEqual(self.req("GET", "/v/_doc/1")[0], 404)
        st, b, _ = self.req("DELETE", "/v/_doc/1")
        self.assertEqual((st, b["result"]), (404, "not_found"))
        st, b, _ = self.req("GET", "/v/_count")
        self.assertEqual(b["count"], 0)
        # auto ids
        st, b, _ = self.req("POST", "/v/_doc", {"auto": True})
        self.assertEqual(st, 201)
        self.assertEqual(len(b["_id"]), 20)
        self.assertEqual(self.req("GET", "/v/_doc/" + b["_id"])[1]["_source"], {"auto": True})

    def test_bulk_actions(self):
        bulk = ('{"index":{"_index":"bk","_id":"1"}}\n{"n":1,"t":"one"}\n'
                '{"create":{"_index":"bk","_id":"2"}}\n{"n":2}\n'
                '{"create":{"_index":"bk","_id":"2"}}\n{"n":22}\n'
                '{"update":{"_index":"bk","_id":"1"}}\n{"doc":{"t":"uno"}}\n'
                '{"update":{"_index":"bk","_id":"9"}}\n{"doc":{"t":"x"}}\n'
                '{"delete":{"_index":"bk","_id":"2"}}\n'
                '{"delete":{"_index":"bk","_id":"3"}}\n')
        st, b, _ = self.req("POST", "/_bulk?refresh=true", bulk)
        self.assertEqual(st, 200, b)
        self.assertTrue(b["errors"])
        got = [(list(i)[0], list(i.values())[0]["status"]) for i in b["items"]]
        self.assertEqual(got, [("index", 201), ("create", 201), ("create", 409),
                               ("update", 200), ("update", 404), ("delete", 200),
                               ("delete", 404)])
        self.assertEqual(b["items"][2]["create"]["error"]["type"],
                         "version_conflict_engine_exception")
        st, d, _ = self.req("GET", "/bk/_doc/1")
        self.assertEqual(d["_source"], {"n": 1, "t": "uno"})
        self.assertEqual(d["_version"], 2)
        self.assertEqual(self.req("GET", "/bk/_doc/2")[0], 404)
        st, b, _ = self.req("POST", "/bk/_search", {"query": {"match": {"t": "uno"}}})
        self.assertEqual(b["hits"]["total"]["value"], 1)

    def test_close_open_delete_get(self):
        self.req("PUT", "/co", {"settings": {"index.codec": "ZSTD"}})
        self.req("PUT", "/co/_doc/1?refresh=true", {"x": 1})
        st, b, _ = self.req("POST", "/co/_close")
        self.assertEqual((st, b["acknowledged"]), (200, True))
        st, b, _ = self.req("GET", "/co/_doc/1")
        self.assertEqual((st, b["error"]["type"]), (400, "index_closed_exception"))
        st, b, _ = self.req("PUT", "/co/_doc/2", {"x": 2})
        self.assertEqual(st, 400)
        st, b, _ = self.req("GET", "/_cat/indices/co?format=json")
        self.assertEqual(b[0]["status"], "close")
        self.req("POST", "/co/_open")
        self.assertEqual(self.req("GET", "/co/_doc/1")[1]["_source"], {"x": 1})
        st, b, _ = self.req("GET", "/co")
        self.assertEqual(st, 200)
        self.assertIn("mappings", b["co"])
        self.assertEqual(b["co"]["settings"]["index"]["codec"], "ZSTD")
        self.assertEqual(self.req("HEAD", "/co")[0], 200)
        self.assertEqual(self.req("DELETE", "/co")[0], 200)
        self.assertEqual(self.req("HEAD", "/co")[0], 404)
        self.assertEqual(self.req("GET", "/co/_doc/1")[0], 404)

    def test_refresh_and_forcemerge_beside_delete(self):
        # a refresh or force-merge that found its indices before a DELETE
        # took one of them answers as if it ran before the delete (200) or
        # with index_not_found for the index it names (404): never a
        # failed write into the removed folder
        rounds = 8
        bulk = "".join('{"index":{}}\n{"n":%d,"t":"doc %d"}\n' % (k, k)
                       for k in range(300))
        answers = []
        for op in ("_refresh", "_forcemerge"):
            for i in range(rounds):
                for form in ("one", "list", "wildcard"):
                    names = ["rd-%s-%s-%d-%d" % (op[1:], form, i, k)
                             for k in range(3 if form != "one" else 1)]
                    for name in names:
                        self.req("PUT", "/" + name, {})
                        # two segments, and a buffer for the refresh to write
                        self.req("POST", "/%s/_bulk?refresh=true" % name, bulk)
                        self.req("POST", "/%s/_bulk" % name, bulk)
                    target = {"one": names[0], "list": ",".join(names),
                              "wildcard": names[0][:-2] + "-*"}[form]
                    gone = names[-1]
                    out = {}

                    def run(key, method, path):
                        out[key] = self.req(method, path)

                    ts = [threading.Thread(target=run,
                                           args=("op", "POST", "/%s/%s" % (target, op))),
                          threading.Thread(target=run, args=("del", "DELETE", "/" + gone))]
                    for t in ts:
                        t.start()
                    for t in ts:
                        t.join()
                    self.assertEqual(out["del"][0], 200, out["del"])
                    st, b, raw = out["op"]
                    answers.append(st)
                    if st != 200:
                        self.assertEqual(st, 404, (op, form, b))
                        self.assertEqual(b["error"]["type"], "index_not_found_exception", b)
                        self.assertEqual(b["error"]["reason"], "no such index [%s]" % gone)
                        self.assertEqual(b["error"]["resource.id"], gone)
                    self.assertNotIn(self.srv.data.encode(), raw)
                    for name in names[:-1]:
                        self.assertEqual(self.req("POST", "/%s/_refresh" % name)[0], 200)
                        self.assertEqual(self.req("DELETE", "/" + name)[0], 200)
        self.assertEqual(len(answers), 2 * rounds * 3)
        self.assertEqual(self.req("GET", "/_cluster/health")[1]["status"], "green")

    def test_settings_defaults_and_dynamic(self):
        self.req("PUT", "/st", {"settings": {"index": {"codec": "best_compression"}}})
        st, b, _ = self.req("GET", "/st/_settings?include_defaults=true&flat_settings=true")
        self.assertEqual(b["st"]["settings"]["index.codec"], "best_compression")
        d = b["st"]["defaults"]
        self.assertEqual(d["index.refresh_interval"], "1s")
        self.assertEqual(d["index.translog.durability"], "request")
        st, b, _ = self.req("PUT", "/st/_settings", {"index": {"refresh_interval": "5s"}})
        self.assertEqual(st, 200, b)
        st, b, _ = self.req("GET", "/st/_settings?flat_settings=true")
        self.assertEqual(b["st"]["settings"]["index.refresh_interval"], "5s")
        st, b, _ = self.req("PUT", "/st/_settings", {"index.refresh_interval": "soon"})
        self.assertEqual(st, 400)
        st, b, _ = self.req("PUT", "/st/_settings", {"index.uuid": "x"})
        self.assertEqual(st, 400)

    def test_rebalance_setting(self):
        # one node: no copy can move, whatever the value; it is kept
        self.assertEqual(self.req("PUT", "/rb", {"settings": {
            "routing.rebalance.enable": "none"}})[0], 200)
        flat = lambda: self.req("GET", "/rb/_settings?flat_settings=true")[1]["rb"]["settings"]
        self.assertEqual(flat()["index.routing.rebalance.enable"], "none")
        st, b, _ = self.req("PUT", "/rb/_settings", {"index.routing.rebalance.enable": "some"})
        self.assertEqual(st, 400, b)
        self.assertEqual(b["error"]["reason"], "No enum constant org.elasticsearch.cluster."
                         "routing.allocation.decider.EnableAllocationDecider.Rebalance.SOME")
        self.assertEqual(self.req("PUT", "/rb/_settings", {
            "index.routing.rebalance.enable": "primaries"})[0], 200)
        self.assertEqual(flat()["index.routing.rebalance.enable"], "primaries")
        self.assertEqual(self.req("PUT", "/rb/_settings", {
            "index.routing.rebalance.enable": None})[0], 200)
        self.assertNotIn("index.routing.rebalance.enable", flat())

    def test_codec_change_then_forcemerge(self):
        self.req("PUT", "/cc", {"settings": {"index.codec": "default",
                                              "index.refresh_interval": "-1"}})
        bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, d)
                       for i, d in enumerate(self.docs[:4000]))
        self.req("POST", "/cc/_bulk?refresh=true", bulk)
        size = lambda: self.req("GET", "/cc/_stats/store")[1]["_all"]["primaries"]["store"]
        before = size()
        self.req("POST", "/cc/_close")
        st, b, _ = self.req("PUT", "/cc/_settings", {"index.codec": "ZSTD"})
        self.assertEqual(st, 200, b)
        self.req("POST", "/cc/_open")
        st, segs, _ = self.req("GET", "/_cat/segments/cc?format=json")
        self.assertEqual({s["codec"] for s in segs}, {"default"})
        st, b, _ = self.req("POST", "/cc/_forcemerge?max_num_segments=1")
        self.assertEqual(st, 200, b)
        st, segs, _ = self.req("GET", "/_cat/segments/cc?format=json")
        self.assertEqual({s["codec"] for s in segs}, {"ZSTD"})
        after = size()
        print("\ncodec change default(LZ4) -> ZSTD + force-merge, 4000 docs: "
              "stored fields %d -> %d bytes, index %d -> %d bytes"
              % (before["stored_fields_in_bytes"], after["stored_fields_in_bytes"],
                 before["size_in_bytes"], after["size_in_bytes"]))
        self.assertLess(after["stored_fields_in_bytes"], before["stored_fields_in_bytes"])
        for i in (1, 1234, 4000):
            raw = self.req("GET", "/cc/_source/%d" % i)[2].decode()
            self.assertEqual(raw, self.docs[i - 1])

    def test_dictionary_retrained_when_first_refresh_was_small(self):
        def load(name, first):
            self.req("PUT", "/" + name, {"settings": {"index.codec": "ZSTD",
                                                       "index.refresh_interval": "-1"}})
            for lo, hi in ((0, first), (first, 10000)):
                if hi > lo:
                    bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, self.docs[i])
                                   for i in range(lo, hi))
                    self.req("POST", "/%s/_bulk?refresh=true" % name, bulk)
            self.req("POST", "/%s/_forcemerge?max_num_segments=1" % name)
            return self.req("GET", "/%s/_stats/store" % name)[1]["_all"]["primaries"]["store"]
        whole = load("dict-whole", 10000)
        small_first = load("dict-small", 50)
        print("\nstored fields: dictionary from all 10000 docs %d bytes; first "
              "refresh of 50 docs then force-merge %d bytes"
              % (whole["stored_fields_in_bytes"], small_first["stored_fields_in_bytes"]))
        self.assertLess(small_first["stored_fields_in_bytes"],
                        whole["stored_fields_in_bytes"] * 1.03)
        self.assertEqual(self.req("GET", "/dict-small/_source/20")[2].decode(), self.docs[19])
        self.assertEqual(self.req("GET", "/dict-small/_source/9000")[2].decode(), self.docs[8999])

    def test_reindex_to_other_codec(self):
        self.req("PUT", "/rsrc", {"settings": {"index.codec": "best_compression"}})
        bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, d)
                       for i, d in enumerate(self.docs[:1500]))
        self.req("POST", "/rsrc/_bulk?refresh=true", bulk)
        self.req("PUT", "/rdst", {"settings": {"index.codec": "ZSTD"}})
        st, b, _ = self.req("POST", "/_reindex?refresh=true",
                            {"source": {"index": "rsrc"}, "dest": {"index": "rdst"}})
        self.assertEqual((st, b["total"], b["created"]), (200, 1500, 1500), b)
        self.assertEqual(self.req("GET", "/rdst/_count")[1]["count"], 1500)
        self.assertEqual(self.req("GET", "/rdst/_source/777")[2].decode(), self.docs[776])
        st, b, _ = self.req("POST", "/_reindex", {"source": {"index": "nope"},
                                                  "dest": {"index": "x"}})
        self.assertEqual(st, 404)

    def test_damaged_segment_fails_only_its_index(self):
        srv = Server().start()
        try:
            for name in ("good", "bad"):
                srv.request("PUT", "/" + name, {"settings": {"index.codec": "ZSTD"}})
                srv.request("PUT", "/%s/_doc/1?refresh=true" % name, {"x": name})
            uuid = srv.request("GET", "/bad/_settings?flat_settings=true")[1][
                "bad"]["settings"]["index.uuid"]
            srv.stop()
            folder = os.path.join(srv.data, "indices", uuid)
            tim = [f for f in os.listdir(folder) if f.endswith(".tim")][0]
            with open(os.path.join(folder, tim), "r+b") as f:
                f.seek(40)
                b = f.read(1)
                f.seek(40)
                f.write(bytes([b[0] ^ 0x5A]))
            srv.start()
            self.assertEqual(srv.request("GET", "/good/_doc/1")[1]["_source"], {"x": "good"})
            st, b, _ = srv.request("GET", "/bad/_doc/1")
            self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
            self.assertIn(tim.split(".")[0], b["error"]["reason"])
            self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "red")
            rows = {r["index"]: r for r in
                    srv.request("GET", "/_cat/indices?format=json")[1]}
            self.assertEqual((rows["good"]["health"], rows["bad"]["health"]), ("green", "red"))
            # the damaged files are kept, not cleaned up as orphans
            self.assertIn(tim, os.listdir(folder))
            self.assertEqual(srv.request("DELETE", "/bad")[0], 200)
            self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "green")
        finally:
            srv.cleanup()

    def test_damaged_term_dictionary_is_red_not_closed(self):
        """A flipped bit in one segment's term dictionary: the index stays
        open with health red, as Elasticsearch shows an index whose shard
        failed with a CorruptIndexException; searches, counts and gets
        answer 500 corrupt_index_exception naming the file relative to the
        data directory; the other index keeps serving."""
        srv = Server().start()
        try:
            for name in ("fine", "hurt"):
                srv.request("PUT", "/" + name, {})
                for part in range(2):  # two segments
                    body = "".join(
                        '{"index":{"_id":"%d"}}\n{"msg":"hello %d"}\n' % (part * 300 + i, i)
                        for i in range(300))
                    st = srv.request("POST", "/%s/_bulk?refresh=true" % name, body.encode(),
                                     {"Content-Type": "application/x-ndjson"})[0]
                    self.assertEqual(st, 200)
            uuid = srv.request("GET", "/hurt/_settings?flat_settings=true")[1][
                "hurt"]["settings"]["index.uuid"]
            srv.stop()
            folder = os.path.join(srv.data, "indices", uuid)
            tim = sorted(f for f in os.listdir(folder) if f.endswith(".tim"))[0]
            path = os.path.join(folder, tim)
            with open(path, "r+b") as f:
                at = os.path.getsize(path) // 2
                f.seek(at)
                b = f.read(1)
                f.seek(at)
                f.write(bytes([b[0] ^ 0x10]))
            srv.start()
            self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "red")
            rows = {r["index"]: r for r in
                    srv.request("GET", "/_cat/indices?format=json")[1]}
            self.assertEqual((rows["hurt"]["health"], rows["hurt"]["status"]), ("red", "open"))
            self.assertEqual((rows["fine"]["health"], rows["fine"]["status"]), ("green", "open"))
            rel = "indices/%s/%s" % (uuid, tim)
            for method, url, body in (("GET", "/hurt/_search", {"query": {"match": {"msg": "hello"}}}),
                                      ("GET", "/hurt/_count", None),
                                      ("GET", "/hurt/_doc/1", None)):
                st, b, _ = srv.request(method, url, body)
                self.assertEqual((st, b["error"]["type"], b["status"]),
                                 (500, "corrupt_index_exception", 500), url)
                self.assertIn(rel, b["error"]["reason"], url)
                self.assertNotIn(srv.data, json.dumps(b), url)
            self.assertEqual(srv.request("GET", "/fine/_count")[1]["count"], 600)
            st, b, _ = srv.request("GET", "/fine/_search", {"query": {"match": {"msg": "hello"}}})
            self.assertEqual((st, b["hits"]["total"]["value"]), (200, 600))
        finally:
            srv.cleanup()

    def test_write_error_names_file_relative_to_data_dir(self):
        """A segment file that cannot be created (a folder stands in its
        way): the refresh's io_exception names it relative to the data
        directory, never with the server's absolute path."""
        srv = Server().start()
        try:
            srv.request("PUT", "/w", {})
            srv.request("PUT", "/w/_doc/1", {"x": 1})
            uuid = srv.request("GET", "/w/_settings?flat_settings=true")[1][
                "w"]["settings"]["index.uuid"]
            os.mkdir(os.path.join(srv.data, "indices", uuid, "seg_1.fdt"))
            st, b, _ = srv.request("POST", "/w/_refresh")
            self.assertEqual((st, b["error"]["type"]), (500, "io_exception"))
            self.assertIn("[indices/%s/seg_1.fdt]" % uuid, b["error"]["reason"])
            self.assertNotIn(srv.data, json.dumps(b))
        finally:
            srv.cleanup()

    def test_search_during_indexing_and_merge(self):
        self.req("PUT", "/cc2", {"settings": {"index.codec": "ZSTD",
                                               "index.refresh_interval": "100ms"}})
        lines = self.docs
        errors = []
        stop = threading.Event()

        def index():
            for start in range(0, 6000, 500):
                bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, lines[i])
                               for i in range(start, start + 500))
                st, b, _ = self.req("POST", "/cc2/_bulk", bulk)
                if st != 200 or b["errors"]:
                    errors.append(("bulk", st))
            stop.set()

        def merge():
            while not stop.is_set():
                st, b, _ = self.req("POST", "/cc2/_forcemerge?max_num_segments=1")
                if st != 200:
                    errors.append(("merge", st, b))

        def search():
            last = 0
            while not stop.is_set():
                st, b, _ = self.req("POST", "/cc2/_search", {
                    "query": {"match": {"method": "GET"}}, "size": 20,
                    "track_total_hits": True})
                if st != 200:
                    errors.append(("search", st, b))
                    continue
                total = b["hits"]["total"]["value"]
                if total < last:
                    errors.append(("went back", last, total))
                last = total
                for h in b["hits"]["hits"]:
                    if h["_source"] != json.loads(lines[int(h["_id"]) - 1]):
                        errors.append(("wrong source", h["_id"]))

        ts = [threading.Thread(target=f) for f in (index, merge, search, search)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        self.assertEqual(errors, [])
        self.req("POST", "/cc2/_refresh")
        st, b, _ = self.req("POST", "/cc2/_search", {
            "query": {"match": {"method": "GET"}}, "size": 0, "track_total_hits": True})
        want = sum(1 for l in lines[:6000] if json.loads(l)["method"] == "GET")
        self.assertEqual(b["hits"]["total"]["value"], want)


if __name__ == "__main__":
    unittest.main()
