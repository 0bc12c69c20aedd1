"""What Kibana asks before it shows anything, as Elasticsearch 8 answers it:
`_field_caps` over indices that disagree on a field's type (wildcards in
index and field names, metadata fields, object parents, unmapped fields,
filters and types), and `_async_search` (an answer within the timeout,
a stored one with its id, GET, status, DELETE and expiry); then the same
calls through Debian's official Python client (python3-elasticsearch 7.17;
that part is skipped when the package is missing)."""
import json
import time
import unittest
import warnings

from fdsserver import ServerTestCase

try:
    import elasticsearch
    from elasticsearch import Elasticsearch
except ImportError:  # pragma: no cover
    elasticsearch = None

META = {  # name: (searchable, aggregatable), Elasticsearch 8.11's mappers
    "_id": (True, False), "_index": (True, True), "_source": (False, False),
    "_version": (False, True), "_seq_no": (True, True), "_routing": (True, False),
    "_ignored": (True, False), "_doc_count": (False, False),
    "_field_names": (True, False), "_data_stream_timestamp": (False, False),
    "_feature": (False, False), "_nested_path": (True, False), "_tier": (True, True),
}
DOCS = 30


def load(srv):
    """Two indices that disagree on `status` and `msg`; DOCS documents in
    caps-a."""
    maps = {
        "caps-a": {"properties": {
            "status": {"type": "keyword"},
            "msg": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
            "geo": {"properties": {"city": {"type": "keyword"},
                                   "lat": {"type": "double"}}},
            "ts": {"type": "date"}}},
        "caps-b": {"properties": {
            "status": {"type": "long"},
            "msg": {"type": "text", "index": False},
            "ts": {"type": "date"},
            "ok": {"type": "boolean"}}},
    }
    for name, m in maps.items():
        st, body, _ = srv.request("PUT", "/" + name, {"mappings": m})
        assert st == 200, body
    lines = []
    for i in range(DOCS):
        lines.append(json.dumps({"index": {"_index": "caps-a", "_id": str(i)}}))
        lines.append(json.dumps({"status": "s%d" % (i % 3), "msg": "get page %d" % i,
                                 "geo": {"city": "c%d" % (i % 2), "lat": i / 2},
                                 "ts": 1700000000000 + i}))
    st, body, _ = srv.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                              {"Content-Type": "application/x-ndjson"})
    assert st == 200 and not body["errors"], str(body)[:400]


