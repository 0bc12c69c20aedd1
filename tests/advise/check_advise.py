#!/usr/bin/env python3
"""`fieldstore advise` end to end, without timed assertions.

  sample  a short run (--time 8) on the bundled log: exit 0; advice.json
          parses and its numbers agree with each other (ratio = raw /
          stored bytes, bytes per doc and projections from the stored
          bytes, p50 <= p99, every measured row checked against the codec
          it names); the Pareto rows are exactly the non-dominated ones;
          a 1 MB sample is spread over the file (its runs reach past 80%
          of the lines), the whole file is the sample when it fits;
          the recommendation is the settable measured row the documented
          rule picks, and its body is the row's settings; the table on stdout names it; the SVG is
          well-formed XML with one point per measured row.
  ndjson  the same log as nginx2json-style NDJSON documents and as _bulk
          NDJSON: read as documents (not as a log), same document count.
  bad     missing file, directory, empty file, blank lines only, a log with
          no parsable line, an unknown option, --url, no FILE, a bad
          --time: exit status 2 and a message on stderr.

usage: check_advise.py MODE FIELDSTORE LOG TMPDIR
"""
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

mode, exe, log, tmp = sys.argv[1:5]
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def advise(*args, out=None):
    cmd = [exe, "advise"] + (["--out", out] if out else []) + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1.0)


def check_doc(doc, stdout, svg_path, want_kind):
    rows = doc["rows"]
    inp = doc["input"]
    if inp["kind"] != want_kind:
        fail("input kind %r, expected %r" % (inp["kind"], want_kind))
    measured = [r for r in rows if r["measured"]]
    if not measured:
        fail("no row measured")
    if doc["stopped_early"] != (len(measured) < len(rows)):
        fail("stopped_early does not match the unmeasured rows")
    if doc["projection_docs"] != [inp["docs_total"], 10000000]:
        fail("default projections %r" % doc["projection_docs"])
    names = set()
    for r in rows:
        if r["name"] in names:
            fail("row name twice: " + r["name"])
        names.add(r["name"])
        if r["settable"] != (r["settings"] is not None):
            fail(r["name"] + ": settable without settings or the reverse")
        if r["settable"]:
            s = r["settings"]["settings"]
            if s["index.codec"] != r["codec"]:
                fail(r["name"] + ": settings name another codec")
            has_level = "index.compression.zstd.level" in s
            if has_level != (r["codec"] in ("ZSTD", "zstd_no_dict")):
                fail(r["name"] + ": a level where the codec has none, or none where it has")
            if has_level and s["index.compression.zstd.level"] != r["level"]:
                fail(r["name"] + ": settings level differs from the row's")
        if not r["measured"]:
            continue
        if r["raw_bytes"] != inp["sample_raw_bytes"]:
            fail(r["name"] + ": raw bytes are not the sample's")
        if not close(r["ratio"], r["raw_bytes"] / r["stored_bytes"]):
            fail(r["name"] + ": ratio != raw / stored")
        bpd = (r["stored_bytes"] + 16 * r["blocks"]) / inp["sample_docs"]
        if not close(r["bytes_per_doc"], bpd):
            fail(r["name"] + ": bytes_per_doc != (stored + 16 * blocks) / docs")
        for p in r["projected"]:
            want = r["bytes_per_doc"] * p["docs"] + r["dict_bytes"]
            if abs(p["bytes"] - want) > 1:
                fail(r["name"] + ": projection at %d docs" % p["docs"])
        if (r["dict_bytes"] > 0) != (r["codec"] in ("ZSTD", "best_compression")):
            fail(r["name"] + ": dictionary bytes for a codec without one, or none")
        if r["dict_bytes"] > r["dict_size"]:
            fail(r["name"] + ": dictionary larger than asked")
        if r["codec"] == "lucene_best_compression" and r["block_size"] != 480 * 1024:
            fail("lucene_best_compression is not the 480 KiB layout")
        for k in ("fetch_one_us", "fetch_ten_us"):
            if not (0 <= r[k]["p50"] <= r[k]["p99"]):
                fail(r["name"] + ": " + k + " p50 > p99 or negative")
        for k in ("compress_mb_s", "decode_mb_s", "compress_cpu_us_per_doc"):
            if not r[k] > 0:
                fail(r["name"] + ": " + k + " not positive")
        # MB/s and CPU per doc are two views of one measurement
        mbs = inp["sample_raw_bytes"] / inp["sample_docs"] / r["compress_cpu_us_per_doc"]
        if not close(mbs, r["compress_mb_s"], 1e-3):
            fail(r["name"] + ": compress MB/s and CPU per doc disagree")
    # the Pareto front: exactly the non-dominated measured rows
    def dom(o, a):
        return (o["bytes_per_doc"] <= a["bytes_per_doc"] and
                o["fetch_one_us"]["p50"] <= a["fetch_one_us"]["p50"] and
                (o["bytes_per_doc"] < a["bytes_per_doc"] or
                 o["fetch_one_us"]["p50"] < a["fetch_one_us"]["p50"]))
    front = [a["name"] for a in measured
             if not any(dom(o, a) for o in measured if o is not a)]
    if sorted(front) != sorted(doc["pareto"]):
        fail("pareto %r, expected %r" % (doc["pareto"], front))
    for r in measured:
        if r["pareto"] != (r["name"] in front):
            fail(r["name"] + ": pareto flag")
    if not front:
        fail("empty Pareto front")
    rec = doc["recommendation"]
    if rec is None:
        fail("no recommendation")
    row = [r for r in measured if r["name"] == rec["row"]]
    if not row or not row[0]["settable"]:
        fail("recommendation is not a settable measured row: " + rec["row"])
    if rec["body"] != row[0]["settings"]:
        fail("recommended body is not the row's settings")
    if not rec["why"].startswith(rec["row"]):
        fail("the sentence does not name the row")
    if not rec["loadgen"].startswith("loadgen ab ") or "--index logs-advised" not in rec["loadgen"]:
        fail("loadgen line: " + rec["loadgen"])
    # the rule: settable, compress CPU <= 2x and one-doc fetch p50 <= 1.25x
    # the default's (ZSTD level 3), fewest bytes per doc, faster on a tie
    d = [r for r in measured if r["name"] == "ZSTD level 3"][0]
    ok = [r for r in measured if r["settable"] and
          r["compress_cpu_us_per_doc"] <= 2 * d["compress_cpu_us_per_doc"] and
          r["fetch_one_us"]["p50"] <= 1.25 * d["fetch_one_us"]["p50"]]
    want = min(ok, key=lambda r: (r["bytes_per_doc"], r["fetch_one_us"]["p50"]))
    if want["name"] != rec["row"]:
        fail("recommended %s, the rule gives %s" % (rec["row"], want["name"]))
    body = json.dumps(rec["body"], separators=(",", ":"))
    if "Recommendation: PUT /{index} " + body not in stdout:
        fail("stdout does not give the body " + body)
    if rec["loadgen"] not in stdout:
        fail("stdout lacks the loadgen line")
    for r in rows:
        if "| " + r["name"] not in stdout:
            fail("table lacks " + r["name"])
    # the SVG: well-formed, one circle per measured row
    root = ET.parse(svg_path).getroot()
    if not root.tag.endswith("svg"):
        fail("SVG root is " + root.tag)
    ns = "{http://www.w3.org/2000/svg}"
    circles = root.findall(".//" + ns + "circle")
    if len(circles) != len(measured):
        fail("SVG has %d points for %d rows" % (len(circles), len(measured)))
    titles = sorted(c.find(ns + "title").text for c in circles)
    if titles != sorted(r["name"] for r in measured):
        fail("SVG points are not the measured rows")


