"""The disk watermarks on a real small disk: a 60 MiB tmpfs holds the data
directory, a 28 MiB ballast file and, later, a filler that takes the last
byte.  With Elasticsearch's default watermarks (85/90/95%):

- a `_bulk` load is refused at the flood stage, before the disk is full,
  with Elasticsearch's 429 cluster_block_exception per item, and every index
  gets index.blocks.read_only_allow_delete;
- deleting an index works at the flood stage and at 0 bytes free (the
  reserve file gives the catalogue room);
- once the filler and the ballast go, the block is released by itself,
  every acknowledged document is searchable (the exact count) and writes
  resume, with no restart;
- the catalogue file shrinks when an index whose documents it holds (in
  the translog) is deleted.

Needs root for mount(8); when mount is not permitted the module exits with
SKIP_CODE (ctest's SKIP_RETURN_CODE) and says why.  Also the unit checks of
the watermark settings through `_cluster/settings`."""
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import unittest

from fdsserver import Server

MIB = 1 << 20
SKIP_CODE = 77
TMPFS_SIZE = "60m"
BALLAST = 28 * MIB  # leaves ~30 MiB: a load of a few seconds fills it
DOCS_PER_BULK = 500
MAX_BULKS = 1000  # ~90 MiB of documents: more than the disk holds
WAIT_S = 20       # for a block to come or go (a sample at most every 1 s)
FLOOD_REASON = ("index [%s] blocked by: [TOO_MANY_REQUESTS/12/disk usage "
                "exceeded flood-stage watermark, index has "
                "read-only-allow-delete block];")
WM = "cluster.routing.allocation.disk.watermark."


def free_bytes(path):
    v = os.statvfs(path)
    return v.f_bavail * v.f_frsize


def catalogue_bytes(data):
    return sum(os.path.getsize(os.path.join(data, f)) for f in os.listdir(data)
               if f.startswith("catalog.sqlite"))


def mount_tmpfs():
    """(top folder, mount point), or (None, why) when mount is refused."""
    top = tempfile.mkdtemp(prefix="fds-wm-")
    mnt = os.path.join(top, "mnt")
    os.mkdir(mnt)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=" + TMPFS_SIZE, "tmpfs", mnt],
                       capture_output=True, text=True)
    if r.returncode:
        os.rmdir(mnt)
        os.rmdir(top)
        return None, (r.stderr.strip() or "mount exited with %d" % r.returncode)
    return top, mnt


