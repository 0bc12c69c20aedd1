"""Index-side APIs as Elasticsearch 8 answers them: PUT /{index}/_mapping
(new fields on live indices, conflicts refused on every index alike,
committed before the answer), GET .../_mapping/field/{fields}, the
index.blocks.* settings with their effects and PUT /{index}/_block/{block},
DELETE /{index} under action.destructive_requires_name, writes under
action.auto_create_index and the /_cluster/settings that holds them, HEAD
over several indices, POST /{index}/_disk_usage."""
import unittest

from fdsserver import Server, ServerTestCase


class PutMapping(ServerTestCase):
    def setUp(self):
        for name in ("pm-a", "pm-b"):
            self.req("DELETE", "/" + name)
            st, b, _ = self.req("PUT", "/" + name, {"mappings": {"properties": {
                "n": {"type": "long"},
                "t": {"type": "date", "format": "yyyy-MM-dd"},
                "k": {"type": "keyword", "index": False}}}})
            self.assertEqual(st, 200, b)

    def props(self, name):
        return self.req("GET", "/%s/_mapping" % name)[1][name]["mappings"]["properties"]

    def test_adds_fields_to_every_index(self):
        st, b, _ = self.req("PUT", "/pm-*/_mapping", {"properties": {
            "host": {"type": "keyword"},
            "msg": {"type": "text", "fields": {"raw": {"type": "keyword"}}}}})
        self.assertEqual((st, b), (200, {"acknowledged": True}))
        for name in ("pm-a", "pm-b"):
            p = self.props(name)
            self.assertEqual(p["host"], {"type": "keyword"})
            self.assertEqual(p["msg"]["fields"]["raw"], {"type": "keyword"})
            self.assertEqual(p["n"], {"type": "long"})
        # the new field is used by writes and searches at once
        self.req("PUT", "/pm-a/_doc/1?refresh=true", {"host": "h1", "msg": "hello"})
        st, b, _ = self.req("POST", "/pm-a/_search",
                            {"query": {"term": {"msg.raw": "hello"}}})
        self.assertEqual(b["hits"]["total"]["value"], 1, b)
        # the same fields again, and POST: no change, acknowledged
        st, b, _ = self.req("POST", "/pm-a/_mapping",
                            {"properties": {"host": {"type": "keyword"}}})
        self.assertEqual((st, b), (200, {"acknowledged": True}))

    def test_conflict_changes_no_index(self):
        self.req("PUT", "/pm-b/_mapping", {"properties": {"extra": {"type": "keyword"}}})
        body = {"properties": {"fresh": {"type": "keyword"},
                               "extra": {"type": "long"}}}
        self.assertError(self.req("PUT", "/pm-a,pm-b/_mapping", body), 400,
                         "illegal_argument_exception",
                         "mapper [extra] cannot be changed from type [keyword] to [long]")
        for name in ("pm-a", "pm-b"):
            self.assertNotIn("fresh", self.props(name))
        self.assertNotIn("extra", self.props("pm-a"))
        self.assertError(self.req("PUT", "/pm-a/_mapping",
                                  {"properties": {"n": {"type": "integer"}}}), 400,
                         "illegal_argument_exception",
                         "mapper [n] cannot be changed from type [long] to [integer]")
        b = self.assertError(self.req("PUT", "/pm-a/_mapping", {"properties": {
            "t": {"type": "date", "format": "epoch_millis"}}}), 400,
            "illegal_argument_exception")
        self.assertIn("Cannot update parameter [format] from [yyyy-MM-dd] to "
                      "[epoch_millis]", b["error"]["reason"])
        b = self.assertError(self.req("PUT", "/pm-a/_mapping", {"properties": {
            "k": {"type": "keyword"}}}), 400, "illegal_argument_exception")
        self.assertIn("Cannot update parameter [index] from [false] to [true]",
                      b["error"]["reason"])
        # ignore_above may change
        st, b, _ = self.req("PUT", "/pm-a/_mapping", {"properties": {
            "k": {"type": "keyword", "index": False, "ignore_above": 10}}})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.props("pm-a")["k"]["ignore_above"], 10)

    def test_errors(self):
        self.assertError(self.req("PUT", "/nope/_mapping",
                                  {"properties": {"x": {"type": "long"}}}),
                         404, "index_not_found_exception")
        st, b, _ = self.req("PUT", "/nope,pm-a/_mapping?ignore_unavailable=true",
                            {"properties": {"x": {"type": "long"}}})
        self.assertEqual(st, 200, b)
        self.assertError(self.req("PUT", "/pm-a/_mapping",
                                  {"properties": {"y": {"type": "bogus"}}}),
                         400, "mapper_parsing_exception")
        self.assertError(self.req("PUT", "/pm-a/_mapping?bogus=1",
                                  {"properties": {}}), 400,
                         "illegal_argument_exception")
        st, b, _ = self.req("PUT", "/pm-a/_mapping?timeout=30s&master_timeout=30s",
                            {"dynamic": "strict"})
        self.assertEqual(st, 200, b)
        self.assertEqual(self.req("GET", "/pm-a/_mapping")[1]["pm-a"]["mappings"][
            "dynamic"], "strict")

    def test_source_enabled_cannot_change(self):
        # set when the index is created; a mapping update may not change it
        b = self.assertError(self.req("PUT", "/pm-a/_mapping",
                                      {"_source": {"enabled": False}}),
                             400, "illegal_argument_exception")
        self.assertIn("Cannot update parameter [enabled] from [true] to [false]",
                      b["error"]["reason"])
        self.assertEqual(self.req("PUT", "/pm-a/_mapping",
                                  {"_source": {"enabled": True}})[0], 200)

    def test_write_index_only(self):
        st, b, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "pm-a", "alias": "pm", "is_write_index": True}},
            {"add": {"index": "pm-b", "alias": "pm"}}]})
        self.assertEqual(st, 200, b)
        try:
            st, b, _ = self.req("PUT", "/pm/_mapping?write_index_only=true",
                                {"properties": {"w": {"type": "keyword"}}})
            self.assertEqual(st, 200, b)
            self.assertIn("w", self.props("pm-a"))
            self.assertNotIn("w", self.props("pm-b"))
            st, b, _ = self.req("PUT", "/pm/_mapping",
                                {"properties": {"w2": {"type": "keyword"}}})
            self.assertEqual(st, 200, b)
            self.assertIn("w2", self.props("pm-b"))
        finally:
            self.req("POST", "/_aliases", {"actions": [
                {"remove": {"index": "pm-*", "alias": "pm"}}]})


