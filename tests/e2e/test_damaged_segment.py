"""The flip test: one flipped bit in any part of any segment file (the
stored-fields .fdt: header, a block, the block index, the version and
seq_no columns, the footer; the inverted index .tim: head, middle, end)
turns its index red with corrupt_index_exception (at start-up, or at the
first read of a damaged block), never into a wrong answer; the rest of the
node keeps serving; `fieldstore check-index --exorcise` repairs it,
printing exactly the documents lost (a damaged stored-fields block loses
its own documents, damage elsewhere the segment), and the index is green at
the next start with every other document intact, also after a
force-merge.  Also: damage met at run
time stays reported across a restart (the corruption marker), wildcard
searches report the damaged index in _shards.failures, _cat/shards and
_cluster/allocation/explain say why, and check-index refuses a running
node's data directory.

Each case copies one prepared data directory, so the whole file runs in
well under a minute."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from fdsserver import SERVER, Server

PARTS = 3            # segments of the damaged index, one per bulk + refresh
PER_PART = 200       # documents in each
DELETED = 5          # documents deleted from the first segment
FINE_DOCS = 100


def source(i):
    return {"msg": "hello number %d" % i, "n": i, "tag": "t%d" % (i % 7)}


def bulk(srv, index, ids):
    body = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i, json.dumps(source(i)))
                   for i in ids)
    st, b, _ = srv.request("POST", "/%s/_bulk?refresh=true" % index, body.encode(),
                           {"Content-Type": "application/x-ndjson"})
    assert st == 200 and not b["errors"], b


def flip(path, at):
    with open(path, "r+b") as f:
        f.seek(at)
        b = f.read(1)
        f.seek(at)
        f.write(bytes([b[0] ^ 0x08]))


def first_block_docs(path):
    """Doc ids of the first block of a .fdt: [0, doc base of block 1)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(size - 64)
        index_off, nblocks, max_doc = struct.unpack_from("<QII", f.read(16), 0)
        if nblocks < 2:
            return range(max_doc)
        f.seek(index_off + 16 + 8)
        return range(struct.unpack("<I", f.read(4))[0])


