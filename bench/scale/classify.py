#!/usr/bin/env python3
"""Split loadgen's query pool into classes by field type and term count.

usage: classify.py MAPPING.json POOL.ndjson PREFIX
Writes PREFIX.<class>.ndjson for each class that has bodies:
  keyword  match on a keyword or numeric field, or on the text of a
           keyword-like field (service_name, method, error_code: short
           values of few distinct terms, each in many docs)
  url-1    match on url, one analysed term (a token of a url)
  url-n    match on url, several terms (a whole url: tens of terms)
  text-n   any other text match
Terms are counted as the standard analyzer splits them (runs of letters and
digits), which is close enough to sort the pool into these classes.
"""
import json
import re
import sys


KEYWORD_LIKE = {"service_name", "method", "error_code"}


def field_types(mapping):
    out = {}
    for idx in mapping.values():
        props = idx.get("mappings", {}).get("properties", {})
        for name, spec in props.items():
            out[name] = spec.get("type", "object")
    return out


def main():
    mapping_path, pool_path, prefix = sys.argv[1:4]
    types = field_types(json.load(open(mapping_path)))
    classes = {}
    for line in open(pool_path):
        line = line.strip()
        if not line:
            continue
        (field, value), = json.loads(line)["query"]["match"].items()
        if isinstance(value, dict):
            value = value.get("query", "")
        n = len(re.findall(r"[0-9A-Za-z]+", str(value)))
        if types.get(field, "text") != "text" or field in KEYWORD_LIKE:
            c = "keyword"
        elif field == "url":
            c = "url-1" if n <= 1 else "url-n"
        else:
            c = "text-n"
        classes.setdefault(c, []).append(line)
    for c, lines in classes.items():
        with open(f"{prefix}.{c}.ndjson", "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
