"""A disk running out of space: below the free-space floor (--min-free-disk)
writes get Elasticsearch's flood-stage cluster_block_exception (429), within
a second (the write path samples the disk at most that often), for a single
document and per item of a _bulk, searches and GETs keep serving the
committed documents, and writes resume by themselves once space is freed.
The 60 MiB tmpfs test of the watermarks is test_disk_watermarks.py.

The disk is filled for real: the server's floor is set FILL_MARGIN below
the free space at start, then a file of twice that is allocated on the same
file system (posix_fallocate, no data written) and removed again."""
import os
import time
import unittest

from fdsserver import Server

GIB = 1 << 30
FILL_MARGIN = 2 * GIB  # well above what other processes change in seconds
BLOCK_REASON = ("index [df] blocked by: [TOO_MANY_REQUESTS/12/disk usage "
                "exceeded flood-stage watermark, index has "
                "read-only-allow-delete block];")


def free_bytes(path):
    v = os.statvfs(path)
    return v.f_bavail * v.f_frsize


class DiskFull(unittest.TestCase):
    def setUp(self):
        self.probe = Server()  # for its data directory only
        self.filler = self.probe.data.rstrip("/") + ".fill"
        free = free_bytes(self.probe.data)
        if free < 3 * FILL_MARGIN:
            self.skipTest("needs %d GiB free" % (3 * FILL_MARGIN // GIB))
        self.srv = Server(data_dir=self.probe.data,
                          extra_args=["--min-free-disk", str(free - FILL_MARGIN)])
        self.srv.start()

    def tearDown(self):
        if os.path.exists(self.filler):
            os.unlink(self.filler)
        self.srv.stop()
        self.probe.cleanup()

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def fill(self):
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.posix_fallocate(fd, 0, 2 * FILL_MARGIN)
        except OSError as e:
            os.close(fd)
            os.unlink(self.filler)
            self.skipTest("cannot allocate the filler: %s" % e)
        os.close(fd)

    def test_blocked_then_recovers(self):
        self.assertEqual(self.req("PUT", "/df", {})[0], 200)
        bulk = "".join('{"index":{"_id":"%d"}}\n{"n":%d}\n' % (i, i) for i in range(100))
        st, b, _ = self.req("POST", "/df/_bulk?refresh=true", bulk)
        self.assertEqual((st, b["errors"]), (200, False))

        self.fill()
        # the disk is sampled before a write batch at most every second
        # (src/store/disk.c): a write or two may pass before the block
        slipped, deadline = 0, time.time() + 10
        while True:
            st, b, _ = self.req("PUT", "/df/_doc/s%d" % slipped, {"n": -1})
            if st != 201 or time.time() > deadline:
                break
            slipped += 1
            time.sleep(0.05)
        self.assertEqual(st, 429)
        self.assertEqual(b["error"]["type"], "cluster_block_exception")
        self.assertEqual(b["error"]["reason"], BLOCK_REASON)
        self.assertEqual(b["status"], 429)
        st, b, _ = self.req("POST", "/df/_bulk", '{"index":{"_id":"y"}}\n{"n":1}\n'
                                                 '{"delete":{"_id":"5"}}\n')
        self.assertEqual((st, b["errors"]), (200, True))
        for item in b["items"]:
            res = list(item.values())[0]
            self.assertEqual(res["status"], 429)
            self.assertEqual(res["error"]["type"], "cluster_block_exception")
            self.assertEqual(res["error"]["reason"], BLOCK_REASON)
        # reads serve what is committed
        self.req("POST", "/df/_refresh")
        self.assertEqual(self.req("GET", "/df/_count")[1]["count"], 100 + slipped)
        st, b, _ = self.req("GET", "/df/_doc/5")
        self.assertEqual((st, b["_source"]), (200, {"n": 5}))
        st, b, _ = self.req("POST", "/df/_search", {"query": {"match_all": {}}, "size": 3})
        self.assertEqual((st, b["hits"]["total"]["value"]), (200, 100 + slipped))
        self.assertEqual(self.req("GET", "/df/_doc/x")[0], 404)

        os.unlink(self.filler)  # space is back: no restart, no setting
        deadline = time.time() + 10  # the next sample, and the block released
        while True:
            st, b, _ = self.req("PUT", "/df/_doc/x?refresh=true", {"n": -1})
            if st != 429 or time.time() > deadline:
                break
            time.sleep(0.1)
        self.assertEqual((st, b["result"]), (201, "created"))
        self.assertEqual(self.req("GET", "/df/_count")[1]["count"], 101 + slipped)


if __name__ == "__main__":
    unittest.main()
