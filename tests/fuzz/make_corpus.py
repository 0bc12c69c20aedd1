#!/usr/bin/env python3
"""Regenerate the seed corpus tests/fuzz/corpus/<target>/ (committed; run
this only when a format changes).  Seeds are small real inputs: blocks and
segment files written by the plain fuzz drivers, lines of the bundled nginx
sample, bodies and URLs the e2e tests send, and the catalogue rows of a
store built from the sample.

usage: make_corpus.py BUILD_DIR      (a normal gcc build, ./scripts/build.sh)
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATASET = os.path.join(ROOT, "datasets", "nginx-zanbil-access-10k.log")
LOG_LINES = 16          # sample lines kept as fuzz_logparse seeds
BULK_SAMPLE_LINES = 6   # sample docs in the real-data bulk body


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def log_lines():
    """Lines of the sample with distinct (method, status) pairs."""
    seen, out = set(), []
    with open(DATASET, "rb") as f:
        for line in f:
            parts = line.split(b'"')
            key = (parts[1].split(b" ")[0] if len(parts) > 1 else b"",
                   parts[2].split()[0] if len(parts) > 2 and parts[2].split() else b"")
            if key not in seen:
                seen.add(key)
                out.append(line.rstrip(b"\n"))
            if len(out) == LOG_LINES:
                break
    return out


BULK = [
    '{"index":{"_index":"bk","_id":"1"}}\n{"n":1,"t":"one"}\n'
    '{"create":{"_index":"bk","_id":"2"}}\n{"n":2}\n'
    '{"update":{"_index":"bk","_id":"1"}}\n{"doc":{"t":"uno"}}\n'
    '{"update":{"_index":"bk","_id":"9"}}\n{"doc":{"t":"x"},"doc_as_upsert":true}\n'
    '{"delete":{"_index":"bk","_id":"2"}}\n',
    '{"index":{"_id":"b1"}}\n{"ok":1}\n{"index":{"_id":"b2"}}\n{"broken":\n'
    '{"index":{"_id":"b3"}}\n{"ok":3}\n',
    '{"index":{"_id":7,"if_seq_no":3,"if_primary_term":1}}\r\n{"a":[1,2,{"b":null}]}\r\n',
    '{"index":{"_id":"e","version":5,"version_type":"external","routing":"r"}}\n'
    '{"geo":{"city":"\u062a\u0647\u0631\u0627\u0646"},"tags":["a","b"]}\n',
    'not json\n',
    '{"index":{}}\n{}\n\n  \n{"delete":{"_id":"x"}}\n',
    '{"index":{"_index":"a","bogus":1}}\n{}\n',
    '{"index":{"_index":"a"}}\n{"unterminated":true}',
]

URLS = [
    "/", "/?filter_path=**.number", "/?filter_path=version.number&pretty",
    "/_cat/indices?format=json&bytes=b", "/_cat/indices?v&h=index,docs.count&s=index",
    "/_cluster/health", "/e/_doc/a%2Fb", "/e/_doc/bad%FFid", "/e%00zzz",
    "/e/_doc/ext?version=5&version_type=external", "/logs/_search?filter_path=hits.total.value,took",
    "/logs/_search?q=method:GET+url:image&size=3&from=1&sort=status:desc&_source=url,geo.*",
    "/logs/_search?track_total_hits=100&explain=true&filter_path=hits.hits._s*",
    "/logs/_count?q=status:404", "/cc/_forcemerge?max_num_segments=1",
    "/a/b/c/d/e/f/g/h/i", "/%E2%82%AC/_doc/%20x+y?pretty=false&human",
    "/logs/_search?filter_path=-hits.hits,**._source.url&pretty",
]

DSL = [
    '{"query":{"match":{"url":"image productModel"}}}',
    '{"query":{"match":{"url":{"query":"a b c","operator":"and",'
    '"minimum_should_match":"-25%"}}},"size":3,"from":1}',
    '{"query":{"bool":{"must":[{"term":{"method.keyword":"GET"}}],'
    '"should":{"range":{"status":{"gte":200,"lt":300}}},'
    '"filter":[{"exists":{"field":"url"}}],'
    '"must_not":[{"ids":{"values":["d2"]}}],"minimum_should_match":1}}}',
    '{"query":{"terms":{"tags":["a","z"]}},"sort":[{"@timestamp":'
    '{"order":"desc","missing":"_first"}},"_score","_doc"],'
    '"search_after":["2019-01-22T03:56:14Z",1.5,0],"track_total_hits":2}',
    '{"query":{"range":{"@timestamp":{"gt":"2019-01-22T00:00:00+03:30",'
    '"lte":1548116774000}}},"_source":{"includes":["geo.*","url"],'
    '"excludes":"method"},"explain":true,"track_scores":true}',
    '{"query":{"match":{"status":"404"}},"_source":false,'
    '"sort":"method.keyword","track_total_hits":false}',
    '{"query":{"match_all":{"boost":2}},"size":0}',
    '{"query":{"match":{"request_time":1.5}},"sort":[{"request_time":"asc"}]}',
]

HTTPC = [
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
    b"X-Elastic-Product: Elasticsearch\r\nContent-Length: 27\r\n\r\n"
    b'{"took":1,"errors":false}\n\n',
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"5\r\nhello\r\n1A;e=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nT: v\r\n\r\n",
    b"HTTP/1.0 200 OK\r\nConnection: close\r\n\r\nuntil the end",
    b"HTTP/1.1 404 Not Found\r\nContent-Length: 70\r\n\r\n"
    b'{"error":{"type":"index_not_found_exception"},"status":404}          ',
    b"HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n",
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Internal Server Error\r\n"
    b"content-length: 0\r\nconnection: close\r\n\r\n",
]

# fuzz_json_merge: a stored source, a newline, an update's "doc"
MERGE = [
    b'{"foo":"bar","count":1,"nested":{"one":1,"two":2}}\n{"foo":"baz","nested":{"one":3}}',
    b'{"big":9007199254740993,"a":[1, 2],"o":{"x":{"y":1}}}\n{"o":{"x":2},"a":[1,2],"n":null}',
    b'{ "k" : "v" , "e" : {} }\n{"e":{"f":{"g":"\\u0041"}},"k":"v"}',
    b'{}\n{"a":{"b":{"c":[{"d":1}]}}}',
]

# fuzz_analyze: text for the standard analyzer (scripts, joiners, emoji)
ANALYZE = [
    "Mozilla/5.0 (compatible; AhrefsBot/6.1; +http://ahrefs.com/robot/) U.S.A. 1,000.5 it's foo_bar",
    "گوشی موبایل سامسونگ می\u200cخواهم قیمت ۱۲۳۴ تومان ٫٬",
    "中文😀テスト ひらがな👍日本 カタ・カナ ｶﾞ ⺀〇々 훈민정음 ไทย123 ภาษาไทย",
    "I \u2764\ufe0f logs \U0001F44D\U0001F3FD \U0001F1EE\U0001F1F7 1\ufe0f\u20e3 #\ufe0e "
    "\U0001F468\u200d\U0001F469\u200d\U0001F467 \U0001F3F4\U000E0067\U000E0062\U000E007F ©™",
    "א'ב צה' א\"ב a.ב\"ג x\u200by soft\u00adhyphen \u2b55\ufe0e\u200d\u2b55 _\u200d\U0001F600",
]


# fuzz_disk_settings: one value per line, in disk.h's setting order
DISK = ["true\n85%\n200GB\n90%\n150GB\n95%\n100GB\n30s",
        "false\n0.5\n\n0.6\n\n0.99\n1mb\n1m",
        "\n3gb\n\n2gb\n\n1gb\n",
        "\n10gb\n\n90%\n",
        "\n92%",
        "\n\n1gb\n\n2gb",
        "\n\n\n\n\n\n\n9s",
        "\n0\n\n0\n\n0",
        "\n101%\n-1\n1.5\nlots\n-5%\n\n10 s"]


def main():
    build = os.path.abspath(sys.argv[1])
    corpus = os.path.join(HERE, "corpus")
    shutil.rmtree(corpus, ignore_errors=True)
    os.makedirs(os.path.join(corpus, "fuzz_block"))
    subprocess.run([os.path.join(build, "tests/codec/fuzz_block"), "--seconds", "0",
                    "--write-seeds", os.path.join(corpus, "fuzz_block")], check=True)
    os.makedirs(os.path.join(corpus, "fuzz_libcodec"))
    subprocess.run([os.path.join(build, "tests/fuzz/fuzz_libcodec"), "--seconds", "0",
                    "--write-seeds", os.path.join(corpus, "fuzz_libcodec")], check=True)
    os.makedirs(os.path.join(corpus, "fuzz_sidx"))
    subprocess.run([os.path.join(build, "tests/query/fuzz_sidx"), "--write-seeds",
                    os.path.join(corpus, "fuzz_sidx")], check=True)
    os.makedirs(os.path.join(corpus, "fuzz_postings"))
    subprocess.run([os.path.join(build, "tests/query/fuzz_postings"), "--write-seeds",
                    os.path.join(corpus, "fuzz_postings")], check=True)
    lines = log_lines()
    for i, line in enumerate(lines):
        write("fuzz_logparse", "line-%02d" % i, line)
    sample = b"\n".join(lines[:BULK_SAMPLE_LINES]) + b"\n"
    real = subprocess.run([os.path.join(build, "datasets/nginx2json"), "--format", "bulk",
                           "--index", "logs", "/dev/stdin"], input=sample, check=True,
                          capture_output=True).stdout
    write("fuzz_bulk", "sample-bulk", real)
    for i, b in enumerate(BULK):
        write("fuzz_bulk", "e2e-%02d" % i, b)
    for i, u in enumerate(URLS):
        write("fuzz_url", "url-%02d" % i, u)
    for i, q in enumerate(DSL):
        write("fuzz_dsl", "query-%02d" % i, q)
    for i, r in enumerate(HTTPC):
        write("fuzz_httpc", "resp-%02d" % i, r)
    for i, m in enumerate(MERGE):
        write("fuzz_json_merge", "merge-%02d" % i, m)
    for i, t in enumerate(ANALYZE):
        write("fuzz_analyze", "text-%02d" % i, t)
    for i, t in enumerate(DISK):
        write("fuzz_disk_settings", "values-%02d" % i, t)
    # the catalogue rows of the target's template store (run over any seeds)
    os.makedirs(os.path.join(corpus, "fuzz_catalog"))
    subprocess.run([os.path.join(build, "tests/fuzz/fuzz_catalog"), "0",
                    os.path.join(corpus, "fuzz_url")], check=True,
                   env=dict(os.environ, FDS_FUZZ_CATALOG_SEEDS=os.path.join(corpus, "fuzz_catalog")),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
