"""The document side of the API answers as Elasticsearch 8 does: routing
errors (no handler, wrong method), _update, _mget, get's realtime, refresh
and _source parameters, the bulk action-line options, GET _settings with
names, and _cat/count and _cat/health.

Sources: Elasticsearch 8's RestController (handleBadRequest,
handleUnsupportedHttpMethod), UpdateHelper and XContentHelper#update (the
partial-document merge, detect_noop), UpdateRequest (its PARSER and
validate), MultiGetRequest (add, validate), GetResult#toXContent,
BulkRequestParser (op_type, require_alias, pipeline), IngestService
("pipeline with id [x] does not exist"), GetSettingsResponse, RestHealthAction
and RestCountAction, and the REST tests update/*.yml, mget/*.yml,
bulk/10_basic.yml and bulk/90_pipeline.yml.
"""
import http.client
import json
import unittest

from fdsserver import ServerTestCase


def ndjson(*lines):
    return "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines)


class Documents(ServerTestCase):

    def put(self, index, id, doc, refresh=False):
        st, b, _ = self.req("PUT", "/%s/_doc/%s%s" % (index, id,
                                                     "?refresh=true" if refresh else ""),
                            doc)
        self.assertIn(st, (200, 201), b)
        return b

    def raw_request(self, method, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=30)
        conn.request(method, path)
        resp = conn.getresponse()
        out = resp.status, dict(resp.getheaders()), resp.read()
        conn.close()
        return out

    # 1. routing

    def test_unknown_endpoint(self):
        st, h, raw = self.raw_request("GET", "/_ingest/pipeline/x?pretty")
        self.assertEqual(st, 400)
        self.assertEqual(json.loads(raw), {
            "error": "no handler found for uri [/_ingest/pipeline/x?pretty] and "
                     "method [GET]"})
        st, b, _ = self.req("DELETE", "/a/_doc/1/extra")
        self.assertEqual((st, b), (400, {"error": "no handler found for uri "
                                                  "[/a/_doc/1/extra] and method "
                                                  "[DELETE]"}))

    def test_wrong_method(self):
        st, h, raw = self.raw_request("GET", "/x/_doc")
        self.assertEqual(st, 405)
        self.assertEqual(json.loads(raw), {
            "error": "Incorrect HTTP method for uri [/x/_doc] and method [GET], "
                     "allowed: [POST]", "status": 405})
        self.assertEqual(h["Allow"], "POST")
        st, h, raw = self.raw_request("PATCH", "/x/_doc/1")
        self.assertEqual(st, 405)
        self.assertEqual(h["Allow"], "GET,HEAD,POST,PUT,DELETE")
        # a path {index} also matches takes that route's methods too
        st, h, raw = self.raw_request("POST", "/_blah")
        self.assertEqual(json.loads(raw)["error"],
                         "Incorrect HTTP method for uri [/_blah] and method "
                         "[POST], allowed: [GET, HEAD, PUT, DELETE]")
        st, h, raw = self.raw_request("GET", "/i/_update/1")
        self.assertEqual((st, h["Allow"]), (405, "POST"))
        st, h, raw = self.raw_request("OPTIONS", "/i/_update/1")
        self.assertEqual((st, h["Allow"], raw), (200, "POST", b""))
        st, h, raw = self.raw_request("OPTIONS", "/i/_nothing/1")
        self.assertEqual(st, 400)

    def test_underscore_name_is_still_an_index_name(self):
        self.assertError(self.req("PUT", "/_foo"), 400, "invalid_index_name_exception")

    def test_api_path_without_the_method_is_no_index_expression(self):
        # GET /_bulk has no endpoint of its own: it reaches get index (GET
        # /{index}), whose resolver refuses a '_' name instead of taking
        # it for every index (IndexNameExpressionResolver
        # validateResourceExpression)
        self.put("rt1", "1", {"a": 1})
        for method, path, name in (("GET", "/_bulk", "_bulk"),
                                   ("GET", "/_reindex", "_reindex"),
                                   ("GET", "/_pit", "_pit"),
                                   ("DELETE", "/_bulk", "_bulk"),
                                   ("POST", "/_bulk/_refresh", "_bulk"),
                                   ("POST", "/_bulk/_forcemerge", "_bulk"),
                                   ("GET", "/_bulk/_mapping", "_bulk"),
                                   ("GET", "/_bulk/_alias", "_bulk"),
                                   ("GET", "/rt1,_bulk", "_bulk")):
            b = self.assertError(
                self.req(method, path), 400, "invalid_index_name_exception",
                "Invalid index name [%s], must not start with '_'." % name)
            self.assertEqual(b["error"]["index"], name)
            self.assertNotIn("rt1", json.dumps(b))
        st, _, raw = self.raw_request("HEAD", "/_bulk")
        self.assertEqual((st, raw), (400, b""))
        self.assertEqual(self.raw_request("HEAD", "/rt1")[0], 200)
        # nothing was deleted; the real GET endpoints and _all still answer
        st, b, _ = self.req("GET", "/rt1")
        self.assertEqual(st, 200, b)
        # an exclusion is checked as given: "-_bulk" does not start with
        # '_' (validateAliasOrIndex runs before the '-' is taken off)
        for path in ("/_all", "/*", "/rt1,_all", "/_mapping", "/_alias",
                     "/_all/_mapping", "/rt*,-_bulk"):
            st, b, _ = self.req("GET", path)
            self.assertEqual(st, 200, (path, b))
            self.assertIn("rt1", b, path)
        st, b, _ = self.req("GET", "/_refresh")
        self.assertEqual(st, 200, b)
        # _flush and _forcemerge of every index, as Elasticsearch's
        # /_flush and /_forcemerge routes (were 405)
        for method, path in (("POST", "/_flush"), ("GET", "/_flush"),
                             ("POST", "/_forcemerge?max_num_segments=1")):
            st, b, _ = self.req(method, path)
            self.assertEqual(st, 200, (path, b))
            self.assertGreaterEqual(b["_shards"]["successful"], 1, path)
        self.assertError(self.req("GET", "/_mget"), 400,
                         "action_request_validation_exception")
        # a method no route of the path takes is still a 405
        st, h, raw = self.raw_request("POST", "/_tasks")
        self.assertEqual(st, 405, raw)

    # 2. _update

    def test_partial_doc_merges_objects_and_keeps_digits(self):
        self.put("u1", "1", '{"big":9007199254740993,"n":{"one":1,"two":2},'
                            '"foo":"bar","count":1}')
        st, b, _ = self.req("POST", "/u1/_update/1",
                            {"doc": {"foo": "baz", "n": {"one": 3}, "new": [1, 2]}})
        self.assertEqual(st, 200, b)
        self.assertEqual(b, {"_index": "u1", "_id": "1", "_version": 2,
                             "result": "updated",
                             "_shards": {"total": 1, "successful": 1, "failed": 0},
                             "_seq_no": 1, "_primary_term": 1})
        st, _, raw = self.req("GET", "/u1/_source/1")
        self.assertEqual(raw, b'{"big":9007199254740993,"n":{"one":3,"two":2},'
                              b'"foo":"baz","count":1,"new":[1, 2]}')

    def test_noop_and_detect_noop_false(self):
        self.put("u2", "1", {"foo": "bar", "o": {"a": 1, "b": 2}})
        st, b, _ = self.req("POST", "/u2/_update/1",
                            {"doc": {"foo": "bar", "o": {"b": 2, "a": 1}}})
        self.assertEqual(st, 200)
        self.assertEqual(b, {"_index": "u2", "_id": "1", "_version": 1,
                             "result": "noop",
                             "_shards": {"total": 0, "successful": 0, "failed": 0},
                             "_seq_no": 0, "_primary_term": 1})
        st, b, _ = self.req("POST", "/u2/_update/1",
                            {"doc": {"foo": "bar"}, "detect_noop": False})
        self.assertEqual((b["result"], b["_version"], b["_seq_no"]), ("updated", 2, 1))

    def test_upserts(self):
        st, b, _ = self.req("POST", "/u3/_update/1",
                            {"doc": {"foo": "bar", "count": 1}, "upsert": {"foo": "baz"}})
        self.assertEqual((st, b["result"], b["_version"]), (201, "created", 1))
        self.assertEqual(self.req("GET", "/u3/_source/1")[1], {"foo": "baz"})
        st, b, _ = self.req("POST", "/u3/_update/1",
                            {"doc": {"foo": "bar", "count": 1}, "upsert": {"foo": "baz"}})
        self.assertEqual((st, b["result"]), (200, "updated"))
        self.assertEqual(self.req("GET", "/u3/_source/1")[1], {"foo": "bar", "count": 1})
        st, b, _ = self.req("POST", "/u3/_update/2",
                            {"doc": {"x": 1}, "doc_as_upsert": True})
        self.assertEqual((st, b["result"]), (201, "created"))
        self.assertEqual(self.req("GET", "/u3/_source/2")[1], {"x": 1})
        # doc_as_upsert wins over upsert (UpdateHelper.prepareUpsert)
        st, b, _ = self.req("POST", "/u3/_update/3",
                            {"doc": {"a": 1}, "doc_as_upsert": True, "upsert": {"b": 2}})
        self.assertEqual((st, self.req("GET", "/u3/_source/3")[1]), (201, {"a": 1}))
        # ?refresh takes true, false, wait_for or nothing
        for path in ("/u3/_update/3?refresh=bogus", "/u3/_doc/4?refresh=bogus"):
            st, b, _ = self.req("POST", path, {"doc": {"a": 2}} if "_update" in path else {"a": 2})
            self.assertEqual((st, b["error"]["reason"]), (400, "Unknown value for refresh: [bogus]."))

    def test_missing_document(self):
        b = self.assertError(self.req("POST", "/u4/_update/7", {"doc": {"x": 1}}),
                             404, "document_missing_exception", "[7]: document missing")
        self.assertEqual(b["error"]["index"], "u4")

    def test_source_in_answer(self):
        st, b, _ = self.req("POST", "/u5/_update/1?_source=foo,bar",
                            {"doc": {"foo": "baz"}, "upsert": {"foo": "bar", "x": 1}})
        self.assertEqual(b["get"], {"_seq_no": 0, "_primary_term": 1, "found": True,
                                    "_source": {"foo": "bar"}})
        st, b, _ = self.req("POST", "/u5/_update/1",
                            {"doc": {"foo": "baz"}, "_source": True})
        self.assertEqual(b["get"]["_source"], {"foo": "baz", "x": 1})
        st, b, _ = self.req("POST", "/u5/_update/1?_source_excludes=x",
                            {"doc": {"foo": "baz"}})
        self.assertEqual((b["result"], b["get"]["_source"]), ("noop", {"foo": "baz"}))
        st, b, _ = self.req("POST", "/u5/_update/1?_source=false", {"doc": {"y": 1}})
        self.assertNotIn("get", b)

    def test_if_seq_no(self):
        self.assertError(self.req("POST", "/u6/_update/1?if_seq_no=1&if_primary_term=1",
                                  {"doc": {"foo": "baz"}}),
                         404, "document_missing_exception")
        self.put("u6", "1", {"foo": "baz"})
        self.assertError(self.req("POST", "/u6/_update/1?if_seq_no=234&if_primary_term=1",
                                  {"doc": {"foo": "baz"}}),
                         409, "version_conflict_engine_exception",
                         "[1]: version conflict, required seqNo [234], primary term "
                         "[1]. current document has seqNo [0] and primary term [1]")
        st, b, _ = self.req("POST", "/u6/_update/1?if_seq_no=0&if_primary_term=1",
                            {"doc": {"foo": "bar"}})
        self.assertEqual((st, b["result"]), (200, "updated"))
        self.assertError(self.req("POST", "/u6/_update/1?if_seq_no=1&if_primary_term=1"
                                  "&retry_on_conflict=3", {"doc": {"foo": "x"}}),
                         400, "action_request_validation_exception",
                         "Validation Failed: 1: compare and write operations can "
                         "not be retried;")

    def test_retry_on_conflict_loses_no_update(self):
        # concurrent partial updates of one document, each adding a field of
        # its own: every update is a read, a merge and a write conditional on
        # the seq_no read, retried when another got in between
        # (async durability keeps the write short, so races are frequent:
        # without retry_on_conflict about 1% of these answer 409)
        import threading
        self.req("PUT", "/u10", {"settings": {"index.translog.durability": "async"}})
        self.put("u10", "1", {"start": 0})
        results, fields = [], []
        lock = threading.Lock()

        def worker(t):
            for k in range(25):
                name = "f%d_%d" % (t, k)
                st, b, _ = self.req("POST", "/u10/_update/1?retry_on_conflict=50",
                                    {"doc": {name: t}})
                with lock:
                    results.append(st)
                    fields.append(name)
        threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(results, [200] * 200)
        src = self.req("GET", "/u10/_source/1")[1]
        self.assertEqual(sorted(src), sorted(fields + ["start"]))
        self.assertEqual(self.req("GET", "/u10/_doc/1")[1]["_version"], 201)

    def test_refused_bodies(self):
        self.put("u7", "1", {"a": 1})
        self.assertError(self.req("POST", "/u7/_update/1",
                                  {"script": {"source": "ctx._source.a++"}}),
                         400, "illegal_argument_exception",
                         "scripts are not supported: [script] cannot be used; "
                         "update with a partial document ([doc])")
        self.assertError(self.req("POST", "/u7/_update/1", {"dac": {"foo": "baz"}}),
                         400, "x_content_parse_exception",
                         "[UpdateRequest] unknown field [dac] did you mean [doc]?")
        self.assertError(self.req("POST", "/u7/_update/1", {}), 400,
                         "action_request_validation_exception",
                         "Validation Failed: 1: script or doc is missing;")
        self.assertError(self.req("POST", "/u7/_update/1?retry_on_conflict=x",
                                  {"doc": {"a": 2}}), 400, "illegal_argument_exception")
        # a routing of one shard (u7 has one): the same document
        self.assertEqual(self.req("POST", "/u7/_update/1?routing=5",
                                  {"doc": {"a": 2}})[1]["result"], "updated")
        self.assertEqual(self.req("GET", "/u7/_source/1")[1], {"a": 2})

    def test_refresh(self):
        self.req("PUT", "/u8", {"settings": {"index.refresh_interval": "-1"}})
        self.put("u8", "1", {"a": 1}, refresh=True)
        st, b, _ = self.req("POST", "/u8/_update/1?refresh=true", {"doc": {"cat": "dog"}})
        self.assertTrue(b["forced_refresh"])
        st, b, _ = self.req("POST", "/u8/_search", {"query": {"match": {"cat": "dog"}}})
        self.assertEqual(b["hits"]["total"]["value"], 1)
        st, b, _ = self.req("POST", "/u8/_update/1", {"doc": {"cat": "cow"}})
        self.assertNotIn("forced_refresh", b)
        st, b, _ = self.req("POST", "/u8/_search", {"query": {"match": {"cat": "cow"}}})
        self.assertEqual(b["hits"]["total"]["value"], 0)

    def test_bulk_update_items(self):
        self.put("u9", "1", {"foo": "bar"})
        st, b, _ = self.req("POST", "/_bulk", ndjson(
            {"update": {"_index": "u9", "_id": "1"}}, {"doc": {"foo": "bar"}},
            {"update": {"_index": "u9", "_id": "1", "_source": True}},
            {"doc": {"foo": "baz"}},
            {"update": {"_index": "u9", "_id": "2"}}, {"doc": {"x": 1}},
            {"update": {"_index": "u9", "_id": "3"}},
            {"doc": {"x": 1}, "doc_as_upsert": True},
            {"update": {"_index": "u9", "_id": "1", "if_seq_no": 100,
                        "if_primary_term": 200}}, {"doc": {"foo": "q"}},
            {"update": {"_index": "u9", "_id": "1", "retry_on_conflict": 3}},
            {"script": "ctx._source.x = 1"}))
        self.assertEqual(st, 200, b)
        it = [i["update"] for i in b["items"]]
        self.assertEqual((it[0]["result"], it[0]["status"]), ("noop", 200))
        self.assertEqual((it[1]["result"], it[1]["get"]["_source"]),
                         ("updated", {"foo": "baz"}))
        self.assertEqual((it[2]["status"], it[2]["error"]["type"]),
                         (404, "document_missing_exception"))
        self.assertEqual((it[3]["result"], it[3]["status"]), ("created", 201))
        self.assertEqual((it[4]["status"], it[4]["error"]["type"]),
                         (409, "version_conflict_engine_exception"))
        self.assertEqual(it[5]["status"], 400)
        self.assertTrue(b["errors"])

    # 3. _mget

    def test_mget_docs(self):
        self.put("m1", "1", {"include": {"field1": "v1", "field2": "v2"}, "count": 1})
        st, b, _ = self.req("POST", "/_mget", {"docs": [
            {"_index": "m1", "_id": "1", "_source": {"include": ["include"],
                                                     "exclude": ["*.field2"]}},
            {"_index": "m1", "_id": "2"},
            {"_index": "nope", "_id": "1"},
            {"_index": "m1", "_id": 1, "_source": False}]})
        self.assertEqual(st, 200, b)
        d = b["docs"]
        self.assertEqual(d[0], {"_index": "m1", "_id": "1", "_version": 1, "_seq_no": 0,
                                "_primary_term": 1, "found": True,
                                "_source": {"include": {"field1": "v1"}}})
        self.assertEqual(d[1], {"_index": "m1", "_id": "2", "found": False})
        self.assertEqual((d[2]["_index"], d[2]["_id"], d[2]["error"]["type"],
                          d[2]["error"]["reason"]),
                         ("nope", "1", "index_not_found_exception", "no such index [nope]"))
        self.assertEqual(d[2]["error"]["root_cause"][0]["type"], "index_not_found_exception")
        self.assertEqual(d[3], {"_index": "m1", "_id": "1", "_version": 1, "_seq_no": 0,
                                "_primary_term": 1, "found": True})

    def test_mget_ids_and_url_source(self):
        self.put("m2", "1", {"include": {"field1": "v1", "field2": "v2"}, "count": 1})
        self.put("m2", "2", {"include": {"field1": "v1", "field2": "v2"}, "count": 2})
        st, b, _ = self.req("GET", "/m2/_mget?_source_includes=include.field1,count",
                            {"ids": ["1", 2, "3"]})
        self.assertEqual([d.get("_source") for d in b["docs"]],
                         [{"include": {"field1": "v1"}, "count": 1},
                          {"include": {"field1": "v1"}, "count": 2}, None])
        self.assertEqual(b["docs"][2], {"_index": "m2", "_id": "3", "found": False})
        st, b, _ = self.req("POST", "/m2/_mget?_source=false", {"ids": ["1"]})
        self.assertNotIn("_source", b["docs"][0])
        st, b, _ = self.req("POST", "/m2/_mget", {"docs": [{"_id": "1"},
                                                          {"_index": "m1x", "_id": "1"}]})
        self.assertTrue(b["docs"][0]["found"])
        self.assertEqual(b["docs"][1]["error"]["type"], "index_not_found_exception")

    def test_mget_validation(self):
        for body, reason in (
                ({"docs": [{"_index": "m3"}]}, "Validation Failed: 1: id is missing for doc 0;"),
                ({"docs": [{"_id": "1"}]}, "Validation Failed: 1: index is missing for doc 0;"),
                ({"docs": []}, "Validation Failed: 1: no documents to get;"),
                ({}, "Validation Failed: 1: no documents to get;")):
            self.assertError(self.req("POST", "/_mget", body), 400,
                             "action_request_validation_exception", reason)
        self.assertError(self.req("POST", "/_mget", {"doc": []}), 400, "parse_exception",
                         "unknown key [doc] for a START_ARRAY, expected [docs] or [ids]")
        self.assertEqual(self.req("POST", "/_mget?routing=1", {"docs": [
            {"_index": "m3", "_id": "1"}]})[1]["docs"][0]["error"]["type"],
            "index_not_found_exception")
        # no field is stored apart from _source: stored fields leave it out
        self.assertEqual(self.req("POST", "/_mget?stored_fields=a", {"docs": [
            {"_index": "m3", "_id": "1"}]})[1]["docs"][0]["error"]["type"],
            "index_not_found_exception")

    def test_realtime_and_refresh(self):
        self.req("PUT", "/m4", {"settings": {"index.refresh_interval": "-1"}})
        self.put("m4", "1", {"foo": "bar"})
        st, b, _ = self.req("POST", "/m4/_mget?realtime=false", {"ids": ["1"]})
        self.assertFalse(b["docs"][0]["found"])
        st, b, _ = self.req("GET", "/m4/_doc/1?realtime=false")
        self.assertEqual((st, b["found"]), (404, False))
        st, b, _ = self.req("POST", "/m4/_mget?realtime=true", {"ids": ["1"]})
        self.assertTrue(b["docs"][0]["found"])
        st, b, _ = self.req("POST", "/m4/_mget?realtime=false&refresh=true",
                            {"ids": ["1"]})
        self.assertTrue(b["docs"][0]["found"])
        st, b, _ = self.req("GET", "/m4/_doc/1?realtime=false&_source_includes=foo")
        self.assertEqual((st, b["_source"]), (200, {"foo": "bar"}))

    def test_get_version_and_strict_booleans(self):
        self.put("g1", "1", {"foo": "bar"})
        self.put("g1", "1", {"foo": "bar"})
        st, b, _ = self.req("GET", "/g1/_doc/1?version=2")
        self.assertEqual((st, b["_version"]), (200, 2))
        for q in ("version=1", "version=10&version_type=external",
                  "version=1&version_type=external_gte"):
            self.assertError(self.req("GET", "/g1/_doc/1?" + q), 409,
                             "version_conflict_engine_exception")
        self.assertError(self.req("GET", "/g1/_doc/1?version=1"), 409,
                         "version_conflict_engine_exception",
                         "[1]: version conflict, current version [2] is different "
                         "than the one provided [1]")
        self.assertError(self.req("GET", "/g1/_doc/1?realtime=maybe"), 400,
                         "illegal_argument_exception",
                         "Failed to parse value [maybe] as only [true] or [false] "
                         "are allowed.")
        self.assertError(self.req("PUT", "/g1/_create/2?version_type=external&version=0",
                                  {"a": 1}), 400, "action_request_validation_exception",
                         "Validation Failed: 1: create operations only support "
                         "internal versioning. use index instead;")

    # 4. bulk action-line options

    def test_bulk_options(self):
        st, b, _ = self.req("POST", "/_bulk?refresh=true", ndjson(
            {"index": {"_index": "bo_new", "require_alias": True}}, {"f": 1},
            {"index": {"_index": "bo1", "_id": "1", "pipeline": "mypipeline"}}, {"f": 2},
            {"index": {"_index": "bo1", "_id": "2", "pipeline": "_none"}}, {"f": 3},
            {"index": {"_index": "bo1", "_id": "3", "routing": "r"}}, {"f": 4},
            {"index": {"_index": "bo1", "_id": "4",
                       "dynamic_templates": {"f": "my_template"}}}, {"f": 5},
            {"index": {"_index": "bo1", "op_type": "create"}}, {"f": 6}))
        self.assertEqual(st, 200, b)
        it = b["items"]
        self.assertEqual(it[0]["index"]["status"], 404)
        self.assertEqual(it[0]["index"]["error"]["type"], "index_not_found_exception")
        self.assertEqual(it[0]["index"]["error"]["reason"],
                         "no such index [bo_new] and [require_alias] request flag is "
                         "[true] and [bo_new] is not an alias")
        self.assertEqual((it[1]["index"]["status"], it[1]["index"]["error"]["type"],
                          it[1]["index"]["error"]["reason"]),
                         (400, "illegal_argument_exception",
                          "pipeline with id [mypipeline] does not exist"))
        self.assertEqual(it[2]["index"]["result"], "created")
        self.assertEqual(it[3]["index"]["result"], "created")  # routed
        self.assertEqual(it[4]["index"]["status"], 400)
        self.assertIn("[dynamic_templates]", it[4]["index"]["error"]["reason"])
        self.assertEqual(it[5]["create"]["result"], "created")
        self.assertEqual(self.req("GET", "/bo_new")[0], 404)
        self.assertEqual(self.req("GET", "/bo1/_count")[1]["count"], 3)
        # the request's options are the items' defaults
        st, b, _ = self.req("POST", "/_bulk?pipeline=p1", ndjson(
            {"index": {"_index": "bo2", "_id": "1"}}, {"f": 1},
            {"index": {"_index": "bo2", "_id": "2", "pipeline": "_none"}}, {"f": 1}))
        self.assertEqual(b["items"][0]["index"]["error"]["reason"],
                         "pipeline with id [p1] does not exist")
        self.assertEqual(b["items"][1]["index"]["result"], "created")
        self.assertError(self.req("PUT", "/bo3/_doc/1?pipeline=p1", {"f": 1}), 400,
                         "illegal_argument_exception",
                         "pipeline with id [p1] does not exist")
        self.assertEqual(self.req("GET", "/bo3")[0], 404)

    def test_empty_action(self):
        self.assertError(self.req("POST", "/_bulk", ndjson(
            {"index": {"_index": "bo4", "_id": "1"}}, {"f": 1}, "{}")), 400,
            "illegal_argument_exception",
            "Malformed action/metadata line [3], expected FIELD_NAME but found "
            "[END_OBJECT]")

    # 5. refresh answers, _settings, _cat

    def test_forced_refresh(self):
        st, b, _ = self.req("PUT", "/r1/_doc/1?refresh=true", {"a": 1})
        self.assertTrue(b["forced_refresh"])
        st, b, _ = self.req("DELETE", "/r1/_doc/1?refresh=true")
        self.assertTrue(b["forced_refresh"])
        st, b, _ = self.req("POST", "/_bulk?refresh=true", ndjson(
            {"index": {"_index": "r1", "_id": "2"}}, {"a": 1}))
        self.assertTrue(b["items"][0]["index"]["forced_refresh"])
        st, b, _ = self.req("PUT", "/r1/_doc/3?refresh=wait_for", {"a": 1})
        self.assertNotIn("forced_refresh", b)

    def test_delete_missing_index_ignore_unavailable(self):
        st, b, _ = self.req("DELETE", "/never_there?ignore_unavailable=true")
        self.assertEqual((st, b), (200, {"acknowledged": True}))

    def test_settings_by_name(self):
        self.req("PUT", "/s1", {"settings": {"index.number_of_replicas": 0,
                                             "index.refresh_interval": "5s"}})
        self.req("PUT", "/s2", {"settings": {"index.number_of_replicas": 0}})
        st, b, _ = self.req("GET", "/s1/_settings/index.number_of_shards")
        self.assertEqual(b, {"s1": {"settings": {"index": {"number_of_shards": "1"}}}})
        st, b, _ = self.req("GET", "/s1/_settings/index.number_of_*?flat_settings=true")
        self.assertEqual(b, {"s1": {"settings": {"index.number_of_shards": "1",
                                                 "index.number_of_replicas": "0"}}})
        st, b, _ = self.req("GET", "/s*/_settings/index.refresh_interval,"
                                   "index.number_of_replicas?flat_settings")
        self.assertEqual(b, {"s1": {"settings": {"index.refresh_interval": "5s",
                                                 "index.number_of_replicas": "0"}},
                             "s2": {"settings": {"index.number_of_replicas": "0"}}})
        st, b, _ = self.req("GET", "/_settings/index.refresh_interval")
        self.assertEqual(b["s1"], {"settings": {"index": {"refresh_interval": "5s"}}})
        self.assertNotIn("s2", b)  # nothing of it is left: left out
        st, b, _ = self.req("GET", "/_all/_settings?flat_settings=true")
        self.assertEqual(b["s2"]["settings"]["index.provided_name"], "s2")

    def test_cat_count_and_health(self):
        self.put("c1", "1", {"a": 1})
        self.put("c1", "2", {"a": 1}, refresh=True)
        st, _, raw = self.req("GET", "/_cat/count/c1?v")
        lines = raw.decode().splitlines()
        self.assertEqual(lines[0].split(), ["epoch", "timestamp", "count"])
        self.assertEqual(lines[1].split()[2], "2")
        self.assertRegex(lines[1], r"^\d+ \d\d:\d\d:\d\d  2$")
        st, b, _ = self.req("GET", "/_cat/count/c1?format=json&h=count")
        self.assertEqual(b, [{"count": "2"}])
        st, b, _ = self.req("GET", "/_cat/count/nope")
        self.assertEqual((st, b["error"]["type"]), (404, "index_not_found_exception"))
        st, _, raw = self.req("GET", "/_cat/health?v&ts=false")
        head, row = raw.decode().splitlines()
        self.assertEqual(head.split(), [
            "cluster", "status", "node.total", "node.data", "shards", "pri", "relo",
            "init", "unassign", "unassign.pri", "pending_tasks", "max_task_wait_time",
            "active_shards_percent"])
        self.assertEqual(row.split()[:3], ["fieldstore", "green", "1"])
        self.assertTrue(row.endswith("100.0%"))
        # numbers align right under their headers, as Elasticsearch prints them
        self.assertEqual(head.index("node.total") + len("node.total"),
                         row.index(" 1 ") + 2)
        st, b, _ = self.req("GET", "/_cat/health?format=json&h=status,node.total")
        self.assertEqual(b, [{"status": "green", "node.total": "1"}])


    def test_reindex_query_batches_and_conflicts(self):
        lines = "".join('{"index":{"_index":"rx","_id":"%d"}}\n{"n":%d,"k":"%s"}\n'
                        % (i, i, "even" if i % 2 == 0 else "odd") for i in range(30))
        self.req("POST", "/_bulk?refresh=true", lines, {"Content-Type": "application/x-ndjson"})
        st, b, _ = self.req("POST", "/_reindex?refresh=true", {
            "source": {"index": "rx", "query": {"term": {"k": "even"}}, "size": 4},
            "dest": {"index": "rx-even"}})
        self.assertEqual((st, b["total"], b["created"], b["batches"]), (200, 15, 15, 4), b)
        st, c, _ = self.req("GET", "/rx-even/_count")
        self.assertEqual(c["count"], 15)
        ids = sorted(int(h["_id"]) for h in self.req(
            "POST", "/rx-even/_search", {"size": 100})[1]["hits"]["hits"])
        self.assertEqual(ids, list(range(0, 30, 2)))  # each exactly once
        # max_docs, in _doc order
        st, b, _ = self.req("POST", "/_reindex?refresh=true", {
            "source": {"index": "rx", "size": 3}, "dest": {"index": "rx-7"}, "max_docs": 7})
        self.assertEqual((b["total"], b["created"]), (7, 7))
        # op_type create: existing ids conflict; abort stops, proceed counts them
        st, b, _ = self.req("POST", "/_reindex?refresh=true", {
            "source": {"index": "rx"}, "dest": {"index": "rx-even", "op_type": "create"},
            "conflicts": "proceed"})
        self.assertEqual((b["created"], b["version_conflicts"], b["failures"]), (15, 15, []))
        st, b, _ = self.req("POST", "/_reindex", {
            "source": {"index": "rx"}, "dest": {"index": "rx-7", "op_type": "create"}})
        # the batch's conflicts are its failures, and the copy stops there
        # with the worst failure's status, as Elasticsearch answers
        self.assertEqual(st, 409)
        self.assertEqual((b["version_conflicts"], len(b["failures"])), (7, 7))
        self.assertEqual(b["failures"][0]["cause"]["type"], "version_conflict_engine_exception")
        # refused, not ignored
        for body, reason in (
                ({"source": {"index": "rx"}, "dest": {"index": "x"}, "script": {}}, "[script]"),
                ({"source": {"index": "rx"}, "dest": {"index": "x", "pipeline": "p"}}, "pipeline"),
                ({"source": {"index": "rx"}, "dest": {"index": "x"}, "bogus": 1}, "[bogus]")):
            st, b, _ = self.req("POST", "/_reindex", body)
            self.assertEqual(st, 400, b)
            self.assertIn(reason, b["error"]["reason"])
        # in the background: a task whose answer GET /_tasks/{id} keeps
        st, b, _ = self.req("POST", "/_reindex?wait_for_completion=false",
                            {"source": {"index": "rx"}, "dest": {"index": "x"}})
        self.assertEqual(st, 200, b)
        self.assertRegex(b["task"], r"^.+:\d+$")
        st, t, _ = self.req("GET", "/_tasks/%s?wait_for_completion=true" % b["task"])
        self.assertEqual((st, t["completed"], t["response"]["created"]), (200, True, 30), t)
        self.assertEqual(t["task"]["action"], "indices:data/write/reindex")

if __name__ == "__main__":
    unittest.main()
