"""The official Python client's `helpers.scan` (Debian's python3-elasticsearch
7.17: a scroll sorted by `_doc`) over 100,000 synthetic access-log documents
returns every document exactly once while another thread keeps indexing new
ones into the same index beside it -- the scroll reads the segments as they
were when it began -- and the client's scroll, point-in-time, by-query and
task calls parse the answers.  Skipped when the package is not installed."""
import os
import subprocess
import threading
import time
import unittest
import warnings

from fdsserver import ServerTestCase

try:
    import elasticsearch
    from elasticsearch import Elasticsearch, helpers
except ImportError:  # pragma: no cover
    elasticsearch = None

SYNTHLOGS = os.environ.get("FDS_SYNTHLOGS", "synthlogs")
DOCS = 100000
SEED = 7
BULK_LINES = 20000  # lines of one _bulk request (10,000 documents)


@unittest.skipIf(elasticsearch is None, "python3-elasticsearch is not installed")
class ScanBesideIndexing(ServerTestCase):

    def setUp(self):
        warnings.simplefilter("ignore", DeprecationWarning)

    def load(self):
        out = subprocess.run([SYNTHLOGS, "--docs", str(DOCS), "--seed", str(SEED),
                              "--format", "bulk", "--index", "scan"],
                             check=True, capture_output=True).stdout
        lines = out.split(b"\n")
        for i in range(0, len(lines), BULK_LINES):
            chunk = b"\n".join(lines[i:i + BULK_LINES]).strip() + b"\n"
            if chunk.strip():
                st, b, _ = self.req("POST", "/_bulk", chunk,
                                    {"Content-Type": "application/x-ndjson"})
                self.assertEqual((st, b["errors"]), (200, False))
        self.req("POST", "/scan/_refresh")

    def test_scan_while_indexing(self):
        self.load()
        es = Elasticsearch("http://127.0.0.1:%d" % self.srv.port, timeout=120)
        stop = threading.Event()
        written = [0]
        errors = []

        def writer():
            # new documents, refreshed as they come, beside the scan
            w = Elasticsearch("http://127.0.0.1:%d" % self.srv.port, timeout=120)
            n = 0
            try:
                while not stop.is_set():
                    body = []
                    for _ in range(200):
                        n += 1
                        body.append({"index": {"_index": "scan", "_id": "new-%d" % n}})
                        body.append({"status": 200, "url": "/new/%d" % n})
                    r = w.bulk(body=body, refresh="true")
                    if r["errors"]:
                        errors.append(r)
                    written[0] = n
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        t = threading.Thread(target=writer)
        t.start()
        try:
            time.sleep(0.2)  # the writer is going
            before = written[0]  # acknowledged and refreshed: in the view
            seen = {}
            for hit in helpers.scan(es, index="scan", size=1000, scroll="1m",
                                    query={"query": {"match_all": {}}}):
                if not seen:
                    # the scroll is open: let the writer land two more
                    # batches beside it (one may have been in flight)
                    want = written[0] + 400
                    deadline = time.time() + 30
                    while written[0] < want and time.time() < deadline and not errors:
                        time.sleep(0.005)
                seen[hit["_id"]] = seen.get(hit["_id"], 0) + 1
        finally:
            stop.set()
            t.join()
        self.assertEqual(errors, [])
        self.assertGreater(written[0], 0)
        twice = [i for i, c in seen.items() if c > 1]
        self.assertEqual(twice, [])
        original = {str(i) for i in range(1, DOCS + 1)}
        self.assertEqual(original - set(seen), set())  # none missed
        # the documents of the scroll's view: the 100,000 and the new ones
        # refreshed before it began -- new-1 .. new-K, K at least what was
        # acknowledged before the scan; the writer went on past K meanwhile
        self.assertTrue(all(i in original or i.startswith("new-") for i in seen))
        new = sorted(int(i[4:]) for i in seen if i.startswith("new-"))
        self.assertEqual(new, list(range(1, len(new) + 1)))
        self.assertGreaterEqual(len(new), before)
        self.assertGreater(written[0], len(new))
        # the scan cleared its scroll
        st, s, _ = self.req("GET", "/scan/_stats/search")
        self.assertEqual(s["_all"]["total"]["search"]["open_contexts"], 0)
        self.assertGreaterEqual(s["_all"]["total"]["search"]["scroll_total"], 1)
        self.assertEqual(self.req("GET", "/scan/_count")[1]["count"], DOCS + written[0])

    def test_client_apis(self):
        """The client's own calls for the same APIs parse our answers."""
        es = Elasticsearch("http://127.0.0.1:%d" % self.srv.port)
        helpers.bulk(es, ({"_index": "capi", "_id": str(i), "n": i, "g": i % 3}
                          for i in range(100)), refresh=True)
        r = es.search(index="capi", scroll="30s", size=30, body={"sort": ["_doc"]})
        ids = [h["_id"] for h in r["hits"]["hits"]]
        while r["hits"]["hits"]:
            r = es.scroll(scroll_id=r["_scroll_id"], scroll="30s")
            ids += [h["_id"] for h in r["hits"]["hits"]]
        self.assertEqual(ids, [str(i) for i in range(100)])
        self.assertEqual(es.clear_scroll(scroll_id="_all")["num_freed"], 1)
        with self.assertRaises(elasticsearch.NotFoundError):
            es.scroll(scroll_id=r["_scroll_id"], scroll="30s")
        pit = es.open_point_in_time(index="capi", keep_alive="1m")["id"]
        r = es.search(body={"pit": {"id": pit, "keep_alive": "1m"}, "size": 10,
                            "sort": [{"g": "asc"}], "search_after": [0, 40]})
        self.assertEqual(r["hits"]["hits"][0]["sort"], [0, 42])
        self.assertEqual(es.close_point_in_time(body={"id": pit})["num_freed"], 1)
        r = es.delete_by_query(index="capi", body={"query": {"term": {"g": 0}}},
                               refresh=True)
        self.assertEqual((r["deleted"], r["failures"]), (34, []))
        r = es.update_by_query(index="capi", wait_for_completion=False, refresh=True)
        t = es.tasks.get(task_id=r["task"], wait_for_completion=True)
        self.assertEqual((t["completed"], t["response"]["updated"]), (True, 66))
        self.assertEqual(es.count(index="capi")["count"], 66)


if __name__ == "__main__":
    unittest.main()
