"""Start a real `fieldstore` server on a free loopback port for a test, and
talk to it over HTTP/1.1 (Python's http.client: the test harness is not what
this project is about, so it uses the standard library).

Environment (set by ctest, see CMakeLists.txt here):
  FDS_SERVER      path of the fieldstore binary
  FDS_NGINX2JSON  path of the nginx2json converter
  FDS_DATASET     path of the real nginx sample

Teardown checks the server: stopping it (other than with kill9) must see it
exit with status 0, and the part of its log it wrote must hold no sanitizer
report, so a build with -DFDS_ASAN=ON -DFDS_UBSAN=ON turns a memory error or
leak in the server into a failing test.
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

SERVER = os.environ.get("FDS_SERVER", "fieldstore")
NGINX2JSON = os.environ.get("FDS_NGINX2JSON", "nginx2json")
DATASET = os.environ.get("FDS_DATASET", "datasets/nginx-zanbil-access-10k.log")
START_TIMEOUT_S = 20
TAIL_BYTES = 8000  # of the log, quoted when the server failed
# What AddressSanitizer, LeakSanitizer and UBSan print on a finding.
SANITIZER_MARKS = (b"ERROR: AddressSanitizer", b"ERROR: LeakSanitizer",
                   b"runtime error:")


class ServerFailure(AssertionError):
    """The server crashed, exited with a non-zero status or logged a
    sanitizer report."""


class Server:
    """One fieldstore process with its own data directory."""

    def __init__(self, data_dir=None, extra_args=()):
        self.own_dir = data_dir is None
        self.data = data_dir or tempfile.mkdtemp(prefix="fds-test-")
        self.extra = list(extra_args)
        self.proc = None
        self.port = None
        self.log = None

    def start(self):
        port_file = os.path.join(self.data, "..", os.path.basename(self.data) + ".port")
        port_file = os.path.abspath(port_file)
        if os.path.exists(port_file):
            os.unlink(port_file)
        self.log = open(self.data.rstrip("/") + ".log", "ab")
        self.log_start = self.log.tell()
        self.proc = subprocess.Popen(
            [SERVER, "--data", self.data, "--port", "0", "--port-file", port_file]
            + self.extra, stdout=self.log, stderr=self.log)
        deadline = time.time() + START_TIMEOUT_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("fieldstore exited with %s" % self.proc.returncode)
            if os.path.exists(port_file):
                with open(port_file) as f:
                    self.port = int(f.read().strip())
                os.unlink(port_file)
                return self
            time.sleep(0.02)
        raise RuntimeError("fieldstore did not start in %ss" % START_TIMEOUT_S)

    def stop(self, sig=signal.SIGTERM):
        """Stop the server with `sig`; raises ServerFailure when it did not
        exit cleanly (any exit status but 0, unless `sig` is SIGKILL) or its
        log holds a sanitizer report."""
        rc = None
        if self.proc:
            if self.proc.poll() is None:
                self.proc.send_signal(sig)
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            rc = self.proc.returncode
        if self.log:
            self.log.close()
            self.log = None
        self.proc = None
        if rc is not None:
            self.check_exit(rc, sig)

    def check_exit(self, rc, sig):
        with open(self.data.rstrip("/") + ".log", "rb") as f:
            f.seek(self.log_start)
            out = f.read()
        report = next((m for m in SANITIZER_MARKS if m in out), None)
        if report is None and (rc == 0 or sig == signal.SIGKILL):
            return
        at = out.find(report) if report else max(0, len(out) - TAIL_BYTES)
        why = ("a sanitizer report (%s)" % report.decode()) if report else \
              "exit status %s" % rc
        raise ServerFailure("fieldstore (data %s) stopped with %s; its log:\n%s"
                            % (self.data, why,
                               out[at:at + TAIL_BYTES].decode(errors="replace")))

    def kill9(self):
        self.stop(signal.SIGKILL)

    def cleanup(self):
        """Stop (raising ServerFailure as stop() does, with the log kept for
        a look) and remove the data directory and, on success, the log."""
        try:
            self.stop()
        finally:
            if self.own_dir:
                shutil.rmtree(self.data, ignore_errors=True)
        if self.own_dir:
            try:
                os.unlink(self.data.rstrip("/") + ".log")
            except OSError:
                pass

    def request(self, method, path, body=None, headers=None, timeout=120):
        """Returns (status, parsed JSON or raw text, raw bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        return exchange(conn, method, path, body, headers)


def exchange(conn, method, path, body=None, headers=None):
    """One request on `conn` (an http.client connection, closed after):
    body a dict/list (sent as JSON), str or bytes; JSON content type plus
    `headers`.  Returns (status, parsed JSON or raw text, raw bytes)."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    conn.request(method, path, body=body, headers=h)
    resp = conn.getresponse()
    raw = resp.read()
    conn.close()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return resp.status, parsed, raw


def convert(fmt, index=None, src=None):
    """Run nginx2json on the real sample; returns bytes of its output."""
    args = [NGINX2JSON, "--format", fmt]
    if index:
        args += ["--index", index]
    args.append(src or DATASET)
    return subprocess.run(args, check=True, capture_output=True).stdout


class ServerTestCase(unittest.TestCase):
    """A test class sharing one started server: `self.srv`, and `self.req`
    for `self.srv.request`.  Subclasses that load data call
    super().setUpClass() first."""

    @classmethod
    def setUpClass(cls):
        cls.srv = Server().start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()

    def req(self, *a, **k):
        return self.srv.request(*a, **k)

    def assertError(self, resp, status, etype, reason=None):
        """`resp` (a request's answer) is Elasticsearch's error shape with
        this status, type (also in root_cause) and, if given, reason;
        returns the parsed body."""
        st, body, raw = resp
        self.assertEqual(st, status, body)
        self.assertEqual(body["status"], status)
        self.assertEqual(body["error"]["type"], etype, body)
        self.assertEqual(body["error"]["root_cause"][0]["type"], etype, body)
        if reason is not None:
            self.assertEqual(body["error"]["reason"], reason, body)
        raw.decode("utf-8")  # the whole answer is valid UTF-8
        return body
