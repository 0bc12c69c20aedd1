"""Mapping limits (Elasticsearch's index.mapping.total_fields.limit,
index.mapping.depth.limit and index.mapping.field_name_length.limit):
enforced where the mapping grows -- dynamic mapping on index and _bulk
(per item), PUT _mapping and index creation -- with Elasticsearch's 400
illegal_argument_exception texts, and dynamic (PUT _settings changes them
on an open index).  A refused document adds no field."""
import json
import unittest

from fdsserver import ServerTestCase


def fields(n, prefix="f"):
    return {"%s%d" % (prefix, i): i for i in range(n)}


def mapped(body, index):
    return set(body[index]["mappings"].get("properties", {}))


class MappingLimits(ServerTestCase):
    LIMIT = "Limit of total fields [%d] has been exceeded"

    def create(self, name, settings, mappings=None):
        body = {"settings": settings}
        if mappings is not None:
            body["mappings"] = mappings
        st, out, _ = self.req("PUT", "/" + name, body)
        self.assertEqual(st, 200, out)

    def test_default_limit_is_1000(self):
        self.create("lim_default", {})
        self.assertError(self.req("PUT", "/lim_default/_doc/1", fields(1001)), 400,
                         "illegal_argument_exception", self.LIMIT % 1000)
        st, out, _ = self.req("GET", "/lim_default/_mapping")
        self.assertEqual(mapped(out, "lim_default"), set())  # nothing added
        st, out, _ = self.req("PUT", "/lim_default/_doc/1", fields(1000))
        self.assertEqual(st, 201, out)

    def test_100k_field_document_is_refused(self):
        doc = json.dumps(fields(100000)).encode()
        self.assertError(self.req("PUT", "/lim_huge/_doc/1", doc), 400,
                         "illegal_argument_exception", self.LIMIT % 1000)
        st, out, _ = self.req("GET", "/lim_huge/_mapping")
        self.assertEqual(st, 200, out)
        self.assertEqual(mapped(out, "lim_huge"), set())
        self.assertEqual(self.req("GET", "/lim_huge/_doc/1")[0], 404)

    def test_index_bulk_and_dynamic_setting(self):
        self.create("lim_dyn", {"index.mapping.total_fields.limit": 5})
        self.assertError(self.req("PUT", "/lim_dyn/_doc/1", fields(6)), 400,
                         "illegal_argument_exception", self.LIMIT % 5)
        # a text field counts twice (its keyword multi-field), an object once
        self.assertError(self.req("PUT", "/lim_dyn/_doc/1",
                                  {"a": "x", "b": "y", "o": {"c": 1}}), 400,
                         "illegal_argument_exception", self.LIMIT % 5)
        bulk = ("".join('{"index":{"_index":"lim_dyn","_id":"%d"}}\n%s\n'
                        % (i, json.dumps(d)) for i, d in
                        enumerate([fields(3), fields(6, "g"), fields(5)])))
        st, out, _ = self.req("POST", "/_bulk?refresh=true", bulk,
                              headers={"Content-Type": "application/x-ndjson"})
        self.assertEqual(st, 200, out)
        self.assertTrue(out["errors"])
        items = [it["index"] for it in out["items"]]
        self.assertEqual([it["status"] for it in items], [201, 400, 201], out)
        self.assertEqual(items[1]["error"]["type"], "illegal_argument_exception")
        self.assertEqual(items[1]["error"]["reason"], self.LIMIT % 5)
        # the setting is dynamic: raised, the same document is accepted
        st, out, _ = self.req("PUT", "/lim_dyn/_settings",
                              {"index": {"mapping.total_fields.limit": 11}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("GET", "/lim_dyn/_settings")
        self.assertEqual(out["lim_dyn"]["settings"]["index"]["mapping"]
                         ["total_fields"]["limit"], "11")
        st, out, _ = self.req("PUT", "/lim_dyn/_doc/9", fields(6, "g"))
        self.assertEqual(st, 201, out)
        self.assertError(self.req("PUT", "/lim_dyn/_settings",
                                  {"index.mapping.total_fields.limit": "x"}), 400,
                         "illegal_argument_exception")

    def test_put_mapping_and_creation(self):
        props = {"properties": {"p%d" % i: {"type": "long"} for i in range(4)}}
        self.assertError(self.req("PUT", "/lim_create", {
            "settings": {"index.mapping.total_fields.limit": 3}, "mappings": props}),
            400, "illegal_argument_exception", self.LIMIT % 3)
        self.assertEqual(self.req("HEAD", "/lim_create")[0], 404)
        self.create("lim_put", {"index.mapping.total_fields.limit": 4}, props)
        self.assertError(self.req("PUT", "/lim_put/_mapping", {
            "properties": {"q": {"type": "keyword"}}}), 400,
            "illegal_argument_exception", self.LIMIT % 4)
        st, out, _ = self.req("GET", "/lim_put/_mapping")
        self.assertNotIn("q", mapped(out, "lim_put"))

    def test_depth_limit(self):
        self.create("lim_depth", {"index.mapping.depth.limit": 2})
        st, out, _ = self.req("PUT", "/lim_depth/_doc/1", {"a": {"b": {"c": 1}}})
        self.assertEqual(st, 201, out)
        self.assertError(self.req("PUT", "/lim_depth/_doc/2", {"p": {"q": {"r": {"s": 1}}}}),
                         400, "illegal_argument_exception",
                         "Limit of mapping depth [2] has been exceeded due to "
                         "object field [p.q.r]")
        self.assertError(self.req("PUT", "/lim_depth/_mapping", {"properties": {
            "x": {"properties": {"y": {"properties": {"z": {"properties": {
                "w": {"type": "long"}}}}}}}}}),
            400, "illegal_argument_exception",
            "Limit of mapping depth [2] has been exceeded due to object field [x.y.z]")
        st, out, _ = self.req("PUT", "/lim_depth/_settings", {"index.mapping.depth.limit": 3})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("PUT", "/lim_depth/_doc/2", {"p": {"q": {"r": {"s": 1}}}})
        self.assertEqual(st, 201, out)
        self.assertError(self.req("PUT", "/lim_depth/_settings",
                                  {"index.mapping.depth.limit": 21}), 400,
                         "illegal_argument_exception")

    def test_field_name_length_limit(self):
        self.create("lim_name", {"index.mapping.field_name_length.limit": 5})
        self.assertError(self.req("PUT", "/lim_name/_doc/1", {"o": {"abcdef": 1}}), 400,
                         "illegal_argument_exception",
                         "Field name [abcdef] is longer than the limit of [5] characters")
        st, out, _ = self.req("PUT", "/lim_name/_doc/1", {"o": {"abcde": 1}})
        self.assertEqual(st, 201, out)


if __name__ == "__main__":
    unittest.main()
