"""Bad input gets Elasticsearch's error shape and status, loses nothing, and
the server keeps running."""
import http.client
import unittest

from fdsserver import Server


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server(extra_args=["--max-body", "65536"]).start()
        st, body, _ = cls.srv.request("PUT", "/e", {"settings": {"index.codec": "ZSTD"}})
        assert st == 200, body
        st, body, _ = cls.srv.request("PUT", "/e/_doc/keep?refresh=true",
                                      {"status": 200, "method": "GET"})
        assert st == 201, body

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def assertError(self, resp, status, etype):
        st, body, _ = resp
        self.assertEqual(st, status, body)
        self.assertEqual(body["status"], status)
        self.assertEqual(body["error"]["type"], etype, body)
        self.assertEqual(body["error"]["root_cause"][0]["type"], etype)
        self.assertTrue(body["error"]["reason"])
        return body

    def tearDown(self):
        # whatever a test sent, the server is up and the document is intact
        st, body, _ = self.srv.request("GET", "/e/_doc/keep")
        self.assertEqual(st, 200)
        self.assertEqual(body["_source"], {"status": 200, "method": "GET"})

    def test_malformed_json_document(self):
        self.assertError(self.srv.request("PUT", "/e/_doc/x", '{"a": '), 400,
                         "document_parsing_exception")

    def test_duplicate_keys_rejected(self):
        st, body, _ = self.srv.request("PUT", "/e/_doc/x", '{"a":1,"a":2}')
        self.assertEqual(st, 400, body)

    def test_wrong_type_for_mapped_field(self):
        st, body, _ = self.srv.request("PUT", "/e/_doc/x?refresh=true",
                                       {"status": "not a number"})
        self.assertEqual(st, 400, body)

    def test_unknown_setting(self):
        b = self.assertError(self.srv.request("PUT", "/e2", {
            "settings": {"index.no_such_thing": 1}}), 400, "illegal_argument_exception")
        self.assertIn("unknown setting [index.no_such_thing]", b["error"]["reason"])

    def test_bad_codec_value(self):
        b = self.assertError(self.srv.request("PUT", "/e3", {
            "settings": {"index.codec": "snappy"}}), 400, "illegal_argument_exception")
        self.assertIn("snappy", b["error"]["reason"])

    def test_static_setting_on_open_index(self):
        b = self.assertError(self.srv.request("PUT", "/e/_settings", {
            "index.codec": "best_compression"}), 400, "illegal_argument_exception")
        self.assertIn("Can't update non dynamic settings [[index.codec]]",
                      b["error"]["reason"])

    def test_final_setting(self):
        b = self.assertError(self.srv.request("PUT", "/e/_settings", {
            "index.number_of_shards": 1}), 400, "illegal_argument_exception")
        self.assertIn("final", b["error"]["reason"])

    def test_index_exists(self):
        self.assertError(self.srv.request("PUT", "/e", {}), 400,
                         "resource_already_exists_exception")

    def test_missing_index(self):
        b = self.assertError(self.srv.request("GET", "/nope/_search"), 404,
                             "index_not_found_exception")
        self.assertEqual(b["error"]["index"], "nope")

    def test_bad_index_name(self):
        self.assertError(self.srv.request("PUT", "/UPPER"), 400,
                         "invalid_index_name_exception")

    def test_oversized_body(self):
        st, body, _ = self.srv.request("POST", "/e/_bulk", "x" * 200000)
        self.assertEqual(st, 413)
        self.assertEqual(body["status"], 413)

    def test_unknown_query(self):
        b = self.assertError(self.srv.request("POST", "/e/_search", {
            "query": {"no_such_query": {}}}), 400, "parsing_exception")
        self.assertIn("no_such_query", b["error"]["reason"])

    def test_malformed_search_body(self):
        self.assertError(self.srv.request("POST", "/e/_search", "{"), 400,
                         "parsing_exception")

    def test_malformed_bulk_line(self):
        st, body, _ = self.srv.request("POST", "/e/_bulk", "not json\n")
        self.assertEqual(st, 400)
        self.assertEqual(body["status"], 400)

    def test_bulk_bad_item_fails_alone(self):
        bulk = ('{"index":{"_id":"b1"}}\n{"ok":1}\n'
                '{"index":{"_id":"b2"}}\n{"broken":\n'
                '{"index":{"_id":"b3"}}\n{"ok":3}\n')
        st, body, _ = self.srv.request("POST", "/e/_bulk?refresh=true", bulk)
        self.assertEqual(st, 200)
        self.assertTrue(body["errors"])
        statuses = [it["index"]["status"] for it in body["items"]]
        self.assertEqual(statuses, [201, 400, 201])
        self.assertEqual(self.srv.request("GET", "/e/_doc/b3")[0], 200)
        self.assertEqual(self.srv.request("GET", "/e/_doc/b2")[0], 404)

    def test_create_conflict(self):
        self.srv.request("PUT", "/e/_doc/c1", {"v": 1})
        b = self.assertError(self.srv.request("PUT", "/e/_create/c1", {"v": 2}), 409,
                             "version_conflict_engine_exception")
        st, body, _ = self.srv.request("GET", "/e/_doc/c1")
        self.assertEqual(body["_source"], {"v": 1})

    def test_id_with_slash_is_one_id(self):
        st, body, _ = self.srv.request("PUT", "/e/_doc/a%2Fb", {"path": "slash"})
        self.assertEqual(st, 201, body)
        self.assertEqual(body["_id"], "a/b")
        st, body, _ = self.srv.request("GET", "/e/_doc/a%2Fb")
        self.assertEqual(st, 200)
        self.assertEqual(body["_source"], {"path": "slash"})

    def test_big_integer_source_kept_verbatim(self):
        # cJSON would re-print 2^53+1 as ...992: the stored bytes must win
        raw = '{"bign":9007199254740993, "x" : 1.10}'
        st, body, _ = self.srv.request("PUT", "/e/_doc/big?refresh=true", raw)
        self.assertEqual(st, 201, body)
        st, _, got = self.srv.request("GET", "/e/_source/big")
        self.assertEqual(got.decode(), raw)
        st, body, _ = self.srv.request("POST", "/e/_search", {
            "query": {"term": {"bign": 9007199254740993}}})
        self.assertEqual(body["hits"]["total"]["value"], 1)
        # a float field cannot hold 1e400: refused, not stored as null
        st, body, _ = self.srv.request("PUT", "/e/_doc/huge", '{"hugef":1e400}')
        self.assertEqual(st, 400)

    def test_nul_in_path_is_refused(self):
        # "%00" must not cut "victim%00evil" down to "victim"
        self.srv.request("PUT", "/e/_doc/victim", {"who": "kept"})
        st, body, _ = self.srv.request("PUT", "/e/_doc/victim%00evil", {"who": "x"})
        self.assertEqual(st, 400)
        self.assertEqual(self.srv.request("GET", "/e/_doc/victim")[1]["_source"],
                         {"who": "kept"})
        self.assertEqual(self.srv.request("DELETE", "/e%00zzz")[0], 400)
        self.assertEqual(self.srv.request("GET", "/e/_doc/bad%FFid")[0], 400)

    def test_conflicting_new_field_types_do_not_block_refresh(self):
        st, _, _ = self.srv.request("PUT", "/dyn/_doc/1", {"n": 1})
        self.assertEqual(st, 201)
        st, body, _ = self.srv.request("PUT", "/dyn/_doc/2", {"n": "x"})
        self.assertEqual(st, 400)
        self.assertEqual(body["error"]["type"], "document_parsing_exception")
        st, body, _ = self.srv.request("PUT", "/dyn/_doc/3",
                                       {"a": {"b": [1, 2, {"d": "x"}]}})
        self.assertEqual(st, 400)
        self.assertEqual(self.srv.request("POST", "/dyn/_refresh")[0], 200)
        self.assertEqual(self.srv.request("GET", "/dyn/_count")[1]["count"], 1)

    def test_if_seq_no_conflict(self):
        st, b, _ = self.srv.request("PUT", "/e/_doc/occ", {"v": 1})
        seq = b["_seq_no"]
        st, b, _ = self.srv.request("PUT", "/e/_doc/occ?if_seq_no=%d&if_primary_term=1"
                                    % (seq + 100), {"v": 2})
        self.assertEqual((st, b["error"]["type"]), (409, "version_conflict_engine_exception"))
        st, b, _ = self.srv.request("PUT", "/e/_doc/occ?if_seq_no=%d&if_primary_term=1"
                                    % seq, {"v": 3})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.srv.request("GET", "/e/_doc/occ")[1]["_source"], {"v": 3})
        st, b, _ = self.srv.request("PUT", "/e/_doc/ext?version=7&version_type=external",
                                    {"v": 1})
        self.assertEqual((st, b["_version"]), (201, 7))
        st, b, _ = self.srv.request("PUT", "/e/_doc/ext?version=5&version_type=external",
                                    {"v": 2})
        self.assertEqual(st, 409)
        # external versions start at 0; external_gte takes an equal version
        # (VersionType.EXTERNAL_GTE), and a bulk item names its own
        st, b, _ = self.srv.request("PUT", "/e/_doc/gte?version=0&version_type=external", {})
        self.assertEqual((st, b["_version"]), (201, 0))
        for ver, status in ((0, 200), (5, 200), (5, 200), (4, 409)):
            st, b, _ = self.srv.request("PUT", "/e/_doc/gte?version=%d&version_type="
                                        "external_gte" % ver, {"v": ver})
            self.assertEqual(st, status, b)
        self.assertEqual(b["error"]["reason"], "[gte]: version conflict, current version "
                         "[5] is higher than the one provided [4]")
        st, b, _ = self.srv.request("POST", "/_bulk", '{"index":{"_index":"e","_id":"gte",'
                                    '"version":5,"version_type":"external_gte"}}\n{}\n',
                                    {"Content-Type": "application/x-ndjson"})
        self.assertEqual(b["items"][0]["index"]["_version"], 5, b)
        self.assertEqual(self.srv.request("PUT", "/e/_doc/gte?version=1&version_type=wrong",
                                          {})[0], 400)

    def test_unknown_url_parameter(self):
        b = self.assertError(self.srv.request("PUT", "/e/_doc/p?foo=bar", {"v": 1}),
                             400, "illegal_argument_exception")
        self.assertIn("unrecognized parameter: [foo]", b["error"]["reason"])
        self.assertEqual(self.srv.request("GET", "/e/_doc/p")[0], 404)

    def test_reindex_errors(self):
        b = self.assertError(self.srv.request("POST", "/_reindex", {
            "source": {"index": "e"}, "dest": {"index": "e"}}), 400,
            "action_request_validation_exception")
        self.assertIn("[e]", b["error"]["reason"])
        self.assertError(self.srv.request("POST", "/_reindex", {
            "source": {"index": "e", "remote": {"host": "x"}},
            "dest": {"index": "e9"}}), 400, "illegal_argument_exception")
        self.assertError(self.srv.request("POST", "/_reindex", {
            "source": {"index": "e", "query": {"bogus": {}}},
            "dest": {"index": "e9"}}), 400, "parsing_exception")

    def test_write_creates_missing_index(self):
        st, b, _ = self.srv.request("PUT", "/autocreated/_doc/1", {"v": 1})
        self.assertEqual(st, 201, b)
        st, raw, _ = self.srv.request("GET", "/_cat/indices?v")
        self.assertTrue(raw.startswith("health status index"), raw)

    def test_no_handler(self):
        st, body, _ = self.srv.request("PATCH", "/e/_doc/x", {})
        self.assertIn(st, (400, 405))

    def test_garbage_http_does_not_kill_server(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=10)
        conn.connect()
        conn.sock.sendall(b"\x00\x01garbage\r\n\r\n")
        try:
            conn.sock.recv(1000)
        except OSError:
            pass
        conn.close()


if __name__ == "__main__":
    unittest.main()
