"""Start a real `fieldstore` server on a free loopback port for a test, and
talk to it over HTTP/1.1 (Python's http.client: the test harness is not what
this project is about, so it uses the standard library).

Environment (set by ctest, see CMakeLists.txt here):
  FDS_SERVER      path of the fieldstore binary
  FDS_NGINX2JSON  path of the nginx2json converter
  FDS_DATASET     path of the real nginx sample
"""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

SERVER = os.environ.get("FDS_SERVER", "fieldstore")
NGINX2JSON = os.environ.get("FDS_NGINX2JSON", "nginx2json")
DATASET = os.environ.get("FDS_DATASET", "datasets/nginx-zanbil-access-10k.log")
START_TIMEOUT_S = 20


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
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.log:
            self.log.close()
            self.log = None
        self.proc = None

    def kill9(self):
        self.stop(signal.SIGKILL)

    def cleanup(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.data, ignore_errors=True)
            try:
                os.unlink(self.data.rstrip("/") + ".log")
            except OSError:
                pass

    def request(self, method, path, body=None, headers=None, timeout=120):
        """Returns (status, parsed JSON or raw text, raw bytes)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
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
