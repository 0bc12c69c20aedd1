"""Index aliases and index templates as Elasticsearch 8 answers them: alias
actions (atomic), the alias endpoints and _cat/aliases, aliases resolved in
index expressions (wildcards, hidden aliases, filtered aliases ANDed into
search and count), writes through an alias (the write index rules),
composable, component and legacy templates applied on explicit creation
and on the first write, and both kept across a restart.  The real nginx
log shipped into daily indices through a `logs-*` template is the case it
is for."""
import collections
import json
import os
import re
import unittest

from fdsserver import DATASET, Server, ServerTestCase, convert

HERE = os.path.dirname(os.path.abspath(__file__))
MAPPING = os.path.join(HERE, "..", "..", "datasets", "nginx-mapping.json")
NDJSON = {"Content-Type": "application/x-ndjson"}


class Aliases(ServerTestCase):
    def setUp(self):
        for ix in ("test_1", "test_2", "test_3"):
            self.req("DELETE", "/" + ix)
        m = {"mappings": {"properties": {"k": {"type": "keyword"},
                                         "n": {"type": "long"}}}}
        for ix in ("test_1", "test_2"):
            st, out, _ = self.req("PUT", "/" + ix, m)
            self.assertEqual(st, 200, out)
        lines = []
        for i, (ix, k) in enumerate([("test_1", "x"), ("test_1", "y"),
                                     ("test_2", "x"), ("test_2", "z")]):
            lines.append(json.dumps({"index": {"_index": ix, "_id": str(i)}}))
            lines.append(json.dumps({"k": k, "n": i}))
        st, out, _ = self.req("POST", "/_bulk?refresh=true",
                              "\n".join(lines) + "\n", NDJSON)
        self.assertFalse(out["errors"], out)

    def count(self, path, status=200):
        path, _, query = path.partition("?")
        st, out, _ = self.req("GET", path + "/_count" + ("?" + query if query else ""))
        self.assertEqual(st, status, out)
        return out.get("count")

    def test_put_get_delete(self):
        st, out, _ = self.req("GET", "/_alias/alias_1")
        self.assertEqual(st, 404)
        self.assertEqual(out["error"], "alias [alias_1] missing")
        st, out, _ = self.req("PUT", "/test_1/_alias/alias_1")
        self.assertEqual((st, out), (200, {"acknowledged": True}))
        st, _, _ = self.req("HEAD", "/_alias/alias_1")
        self.assertEqual(st, 200)
        st, _, _ = self.req("HEAD", "/_alias/nope")
        self.assertEqual(st, 404)
        st, out, _ = self.req("POST", "/test_*/_aliases/alias_2",
                              {"routing": "1", "is_hidden": False})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("GET", "/_alias/alias_*")
        self.assertEqual(out, {
            "test_1": {"aliases": {"alias_1": {},
                                   "alias_2": {"index_routing": "1",
                                               "search_routing": "1",
                                               "is_hidden": False}}},
            "test_2": {"aliases": {"alias_2": {"index_routing": "1",
                                               "search_routing": "1",
                                               "is_hidden": False}}}})
        st, out, _ = self.req("GET", "/test_2/_alias")
        self.assertEqual(list(out), ["test_2"])
        st, out, _ = self.req("GET", "/test_1")
        self.assertEqual(sorted(out["test_1"]["aliases"]), ["alias_1", "alias_2"])
        # search_routing narrows nothing with one shard per index
        self.assertEqual(self.count("/alias_2"), 4)
        st, out, _ = self.req("DELETE", "/_all/_alias/alias_*")
        self.assertEqual(st, 200, out)
        self.assertError(self.req("DELETE", "/test_1/_alias/alias_1"), 404,
                         "aliases_not_found_exception", "aliases [alias_1] missing")
        st, out, _ = self.req("GET", "/_alias")
        self.assertEqual(out["test_1"], {"aliases": {}})

    def test_actions_are_atomic(self):
        st, out, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_1", "alias": "a1"}},
            {"add": {"indices": ["test_1", "test_2"], "aliases": ["w"],
                     "is_write_index": True}}]})
        self.assertError((st, out, json.dumps(out).encode()), 400,
                         "illegal_argument_exception")
        self.assertIn("more than one write index", out["error"]["reason"])
        self.assertEqual(self.req("HEAD", "/_alias/a1")[0], 404)
        st, out, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_1", "alias": "a1"}},
            {"remove": {"index": "test_1", "alias": "nope", "must_exist": True}}]})
        self.assertEqual(st, 404, out)
        self.assertEqual(out["error"]["type"], "aliases_not_found_exception")
        self.assertEqual(self.req("HEAD", "/_alias/a1")[0], 404)
        st, out, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_1", "alias": "a1"}},
            {"remove": {"index": "test_1", "alias": "nope", "must_exist": False}},
            {"add": {"index": "test_2", "alias": "a1"}},
            {"remove": {"index": "test_2", "alias": "a1"}}]})
        self.assertEqual((st, out), (200, {"acknowledged": True, "errors": False}))
        st, out, _ = self.req("GET", "/_alias/a1")
        self.assertEqual(list(out), ["test_1"])
        # remove_index deletes the index with its aliases
        self.req("PUT", "/test_3")
        st, out, _ = self.req("POST", "/_aliases", {"actions": [
            {"remove_index": {"index": "test_3"}}]})
        self.assertEqual(st, 200, out)
        self.assertEqual(self.req("HEAD", "/test_3")[0], 404)
        self.req("DELETE", "/test_1/_alias/a1")

    def test_names(self):
        self.assertError(self.req("PUT", "/test_1/_alias/test_2"), 400,
                         "invalid_alias_name_exception")
        self.assertError(self.req("PUT", "/test_1/_alias/_bad"), 400,
                         "invalid_alias_name_exception")
        self.req("PUT", "/test_1/_alias/taken")
        try:
            body = self.assertError(self.req("PUT", "/taken"), 400,
                                    "invalid_index_name_exception")
            self.assertIn("already exists as alias", body["error"]["reason"])
            # deleting an index by an alias's name is refused; wildcards
            # match index names only
            self.assertError(self.req("DELETE", "/taken"), 400,
                             "illegal_argument_exception")
            # (wildcard deletes need action.destructive_requires_name false)
            self.req("PUT", "/_cluster/settings",
                     {"transient": {"action.destructive_requires_name": False}})
            self.assertEqual(self.req("DELETE", "/take*")[0], 200)
            self.assertError(self.req("DELETE", "/test_1,take*?allow_no_indices=false"),
                             404, "index_not_found_exception")
            self.req("PUT", "/_cluster/settings",
                     {"transient": {"action.destructive_requires_name": None}})
            self.assertEqual(self.req("HEAD", "/test_1")[0], 200)
        finally:
            self.req("DELETE", "/test_1/_alias/taken")
        self.assertError(self.req("PUT", "/nope/_alias/a"), 404,
                         "index_not_found_exception")
        self.assertError(self.req("GET", "/_alias?bogus=1"), 400,
                         "illegal_argument_exception")
        self.assertError(self.req("GET", "/_cat/templates?bogus=1"), 400,
                         "illegal_argument_exception")
        self.assertError(self.req("PUT", "/test_1/_alias/a",
                                  {"filter": {"nosuchquery": {}}}), 400,
                         "illegal_argument_exception")

    def test_filtered_alias_and_resolution(self):
        st, out, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_*", "alias": "only_x",
                     "filter": {"term": {"k": "x"}}}},
            {"add": {"index": "test_1", "alias": "plain"}},
            {"add": {"index": "test_2", "alias": ".hidden_a", "is_hidden": True}}]})
        self.assertEqual(st, 200, out)
        try:
            self.assertEqual(self.count("/only_x"), 2)
            st, out, _ = self.req("POST", "/only_x/_search",
                                  {"query": {"range": {"n": {"gte": 1}}}})
            self.assertEqual([h["_id"] for h in out["hits"]["hits"]], ["2"])
            # reached directly too: the filter does not apply to that index
            self.assertEqual(self.count("/only_x,test_1"), 3)
            self.assertEqual(self.count("/plain,test_2"), 4)
            self.assertEqual(self.count("/only*"), 2)
            self.assertEqual(self.count("/.hidden_a"), 2)
            self.assertEqual(self.count("/*hidden_a"), 0)
            self.assertEqual(self.count("/*hidden_a?expand_wildcards=all"), 2)
            self.assertEqual(self.count("/plain,nope?ignore_unavailable=true"), 2)
            self.count("/nope_alias", status=404)
            # msearch and single-document reads through an alias
            st, out, _ = self.req("POST", "/_msearch",
                                  '{"index":"only_x"}\n{}\n', NDJSON)
            self.assertEqual(out["responses"][0]["hits"]["total"]["value"], 2)
            st, out, _ = self.req("GET", "/plain/_doc/1")
            self.assertEqual((st, out["_index"]), (200, "test_1"))
            st, out, _ = self.req("GET", "/_mget", {"docs": [
                {"_index": "plain", "_id": "0"}, {"_index": "only_x", "_id": "0"}]})
            self.assertTrue(out["docs"][0]["found"])
            self.assertIn("more than one index", out["docs"][1]["error"]["reason"])
            st, out, _ = self.req("POST", "/plain/_refresh")
            self.assertEqual(st, 200, out)
            st, out, _ = self.req("GET", "/_cat/indices/plain?h=index")
            self.assertEqual(out.split(), ["test_1"])
        finally:
            self.req("DELETE", "/_all/_alias/*")

    def test_writes_through_alias(self):
        self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_1", "alias": "one"}},
            {"add": {"index": "test_*", "alias": "two"}},
            {"add": {"index": "test_1", "alias": "off", "is_write_index": False}},
            {"add": {"index": "test_*", "alias": "w"}},
            {"add": {"index": "test_2", "alias": "w", "is_write_index": True}},
            {"add": {"index": "test_1", "alias": "routed", "index_routing": "r"}}]})
        try:
            st, out, _ = self.req("PUT", "/one/_doc/n1?refresh=true", {"k": "q"})
            self.assertEqual((st, out["_index"]), (201, "test_1"))
            st, out, _ = self.req("PUT", "/w/_doc/n2?refresh=true", {"k": "q"})
            self.assertEqual((st, out["_index"]), (201, "test_2"))
            st, out, _ = self.req("POST", "/w/_update/n2?refresh=true",
                                  {"doc": {"k": "r"}})
            self.assertEqual((st, out["_index"]), (200, "test_2"))
            for alias in ("two", "off"):
                body = self.assertError(self.req("PUT", "/%s/_doc/n3" % alias,
                                                 {"k": "q"}), 400,
                                        "illegal_argument_exception")
                self.assertEqual(body["error"]["reason"],
                                 "no write index is defined for alias [%s]. The "
                                 "write index may be explicitly disabled using "
                                 "is_write_index=false or the alias points to "
                                 "multiple indices without one being designated "
                                 "as a write index" % alias)
            body = self.assertError(self.req("PUT", "/routed/_doc/n4", {"k": "q"}),
                                    400, "illegal_argument_exception")
            self.assertIn("index_routing", body["error"]["reason"])
            st, out, _ = self.req("POST", "/_bulk?refresh=true",
                                  '{"index":{"_index":"w","_id":"b1"}}\n{"k":"q"}\n'
                                  '{"index":{"_index":"two","_id":"b2"}}\n{"k":"q"}\n'
                                  '{"delete":{"_index":"w","_id":"n2"}}\n',
                                  NDJSON)
            items = out["items"]
            self.assertEqual(items[0]["index"]["_index"], "test_2")
            self.assertEqual(items[1]["index"]["status"], 400)
            self.assertEqual(items[2]["delete"]["result"], "deleted")
            st, out, _ = self.req("DELETE", "/one/_doc/n1")
            self.assertEqual((st, out["_index"]), (200, "test_1"))
            st, out, _ = self.req("PUT", "/two/_doc/x?require_alias=true", {"k": 1})
            self.assertEqual(st, 400)  # an alias, but no write index
            st, out, _ = self.req("PUT", "/one/_doc/x?require_alias=true", {"k": "q"})
            self.assertEqual(st, 201, out)
        finally:
            self.req("DELETE", "/_all/_alias/*")

    def test_indices_boost(self):
        self.req("PUT", "/test_1/_alias/b1")
        try:
            for boost, first in (([{"test_1": 2.0}, {"test_2": 1.0}], "test_1"),
                                 ([{"b1": 1.0}, {"test_*": 3.0}], "test_2"),
                                 ({"*_1": 3.0}, "test_1")):
                st, out, _ = self.req("POST", "/test_*/_search", {
                    "query": {"term": {"k": "x"}}, "indices_boost": boost})
                self.assertEqual(st, 200, out)
                self.assertEqual(out["hits"]["hits"][0]["_index"], first, boost)
            # no query: the match_all scores are boosted too
            for boost, first in (([{"test_2": 2.0}], "test_2"),
                                 ([{"test_1": 2.0}], "test_1")):
                st, out, _ = self.req("POST", "/test_*/_search",
                                      {"indices_boost": boost})
                self.assertEqual(out["hits"]["hits"][0]["_index"], first, boost)
                self.assertEqual(out["hits"]["max_score"], 2.0)
            st, out, _ = self.req("POST", "/test_*/_search",
                                  {"indices_boost": [{"nope": 2.0}]})
            self.assertEqual(st, 404, out)
            st, out, _ = self.req("POST", "/test_*/_search?ignore_unavailable=true",
                                  {"indices_boost": [{"nope": 2.0}]})
            self.assertEqual(st, 200, out)
        finally:
            self.req("DELETE", "/test_1/_alias/b1")

    def test_cat_aliases(self):
        self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": "test_1", "alias": "c1",
                     "filter": {"term": {"k": "x"}}, "routing": "3"}},
            {"add": {"index": "test_2", "alias": "c2", "is_write_index": True}}]})
        try:
            st, out, _ = self.req("GET", "/_cat/aliases?v")
            lines = [l.split() for l in out.strip().split("\n")]
            self.assertEqual(lines[0], ["alias", "index", "filter", "routing.index",
                                        "routing.search", "is_write_index"])
            self.assertEqual(lines[1:], [["c1", "test_1", "*", "3", "3", "-"],
                                         ["c2", "test_2", "-", "-", "-", "true"]])
            st, out, _ = self.req("GET", "/_cat/aliases/c2?format=json&h=alias,index")
            self.assertEqual(out, [{"alias": "c2", "index": "test_2"}])
        finally:
            self.req("DELETE", "/_all/_alias/*")

    def test_create_index_with_aliases(self):
        st, out, _ = self.req("PUT", "/test_3", {
            "mappings": {"properties": {"k": {"type": "keyword"}}},
            "aliases": {"t3": {"filter": {"term": {"k": "a"}}},
                        "t3w": {"is_write_index": True}}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("GET", "/test_3/_alias")
        self.assertEqual(out, {"test_3": {"aliases": {
            "t3": {"filter": {"term": {"k": "a"}}},
            "t3w": {"is_write_index": True}}}})
        self.req("DELETE", "/test_3")
        self.assertEqual(self.req("HEAD", "/_alias/t3")[0], 404)
        self.assertError(self.req("PUT", "/test_3", {"aliases": {"bad": {"nope": 1}}}),
                         400, "parse_exception")
        self.assertEqual(self.req("HEAD", "/test_3")[0], 404)


class Templates(ServerTestCase):
    def tearDown(self):
        for path in ("/_index_template/*", "/_template/*"):
            self.req("DELETE", path)
        self.req("DELETE", "/_component_template/*")
        st, out, _ = self.req("GET", "/_cat/indices?h=index&expand_wildcards=all")
        for ix in (out or "").split():
            self.req("DELETE", "/" + ix)

    def test_composable(self):
        st, out, _ = self.req("PUT", "/_component_template/base", {"template": {
            "settings": {"number_of_replicas": 0},
            "mappings": {"properties": {"a": {"type": "keyword"},
                                        "o": {"properties": {"x": {"type": "long"}}}}}}})
        self.assertEqual((st, out), (200, {"acknowledged": True}))
        st, out, _ = self.req("PUT", "/_index_template/t1", {
            "index_patterns": ["app-*"], "priority": 10, "composed_of": ["base"],
            "version": 3, "_meta": {"owner": "ops"},
            "template": {"settings": {"index.refresh_interval": "5s"},
                         "mappings": {"properties": {
                             "a": {"type": "text"},
                             "o": {"properties": {"y": {"type": "keyword"}}}}},
                         "aliases": {"apps": {}}}})
        self.assertEqual(st, 200, out)
        # overlapping patterns with the same priority
        body = self.assertError(self.req("PUT", "/_index_template/t2", {
            "index_patterns": ["app-x*"], "priority": 10}), 400,
            "illegal_argument_exception")
        self.assertIn("same priority [10]", body["error"]["reason"])
        st, out, _ = self.req("PUT", "/_index_template/t2", {
            "index_patterns": ["app-x*"], "priority": 20,
            "template": {"mappings": {"properties": {"z": {"type": "long"}}}}})
        self.assertEqual(st, 200, out)
        self.assertError(self.req("PUT", "/_index_template/bad", {
            "index_patterns": ["b*"], "composed_of": ["nope"]}), 400,
            "illegal_argument_exception")
        self.assertError(self.req("PUT", "/_index_template/bad", {
            "index_patterns": ["b*"],
            "template": {"settings": {"index.codec": "nope"}}}), 400,
            "illegal_argument_exception")
        self.assertError(self.req("PUT", "/_index_template/bad", {
            "index_patterns": ["b*"],
            "template": {"mappings": {"properties": {"f": {"type": "nope"}}}}}), 400,
            "mapper_parsing_exception")
        self.assertError(self.req("PUT", "/_index_template/bad", {
            "index_patterns": ["b*"], "data_stream": {}}), 400,
            "illegal_argument_exception")
        # explicit creation: the body wins over the template
        st, out, _ = self.req("PUT", "/app-1", {
            "mappings": {"properties": {"b": {"type": "long"}}},
            "settings": {"index": {"refresh_interval": "2s"}}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("GET", "/app-1")
        ix = out["app-1"]
        self.assertEqual(ix["mappings"]["properties"]["a"], {"type": "text"})
        self.assertEqual(ix["mappings"]["properties"]["b"], {"type": "long"})
        self.assertEqual(ix["mappings"]["properties"]["o"]["properties"],
                         {"x": {"type": "long"}, "y": {"type": "keyword"}})
        self.assertEqual(ix["settings"]["index"]["refresh_interval"], "2s")
        self.assertEqual(ix["aliases"], {"apps": {}})
        # the first write: the higher priority template only
        st, out, _ = self.req("PUT", "/app-x1/_doc/1?refresh=true", {"z": 1})
        self.assertEqual(st, 201, out)
        st, out, _ = self.req("GET", "/app-x1/_mapping")
        self.assertEqual(out["app-x1"]["mappings"]["properties"], {"z": {"type": "long"}})
        st, out, _ = self.req("GET", "/_index_template/t*")
        names = [t["name"] for t in out["index_templates"]]
        self.assertEqual(names, ["t1", "t2"])
        t1 = out["index_templates"][0]["index_template"]
        self.assertEqual((t1["priority"], t1["version"], t1["composed_of"]),
                         (10, 3, ["base"]))
        self.assertEqual(self.req("HEAD", "/_index_template/t1")[0], 200)
        self.assertEqual(self.req("HEAD", "/_index_template/t9")[0], 404)
        self.assertError(self.req("GET", "/_index_template/t9"), 404,
                         "resource_not_found_exception")
        st, out, _ = self.req("POST", "/_index_template/_simulate_index/app-2")
        self.assertEqual(out["template"]["aliases"], {"apps": {}})
        self.assertEqual(out["template"]["settings"]["index"]["refresh_interval"], "5s")
        # a component in use stays
        self.assertError(self.req("DELETE", "/_component_template/base"), 400,
                         "illegal_argument_exception")
        st, out, _ = self.req("GET", "/_component_template/base")
        self.assertEqual(out["component_templates"][0]["name"], "base")
        st, out, _ = self.req("GET", "/_cat/templates?v&s=name")
        rows = [l.split(None, 4) for l in out.strip().split("\n")]
        self.assertEqual(rows[0], ["name", "index_patterns", "order", "version",
                                   "composed_of"])
        self.assertEqual(rows[1], ["t1", "[app-*]", "10", "3", "[base]"])
        self.assertEqual(self.req("DELETE", "/_index_template/t1")[0], 200)
        self.assertError(self.req("DELETE", "/_index_template/t1"), 404,
                         "resource_not_found_exception")

    def test_legacy(self):
        st, out, _ = self.req("PUT", "/_template/l1", {
            "index_patterns": ["old-*"], "order": 1,
            "settings": {"number_of_replicas": 0, "index.refresh_interval": "3s"},
            "mappings": {"properties": {"a": {"type": "keyword"}}},
            "aliases": {"olds": {}}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("PUT", "/_template/l0", {
            "index_patterns": ["old-*"], "order": 0,
            "settings": {"index.refresh_interval": "9s"},
            "mappings": {"properties": {"a": {"type": "long"},
                                        "b": {"type": "long"}}}})
        self.assertEqual(st, 200, out)
        st, out, _ = self.req("POST", "/_bulk?refresh=true",
                              '{"index":{"_index":"old-1"}}\n{"a":"v","b":2}\n',
                              NDJSON)
        self.assertFalse(out["errors"], out)
        st, out, _ = self.req("GET", "/old-1")
        ix = out["old-1"]
        self.assertEqual(ix["mappings"]["properties"],
                         {"a": {"type": "keyword"}, "b": {"type": "long"}})
        self.assertEqual(ix["settings"]["index"]["refresh_interval"], "3s")
        self.assertEqual(ix["aliases"], {"olds": {}})
        st, out, _ = self.req("GET", "/_template/l1")
        self.assertEqual(out["l1"]["order"], 1)
        self.assertEqual(out["l1"]["index_patterns"], ["old-*"])
        # a composable template that matches wins over every legacy one
        self.req("PUT", "/_index_template/c", {"index_patterns": ["old-c*"]})
        self.req("PUT", "/old-c1")
        st, out, _ = self.req("GET", "/old-c1/_mapping")
        self.assertEqual(out["old-c1"]["mappings"], {})
        st, out, _ = self.req("GET", "/_template/nope")
        self.assertEqual((st, out), (404, {}))
        self.assertEqual(self.req("HEAD", "/_template/l0")[0], 200)
        self.assertEqual(self.req("DELETE", "/_template/l0")[0], 200)
        self.assertError(self.req("DELETE", "/_template/l0"), 404,
                         "index_template_missing_exception")


class Persistence(unittest.TestCase):
    """Aliases and templates are catalogue rows: a restart keeps them."""

    def test_restart(self):
        srv = Server().start()
        try:
            srv.request("PUT", "/p1", {"mappings": {"properties": {
                "k": {"type": "keyword"}}}})
            srv.request("PUT", "/p1/_alias/pa", {"filter": {"term": {"k": "a"}}})
            srv.request("PUT", "/_index_template/pt",
                        {"index_patterns": ["pt-*"], "template": {
                            "mappings": {"properties": {"n": {"type": "long"}}}}})
            srv.request("PUT", "/_template/plt", {"index_patterns": ["x-*"]})
            srv.request("PUT", "/p1/_doc/1?refresh=true", {"k": "a"})
            srv.request("PUT", "/p1/_doc/2?refresh=true", {"k": "b"})
            srv.kill9()
            srv.start()
            st, out, _ = srv.request("GET", "/pa/_count")
            self.assertEqual((st, out["count"]), (200, 1))
            st, out, _ = srv.request("GET", "/_index_template/pt")
            self.assertEqual(st, 200, out)
            st, out, _ = srv.request("GET", "/_template/plt")
            self.assertEqual(st, 200, out)
            srv.request("PUT", "/pt-1/_doc/1", {"n": 5})
            st, out, _ = srv.request("GET", "/pt-1/_mapping")
            self.assertEqual(out["pt-1"]["mappings"]["properties"]["n"],
                             {"type": "long"})
            srv.request("DELETE", "/p1")
            srv.stop()
            srv.start()
            st, out, _ = srv.request("HEAD", "/_alias/pa")
            self.assertEqual(st, 404)
        finally:
            srv.cleanup()


class DailyLogs(ServerTestCase):
    """The bundled real log shipped into daily (and hourly) indices with
    _bulk, a composable `logs-*` template carrying the nginx mapping."""

    def test_daily_indices_take_the_template(self):
        with open(MAPPING) as f:
            mapping = json.load(f)
        st, out, _ = self.req("PUT", "/_index_template/logs", {
            "index_patterns": ["logs-*"], "priority": 1,
            "template": {"mappings": mapping, "aliases": {"logs": {}}}})
        self.assertEqual(st, 200, out)
        # expected counts from the log file itself: [22/Jan/2019:03:56:14 +0330]
        months = {m: i + 1 for i, m in enumerate(
            "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}
        want_day, want_hour = collections.Counter(), collections.Counter()
        stamp = re.compile(r"\[(\d\d)/(\w\w\w)/(\d{4}):(\d\d):")
        with open(DATASET, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = stamp.search(line)
                if m:
                    day = "%s.%02d.%s" % (m.group(3), months[m.group(2)], m.group(1))
                    want_day["logs-" + day] += 1
                    want_hour["logs-%s.%s" % (day, m.group(4))] += 1
        docs = convert("json").decode().splitlines()
        self.assertEqual(len(docs), sum(want_day.values()))
        # the log spans 40 minutes of one day: daily indices, then hourly
        # ones (logs-YYYY.MM.DD.HH) to have several through the template
        for want, cut in ((want_day, 10), (want_hour, 13)):
            for at in range(0, len(docs), 2500):
                lines = []
                for d in docs[at:at + 2500]:
                    ts = json.loads(d)["@timestamp"]  # 2019-01-22T03:56:14+03:30
                    suffix = ts[:cut].replace("-", ".").replace("T", ".")
                    lines.append(json.dumps({"index": {"_index": "logs-" + suffix}}))
                    lines.append(d)
                st, out, _ = self.req("POST", "/_bulk", "\n".join(lines) + "\n",
                                      NDJSON)
                self.assertEqual(st, 200)
                self.assertFalse(out["errors"], str(out)[:300])
            self.req("POST", "/logs-*/_refresh")
            st, maps, _ = self.req("GET", "/logs-*/_mapping")
            for ix, n in want.items():
                self.assertIn(ix, maps)
                props = maps[ix]["mappings"]["properties"]
                for field, spec in mapping["properties"].items():
                    self.assertEqual(props[field]["type"], spec["type"], (ix, field))
                st, out, _ = self.req("GET", "/%s/_count" % ix)
                self.assertEqual(out["count"], n, ix)
        self.assertGreater(len(want_hour), 1)
        st, out, _ = self.req("GET", "/logs/_count")
        self.assertEqual(out["count"], 2 * len(docs))
        st, out, _ = self.req("GET", "/_cat/aliases/logs?h=index&s=index")
        self.assertEqual(sorted(out.split()), sorted(list(want_day) + list(want_hour)))


if __name__ == "__main__":
    unittest.main()