if mode == "sample":
    out = os.path.join(tmp, "out")
    p = advise("--time", "8", log, out=out)
    if p.returncode != 0:
        fail("exit %d: %s" % (p.returncode, p.stderr))
    if "advise: [1/" not in p.stderr:
        fail("no progress lines on stderr")
    doc = json.load(open(os.path.join(out, "advice.json")))
    check_doc(doc, p.stdout, os.path.join(out, "advice.svg"), "access log")
    with open(log, "rb") as f:
        lines = sum(1 for line in f if line.strip())
    inp = doc["input"]
    if inp["docs_total"] + inp["unparsable_lines"] != lines or inp["docs_total_estimated"]:
        fail("document count %r for %d lines" % (inp, lines))
    # a sample smaller than the input: the count is extrapolated, and
    # --docs sets the projections
    p = advise("--time", "3", "--sample-mb", "1", "--docs", "12345", "--quiet", log,
               out=os.path.join(tmp, "small"))
    if p.returncode != 0 or p.stderr:
        fail("--sample-mb 1 --quiet: exit %d, stderr %r" % (p.returncode, p.stderr))
    small = json.load(open(os.path.join(tmp, "small", "advice.json")))
    si = small["input"]
    if not si["docs_total_estimated"] or si["sample_docs"] >= inp["sample_docs"]:
        fail("a 1 MB sample is not a part of the input: %r" % si)
    if abs(si["docs_total"] - inp["docs_total"]) > inp["docs_total"] * 0.02:
        fail("estimated count %d far from %d" % (si["docs_total"], inp["docs_total"]))
    # the sample is spread over the file, not its first megabyte
    if si["last_sampled_line"] < lines * 0.8:
        fail("a 1 MB sample ends at line %d of %d" % (si["last_sampled_line"], lines))
    if inp["last_sampled_line"] != lines:
        fail("the whole file is not the sample: %r" % inp)
    if small["projection_docs"] != [12345]:
        fail("--docs 12345 gave %r" % small["projection_docs"])
    print("ok: %d rows measured, recommended %s" %
          (sum(r["measured"] for r in doc["rows"]), doc["recommendation"]["row"]))