def doc(rng, i):
    return {"@timestamp": "2024-01-01T00:%02d:%02d+00:00" % (i // 60 % 60, i % 60),
            "remote_addr": "10.%d.%d.%d" % (rng.randrange(256), rng.randrange(256),
                                            rng.randrange(256)),
            "url": "/api/items/%d?q=%x" % (rng.randrange(100000), rng.getrandbits(40)),
            "status": rng.choice([200, 200, 301, 404, 500]),
            "user_agent": "Mozilla/5.0 (X11; Linux x86_64) build/%d" % rng.randrange(1000),
            "request_id": "%032x" % rng.getrandbits(128)}


class DiskWatermarks(unittest.TestCase):
    def setUp(self):
        self.top, self.mnt = mount_tmpfs()
        if self.top is None:
            self.skipTest("cannot mount a tmpfs: %s" % self.mnt)
        with open(os.path.join(self.mnt, "ballast"), "wb") as f:
            f.write(b"\0" * BALLAST)
        self.srv = Server(data_dir=self.mnt)
        self.srv.start()

    def tearDown(self):
        if self.top is None:
            return
        try:
            self.srv.stop()
        finally:
            subprocess.run(["umount", self.mnt])
            for f in ("mnt.log", "mnt.port"):
                try:
                    os.unlink(os.path.join(self.top, f))
                except OSError:
                    pass
            os.rmdir(self.mnt)
            os.rmdir(self.top)

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def block_of(self, index):
        st, b, _ = self.req("GET", "/%s/_settings?flat_settings=true" % index)
        self.assertEqual(st, 200)
        return b[index]["settings"].get("index.blocks.read_only_allow_delete")

    def wait_block(self, index, want):
        deadline = time.time() + WAIT_S
        while time.time() < deadline:
            if self.block_of(index) == want:
                return
            time.sleep(0.1)
        self.fail("index.blocks.read_only_allow_delete of [%s] never became %s"
                  % (index, want))

    def fill_to_zero(self):
        """Take every free byte (another file each call)."""
        self.fillers = getattr(self, "fillers", [])
        path = os.path.join(self.mnt, "filler%d" % len(self.fillers))
        self.fillers.append(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        for chunk in (1 << 16, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
        os.close(fd)

    def load(self, index):
        """Bulk until a whole request is refused: the acknowledged ids."""
        rng = random.Random(7)
        acked, n = [], 0
        for _ in range(MAX_BULKS):
            lines = []
            for _ in range(DOCS_PER_BULK):
                lines.append('{"index":{"_id":"%d"}}\n%s\n' % (n, json.dumps(doc(rng, n))))
                n += 1
            st, b, _ = self.req("POST", "/%s/_bulk" % index, "".join(lines),
                                headers={"Content-Type": "application/x-ndjson"})
            self.assertEqual(st, 200, b)
            refused = 0
            for it in b["items"]:
                res = it["index"]
                if res["status"] == 201:
                    acked.append(res["_id"])
                    continue
                self.assertEqual(res["status"], 429, res)
                self.assertEqual(res["error"]["type"], "cluster_block_exception")
                self.assertEqual(res["error"]["reason"], FLOOD_REASON % index)
                refused += 1
            if refused == len(b["items"]):
                return acked
        self.fail("%d bulks were all taken: no flood stage" % MAX_BULKS)

    def test_flood_stage_delete_and_recovery(self):
        for ix in ("logs", "other", "third"):
            st, _, _ = self.req("PUT", "/" + ix, {"settings": {"number_of_replicas": 0}})
            self.assertEqual(st, 200)
        for ix in ("other", "third"):
            st, b, _ = self.req("PUT", "/%s/_doc/1?refresh=true" % ix, {"n": 1})
            self.assertEqual(st, 201, b)

        acked = self.load("logs")
        self.assertGreater(len(acked), 10000)
        # deletes stay allowed at the flood stage
        self.assertEqual(self.req("DELETE", "/third")[0], 200)

        # the disk full from here on: a write is refused at the latest after
        # the next sample (at most a second); those that passed count
        self.fill_to_zero()
        deadline = time.time() + WAIT_S
        while True:
            i = len(acked)
            st, b, _ = self.req("PUT", "/logs/_doc/s%d" % i, {"n": i})
            if st != 201 or time.time() > deadline:
                break
            acked.append("s%d" % i)
            time.sleep(0.05)
        self.assertEqual((st, b["error"]["type"], b["error"]["reason"], b["status"]),
                         (429, "cluster_block_exception", FLOOD_REASON % "logs", 429))
        self.fill_to_zero()
        for ix in ("logs", "other"):
            self.wait_block(ix, "true")
        st, b, _ = self.req("GET", "/_cat/allocation?format=json&bytes=b")
        self.assertEqual(st, 200)
        used = 60 * MIB - free_bytes(self.mnt)
        self.assertEqual(int(b[0]["disk.total"]), 60 * MIB)
        self.assertLess(abs(int(b[0]["disk.used"]) - used), 4 * MIB)
        self.assertEqual(int(b[0]["disk.percent"]),
                         int(b[0]["disk.used"]) * 100 // (60 * MIB))
        self.assertEqual(int(b[0]["disk.avail"]) + int(b[0]["disk.used"]), 60 * MIB)

        # and at 0 bytes free
        self.fill_to_zero()
        self.assertEqual(free_bytes(self.mnt), 0)
        st, b, _ = self.req("DELETE", "/other")
        self.assertEqual(st, 200, b)
        self.assertEqual(self.req("HEAD", "/other")[0], 404)

        # space is back: no restart, no setting
        for f in self.fillers + [os.path.join(self.mnt, "ballast")]:
            os.unlink(f)
        self.wait_block("logs", None)  # released: the setting is gone
        deadline = time.time() + WAIT_S
        count = None
        while time.time() < deadline:
            st, _, _ = self.req("POST", "/logs/_refresh")
            count = self.req("GET", "/logs/_count")[1]["count"]
            if st == 200 and count == len(acked):
                break
            time.sleep(0.2)
        self.assertEqual(count, len(acked))
        for i in (acked[0], acked[len(acked) // 2], acked[-1]):
            self.assertEqual(self.req("GET", "/logs/_doc/%s" % i)[0], 200)
        st, b, _ = self.req("PUT", "/logs/_doc/after?refresh=true", {"n": 2})
        self.assertEqual((st, b["result"]), (201, "created"))
        self.assertEqual(self.req("GET", "/logs/_count")[1]["count"], len(acked) + 1)

        # the catalogue gives an index's pages back: one whose documents
        # are all in the translog (no refresh), deleted
        st, _, _ = self.req("PUT", "/tl", {"settings": {"number_of_replicas": 0,
                                                       "refresh_interval": "-1"}})
        self.assertEqual(st, 200)
        rng = random.Random(8)
        for k in range(8):
            body = "".join('{"index":{}}\n%s\n' % json.dumps(doc(rng, i))
                           for i in range(DOCS_PER_BULK))
            st, b, _ = self.req("POST", "/tl/_bulk", body,
                                headers={"Content-Type": "application/x-ndjson"})
            self.assertEqual((st, b["errors"]), (200, False))
        before = catalogue_bytes(self.mnt)
        self.assertGreater(before, 1 * MIB)
        self.assertEqual(self.req("DELETE", "/tl")[0], 200)
        after = catalogue_bytes(self.mnt)
        self.assertLess(after, before / 4, (before, after))

    def test_fs_stats(self):
        st, b, _ = self.req("GET", "/_nodes/stats/fs")
        self.assertEqual(st, 200)
        fs = list(b["nodes"].values())[0]["fs"]
        self.assertEqual(fs["total"]["total_in_bytes"], 60 * MIB)
        self.assertEqual(len(fs["data"]), 1)
        d = fs["data"][0]
        self.assertEqual(d["type"], "tmpfs")
        self.assertEqual(os.path.realpath(d["path"]), os.path.realpath(self.mnt))
        self.assertEqual(d["total_in_bytes"], 60 * MIB)
        self.assertLessEqual(d["available_in_bytes"], 48 * MIB)

    def test_byte_watermarks_and_release(self):
        """Byte watermarks: a flood stage above what is free blocks at once;
        lowering it releases the block."""
        self.assertEqual(self.req("PUT", "/b", {"settings": {"number_of_replicas": 0}})[0], 200)
        free = free_bytes(self.mnt)
        body = {"transient": {WM + "low": "%db" % (free + 3 * MIB),
                              WM + "high": "%db" % (free + 2 * MIB),
                              WM + "flood_stage": "%db" % (free + MIB)}}
        st, b, _ = self.req("PUT", "/_cluster/settings", body)
        self.assertEqual(st, 200, b)
        st, b, _ = self.req("PUT", "/b/_doc/1", {"n": 1})
        self.assertEqual((st, b["error"]["reason"]), (429, FLOOD_REASON % "b"))
        self.wait_block("b", "true")
        st, b, _ = self.req("PUT", "/_cluster/settings",
                            {"transient": {WM + "low": None, WM + "high": None,
                                           WM + "flood_stage": None}})
        self.assertEqual(st, 200, b)
        self.wait_block("b", None)
        self.assertEqual(self.req("PUT", "/b/_doc/1", {"n": 1})[0], 201)


class WatermarkSettings(unittest.TestCase):
    """_cluster/settings for the watermarks: ES's defaults, its 400s, and
    persistence (no tmpfs needed)."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def put(self, body):
        return self.srv.request("PUT", "/_cluster/settings", body)

    def assertRefused(self, body, reason):
        st, b, _ = self.put(body)
        self.assertEqual((st, b["error"]["type"], b["error"]["reason"]),
                         (400, "illegal_argument_exception", reason))

    def test_defaults(self):
        st, b, _ = self.srv.request("GET", "/_cluster/settings?include_defaults=true"
                                           "&flat_settings=true")
        d = b["defaults"]
        self.assertEqual((d[WM + "low"], d[WM + "high"], d[WM + "flood_stage"]),
                         ("85%", "90%", "95%"))
        self.assertEqual(d[WM + "flood_stage.max_headroom"], "100GB")
        self.assertEqual(d["cluster.routing.allocation.disk.threshold_enabled"], "true")
        self.assertEqual(d["cluster.info.update.interval"], "30s")

    def test_refused(self):
        self.assertRefused({"persistent": {WM + "low": "abc"}},
                           "unable to parse [%slow=abc] as either percentage or bytes" % WM)
        self.assertRefused({"persistent": {WM + "high": "101%"}},
                           "unable to parse [%shigh=101%%] as either percentage or bytes"
                           % WM)
        self.assertRefused({"persistent": {WM + "low": "92%"}},
                           "low disk watermark [92%] more than high disk watermark [90%]")
        self.assertRefused({"transient": {WM + "flood_stage": "0.8"}},
                           "high disk watermark [90%] more than flood stage disk "
                           "watermark [0.8]")
        self.assertRefused({"transient": {WM + "low": "10gb"}},
                           "unable to consistently parse [%slow=10gb], [%shigh=90%%], and "
                           "[%sflood_stage=95%%] as percentage or bytes" % (WM, WM, WM))
        self.assertRefused({"transient": {WM + "low": "1gb", WM + "high": "2gb",
                                          WM + "flood_stage": "500mb"}},
                           "low disk watermark [1gb] less than high disk watermark [2gb]")
        self.assertRefused({"transient": {"cluster.info.update.interval": "5s"}},
                           "failed to parse value [5s] for setting "
                           "[cluster.info.update.interval], must be >= [10s]")
        self.assertRefused({"transient": {"cluster.routing.allocation.disk.threshold_enabled":
                                          "yes"}},
                           "Failed to parse value [yes] as only [true] or [false] are allowed.")
        # nothing of a refused request applied
        st, b, _ = self.srv.request("GET", "/_cluster/settings")
        self.assertEqual(b, {"persistent": {}, "transient": {}})

    def test_persistent_survives_restart(self):
        st, b, _ = self.put({"persistent": {"cluster": {"routing": {"allocation": {"disk": {
            "watermark": {"low": "0.5", "high": "60%", "flood_stage": "99%"}}}}}}})
        self.assertEqual(st, 200, b)
        try:
            self.srv.stop()
            self.srv.start()
            st, b, _ = self.srv.request("GET", "/_cluster/settings?flat_settings=true")
            self.assertEqual(b["persistent"], {WM + "low": "0.5", WM + "high": "60%",
                                               WM + "flood_stage": "99%"})
        finally:
            self.put({"persistent": {WM + "low": None, WM + "high": None,
                                     WM + "flood_stage": None}})


if __name__ == "__main__":
    top, why = mount_tmpfs()
    if top is None:
        print("SKIP: the disk watermark tests need a 60 MiB tmpfs, and mount "
              "is not permitted here: %s" % why)
        sys.exit(SKIP_CODE)
    subprocess.run(["umount", why])
    os.rmdir(why)
    os.rmdir(top)
    unittest.main(verbosity=2)
