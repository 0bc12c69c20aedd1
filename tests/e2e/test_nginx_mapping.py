"""datasets/nginx-mapping.json, the explicit mapping of the nginx documents
(DESIGN.md §2 types): the mapping parser takes it as it is, the bundled log
indexes under it without an error, and term counts on method, status and
error_code match counts taken from the log file itself.  synthlogs' default
output (vocabularies that grow: new addresses, URLs, agents) indexes under it
too, and its distinct and per-value counts match the documents'."""
import collections
import datetime
import json
import os
import re
import subprocess
import unittest

from fdsserver import DATASET, Server, convert

MAPPING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "datasets", "nginx-mapping.json")

# combined format: addr ident user [time] "request" status bytes "referer" "agent"
LINE = re.compile(r'^(\S+) \S+ (\S+) \[([^\]]+)\] "([^"]*)" (\d{3}) (\d+|-) ')
# datasets/logparse.c's names for the statuses a log usually has
ERROR_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden",
               404: "not_found", 405: "method_not_allowed", 408: "request_timeout",
               413: "payload_too_large", 414: "uri_too_long", 429: "too_many_requests",
               499: "client_closed_request", 500: "internal_server_error",
               502: "bad_gateway", 503: "service_unavailable", 504: "gateway_timeout"}
CUTOFF = "2019-01-22T04:00:00+03:30"
SYNTHLOGS = os.environ.get("FDS_SYNTHLOGS", "synthlogs")
SYNTH_DOCS = 20000


