"""Crash test (DESIGN.md §4): kill -9 the server at random moments during
bulk indexing, refreshes and force-merges, restart it, and check that every
acknowledged document is there with its exact source, that nothing
half-written is visible, and that no orphan segment file remains.

FDS_CRASH_ROUNDS sets the number of rounds (default 20) of the one-shard
index; a 3-shard index (documents routed to shards, one segment per shard a
refresh, force-merges per shard) runs a quarter as many.  The figures of
each run (acknowledged vs found) are printed and written to
results/crash_test.json (crash_test_shards.json) when FDS_RESULTS_DIR is
set.
"""
import http.client
import json
import os
import random
import threading
import time
import unittest

from fdsserver import Server, convert

ROUNDS = int(os.environ.get("FDS_CRASH_ROUNDS", "20"))
SHARDED_SHARDS = 3
SHARDED_ROUNDS = max(2, ROUNDS // 4)
BULK_DOCS = 250
ORPHAN_CHECKS = 20   # looks at the folder, ORPHAN_WAIT_S apart
ORPHAN_WAIT_S = 0.5
SEED = 20261129


class Client:
    """A keep-alive connection; any failure counts as 'not acknowledged'."""

    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def req(self, method, path, body=None):
        self.c.request(method, path, body=body,
                       headers={"Content-Type": "application/json"})
        r = self.c.getresponse()
        return r.status, r.read()


class CrashTest(unittest.TestCase):
    def test_kill9_rounds(self):
        self.rounds(1, ROUNDS, "crash_test.json")

    def test_kill9_rounds_shards(self):
        self.rounds(SHARDED_SHARDS, SHARDED_ROUNDS, "crash_test_shards.json")

    def rounds(self, shards, nrounds, results):
        rng = random.Random(SEED + shards)
        lines = convert("json").decode().splitlines()
        srv = Server()
        acked = {}          # id -> exact source acknowledged
        checked = set()     # ids verified after an earlier restart
        totals = {"rounds": 0, "acknowledged": 0, "checked": 0, "found": 0, "missing": 0,
                  "wrong_source": 0, "orphan_files": 0, "kills_during_merge": 0}
        try:
            srv.start()
            st, body, _ = srv.request("PUT", "/crash", {"settings": {
                "index.codec": "ZSTD", "index.refresh_interval": "200ms",
                "index.number_of_shards": shards}})
            self.assertEqual(st, 200, body)
            next_doc = 0
            for rnd in range(nrounds):
                stop = threading.Event()
                merging = threading.Event()

                def writer(start):
                    nonlocal next_doc
                    try:
                        cl = Client(srv.port)
                        n = start
                        while not stop.is_set():
                            batch = []
                            for _ in range(BULK_DOCS):
                                doc_id = "d%d" % n
                                src = lines[n % len(lines)]
                                batch.append((doc_id, src))
                                n += 1
                            body = "".join('{"index":{"_id":"%s"}}\n%s\n' % b
                                           for b in batch).encode()
                            st, raw = cl.req("POST", "/crash/_bulk", body)
                            if st != 200:
                                continue
                            items = json.loads(raw)["items"]
                            for (doc_id, src), it in zip(batch, items):
                                if it["index"]["status"] in (200, 201):
                                    acked[doc_id] = src
                            next_doc = n
                    except Exception:
                        pass

                def merger():
                    try:
                        cl = Client(srv.port)
                        while not stop.is_set():
                            time.sleep(rng.uniform(0.05, 0.4))
                            merging.set()
                            cl.req("POST", "/crash/_forcemerge?max_num_segments=1")
                            merging.clear()
                    except Exception:
                        pass

                tw = threading.Thread(target=writer, args=(next_doc,))
                tm = threading.Thread(target=merger)
                tw.start()
                tm.start()
                time.sleep(rng.uniform(0.3, 1.5))
                if merging.is_set():
                    totals["kills_during_merge"] += 1
                srv.kill9()
                stop.set()
                tw.join()
                tm.join()
                next_doc += BULK_DOCS  # ids of an unacknowledged batch are not reused

                srv.start()
                cl = Client(srv.port)
                found = missing = wrong = 0
                # every document acknowledged in this round, and a sample of
                # the earlier ones (all of them were checked in their round)
                fresh = [k for k in acked if k not in checked]
                older = rng.sample(sorted(checked), min(len(checked), 2000))
                for doc_id in fresh + older:
                    src = acked[doc_id]
                    st, raw = cl.req("GET", "/crash/_source/" + doc_id)
                    if st != 200:
                        missing += 1
                    elif raw.decode() != src:
                        wrong += 1
                    else:
                        found += 1
                checked.update(fresh)
                # nothing half-written: every visible doc is a whole, known source
                st, raw = cl.req("POST", "/crash/_refresh")
                st, raw = cl.req("GET", "/crash/_count")
                visible = json.loads(raw)["count"]
                self.assertGreaterEqual(visible, len(acked))
                self.assertLessEqual(visible, next_doc)
                st, raw = cl.req("POST", "/crash/_search",
                                 json.dumps({"query": {"match_all": {}}, "size": 200,
                                             "from": rng.randrange(0, max(1, min(len(acked), 10000) - 200))}))
                self.assertEqual(st, 200, raw[:300])
                for h in json.loads(raw)["hits"]["hits"]:
                    n = int(h["_id"][1:])
                    self.assertEqual(h["_source"], json.loads(lines[n % len(lines)]))
                # no orphan files: every file is a segment the index lists
                st, raw = cl.req("GET", "/crash/_settings?flat_settings=true")
                uuid = json.loads(raw)["crash"]["settings"]["index.uuid"]
                # (a merge the restart found due -- more than 10 segments --
                # writes its files before it registers them: an orphan is
                # one that stays)
                for _ in range(ORPHAN_CHECKS):
                    st, raw = cl.req("GET", "/_cat/segments/crash?format=json")
                    segs = {s["segment"] for s in json.loads(raw)}
                    files = os.listdir(os.path.join(srv.data, "indices", uuid))
                    orphans = [f for f in files if f.rsplit(".", 1)[0] not in segs]
                    if not orphans:
                        break
                    time.sleep(ORPHAN_WAIT_S)
                totals["rounds"] += 1
                totals["acknowledged"] = len(acked)
                totals["found"] += found
                totals["visible_after_restart"] = visible
                totals["checked"] += len(fresh) + len(older)
                totals["missing"] += missing
                totals["wrong_source"] += wrong
                totals["orphan_files"] += len(orphans)
                print("round %2d: acknowledged %6d visible %6d checked %5d found %5d "
                      "missing %d wrong %d segments %d orphans %d" % (
                          rnd + 1, len(acked), visible, len(fresh) + len(older),
                          found, missing, wrong, len(segs), len(orphans)),
                      flush=True)
                self.assertEqual(missing, 0)
                self.assertEqual(wrong, 0)
                self.assertEqual(orphans, [])
        finally:
            srv.cleanup()
            out = os.environ.get("FDS_RESULTS_DIR")
            if out:
                os.makedirs(out, exist_ok=True)
                with open(os.path.join(out, results), "w") as f:
                    json.dump(totals, f, indent=2)
            print("crash test totals:", json.dumps(totals), flush=True)
        self.assertGreater(totals["acknowledged"], 0)


if __name__ == "__main__":
    unittest.main()