class FieldMapping(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.srv.request("PUT", "/fm-1", {"mappings": {"properties": {
            "msg": {"type": "text", "fields": {"raw": {"type": "keyword",
                                                       "ignore_above": 256}}},
            "geo": {"properties": {"lat": {"type": "double"},
                                   "city": {"type": "keyword"}}},
            "n": {"type": "long"}}}})
        cls.srv.request("PUT", "/fm-2", {"mappings": {"properties": {
            "n": {"type": "integer"}}}})

    def test_shape(self):
        st, b, _ = self.req("GET", "/fm-1/_mapping/field/n,geo.lat")
        self.assertEqual(st, 200)
        self.assertEqual(b, {"fm-1": {"mappings": {
            "n": {"full_name": "n", "mapping": {"n": {"type": "long"}}},
            "geo.lat": {"full_name": "geo.lat",
                        "mapping": {"lat": {"type": "double"}}}}}})

    def test_wildcards_multi_fields_and_indices(self):
        b = self.req("GET", "/fm-1/_mapping/field/msg*")[1]["fm-1"]["mappings"]
        self.assertEqual(sorted(b), ["msg", "msg.raw"])
        self.assertEqual(b["msg.raw"]["mapping"],
                         {"raw": {"type": "keyword", "ignore_above": 256}})
        self.assertIn("fields", b["msg"]["mapping"]["msg"])
        b = self.req("GET", "/fm-1/_mapping/field/geo.*")[1]["fm-1"]["mappings"]
        self.assertEqual(sorted(b), ["geo.city", "geo.lat"])
        # objects are no field mappers
        b = self.req("GET", "/fm-1/_mapping/field/geo")[1]
        self.assertEqual(b, {"fm-1": {"mappings": {}}})
        b = self.req("GET", "/_mapping/field/n")[1]
        self.assertEqual(b["fm-2"]["mappings"]["n"]["mapping"], {"n": {"type": "integer"}})
        self.assertEqual(b["fm-1"]["mappings"]["n"]["mapping"], {"n": {"type": "long"}})
        b = self.req("GET", "/fm-*/_mapping/field/nothing?include_defaults=false")[1]
        self.assertEqual(b, {"fm-1": {"mappings": {}}, "fm-2": {"mappings": {}}})
        # the defaults of every parameter are not listed: true is refused
        for v in ("true", "maybe"):
            self.assertError(self.req("GET", "/fm-1/_mapping/field/n?include_defaults=" + v),
                             400, "illegal_argument_exception")
        self.assertError(self.req("GET", "/nope/_mapping/field/n"), 404,
                         "index_not_found_exception")


WRITE_BLOCK = "index [%s] blocked by: [FORBIDDEN/8/index write (api)];"


class Blocks(ServerTestCase):
    def setUp(self):
        self.req("PUT", "/bl/_settings", {"index.blocks.read_only": None,
                                          "index.blocks.write": None,
                                          "index.blocks.read": None,
                                          "index.blocks.metadata": None,
                                          "index.blocks.read_only_allow_delete": None})
        self.req("DELETE", "/bl")
        self.req("PUT", "/bl", {})
        self.req("PUT", "/bl/_doc/1?refresh=true", {"n": 1})

    def block(self, name, on=True):
        st, b, _ = self.req("PUT", "/bl/_settings",
                            {"index": {"blocks": {name: on}}})
        self.assertEqual(st, 200, b)

    def test_write_block(self):
        self.block("write")
        flat = self.req("GET", "/bl/_settings?flat_settings=true")[1]
        self.assertEqual(flat["bl"]["settings"]["index.blocks.write"], "true")
        reason = WRITE_BLOCK % "bl"
        self.assertError(self.req("PUT", "/bl/_doc/2", {"n": 2}), 403,
                         "cluster_block_exception", reason)
        self.assertError(self.req("PUT", "/bl/_create/3", {"n": 3}), 403,
                         "cluster_block_exception", reason)
        self.assertError(self.req("DELETE", "/bl/_doc/1"), 403,
                         "cluster_block_exception", reason)
        self.assertError(self.req("POST", "/bl/_update/1", {"doc": {"n": 5}}), 403,
                         "cluster_block_exception", reason)
        st, b, _ = self.req("POST", "/_bulk", '{"index":{"_index":"bl","_id":"9"}}\n'
                            '{"n":9}\n', {"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 200)
        item = b["items"][0]["index"]
        self.assertEqual((item["status"], item["error"]["type"], item["error"]["reason"]),
                         (403, "cluster_block_exception", reason))
        st, b, _ = self.req("POST", "/bl/_delete_by_query?refresh=true",
                            {"query": {"match_all": {}}})
        self.assertEqual(self.req("GET", "/bl/_count")[1]["count"], 1)
        # reads, settings and mappings still work
        self.assertEqual(self.req("GET", "/bl/_doc/1")[1]["_source"], {"n": 1})
        self.assertEqual(self.req("GET", "/bl/_search")[0], 200)
        self.assertEqual(self.req("PUT", "/bl/_settings",
                                  {"index.max_result_window": 500})[0], 200)
        self.assertEqual(self.req("PUT", "/bl/_mapping",
                                  {"properties": {"z": {"type": "long"}}})[0], 200)
        # lifted: writes again
        self.block("write", False)
        self.assertEqual(self.req("PUT", "/bl/_doc/2", {"n": 2})[0], 201)

    def test_read_only_and_metadata(self):
        self.block("read_only")
        self.assertError(self.req("PUT", "/bl/_doc/2", {"n": 2}), 403,
                         "cluster_block_exception",
                         "index [bl] blocked by: [FORBIDDEN/5/index read-only (api)];")
        self.assertError(self.req("PUT", "/bl/_settings", {"index.max_result_window": 5}),
                         403, "cluster_block_exception")
        self.assertError(self.req("PUT", "/bl/_mapping",
                                  {"properties": {"z": {"type": "long"}}}),
                         403, "cluster_block_exception")
        self.assertError(self.req("DELETE", "/bl"), 403, "cluster_block_exception")
        self.assertEqual(self.req("GET", "/bl/_doc/1")[0], 200)
        self.block("read_only", False)
        self.block("metadata")
        self.assertError(self.req("GET", "/bl/_mapping"), 403, "cluster_block_exception",
                         "index [bl] blocked by: [FORBIDDEN/9/index metadata (api)];")
        self.assertEqual(self.req("PUT", "/bl/_doc/2", {"n": 2})[0], 201)
        self.block("metadata", False)
        self.block("read_only_allow_delete")
        self.assertError(self.req("PUT", "/bl/_doc/2", {"n": 2}), 429,
                         "cluster_block_exception")
        self.assertEqual(self.req("DELETE", "/bl")[0], 200)

    def test_read_block(self):
        self.block("read")
        reason = "index [bl] blocked by: [FORBIDDEN/7/index read (api)];"
        self.assertError(self.req("GET", "/bl/_search"), 403, "cluster_block_exception",
                         reason)
        self.assertError(self.req("GET", "/bl/_doc/1"), 403, "cluster_block_exception",
                         reason)
        st, b, _ = self.req("POST", "/_mget", {"docs": [{"_index": "bl", "_id": "1"}]})
        self.assertEqual(b["docs"][0]["error"]["type"], "cluster_block_exception")
        self.assertEqual(self.req("PUT", "/bl/_doc/2", {"n": 2})[0], 201)

    def test_add_block_api(self):
        st, b, _ = self.req("PUT", "/bl/_block/write")
        self.assertEqual((st, b), (200, {"acknowledged": True, "shards_acknowledged": True,
                                         "indices": [{"name": "bl", "blocked": True}]}))
        self.assertError(self.req("PUT", "/bl/_doc/2", {"n": 2}), 403,
                         "cluster_block_exception", WRITE_BLOCK % "bl")
        self.assertError(self.req("PUT", "/bl/_block/bogus"), 400,
                         "illegal_argument_exception", "No block found with name [bogus]")
        self.assertError(self.req("PUT", "/nope/_block/write"), 404,
                         "index_not_found_exception")


WILDCARD = "Wildcard expressions or all indices are not allowed"


class DestructiveRequiresName(ServerTestCase):
    def setUp(self):
        for name in ("dr-1", "dr-2"):
            self.req("PUT", "/" + name, {})

    def tearDown(self):
        self.req("PUT", "/_cluster/settings", {
            "persistent": {"action.auto_create_index": None},
            "transient": {"action.auto_create_index": None}})
        self.req("PUT", "/_cluster/settings", {
            "persistent": {"action.destructive_requires_name": None},
            "transient": {"action.destructive_requires_name": None}})

    def test_default_refuses_wildcards(self):
        for path in ("/dr-*", "/_all", "/dr-1,dr-*", "/*"):
            self.assertError(self.req("DELETE", path), 400,
                             "illegal_argument_exception", WILDCARD)
        self.assertEqual(self.req("HEAD", "/dr-1,dr-2")[0], 200)
        self.assertEqual(self.req("DELETE", "/dr-1,dr-2")[0], 200)
        self.assertEqual(self.req("HEAD", "/dr-1")[0], 404)

    def test_cluster_setting(self):
        st, b, _ = self.req("GET", "/_cluster/settings")
        self.assertEqual((st, b), (200, {"persistent": {}, "transient": {}}))
        b = self.req("GET", "/_cluster/settings?include_defaults=true&flat_settings=true")[1]
        self.assertEqual({k: v for k, v in b["defaults"].items() if k.startswith("action.")},
                         {"action.destructive_requires_name": "true",
                          "action.auto_create_index": "true"})
        st, b, _ = self.req("PUT", "/_cluster/settings?flat_settings=true", {
            "persistent": {"action.destructive_requires_name": "false"}})
        self.assertEqual((st, b), (200, {"acknowledged": True, "transient": {},
                                         "persistent": {
                                             "action.destructive_requires_name": "false"}}))
        b = self.req("GET", "/_cluster/settings")[1]
        self.assertEqual(b["persistent"], {"action": {"destructive_requires_name": "false"}})
        self.assertEqual(self.req("DELETE", "/dr-*")[0], 200)
        self.assertEqual(self.req("HEAD", "/dr-1")[0], 404)
        # transient wins over persistent
        self.req("PUT", "/dr-1", {})
        st, b, _ = self.req("PUT", "/_cluster/settings", {
            "transient": {"action": {"destructive_requires_name": True}}})
        self.assertEqual(b["transient"], {"action": {"destructive_requires_name": "true"}})
        self.assertError(self.req("DELETE", "/dr-*"), 400, "illegal_argument_exception",
                         WILDCARD)

    def test_other_settings_refused(self):
        self.assertError(self.req("PUT", "/_cluster/settings", {
            "persistent": {"cluster.routing.allocation.enable": "none"}}), 400,
            "illegal_argument_exception",
            "persistent setting [cluster.routing.allocation.enable], not recognized")
        self.assertError(self.req("PUT", "/_cluster/settings", {
            "transient": {"search": {"max_buckets": 5}}}), 400,
            "illegal_argument_exception", "transient setting [search.max_buckets], "
            "not recognized")
        self.assertError(self.req("PUT", "/_cluster/settings", {
            "persistent": {"action.destructive_requires_name": "maybe"}}), 400,
            "illegal_argument_exception")
        self.assertEqual(self.req("PUT", "/_cluster/settings", {})[0], 400)
        # nothing applied
        self.assertEqual(self.req("GET", "/_cluster/settings")[1],
                         {"persistent": {}, "transient": {}})

    def test_auto_create_index(self):
        """action.auto_create_index: which missing indices a write (a
        document, a bulk item, a reindex's destination) may create, in
        Elasticsearch's words when it may not."""
        def put(value):
            return self.req("PUT", "/_cluster/settings",
                            {"persistent": {"action.auto_create_index": value}})
        self.assertEqual(put(False)[0], 200)
        self.assertError(self.req("PUT", "/ac-1/_doc/1", {"a": 1}), 404,
                         "index_not_found_exception",
                         "no such index [ac-1] and [action.auto_create_index] is [false]")
        self.assertEqual(self.req("PUT", "/dr-1/_doc/1?refresh=true", {"a": 1})[0], 201)
        self.assertEqual(put("-ac-x*,ac-*,+logs")[0], 200)
        self.assertEqual(self.req("PUT", "/ac-1/_doc/1", {"a": 1})[0], 201)
        self.assertError(self.req("PUT", "/ac-x1/_doc/1", {"a": 1}), 404,
                         "index_not_found_exception",
                         "no such index [ac-x1] and [action.auto_create_index] contains "
                         "[-ac-x*] which forbids automatic creation of the index")
        self.assertError(self.req("POST", "/_reindex", {"source": {"index": "dr-1"},
                                                        "dest": {"index": "other"}}),
                         404, "index_not_found_exception",
                         "no such index [other] and [action.auto_create_index] "
                         "([-ac-x*,ac-*,+logs]) doesn't match")
        st, b, _ = self.req("POST", "/_bulk", '{"index":{"_index":"logs"}}\n{"a":1}\n'
                            '{"index":{"_index":"nope"}}\n{"a":1}\n',
                            headers={"Content-Type": "application/x-ndjson"})
        self.assertEqual([i["index"]["status"] for i in b["items"]], [201, 404])
        # a pattern list that does not parse is refused, nothing stored
        for bad in ("a,,b", "-", "a,+"):
            self.assertError(put(bad), 400, "illegal_argument_exception",
                             "Can't parse [%s] for setting [action.auto_create_index] must "
                             "be either [true, false, or a comma separated list of index "
                             "patterns]" % bad)
        st, b, _ = self.req("GET", "/_cluster/settings?flat_settings=true")
        self.assertEqual(b["persistent"], {"action.auto_create_index": "-ac-x*,ac-*,+logs"})

    def test_head_several(self):
        self.assertEqual(self.req("HEAD", "/dr-1,dr-2")[0], 200)
        self.assertEqual(self.req("HEAD", "/dr-1,missing")[0], 404)
        self.assertEqual(self.req("HEAD", "/missing")[0], 404)


class DiskUsage(ServerTestCase):
    """POST /{index}/_disk_usage: Elasticsearch's shape, per-field parts
    that add up, the flush it does first, and its refusals."""
    PARTS = ("stored_fields", "doc_values", "points", "norms", "term_vectors",
             "knn_vectors")

    def setUp(self):
        self.req("DELETE", "/du")
        st, b, _ = self.req("PUT", "/du", {"mappings": {"properties": {
            "msg": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
            "rt": {"type": "float"}, "n": {"type": "long"},
            "k": {"type": "keyword"}}}})
        self.assertEqual(st, 200, b)
        lines = []
        for i in range(600):
            lines.append('{"index":{"_index":"du","_id":"%d"}}' % i)
            lines.append('{"msg":"get the page %d of the shop %d","rt":%.3f,"n":%d,"k":"k%d"}'
                         % (i, i % 7, (i % 97) / 1000.0, i, i % 13))
        st, b, _ = self.req("POST", "/_bulk", "\n".join(lines) + "\n")
        self.assertEqual(st, 200)
        self.assertFalse(b["errors"])

    def test_shape_and_sums(self):
        # no _refresh: the default flush writes the buffered docs first
        st, b, _ = self.req("POST", "/du/_disk_usage?run_expensive_tasks=true")
        self.assertEqual(st, 200, b)
        self.assertEqual(b["_shards"], {"total": 1, "successful": 1, "failed": 0})
        du = b["du"]
        fields = du["fields"]
        for f in ("_id", "_source", "msg", "msg.raw", "rt", "n", "k"):
            self.assertIn(f, fields)
        for name, f in list(fields.items()) + [("all_fields", du["all_fields"])]:
            total = f["inverted_index"]["total_in_bytes"] + sum(
                f[p + "_in_bytes"] for p in self.PARTS)
            self.assertEqual(f["total_in_bytes"], total, name)
            ii = f["inverted_index"]
            self.assertEqual(ii["total_in_bytes"], ii["terms_in_bytes"] +
                             ii["postings_in_bytes"] + ii["proximity_in_bytes"], name)
            for p in ("total", "stored_fields", "doc_values", "norms"):
                self.assertIsInstance(f[p], str)
        for p in ("total_in_bytes", "stored_fields_in_bytes", "doc_values_in_bytes",
                  "norms_in_bytes"):
            self.assertEqual(du["all_fields"][p], sum(f[p] for f in fields.values()), p)
        # what each part holds: the text field has positions and norms
        # (600 docs, 1 byte each), the keyword none; numbers doc values only
        self.assertGreater(fields["msg"]["inverted_index"]["proximity_in_bytes"], 0)
        self.assertEqual(fields["msg"]["norms_in_bytes"], 600)
        self.assertEqual(fields["msg.raw"]["inverted_index"]["proximity_in_bytes"], 0)
        self.assertEqual(fields["k"]["norms_in_bytes"], 0)
        # a number has no terms: its empty dictionary's header and padding
        self.assertEqual(fields["n"]["inverted_index"]["total_in_bytes"], 16)
        self.assertGreater(fields["n"]["doc_values_in_bytes"], 0)
        st, stats, _ = self.req("GET", "/du/_stats/store")
        store = stats["indices"]["du"]["primaries"]["store"]
        self.assertEqual(fields["_source"]["stored_fields_in_bytes"],
                         store["stored_fields_in_bytes"])
        self.assertGreater(store["stored_fields_in_bytes"], 0)
        self.assertEqual(du["store_size_in_bytes"], store["size_in_bytes"])
        # every byte of the index file but its header, descriptors and
        # footer is some field's
        inv = du["all_fields"]["total_in_bytes"] - store["stored_fields_in_bytes"]
        self.assertLessEqual(inv, store["postings_in_bytes"])
        self.assertGreater(inv, store["postings_in_bytes"] * 0.95)

    def test_flush_false_and_refusals(self):
        st, b, _ = self.req("POST", "/du/_disk_usage?run_expensive_tasks=true&flush=false")
        self.assertEqual(st, 200, b)
        self.assertEqual(b["du"]["all_fields"]["total_in_bytes"], 0)  # nothing flushed
        self.assertError(self.req("POST", "/du/_disk_usage"), 400,
                         "illegal_argument_exception",
                         "analyzing the disk usage of an index is expensive and "
                         "resource-intensive, the parameter [run_expensive_tasks] "
                         "must be set to [true] in order for the task to be performed.")
        self.assertError(self.req("POST", "/du/_disk_usage?run_expensive_tasks=false"),
                         400, "illegal_argument_exception")
        self.assertError(self.req("POST", "/du/_disk_usage?run_expensive_tasks=true&flush=x"),
                         400, "illegal_argument_exception")
        self.assertError(self.req("POST", "/du/_disk_usage?run_expensive_tasks=true&pretend=1"),
                         400, "illegal_argument_exception")
        self.assertError(self.req("POST", "/nope/_disk_usage?run_expensive_tasks=true"),
                         404, "index_not_found_exception")


class Restart(unittest.TestCase):
    def test_put_mapping_survives_restart(self):
        srv = Server().start()
        try:
            srv.request("PUT", "/rs", {})
            st, b, _ = srv.request("PUT", "/rs/_mapping",
                                   {"properties": {"code": {"type": "keyword"}}})
            self.assertEqual(st, 200, b)
            srv.stop()
            srv.start()
            b = srv.request("GET", "/rs/_mapping")[1]
            self.assertEqual(b["rs"]["mappings"]["properties"]["code"], {"type": "keyword"})
        finally:
            srv.cleanup()

    def test_cluster_setting_survives_restart(self):
        srv = Server().start()
        try:
            srv.request("PUT", "/_cluster/settings", {
                "persistent": {"action.destructive_requires_name": False},
                "transient": {"action.destructive_requires_name": True}})
            srv.stop()
            srv.start()
            b = srv.request("GET", "/_cluster/settings?flat_settings=true")[1]
            self.assertEqual(b, {"persistent": {"action.destructive_requires_name": "false"},
                                 "transient": {}})
            srv.request("PUT", "/x1", {})
            self.assertEqual(srv.request("DELETE", "/x*")[0], 200)
        finally:
            srv.cleanup()

    def test_block_survives_restart(self):
        srv = Server().start()
        try:
            srv.request("PUT", "/rb", {"settings": {"index.blocks.write": True}})
            srv.stop()
            srv.start()
            st, b, _ = srv.request("PUT", "/rb/_doc/1", {"x": 1})
            self.assertEqual(st, 403, b)
        finally:
            srv.cleanup()


if __name__ == "__main__":
    unittest.main()
