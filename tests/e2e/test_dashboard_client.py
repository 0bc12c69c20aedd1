"""What a log dashboard does, through Debian's official client
(python3-elasticsearch 7.17): `helpers.bulk` of the bundled real nginx log
into three time-sliced indices (the log spans 40 minutes of one day, so the
slices are its three thirds, named as rsyslog names its indices), a search
over `logs-*`, then one Grafana-style `_msearch` with a `date_histogram` of
`terms` and `percentiles`.  Every figure is checked against values this test
computes from the log file itself, with its own parser of the combined log
format (not the project's converter).  Skipped without the client."""
import bisect
import json
import os
import unittest
import warnings

import rawlog
from fdsserver import DATASET, ServerTestCase, convert

try:
    import elasticsearch
    from elasticsearch import Elasticsearch, helpers
except ImportError:  # pragma: no cover
    elasticsearch = None

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOG = DATASET if os.path.isabs(DATASET) else os.path.join(ROOT, DATASET)
MAPPING = os.path.join(ROOT, "datasets", "nginx-mapping.json")
MINUTE_MS = 60000


def parse_log():
    """(epoch ms, status, bytes) of every line, from the log text alone."""
    return [(d["t"], d["status"], d["bytes"]) for d in rawlog.parse(LOG)]


def rank_of(sorted_vals, x):
    """Fraction of the values <= x."""
    return bisect.bisect_right(sorted_vals, x) / len(sorted_vals)


@unittest.skipIf(elasticsearch is None, "python3-elasticsearch is not installed")
class DashboardClient(ServerTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        warnings.simplefilter("ignore", DeprecationWarning)
        cls.es = Elasticsearch("http://127.0.0.1:%d" % cls.srv.port)
        cls.lines = parse_log()
        docs = convert("json", src=LOG).decode().splitlines()
        assert len(docs) == len(cls.lines), (len(docs), len(cls.lines))
        t0 = min(t for t, _, _ in cls.lines)
        t1 = max(t for t, _, _ in cls.lines)
        cls.t0, cls.t1 = t0, t1
        third = (t1 - t0) // 3 + 1
        cls.names = ["logs-2019.01.22.%d" % (k + 1) for k in range(3)]
        cls.slice_of = staticmethod(lambda t: min((t - t0) // third, 2))
        with open(MAPPING) as f:
            mapping = json.load(f)
        cls.es.indices.put_index_template(name="logs", body={
            "index_patterns": ["logs-*"], "template": {"mappings": mapping}})
        actions = ({"_index": cls.names[cls.slice_of(t)], "_id": str(i + 1),
                    "_source": d} for i, ((t, _, _), d) in enumerate(zip(cls.lines, docs)))
        ok, errors = helpers.bulk(cls.es, actions, chunk_size=2000, refresh=True)
        assert ok == len(docs) and not errors, errors

    def test_search_over_daily_indices(self):
        r = self.es.search(index="logs-*", body={
            "query": {"term": {"status": 404}}, "size": 3,
            "sort": [{"@timestamp": "asc"}], "track_total_hits": True})
        want = sum(1 for _, s, _ in self.lines if s == 404)
        self.assertEqual(r["hits"]["total"], {"value": want, "relation": "eq"})
        self.assertEqual(r["_shards"]["total"], 3)
        first = min(t for t, s, _ in self.lines if s == 404)
        self.assertEqual(r["hits"]["hits"][0]["sort"][0], first)
        self.assertIn(r["hits"]["hits"][0]["_index"], self.names)
        for n in self.names:
            c = self.es.count(index=n)["count"]
            self.assertEqual(c, sum(1 for t, _, _ in self.lines
                                    if self.names[self.slice_of(t)] == n), n)

    def test_dashboard_msearch(self):
        lo = self.t0 - self.t0 % MINUTE_MS
        body = [
            {"index": "logs-*", "ignore_unavailable": True},
            {"size": 0,
             "query": {"bool": {"filter": [{"range": {"@timestamp": {
                 "gte": self.t0, "lte": self.t1, "format": "epoch_millis"}}}]}},
             "aggs": {
                 "2": {"date_histogram": {"field": "@timestamp", "fixed_interval": "1m",
                                          "min_doc_count": 0,
                                          "extended_bounds": {"min": self.t0,
                                                              "max": self.t1}},
                       "aggs": {"3": {"terms": {"field": "status", "size": 3,
                                                "order": {"_count": "desc"}}}}},
                 "4": {"percentiles": {"field": "body_bytes_sent",
                                       "percents": [50, 95, 99]}},
                 "5": {"cardinality": {"field": "status"}}}},
            {"index": "logs-2019.01.22.2"},
            {"size": 0, "aggs": {"s": {"terms": {"field": "method", "size": 2}}}},
            {"index": "no-such-index"},
            {"size": 0},
        ]
        r = self.es.msearch(body=body)
        first, second, third = r["responses"]
        self.assertEqual(first["hits"]["total"]["value"], len(self.lines))
        # per minute: the count and the top statuses
        per_min = {}
        for t, s, _ in self.lines:
            per_min.setdefault(t - t % MINUTE_MS, []).append(s)
        buckets = first["aggregations"]["2"]["buckets"]
        last = self.t1 - self.t1 % MINUTE_MS
        self.assertEqual([b["key"] for b in buckets],
                         list(range(lo, last + 1, MINUTE_MS)))
        for b in buckets:
            statuses = per_min.get(b["key"], [])
            self.assertEqual(b["doc_count"], len(statuses), b["key_as_string"])
            counts = {}
            for s in statuses:
                counts[s] = counts.get(s, 0) + 1
            top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
            got = [(x["key"], x["doc_count"]) for x in b["3"]["buckets"]]
            self.assertEqual(got, top, b["key_as_string"])
            self.assertEqual(b["3"]["sum_other_doc_count"],
                             len(statuses) - sum(c for _, c in top))
        # percentiles: t-digest estimates, checked in rank space (1%)
        sizes = sorted(b for _, _, b in self.lines)
        vals = first["aggregations"]["4"]["values"]
        for p in (50, 95, 99):
            est = vals["%.1f" % p]
            self.assertLess(abs(rank_of(sizes, est) - p / 100), 0.01, (p, est))
        # cardinality: exact below its precision threshold
        self.assertEqual(first["aggregations"]["5"]["value"],
                         len({s for _, s, _ in self.lines}))
        # the second item on one index; the third an error of its own
        self.assertEqual(sum(b["doc_count"] for b in second["aggregations"]["s"]["buckets"])
                         + second["aggregations"]["s"]["sum_other_doc_count"],
                         self.es.count(index="logs-2019.01.22.2")["count"])
        self.assertEqual(third["status"], 404)
        self.assertEqual(third["error"]["type"], "index_not_found_exception")


if __name__ == "__main__":
    unittest.main()
