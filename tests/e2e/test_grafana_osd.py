"""The requests Grafana's Elasticsearch data source (10-11) and OpenSearch
Dashboards send, replayed as the applications write them -- keys, value
types and URL parameters included, each citing the source file it comes
from -- against a started server holding the bundled real nginx log, indexed
through datasets/nginx-mapping.json under the name Grafana's daily pattern
`[logs-]YYYY.MM.DD` gives for the log's day.  Every figure of every answer
is checked against values this test computes from the log file itself, with
its own parser of the combined log format (not the project's converter).

Grafana 10-11 builds its panel queries in its Go backend
(pkg/tsdb/elasticsearch/client/search_request.go, data_query.go, models.go;
golden request bodies in pkg/tsdb/elasticsearch/testdata_request/) and the
version, field, template-variable and annotation requests in its frontend
(public/app/plugins/datasource/elasticsearch/datasource.ts,
QueryBuilder.ts).  OpenSearch Dashboards builds its bodies in
src/plugins/data/common/search/search_source/search_source.ts and sends them
through src/plugins/data/server/search/opensearch_search/
opensearch_search_strategy.ts (one _search) or
src/plugins/data/server/search/routes/call_msearch.ts (_msearch)."""
import bisect
import collections
import datetime
import json
import os
import re
import unittest

from fdsserver import DATASET, ServerTestCase, convert

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = DATASET if os.path.isabs(DATASET) else os.path.join(ROOT, DATASET)
MAPPING = os.path.join(ROOT, "datasets", "nginx-mapping.json")
# combined format: addr ident user [time] "request" status bytes "referer" "agent"
LINE = re.compile(r'^(\S+) \S+ (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+|-) '
                  r'"([^"]*)" "([^"]*)" "([^"]*)"')
INDEX = "logs-2019.01.22"  # Grafana's [logs-]YYYY.MM.DD for the log's UTC day
NDJSON = {"Content-Type": "application/x-ndjson"}
# Grafana's highlight tags (client/search_request.go), OpenSearch
# Dashboards' (src/plugins/data/common/field_formats/utils/highlight)
G_PRE, G_POST = "@HIGHLIGHT@", "@/HIGHLIGHT@"
O_PRE = "@opensearch-dashboards-highlighted-field@"
O_POST = "@/opensearch-dashboards-highlighted-field@"
TEHRAN = datetime.timezone(datetime.timedelta(hours=3, minutes=30))


Row = collections.namedtuple("Row", "id ms method url status bytes agent xff addr")


def parse_log():
    """One Row per line of the log, from its text alone (id: line number,
    as the converter's bulk numbers them)."""
    with open(LOG, encoding="utf-8", errors="replace") as f:
        lines = [m for m in map(LINE.match, f) if m]
    rows = []
    for i, m in enumerate(lines, 1):
        t = datetime.datetime.strptime(m.group(3), "%d/%b/%Y:%H:%M:%S %z")
        method, _, rest = m.group(4).partition(" ")
        rows.append(Row(i, int(t.timestamp() * 1000), method, rest.split(" ")[0],
                        int(m.group(5)), int(m.group(6).replace("-", "0")),
                        m.group(8), None if m.group(9) == "-" else m.group(9),
                        m.group(1)))
    return rows


def iso_utc(ms):
    """Elasticsearch's strict_date_optional_time(_nanos) / date_time text of
    a millisecond instant in UTC."""
    d = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (ms % 1000)


def msearch_body(pairs):
    return "".join(json.dumps(h) + "\n" + json.dumps(b) + "\n" for h, b in pairs)


def check_percentile(test, vals, p, got, what):
    """`got`, a t-digest's percentile p of `vals`, lies within the values
    and within 5 points of rank of p (exact for one value)."""
    s = sorted(vals)
    if len(s) == 1:
        test.assertEqual(got, s[0], what)
        return
    test.assertGreaterEqual(got, s[0], what)
    test.assertLessEqual(got, s[-1], what)
    lo = bisect.bisect_left(s, got) / len(s)
    hi = bisect.bisect_right(s, got) / len(s)
    test.assertTrue(lo - 0.05 <= p / 100 <= hi + 0.05,
                    "%s: %s is at ranks [%s, %s] of %d values, not %s%%"
                    % (what, got, lo, hi, len(s), p))


class LogServer(ServerTestCase):
    """One server with the log indexed as INDEX; rows parsed from the log."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        try:
            cls.load()
        except BaseException:
            cls.srv.cleanup()  # tearDownClass does not run after a failed setUp
            raise

    @classmethod
    def load(cls):
        cls.rows = parse_log()
        with open(MAPPING) as f:
            mapping = json.load(f)
        st, b, _ = cls.srv.request("PUT", "/" + INDEX, {"mappings": mapping})
        assert st == 200, b
        st, b, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                   convert("bulk", index=INDEX, src=LOG),
                                   headers=NDJSON)
        assert st == 200 and not b["errors"], b
        cls.t0 = min(r.ms for r in cls.rows)
        cls.t1 = max(r.ms for r in cls.rows)
        # a dashboard's time range: the middle of the log, not its ends
        cls.frm = cls.t0 + 5 * 60000 + 1234
        cls.to = cls.t1 - 7 * 60000 - 567

    def in_range(self, lo=None, hi=None):
        lo = self.frm if lo is None else lo
        hi = self.to if hi is None else hi
        return [r for r in self.rows if lo <= r.ms <= hi]

    def msearch(self, url, pairs, n=None):
        """POST `url` with the header/body pairs as ndjson; every answer
        has status 200 and no error; returns the list of responses."""
        st, b, _ = self.req("POST", url, msearch_body(pairs), headers=NDJSON)
        self.assertEqual(st, 200, b)
        self.assertEqual(len(b["responses"]), n or len(pairs))
        for r in b["responses"]:
            self.assertNotIn("error", r, r)
            self.assertEqual(r["status"], 200)
        return b["responses"]

    def check_histogram(self, buckets, rows, lo, hi, step, fmt=str):
        """Buckets of a date_histogram with min_doc_count 0 and
        extended_bounds [lo, hi]: every interval from lo's to hi's, each
        with the rows' count, key_as_string fmt(key)."""
        first, last = lo - lo % step, hi - hi % step
        want = collections.Counter(r.ms - r.ms % step for r in rows)
        keys = [b["key"] for b in buckets]
        self.assertEqual(keys, list(range(first, last + 1, step)))
        for b in buckets:
            self.assertEqual(b["doc_count"], want[b["key"]], b)
            self.assertEqual(b["key_as_string"], fmt(b["key"]))


