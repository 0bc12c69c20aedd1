"""Kibana 8's own requests, replayed as Kibana writes them (keys, value
types and URL parameters), against a server loaded with the bundled nginx
log through the nginx mapping.  Each test names the Kibana source file the
body comes from (github.com/elastic/kibana, 8.x branches); every figure in
an answer is checked against values this test computes from the raw log
lines with its own parser of the combined log format (not the project's
converter).

Kibana sends its searches through the async search API (the `ese` search
strategy, src/plugins/data/server/search/strategies/ese_search/
request_utils.ts: batched_reduce_size=64, wait_for_completion_timeout=100ms,
keep_on_completion, keep_alive=1m, ignore_unavailable=true,
track_total_hits=true) and through `_search` for its server-side users (the
`es` strategy, es_search/request_utils.ts); both are replayed here."""
import datetime
import json
import os
import re
import threading
import unittest
from urllib.parse import quote

import rawlog
from fdsserver import DATASET, ServerTestCase, convert

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = DATASET if os.path.isabs(DATASET) else os.path.join(ROOT, DATASET)
MAPPING = os.path.join(ROOT, "datasets", "nginx-mapping.json")
# Unicode word boundaries (UAX#29) as the standard analyzer cuts the ASCII
# text of these fields: letters and digits joined by '.', '_' or '\''.
WORD = re.compile(r"[A-Za-z0-9_]+(?:[.'][A-Za-z0-9_]+)*")
INDEX = "nginx"
# Discover's time picker: a quarter of an hour inside the log's 40 minutes,
# as the ISO strings Kibana writes (both ends included).
GTE, LTE = "2019-01-22T00:30:00.000Z", "2019-01-22T00:45:00.000Z"
# _async_search as the ese strategy submits it (preference: the
# courier:setRequestPreference "sessionId" default, get_search_params.ts).
ASYNC = ("/%s/_async_search?batched_reduce_size=64&wait_for_completion_timeout=100ms"
         "&keep_on_completion=false&keep_alive=1m&ignore_unavailable=true"
         "&preference=1700000000000" % INDEX)
# _search as the es strategy sends it (es_search/request_utils.ts,
# es_search_strategy.ts; rest_total_hits_as_int from the legacy callers).
SYNC = ("/%s/_search?ignore_unavailable=true&preference=1700000000000"
        "&batched_reduce_size=64&ccs_minimize_roundtrips=true&timeout=30000ms" % INDEX)
# Polls of a running async search before the test gives up (each waits up
# to 100ms on the server, as Kibana's do).
POLLS_MAX = 3000
HL_PRE, HL_POST = "@kibana-highlighted-field@", "@/kibana-highlighted-field@"


def iso_ms(s):
    return int(datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp() * 1000)


