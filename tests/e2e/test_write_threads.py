"""Writes run on write threads, not on the HTTP thread that read them: a
_bulk request does not hold up the other connections of that thread
(server.c, "Write threads").

libmicrohttpd gives each connection one HTTP thread for its life, and a
thread serves its connections one request at a time; a _bulk run there
held up every search on a connection sharing the thread for as long as it
ran (140-300 ms stalls beside a _bulk loop, docs/benchmarks.md).

With --threads 1 the server has a single HTTP thread, so a request answered
while a _bulk runs proves the bulk is not on it.  The bulk's items alternate
between two indices: each item is a batch of its own (its own translog
commit) and a realtime GET finds it as soon as it is written.  A GET that
finds the first item, followed by one that does not find the last, were both
answered while the bulk ran; with the bulk on the only HTTP thread, every
GET comes before it (neither found) or after it (both found).  No timing is
asserted: the test waits for the bulk to end either way."""
import json
import os
import threading
import unittest

from fdsserver import Server

ITEMS = 2500  # per index; each its own commit (an fsync), so the bulk runs a while


class WriteThreads(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.srv = Server(extra_args=["--threads", "1"]).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def test_gets_answered_while_bulk_runs(self):
        for ix in ("wa", "wb"):
            st, b, _ = self.req("PUT", "/" + ix, {"settings": {
                "index.refresh_interval": "-1"}})
            self.assertEqual(st, 200, b)
        lines = []
        for i in range(ITEMS):
            for ix in ("wa", "wb"):
                lines.append(json.dumps({"index": {"_index": ix, "_id": str(i)}}))
                lines.append(json.dumps({"n": i, "method": "GET"}))
        body = "\n".join(lines) + "\n"
        answer = {}

        def bulk():
            answer["bulk"] = self.req("POST", "/_bulk", body,
                                      headers={"Content-Type": "application/x-ndjson"})

        t = threading.Thread(target=bulk)
        t.start()
        seen_mid, gets = False, 0
        while t.is_alive() and not seen_mid:
            st, _, _ = self.req("GET", "/wa/_doc/0")
            gets += 1
            if st != 200:
                continue
            st, _, _ = self.req("GET", "/wa/_doc/%d" % (ITEMS - 1))
            seen_mid = st == 404
        t.join()
        st, b, _ = answer["bulk"]
        self.assertEqual(st, 200)
        self.assertFalse(b["errors"])
        self.assertEqual(len(b["items"]), 2 * ITEMS)
        self.assertTrue(seen_mid, "no GET was answered while the _bulk ran "
                        "(%d GETs)" % gets)
        # and the store is whole afterwards
        for ix in ("wa", "wb"):
            st, b, _ = self.req("POST", "/%s/_refresh" % ix)
            self.assertEqual(st, 200, b)
            st, b, _ = self.req("GET", "/%s/_count" % ix)
            self.assertEqual(b["count"], ITEMS)

    def test_write_answers_keep_their_shape(self):
        """A write answered from a write thread: status, headers and body
        as before, filter_path and pretty included."""
        st, b, _ = self.req("PUT", "/wc/_doc/1?refresh=true", {"x": 1})
        self.assertEqual(st, 201, b)
        self.assertEqual(b["result"], "created")
        st, b, raw = self.req("POST", "/wc/_doc/2?pretty&filter_path=result", {"x": 2})
        self.assertEqual(st, 201)
        self.assertEqual(raw.decode(), '{\n  "result" : "created"\n}\n')
        st, b, _ = self.req("DELETE", "/wc/_doc/1")
        self.assertEqual((st, b["result"]), (200, "deleted"))
        st, b, _ = self.req("DELETE", "/wc/_doc/1")
        self.assertEqual((st, b["result"]), (404, "not_found"))
        st, b, _ = self.req("GET", "/wc/_bulk")  # 405 as before: no write ran
        self.assertEqual(st, 405, b)

    def thread_nices(self):
        """{comm: [nice, ...]} over the server's threads (proc(5): nice is
        the 19th field of a task's stat)."""
        out = {}
        base = "/proc/%d/task" % self.srv.proc.pid
        for tid in os.listdir(base):
            try:
                with open("%s/%s/comm" % (base, tid)) as f:
                    comm = f.read().strip()
                with open("%s/%s/stat" % (base, tid)) as f:
                    stat = f.read()
            except OSError:
                continue  # the thread ended meanwhile
            fields = stat[stat.rindex(")") + 2:].split()
            out.setdefault(comm, []).append(int(fields[16]))
        return out

    def test_write_threads_run_below_the_http_threads(self):
        """The write threads run at nice 10 (server.c, FDS_WRITE_NICE), as
        the flusher does, so that a _bulk loop leaves the CPU to searches;
        the threads that answer searches (libmicrohttpd's, named MHD-*)
        and the main thread keep the process's own."""
        st, b, _ = self.req("PUT", "/wn/_doc/1", {"x": 1})  # a write ran
        self.assertIn(st, (200, 201), b)
        own = os.getpriority(os.PRIO_PROCESS, self.srv.proc.pid)
        with open("/proc/%d/comm" % self.srv.proc.pid) as f:
            main = f.read().strip()
        nices = self.thread_nices()
        self.assertIn("fds-write", nices, nices)
        self.assertEqual(set(nices["fds-write"]), {max(own, 10)}, nices)
        http = [n for c, ns in nices.items() if c.startswith("MHD-") for n in ns]
        self.assertTrue(http, nices)
        self.assertEqual(set(http) | set(nices[main]), {own}, nices)


if __name__ == "__main__":
    unittest.main()
