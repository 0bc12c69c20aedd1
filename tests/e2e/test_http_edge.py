"""The HTTP edge: message framing (request smuggling, Expect: 100-continue),
HEAD, the JSON content-type rule, the response options every endpoint takes
(?pretty, ?filter_path, ?human, ?error_trace), the non-loopback warning and
the data directory lock.  Framing tests talk over raw sockets, because
http.client would not send such requests."""
import json
import os
import socket
import shutil
import subprocess
import tempfile
import time
import unittest

from fdsserver import SERVER, Server

MAX_BODY = 65536


def read_answer(sock, timeout=5.0):
    """One HTTP answer (head + Content-Length body) from `sock`:
    (status, headers dict lower-case, body bytes, closed after it)."""
    sock.settimeout(timeout)
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for l in lines[1:]:
        k, _, v = l.partition(":")
        headers[k.strip().lower()] = v.strip()
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    body, extra = rest[:n], rest[n:]
    closed = False
    try:
        sock.settimeout(1.0)
        more = sock.recv(65536)
        extra += more
        closed = more == b""
    except socket.timeout:
        pass
    return status, headers, body, closed, extra


class Edge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv = Server(extra_args=["--max-body", str(MAX_BODY)]).start()
        st, body, _ = cls.srv.request("PUT", "/logs", {})
        assert st == 200, body
        st, body, _ = cls.srv.request("PUT", "/logs/_doc/1?refresh=true",
                                      {"status": 200, "big": 1234567890123456789})
        assert st == 201, body

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def raw(self):
        return socket.create_connection(("127.0.0.1", self.srv.port), timeout=5)

    def put_head(self, doc_id, length, expect=False, tail=b""):
        """A raw socket that has sent the head of a document PUT."""
        s = self.raw()
        s.sendall(b"PUT /logs/_doc/%s HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s"
                  % (doc_id.encode(), b"Expect: 100-continue\r\n" if expect else b"",
                     length, tail))
        return s

    def assertNotExecuted(self, doc_id):
        st, _, _ = self.srv.request("GET", "/logs/_doc/" + doc_id)
        self.assertEqual(st, 404, "smuggled request was executed")

    # ---- 1. request smuggling (RFC 9112 §6.3) ---------------------------------
    def test_content_length_and_transfer_encoding(self):
        smuggled = (b"PUT /logs/_doc/smug1 HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        body = b"0\r\n\r\n" + smuggled
        s = self.raw()
        s.sendall(b"POST /logs/_search HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % len(body)
                  + body)
        st, h, _, closed, extra = read_answer(s)
        s.close()
        self.assertEqual(st, 400)
        self.assertEqual(h.get("connection", "").lower(), "close")
        self.assertTrue(closed)
        self.assertNotIn(b"HTTP/1.1", extra)
        self.assertNotExecuted("smug1")

    def test_two_different_content_lengths(self):
        smuggled = (b"PUT /logs/_doc/smug2 HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        s = self.raw()
        s.sendall(b"POST /logs/_search HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: 2\r\nContent-Length: %d\r\n\r\n{}" % (2 + len(smuggled))
                  + smuggled)
        st, h, _, closed, extra = read_answer(s)
        s.close()
        self.assertEqual(st, 400)
        self.assertTrue(closed)
        self.assertNotIn(b"HTTP/1.1", extra)
        self.assertNotExecuted("smug2")

    def test_unknown_transfer_encoding(self):
        s = self.raw()
        s.sendall(b"POST /logs/_search HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")
        st, _, _, closed, _ = read_answer(s)
        s.close()
        self.assertEqual(st, 400)
        self.assertTrue(closed)

    # ---- 2. Expect: 100-continue ------------------------------------------------
    def test_expect_over_limit_refused_before_body(self):
        t0 = time.monotonic()
        s = self.put_head("big", MAX_BODY + 1, expect=True)
        st, h, body, closed, _ = read_answer(s)
        s.close()
        self.assertLess(time.monotonic() - t0, 0.9 + 1.0)  # read_answer waits 1 s for EOF
        self.assertEqual(st, 413)  # not 100
        self.assertEqual(json.loads(body)["status"], 413)
        self.assertTrue(closed)

    def test_expect_under_limit_continues_at_once(self):
        doc = b'{"status": 201}'
        t0 = time.monotonic()
        s = self.put_head("small", len(doc), expect=True)
        interim = s.recv(1000)
        waited = time.monotonic() - t0
        self.assertTrue(interim.startswith(b"HTTP/1.1 100"), interim)
        self.assertLess(waited, 0.5)
        s.sendall(doc)
        st, _, _, _, _ = read_answer(s)
        s.close()
        self.assertIn(st, (200, 201))

    def test_declared_too_big_without_expect(self):
        s = self.put_head("big", MAX_BODY + 1, tail=b"{")
        st, _, _, closed, _ = read_answer(s)
        s.close()
        self.assertEqual(st, 413)
        self.assertTrue(closed)

    def test_chunked_over_limit_cut_while_sending(self):
        """A chunked body has no declared length: the 413 must come as soon
        as the body crosses --max-body, while the client is still sending,
        and the server must not read the rest."""
        piece, pause = 8192, 0.05          # 160 KiB/s: above --min-body-rate
        planned = 8 * MAX_BODY
        s = self.raw()
        s.sendall(b"PUT /logs/_doc/chunked HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n"
                  b"%x\r\n{\"pad\":\"\r\n" % len(b'{"pad":"'))
        sent, got = 0, b""
        while sent < planned and b"\r\n\r\n" not in got:
            try:
                s.sendall(b"%x\r\n%s\r\n" % (piece, b"x" * piece))
                sent += piece
            except OSError:  # reset after the answer: read what came
                break
            time.sleep(pause)
            s.setblocking(False)
            try:
                got += s.recv(65536)
            except (BlockingIOError, socket.timeout):
                pass
            s.setblocking(True)
        s.settimeout(5)
        try:
            while True:
                more = s.recv(65536)
                if not more:
                    break
                got += more
        except OSError:
            pass
        s.close()
        self.assertTrue(got.startswith(b"HTTP/1.1 413"), got[:200])
        body = json.loads(got.partition(b"\r\n\r\n")[2])
        self.assertEqual(body["error"]["type"], "content_too_long_exception")
        # cut near the limit (slack for a loaded machine), long before the
        # whole body
        self.assertLess(sent, MAX_BODY + 24 * piece, sent)
        st, _, _ = self.srv.request("GET", "/")
        self.assertEqual(st, 200)
        self.assertNotExecuted("chunked")

    # ---- 3. HEAD ----------------------------------------------------------------
    def head_and_get(self, path):
        s = self.raw()
        s.sendall(b"HEAD %s HTTP/1.1\r\nHost: x\r\n\r\nGET %s HTTP/1.1\r\nHost: x\r\n\r\n"
                  % (path.encode(), path.encode()))
        s.settimeout(5)
        buf = b""
        deadline = time.monotonic() + 5
        while buf.count(b"HTTP/1.1 ") < 2 or not buf.endswith((b"}", b"\n")):
            if time.monotonic() > deadline:
                break
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        s.close()
        first, _, second = buf.partition(b"\r\n\r\n")
        self.assertTrue(second.startswith(b"HTTP/1.1 "), "HEAD answer carried a body")
        def clen(head):
            for l in head.split(b"\r\n"):
                if l.lower().startswith(b"content-length:"):
                    return int(l.split(b":")[1])
        get_head, _, get_body = second.partition(b"\r\n\r\n")
        return first, clen(first), clen(get_head), get_body

    def test_head_has_get_content_length(self):
        for path in ("/logs", "/", "/logs/_doc/1", "/nope"):
            first, hl, gl, body = self.head_and_get(path)
            self.assertEqual(hl, gl, path)
            self.assertEqual(gl, len(body), path)
            self.assertGreater(hl, 0, path)
        self.assertTrue(self.head_and_get("/nope")[0].startswith(b"HTTP/1.1 404"))

    # ---- 4. content type (CSRF) -------------------------------------------------
    def test_boolean_parameters_take_true_or_false(self):
        # Booleans.parseBoolean: anything but true, false or a bare flag
        # is a 400, not a silent false
        for path in ("/logs/_search?profile=yes", "/_cat/indices?v=maybe",
                     "/logs/_search?request_cache=1",
                     "/logs/_async_search?keep_on_completion=maybe"):
            st, body, _ = self.srv.request("POST" if "search" in path else "GET", path)
            self.assertEqual(st, 400, (path, body))
            self.assertEqual(body["error"]["type"], "illegal_argument_exception")
            self.assertIn("as only [true] or [false] are allowed", body["error"]["reason"])
        for path in ("/logs/_search?profile=false", "/logs/_search?request_cache=true",
                     "/_cat/indices?v", "/_cat/indices?v=true&format=json"):
            st, body, _ = self.srv.request("POST" if "search" in path else "GET", path)
            self.assertEqual(st, 200, (path, body))

    def test_shard_request_bounds(self):
        # SearchRequest.validate: at least 1, on _search and _async_search
        for q in ("max_concurrent_shard_requests=1", "max_concurrent_shard_requests=5"):
            for ep in ("_search", "_async_search"):
                st, body, _ = self.srv.request("POST", "/logs/%s?%s" % (ep, q), {"size": 0})
                self.assertEqual(st, 200, (ep, q, body))
        for q in ("max_concurrent_shard_requests=0", "max_concurrent_shard_requests=x"):
            st, body, _ = self.srv.request("POST", "/logs/_search?" + q, {"size": 0})
            self.assertEqual((st, body["error"]["type"]), (400, "illegal_argument_exception"), q)
        # pre_filter_shard_size would start a pre-filter phase there is none
        # of here: refused as an unknown parameter, not taken and ignored
        for ep in ("_search", "_async_search", "_msearch"):
            st, body, _ = self.srv.request("POST", "/logs/%s?pre_filter_shard_size=3" % ep,
                                           {"size": 0} if ep != "_msearch" else None)
            self.assertEqual(st, 400, (ep, body))
            self.assertIn("pre_filter_shard_size", body["error"]["reason"], ep)

    def test_text_plain_body_refused(self):
        st, body, _ = self.srv.request("PUT", "/logs/_doc/csrf", '{"a":1}',
                                       headers={"Content-Type": "text/plain"})
        self.assertEqual(st, 406)
        self.assertEqual(body, {"error": "Content-Type header [text/plain] is not supported",
                                "status": 406})
        self.assertNotExecuted("csrf")

    def test_form_body_refused(self):
        st, body, _ = self.srv.request(
            "POST", "/logs/_doc", '{"a":1}',
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(st, 406)
        self.assertEqual(body["error"], "Content-Type header "
                         "[application/x-www-form-urlencoded] is not supported")

    def test_missing_content_type_refused(self):
        s = self.raw()
        s.sendall(b"PUT /logs/_doc/noct HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Length: 7\r\n\r\n{\"a\":1}")
        st, _, body, _, _ = read_answer(s)
        s.close()
        self.assertEqual(st, 406)
        self.assertEqual(json.loads(body), {"error": "Content-Type header is missing",
                                            "status": 406})
        self.assertNotExecuted("noct")

    def test_json_types_accepted(self):
        for i, ct in enumerate(["application/json", "application/json; charset=UTF-8",
                                "application/vnd.elasticsearch+json; compatible-with=8",
                                "Application/JSON"]):
            st, body, _ = self.srv.request("PUT", "/logs/_doc/ct%d" % i, '{"a":1}',
                                           headers={"Content-Type": ct})
            self.assertEqual(st, 201, (ct, body))
        bulk = '{"index":{"_index":"logs","_id":"nd"}}\n{"a":2}\n'
        for ct in ("application/x-ndjson",
                   "application/vnd.elasticsearch+x-ndjson; compatible-with=8"):
            st, body, _ = self.srv.request("POST", "/_bulk", bulk,
                                           headers={"Content-Type": ct})
            self.assertEqual(st, 200, (ct, body))

    def test_no_body_needs_no_content_type(self):
        s = self.raw()
        s.sendall(b"GET /logs/_count HTTP/1.1\r\nHost: x\r\n\r\n")
        st, _, _, _, _ = read_answer(s)
        s.close()
        self.assertEqual(st, 200)

    # ---- 6. pretty, filter_path, human, error_trace ------------------------------
    def test_pretty(self):
        for path in ("/?pretty", "/logs/_doc/1?pretty=true", "/nope?pretty",
                     "/_cluster/health?pretty"):
            st, body, raw = self.srv.request("GET", path)
            self.assertIn(b'\n  "', raw, path)
            self.assertTrue(raw.endswith(b"\n"), path)
            self.assertIsInstance(body, dict)
        _, _, raw = self.srv.request("GET", "/logs/_doc/1?pretty")
        self.assertIn(b'"_id" : "1"', raw)
        self.assertIn(b"1234567890123456789", raw)  # digits kept
        _, _, raw = self.srv.request("GET", "/logs/_doc/1")
        self.assertNotIn(b"\n", raw)

    def test_filter_path(self):
        st, body, _ = self.srv.request("GET", "/logs/_search?filter_path=hits.total.value,took")
        self.assertEqual(st, 200)
        self.assertEqual(set(body), {"hits", "took"})
        self.assertEqual(body["hits"], {"total": {"value": body["hits"]["total"]["value"]}})
        _, body, _ = self.srv.request("POST", "/logs/_search?filter_path=hits.hits._source",
                                      {"query": {"term": {"status": 200}}})
        self.assertEqual(body["hits"]["hits"][0]["_source"]["status"], 200, body)
        self.assertEqual(set(body["hits"]["hits"][0]), {"_source"})
        _, body, _ = self.srv.request("GET", "/logs/_doc/1?filter_path=_*")
        self.assertIn("_id", body)
        self.assertIn("_source", body)
        self.assertNotIn("found", body)
        _, body, _ = self.srv.request("GET", "/?filter_path=version.number")
        self.assertEqual(list(body), ["version"])
        self.assertEqual(list(body["version"]), ["number"])
        _, body, _ = self.srv.request("GET", "/?filter_path=**.number")
        self.assertEqual(list(body["version"]), ["number"])
        _, body, _ = self.srv.request("GET", "/?filter_path=no.such")
        self.assertEqual(body, {})
        _, body, raw = self.srv.request("GET", "/?filter_path=version.number&pretty")
        self.assertIn(b'"number" : ', raw)

    def test_filter_path_exclusions(self):
        """Leading '-' excludes (Elasticsearch's REST test
        search/70_response_filtering.yml, "Search results filtered using
        both includes and excludes filters", with its bodies written out)."""
        bulk = ('{"index":{"_index":"ff","_id":"1"}}\n'
                '{"name":"First document","properties":{"size":123,"meta":{"foo":"bar"}}}\n'
                '{"index":{"_index":"ff","_id":"2"}}\n'
                '{"name":"Second document","properties":{"size":465,"meta":{"foo":"bar","baz":"qux"}}}\n')
        st, body, _ = self.srv.request("POST", "/_bulk?refresh=true", bulk,
                                       headers={"Content-Type": "application/x-ndjson"})
        self.assertEqual((st, body["errors"]), (200, False))
        cases = [
            ("-**._source.properties,**._source",
             b'{"hits":{"hits":[{"_source":{"name":"First document"}},'
             b'{"_source":{"name":"Second document"}}]}}'),
            ("**.properties,-hits.hits._source.properties.meta",
             b'{"hits":{"hits":[{"_source":{"properties":{"size":123}}},'
             b'{"_source":{"properties":{"size":465}}}]}}'),
            # meta of the first document loses its only member: dropped
            ("**._source,-**.meta.foo",
             b'{"hits":{"hits":[{"_source":{"name":"First document","properties":{"size":123}}},'
             b'{"_source":{"name":"Second document","properties":{"size":465,"meta":{"baz":"qux"}}}}]}}'),
            # excludes alone keep everything else
            ("-took,-timed_out,-_shards,-hits.total,-hits.max_score,-hits.hits._s*,-hits.hits._index,-hits.hits.sort",
             b'{"hits":{"hits":[{"_id":"1"},{"_id":"2"}]}}'),
            ("-**", b'{}'),
            ("-*", b'{}'),
        ]
        for fp, want in cases:
            st, _, raw = self.srv.request(
                "POST", "/ff/_search?filter_path=" + fp,
                {"query": {"match_all": {}}, "sort": [{"properties.size": "asc"}]})
            self.assertEqual(st, 200, fp)
            self.assertEqual(raw, want, fp)
        st, _, raw = self.srv.request("POST", "/ff/_count?filter_path=-*",
                                      {"query": {"match_all": {}}})
        self.assertEqual((st, raw), (200, b"{}"))
        st, body, _ = self.srv.request("GET", "/ff/_search?filter_path=-hits.hits._source")
        self.assertEqual(st, 200)
        self.assertIn("took", body)
        self.assertEqual(body["hits"]["total"], {"value": 2, "relation": "eq"})
        for h in body["hits"]["hits"]:
            self.assertEqual(set(h), {"_index", "_id", "_score"}, h)
        # an object that was empty before the filter stays
        st, _, raw = self.srv.request("GET", "/ff/_doc/1?filter_path=-_source.*,-_seq_no,"
                                             "-_primary_term,-_version,-found,-_index")
        self.assertEqual(raw, b'{"_id":"1"}')
        self.srv.request("DELETE", "/ff")

    def test_human_and_error_trace_accepted(self):
        for p in ("/logs/_search?human", "/logs/_stats?human=true",
                  "/logs/_doc/1?error_trace=true", "/_cluster/health?human&error_trace"):
            st, body, _ = self.srv.request("GET", p)
            self.assertEqual(st, 200, (p, body))


class Startup(unittest.TestCase):
    def run_server(self, args, seconds=3):
        p = subprocess.Popen([SERVER, "--port", "0"] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT)
        try:
            out, _ = p.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            p.terminate()
            out, _ = p.communicate()
        return p.returncode, out.decode()

    # ---- 8. non-loopback bind without users -------------------------------------
    def test_non_loopback_warning(self):
        d = tempfile.mkdtemp(prefix="fds-test-")
        rc, out = self.run_server(["--data", d, "--bind", "0.0.0.0"], seconds=2)
        self.assertIn("WARNING", out)
        self.assertIn("without --users", out)
        rc, out = self.run_server(["--data", d, "--bind", "127.0.0.1"], seconds=2)
        self.assertNotIn("WARNING", out)

    # ---- --max-body has an upper bound (bodies are held whole in memory) ---------
    def test_max_body_bounded(self):
        d = tempfile.mkdtemp(prefix="fds-test-")
        rc, out = self.run_server(["--data", d, "--max-body", str(4 << 30)], seconds=5)
        self.assertEqual(rc, 2, out)
        self.assertIn("bad --max-body", out)
        shutil.rmtree(d, ignore_errors=True)

    # ---- 9. one server per data directory ----------------------------------------
    def test_data_directory_lock(self):
        first = Server().start()
        try:
            rc, out = self.run_server(["--data", first.data])
            self.assertEqual(rc, 1, out)
            self.assertIn("data directory %s is in use by pid %d" % (first.data, first.proc.pid),
                          out)
            st, _, _ = first.request("GET", "/")
            self.assertEqual(st, 200)
            first.stop()
            again = Server(data_dir=first.data).start()  # the lock went with the process
            again.stop()
        finally:
            first.cleanup()


if __name__ == "__main__":
    unittest.main()
