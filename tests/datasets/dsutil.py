"""Shared helpers of the datasets tests: run a tool, check one document.

A document must be one compact JSON object (no whitespace outside strings),
without duplicate keys, with the DESIGN.md section 2 fields in order
(x_forwarded_for optional), and with the documented types and shapes.
"""
import json
import re
import subprocess
import sys

FIELDS = ["@timestamp", "remote_addr", "remote_user", "method", "url",
          "http_version", "status", "body_bytes_sent", "referrer",
          "user_agent", "x_forwarded_for", "host", "service_name",
          "error_code", "request_time", "upstream_response_time",
          "request_id"]
FIELDS_16 = [f for f in FIELDS if f != "x_forwarded_for"]
SERVICES = {"home", "mobile", "image", "static", "search", "catalog",
            "account", "content", "site", "other"}
TS_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")
ID_RE = re.compile(r"^[0-9a-f]{32}$")
TIME_RE = re.compile(r'"request_time":\d+\.\d{3},"upstream_response_time":\d+\.\d{3},')

failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 20:
        print("FAIL:", msg, file=sys.stderr)


def finish(name):
    if failures:
        print(f"{name}: {len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(f"{name}: ok")


def run(cmd, stdin=None):
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def _pairs_no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError(f"duplicate keys in {keys}")
    return pairs


def loads_pairs(text):
    """Parse JSON keeping key order as a list of pairs; reject duplicates."""
    return json.loads(text, object_pairs_hook=_pairs_no_dups)


def compact(line):
    """True when no whitespace occurs outside string literals."""
    in_str = esc = False
    for ch in line:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in " \t\r\n":
            return False
    return True


def check_doc(line, where):
    """Validate one document line (str).  Returns the dict or None."""
    try:
        pairs = loads_pairs(line)
    except ValueError as e:
        fail(f"{where}: not valid JSON ({e}): {line[:200]}")
        return None
    if not isinstance(pairs, list):
        fail(f"{where}: not an object")
        return None
    keys = [k for k, _ in pairs]
    if keys != FIELDS and keys != FIELDS_16:
        fail(f"{where}: fields {keys}")
        return None
    if not compact(line):
        fail(f"{where}: not compact")
    d = dict(pairs)
    for k in FIELDS:
        if k in ("status", "body_bytes_sent"):
            if type(d[k]) is not int:
                fail(f"{where}: {k} is not an integer")
        elif k in ("request_time", "upstream_response_time"):
            if type(d[k]) is not float or d[k] < 0:
                fail(f"{where}: {k} is not a non-negative float")
        elif k in d and not isinstance(d[k], str):
            fail(f"{where}: {k} is not a string")
    if not TIME_RE.search(line):
        fail(f"{where}: timings not printed with 3 decimals")
    if d["upstream_response_time"] > d["request_time"]:
        fail(f"{where}: upstream_response_time > request_time")
    if not TS_RE.match(d["@timestamp"]):
        fail(f"{where}: bad @timestamp {d['@timestamp']}")
    if not ID_RE.match(d["request_id"]):
        fail(f"{where}: bad request_id {d['request_id']}")
    if d["service_name"] not in SERVICES:
        fail(f"{where}: unknown service_name {d['service_name']}")
    if (d["error_code"] == "-") != (d["status"] < 400):
        fail(f"{where}: error_code {d['error_code']} for status {d['status']}")
    if d.get("x_forwarded_for") == "-":
        fail(f"{where}: x_forwarded_for is '-' (should be left out)")
    return d


def check_bulk(data, index, with_ids, where):
    """Validate _bulk NDJSON bytes.  Returns (ids, doc lines)."""
    lines = data.decode("utf-8").split("\n")
    if lines[-1] != "":
        fail(f"{where}: bulk body does not end with a newline")
    lines = lines[:-1]
    if len(lines) % 2:
        fail(f"{where}: odd number of bulk lines ({len(lines)})")
    ids, docs = [], []
    for k in range(0, len(lines) - 1, 2):
        try:
            action = loads_pairs(lines[k])
        except ValueError as e:
            fail(f"{where}: action line {k + 1} invalid ({e})")
            continue
        if len(action) != 1 or action[0][0] != "index":
            fail(f"{where}: action line {k + 1} is not an index action")
            continue
        meta = action[0][1]
        want_keys = ["_index", "_id"] if with_ids else ["_index"]
        if [m for m, _ in meta] != want_keys or meta[0][1] != index:
            fail(f"{where}: action line {k + 1} metadata {meta}")
            continue
        if with_ids:
            ids.append(meta[1][1])
        check_doc(lines[k + 1], f"{where} line {k + 2}")
        docs.append(lines[k + 1])
    return ids, docs