class Grafana(LogServer):
    """Grafana's Elasticsearch data source, 10.x and 11.x."""

    # data_query.go processQuery: every query's header line
    # (client/client.go createMultiSearchRequests) and URL
    # (getMultiSearchQueryParameters; datasource.ts getMultiSearchUrl)
    URL = "/_msearch?max_concurrent_shard_requests=5"

    def header(self, index=INDEX):
        return {"ignore_unavailable": True, "index": index,
                "search_type": "query_then_fetch"}

    def range_filter(self):
        # models.go RangeFilter: gte/lte int64 epoch ms, format epoch_millis
        return {"range": {"@timestamp": {"format": "epoch_millis",
                                         "gte": self.frm, "lte": self.to}}}

    def query(self, q):
        # processQuery: the time range and, when the query box has text,
        # its query string (models.go QueryStringFilter, analyze_wildcard)
        return {"bool": {"filter": [
            self.range_filter(),
            {"query_string": {"analyze_wildcard": True, "query": q}}]}}

    def test_version_and_health(self):
        # datasource.ts getDatabaseVersionUncached: GET / (resource ""),
        # version.number as semver; client/cluster_info.go reads
        # version.build_flavor ("serverless" drops URL parameters);
        # healthcheck.go: GET _cluster/health?wait_for_status=yellow
        st, b, _ = self.req("GET", "/")
        self.assertEqual(st, 200)
        self.assertRegex(b["version"]["number"], r"^8\.\d+\.\d+$")
        self.assertNotEqual(b["version"]["build_flavor"], "serverless")
        st, b, _ = self.req("GET", "/_cluster/health?wait_for_status=yellow")
        self.assertEqual(st, 200)
        self.assertIn(b["status"], ("green", "yellow"))

    def test_field_discovery(self):
        # datasource.ts getFields: GET {index}/_mapping over the pattern's
        # indices newest first, a 404 skipped; fields walked through
        # properties and multi-fields
        st, b, _ = self.req("GET", "/logs-2019.01.23/_mapping")
        self.assertError((st, b, json.dumps(b).encode()), 404,
                         "index_not_found_exception")
        st, b, _ = self.req("GET", "/%s/_mapping" % INDEX)
        self.assertEqual(st, 200)
        fields = {}

        def walk(props, parts):
            for k, v in props.items():
                if isinstance(v.get("fields"), dict):
                    walk(v["fields"], parts + [k])
                if isinstance(v.get("type"), str):
                    fields[".".join(parts + [k])] = v["type"]
        walk(b[INDEX]["mappings"]["properties"], [])
        with open(MAPPING) as f:
            props = json.load(f)["properties"]
        want = {k: v["type"] for k, v in props.items()}
        want.update({k + ".keyword": "keyword" for k, v in props.items()
                     if "fields" in v})
        self.assertEqual(fields, want)
        # healthcheck.go validateIndex: the time field through _field_caps
        st, b, _ = self.req("GET", "/%s/_field_caps?fields=@timestamp" % INDEX)
        self.assertEqual(st, 200)
        self.assertEqual(list(b["fields"]), ["@timestamp"])
        self.assertIn("date", b["fields"]["@timestamp"])

    def test_time_series_terms_percentiles(self):
        # data_query.go processTimeSeriesQuery with a terms group-by
        # (addTermsAgg: size, min_doc_count int, order {_key: desc}) over a
        # date_histogram (addDateHistogramAgg: fixed_interval,
        # min_doc_count, extended_bounds int64, format epoch_millis) and
        # percentiles whose percents the editor stores as strings
        # (testdata_request/metric_complex.request.line1.json)
        body = {
            "aggs": {"4": {
                "aggs": {"2": {
                    "aggs": {
                        "1": {"percentiles": {"field": "body_bytes_sent",
                                              "percents": ["25", "50", "75", "95", "99"]}},
                        "3": {"max": {"field": "body_bytes_sent"}},
                        "5": {"avg": {"field": "body_bytes_sent"}}},
                    "date_histogram": {
                        "extended_bounds": {"max": self.to, "min": self.frm},
                        "field": "@timestamp", "fixed_interval": "60000ms",
                        "format": "epoch_millis", "min_doc_count": 0}}},
                "terms": {"field": "method", "min_doc_count": 1,
                          "order": {"_key": "desc"}, "size": 10}}},
            "query": {"bool": {"filter": self.range_filter()}},
            "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = self.in_range()
        self.assertEqual(r["hits"]["total"], {"value": len(rows), "relation": "eq"})
        self.assertEqual(r["hits"]["hits"], [])
        by_method = collections.defaultdict(list)
        for x in rows:
            by_method[x.method].append(x)
        terms = r["aggregations"]["4"]
        self.assertEqual([b["key"] for b in terms["buckets"]],
                         sorted(by_method, reverse=True)[:10])
        self.assertEqual(terms["sum_other_doc_count"],
                         sum(len(v) for k, v in by_method.items()
                             if k not in sorted(by_method, reverse=True)[:10]))
        for tb in terms["buckets"]:
            mrows = by_method[tb["key"]]
            self.assertEqual(tb["doc_count"], len(mrows))
            hist = tb["2"]["buckets"]
            self.check_histogram(hist, mrows, self.frm, self.to, 60000)
            for hb in hist:
                vals = [x.bytes for x in mrows if x.ms - x.ms % 60000 == hb["key"]]
                pct = hb["1"]["values"]
                self.assertEqual(list(pct), ["25.0", "50.0", "75.0", "95.0", "99.0"])
                if not vals:
                    self.assertEqual(set(pct.values()), {None})
                    self.assertIsNone(hb["3"]["value"])
                    self.assertIsNone(hb["5"]["value"])
                    continue
                self.assertEqual(hb["3"]["value"], max(vals))
                self.assertAlmostEqual(hb["5"]["value"], sum(vals) / len(vals))
                for p, v in pct.items():
                    check_percentile(self, vals, float(p), v,
                                     "%s %s p%s" % (tb["key"], hb["key"], p))

    def test_terms_order_by_count_and_metric(self):
        # addTermsAgg: orderBy _count, and orderBy a metric id, which adds
        # the metric under the terms (data_query.go, QueryBuilder.ts
        # buildTermsAgg); a query string filter with analyze_wildcard
        # (models.go QueryStringFilter)
        body = {
            "aggs": {"2": {
                "aggs": {"1": {"sum": {"field": "body_bytes_sent"}}},
                "terms": {"field": "status", "order": {"1": "desc"}, "size": 3}},
                "3": {"terms": {"field": "url.keyword", "order": {"_count": "asc"},
                                "size": 4, "min_doc_count": 1}}},
            "query": self.query("method:GET"),
            "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = [x for x in self.in_range() if x.method == "GET"]
        sums = collections.Counter()
        counts = collections.Counter()
        for x in rows:
            sums[x.status] += x.bytes
            counts[x.status] += 1
        top = sorted(sums, key=lambda s: (-sums[s], s))[:3]
        got = r["aggregations"]["2"]["buckets"]
        self.assertEqual([b["key"] for b in got], top)
        for b in got:
            self.assertEqual(b["doc_count"], counts[b["key"]])
            self.assertEqual(b["1"]["value"], sums[b["key"]])
        # url.keyword (ignore_above 256) by count ascending, ties by key
        urls = collections.Counter(x.url for x in rows if len(x.url) <= 256)
        want = sorted(urls.items(),
                      key=lambda kv: (kv[1], kv[0]))[:4]
        self.assertEqual([(b["key"], b["doc_count"])
                          for b in r["aggregations"]["3"]["buckets"]], want)

    def logs_body(self, query, size=500, order="desc", search_after=None):
        # data_query.go processLogsQuery with client/search_request.go:
        # sort as one object of two keys (a Go map), docvalue_fields,
        # script_fields {}, size, highlight of every field with Grafana's
        # tags and fragment_size 2^31-1, fields with the nanos format
        # (AddTimeFieldWithStandardizedFormat), the logs volume's
        # date_histogram "1" ($__interval_ms replaced: "1000ms"); golden
        # body testdata_request/logs.request.line1.json
        body = {
            "aggs": {"1": {"date_histogram": {
                "extended_bounds": {"max": self.to, "min": self.frm},
                "field": "@timestamp", "fixed_interval": "1000ms",
                "format": "epoch_millis", "min_doc_count": 0}}},
            "docvalue_fields": ["@timestamp"],
            "fields": [{"field": "@timestamp",
                        "format": "strict_date_optional_time_nanos"}],
            "highlight": {"fields": {"*": {}}, "fragment_size": 2147483647,
                          "post_tags": [G_POST], "pre_tags": [G_PRE]},
            "query": self.query(query),
            "script_fields": {},
            "size": size,
            "sort": {"@timestamp": {"order": order, "unmapped_type": "boolean"},
                     "_doc": {"order": order}}}
        if search_after is not None:
            body["search_after"] = search_after
        return body

    def check_log_hits(self, hits, want, terms):
        """Hits are the rows `want` in order, each with the time field in
        `fields`, and its `terms` highlighted in `method`/`url`."""
        self.assertEqual([h["_id"] for h in hits], [str(x.id) for x in want])
        for h, x in zip(hits, want):
            self.assertEqual(h["_index"], INDEX)
            self.assertEqual(h["fields"]["@timestamp"], [iso_utc(x.ms)])
            self.assertEqual(h["_source"]["status"], x.status)
            self.assertEqual(h["_source"]["body_bytes_sent"], x.bytes)
            self.assertEqual(h["_source"]["method"], x.method)
            self.assertEqual(h["_source"]["url"], x.url)
            self.assertEqual(h["sort"][0], x.ms)
            for field, term in terms:
                self.assertIn(G_PRE + term + G_POST,
                              "".join(h["highlight"][field]), h["highlight"])

    def test_logs_panel(self):
        q = "method:POST OR url:browse"
        r, = self.msearch(self.URL, [(self.header(), self.logs_body(q))])
        # "browse" stands between slashes wherever a url has it, so the
        # standard analyzer makes it a token exactly there
        browse = re.compile(r"(^|/)browse(/|$)")
        self.assertEqual(sum("browse" in x.url.lower() for x in self.rows),
                         sum(bool(browse.search(x.url.lower())) for x in self.rows))
        rows = [x for x in self.in_range()
                if x.method == "POST" or browse.search(x.url.lower())]
        self.assertGreater(len(rows), 100)
        self.assertEqual(r["hits"]["total"], {"value": len(rows), "relation": "eq"})
        # newest first; in one millisecond the later line first (_doc desc)
        want = sorted(rows, key=lambda x: (x.ms, x.id), reverse=True)[:500]
        self.check_log_hits(r["hits"]["hits"], want, [])
        for h, x in zip(r["hits"]["hits"], want):
            hl = h["highlight"]
            self.assertEqual(set(hl) - {"url"}, {"method"} if x.method == "POST" else set())
            if x.method == "POST":
                self.assertEqual(hl["method"], [G_PRE + "POST" + G_POST])
            if browse.search(x.url.lower()):
                # fragment_size 2^31-1: the whole value in one fragment
                self.assertEqual(hl["url"], [re.sub(r"(?i)(?<=/)(browse)(?=/|$)",
                                                    G_PRE + r"\1" + G_POST, x.url)])
            else:
                self.assertNotIn("url", hl)
        self.check_histogram(r["aggregations"]["1"]["buckets"], rows,
                             self.frm, self.to, 1000)

    def test_logs_size_limit_and_context(self):
        # the panel's limit (settings.limit -> size), then the log context
        # query: sortDirection asc/desc and search_after the row's sort
        # values (datasource.ts makeLogContextDataRequest, processLogsQuery)
        r, = self.msearch(self.URL, [(self.header(), self.logs_body("*", size=20))])
        rows = self.in_range()
        self.assertEqual(r["hits"]["total"]["value"], len(rows))
        newest = sorted(rows, key=lambda x: (x.ms, x.id), reverse=True)
        self.check_log_hits(r["hits"]["hits"], newest[:20], [])
        row = r["hits"]["hits"][12]
        after = row["sort"]
        i = [x.id for x in newest].index(int(row["_id"]))
        r, = self.msearch(self.URL, [(self.header(), self.logs_body(
            "*", size=10, order="desc", search_after=after))])
        self.check_log_hits(r["hits"]["hits"], newest[i + 1:i + 11], [])
        r, = self.msearch(self.URL, [(self.header(), self.logs_body(
            "*", size=10, order="asc", search_after=after))])
        self.check_log_hits(r["hits"]["hits"], newest[i - 10:i][::-1], [])

    def test_logs_volume_by_level(self):
        # datasource.ts getSupplementaryQuery (LogsVolume) with a log level
        # field set: terms settings {min_doc_count: '0', size: '0', order:
        # 'desc', orderBy: '_count', missing: 'unknown'} over a
        # date_histogram {interval: auto, min_doc_count: '0'}; the backend
        # (data_query.go addTermsAgg, generateSettingsForDSL) sends
        # min_doc_count 0, size "0" -> 500, order {_count: desc}.  The level
        # field here: x_forwarded_for, absent from most lines
        body = {
            "aggs": {"2": {
                "aggs": {"3": {"date_histogram": {
                    "extended_bounds": {"max": self.to, "min": self.frm},
                    "field": "@timestamp", "fixed_interval": "60000ms",
                    "format": "epoch_millis", "min_doc_count": 0}}},
                "terms": {"field": "x_forwarded_for", "min_doc_count": 0,
                          "missing": "unknown", "order": {"_count": "desc"},
                          "size": 500}}},
            "query": self.query("status:200"),
            "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = [x for x in self.in_range() if x.status == 200]
        levels = collections.Counter(x.xff or "unknown" for x in rows)
        for x in self.rows:  # min_doc_count 0: every value of the index
            levels[x.xff or "unknown"] += 0
        self.assertGreater(sum(1 for v in levels.values() if v == 0), 0)
        got = r["aggregations"]["2"]["buckets"]
        self.assertEqual([(b["key"], b["doc_count"]) for b in got],
                         sorted(levels.items(), key=lambda kv: (-kv[1], kv[0])))
        for b in got:
            self.check_histogram(b["3"]["buckets"],
                                 [x for x in rows if (x.xff or "unknown") == b["key"]],
                                 self.frm, self.to, 60000)

    def test_extended_stats_cardinality_filters_histogram(self):
        # the editor's other metrics and bucket aggregations as
        # data_query.go writes them: extended_stats with sigma a string
        # (settings are strings), cardinality, filters of query strings
        # (addFiltersAgg), histogram (addHistogramAgg: interval float,
        # min_doc_count)
        body = {"aggs": {
            "1": {"extended_stats": {"field": "body_bytes_sent", "sigma": "2"}},
            "2": {"cardinality": {"field": "remote_addr"}},
            "3": {"filters": {"filters": {
                "method:GET": {"query_string": {"analyze_wildcard": True,
                                                "query": "method:GET"}},
                "errors": {"query_string": {"analyze_wildcard": True,
                                            "query": "status:[500 TO 599]"}}}}},
            "4": {"histogram": {"field": "status", "interval": 100, "min_doc_count": 0}}},
            "query": {"bool": {"filter": self.range_filter()}}, "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = self.in_range()
        a = r["aggregations"]
        v = [x.bytes for x in rows]
        n, mean = len(v), sum(v) / len(v)
        var = sum(x * x for x in v) / n - mean * mean
        e = a["1"]
        self.assertEqual((e["count"], e["min"], e["max"], e["sum"]), (n, min(v), max(v), sum(v)))
        self.assertAlmostEqual(e["avg"], mean)
        self.assertEqual(e["sum_of_squares"], sum(x * x for x in v))
        self.assertAlmostEqual(e["variance"] / var, 1, places=9)
        sd = var ** 0.5
        self.assertAlmostEqual(e["std_deviation"] / sd, 1, places=9)
        self.assertAlmostEqual(e["std_deviation_bounds"]["upper"], mean + 2 * sd, places=3)
        self.assertAlmostEqual(e["std_deviation_bounds"]["lower"], mean - 2 * sd, places=3)
        # HyperLogLog++ is exact below its precision threshold (3000)
        addrs = {x.addr for x in rows}
        self.assertLess(len(addrs), 3000)
        self.assertEqual(a["2"]["value"], len(addrs))
        self.assertEqual(a["3"]["buckets"], {
            "method:GET": {"doc_count": sum(x.method == "GET" for x in rows)},
            "errors": {"doc_count": sum(500 <= x.status <= 599 for x in rows)}})
        h = collections.Counter(x.status - x.status % 100 for x in rows)
        self.assertEqual([(b["key"], b["doc_count"]) for b in a["4"]["buckets"]],
                         [(float(k), h[k]) for k in range(min(h), max(h) + 1, 100)])

    def test_top_metrics(self):
        # the "Top Metrics" metric as client/models.go MetricAggregation
        # marshals it: metrics [{field}], size "1" (a string), sort
        # [{orderBy: order}] (testdata_response/metric_top_metrics.*)
        body = {"aggs": {"2": {
            "aggs": {"1": {"top_metrics": {
                "metrics": [{"field": "body_bytes_sent"}, {"field": "method"}],
                "size": "1", "sort": [{"@timestamp": "desc"}]}}},
            "date_histogram": {"extended_bounds": {"max": self.to, "min": self.frm},
                               "field": "@timestamp", "fixed_interval": "300000ms",
                               "format": "epoch_millis", "min_doc_count": 0}}},
            "query": {"bool": {"filter": self.range_filter()}}, "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = self.in_range()
        got = r["aggregations"]["2"]["buckets"]
        self.check_histogram(got, rows, self.frm, self.to, 300000)
        for b in got:
            inb = [x for x in rows if x.ms - x.ms % 300000 == b["key"]]
            if not inb:
                self.assertEqual(b["1"], {"top": []})
                continue
            last = max(x.ms for x in inb)
            top, = b["1"]["top"]
            self.assertEqual(top["sort"], [iso_utc(last)])
            # the newest second's lines: the value is one of theirs
            self.assertIn((top["metrics"]["body_bytes_sent"], top["metrics"]["method"]),
                          {(x.bytes, x.method) for x in inb if x.ms == last})
        # by a numeric key without ties at the top: exact
        body = {"aggs": {"1": {"top_metrics": {
            "metrics": {"field": "status"}, "size": "3",
            "sort": {"body_bytes_sent": "desc"}}}},
            "query": {"bool": {"filter": self.range_filter()}}, "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        best = sorted(rows, key=lambda x: -x.bytes)[:4]
        self.assertGreater(best[2].bytes, best[3].bytes)
        self.assertEqual(r["aggregations"]["1"]["top"],
                         [{"sort": [x.bytes], "metrics": {"status": x.status}}
                          for x in best[:3]])

    def test_pipeline_metrics(self):
        # pipeline metrics as data_query.go writes them (aggBuilder.Pipeline:
        # buckets_path the metric id, "_count" for a count, the settings
        # as given: derivative's unit) beside the metric they read, under
        # a date_histogram with min_doc_count 0; 404s leave minutes empty
        body = {"aggs": {"2": {
            "aggs": {"1": {"sum": {"field": "body_bytes_sent"}},
                     "3": {"derivative": {"buckets_path": "1", "unit": "1s"}},
                     "4": {"cumulative_sum": {"buckets_path": "1"}},
                     "5": {"derivative": {"buckets_path": "_count"}},
                     # serial_diff's lag as setFloatPath leaves it: a float
                     "6": {"serial_diff": {"buckets_path": "1", "lag": 2.0}},
                     # moving_fn with the editor's defaults (window a string)
                     "7": {"moving_fn": {"buckets_path": "1", "window": "5",
                                         "script": "MovingFunctions.unweightedAvg(values)"}},
                     "8": {"serial_diff": {"buckets_path": "_count", "lag": 1}},
                     "9": {"moving_fn": {"buckets_path": "_count", "window": 3,
                                         "script": "MovingFunctions.sum(values)"}}},
            "date_histogram": {"extended_bounds": {"max": self.to, "min": self.frm},
                               "field": "@timestamp", "fixed_interval": "60000ms",
                               "format": "epoch_millis", "min_doc_count": 0}}},
            "query": self.query("status:404"),
            "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = [x for x in self.in_range() if x.status == 404]
        got = r["aggregations"]["2"]["buckets"]
        self.check_histogram(got, rows, self.frm, self.to, 60000)
        sums = collections.Counter()
        for x in rows:
            sums[x.ms - x.ms % 60000] += x.bytes
        vals = [float(sums[b["key"]]) if b["doc_count"] else None for b in got]
        self.assertIn(None, vals)  # gaps: the skip policy's nulls
        present = [v for v in vals if v is not None]
        seen = 0
        for v, b in zip(vals, got):
            if v is None:
                self.assertNotIn("7", b)
                continue
            win = present[max(0, seen - 5):seen]
            want = sum(win) / len(win) if win else None
            if want is None:
                self.assertEqual(b["7"], {"value": None})
            else:
                self.assertAlmostEqual(b["7"]["value"], want)
            seen += 1
        acc = 0.0
        for i, b in enumerate(got):
            acc += sums[b["key"]]
            self.assertAlmostEqual(b["4"]["value"], acc)
            if i >= 2 and None not in (vals[i], vals[i - 2]):
                self.assertEqual(b["6"], {"value": vals[i] - vals[i - 2]})
            else:
                self.assertNotIn("6", b)
            if i == 0:  # no derivative in the first bucket
                self.assertNotIn("3", b)
                self.assertNotIn("5", b)
                continue
            d = None if None in (vals[i], vals[i - 1]) else vals[i] - vals[i - 1]
            self.assertEqual(b["3"], {"value": d,
                                      "normalized_value": None if d is None else d / 60})
            # a count has no gaps (BucketHelpers.resolveBucketValue: "doc
            # count never has missing values so gap policy doesn't apply
            # here"): empty buckets count 0
            c = (b["doc_count"], got[i - 1]["doc_count"])
            self.assertEqual(b["5"], {"value": float(c[0] - c[1])})
            self.assertEqual(b["8"], {"value": float(c[0] - c[1])})
        for i, b in enumerate(got):  # every bucket, the empty ones too
            win = [float(x["doc_count"]) for x in got[max(0, i - 3):i]]
            # MovingFunctions.sum of an empty window is 0.0
            self.assertEqual(b["9"], {"value": sum(win)})

    def test_rate(self):
        # the "Rate" metric (client/models.go MetricAggregation: field left
        # out when empty, settings unit and mode as given) in a date_histogram
        body = {"aggs": {"2": {
            "aggs": {"1": {"rate": {"field": "body_bytes_sent", "unit": "second"}},
                     "3": {"rate": {"unit": "hour"}},
                     "4": {"rate": {"field": "body_bytes_sent", "unit": "minute",
                                    "mode": "value_count"}}},
            "date_histogram": {"extended_bounds": {"max": self.to, "min": self.frm},
                               "field": "@timestamp", "fixed_interval": "60000ms",
                               "format": "epoch_millis", "min_doc_count": 0}}},
            "query": self.query("status:404"), "size": 0}
        r, = self.msearch(self.URL, [(self.header(), body)])
        rows = [x for x in self.in_range() if x.status == 404]
        got = r["aggregations"]["2"]["buckets"]
        self.check_histogram(got, rows, self.frm, self.to, 60000)
        for b in got:
            inb = [x for x in rows if x.ms - x.ms % 60000 == b["key"]]
            self.assertAlmostEqual(b["1"]["value"], sum(x.bytes for x in inb) / 60)
            self.assertEqual(b["3"]["value"], 60.0 * len(inb))
            self.assertEqual(b["4"]["value"], float(len(inb)))

    def test_raw_data_and_raw_document(self):
        # data_query.go processDocumentQuery (testdata_request/
        # raw_data.request.line1.json, raw_document.request.line1.json)
        body = {"docvalue_fields": ["@timestamp"],
                "fields": [{"field": "@timestamp",
                            "format": "strict_date_optional_time_nanos"}],
                "query": {"bool": {"filter": self.range_filter()}},
                "script_fields": {}, "size": 500,
                "sort": {"@timestamp": {"order": "desc", "unmapped_type": "boolean"},
                         "_doc": {"order": "desc"}}}
        # the frontend's documentQuery (QueryBuilder.ts) writes the sort as
        # a list and the range with $timeFrom/$timeTo replaced in a string
        fe = {"size": 500, "query": {"bool": {"filter": [{"range": {"@timestamp": {
            "gte": str(self.frm), "lte": str(self.to), "format": "epoch_millis"}}}]}},
              "sort": [{"@timestamp": {"order": "desc", "unmapped_type": "boolean"}},
                       {"_doc": {"order": "desc"}}],
              "script_fields": {}}
        a, b = self.msearch(self.URL, [(self.header(), body), (self.header(), fe)])
        rows = self.in_range()
        want = sorted(rows, key=lambda x: (x.ms, x.id), reverse=True)[:500]
        self.check_log_hits(a["hits"]["hits"], want, [])
        self.assertEqual([h["_id"] for h in b["hits"]["hits"]], [str(x.id) for x in want])
        for r in (a, b):
            self.assertEqual(r["hits"]["total"], {"value": len(rows), "relation": "eq"})

    def test_template_variable_terms(self):
        # datasource.ts getTerms: QueryBuilder.ts getTermsQuery with
        # $timeFrom/$timeTo replaced inside their strings, size 500, order
        # {_key: asc} (or {_count: desc} for orderBy doc_count); the header
        # of getQueryHeader with the index list of a daily pattern (an
        # array; the day before has no index: ignore_unavailable)
        def terms_query(field, order, query=None):
            q = {"size": 0, "query": {"bool": {"filter": [{"range": {"@timestamp": {
                "gte": str(self.frm), "lte": str(self.to), "format": "epoch_millis"}}}]}},
                 "aggs": {"1": {"terms": {"field": field, "size": 500, "order": order}}}}
            if query:
                q["query"]["bool"]["filter"].append(
                    {"query_string": {"analyze_wildcard": True, "query": query}})
            return q
        h = {"search_type": "query_then_fetch", "ignore_unavailable": True,
             "index": ["logs-2019.01.21", INDEX]}
        a, b = self.msearch(self.URL, [
            (h, terms_query("status", {"_key": "asc"})),
            (h, terms_query("method", {"_count": "desc"}, "status:[400 TO 499]"))])
        rows = self.in_range()
        st = collections.Counter(x.status for x in rows)
        self.assertEqual([(x["key"], x["doc_count"]) for x in a["aggregations"]["1"]["buckets"]],
                         sorted(st.items()))
        me = collections.Counter(x.method for x in rows if 400 <= x.status <= 499)
        self.assertEqual([(x["key"], x["doc_count"]) for x in b["aggregations"]["1"]["buckets"]],
                         sorted(me.items(), key=lambda kv: (-kv[1], kv[0])))

    def test_annotations(self):
        # datasource.ts prepareAnnotationRequest: a should of ranges with
        # from/to epoch ms and format epoch_millis, minimum_should_match
        # 1, the annotation's query string, size 10000; the header without
        # max_concurrent_shard_requests, posted to _msearch
        body = {"query": {"bool": {"filter": [
            {"bool": {"should": [{"range": {"@timestamp": {
                "from": self.frm, "to": self.to, "format": "epoch_millis"}}}],
                "minimum_should_match": 1}},
            {"query_string": {"query": "status:404 AND method:GET"}}]}},
            "size": 10000}
        h = {"search_type": "query_then_fetch", "ignore_unavailable": True,
             "index": INDEX}
        r, = self.msearch("/_msearch", [(h, body)])
        want = sorted(x.id for x in self.in_range()
                      if x.status == 404 and x.method == "GET")
        self.assertGreater(len(want), 0)
        self.assertEqual(r["hits"]["total"], {"value": len(want), "relation": "eq"})
        self.assertEqual(sorted(int(h["_id"]) for h in r["hits"]["hits"]), want)
        by_id = {x.id: x for x in self.rows}
        for hit in r["hits"]["hits"]:
            x = by_id[int(hit["_id"])]
            t = datetime.datetime.fromisoformat(hit["_source"]["@timestamp"])
            self.assertEqual(int(t.timestamp() * 1000), x.ms)

    def test_include_frozen_url(self):
        # datasource.ts getMultiSearchUrl / client.go with "include frozen
        # indices" set: ignore_throttled=false beside the shard bound
        r, = self.msearch(self.URL + "&ignore_throttled=false", [(self.header(), {
            "size": 0, "query": {"bool": {"filter": self.range_filter()}}})])
        self.assertEqual(r["hits"]["total"]["value"], len(self.in_range()))


class OpenSearchDashboards(LogServer):
    """OpenSearch Dashboards 2.x: Discover and a visualisation."""

    def query(self, extra=()):
        # buildOpenSearchQuery (src/plugins/data/common/opensearch_query/
        # opensearch_query/build_opensearch_query.ts): match_all from an
        # empty query, the time filter as ISO strings with
        # strict_date_optional_time, and the query's clauses
        return {"bool": {"must": [], "filter": [
            {"match_all": {}},
            {"range": {"@timestamp": {"gte": iso_utc(self.frm - self.frm % 1000),
                                      "lte": iso_utc(self.to - self.to % 1000 + 999),
                                      "format": "strict_date_optional_time"}}}]
            + list(extra), "should": [], "must_not": []}}

    def frame(self):
        return self.frm - self.frm % 1000, self.to - self.to % 1000 + 999

    def discover_body(self, extra=()):
        # search_source.ts flatten: stored_fields ["*"], script_fields {},
        # docvalue_fields of the date fields with format date_time,
        # _source {excludes: []}; Discover's size (discover:sampleSize),
        # sort with unmapped_type, version, its histogram (time_zone of the
        # browser, min_doc_count 1) and getHighlightRequest's highlight
        return {
            "version": True, "size": 500,
            "sort": [{"@timestamp": {"order": "desc", "unmapped_type": "boolean"}}],
            "aggs": {"2": {"date_histogram": {"field": "@timestamp",
                                              "fixed_interval": "30s",
                                              "time_zone": "Asia/Tehran",
                                              "min_doc_count": 1}}},
            "stored_fields": ["*"], "script_fields": {},
            "docvalue_fields": [{"field": "@timestamp", "format": "date_time"}],
            "_source": {"excludes": []},
            "query": self.query(extra),
            "highlight": {"pre_tags": [O_PRE], "post_tags": [O_POST],
                          "fields": {"*": {}}, "fragment_size": 2147483647}}

    def tehran(self, ms):
        d = datetime.datetime.fromtimestamp(ms / 1000, TEHRAN)
        return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d+03:30" % (ms % 1000)

    def check_discover(self, r, rows, highlighted):
        self.assertEqual(r["hits"]["total"], {"value": len(rows), "relation": "eq"})
        want = sorted(rows, key=lambda x: (-x.ms, x.id))[:500]
        hits = r["hits"]["hits"]
        self.assertEqual([h["sort"][0] for h in hits], [x.ms for x in want])
        self.assertEqual(sorted(int(h["_id"]) for h in hits), sorted(x.id for x in want))
        by_id = {x.id: x for x in rows}
        for h in hits:
            x = by_id[int(h["_id"])]
            self.assertEqual(h["_version"], 1)
            self.assertEqual(h["fields"]["@timestamp"], [iso_utc(x.ms)])
            self.assertEqual(h["_source"]["url"], x.url)
            self.assertEqual(h["_source"]["user_agent"], x.agent)
            if highlighted:
                self.assertEqual(h["highlight"], highlighted)
            else:
                self.assertNotIn("highlight", h)
        buckets = r["aggregations"]["2"]["buckets"]
        per = collections.Counter(x.ms - x.ms % 30000 for x in rows)
        self.assertEqual([(b["key"], b["doc_count"]) for b in buckets], sorted(per.items()))
        for b in buckets:
            self.assertEqual(b["key_as_string"], self.tehran(b["key"]))

    def test_discover(self):
        # opensearch_search_strategy.ts: POST {index}/_search with
        # getDefaultSearchParams (ignore_unavailable, track_total_hits),
        # getShardTimeout (timeout) and getSearchParams (preference)
        url = ("/logs-*/_search?ignore_unavailable=true&track_total_hits=true"
               "&timeout=30000ms&preference=1700000000000")
        st, r, _ = self.req("POST", url, self.discover_body())
        self.assertEqual(st, 200, r)
        lo, hi = self.frame()
        self.check_discover(r, self.in_range(lo, hi), None)

    def test_discover_all_fields(self):
        # search:includeAllFields set: search_source.ts flatten adds
        # fields ["*"] beside the date docvalue_fields
        body = dict(self.discover_body(), fields=["*"])
        st, r, _ = self.req("POST", "/logs-*/_search?ignore_unavailable=true"
                            "&track_total_hits=true&timeout=30000ms", body)
        self.assertEqual(st, 200, r)
        lo, hi = self.frame()
        self.check_discover(r, self.in_range(lo, hi), None)
        by_id = {x.id: x for x in self.rows}
        for h in r["hits"]["hits"]:
            x, f = by_id[int(h["_id"])], h["fields"]
            self.assertEqual((f["method"], f["status"], f["body_bytes_sent"], f["url"]),
                             ([x.method], [x.status], [x.bytes], [x.url]))
            self.assertEqual(f.get("url.keyword"), [x.url] if len(x.url) <= 256 else None)
            self.assertEqual(f.get("x_forwarded_for"), [x.xff] if x.xff else None)

    def test_discover_query_and_filter(self):
        # a DQL query `method:GET` (build_opensearch_query/from_kuery:
        # match in a should) and a phrase filter pill on status
        # (build_filters/phrase_filter.ts: match_phrase)
        extra = [{"bool": {"should": [{"match": {"method": "GET"}}],
                           "minimum_should_match": 1}},
                 {"match_phrase": {"status": 404}}]
        url = "/logs-*/_search?ignore_unavailable=true&track_total_hits=true&timeout=30000ms"
        st, r, _ = self.req("POST", url, self.discover_body(extra))
        self.assertEqual(st, 200, r)
        lo, hi = self.frame()
        rows = [x for x in self.in_range(lo, hi) if x.method == "GET" and x.status == 404]
        self.assertGreater(len(rows), 0)
        self.check_discover(r, rows, {"method": [O_PRE + "GET" + O_POST]})

    def test_discover_legacy_msearch(self):
        # call_msearch.ts with courier:batchSearches: URL parameters of
        # getDefaultSearchParams without trackTotalHits, a header with
        # ignore_unavailable, the index and the session id as preference
        # (a number), the shard timeout in the body
        body = dict(self.discover_body(), timeout="30000ms")
        h = {"ignore_unavailable": True, "index": "logs-*", "preference": 1700000000000}
        st, b, _ = self.req("POST", "/_msearch?ignore_throttled=true&ignore_unavailable=true",
                            msearch_body([(h, body)]), headers=NDJSON)
        self.assertEqual(st, 200, b)
        r, = b["responses"]
        lo, hi = self.frame()
        self.check_discover(r, self.in_range(lo, hi), None)

    def test_vertical_bar(self):
        # a vertical bar visualisation: date_histogram x-axis split by the
        # top 5 statuses (agg_configs toDsl: terms with order {_count:
        # desc} and size; date_histogram with fixed_interval, time_zone,
        # min_doc_count 1 and extended_bounds from the time filter), size 0
        lo, hi = self.frame()
        body = {
            "aggs": {"2": {"date_histogram": {
                "field": "@timestamp", "fixed_interval": "1m",
                "time_zone": "Asia/Tehran", "min_doc_count": 1,
                "extended_bounds": {"min": lo, "max": hi}},
                "aggs": {"3": {"terms": {"field": "status",
                                         "order": {"_count": "desc"}, "size": 5}}}}},
            "size": 0, "stored_fields": ["*"], "script_fields": {},
            "docvalue_fields": [{"field": "@timestamp", "format": "date_time"}],
            "_source": {"excludes": []}, "query": self.query()}
        st, r, _ = self.req("POST", "/logs-*/_search?ignore_unavailable=true"
                            "&track_total_hits=true&timeout=30000ms", body)
        self.assertEqual(st, 200, r)
        rows = self.in_range(lo, hi)
        self.assertEqual(r["hits"]["total"]["value"], len(rows))
        per = collections.defaultdict(collections.Counter)
        for x in rows:
            per[x.ms - x.ms % 60000][x.status] += 1
        got = r["aggregations"]["2"]["buckets"]
        self.assertEqual([b["key"] for b in got], sorted(per))
        for b in got:
            c = per[b["key"]]
            self.assertEqual(b["doc_count"], sum(c.values()))
            self.assertEqual(b["key_as_string"], self.tehran(b["key"]))
            top = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
            self.assertEqual([(t["key"], t["doc_count"]) for t in b["3"]["buckets"]], top)
            self.assertEqual(b["3"]["sum_other_doc_count"],
                             sum(c.values()) - sum(v for _, v in top))


if __name__ == "__main__":
    unittest.main()