def fdt_regions(path):
    """Offsets in one byte of each part of a .fdt (layout at the top of
    src/store/segment.c)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(size - 64)
        foot = f.read(64)
    index_off, nblocks = struct.unpack_from("<QI", foot, 0)
    return {"fdt header": 3, "fdt block": 8 + 45,
            "fdt block index": index_off + 2,
            "fdt columns": index_off + 16 * nblocks + 4,
            "fdt footer": size - 64 + 13, "fdt end magic": size - 1}


class DamagedSegment(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="fds-flip-")
        cls.template = os.path.join(cls.root, "template")
        os.mkdir(cls.template)
        srv = Server(cls.template).start()
        try:
            for name, codec in (("hurt", "ZSTD"), ("fine", "default")):
                st = srv.request("PUT", "/" + name, {"settings": {
                    "index.codec": codec, "number_of_replicas": 0,
                    "refresh_interval": -1}})[0]
                assert st == 200
            for p in range(PARTS):
                bulk(srv, "hurt", range(p * PER_PART, (p + 1) * PER_PART))
            for i in range(DELETED):  # live docs of the first segment: 195
                assert srv.request("DELETE", "/hurt/_doc/%d?refresh=true" % (i * 3))[0] == 200
            bulk(srv, "fine", range(10000, 10000 + FINE_DOCS))
            cls.uuid = srv.request("GET", "/hurt/_settings?flat_settings=true")[1][
                "hurt"]["settings"]["index.uuid"]
        finally:
            srv.stop()
        folder = os.path.join(cls.template, "indices", cls.uuid)
        gens = sorted(int(f[4:-4]) for f in os.listdir(folder) if f.endswith(".fdt"))
        assert len(gens) == PARTS, gens
        cls.first = "seg_%d" % gens[0]  # holds ids 0..199, 195 of them live
        cls.live = [i for i in range(PARTS * PER_PART)
                    if not (i < 3 * DELETED and i % 3 == 0)]
        # doc ids of the first segment are its ids in bulk order
        cls.block0 = first_block_docs(os.path.join(folder, cls.first + ".fdt"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def copy(self, name):
        data = os.path.join(self.root, name)
        shutil.copytree(self.template, data)
        return data

    def check_index(self, data, *args):
        p = subprocess.run([SERVER, "check-index", "--data", data, "hurt"] + list(args),
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def search_all(self, srv, index="hurt"):
        return srv.request("GET", "/%s/_search?size=10000" % index,
                           {"query": {"match_all": {}}, "sort": ["n"]})

    def assert_answer_right_or_corrupt(self, st, b, expect_ids):
        """0 silent wrong answers: 500 corrupt_index_exception, or every
        expected document with its exact source."""
        if st != 200:
            self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
            return False
        got = {h["_id"]: h["_source"] for h in b["hits"]["hits"]}
        self.assertEqual(set(got), {str(i) for i in expect_ids})
        for i in expect_ids:
            self.assertEqual(got[str(i)], source(i))
        return True

    def assert_red(self, srv, rel):
        self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "red")
        rows = {r["index"]: r for r in srv.request("GET", "/_cat/indices?format=json")[1]}
        self.assertEqual((rows["hurt"]["health"], rows["hurt"]["status"]), ("red", "open"))
        self.assertEqual(rows["fine"]["health"], "green")
        st, b, raw = srv.request("GET", "/hurt/_count")
        self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
        self.assertIn(rel, b["error"]["reason"])
        self.assertNotIn(self.root.encode(), raw)
        # the rest of the node keeps serving
        self.assertEqual(srv.request("GET", "/fine/_count")[1]["count"], FINE_DOCS)

    def repair_and_verify(self, data, rel, lost_ids):
        """check-index reports the damage and the exact loss, --exorcise
        repairs it, and the next start is green with every other live
        document, exact."""
        lost_ids = set(lost_ids) & set(self.live)
        rc, out = self.check_index(data)
        self.assertEqual(rc, 1, out)
        self.assertIn("DAMAGED", out)
        self.assertIn(rel.split("/")[-1].split(".")[0], out)
        self.assertIn("the repair loses documents: %d," % len(lost_ids), out)
        rc, out = self.check_index(data, "--exorcise")
        self.assertEqual(rc, 0, out)
        lost = int(re.search(r"documents lost: (\d+)", out).group(1))
        self.assertEqual(lost, len(lost_ids), out)
        rc, out = self.check_index(data)
        self.assertEqual(rc, 0, out)
        srv = Server(data).start()
        try:
            self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "green")
            kept = [i for i in self.live if i not in lost_ids]
            self.assertEqual(srv.request("GET", "/hurt/_count")[1]["count"], len(kept))
            st, b, _ = self.search_all(srv)
            self.assertTrue(self.assert_answer_right_or_corrupt(st, b, kept))
            self.assertEqual(srv.request("GET", "/fine/_count")[1]["count"], FINE_DOCS)
            # writable again, and a force-merge rewrites the segment
            bulk(srv, "hurt", [5])
            self.assertEqual(srv.request("GET", "/hurt/_doc/5")[1]["_source"], source(5))
            # a clone copies every block with a new dictionary id: it
            # refuses a damaged block left with deleted documents until a
            # force-merge rewrote the segment, and the source stays green
            clone = lambda: srv.request("POST", "/hurt/_clone/copy")
            srv.request("PUT", "/hurt/_settings", {"index.blocks.write": True})
            if lost_ids == set(self.block0) & set(self.live):
                st, b, _ = clone()
                self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
                self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "green")
            self.assertEqual(srv.request("POST", "/hurt/_forcemerge?max_num_segments=1")[0], 200)
            st, b, _ = self.search_all(srv)
            self.assertTrue(self.assert_answer_right_or_corrupt(st, b, sorted(set(kept) | {5})))
            st, b, _ = clone()
            self.assertEqual(st, 200, b)
            self.assertEqual(srv.request("GET", "/copy/_count")[1]["count"], len(kept) + 1)
        finally:
            srv.stop()
        rc, out = self.check_index(data)
        self.assertEqual(rc, 0, out)

    def test_flip_in_every_segment_file_part(self):
        folder = os.path.join("indices", self.uuid)
        fdt = os.path.join(self.template, folder, self.first + ".fdt")
        tim_size = os.path.getsize(os.path.join(self.template, folder, self.first + ".tim"))
        cases = [(self.first + ".fdt", what, at) for what, at in fdt_regions(fdt).items()]
        cases += [(self.first + ".tim", "tim " + what, at) for what, at in
                  (("head", 2), ("middle", tim_size // 2), ("end", tim_size - 1))]
        live = self.live
        for n, (fname, what, at) in enumerate(cases):
            with self.subTest(part=what):
                data = self.copy("case%d" % n)
                flip(os.path.join(data, folder, fname), at)
                rel = "%s/%s" % (folder, fname)
                srv = Server(data).start()
                try:
                    st, b, _ = self.search_all(srv)
                    self.assertFalse(self.assert_answer_right_or_corrupt(st, b, live), what)
                    self.assertIn(rel, b["error"]["reason"])
                    self.assert_red(srv, rel)
                finally:
                    srv.stop()
                # a damaged block loses its own documents only; damage
                # anywhere else loses the segment
                self.repair_and_verify(data, rel, self.block0 if what == "fdt block"
                                       else range(PER_PART))
                shutil.rmtree(data)

    def test_damage_at_run_time_fails_the_index_and_stays_reported(self):
        data = self.copy("runtime")
        rel = "indices/%s/%s.fdt" % (self.uuid, self.first)
        srv = Server(data).start()
        try:
            self.assertEqual(srv.request("GET", "/_cluster/health")[1]["status"], "green")
            rc, out = self.check_index(data)
            self.assertEqual(rc, 2, out)  # the running node holds the lock
            self.assertIn("in use by pid", out)
            # the server maps the file: the flip is what its next read sees
            flip(os.path.join(data, rel), 8 + 45)
            st, b, _ = srv.request("GET", "/hurt/_doc/1")
            self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
            self.assertIn(rel, b["error"]["reason"])
            # now the whole index is red, not only that request
            self.assert_red(srv, rel)
            st, b, _ = srv.request("GET", "/hurt/_doc/%d" % (PER_PART + 1))
            self.assertEqual((st, b["error"]["type"]), (500, "corrupt_index_exception"))
            # a wildcard search reports the damaged index as failed shards
            st, b, _ = srv.request("GET", "/*/_search?size=1000", {"query": {"match_all": {}}})
            self.assertEqual(st, 200, b)
            self.assertEqual((b["_shards"]["total"], b["_shards"]["failed"]), (2, 1))
            f = b["_shards"]["failures"][0]
            self.assertEqual((f["index"], f["reason"]["type"]), ("hurt", "corrupt_index_exception"))
            self.assertIn(rel, f["reason"]["reason"])
            self.assertEqual(b["hits"]["total"]["value"], FINE_DOCS)
            self.assertTrue(all(h["_index"] == "fine" for h in b["hits"]["hits"]))
            # so does a list of names; without partial results it is an error
            st, b, _ = srv.request("GET", "/fine,hurt/_count")
            self.assertEqual((st, b["count"], b["_shards"]["failed"]), (200, FINE_DOCS, 1))
            st, b, _ = srv.request("GET", "/*/_search?allow_partial_search_results=false")
            self.assertEqual((st, b["error"]["type"]), (500, "search_phase_execution_exception"))
            self.assertEqual(b["error"]["failed_shards"][0]["reason"]["type"],
                             "corrupt_index_exception")
            # _cat/shards and the allocation explanation say why
            rows = {r["index"]: r for r in srv.request(
                "GET", "/_cat/shards?format=json&h=index,state,ur,ud")[1]}
            self.assertEqual((rows["hurt"]["state"], rows["hurt"]["unassigned.reason"]),
                             ("UNASSIGNED", "ALLOCATION_FAILED"))
            self.assertIn(rel, rows["hurt"]["unassigned.details"])
            self.assertEqual(rows["fine"]["state"], "STARTED")
            for method in ("GET", "POST"):
                st, b, _ = srv.request(method, "/_cluster/allocation/explain")
                self.assertEqual(st, 200, b)
                self.assertEqual((b["index"], b["shard"], b["primary"], b["current_state"],
                                  b["can_allocate"], b["unassigned_info"]["reason"]),
                                 ("hurt", 0, True, "unassigned", "no_valid_shard_copy",
                                  "ALLOCATION_FAILED"))
                self.assertIn("note", b)
                self.assertIn(rel, b["unassigned_info"]["details"])
            st, b, _ = srv.request("POST", "/_cluster/allocation/explain",
                                   {"index": "fine", "shard": 0, "primary": True})
            self.assertEqual((st, b["current_state"]), (200, "started"))
        finally:
            srv.stop()
        # failed until repaired: the marker keeps it red across a restart
        srv = Server(data).start()
        try:
            self.assert_red(srv, rel)
        finally:
            srv.stop()
        self.repair_and_verify(data, rel, self.block0)
        srv = Server(data).start()
        try:
            st, b, _ = srv.request("GET", "/_cluster/allocation/explain")
            self.assertEqual((st, b["error"]["type"]), (400, "illegal_argument_exception"))
            self.assertIn("there are no unassigned shards", b["error"]["reason"])
        finally:
            srv.stop()

    def test_allocation_explain_of_a_healthy_node(self):
        srv = Server().start()
        try:
            st, b, _ = srv.request("GET", "/_cluster/allocation/explain")
            self.assertEqual((st, b["error"]["type"]), (400, "illegal_argument_exception"))
            self.assertTrue(b["error"]["reason"].startswith(
                "No shard was specified in the request which means the response "
                "should explain a randomly-chosen unassigned shard, but there are "
                "no unassigned shards in this cluster."), b)
            srv.request("PUT", "/two", {"settings": {"number_of_shards": 2,
                                                     "number_of_replicas": 1}})
            st, b, _ = srv.request("GET", "/_cluster/allocation/explain")
            self.assertEqual((st, b["index"], b["primary"], b["current_state"],
                              b["can_allocate"], b["unassigned_info"]["reason"]),
                             (200, "two", False, "unassigned", "no", "INDEX_CREATED"))
            self.assertEqual(b["node_allocation_decisions"][0]["deciders"][0]["decider"],
                             "same_shard")
            st, b, _ = srv.request("POST", "/_cluster/allocation/explain",
                                   {"index": "two", "shard": 1, "primary": True})
            self.assertEqual((st, b["shard"], b["current_state"]), (200, 1, "started"))
            for body, etype in (({"index": "two", "shard": 2, "primary": True},
                                 "illegal_argument_exception"),
                                ({"index": "two"}, "action_request_validation_exception"),
                                ({"index": "two", "shard": 0, "primary": True, "x": 1},
                                 "x_content_parse_exception")):
                st, b, _ = srv.request("POST", "/_cluster/allocation/explain", body)
                self.assertEqual((st, b["error"]["type"]), (400, etype), body)
            st, b, _ = srv.request("POST", "/_cluster/allocation/explain",
                                   {"index": "nope", "shard": 0, "primary": True})
            self.assertEqual((st, b["error"]["type"]), (404, "index_not_found_exception"))
            st, b, _ = srv.request("GET", "/_cluster/allocation/explain?include_disk_info=true")
            self.assertEqual(st, 400)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
