"""_clone, _shrink and _split (Elasticsearch 8's resize API): the checks
and their words, the target's settings, mapping and aliases, and every
document in the target shard Elasticsearch's routing formula gives it (the
same as an index created with the target's shard count), found by `?routing=`;
and a kill -9 in the middle of a resize leaves no half target."""
import json
import os
import random
import signal
import threading
import time
import unittest

from fdsserver import Server, ServerTestCase

DOCS = 300


def bulk_body(index, n=DOCS):
    lines = []
    for i in range(n):
        meta = {"_index": index, "_id": str(i)}
        if i % 5 == 0:
            meta["routing"] = "r%d" % (i % 7)
        lines.append(json.dumps({"index": meta}))
        lines.append(json.dumps({"n": i, "t": "x%d" % (i % 3)}))
    return "\n".join(lines) + "\n"


class Resize(ServerTestCase):

    def make(self, name, shards, extra=None, block=True):
        settings = {"number_of_shards": shards, "number_of_replicas": 0}
        settings.update(extra or {})
        st, b, _ = self.req("PUT", "/" + name, {
            "settings": settings,
            "mappings": {"properties": {"n": {"type": "integer"},
                                        "t": {"type": "keyword"}}}})
        self.assertEqual(st, 200, b)
        st, b, _ = self.req("POST", "/_bulk?refresh=true", bulk_body(name),
                            headers={"Content-Type": "application/x-ndjson"})
        self.assertEqual((st, b["errors"]), (200, False))
        if block:
            st, _, _ = self.req("PUT", "/%s/_settings" % name, {"index.blocks.write": True})
            self.assertEqual(st, 200)

    def shard_docs(self, index):
        st, rows, _ = self.req("GET", "/_cat/shards/%s?format=json" % index)
        self.assertEqual(st, 200)
        return {int(r["shard"]): int(r["docs"]) for r in rows}

    def resize(self, kind, src, dst, body=None):
        return self.req("POST", "/%s/_%s/%s" % (src, kind, dst), body)

    def check_same_placement(self, target, shards, extra=None):
        """Every document of `target` is in the shard an index created with
        `shards` shards (and `extra` settings) puts it in, and found there
        by its routing."""
        fresh = "fresh-%s" % target
        self.make(fresh, shards, extra, block=False)
        self.assertEqual(self.shard_docs(target), self.shard_docs(fresh))
        for i in range(0, DOCS, 7):
            q = "?routing=r%d" % (i % 7) if i % 5 == 0 else ""
            st, b, _ = self.req("GET", "/%s/_doc/%d%s" % (target, i, q))
            self.assertEqual((st, b["_source"]["n"]), (200, i), b)
        st, b, _ = self.req("GET", "/%s/_count" % target)
        self.assertEqual(b["count"], DOCS)

    def test_errors(self):
        self.make("e-src", 4, block=False)
        self.assertError(self.resize("shrink", "e-src", "e-t", {"settings": {"index.number_of_shards": 2}}),
                         500, "illegal_state_exception",
                         'index e-src must be read-only to resize index. use "index.blocks.write=true"')
        self.req("PUT", "/e-src/_block/write")
        self.assertError(self.resize("shrink", "e-src", "e-t", {"settings": {"index.number_of_shards": 3}}),
                         400, "illegal_argument_exception",
                         "the number of source shards [4] must be a multiple of [3]")
        self.assertError(self.resize("shrink", "e-src", "e-t", {"settings": {"index.number_of_shards": 8}}),
                         400, "illegal_argument_exception",
                         "the number of target shards [8] must be less that the number of source shards [4]")
        self.assertError(self.resize("split", "e-src", "e-t", {"settings": {"index.number_of_shards": 6}}),
                         400, "illegal_argument_exception",
                         "the number of source shards [4] must be a factor of [6]")
        self.assertError(self.resize("split", "e-src", "e-t", {"settings": {"index.number_of_shards": 2}}),
                         400, "illegal_argument_exception",
                         "the number of source shards [4] must be less that the number of target shards [2]")
        self.assertError(self.resize("split", "e-src", "e-t", {"settings": {"index.number_of_shards": 2048}}),
                         400, "illegal_argument_exception")
        self.assertError(self.resize("split", "e-src", "e-t"), 400,
                         "action_request_validation_exception",
                         "Validation Failed: 1: index.number_of_shards is required for split operations;")
        self.assertError(self.resize("clone", "e-src", "e-t", {"settings": {"index.number_of_shards": 2}}),
                         400, "illegal_argument_exception",
                         "the number of target shards (2) must be the same as the number of  source shards ( 4)")
        self.assertError(self.resize("split", "e-src", "e-t", {"settings": {
            "index.number_of_shards": 8, "index.number_of_routing_shards": 16}}),
            400, "illegal_argument_exception",
            "cannot provide index.number_of_routing_shards on resize")
        self.assertError(self.resize("clone", "e-src", "e-t", {"mappings": {}}), 400,
                         "x_content_parse_exception", "[resize_request] unknown field [mappings]")
        self.assertError(self.resize("clone", "e-missing", "e-t"), 404, "index_not_found_exception")
        self.assertError(self.resize("clone", "e-src", "E-T"), 400, "invalid_index_name_exception")
        st, _, _ = self.req("PUT", "/e-exists")
        b = self.assertError(self.resize("clone", "e-src", "e-exists"), 400,
                             "resource_already_exists_exception")
        self.assertRegex(b["error"]["reason"], r"^index \[e-exists/[^\]]+\] already exists$")
        self.make("e-one", 1)
        self.assertError(self.resize("shrink", "e-one", "e-t"), 400, "illegal_argument_exception",
                         "can't shrink an index with only one shard")
        st, _, _ = self.req("HEAD", "/e-t")
        self.assertEqual(st, 404)

    def test_shrink(self):
        self.make("s-src", 4, {"index.codec": "best_compression"})
        st, b, _ = self.resize("shrink", "s-src", "s-dst", {
            "settings": {"index.number_of_shards": 2, "index.blocks.write": None},
            "aliases": {"s-alias": {}}})
        self.assertEqual((st, b), (200, {"acknowledged": True, "shards_acknowledged": True,
                                         "index": "s-dst"}))
        src = self.shard_docs("s-src")
        self.assertEqual(self.shard_docs("s-dst"), {0: src[0] + src[1], 1: src[2] + src[3]})
        self.check_same_placement("s-dst", 2)
        st, b, _ = self.req("GET", "/s-dst/_settings")
        ix = b["s-dst"]["settings"]["index"]
        self.assertEqual((ix["number_of_shards"], ix["codec"]), ("2", "best_compression"))
        self.assertNotIn("blocks", ix)  # cleared by the body's null
        st, b, _ = self.req("GET", "/s-alias/_count")
        self.assertEqual(b["count"], DOCS)
        st, b, _ = self.req("PUT", "/s-dst/_doc/new", {"n": -1})
        self.assertEqual(st, 201, b)
        st, b, _ = self.req("GET", "/s-dst/_mapping")
        self.assertEqual(b["s-dst"]["mappings"]["properties"]["t"], {"type": "keyword"})

    def test_split(self):
        self.make("p-src", 2, {"index.codec": "ZSTD"})
        st, b, _ = self.req("PUT", "/p-src/_doc/late?refresh=false", {"n": 1})
        self.assertEqual(st, 403)  # write-blocked
        st, b, _ = self.resize("split", "p-src", "p-dst", {"settings": {"index.number_of_shards": 8}})
        self.assertEqual(st, 200, b)
        self.check_same_placement("p-dst", 8)
        st, b, _ = self.req("GET", "/p-dst/_settings")
        # the write block is copied, as in Elasticsearch
        self.assertEqual(b["p-dst"]["settings"]["index"]["blocks"], {"write": "true"})
        st, b, _ = self.req("GET", "/p-dst/_doc/5?routing=r5")
        self.assertEqual((b["_routing"], b["_version"], b["_seq_no"]), ("r5", 1, 5))
        st, b, _ = self.req("GET", "/p-dst/_search", {"query": {"term": {"t": "x1"}}, "size": 0})
        self.assertEqual(b["hits"]["total"]["value"], DOCS // 3)
        # a split from one shard takes number_of_routing_shards
        self.make("p-one", 1)
        st, b, _ = self.resize("split", "p-one", "p-one3", {"settings": {
            "index.number_of_shards": 3, "index.number_of_routing_shards": 6}})
        self.assertEqual(st, 200, b)
        self.check_same_placement("p-one3", 3, {"number_of_routing_shards": 6})

    def test_date_math_names(self):
        """<...> date math in a created index's name and its aliases, and
        in a resize's source and target, as Elasticsearch resolves them."""
        from urllib.parse import quote
        st, b, _ = self.req("PUT", "/" + quote("<dm-{2022-12-31||/d{yyyy-MM-dd}}>", safe=""),
                            {"aliases": {"<dma-{2022-12-31||/d{yyyy-MM-dd}}>": {}}})
        self.assertEqual((st, b["index"]), (200, "dm-2022-12-31"), b)
        self.assertEqual(self.req("HEAD", "/_alias/dma-2022-12-31")[0], 200)
        self.req("PUT", "/dm-2022-12-31/_block/write")
        st, b, _ = self.req("POST", "/%s/_clone/%s" % (
            quote("<dm-{2022-12-31||/d{yyyy-MM-dd}}>", safe=""),
            quote("<dmc-{2022-12-31||+1d/d{yyyy.MM.dd}}>", safe="")),
            {"aliases": {"<dmca-{2022-12-31||/M{yyyy-MM}}>": {}}})
        self.assertEqual((st, b["index"]), (200, "dmc-2023.01.01"), b)
        self.assertEqual(self.req("HEAD", "/_alias/dmca-2022-12")[0], 200)
        self.assertError(self.req("PUT", "/" + quote("<dm-{2022-12-31||/q}>", safe="")),
                         400, "illegal_argument_exception")

    def test_wait_for_active_shards(self):
        """One node holds only primaries: waiting for more copies answers
        shards_acknowledged false, as Elasticsearch does after its timeout."""
        self.make("w-src", 2)
        # one target name per case (a name from hash(q) % 1000, which
        # Python salts per process, collided now and then: "already exists")
        for i, (q, replicas, acked) in enumerate((
                ("", 0, True), ("?wait_for_active_shards=1", 0, True),
                ("?wait_for_active_shards=all", 0, True),
                ("?wait_for_active_shards=2", 0, False),
                ("?wait_for_active_shards=all", 1, False),
                ("?wait_for_active_shards=index-setting", 1, True))):
            target = "w-%d-%d" % (replicas, i)
            st, b, _ = self.req("POST", "/w-src/_clone/%s%s" % (target, q),
                                {"settings": {"index.number_of_replicas": replicas}})
            self.assertEqual((st, b.get("shards_acknowledged")), (200, acked), (q, b))
            st, b, _ = self.req("PUT", "/c%s%s" % (target, q),
                                {"settings": {"number_of_replicas": replicas}})
            self.assertEqual((st, b.get("shards_acknowledged")), (200, acked), (q, b))
        self.assertError(self.req("POST", "/w-src/_clone/w-x?wait_for_active_shards=many"),
                         400, "number_format_exception", 'For input string: "many"')
        self.assertError(self.req("PUT", "/w-y?wait_for_active_shards=-1"), 400,
                         "illegal_argument_exception", "shard count cannot be a negative value")

    def test_clone(self):
        self.make("c-src", 3)
        st, b, _ = self.req("DELETE", "/c-src/_doc/3?refresh=true")
        self.assertEqual(st, 403)
        st, b, _ = self.resize("clone", "c-src", "c-dst")
        self.assertEqual(st, 200, b)
        self.assertEqual(self.shard_docs("c-dst"), self.shard_docs("c-src"))
        st, rows, _ = self.req("GET", "/_cat/indices/c-dst?format=json")
        self.assertEqual((rows[0]["pri"], rows[0]["docs.count"], rows[0]["health"]),
                         ("3", str(DOCS), "green"))
        # survives a restart: committed, files in place
        self.srv.stop()
        self.srv.start()
        self.assertEqual(self.shard_docs("c-dst"), self.shard_docs("c-src"))
        st, b, _ = self.req("GET", "/c-dst/_doc/10?routing=r3")
        self.assertEqual((st, b["_source"]["n"]), (200, 10))
        # the source deleted, the clone's hard-linked files stay
        self.req("DELETE", "/c-src")
        st, b, _ = self.req("GET", "/c-dst/_count")
        self.assertEqual(b["count"], DOCS)


class ResizeCrash(unittest.TestCase):
    """kill -9 while a split of a ZSTD index (re-encoded, a dictionary
    trained) or a clone runs: after the restart the target is absent or
    complete, and no orphan folder is left."""

    ROUNDS = 8

    def test_kill9_during_resize(self):
        rng = random.Random(20261201)
        srv = Server()
        try:
            srv.start()
            st, b, _ = srv.request("PUT", "/big", {"settings": {
                "number_of_shards": 2, "index.codec": "ZSTD", "refresh_interval": "-1"}})
            self.assertEqual(st, 200, b)
            n = 0
            for batch in range(20):
                lines = []
                for i in range(1000):
                    lines.append(json.dumps({"index": {"_index": "big", "_id": str(n)}}))
                    lines.append(json.dumps({"n": n, "msg": "line %d of the log %s" % (n, "x" * (n % 50))}))
                    n += 1
                srv.request("POST", "/_bulk", "\n".join(lines) + "\n",
                            headers={"Content-Type": "application/x-ndjson"})
                srv.request("POST", "/big/_refresh")
            srv.request("PUT", "/big/_settings", {"index.blocks.write": True})
            # how long one takes, uninterrupted: kills land before and after
            t0 = time.time()
            st, b, _ = srv.request("POST", "/big/_split/measured",
                                   {"settings": {"index.number_of_shards": 4}})
            self.assertEqual(st, 200, b)
            took = time.time() - t0
            outcomes = {"absent": 0, "complete": 0}
            for r in range(self.ROUNDS):
                kind, body = (("split", {"settings": {"index.number_of_shards": 4}})
                              if r % 2 == 0 else ("clone", None))
                target = "t%d" % r
                t = threading.Thread(target=lambda: srv.request(
                    "POST", "/big/_%s/%s" % (kind, target), body, timeout=60))
                t.daemon = True
                t.start()
                time.sleep(rng.uniform(0.3 * took, 2.5 * took))
                srv.stop(signal.SIGKILL)
                t.join(5)
                srv.start()
                st, b, _ = srv.request("GET", "/_cat/indices/%s?format=json" % target)
                if st == 404:
                    outcomes["absent"] += 1
                else:
                    self.assertEqual(b[0]["docs.count"], str(n), b)
                    st, c, _ = srv.request("GET", "/%s/_count" % target)
                    self.assertEqual(c["count"], n)
                    outcomes["complete"] += 1
                st, names, _ = srv.request("GET", "/_cat/indices?format=json&h=uuid")
                folders = set(os.listdir(os.path.join(srv.data, "indices")))
                self.assertEqual(folders, {x["uuid"] for x in names})
            print("resize crash rounds (%.3f s a split):" % took, outcomes)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