elif mode == "ndjson":
    conv = os.path.join(os.path.dirname(exe), "datasets", "nginx2json")
    head = os.path.join(tmp, "head.log")
    with open(log, "rb") as f, open(head, "wb") as o:
        for i, line in enumerate(f):
            if i == 2000:
                break
            o.write(line)
    for fmt, kind in (("json", "ndjson"), ("bulk", "bulk ndjson")):
        nd = os.path.join(tmp, "docs." + fmt)
        subprocess.run([conv, "--format", fmt, "--index", "logs", "-o", nd, head], check=True,
                       capture_output=True)
        out = os.path.join(tmp, fmt)
        p = advise("--time", "4", nd, out=out)
        if p.returncode != 0:
            fail("%s: exit %d: %s" % (fmt, p.returncode, p.stderr))
        doc = json.load(open(os.path.join(out, "advice.json")))
        if doc["input"]["sample_docs"] != 2000 or doc["input"]["unparsable_lines"]:
            fail("%s: %r" % (fmt, doc["input"]))
        # the documents are nginx2json's: the same bytes as the log gives
        if doc["input"]["sample_raw_bytes"] != os.path.getsize(
                os.path.join(tmp, "docs.json")) - 2000:
            fail(fmt + ": document bytes differ from nginx2json's")
        check_doc(doc, p.stdout, os.path.join(out, "advice.svg"), kind)
        if "--fields" in doc["recommendation"]["loadgen"]:
            fail("NDJSON documents may lack the nginx fields")
    lp = advise("--time", "2", "--quiet", head, out=os.path.join(tmp, "log"))
    ldoc = json.load(open(os.path.join(tmp, "log", "advice.json")))
    if ldoc["input"]["sample_raw_bytes"] != doc["input"]["sample_raw_bytes"]:
        fail("the log and its NDJSON give different documents")
    print("ok")

else:
    empty = os.path.join(tmp, "empty.log")
    open(empty, "w").close()
    blank = os.path.join(tmp, "blank.log")
    open(blank, "w").write("\n  \n\r\n")
    junk = os.path.join(tmp, "junk.log")
    open(junk, "w").write("this is not an access log\nnor is this\n")
    badjson = os.path.join(tmp, "bad.ndjson")
    open(badjson, "w").write('{"a": 1\n{not json}\n')
    cases = [
        ("missing file", [os.path.join(tmp, "nope.log")], "cannot open"),
        ("directory", [tmp], "directory"),
        ("empty file", [empty], "empty"),
        ("blank lines only", [blank], "empty"),
        ("no parsable line", [junk], "no document"),
        ("no JSON object", [badjson], "no document"),
        ("unknown option", ["--bogus", log], "unknown option"),
        ("--url", ["--url", "http://127.0.0.1:9200/logs", log], "not supported"),
        ("no FILE", [], "no input FILE"),
        ("two files", [log, log], "one input FILE"),
        ("bad --time", ["--time", "0", log], "--time"),
        ("bad --time text", ["--time", "soon", log], "--time"),
        ("bad --docs", ["--docs", "-5", log], "--docs"),
        ("missing value", ["--time"], "needs a value"),
    ]
    for name, args, words in cases:
        p = advise(*args, out=os.path.join(tmp, "o"))
        if p.returncode != 2:
            fail("%s: exit %d, expected 2 (stderr %r)" % (name, p.returncode, p.stderr))
        if words not in p.stderr or not p.stderr.startswith("fieldstore advise: ") and \
                "fieldstore advise: " not in p.stderr:
            fail("%s: stderr %r lacks %r" % (name, p.stderr, words))
        if os.path.exists(os.path.join(tmp, "o", "advice.json")):
            fail(name + ": advice.json written for bad input")
    print("ok: %d bad inputs exit 2" % len(cases))