def iso(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def words(s):
    return {w.lower() for w in WORD.findall(s)}


def time_range_query(must=(), filters=(), must_not=()):
    """Discover's query: data/common/es_query build_es_query.ts with the
    time filter of data/common/query/timefilter/get_time.ts."""
    return {"bool": {"must": list(must),
                     "filter": list(filters) + [{"range": {"@timestamp": {
                         "format": "strict_date_optional_time", "gte": GTE, "lte": LTE}}}],
                     "should": [], "must_not": list(must_not)}}


def discover_body(query, size=500):
    """Discover's document request: search_source.ts (flatten: fields,
    script_fields, stored_fields, runtime_mappings, _source false),
    get_sort_for_search_source.ts / get_es_query_sort.ts (the time field with
    its format, the _doc tiebreaker), normalize_sort_request.ts
    (unmapped_type from the sort:options setting), highlight.ts
    (getHighlightRequest: the @kibana-highlighted-field@ tags, fragment_size
    2147483647), discover's update_search_source.ts (version, size 500)."""
    return {
        "sort": [{"@timestamp": {"order": "desc", "format": "strict_date_optional_time",
                                 "unmapped_type": "boolean"}},
                 {"_doc": {"order": "desc", "unmapped_type": "boolean"}}],
        "fields": [{"field": "*", "include_unmapped": "true"},
                   {"field": "@timestamp", "format": "strict_date_optional_time"}],
        "size": size, "version": True, "script_fields": {}, "stored_fields": ["*"],
        "runtime_mappings": {}, "_source": False, "query": query,
        "highlight": {"pre_tags": [HL_PRE], "post_tags": [HL_POST],
                      "fields": {"*": {}}, "fragment_size": 2147483647},
        "track_total_hits": True}


def esaggs_body(aggs, query=None):
    """What Lens and visualizations send (esaggs: data/common/search/
    expressions/esaggs/request_handler.ts over search_source.ts): no hits,
    the time field in `fields`, aggregations named by column ids."""
    return {"aggs": aggs, "size": 0,
            "fields": [{"field": "@timestamp", "format": "date_time"}],
            "script_fields": {}, "stored_fields": ["*"], "runtime_mappings": {},
            "_source": {"excludes": []}, "query": query or time_range_query(),
            "track_total_hits": True}


class Kibana(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.lines = rawlog.parse(LOG)
        docs = convert("json", src=LOG).decode().splitlines()
        assert len(docs) == len(cls.lines), (len(docs), len(cls.lines))
        with open(MAPPING) as f:
            st, body, _ = cls.srv.request("PUT", "/" + INDEX, {"mappings": json.load(f)})
        assert st == 200, body
        bulk = convert("bulk", index=INDEX)
        st, body, _ = cls.srv.request("POST", "/_bulk?refresh=true", bulk,
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and not body["errors"], str(body)[:400]
        lo, hi = iso_ms(GTE), iso_ms(LTE)
        cls.window = [d for d in cls.lines if lo <= d["t"] <= hi]
        assert 1000 < len(cls.window) < len(cls.lines)

    def search(self, body, url=ASYNC):
        """The search answer (the async envelope unwrapped and checked)."""
        st, r, raw = self.req("POST", url, body)
        self.assertEqual(st, 200, raw[:600])
        if "_async_search" in url:
            self.assertEqual(r["expiration_time_in_millis"] - r["start_time_in_millis"],
                             60000)  # keep_alive=1m
            r = self.poll(r)
            r = r["response"]
        self.assertEqual(r["_shards"]["failed"], 0, r)
        return r

    def poll(self, r):
        """Kibana's polling of a search still running after 100ms
        (common/search/poll_search.ts with getDefaultAsyncGetParams), then
        its answer as a finished one."""
        if r["is_running"]:
            self.assertIn("id", r)
            for _ in range(POLLS_MAX):
                st, r2, raw = self.req("GET", "/_async_search/%s?wait_for_completion_timeout"
                                       "=100ms&keep_alive=1m" % quote(r["id"], safe=""))
                self.assertEqual(st, 200, raw[:300])
                if not r2["is_running"]:
                    break
            self.req("DELETE", "/_async_search/%s" % quote(r["id"], safe=""))
            r = r2
        else:
            self.assertNotIn("id", r)  # keep_on_completion=false
        self.assertFalse(r["is_running"], r)
        self.assertFalse(r["is_partial"], r)
        return r

    # -- Kibana starting -----------------------------------------------------------

    def test_startup_version_check(self):
        """Kibana checks every node's version before it starts and polls it
        after (core's elasticsearch/version_check/ensure_es_version.ts:
        nodes.info with filter_path nodes.*.version,
        nodes.*.http.publish_address, nodes.*.ip; node_id _all and metric
        _none in later 8.x)."""
        st, root, _ = self.req("GET", "/")
        self.assertEqual(st, 200)
        fp = "filter_path=nodes.*.version,nodes.*.http.publish_address,nodes.*.ip"
        st, r, _ = self.req("GET", "/_nodes?" + fp)
        self.assertEqual(st, 200, r)
        (node,) = r["nodes"].values()
        self.assertEqual(node, {"ip": "127.0.0.1", "version": root["version"]["number"],
                                "http": {"publish_address": "127.0.0.1:%d" % self.srv.port}})
        st, r, _ = self.req("GET", "/_nodes/_all/_none?" + fp)
        self.assertEqual(st, 200, r)
        self.assertEqual(list(r["nodes"].values()),
                         [{"ip": "127.0.0.1", "version": root["version"]["number"]}])
        st, r, _ = self.req("GET", "/_nodes/http")
        (node,) = r["nodes"].values()
        self.assertEqual(set(node) - {"name", "transport_address", "host", "ip", "version",
                                      "build_flavor", "build_type", "build_hash", "roles",
                                      "attributes"}, {"http"})
        st, r, _ = self.req("GET", "/_nodes/no-such-node")
        self.assertEqual((st, r["nodes"], r["_nodes"]["total"]), (200, {}, 0))
        st, r, _ = self.req("GET", "/_nodes/_all/jvm")
        self.assertEqual(st, 400, r)

    # -- creating a data view ------------------------------------------------

    def test_data_view_field_caps(self):
        """data_views/server/fetcher/lib/es_api.ts callFieldCapsApi: 8.0-8.8
        as GET with fields=* in the URL, 8.9+ as POST with `fields` in the
        body and include_unmapped / include_empty_fields / expand_wildcards;
        the data view editor keeps the fields of type date as time field
        candidates."""
        with open(MAPPING) as f:
            props = json.load(f)["properties"]
        want = {}
        for name, p in props.items():
            want[name] = p["type"]
            for sub, sp in p.get("fields", {}).items():
                want[name + "." + sub] = sp["type"]
        fam = {"float": "float", "long": "long", "integer": "integer"}
        for method, url, body in [
                ("GET", "/nginx*/_field_caps?fields=*&ignore_unavailable=true"
                        "&allow_no_indices=false", None),
                ("POST", "/nginx*/_field_caps?ignore_unavailable=true&allow_no_indices=false"
                         "&include_unmapped=false&include_empty_fields=true"
                         "&expand_wildcards=open", {"fields": ["*"]})]:
            st, r, raw = self.req(method, url, body)
            self.assertEqual(st, 200, raw[:400])
            self.assertEqual(r["indices"], [INDEX])
            for name, t in want.items():
                t = fam.get(t, t)
                caps = r["fields"][name][t]
                self.assertEqual(caps["type"], t, name)
                self.assertTrue(caps["searchable"], name)
                self.assertEqual(caps["aggregatable"], t != "text", name)
            self.assertFalse(r["fields"]["_source"]["_source"]["searchable"])
        # the time field candidates (data_view_editor: type date)
        st, r, _ = self.req("POST", "/nginx*/_field_caps?ignore_unavailable=true"
                            "&allow_no_indices=false&include_unmapped=false"
                            "&types=date,date_nanos", {"fields": ["*"]})
        self.assertEqual(st, 200)
        self.assertEqual(sorted(r["fields"]), ["@timestamp"])
        # a pattern matching no index: allow_no_indices=false is an error
        # Kibana shows as "no matching indices"
        st, r, _ = self.req("GET", "/nomatch*/_field_caps?fields=*&ignore_unavailable=true"
                            "&allow_no_indices=false")
        self.assertEqual(st, 404, r)
        self.assertEqual(r["error"]["type"], "index_not_found_exception")

    def test_field_existence(self):
        """Discover's sidebar sorts fields into available and empty ones
        (8.12+, unified_field_list/.../field_existing_utils.ts through
        data_views' fetcher with includeEmptyFields: false and the time range
        as indexFilter): include_empty_fields=false and index_filter.  An
        index with the log's mapping and one document, which leaves most of
        its fields empty, shows what is dropped."""
        with open(MAPPING) as f:
            mapping = json.load(f)
        st, r, _ = self.req("PUT", "/nginx-sparse", {"mappings": mapping})
        self.assertEqual(st, 200, r)
        st, r, _ = self.req("POST", "/nginx-sparse/_doc?refresh=true",
                            {"@timestamp": "2020-01-01T00:00:00Z", "status": 200})
        self.assertEqual(st, 201, r)
        url = ("/nginx*/_field_caps?ignore_unavailable=true&allow_no_indices=false"
               "&include_unmapped=false&include_empty_fields=false&filters=-metadata")
        try:
            # the log's time range: only the log's index
            st, r, raw = self.req("POST", url, {"fields": ["*"], "index_filter": {
                "bool": {"must": [], "filter": [{"range": {"@timestamp": {
                    "format": "strict_date_optional_time", "gte": GTE, "lte": LTE}}}],
                    "should": [], "must_not": []}}})
            self.assertEqual(st, 200, raw[:300])
            self.assertEqual(r["indices"], [INDEX])
            have = {"@timestamp", "remote_addr", "remote_user", "method", "url",
                    "url.keyword", "http_version", "status", "body_bytes_sent",
                    "referrer", "referrer.keyword", "user_agent", "user_agent.keyword",
                    "host", "service_name", "error_code", "request_time",
                    "upstream_response_time", "request_id"}
            if any(d["xff"] for d in self.lines):
                have.add("x_forwarded_for")
            self.assertEqual(set(r["fields"]), have)
            # 2020: only the sparse index, and only its two fields
            st, r, _ = self.req("POST", url, {"fields": ["*"], "index_filter": {
                "range": {"@timestamp": {"gte": "2020-01-01T00:00:00.000Z",
                                         "format": "strict_date_optional_time"}}}})
            self.assertEqual(r["indices"], ["nginx-sparse"])
            self.assertEqual(set(r["fields"]), {"@timestamp", "status"})
            # no index has a document in 2021
            st, r, _ = self.req("POST", url, {"fields": ["*"], "index_filter": {
                "range": {"@timestamp": {"gte": "2021-01-01T00:00:00.000Z"}}}})
            self.assertEqual((st, r), (200, {"indices": [], "fields": {}}))
            # the default keeps every mapped field of both
            st, r, _ = self.req("POST", url.replace("=false&filters", "=true&filters"),
                                {"fields": ["*"]})
            self.assertEqual(r["indices"], [INDEX, "nginx-sparse"])
            self.assertIn("x_forwarded_for", r["fields"])
            # a bad filter: the query's own error
            st, r, _ = self.req("POST", url, {"fields": ["*"], "index_filter": {"nope": {}}})
            self.assertEqual(st, 400, r)
            self.assertEqual(r["error"]["type"], "parsing_exception")
        finally:
            self.req("DELETE", "/nginx-sparse")

    def test_data_view_resolve_index(self):
        """The data view editor's list of matching sources
        (data_view_editor: /internal/index-pattern-management/resolve_index
        calls indices.resolveIndex with expand_wildcards open, or all with
        hidden sources shown) and the has-data check over every source."""
        st, r, _ = self.req("POST", "/_aliases", {"actions": [
            {"add": {"index": INDEX, "alias": "weblogs"}}]})
        self.assertEqual(st, 200, r)
        st, r, _ = self.req("PUT", "/.kibana-like", {})
        self.assertEqual(st, 200, r)
        try:
            st, r, _ = self.req("GET", "/_resolve/index/ngin*?expand_wildcards=open")
            self.assertEqual((st, r), (200, {
                "indices": [{"name": INDEX, "aliases": ["weblogs"], "attributes": ["open"]}],
                "aliases": [], "data_streams": []}))
            st, r, _ = self.req("GET", "/_resolve/index/*?expand_wildcards=open")
            self.assertEqual([i["name"] for i in r["indices"]], [INDEX])
            self.assertEqual(r["aliases"], [{"name": "weblogs", "indices": [INDEX]}])
            st, r, _ = self.req("GET", "/_resolve/index/*?expand_wildcards=all")
            self.assertEqual([i["name"] for i in r["indices"]], [".kibana-like", INDEX])
            st, r, _ = self.req("GET", "/_resolve/index/*,-web*?expand_wildcards=open")
            self.assertEqual(r["aliases"], [])
            st, r, _ = self.req("GET", "/_resolve/index/nomatch*?expand_wildcards=open")
            self.assertEqual((st, r), (200, {"indices": [], "aliases": [], "data_streams": []}))
            st, r, _ = self.req("GET", "/_resolve/index/nomatch")
            self.assertEqual(st, 404, r)
            self.assertEqual(r["error"]["type"], "index_not_found_exception")
        finally:
            self.req("POST", "/_aliases", {"actions": [
                {"remove": {"index": INDEX, "alias": "weblogs"}}]})
            self.req("DELETE", "/.kibana-like")

    # -- Discover ----------------------------------------------------------------

    def check_hits(self, r, docs, size=500):
        """Discover's table: the newest `size` documents of `docs`, each
        with its time as the sort value and in `fields`."""
        self.assertEqual(r["hits"]["total"], {"value": len(docs), "relation": "eq"})
        hits = r["hits"]["hits"]
        times = sorted((d["t"] for d in docs), reverse=True)[:size]
        self.assertEqual(len(hits), len(times))
        self.assertEqual([h["sort"][0] for h in hits], [iso(t) for t in times])
        self.assertEqual([h["fields"]["@timestamp"] for h in hits],
                         [[iso(t)] for t in times])
        # the _doc tiebreaker: descending within a second
        for a, b in zip(hits, hits[1:]):
            if a["sort"][0] == b["sort"][0]:
                self.assertGreater(a["sort"][1], b["sort"][1])
        for h in hits:
            self.assertEqual(h["_version"], 1)
            self.assertNotIn("_source", h)
        return hits

    def test_discover_first_load(self):
        """Discover with the time picker alone: the newest 500 documents of
        the quarter of an hour, their total, fields and sort values; no
        query, so no highlight."""
        for url in (ASYNC, SYNC):
            r = self.search(discover_body(time_range_query()), url)
            hits = self.check_hits(r, self.window)
            self.assertTrue(all("highlight" not in h for h in hits))
            by_id = {h["_id"]: h for h in hits}
            # every mapped field of a hit in `fields`, from its log line
            docs = {str(i + 1): d for i, d in enumerate(self.lines)}
            for hid, h in list(by_id.items())[:50]:
                d = docs[hid]
                f = h["fields"]
                self.assertEqual(f["status"], [d["status"]])
                self.assertEqual(f["body_bytes_sent"], [d["bytes"]])
                self.assertEqual(f["remote_addr"], [d["ip"]])
                self.assertEqual(f["method"], [d["method"]])
        # rest_total_hits_as_int: the total as a number
        st, r, _ = self.req("POST", SYNC + "&rest_total_hits_as_int=true",
                            discover_body(time_range_query(), size=0))
        self.assertEqual(st, 200)
        self.assertEqual(r["hits"]["total"], len(self.window))

    def test_discover_kql_and_filters(self):
        """KQL as @kbn/es-query compiles it (kuery/functions/is.ts, range.ts,
        exists.ts, not.ts, and.ts, or.ts), the Lucene syntax as
        query_string (from_lucene.ts with the queryStringOptions setting and
        the dateFormat:tz time zone), and the filter pills (filters/
        phrase_filter.ts, phrases_filter.ts, exists_filter.ts,
        range_filter.ts; a negated pill in must_not)."""
        w = self.window
        googlebot = [d for d in w if "googlebot" in words(d["ua"]) | words(d["url"])
                     | words(d["ref"])]
        cases = [
            # status:404
            ("kql is", [{"bool": {"should": [{"match": {"status": 404}}],
                                  "minimum_should_match": 1}}], [], [],
             [d for d in w if d["status"] == 404]),
            # status:"404" (a quoted value: a phrase)
            ("kql phrase", [{"bool": {"should": [{"match_phrase": {"status": "404"}}],
                                      "minimum_should_match": 1}}], [], [],
             [d for d in w if d["status"] == 404]),
            # method:GET and not status:200
            ("kql and not", [{"bool": {"filter": [
                {"bool": {"should": [{"match": {"method": "GET"}}],
                          "minimum_should_match": 1}},
                {"bool": {"must_not": {"bool": {"should": [{"match": {"status": 200}}],
                                                "minimum_should_match": 1}}}}]}}], [], [],
             [d for d in w if d["method"] == "GET" and d["status"] != 200]),
            # status >= 400 or method:HEAD
            ("kql or range", [{"bool": {"should": [
                {"bool": {"should": [{"range": {"status": {"gte": 400}}}],
                          "minimum_should_match": 1}},
                {"bool": {"should": [{"match": {"method": "HEAD"}}],
                          "minimum_should_match": 1}}], "minimum_should_match": 1}}], [], [],
             [d for d in w if d["status"] >= 400 or d["method"] == "HEAD"]),
            # user_agent:"Googlebot"
            ("kql text phrase", [{"bool": {"should": [{"match_phrase": {"user_agent": "Googlebot"}}],
                                           "minimum_should_match": 1}}], [], [],
             [d for d in w if "googlebot" in words(d["ua"])]),
            # free text: googlebot (every field, lenient)
            ("kql free text", [{"multi_match": {"type": "best_fields", "query": "googlebot",
                                                "lenient": True}}], [], [], googlebot),
            # x_forwarded_for:* (exists)
            ("kql exists", [{"bool": {"should": [{"exists": {"field": "x_forwarded_for"}}],
                                      "minimum_should_match": 1}}], [], [],
             [d for d in w if d["xff"]]),
            # @timestamp < "2019-01-22T04:05:00" (dateFormat:tz Asia/Tehran)
            ("kql date range", [{"bool": {"should": [{"range": {"@timestamp": {
                "lt": "2019-01-22T04:05:00", "time_zone": "Asia/Tehran"}}}],
                "minimum_should_match": 1}}], [], [],
             [d for d in w if d["t"] < iso_ms("2019-01-22T00:35:00.000Z")]),
            # Lucene: method:GET AND status:[400 TO 499]
            ("lucene", [], [{"query_string": {
                "query": "method:GET AND status:[400 TO 499]", "analyze_wildcard": True,
                "time_zone": "Asia/Tehran"}}], [],
             [d for d in w if d["method"] == "GET" and 400 <= d["status"] <= 499]),
            # pills: method is HEAD; status is one of 404, 500; referrer exists;
            # NOT body_bytes_sent between 1000 and 5000
            ("pill phrase", [{"match_phrase": {"method": "HEAD"}}], [], [],
             [d for d in w if d["method"] == "HEAD"]),
            ("pill phrases", [{"bool": {"should": [{"match_phrase": {"status": "404"}},
                                                   {"match_phrase": {"status": "500"}}],
                                        "minimum_should_match": 1}}], [], [],
             [d for d in w if d["status"] in (404, 500)]),
            ("pill exists", [{"exists": {"field": "referrer"}}], [], [], w),
            ("pill negated range", [], [], [{"range": {"body_bytes_sent": {
                "gte": 1000, "lt": 5000}}}],
             [d for d in w if not 1000 <= d["bytes"] < 5000]),
        ]
        for name, filters, must, must_not, want in cases:
            with self.subTest(name):
                r = self.search(discover_body(time_range_query(must, filters, must_not)))
                self.check_hits(r, want)
        self.assertGreater(len(googlebot), 10)
        # the free-text match highlighted with Kibana's tags
        r = self.search(discover_body(time_range_query(filters=[{"multi_match": {
            "type": "best_fields", "query": "googlebot", "lenient": True}}]), size=20))
        for h in r["hits"]["hits"]:
            frag = h["highlight"]["user_agent"][0]
            self.assertRegex(frag, re.escape(HL_PRE) + "(?i:googlebot)" + re.escape(HL_POST))
            self.assertEqual(frag.replace(HL_PRE, "").replace(HL_POST, ""),
                             h["fields"]["user_agent"][0])

    def test_discover_single_document(self):
        """Discover's document view (discover's use_es_doc_search.ts
        buildSearchBody: the id and its index in a bool filter, every field
        with include_unmapped, version) for one line of the log."""
        i = len(self.lines) // 2
        d = self.lines[i]
        r = self.search({
            "query": {"bool": {"filter": [{"ids": {"values": [str(i + 1)]}},
                                          {"term": {"_index": INDEX}}]}},
            "stored_fields": ["*"], "script_fields": {}, "version": True,
            "_source": False, "runtime_mappings": {},
            "fields": [{"field": "*", "include_unmapped": "true"}]}, SYNC)
        self.assertEqual(r["hits"]["total"], {"value": 1, "relation": "eq"})
        (h,) = r["hits"]["hits"]
        self.assertEqual((h["_id"], h["_index"], h["_version"]), (str(i + 1), INDEX, 1))
        f = h["fields"]
        self.assertEqual((f["@timestamp"], f["status"], f["body_bytes_sent"], f["method"],
                          f["remote_addr"], f["user_agent"]),
                         ([iso(d["t"])], [d["status"]], [d["bytes"]], [d["method"]],
                          [d["ip"]], [d["ua"]]))
        # `_index` terms: every document of the index, or none
        for q, want in [({"term": {"_index": INDEX}}, len(self.lines)),
                        ({"term": {"_index": "other"}}, 0),
                        ({"terms": {"_index": ["other", INDEX]}}, len(self.lines))]:
            st, r, _ = self.req("POST", "/%s/_count" % INDEX, {"query": q})
            self.assertEqual((st, r["count"]), (200, want), q)

    def test_discover_histogram(self):
        """Discover's histogram: 8.0-8.7 as the date_histogram agg of the
        document request (discover's get_chart_agg_configs.ts; date_histogram.ts
        writes fixed_interval, time_zone, min_doc_count 1, extended_bounds),
        8.8+ from the unified histogram, a Lens request with min_doc_count 0
        and extended_bounds over the time picker."""
        lo, hi = iso_ms(GTE), iso_ms(LTE)
        step = 30000
        per = {}
        for d in self.window:
            per[d["t"] - d["t"] % step] = per.get(d["t"] - d["t"] % step, 0) + 1
        # 8.0-8.7: in the document request, empty buckets left out
        body = discover_body(time_range_query())
        body["aggs"] = {"2": {"date_histogram": {
            "field": "@timestamp", "fixed_interval": "30s", "time_zone": "Asia/Tehran",
            "min_doc_count": 1}}}
        r = self.search(body)
        self.check_hits(r, self.window)
        got = [(b["key"], b["doc_count"]) for b in r["aggregations"]["2"]["buckets"]]
        self.assertEqual(got, sorted(per.items()))
        # 8.8+: the unified histogram's Lens request, every bucket of the range
        r = self.search(esaggs_body({"0": {"date_histogram": {
            "field": "@timestamp", "fixed_interval": "30s", "time_zone": "Asia/Tehran",
            "extended_bounds": {"min": lo, "max": hi}, "min_doc_count": 0}}}))
        buckets = r["aggregations"]["0"]["buckets"]
        self.assertEqual([b["key"] for b in buckets],
                         list(range(lo - lo % step, hi - hi % step + 1, step)))
        self.assertEqual([b["doc_count"] for b in buckets],
                         [per.get(b["key"], 0) for b in buckets])
        self.assertEqual(buckets[0]["key_as_string"], "2019-01-22T04:00:00.000+03:30")
        self.assertEqual(r["hits"]["total"]["value"], len(self.window))

    def test_field_statistics(self):
        """The field popover of Discover's sidebar (unified_field_list/
        server/services/field_stats.ts: fetchAndCalculateFieldStats,
        getNumberHistogram, getStringSamples, getDateHistogram): the time
        range and the query in a bool filter, aggregations in a `sampler`
        of shard_size 5000 (min, max, value_count, terms of 10; then a
        histogram of a tenth of the range), a date_histogram for dates."""
        w = self.window

        def stats(aggs):
            return self.search({"size": 0, "track_total_hits": True,
                                "query": {"bool": {"filter": [
                                    {"range": {"@timestamp": {
                                        "gte": GTE, "lte": LTE,
                                        "format": "strict_date_optional_time"}}},
                                    {"bool": {"must": [], "filter": [], "should": [],
                                              "must_not": []}}]}},
                                "aggs": aggs, "runtime_mappings": {}}, SYNC)

        # a number: min, max, how many, top values, then the histogram
        r = stats({"sample": {"sampler": {"shard_size": 5000}, "aggs": {
            "min_value": {"min": {"field": "body_bytes_sent"}},
            "max_value": {"max": {"field": "body_bytes_sent"}},
            "sample_count": {"value_count": {"field": "body_bytes_sent"}},
            "top_values": {"terms": {"field": "body_bytes_sent", "size": 10}}}}})
        sample = r["aggregations"]["sample"]
        b = [d["bytes"] for d in w]
        self.assertEqual(sample["doc_count"], len(w))  # fewer than 5000: all
        self.assertEqual((sample["min_value"]["value"], sample["max_value"]["value"]),
                         (min(b), max(b)))
        self.assertEqual(sample["sample_count"]["value"], len(b))
        c = {}
        for x in b:
            c[x] = c.get(x, 0) + 1
        self.assertEqual([(x["key"], x["doc_count"]) for x in sample["top_values"]["buckets"]],
                         sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:10])
        step = -(-(max(b) - min(b)) // 10)
        r = stats({"sample": {"sampler": {"shard_size": 5000}, "aggs": {
            "histo": {"histogram": {"field": "body_bytes_sent", "interval": step}}}}})
        h = {}
        for x in b:
            h[x - x % step] = h.get(x - x % step, 0) + 1
        lo = min(b) - min(b) % step  # histogram's min_doc_count 0: the gaps too
        self.assertEqual([(x["key"], x["doc_count"])
                          for x in r["aggregations"]["sample"]["histo"]["buckets"]],
                         [(k, h.get(k, 0)) for k in range(lo, max(b) + 1, step)])
        # a string: how many and the top values
        r = stats({"sample": {"sampler": {"shard_size": 5000}, "aggs": {
            "sample_count": {"value_count": {"field": "method"}},
            "top_values": {"terms": {"field": "method", "size": 10, "shard_size": 25}}}}})
        m = {}
        for d in w:
            m[d["method"]] = m.get(d["method"], 0) + 1
        self.assertEqual([(x["key"], x["doc_count"]) for x in
                          r["aggregations"]["sample"]["top_values"]["buckets"]],
                         sorted(m.items(), key=lambda kv: (-kv[1], kv[0])))
        # a sample smaller than the matches: the first documents (all
        # score alike), in index order -- the log's order
        r = stats({"sample": {"sampler": {"shard_size": 500}, "aggs": {
            "top_values": {"terms": {"field": "status", "size": 10}}}}})
        first = {}
        for d in w[:500]:
            first[d["status"]] = first.get(d["status"], 0) + 1
        self.assertEqual(r["aggregations"]["sample"]["doc_count"], 500)
        self.assertEqual([(x["key"], x["doc_count"]) for x in
                          r["aggregations"]["sample"]["top_values"]["buckets"]],
                         sorted(first.items(), key=lambda kv: (-kv[1], kv[0]))[:10])
        # a date: its histogram over the range
        span = iso_ms(LTE) - iso_ms(GTE)
        step = span // 10
        r = stats({"histo": {"date_histogram": {"field": "@timestamp",
                                                "fixed_interval": "%dms" % step}}})
        per = {}
        for d in w:
            per[d["t"] - d["t"] % step] = per.get(d["t"] - d["t"] % step, 0) + 1
        self.assertEqual([(x["key"], x["doc_count"])
                          for x in r["aggregations"]["histo"]["buckets"]],
                         sorted(per.items()))
        # a sampler under a scoring query: refused, not a different sample
        st, e, _ = self.req("POST", "/%s/_search" % INDEX, {
            "size": 0, "query": {"match": {"user_agent": "googlebot"}},
            "aggs": {"s": {"sampler": {"shard_size": 10}}}})
        self.assertEqual(st, 400, e)
        self.assertIn("[sampler]", e["error"]["reason"])

    # -- Lens --------------------------------------------------------------------

    def test_lens_top_values_over_time(self):
        """Lens: top 5 values of url.keyword (terms.ts: order {_count: desc},
        size, shard_size from Lens' accuracy mode) broken down by a date
        histogram, then the "Other" bucket request
        (_terms_other_bucket_helper.ts: a filters agg of exists and
        must_not match_phrase of the shown values)."""
        w = self.window
        counts = {}
        for d in w:
            if len(d["url"]) <= 256:  # ignore_above of url.keyword
                counts[d["url"]] = counts.get(d["url"], 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
        r = self.search(esaggs_body({"0": {
            "terms": {"field": "url.keyword", "order": {"_count": "desc"}, "size": 5,
                      "shard_size": 25},
            "aggs": {"1": {"date_histogram": {"field": "@timestamp", "fixed_interval": "5m",
                                              "time_zone": "UTC", "min_doc_count": 1}},
                     "2": {"avg": {"field": "body_bytes_sent"}}}}}))
        agg = r["aggregations"]["0"]
        self.assertEqual([(b["key"], b["doc_count"]) for b in agg["buckets"]], top)
        self.assertEqual(agg["sum_other_doc_count"], sum(counts.values()) - sum(c for _, c in top))
        for b in agg["buckets"]:
            mine = [d for d in w if d["url"] == b["key"]]
            per = {}
            for d in mine:
                k = d["t"] - d["t"] % 300000
                per[k] = per.get(k, 0) + 1
            self.assertEqual([(x["key"], x["doc_count"]) for x in b["1"]["buckets"]],
                             sorted(per.items()))
            self.assertAlmostEqual(b["2"]["value"],
                                   sum(d["bytes"] for d in mine) / len(mine), places=6)
        # the Other bucket
        other = {"bool": {"must": [], "filter": [{"exists": {"field": "url.keyword"}}],
                          "should": [], "must_not": [{"match_phrase": {"url.keyword": k}}
                                                     for k, _ in top]}}
        r = self.search(esaggs_body({"other-filter": {
            "filters": {"filters": {"": other}},
            "aggs": {"1": {"date_histogram": {"field": "@timestamp", "fixed_interval": "5m",
                                              "time_zone": "UTC", "min_doc_count": 1}}}}}))
        b = r["aggregations"]["other-filter"]["buckets"][""]
        self.assertEqual(b["doc_count"], agg["sum_other_doc_count"])

    def test_lens_metrics(self):
        """Lens metric columns (x-pack/plugins/lens/.../operations/
        definitions: metrics.tsx avg/sum/min/max, cardinality.tsx unique
        count, percentile.tsx with `percents: [95]`, percentile_ranks.tsx,
        count.tsx value_count, last_value.tsx as top_metrics.ts writes it:
        {metrics: {field}, size: 1, sort: {time field: 'desc'}}) under a
        terms of status ordered by a metric ({"1": "desc"})."""
        w = self.window
        r = self.search(esaggs_body({
            "a": {"avg": {"field": "body_bytes_sent"}},
            "s": {"sum": {"field": "body_bytes_sent"}},
            "mn": {"min": {"field": "body_bytes_sent"}},
            "mx": {"max": {"field": "body_bytes_sent"}},
            "u": {"cardinality": {"field": "remote_addr"}},
            "c": {"value_count": {"field": "method"}},
            "p": {"percentiles": {"field": "body_bytes_sent", "percents": [95]}},
            "pr": {"percentile_ranks": {"field": "body_bytes_sent", "values": [10000]}},
            "l": {"top_metrics": {"metrics": {"field": "status"}, "size": 1,
                                  "sort": {"@timestamp": "desc"}}},
            "t": {"terms": {"field": "status", "order": {"1": "desc"}, "size": 3},
                  "aggs": {"1": {"sum": {"field": "body_bytes_sent"}},
                           "2": {"top_metrics": {"metrics": {"field": "remote_addr"},
                                                 "size": 1, "sort": {"@timestamp": "asc"}}}}},
        }))
        a = r["aggregations"]
        b = [d["bytes"] for d in w]
        self.assertAlmostEqual(a["a"]["value"], sum(b) / len(b), places=6)
        self.assertEqual(a["s"]["value"], sum(b))
        self.assertEqual(a["mn"]["value"], min(b))
        self.assertEqual(a["mx"]["value"], max(b))
        self.assertEqual(a["u"]["value"], len({d["ip"] for d in w}))
        self.assertEqual(a["c"]["value"], len(w))
        s = sorted(b)
        est = a["p"]["values"]["95.0"]
        rank = sum(1 for x in s if x <= est) / len(s)
        self.assertLess(abs(rank - 0.95), 0.01, est)
        pr = a["pr"]["values"]["10000.0"]
        self.assertLess(abs(pr - 100 * sum(1 for x in s if x <= 10000) / len(s)), 1.0, pr)
        # last value: the status of the newest document (a tie on the
        # newest second: any of them)
        newest = max(d["t"] for d in w)
        top = a["l"]["top"]
        self.assertEqual(len(top), 1)
        self.assertEqual(top[0]["sort"], [iso(newest)])
        self.assertIn(top[0]["metrics"]["status"], {d["status"] for d in w if d["t"] == newest})
        # terms ordered by the sum of bytes
        sums = {}
        for d in w:
            sums[d["status"]] = sums.get(d["status"], 0) + d["bytes"]
        want = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        got = a["t"]["buckets"]
        self.assertEqual([(x["key"], x["1"]["value"]) for x in got], want)
        for x in got:
            mine = [d for d in w if d["status"] == x["key"]]
            first = min(d["t"] for d in mine)
            t = x["2"]["top"][0]
            self.assertEqual(t["sort"], [iso(first)])
            self.assertIn(t["metrics"]["remote_addr"],
                          {d["ip"] for d in mine if d["t"] == first})

    def test_lens_filters_and_intervals(self):
        """Lens' Filters operation (buckets/filters.ts: each KQL filter
        compiled, keyed by its label) and Intervals (histogram.ts: interval,
        min_doc_count 1 as `min_doc_count: false` writes it) with a count."""
        w = self.window
        kql = lambda f, v: {"bool": {"must": [], "filter": [{"bool": {"should": [
            {"match": {f: v}}], "minimum_should_match": 1}}], "should": [], "must_not": []}}
        r = self.search(esaggs_body({
            "0": {"filters": {"filters": {"method : GET": kql("method", "GET"),
                                          "status : 404": kql("status", 404)}},
                  "aggs": {"1": {"cardinality": {"field": "remote_addr"}}}},
            "2": {"histogram": {"field": "status", "interval": 100, "min_doc_count": 1}}}))
        f = r["aggregations"]["0"]["buckets"]
        get = [d for d in w if d["method"] == "GET"]
        nf = [d for d in w if d["status"] == 404]
        self.assertEqual((f["method : GET"]["doc_count"], f["method : GET"]["1"]["value"]),
                         (len(get), len({d["ip"] for d in get})))
        self.assertEqual((f["status : 404"]["doc_count"], f["status : 404"]["1"]["value"]),
                         (len(nf), len({d["ip"] for d in nf})))
        per = {}
        for d in w:
            per[d["status"] // 100 * 100] = per.get(d["status"] // 100 * 100, 0) + 1
        self.assertEqual([(b["key"], b["doc_count"]) for b in r["aggregations"]["2"]["buckets"]],
                         sorted(per.items()))

    def test_lens_last_value_errors(self):
        """top_metrics refuses what Elasticsearch refuses, in its shape."""
        for body, reason in [
                ({"metrics": {"field": "status"}, "size": 11, "sort": {"@timestamp": "desc"}},
                 "[top_metrics.size] must not be more than [10]"),
                ({"metrics": {"field": "url"}, "sort": {"@timestamp": "desc"}},
                 "is not supported for aggregation [top_metrics]"),
                ({"metrics": {"field": "status"}},
                 "needs a [sort]")]:
            st, r, _ = self.req("POST", "/%s/_search" % INDEX,
                                {"size": 0, "aggs": {"l": {"top_metrics": body}}})
            self.assertEqual(st, 400, r)
            self.assertIn(reason, json.dumps(r["error"]))

    def test_dashboard_panels(self):
        """A saved dashboard loads its panels at once (dashboard's
        embeddables, each an esaggs or saved-search request): a Lens bar
        chart of status over time, a Lens metric, a saved search with a
        filter, all in flight together."""
        w = self.window
        panels = {
            "bars": esaggs_body({"0": {"date_histogram": {
                "field": "@timestamp", "fixed_interval": "1m", "time_zone": "UTC",
                "min_doc_count": 1}, "aggs": {"1": {"terms": {
                    "field": "status", "order": {"_count": "desc"}, "size": 3}}}}}),
            "metric": esaggs_body({"0": {"cardinality": {"field": "url.keyword"}}}),
            "search": discover_body(time_range_query(filters=[
                {"match_phrase": {"method": "HEAD"}}]), size=50),
        }
        out = {}

        def run(name):
            out[name] = self.req("POST", ASYNC, panels[name])

        threads = [threading.Thread(target=run, args=(n,)) for n in panels]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name, (st, r, raw) in list(out.items()):
            self.assertEqual(st, 200, (name, raw[:300]))
            out[name] = (st, self.poll(r), raw)
        bars = out["bars"][1]["response"]["aggregations"]["0"]["buckets"]
        per = {}
        for d in w:
            per.setdefault(d["t"] - d["t"] % 60000, []).append(d["status"])
        self.assertEqual([b["key"] for b in bars], sorted(per))
        for b in bars:
            c = {}
            for s in per[b["key"]]:
                c[s] = c.get(s, 0) + 1
            want = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            self.assertEqual([(x["key"], x["doc_count"]) for x in b["1"]["buckets"]], want)
        self.assertEqual(out["metric"][1]["response"]["aggregations"]["0"]["value"],
                         len({d["url"] for d in w if len(d["url"]) <= 256}))
        self.check_hits(out["search"][1]["response"],
                        [d for d in w if d["method"] == "HEAD"], size=50)

    def test_async_search_session(self):
        """With search sessions Kibana keeps the answer
        (keep_on_completion=true), polls it with GET (getDefaultAsyncGetParams:
        wait_for_completion_timeout=100ms, keep_alive=1m) and deletes it."""
        url = ASYNC.replace("keep_on_completion=false", "keep_on_completion=true")
        st, r, _ = self.req("POST", url, discover_body(time_range_query(), size=0))
        self.assertEqual(st, 200)
        self.assertIn("id", r)
        st, g, _ = self.req("GET", "/_async_search/%s?wait_for_completion_timeout=100ms"
                            "&keep_alive=1m" % quote(r["id"], safe=""))
        self.assertEqual(st, 200, g)
        self.assertEqual(g["response"]["hits"]["total"]["value"], len(self.window))
        st, d, _ = self.req("DELETE", "/_async_search/%s" % quote(r["id"], safe=""))
        self.assertEqual((st, d), (200, {"acknowledged": True}))

    def test_runtime_mappings(self):
        """An empty runtime_mappings (every search of a data view without
        runtime fields) is accepted; a runtime field, which needs a script,
        is refused with Elasticsearch's 400 shape, not ignored."""
        body = discover_body(time_range_query(), size=0)
        body["runtime_mappings"] = {"hour": {"type": "long", "script": {
            "source": "emit(doc['@timestamp'].value.getHour())"}}}
        st, r, _ = self.req("POST", "/%s/_search" % INDEX, body)
        self.assertEqual(st, 400, r)
        self.assertEqual(r["error"]["type"], "illegal_argument_exception")
        self.assertIn("[runtime_mappings]", r["error"]["reason"])

    def test_sort_format(self):
        """A sort key's format: a date printed in it, search_after taking
        the printed value back (Discover's "load more" and surrounding
        documents); a format on a keyword refused."""
        body = {"size": 3, "sort": [{"@timestamp": {"order": "asc",
                                                    "format": "epoch_second"}},
                                    {"_doc": {"order": "asc"}}],
                "query": time_range_query()}
        st, r, _ = self.req("POST", "/%s/_search" % INDEX, body)
        self.assertEqual(st, 200, r)
        first = min(d["t"] for d in self.window)
        self.assertEqual(r["hits"]["hits"][0]["sort"][0], str(first // 1000))
        body["sort"][0]["@timestamp"]["format"] = "strict_date_optional_time"
        st, r, _ = self.req("POST", "/%s/_search" % INDEX, body)
        last = r["hits"]["hits"][-1]["sort"]
        body["search_after"] = last
        st, r2, _ = self.req("POST", "/%s/_search" % INDEX, body)
        self.assertEqual(st, 200, r2)
        self.assertGreater((r2["hits"]["hits"][0]["sort"][0], r2["hits"]["hits"][0]["sort"][1]),
                           tuple(last))
        st, r, _ = self.req("POST", "/%s/_search" % INDEX, {"sort": [
            {"method": {"order": "asc", "format": "yyyy"}}]})
        self.assertEqual(st, 400, r)
        self.assertIn("doesn't support formats", r["error"]["reason"])


if __name__ == "__main__":
    unittest.main()