class FieldCapsAsync(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        load(cls.srv)

    def caps(self, path, status=200, body=None):
        st, out, _ = self.req("POST" if body else "GET", path, body)
        self.assertEqual(st, status, out)
        return out

    # ---- _field_caps -----------------------------------------------------

    def test_conflicting_types(self):
        out = self.caps("/caps-*/_field_caps?fields=status,msg,ts")
        self.assertEqual(out["indices"], ["caps-a", "caps-b"])
        f = out["fields"]
        self.assertEqual(f["status"], {
            "keyword": {"type": "keyword", "metadata_field": False, "searchable": True,
                        "aggregatable": True, "indices": ["caps-a"]},
            "long": {"type": "long", "metadata_field": False, "searchable": True,
                     "aggregatable": True, "indices": ["caps-b"]}})
        # one type: no indices; caps-b's msg is not indexed
        self.assertEqual(f["msg"], {"text": {
            "type": "text", "metadata_field": False, "searchable": False,
            "aggregatable": False, "non_searchable_indices": ["caps-b"]}})
        self.assertEqual(f["ts"], {"date": {
            "type": "date", "metadata_field": False, "searchable": True,
            "aggregatable": True}})

    def test_wildcards_parents_multifields(self):
        out = self.caps("/caps-a/_field_caps?fields=geo*,msg*")
        self.assertEqual(sorted(out["fields"]), ["geo", "geo.city", "geo.lat", "msg", "msg.raw"])
        self.assertEqual(out["fields"]["geo"]["object"],
                         {"type": "object", "metadata_field": False,
                          "searchable": False, "aggregatable": False})
        self.assertTrue(out["fields"]["msg.raw"]["keyword"]["aggregatable"])
        self.assertFalse(out["fields"]["msg"]["text"]["aggregatable"])
        out = self.caps("/caps-a/_field_caps?fields=*&filters=-parent,-multifield,-metadata")
        self.assertEqual(sorted(out["fields"]), ["geo.city", "geo.lat", "msg", "status", "ts"])
        out = self.caps("/caps-*/_field_caps?fields=*&types=keyword,boolean")
        self.assertEqual(sorted(out["fields"]), ["geo.city", "msg.raw", "ok", "status"])
        self.assertEqual(list(out["fields"]["status"]), ["keyword"])
        # the fields in the body, as Kibana sends them
        out = self.caps("/caps-b/_field_caps", body={"fields": ["o*"]})
        self.assertEqual(list(out["fields"]), ["ok"])

    def test_metadata_fields(self):
        out = self.caps("/caps-a/_field_caps?fields=_*")
        self.assertEqual(sorted(out["fields"]), sorted(META))
        for name, (s, a) in META.items():
            self.assertEqual(out["fields"][name], {name: {
                "type": name, "metadata_field": True, "searchable": s,
                "aggregatable": a}})
        out = self.caps("/caps-a/_field_caps?fields=*&filters=%2Bmetadata")
        self.assertEqual(sorted(out["fields"]), sorted(META))

    def test_unmapped(self):
        out = self.caps("/caps-a,caps-b/_field_caps?fields=ok,geo.city,ts&include_unmapped=true")
        self.assertEqual(out["fields"]["ok"]["unmapped"],
                         {"type": "unmapped", "metadata_field": False, "searchable": False,
                          "aggregatable": False, "indices": ["caps-a"]})
        self.assertEqual(out["fields"]["ok"]["boolean"]["indices"], ["caps-b"])
        self.assertEqual(out["fields"]["geo.city"]["unmapped"]["indices"], ["caps-b"])
        self.assertNotIn("unmapped", out["fields"]["ts"])
        out = self.caps("/caps-a,caps-b/_field_caps?fields=ok")
        self.assertEqual(out["fields"]["ok"], {"boolean": {
            "type": "boolean", "metadata_field": False, "searchable": True,
            "aggregatable": True}})

    def test_index_expressions_and_errors(self):
        out = self.caps("/nomatch-*/_field_caps?fields=*")
        self.assertEqual(out, {"indices": [], "fields": {}})
        self.assertError(self.req("GET", "/missing/_field_caps?fields=*"), 404,
                         "index_not_found_exception")
        out = self.caps("/missing,caps-b/_field_caps?fields=ok&ignore_unavailable=true")
        self.assertEqual(out["indices"], ["caps-b"])
        self.assertError(self.req("GET", "/_field_caps"), 400,
                         "action_request_validation_exception")
        self.assertError(self.req("GET", "/_field_caps?fields=*&filters=-bogus"), 400,
                         "illegal_argument_exception")
        # index_filter keeps the indices with a matching document (caps-b
        # has none)
        out = self.caps("/caps-*/_field_caps", body={
            "fields": ["*"], "index_filter": {"match_all": {}}})
        self.assertEqual(out["indices"], ["caps-a"])
        self.assertError(self.req("GET", "/_field_caps?fields=*&bogus=1"), 400,
                         "illegal_argument_exception")
        # include_empty_fields=false drops the mapped fields without values
        # (caps-b has no documents)
        self.assertEqual(self.caps("/caps-b/_field_caps?fields=ok&include_empty_fields=true"),
                         self.caps("/caps-b/_field_caps?fields=ok"))
        self.assertIn("ok", self.caps("/caps-b/_field_caps?fields=ok")["fields"])
        self.assertEqual(self.caps("/caps-b/_field_caps?fields=ok&include_empty_fields=false"),
                         {"indices": ["caps-b"], "fields": {}})
        out = self.caps("/caps-b/_field_caps", body={
            "fields": ["rt*"], "runtime_mappings": {"rt_day": {"type": "keyword"}}})
        self.assertEqual(out["fields"]["rt_day"]["keyword"]["aggregatable"], True)

    # ---- _async_search ---------------------------------------------------

    def submit(self, path, body=None, status=200):
        st, out, _ = self.req("POST", path, body or {})
        self.assertEqual(st, status, out)
        return out

    def test_async_completes_within_timeout(self):
        out = self.submit("/caps-a/_async_search", {"query": {"match": {"msg": "page"}},
                                                    "size": 3})
        self.assertNotIn("id", out)
        self.assertEqual((out["is_partial"], out["is_running"]), (False, False))
        self.assertEqual(out["response"]["hits"]["total"], {"value": DOCS, "relation": "eq"})
        self.assertEqual(len(out["response"]["hits"]["hits"]), 3)
        self.assertLessEqual(out["start_time_in_millis"], out["completion_time_in_millis"])
        # the default keep_alive: 5 days from the start
        self.assertEqual(out["expiration_time_in_millis"] - out["start_time_in_millis"],
                         5 * 24 * 3600 * 1000)
        # aggregations and URL search parameters reach the search
        out = self.submit("/_async_search?size=0&track_total_hits=true",
                          {"aggs": {"s": {"terms": {"field": "geo.city"}}}})
        self.assertEqual(out["response"]["hits"]["hits"], [])
        self.assertEqual(sorted(b["key"] for b in
                                out["response"]["aggregations"]["s"]["buckets"]),
                         ["c0", "c1"])

    def test_async_stored_get_status_delete(self):
        out = self.submit("/caps-a/_async_search?wait_for_completion_timeout=0"
                          "&keep_on_completion=true", {"query": {"match_all": {}}})
        aid = out["id"]
        if out["is_running"]:
            self.assertTrue(out["is_partial"])
            self.assertNotIn("completion_time_in_millis", out)
        st, got, _ = self.req("GET", "/_async_search/%s?wait_for_completion_timeout=10s" % aid)
        self.assertEqual(st, 200, got)
        self.assertEqual(got["id"], aid)
        self.assertEqual((got["is_partial"], got["is_running"]), (False, False))
        self.assertEqual(got["response"]["hits"]["total"]["value"], DOCS)
        st, s, _ = self.req("GET", "/_async_search/status/%s" % aid)
        self.assertEqual(st, 200, s)
        self.assertEqual((s["id"], s["is_running"], s["completion_status"]), (aid, False, 200))
        self.assertEqual(s["_shards"]["failed"], 0)
        self.assertNotIn("response", s)
        # keep_alive on a GET moves the expiration on
        st, got2, _ = self.req("GET", "/_async_search/%s?keep_alive=2d" % aid)
        self.assertGreater(got2["expiration_time_in_millis"], got["expiration_time_in_millis"]
                           - 5 * 24 * 3600 * 1000 + 24 * 3600 * 1000)
        st, d, _ = self.req("DELETE", "/_async_search/%s" % aid)
        self.assertEqual((st, d), (200, {"acknowledged": True}))
        for m, p in (("GET", "/_async_search/%s"), ("DELETE", "/_async_search/%s"),
                     ("GET", "/_async_search/status/%s")):
            self.assertError(self.req(m, p % aid), 404, "resource_not_found_exception")

    def test_async_expiry(self):
        out = self.submit("/caps-a/_async_search?keep_on_completion=true&keep_alive=1s")
        aid = out["id"]
        self.assertEqual(out["expiration_time_in_millis"] - out["start_time_in_millis"], 1000)
        self.assertEqual(self.req("GET", "/_async_search/" + aid)[0], 200)
        time.sleep(2.5)
        self.assertError(self.req("GET", "/_async_search/" + aid), 404,
                         "resource_not_found_exception")

    def test_async_errors(self):
        for q in ("keep_alive=10ms", "keep_alive=xyz", "wait_for_completion_timeout=1x",
                  "scroll=1m", "bogus=1"):
            st, out, _ = self.req("POST", "/caps-a/_async_search?" + q, {})
            self.assertEqual(st, 400, (q, out))
        # a search that fails: its error, with the search's status
        st, out, _ = self.req("POST", "/caps-a/_async_search",
                              {"query": {"bogus": {}}})
        self.assertEqual(st, 400, out)
        self.assertEqual((out["is_running"], out["is_partial"]), (False, True))
        self.assertEqual(out["error"]["type"], "parsing_exception")
        st, out, _ = self.req("POST", "/missing/_async_search", {})
        self.assertEqual((st, out["error"]["type"]), (404, "index_not_found_exception"))


@unittest.skipIf(elasticsearch is None, "python3-elasticsearch is not installed")
class ClientFieldCapsAsync(ServerTestCase):
    """The same indices through the official client's calls."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        load(cls.srv)

    def setUp(self):
        warnings.simplefilter("ignore", DeprecationWarning)
        self.es = Elasticsearch("http://127.0.0.1:%d" % self.srv.port, timeout=60)

    def test_client(self):
        fc = self.es.field_caps(index="caps-*", fields="status,geo.*", include_unmapped=True)
        self.assertEqual(fc["indices"], ["caps-a", "caps-b"])
        self.assertEqual(sorted(fc["fields"]["status"]), ["keyword", "long"])
        self.assertEqual(fc["fields"]["geo.lat"]["unmapped"]["indices"], ["caps-b"])
        r = self.es.async_search.submit(index="caps-a", body={"query": {"match": {"msg": "page"}}},
                                        wait_for_completion_timeout="0",
                                        keep_on_completion=True)
        aid = r["id"]
        r = self.es.async_search.get(id=aid, wait_for_completion_timeout="10s")
        self.assertFalse(r["is_running"])
        self.assertEqual(r["response"]["hits"]["total"]["value"], DOCS)
        self.assertEqual(self.es.async_search.status(id=aid)["completion_status"], 200)
        self.assertEqual(self.es.async_search.delete(id=aid), {"acknowledged": True})
        with self.assertRaises(elasticsearch.NotFoundError):
            self.es.async_search.get(id=aid)


if __name__ == "__main__":
    unittest.main()
