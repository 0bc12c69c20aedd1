"""The codec settings of the seed article's commands, with Easysearch's names
(index.compression.zstd.jni / .dict / .level), their kinds, and the
compression level refused for codecs that have none."""
import json
import unittest

from fdsserver import ServerTestCase


class CodecSettings(ServerTestCase):

    def flat(self, index, defaults=True):
        st, b, _ = self.req("GET", "/%s/_settings?flat_settings=true&include_defaults=%s"
                            % (index, "true" if defaults else "false"))
        self.assertEqual(st, 200, b)
        out = dict(b[index].get("defaults", {}))
        out.update(b[index]["settings"])
        return out

    def assert_400(self, resp, reason_part):
        st, b, _ = resp
        self.assertEqual(st, 400, b)
        self.assertEqual(b["error"]["type"], "illegal_argument_exception")
        self.assertIn(reason_part, b["error"]["reason"])

    def test_seed_article_create(self):
        st, b, _ = self.req("PUT", "/seed", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.jni": True}})
        self.assertEqual(st, 200, b)
        s = self.flat("seed")
        self.assertEqual(s["index.codec"], "ZSTD")
        self.assertEqual(s["index.compression.zstd.jni"], "true")
        self.assertEqual(s["index.compression.zstd.dict"], "true")
        self.assertEqual(s["index.compression.zstd.level"], "3")
        # nested form too
        st, b, _ = self.req("GET", "/seed/_settings?include_defaults=true")
        self.assertEqual(b["seed"]["defaults"]["index"]["compression"]["zstd"]["jni"], "true")
        # documents go in and come back
        st, b, _ = self.req("PUT", "/seed/_doc/1?refresh=true", {"m": "GET"})
        self.assertEqual(st, 201, b)
        self.assertEqual(self.req("GET", "/seed/_count")[1]["count"], 1)

    def test_jni_is_final(self):
        self.assertEqual(self.req("PUT", "/fin", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.jni": True}})[0], 200)
        for v in (True, False):
            self.assert_400(self.req("PUT", "/fin/_settings", {"index.compression.zstd.jni": v}),
                            "final fin setting [index.compression.zstd.jni], not updateable")
        self.assertEqual(self.req("POST", "/fin/_close")[0], 200)
        self.assert_400(self.req("PUT", "/fin/_settings",
                                 {"index": {"compression": {"zstd": {"jni": True}}}}),
                        "final fin setting [index.compression.zstd.jni], not updateable")
        self.assertEqual(self.req("POST", "/fin/_open")[0], 200)
        # no other value than true: libzstd is the only implementation
        self.assert_400(self.req("PUT", "/fin2", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.jni": False}}),
            "[index.compression.zstd.jni] can only be [true]")
        self.assert_400(self.req("PUT", "/fin2", {"settings": {
            "index.compression.zstd.jni": "yes"}}), "Failed to parse value [yes]")
        self.assertEqual(self.req("HEAD", "/fin2")[0], 404)

    def test_dict_fixed_true(self):
        self.assert_400(self.req("PUT", "/nd", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.dict": False}}), "zstd_no_dict")
        self.assertEqual(self.req("HEAD", "/nd")[0], 404)
        st, b, _ = self.req("PUT", "/nd", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.dict": True}})
        self.assertEqual(st, 200, b)
        self.assert_400(self.req("PUT", "/nd/_settings", {"index.compression.zstd.dict": True}),
                        "final nd setting [index.compression.zstd.dict], not updateable")

    def test_zstd_level(self):
        st, b, _ = self.req("PUT", "/lv", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.level": 5}})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.flat("lv")["index.compression.zstd.level"], "5")
        st, b, _ = self.req("PUT", "/lv2", {"settings": {
            "index.codec": "zstd_no_dict", "index.codec.compression_level": 7}})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.flat("lv2")["index.compression.zstd.level"], "7")

    def test_level_refused_without_levels(self):
        for codec in ("default", "best_compression", "lucene_best_compression"):
            for key in ("index.codec.compression_level", "index.compression.zstd.level"):
                self.assert_400(self.req("PUT", "/nl", {"settings": {"index.codec": codec, key: 3}}),
                                "Compression level cannot be set for the [%s] codec." % codec)
                self.assertEqual(self.req("HEAD", "/nl")[0], 404)
        # no codec named: the default codec (LZ4) has no levels either
        self.assert_400(self.req("PUT", "/nl", {"settings": {"index.compression.zstd.level": 4}}),
                        "Compression level cannot be set for the [default] codec.")

    def test_level_refused_on_codec_change(self):
        st, b, _ = self.req("PUT", "/cc", {"settings": {
            "index.codec": "ZSTD", "index.compression.zstd.level": 9}})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.req("POST", "/cc/_close")[0], 200)
        self.assert_400(self.req("PUT", "/cc/_settings", {"index.codec": "best_compression"}),
                        "Compression level cannot be set for the [best_compression] codec.")
        self.assert_400(self.req("PUT", "/cc/_settings", {"index.codec": "best_compression",
                                                           "index.compression.zstd.level": 9}),
                        "Compression level cannot be set for the [best_compression] codec.")
        self.assertEqual(self.flat("cc")["index.codec"], "ZSTD")  # unchanged
        # dropping the level with the change is fine
        st, b, _ = self.req("PUT", "/cc/_settings", {"index.codec": "best_compression",
                                                      "index.compression.zstd.level": None})
        self.assertEqual(st, 200, b)
        s = self.flat("cc")
        self.assertEqual((s["index.codec"], s["index.compression.zstd.level"]),
                         ("best_compression", "3"))
        # and a level on the new codec alone is refused
        self.assert_400(self.req("PUT", "/cc/_settings", {"index.codec.compression_level": 2}),
                        "Compression level cannot be set for the [best_compression] codec.")
        self.assertEqual(self.req("POST", "/cc/_open")[0], 200)
        # dynamic settings still update
        self.assertEqual(self.req("PUT", "/cc/_settings", {"index.refresh_interval": "2s"})[0], 200)

    def test_include_defaults_pretty(self):
        self.assertEqual(self.req("PUT", "/pp", {"settings": {"index.codec": "ZSTD"}})[0], 200)
        st, b, raw = self.req("GET", "/pp/_settings?include_defaults=true&pretty")
        self.assertEqual(st, 200)
        text = raw.decode()
        self.assertTrue(text.startswith('{\n  "pp" : {\n'), text[:40])
        self.assertTrue(text.endswith("\n"))
        self.assertEqual(json.loads(text)["pp"]["defaults"]["index"]["compression"]["zstd"]["jni"],
                         "true")


if __name__ == "__main__":
    unittest.main()
