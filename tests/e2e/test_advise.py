"""`fieldstore advise` against the server it advises: every settings body
it offers is one `PUT /{index}` accepts with the values it names, and the
stored-fields bytes it measured are the ones an index of the same documents
holds on disk (`_stats` stored_fields_in_bytes), so its projections are
about the store, not about a model of it."""
import json
import os
import subprocess
import tempfile
import unittest

from fdsserver import DATASET, SERVER, ServerTestCase, convert

DOCS = 2000


class Advise(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="fds-advise-")
        cls.head = os.path.join(cls.tmp, "head.log")
        with open(DATASET, "rb") as f, open(cls.head, "wb") as o:
            for i, line in enumerate(f):
                if i == DOCS:
                    break
                o.write(line)
        # --time is wall time: 20 s lets the first round reach the four
        # index.codec rows on a loaded machine (training and digesting the
        # 256 KiB dictionary come first).
        p = subprocess.run([SERVER, "advise", "--time", "20", "--quiet", "--out", cls.tmp,
                            cls.head], capture_output=True, text=True, timeout=600)
        if p.returncode:
            raise AssertionError("advise exit %d: %s" % (p.returncode, p.stderr))
        cls.advice = json.load(open(os.path.join(cls.tmp, "advice.json")))
        cls.docs = convert("json", src=cls.head).decode().splitlines()

    def flat(self, index):
        st, b, _ = self.req("GET", "/%s/_settings?flat_settings=true&include_defaults=true"
                            % index)
        self.assertEqual(st, 200, b)
        out = dict(b[index].get("defaults", {}))
        out.update(b[index]["settings"])
        return out

    def test_every_settings_body_is_accepted(self):
        rows = [r for r in self.advice["rows"] if r["settable"]]
        self.assertGreater(len(rows), 8)
        for i, r in enumerate(rows):
            name = "adv-body-%d" % i
            st, b, _ = self.req("PUT", "/" + name, r["settings"])
            self.assertEqual(st, 200, (r["name"], b))
            s = self.flat(name)
            self.assertEqual(s["index.codec"], r["codec"], r["name"])
            want = r["settings"]["settings"]
            if "index.compression.zstd.level" in want:
                self.assertEqual(s["index.compression.zstd.level"], str(r["level"]))
            if "index.codec.block_size" in want:
                self.assertEqual(s["index.codec.block_size"], "%db" % r["block_size"])
                self.assertEqual(s["index.codec.max_docs_per_block"],
                                 str(r["max_docs_per_block"]))
            if "index.codec.dict_size" in want:
                self.assertEqual(s["index.codec.dict_size"], "%db" % r["dict_size"])
            self.req("DELETE", "/" + name)

    def test_measured_bytes_are_the_stores(self):
        """The same documents indexed in one refresh and force-merged: the
        segment's stored fields hold advise's blocks and their 16-byte index
        entries, plus the file's header, footer and per-document columns."""
        rows = {r["name"]: r for r in self.advice["rows"] if r["measured"]}
        bulk = "".join('{"index":{"_id":"%d"}}\n%s\n' % (i + 1, d)
                       for i, d in enumerate(self.docs))
        for name in ("ZSTD level 3", "best_compression", "lucene_best_compression",
                     "default (LZ4)"):
            r = rows[name]
            index = "adv-" + r["codec"].lower()
            body = dict(r["settings"])
            body["settings"] = dict(body["settings"], **{"index.refresh_interval": "-1"})
            st, b, _ = self.req("PUT", "/" + index, body)
            self.assertEqual(st, 200, b)
            st, b, _ = self.req("POST", "/%s/_bulk?refresh=true" % index, bulk)
            self.assertEqual(st, 200, b)
            self.assertFalse(b["errors"])
            self.req("POST", "/%s/_forcemerge?max_num_segments=1" % index)
            st, b, _ = self.req("GET", "/%s/_stats/store" % index)
            stored = b["_all"]["primaries"]["store"]["stored_fields_in_bytes"]
            blocks = r["stored_bytes"] + 16 * r["blocks"]
            extra = stored - blocks
            print("\n%s: advise %d block bytes, _stats %d stored-fields bytes"
                  % (name, blocks, stored))
            # the file's own bytes: 8 header + 64 footer + two packed columns
            # (_version, _seq_no) of at most 12 + 8 bytes a document
            self.assertGreaterEqual(extra, 8 + 64 + 2 * 12, name)
            self.assertLessEqual(extra, 8 + 64 + 2 * 12 + 8 * DOCS, name)


if __name__ == "__main__":
    unittest.main()
