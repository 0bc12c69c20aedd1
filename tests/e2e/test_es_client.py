"""Debian's official Elasticsearch client (python3-elasticsearch 7.17, the
`elasticsearch` module of the system Python) drives update, mget and bulk
update items against fieldstore, and reads its routing errors: what a user's
own script would do.  Skipped when the package is not installed."""
import unittest
import warnings

from fdsserver import ServerTestCase

try:
    import elasticsearch
    from elasticsearch import Elasticsearch, helpers
except ImportError:  # pragma: no cover
    elasticsearch = None


@unittest.skipIf(elasticsearch is None, "python3-elasticsearch is not installed")
class OfficialClient(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.es = Elasticsearch("http://127.0.0.1:%d" % cls.srv.port)

    def setUp(self):
        # the 7.17 client warns about body= on update; it is what 7.x code sends
        warnings.simplefilter("ignore", DeprecationWarning)

    def test_update(self):
        es = self.es
        r = es.update(index="pc", id="1", body={"doc": {"a": 1}, "doc_as_upsert": True},
                      refresh=True)
        self.assertEqual(r, {"_index": "pc", "_id": "1", "_version": 1,
                             "result": "created", "forced_refresh": True,
                             "_shards": {"total": 1, "successful": 1, "failed": 0},
                             "_seq_no": 0, "_primary_term": 1})
        r = es.update(index="pc", id="1", body={"doc": {"a": 1}})
        self.assertEqual((r["result"], r["_version"]), ("noop", 1))
        r = es.update(index="pc", id="1", body={"doc": {"b": {"c": 1}}},
                      _source=True, retry_on_conflict=2)
        self.assertEqual(r["get"], {"_seq_no": 1, "_primary_term": 1, "found": True,
                                    "_source": {"a": 1, "b": {"c": 1}}})
        with self.assertRaises(elasticsearch.NotFoundError) as cm:
            es.update(index="pc", id="9", body={"doc": {"a": 1}})
        self.assertEqual(cm.exception.error, "document_missing_exception")
        with self.assertRaises(elasticsearch.ConflictError) as cm:
            es.update(index="pc", id="1", body={"doc": {"a": 2}}, if_seq_no=99,
                      if_primary_term=1)
        self.assertEqual(cm.exception.error, "version_conflict_engine_exception")
        with self.assertRaises(elasticsearch.RequestError) as cm:
            es.update(index="pc", id="1", body={"script": {"source": "ctx._source.a++"}})
        self.assertIn("scripts are not supported", cm.exception.info["error"]["reason"])

    def test_aliases_and_templates(self):
        es = self.es
        # a composable template with a component, applied to daily indices
        # that a first bulk write creates, as a log shipper makes them
        es.cluster.put_component_template(name="pc-ts", body={"template": {
            "mappings": {"properties": {"@timestamp": {"type": "date"}}}}})
        es.indices.put_index_template(name="pc-logs", body={
            "index_patterns": ["pclogs-*"], "priority": 5, "composed_of": ["pc-ts"],
            "template": {"settings": {"number_of_shards": 2},
                         "mappings": {"properties": {"host": {"type": "keyword"}}},
                         "aliases": {"pclogs": {}}}})
        days = ["pclogs-2026.12.01", "pclogs-2026.12.02"]
        helpers.bulk(es, ({"_index": days[i % 2], "_id": str(i), "host": "h%d" % (i % 3),
                           "@timestamp": "2026-12-0%dT10:00:00Z" % (i % 2 + 1)}
                          for i in range(30)), refresh=True)
        for d in days:
            m = es.indices.get_mapping(index=d)[d]["mappings"]["properties"]
            self.assertEqual((m["host"]["type"], m["@timestamp"]["type"]), ("keyword", "date"))
            self.assertEqual(es.indices.get_settings(index=d)[d]["settings"]["index"]
                             ["number_of_shards"], "2")
        self.assertEqual(es.count(index="pclogs")["count"], 30)
        self.assertIn("pc-logs", {t["name"] for t in es.indices.get_index_template(
            name="pc-*")["index_templates"]})
        # aliases: a filtered one over both days, searched and listed
        es.indices.update_aliases(body={"actions": [
            {"add": {"index": "pclogs-*", "alias": "pc-h1",
                     "filter": {"term": {"host": "h1"}}}}]})
        self.assertEqual(es.count(index="pc-h1")["count"], 10)
        r = es.search(index="pc-h1", body={"size": 30})
        self.assertEqual({h["_source"]["host"] for h in r["hits"]["hits"]}, {"h1"})
        self.assertEqual({h["_index"] for h in r["hits"]["hits"]}, set(days))
        rows = es.cat.aliases(name="pc-h1", format="json")
        self.assertEqual(sorted(r["index"] for r in rows), days)
        es.indices.put_alias(index=days[0], name="pc-write", body={"is_write_index": True})
        es.index(index="pc-write", id="w1", body={"host": "h9"}, refresh=True)
        self.assertEqual(es.get(index=days[0], id="w1")["_source"], {"host": "h9"})
        self.assertTrue(es.indices.exists_alias(name="pc-write"))
        es.indices.delete_alias(index=days[0], name="pc-write")
        self.assertFalse(es.indices.exists_alias(name="pc-write"))
        with self.assertRaises(elasticsearch.RequestError) as cm:
            es.indices.create(index="pc-h1")  # an alias already has the name
        self.assertEqual(cm.exception.error, "invalid_index_name_exception")
        # a legacy template too, and every kind deleted again
        es.indices.put_template(name="pc-legacy", body={
            "index_patterns": ["pcold-*"], "mappings": {"properties": {"n": {"type": "long"}}}})
        es.index(index="pcold-1", id="1", body={"n": 3})
        self.assertEqual(es.indices.get_mapping(index="pcold-1")["pcold-1"]["mappings"]
                         ["properties"]["n"]["type"], "long")
        es.indices.delete_template(name="pc-legacy")
        es.indices.delete_index_template(name="pc-logs")
        es.cluster.delete_component_template(name="pc-ts")
        with self.assertRaises(elasticsearch.NotFoundError):
            es.indices.get_index_template(name="pc-logs")

    def test_resize(self):
        es = self.es
        es.indices.create(index="pr", body={"settings": {"number_of_shards": 4}})
        helpers.bulk(es, ({"_index": "pr", "_id": str(i), "n": i} for i in range(50)),
                     refresh=True)
        with self.assertRaises(elasticsearch.TransportError) as cm:
            es.indices.shrink(index="pr", target="pr1")
        self.assertEqual(cm.exception.error, "illegal_state_exception")
        es.indices.put_settings(index="pr", body={"index.blocks.write": True})
        r = es.indices.shrink(index="pr", target="pr1",
                              body={"settings": {"index.blocks.write": None}})
        self.assertEqual(r, {"acknowledged": True, "shards_acknowledged": True,
                             "index": "pr1"})
        r = es.indices.split(index="pr", target="pr8",
                             body={"settings": {"index.number_of_shards": 8}})
        self.assertEqual(r["index"], "pr8")
        es.indices.clone(index="pr", target="prc", body={"aliases": {"prc-a": {}}})
        for name, shards in (("pr1", 1), ("pr8", 8), ("prc-a", 4)):
            self.assertEqual(es.count(index=name)["count"], 50)
        self.assertEqual(es.search(index="pr8", body={"size": 0})["_shards"]["total"], 8)
        es.index(index="pr1", id="new", body={"n": -1})
        with self.assertRaises(elasticsearch.RequestError) as cm:
            es.indices.clone(index="pr", target="pr1")
        self.assertEqual(cm.exception.error, "resource_already_exists_exception")

    def test_index_stats(self):
        # GET /_stats (the client's indices.stats()), a metric, wildcards:
        # every index of the expression and their sums under _all (GET
        # /_stats fell through to get index)
        es = self.es
        for name, n in (("st-a", 3), ("st-b", 2)):
            helpers.bulk(es, ({"_index": name, "_id": str(i), "v": i}
                              for i in range(n)), refresh=True)
        r = es.indices.stats()
        self.assertIn("st-a", r["indices"])
        self.assertIn("st-b", r["indices"])
        counts = {k: v["primaries"]["docs"]["count"]
                  for k, v in r["indices"].items()}
        self.assertEqual((counts["st-a"], counts["st-b"]), (3, 2))
        self.assertEqual(r["_all"]["primaries"]["docs"]["count"],
                         sum(counts.values()))
        r = es.indices.stats(index="st-*", metric="docs")
        self.assertEqual(sorted(r["indices"]), ["st-a", "st-b"])
        self.assertEqual(r["_all"]["primaries"]["docs"]["count"], 5)
        self.assertNotIn("store", r["_all"]["primaries"])
        self.assertEqual(r["_shards"]["total"], 2)
        for path in ("/_all/_stats/docs", "/*/_stats/docs", "/st-a,st-b/_stats/docs",
                     "/_stats/docs"):
            st, b, _ = self.req("GET", path)
            self.assertEqual(st, 200, (path, b))
            self.assertEqual(b["indices"]["st-a"]["total"]["docs"]["count"], 3)
        st, b, _ = self.req("GET", "/st-none*/_stats")
        self.assertEqual((st, b["indices"], b["_all"]["primaries"]["docs"]["count"]),
                         (200, {}, 0))
        with self.assertRaises(elasticsearch.NotFoundError):
            es.indices.stats(index="st-missing")
        with self.assertRaises(elasticsearch.RequestError):
            es.indices.stats(metric="nope")

    def test_mget(self):
        es = self.es
        es.index(index="pm", id="1", body={"x": 1, "y": {"z": 2}})
        r = es.mget(index="pm", body={"ids": ["1", "2"]})
        self.assertEqual(r["docs"], [
            {"_index": "pm", "_id": "1", "_version": 1, "_seq_no": 0,
             "_primary_term": 1, "found": True, "_source": {"x": 1, "y": {"z": 2}}},
            {"_index": "pm", "_id": "2", "found": False}])
        r = es.mget(body={"docs": [{"_index": "pm", "_id": "1", "_source": ["y.z"]},
                                   {"_index": "pm_missing", "_id": "1"}]})
        self.assertEqual(r["docs"][0]["_source"], {"y": {"z": 2}})
        self.assertEqual(r["docs"][1]["error"]["type"], "index_not_found_exception")
        r = es.mget(index="pm", body={"ids": ["1"]}, _source_excludes="y")
        self.assertEqual(r["docs"][0]["_source"], {"x": 1})

    def test_bulk_updates(self):
        es = self.es
        es.index(index="pb", id="1", body={"n": 1})
        ok, errors = helpers.bulk(es, [
            {"_op_type": "update", "_index": "pb", "_id": "1", "doc": {"m": 2}},
            {"_op_type": "update", "_index": "pb", "_id": "2", "doc": {"m": 3},
             "doc_as_upsert": True}], refresh=True)
        self.assertEqual((ok, errors), (2, []))
        self.assertEqual(es.get(index="pb", id="1")["_source"], {"n": 1, "m": 2})
        self.assertEqual(es.count(index="pb")["count"], 2)
        ok, errors = helpers.bulk(es, [
            {"_op_type": "update", "_index": "pb", "_id": "7", "doc": {"m": 3}}],
            raise_on_error=False)
        self.assertEqual(errors[0]["update"]["status"], 404)

    def test_document_side_mappings(self):
        """_source disabled, copy_to, null_value and a disabled object
        through the client's own calls."""
        es = self.es
        es.indices.create(index="pdoc", body={"mappings": {
            "_source": {"enabled": False},
            "properties": {"first": {"type": "keyword", "copy_to": "name"},
                           "last": {"type": "keyword", "copy_to": "name"},
                           "name": {"type": "keyword"},
                           "level": {"type": "keyword", "null_value": "unset"},
                           "raw": {"type": "object", "enabled": False}}}})
        es.index(index="pdoc", id="1", body={"first": "Ada", "last": "Lovelace",
                                              "level": None, "raw": {"any": [1, "x"]}},
                 refresh=True)
        doc = es.get(index="pdoc", id="1")
        self.assertTrue(doc["found"])
        self.assertNotIn("_source", doc)
        r = es.search(index="pdoc", body={"query": {"bool": {"filter": [
            {"term": {"name": "Lovelace"}}, {"term": {"level": "unset"}}]}},
            "docvalue_fields": ["name", "level"]})
        self.assertEqual(r["hits"]["hits"][0]["fields"],
                         {"name": ["Ada", "Lovelace"], "level": ["unset"]})
        self.assertEqual(es.count(index="pdoc", body={"query": {"exists": {
            "field": "raw.any"}}})["count"], 0)
        with self.assertRaises(elasticsearch.RequestError) as cm:
            es.update(index="pdoc", id="1", body={"doc": {"level": "x"}})
        self.assertEqual(cm.exception.error, "document_source_missing_exception")
        with self.assertRaises(elasticsearch.NotFoundError):
            es.get_source(index="pdoc", id="1")
        m = es.indices.get_mapping(index="pdoc")["pdoc"]["mappings"]
        self.assertEqual(m["_source"], {"enabled": False})
        self.assertEqual(m["properties"]["raw"], {"type": "object", "enabled": False})

    def test_routing_errors(self):
        with self.assertRaises(elasticsearch.RequestError) as cm:
            self.es.transport.perform_request("GET", "/_ingest/pipeline/x")
        self.assertEqual(cm.exception.info, {
            "error": "no handler found for uri [/_ingest/pipeline/x] and method [GET]"})
        with self.assertRaises(elasticsearch.TransportError) as cm:
            self.es.transport.perform_request("GET", "/pb/_update/1")
        self.assertEqual(cm.exception.status_code, 405)


if __name__ == "__main__":
    unittest.main()
