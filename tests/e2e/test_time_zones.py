"""Named time zones wherever Elasticsearch takes a `time_zone`: range
queries (the real sample, whose times are +03:30 Tehran), query strings,
date_histogram with calendar and fixed intervals across daylight saving
changes, date_range, and unknown zone ids.  Expected figures come from the
log lines themselves or are worked out by hand from the zones' rules."""
import re
import unittest
from datetime import datetime, timedelta, timezone

from fdsserver import DATASET, ServerTestCase, convert

TEHRAN_JANUARY = timezone(timedelta(hours=3, minutes=30))  # no DST in winter
LOG_TIME = re.compile(r"\[(\d+/\w+/\d+:\d+:\d+:\d+ [+-]\d{4})\]")


def log_instants():
    """Every line's time of the real sample, as an aware datetime."""
    out = []
    with open(DATASET, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = LOG_TIME.search(line)
            if m:
                out.append(datetime.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S %z"))
    return out


def ms(text):
    """Epoch ms of an ISO text with its offset."""
    return int(datetime.fromisoformat(text).timestamp() * 1000)


class TimeZones(ServerTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        st, body, _ = cls.srv.request("POST", "/_bulk?refresh=true",
                                      convert("bulk", index="logs"),
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and body["errors"] is False, str(body)[:500]
        st, body, _ = cls.srv.request("PUT", "/dst", {"mappings": {"properties": {
            "t": {"type": "date"}}}})
        assert st == 200, body
        # around Paris's changes of 2026: 29 March (02:00 -> 03:00, a day of
        # 23 hours) and 25 October (03:00 -> 02:00, 25 hours)
        cls.dst_times = ["2026-03-27T12:00:00Z", "2026-03-28T22:30:00Z",
                         "2026-03-28T23:30:00Z", "2026-03-29T21:30:00Z",
                         "2026-03-29T22:30:00Z", "2026-03-31T10:00:00Z",
                         "2026-10-24T21:30:00Z", "2026-10-25T00:30:00Z",
                         "2026-10-25T01:30:00Z", "2026-10-25T22:30:00Z",
                         "2026-10-25T23:30:00Z"]
        lines = []
        for i, t in enumerate(cls.dst_times):
            lines += ['{"index":{"_index":"dst","_id":"%d"}}' % i, '{"t":"%s"}' % t]
        st, body, _ = cls.srv.request("POST", "/_bulk?refresh=true", "\n".join(lines) + "\n",
                                      {"Content-Type": "application/x-ndjson"})
        assert st == 200 and body["errors"] is False, body

    def count(self, index, query, status=200):
        st, out, _ = self.req("POST", "/%s/_count" % index, {"query": query})
        self.assertEqual(st, status, out)
        return out["count"] if status == 200 else out

    def aggs(self, aggs, index="dst"):
        st, out, _ = self.req("POST", "/%s/_search?size=0" % index, {"aggs": aggs})
        self.assertEqual(st, 200, out)
        return out["aggregations"]

    # ---- range on the real sample ---------------------------------------------------

    def test_range_real_sample(self):
        times = log_instants()
        self.assertEqual(len(times), 10000)
        bound_tehran = datetime(2019, 1, 22, 4, 0, tzinfo=TEHRAN_JANUARY)
        bound_utc = datetime(2019, 1, 22, 4, 0, tzinfo=timezone.utc)
        want_tehran = sum(t >= bound_tehran for t in times)
        want_utc = sum(t >= bound_utc for t in times)
        self.assertEqual(want_tehran, 8715)
        rng = lambda tz: {"range": {"@timestamp": {"gte": "2019-01-22T04:00:00",
                                                   "time_zone": tz}}}
        self.assertEqual(self.count("logs", rng("Asia/Tehran")), want_tehran)
        self.assertEqual(self.count("logs", rng("+03:30")), want_tehran)
        self.assertEqual(self.count("logs", rng("UTC")), want_utc)
        self.assertNotEqual(want_utc, want_tehran)
        # a query string's time_zone reaches its date ranges (the colons
        # escaped, as Lucene's syntax has them)
        st, out, _ = self.req("POST", "/logs/_count", {"query": {"query_string": {
            "query": r"@timestamp:[2019-01-22T04\:00\:00 TO *]",
            "time_zone": "Asia/Tehran"}}})
        self.assertEqual((st, out.get("count")), (200, want_tehran))
        # date math rounds in the zone: /d is Tehran's midnight (20:30Z)
        self.assertEqual(self.count("logs", {"range": {"@timestamp": {
            "gte": "2019-01-22T12:00:00||/d", "time_zone": "Asia/Tehran"}}}),
            sum(t >= datetime(2019, 1, 22, tzinfo=TEHRAN_JANUARY) for t in times))

    def test_range_dst(self):
        # 2026-03-29 in Paris is 23 hours: 03-28T23:00Z to 03-29T22:00Z
        day = {"range": {"t": {"gte": "2026-03-29", "lte": "2026-03-29",
                               "time_zone": "Europe/Paris"}}}
        want = [t for t in self.dst_times
                if ms("2026-03-28T23:00:00+00:00") <= ms(t.replace("Z", "+00:00"))
                < ms("2026-03-29T22:00:00+00:00")]
        self.assertEqual(self.count("dst", day), len(want))
        self.assertEqual(len(want), 2)
        # 25 October is 25 hours: 10-24T22:00Z to 10-25T23:00Z
        self.assertEqual(self.count("dst", {"range": {"t": {
            "gte": "2026-10-25||/d", "lte": "2026-10-25||/d",
            "time_zone": "Europe/Paris"}}}), 3)

    def test_unknown_zone(self):
        for q in ({"range": {"t": {"gte": "2026-01-01", "time_zone": "Mars/Olympus"}}},
                  {"query_string": {"query": "t:[2026-01-01 TO *]",
                                    "time_zone": "Mars/Olympus"}}):
            out = self.count("dst", q, 400)
            self.assertIn("Unknown time-zone ID: Mars/Olympus",
                          out["error"]["root_cause"][0]["reason"])
        st, out, _ = self.req("POST", "/dst/_search", {"aggs": {"h": {"date_histogram": {
            "field": "t", "calendar_interval": "day", "time_zone": "Mars/Olympus"}}}})
        self.assertEqual(st, 400, out)
        self.assertIn("Unknown time-zone ID: Mars/Olympus", out["error"]["reason"])

    # ---- date_histogram -----------------------------------------------------------

    def test_calendar_days_across_dst(self):
        a = self.aggs({"h": {"date_histogram": {
            "field": "t", "calendar_interval": "day", "time_zone": "Europe/Paris",
            "min_doc_count": 0}}})
        b = [x for x in a["h"]["buckets"] if x["key"] < ms("2026-03-31T12:00:00+00:00")]
        # hand-computed: midnight in Paris, +01:00 before the 29th's change
        # and +02:00 after it; the 29th is 23 hours long
        self.assertEqual([(x["key_as_string"], x["key"], x["doc_count"]) for x in b], [
            ("2026-03-27T00:00:00.000+01:00", ms("2026-03-26T23:00:00+00:00"), 1),
            ("2026-03-28T00:00:00.000+01:00", ms("2026-03-27T23:00:00+00:00"), 1),
            ("2026-03-29T00:00:00.000+01:00", ms("2026-03-28T23:00:00+00:00"), 2),
            ("2026-03-30T00:00:00.000+02:00", ms("2026-03-29T22:00:00+00:00"), 1),
            ("2026-03-31T00:00:00.000+02:00", ms("2026-03-30T22:00:00+00:00"), 1)])
        self.assertEqual(b[3]["key"] - b[2]["key"], 23 * 3600000)
        # October: the 25th is 25 hours long
        b = [x for x in a["h"]["buckets"] if x["key"] >= ms("2026-10-23T12:00:00+00:00")]
        self.assertEqual([(x["key_as_string"], x["doc_count"]) for x in b], [
            ("2026-10-24T00:00:00.000+02:00", 1),
            ("2026-10-25T00:00:00.000+02:00", 3),
            ("2026-10-26T00:00:00.000+01:00", 1)])
        self.assertEqual(b[2]["key"] - b[1]["key"], 25 * 3600000)
        self.assertEqual(b[1]["key"], ms("2026-10-24T22:00:00+00:00"))
        # months in the zone: March starts at +01:00, April at +02:00
        a = self.aggs({"h": {"date_histogram": {
            "field": "t", "calendar_interval": "month", "time_zone": "Europe/Paris"}}})
        self.assertEqual([(x["key_as_string"], x["doc_count"]) for x in a["h"]["buckets"]][:2],
                         [("2026-03-01T00:00:00.000+01:00", 6),
                          ("2026-04-01T00:00:00.000+02:00", 0)])

    def test_hours_in_overlap(self):
        # 00:30Z and 01:30Z on 25 October are both 02:30 in Paris; hourly
        # buckets keep the two 02:00 hours apart (Elasticsearch's rounding
        # takes the latest 02:00 not after the value)
        for interval in ({"calendar_interval": "hour"}, {"fixed_interval": "1h"}):
            a = self.aggs({"h": {"date_histogram": dict(
                field="t", time_zone="Europe/Paris", **interval)}})
            got = [(x["key_as_string"], x["key"], x["doc_count"]) for x in a["h"]["buckets"]
                   if ms("2026-10-25T00:00:00+00:00") <= x["key"] < ms("2026-10-25T02:00:00+00:00")]
            self.assertEqual(got, [
                ("2026-10-25T02:00:00.000+02:00", ms("2026-10-25T00:00:00+00:00"), 1),
                ("2026-10-25T02:00:00.000+01:00", ms("2026-10-25T01:00:00+00:00"), 1)],
                interval)

    def test_tehran_and_fixed_offset_agree(self):
        # Tehran keeps +03:30 all January 2019: the same buckets as the offset
        want = None
        for tz in ("Asia/Tehran", "+03:30"):
            a = self.aggs({"h": {"date_histogram": {
                "field": "@timestamp", "fixed_interval": "1h", "time_zone": tz}}}, "logs")
            got = [(x["key_as_string"], x["doc_count"]) for x in a["h"]["buckets"]]
            self.assertEqual(got, want or got)
            want = got
        hours = {}
        for t in log_instants():
            k = t.astimezone(TEHRAN_JANUARY).strftime("%Y-%m-%dT%H:00:00.000+03:30")
            hours[k] = hours.get(k, 0) + 1
        self.assertEqual([x for x in want if x[1]], sorted(hours.items()))

    def test_date_range(self):
        a = self.aggs({"r": {"date_range": {
            "field": "t", "time_zone": "Europe/Paris",
            "ranges": [{"from": "2026-03-29", "to": "2026-03-30"},
                       {"from": "2026-10-25", "to": "2026-10-26"}]}}})
        b = a["r"]["buckets"]
        self.assertEqual([(x["from"], x["to"], x["doc_count"]) for x in b], [
            (ms("2026-03-28T23:00:00+00:00"), ms("2026-03-29T22:00:00+00:00"), 2),
            (ms("2026-10-24T22:00:00+00:00"), ms("2026-10-25T23:00:00+00:00"), 3)])
        self.assertEqual(b[0]["from_as_string"], "2026-03-29T00:00:00.000+01:00")
        self.assertEqual(b[0]["to_as_string"], "2026-03-30T00:00:00.000+02:00")


if __name__ == "__main__":
    unittest.main()