def log_counts():
    """Counts straight from the log lines, without the converter."""
    methods, statuses = collections.Counter(), collections.Counter()
    before = 0
    cutoff = datetime.datetime.fromisoformat(CUTOFF)
    n = 0
    with open(DATASET, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            n += 1
            methods[m.group(4).split(" ")[0]] += 1
            statuses[int(m.group(5))] += 1
            t = datetime.datetime.strptime(m.group(3), "%d/%b/%Y:%H:%M:%S %z")
            before += t < cutoff
    return n, methods, statuses, before


class IndexedUnderMapping(unittest.TestCase):
    """A server with index `index` made under the mapping from `bulk` bytes."""
    index = None

    @classmethod
    def load(cls, bulk):
        cls.srv = Server().start()
        with open(MAPPING) as f:
            cls.mapping = json.load(f)
        st, b, _ = cls.srv.request("PUT", "/" + cls.index, {"mappings": cls.mapping})
        assert st == 200, b
        st, b, _ = cls.srv.request("POST", "/_bulk?refresh=true", bulk,
                                   headers={"Content-Type": "application/x-ndjson"})
        assert st == 200, b
        cls.bulk = b

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def count(self, query):
        st, b, _ = self.srv.request("POST", "/%s/_count" % self.index, {"query": query})
        self.assertEqual(st, 200, b)
        return b["count"]


class NginxMapping(IndexedUnderMapping):
    index = "nginx"

    @classmethod
    def setUpClass(cls):
        cls.n, cls.methods, cls.statuses, cls.before = log_counts()
        cls.load(convert("bulk", index="nginx"))

    def test_mapping_taken_as_is(self):
        st, b, _ = self.srv.request("GET", "/nginx/_mapping")
        self.assertEqual(st, 200)
        self.assertEqual(b["nginx"]["mappings"], self.mapping)
        props = self.mapping["properties"]
        for f in ("method", "service_name", "error_code", "remote_addr", "remote_user",
                  "http_version", "host", "request_id", "x_forwarded_for"):
            self.assertEqual(props[f], {"type": "keyword"}, f)
        for f in ("url", "referrer", "user_agent"):
            self.assertEqual(props[f]["type"], "text")
            self.assertEqual(props[f]["fields"]["keyword"]["type"], "keyword")
        self.assertEqual({f: props[f]["type"] for f in (
            "status", "body_bytes_sent", "request_time", "upstream_response_time",
            "@timestamp")}, {"status": "integer", "body_bytes_sent": "long",
                             "request_time": "float", "upstream_response_time": "float",
                             "@timestamp": "date"})

    def test_log_indexes_without_errors(self):
        self.assertFalse(self.bulk["errors"])
        self.assertEqual(len(self.bulk["items"]), self.n)
        self.assertEqual(self.count({"match_all": {}}), self.n)
        # no field was added beside the explicit ones
        st, b, _ = self.srv.request("GET", "/nginx/_mapping")
        self.assertEqual(set(b["nginx"]["mappings"]["properties"]),
                         set(self.mapping["properties"]))

    def test_method_counts(self):
        self.assertGreater(len(self.methods), 1)
        for method, n in self.methods.items():
            self.assertEqual(self.count({"match": {"method": method}}), n, method)
            self.assertEqual(self.count({"term": {"method": method}}), n, method)

    def test_status_counts(self):
        for status, n in self.statuses.items():
            self.assertEqual(self.count({"term": {"status": status}}), n, status)
        ok = sum(n for s, n in self.statuses.items() if 200 <= s < 300)
        self.assertEqual(self.count({"range": {"status": {"gte": 200, "lt": 300}}}), ok)

    def test_error_code_counts(self):
        below = sum(n for s, n in self.statuses.items() if s < 400)
        self.assertGreater(below, 0)
        # a keyword keeps "-" whole (a text field would analyze it away)
        self.assertEqual(self.count({"match": {"error_code": "-"}}), below)
        self.assertEqual(self.count({"term": {"error_code": "-"}}), below)
        named = [s for s in self.statuses if s >= 400]
        self.assertTrue(named)
        for s in named:
            if s in ERROR_CODES:
                self.assertEqual(self.count({"match": {"error_code": ERROR_CODES[s]}}),
                                 self.statuses[s], s)

    def test_timestamp_is_a_date(self):
        self.assertGreater(self.before, 0)
        self.assertLess(self.before, self.n)
        self.assertEqual(self.count({"range": {"@timestamp": {"lt": CUTOFF}}}), self.before)


class SynthUnderMapping(IndexedUnderMapping):
    """20,000 synthlogs documents (the default, growing vocabularies)."""
    index = "synth"

    @classmethod
    def setUpClass(cls):
        out = subprocess.run([SYNTHLOGS, "--docs", str(SYNTH_DOCS), "--seed", "11",
                              "--format", "bulk", "--index", "synth"],
                             check=True, capture_output=True).stdout
        cls.docs = [json.loads(l) for l in out.split(b"\n")[1::2] if l]
        cls.load(out)

    def test_indexes_without_errors(self):
        self.assertFalse(self.bulk["errors"])
        self.assertEqual(self.count({"match_all": {}}), SYNTH_DOCS)

    def test_distinct_addresses_and_counts(self):
        addrs = collections.Counter(d["remote_addr"] for d in self.docs)
        st, b, _ = self.srv.request("POST", "/synth/_search", {
            "size": 0, "aggs": {"a": {"terms": {"field": "remote_addr",
                                                "size": len(addrs) + 10}}}})
        self.assertEqual(st, 200, b)
        got = {x["key"]: x["doc_count"] for x in b["aggregations"]["a"]["buckets"]}
        self.assertEqual(got, dict(addrs))

    def test_renewed_urls_and_agents_found(self):
        urls = collections.Counter(d["url"] for d in self.docs)
        agents = collections.Counter(d["user_agent"] for d in self.docs)
        picked = [u for u, _ in urls.most_common()[-5:]] + [u for u, _ in urls.most_common(3)]
        for u in picked:
            if len(u) <= 256:
                self.assertEqual(self.count({"term": {"url.keyword": u}}), urls[u], u)
        for a, n in agents.most_common()[-3:]:
            if len(a) <= 256:
                self.assertEqual(self.count({"term": {"user_agent.keyword": a}}), n, a)


if __name__ == "__main__":
    unittest.main()
