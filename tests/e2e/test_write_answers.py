"""The write path (_bulk, index, delete, index creation and deletion) gives
Elasticsearch 8's exact answers: statuses, error types and reasons, and the
fields of a successful write.

Sources: Elasticsearch's BulkRequest#validate and BulkRequestParser,
DocWriteRequest#validateDocIdLength, IndexRouting#process ("if _id is
specified it must not be empty"), NumberFieldMapper (finite values only),
MetadataCreateIndexService#validateIndexName, DocWriteResponse
(forced_refresh), and the REST tests bulk/10_basic.yml, index/60_refresh.yml.
"""
import unittest
import urllib.parse

from fdsserver import ServerTestCase


def ndjson(*lines):
    return "".join(line + "\n" for line in lines)


class WriteAnswers(ServerTestCase):

    def count(self, index):
        st, body, _ = self.req("GET", "/%s/_count" % index)
        return body["count"] if st == 200 else None

    # 1. bulk request validation

    def test_only_an_action_line_is_no_request(self):
        self.assertError(self.req("POST", "/_bulk", ndjson('{"index":{"_index":"b1"}}')),
                         400, "action_request_validation_exception",
                         "Validation Failed: 1: no requests added;")
        st, _, _ = self.req("GET", "/b1")
        self.assertEqual(st, 404)

    def test_out_of_range_seq_no_refused(self):
        # a fuzzer's finding: 1e300 was cast from double to int64_t (UB)
        for key in ("if_seq_no", "if_primary_term", "version"):
            body = ndjson('{"index":{"_index":"b9","_id":"1","%s":1e300}}' % key,
                          '{"x":1}')
            self.assertError(self.req("POST", "/_bulk", body), 400,
                             "illegal_argument_exception",
                             "Action/metadata line [1]: [%s] must be a long, "
                             "got [1.0000000000000001e+300]" % key)
        self.assertIsNone(self.count("b9"))

    def test_delete_without_id_refuses_the_whole_bulk(self):
        body = ndjson('{"index":{"_index":"b2","_id":"1"}}', '{"x":1}',
                      '{"delete":{"_index":"b2"}}',
                      '{"delete":{"_index":"b2"}}')
        self.assertError(self.req("POST", "/_bulk?refresh=true", body), 400,
                         "action_request_validation_exception",
                         "Validation Failed: 1: id is missing;2: id is missing;")
        st, _, _ = self.req("GET", "/b2/_doc/1")
        self.assertEqual(st, 404)  # nothing indexed

    def test_empty_id_fails_its_item(self):
        body = ndjson('{"index":{"_index":"b3","_id":""}}', '{"f":1}',
                      '{"index":{"_index":"b3","_id":"id"}}', '{"f":2}')
        st, res, _ = self.req("POST", "/_bulk?refresh=true", body)
        self.assertEqual(st, 200, res)
        self.assertTrue(res["errors"])
        item = res["items"][0]["index"]
        self.assertEqual(item["status"], 400)
        self.assertEqual(item["error"]["type"], "illegal_argument_exception")
        self.assertEqual(item["error"]["reason"],
                         "if _id is specified it must not be empty")
        self.assertEqual(res["items"][1]["index"]["status"], 201)

    def test_compact_and_spaced_action_lines_answer_alike(self):
        # compact lines of string _index, _id and routing take a shorter
        # path than the others; both must mean the same, errors included
        def lines(sp):
            return ndjson(
                '{"index":{"_index":"b10","_id":"a","routing":"r1"}}', '{"f":1}',
                '{"create":{"_index":"b10","_id":"a","routing":"r1"}}', '{"f":2}',
                '{"index":{}}', '{"f":3}',
                '{"create":{"_id":"c","_index":"b10"}}', '{"f":4}',
                '{"update":{"_index":"b10","_id":"c"}}', '{"doc":{"f":5}}',
                '{"delete":{"_index":"b10","_id":"a","routing":"r1"}}',
                '{"index":{"_index":"b10","_id":""}}', '{"f":6}',
                '{"index":{"_index":"B10","_id":"d"}}', '{"f":7}').replace(
                    '":', '" :' if sp else '":')

        def strip(res):
            for item in res["items"]:
                for a in item.values():
                    a.pop("_seq_no", None)
                    if a.get("_id") not in ("a", "c", "d", ""):
                        a["_id"] = "<assigned>"
            res.pop("took")
            return res

        answers = []
        for sp in (False, True):
            self.req("DELETE", "/b10")
            st, res, _ = self.req("POST", "/b10/_bulk?refresh=true", lines(sp))
            self.assertEqual(st, 200, res)
            answers.append(strip(res))
        self.assertEqual(answers[0], answers[1])
        self.assertEqual([list(i.values())[0]["status"] for i in answers[0]["items"]],
                         [201, 409, 201, 201, 200, 200, 400, 400])
        # a duplicate key or an unknown one is refused as before
        for line in ('{"index":{"_index":"b10","_index":"b11"}}',
                     '{"index":{"_index":"b10","_idx":"1"}}',
                     '{"index":{"_index":"b10","_id":"1"}} x',
                     '{"index":{"_index":"b10","_id":"1"}'):
            st, res, _ = self.req("POST", "/_bulk", ndjson(line, '{"f":1}'))
            self.assertEqual(st, 400, (line, res))

    def test_action_line_values_of_any_type_are_their_text(self):
        # BulkRequestParser reads _index, _id, routing and pipeline with
        # parser.text() for any value (a number as written, true/false),
        # the longs with longValue() (a string holding one too), and skips
        # a null whatever the key; an array or object is refused
        body = ndjson(
            '{"index":{"_id":true}}', '{"f":1}',
            '{"index":{"_id":1}}', '{"f":2}',
            '{"index":{"_id":9007199254740993,"routing":2}}', '{"f":3}',
            '{"create":{"_id":1.50, "routing":false}}', '{"f":4}',
            '{"index":{"_index":13,"_id":"x"}}', '{"f":5}',
            '{"index":{"_id":"n","routing":null,"pipeline":null,"foo":null}}', '{"f":6}',
            '{"index":{"_id":"p","pipeline":"_none","require_alias":"false"}}', '{"f":7}',
            '{"index":{"_id":"v","version":"5","version_type":"external"}}', '{"f":8}')
        st, res, _ = self.req("POST", "/b12/_bulk?refresh=true", body)
        self.assertEqual(st, 200, res)
        items = [list(i.values())[0] for i in res["items"]]
        self.assertEqual([(i["_index"], i["_id"], i["status"]) for i in items],
                         [("b12", "true", 201), ("b12", "1", 201),
                          ("b12", "9007199254740993", 201), ("b12", "1.50", 201),
                          ("13", "x", 201), ("b12", "n", 201), ("b12", "p", 201),
                          ("b12", "v", 201)])
        self.assertEqual(items[7]["_version"], 5)
        for id, routing in (("9007199254740993", "2"), ("1.50", "false")):
            st, doc, _ = self.req("GET", "/b12/_doc/%s?routing=%s" % (id, routing))
            self.assertEqual((st, doc.get("_routing")), (200, routing), doc)
        # a number answers as the same text in a string does (the compact
        # string line takes the short path, the number the general one)
        answers = []
        for line in ('{"index":{"_index":"b13","_id":"7","routing":"3"}}',
                     '{"index":{"_index":"b13","_id":7,"routing":3}}'):
            self.req("DELETE", "/b13")
            st, res, _ = self.req("POST", "/_bulk", ndjson(line, '{"f":1}'))
            self.assertEqual(st, 200, res)
            res.pop("took")
            answers.append(res)
        self.assertEqual(answers[0], answers[1])
        self.assertEqual(answers[0]["items"][0]["index"]["_id"], "7")
        for line, reason in (
                ('{"index":{"_id":[1]}}', "Malformed action/metadata line [1], "
                 "expected a simple value for field [_id] but found [START_ARRAY]"),
                ('{"index":{"routing":{"a":1}}}', "Malformed action/metadata line "
                 "[1], expected a simple value for field [routing] but found "
                 "[START_OBJECT]"),
                ('{"index":{"_index":["b12"]}}', "Malformed action/metadata line "
                 "[1], expected a simple value for field [_index] but found "
                 "[START_ARRAY]"),
                ('{"index":{"pipeline":{}}}', "Malformed action/metadata line [1], "
                 "expected a simple value for field [pipeline] but found "
                 "[START_OBJECT]"),
                ('{"index":{"foo":[]}}', "Malformed action/metadata line [1], "
                 "expected a simple value for field [foo] but found [START_ARRAY]"),
                ('{"index":{"version":"abc","version_type":"external"}}',
                 'For input string: "abc"'),
                ('{"index":{"if_seq_no":"99999999999999999999","if_primary_term":1}}',
                 "Value [99999999999999999999] is out of range for a long"),
                ('{"index":{"require_alias":"yes"}}',
                 "Failed to parse value [yes] as only [true] or [false] are allowed."),
                ('{"index":{"version_type":"foo"}}', "No version type match [foo]")):
            self.assertError(self.req("POST", "/b12/_bulk", ndjson(line, '{"f":1}')),
                             400, "illegal_argument_exception", reason)
        self.assertEqual(self.count("b12"), 7)  # the 8th went to index 13

    # 2. ids

    def test_id_too_long(self):
        long_id = "\u00e9" * 256 + "x"  # 513 bytes; a cut mid-character is visible
        want_tail = "] is too long, must be no longer than 512 bytes but was: 513;"
        body = ndjson('{"index":{"_index":"b4","_id":"%s"}}' % long_id, '{"x":1}')
        b = self.assertError(self.req("POST", "/_bulk", body), 400,
                             "action_request_validation_exception")
        reason = b["error"]["reason"]
        self.assertTrue(reason.startswith("Validation Failed: 1: id [\u00e9\u00e9"), reason)
        self.assertTrue(reason.endswith(want_tail), reason)
        self.assertNotIn("\ufffd", reason)
        self.assertEqual(self.count("b4"), None)  # no index created either
        # the same answer to a single document write and delete
        path = "/b4/_doc/" + urllib.parse.quote(long_id)
        for method, doc in (("PUT", {"x": 1}), ("DELETE", None)):
            b = self.assertError(self.req(method, path, doc), 400,
                                 "action_request_validation_exception")
            self.assertEqual(b["error"]["reason"], reason)
        # 512 bytes is allowed
        ok_id = "\u00e9" * 256
        st, res, _ = self.req("PUT", "/b4/_doc/" + urllib.parse.quote(ok_id), {"x": 1})
        self.assertEqual(st, 201, res)
        self.assertEqual(res["_id"], ok_id)

    def test_invalid_utf8_id_refused(self):
        body = b'{"index":{"_index":"b5","_id":"a\xffb"}}\n{"x":1}\n'
        b = self.assertError(self.req("POST", "/_bulk", body), 400,
                             "x_content_parse_exception")
        self.assertIn("Invalid UTF-8", b["error"]["reason"])
        self.assertEqual(self.count("b5"), None)

    def test_escaped_nul_in_action_line_refused(self):
        # "n\u0000ul" was cut to the id "n", overwriting that document
        self.req("PUT", "/b10/_doc/n?refresh=true", {"x": 1})
        for line in ('{"index":{"_index":"b10","_id":"n\\u0000ul"}}',
                     '{ "index" : { "_index":"b10", "_id":"n\\u0000z" } }',
                     '{"index":{"_index":"b10","_id":"m","routing":"\\u0000"}}'):
            b = self.assertError(self.req("POST", "/_bulk", ndjson(line, '{"x":2}')),
                                 400, "illegal_argument_exception")
            self.assertIn("NUL character", b["error"]["reason"])
        st, doc, _ = self.req("GET", "/b10/_doc/n")
        self.assertEqual((st, doc["_version"], doc["_source"]), (200, 1, {"x": 1}))
        # _mget's ids go through the same check
        b = self.assertError(self.req("POST", "/b10/_mget", '{"ids":["n\\u0000x"]}'),
                             400, "illegal_argument_exception")
        self.assertIn("NUL character", b["error"]["reason"])
        # an escaped backslash before "u0000" is text, not a NUL
        st, body, _ = self.req("POST", "/_bulk?refresh=true", ndjson(
            '{"index":{"_index":"b10","_id":"a\\\\u0000"}}', '{"x":3}'))
        self.assertEqual(st, 200, body)
        self.assertEqual(body["items"][0]["index"]["_id"], "a\\u0000")

    def test_negative_external_version_refused(self):
        # was stored as "_version": -1
        for vt in ("external", "external_gte"):
            body = ndjson('{"index":{"_index":"b11","_id":"v","version":-1,'
                          '"version_type":"%s"}}' % vt, '{"x":1}')
            self.assertError(self.req("POST", "/_bulk", body), 400,
                             "action_request_validation_exception",
                             "Validation Failed: 1: illegal version value [-1] "
                             "for version type [%s];" % vt.upper())
        self.assertEqual(self.count("b11"), None)
        body = ndjson('{"index":{"_index":"b11","_id":"v","version":0,'
                      '"version_type":"external"}}', '{"x":1}')
        st, b, _ = self.req("POST", "/_bulk?refresh=true", body)
        self.assertEqual((st, b["items"][0]["index"]["_version"]), (200, 0), b)

    def test_bulk_version_needs_an_external_type(self):
        # a version with internal versioning (the default) is refused as
        # DocWriteRequest.validateSeqNoBasedCASParams refuses it: it was
        # applied as an external version
        for meta in ('"version":5', '"version":5,"version_type":"internal"',
                     '"version":"5"'):
            body = ndjson('{"index":{"_index":"vt1","_id":"v",%s}}' % meta,
                          '{"x":1}')
            self.assertError(self.req("POST", "/_bulk", body), 400,
                             "action_request_validation_exception",
                             "Validation Failed: 1: internal versioning can not "
                             "be used for optimistic concurrency control. Please "
                             "use `if_seq_no` and `if_primary_term` instead;")
        # an external type with no version: Versions.MATCH_ANY (-3); it
        # was accepted and the type ignored
        for vt in ("external", "external_gte"):
            body = ndjson('{"index":{"_index":"vt1","_id":"v","version_type":"%s"}}'
                          % vt, '{"x":1}')
            self.assertError(self.req("POST", "/_bulk", body), 400,
                             "action_request_validation_exception",
                             "Validation Failed: 1: illegal version value [-3] "
                             "for version type [%s];" % vt.upper())
        self.assertEqual(self.count("vt1"), None)
        # internal with no version is the default: accepted
        body = ndjson('{"index":{"_index":"vt1","_id":"v","version_type":"internal"}}',
                      '{"x":1}')
        st, b, _ = self.req("POST", "/_bulk?refresh=true", body)
        self.assertEqual((st, b["items"][0]["index"]["_version"]), (200, 1), b)

    # 3. a double beyond range

    def test_infinite_double_refused_with_its_cause(self):
        st, _, _ = self.req("PUT", "/b6", {"mappings": {"properties": {
            "d": {"type": "double"}}}})
        self.assertEqual(st, 200)
        b = self.assertError(self.req("PUT", "/b6/_doc/1", '{"d":1e400}'), 400,
                             "document_parsing_exception")
        self.assertIn("failed to parse field [d] of type [double]", b["error"]["reason"])
        self.assertIn("Preview of field's value: '1e400'", b["error"]["reason"])
        self.assertEqual(b["error"]["caused_by"], {
            "type": "illegal_argument_exception",
            "reason": "[double] supports only finite values, but got [Infinity]"})
        self.assertNotIn("caused_by", b["error"]["root_cause"][0])
        # in _bulk the item carries the same cause
        st, res, _ = self.req("POST", "/_bulk", ndjson(
            '{"index":{"_index":"b6","_id":"2"}}', '{"d":-1e400}'))
        self.assertEqual(st, 200, res)
        err = res["items"][0]["index"]["error"]
        self.assertEqual(err["type"], "document_parsing_exception")
        self.assertEqual(err["caused_by"]["reason"],
                         "[double] supports only finite values, but got [-Infinity]")

    # 4. a refused document leaves the mapping as it was

    def test_refused_document_maps_nothing(self):
        st, _, _ = self.req("PUT", "/b7", {"mappings": {"properties": {
            "n": {"type": "long"}}}})
        self.assertEqual(st, 200)
        self.assertError(self.req("PUT", "/b7/_doc/1",
                                  {"newfield": "x", "obj": {"k": 1}, "n": "nan"}),
                         400, "document_parsing_exception")
        st, res, _ = self.req("POST", "/_bulk", ndjson(
            '{"index":{"_index":"b7","_id":"2"}}', '{"other":true,"n":"bad"}'))
        self.assertTrue(res["errors"], res)
        st, m, _ = self.req("GET", "/b7/_mapping")
        self.assertEqual(st, 200)
        self.assertEqual(m["b7"]["mappings"]["properties"], {"n": {"type": "long"}})
        # a good document still maps its new field
        st, _, _ = self.req("PUT", "/b7/_doc/3", {"newfield": "x", "n": 1})
        self.assertEqual(st, 201)
        st, m, _ = self.req("GET", "/b7/_mapping")
        self.assertEqual(m["b7"]["mappings"]["properties"]["newfield"]["type"], "text")

    # 5. index names

    def test_non_ascii_upper_case_index_name(self):
        for name in ("\u00c9v", "\u03a3x", "Ab"):
            path = "/" + urllib.parse.quote(name)
            for method, body in (("PUT", None), ("POST", {"x": 1})):
                b = self.assertError(
                    self.req(method, path + ("/_doc" if method == "POST" else ""), body),
                    400, "invalid_index_name_exception",
                    "Invalid index name [%s], must be lowercase" % name)
                self.assertEqual(b["error"]["index"], name)
        st, _, _ = self.req("PUT", "/" + urllib.parse.quote("\u00e9v"))
        self.assertEqual(st, 200)

    # 6. numeric ids

    def test_numeric_id_keeps_its_digits(self):
        st, res, _ = self.req("POST", "/_bulk?refresh=true", ndjson(
            '{"index":{"_index":"b8","_id":9007199254740993}}', '{"x":1}',
            '{"index":{"_index":"b8","_id":1.5}}', '{"x":2}',
            '{"delete":{"_index":"b8","_id":18446744073709551617}}'))
        self.assertEqual(st, 200, res)
        ids = [list(it.values())[0]["_id"] for it in res["items"]]
        self.assertEqual(ids, ["9007199254740993", "1.5", "18446744073709551617"])
        st, doc, _ = self.req("GET", "/b8/_doc/9007199254740993")
        self.assertEqual(st, 200)
        self.assertEqual(doc["_source"], {"x": 1})

    # 7. forced_refresh

    def test_refresh_true_answers_forced_refresh(self):
        st, res, _ = self.req("PUT", "/b9/_doc/1?refresh=true", {"x": 1})
        self.assertEqual(st, 201)
        self.assertIs(res["forced_refresh"], True)
        self.assertEqual(list(res)[:5],
                         ["_index", "_id", "_version", "result", "forced_refresh"])
        st, res, _ = self.req("PUT", "/b9/_doc/2?refresh=", {"x": 2})
        self.assertIs(res["forced_refresh"], True)
        for q in ("", "?refresh=false", "?refresh=wait_for"):
            st, res, _ = self.req("PUT", "/b9/_doc/3" + q, {"x": 3})
            self.assertNotIn("forced_refresh", res, q)
        st, res, _ = self.req("POST", "/_bulk?refresh=true", ndjson(
            '{"index":{"_index":"b9","_id":"4"}}', '{"x":4}',
            '{"delete":{"_index":"b9","_id":"4"}}'))
        self.assertEqual(st, 200, res)
        for it in res["items"]:
            self.assertIs(list(it.values())[0]["forced_refresh"], True, it)
        st, res, _ = self.req("POST", "/_bulk", ndjson(
            '{"index":{"_index":"b9","_id":"5"}}', '{"x":5}'))
        self.assertNotIn("forced_refresh", res["items"][0]["index"])
        st, res, _ = self.req("DELETE", "/b9/_doc/1?refresh=true")
        self.assertEqual(st, 200)
        self.assertEqual(res["result"], "deleted")
        self.assertIs(res["forced_refresh"], True)
        self.assertEqual(self.count("b9"), 3)

    # 8. deleting a missing index

    def test_delete_missing_index_ignore_unavailable(self):
        st, res, _ = self.req("DELETE", "/nosuch?ignore_unavailable=true")
        self.assertEqual(st, 200)
        self.assertEqual(res, {"acknowledged": True})
        self.assertError(self.req("DELETE", "/nosuch"), 404, "index_not_found_exception")


if __name__ == "__main__":
    unittest.main()
