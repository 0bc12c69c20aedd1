"""A test cluster for loadgen on loopback: fieldstore nodes on 127.0.0.1,
127.0.0.2 and 127.0.0.3 -- plain HTTP on the first, basic auth on the
second, HTTPS on the third -- each an independent fieldstore holding the
same indices loaded from the same sample.

fieldstore has no clustering of its own: the "cluster" here is nodes with
the same data, which is what loadgen's A/B needs (it spreads its
connections over the nodes round robin and reads each node's CPU and
settings).  Used by test_cluster.py and bench/loadgen/cluster_ab.py.

The certificate is made here with `openssl req` (self-signed, subjectAltName
IP:127.0.0.3) and the users file with `mkpasswd -m sha-512` (Debian package
whois), both installed by scripts/setup.sh.
"""
import base64
import http.client
import json
import os
import secrets
import ssl
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from fdsserver import Server, convert, exchange  # noqa: E402

MAPPING = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "datasets", "nginx-mapping.json")
USER = "bench"
# the A/B pair: the same documents under two stored-fields codecs
INDICES = (("logs-zstd", "ZSTD"), ("logs-deflate", "best_compression"))


class Node(Server):
    """One fieldstore bound to `addr`, optionally with TLS and/or basic auth."""

    def __init__(self, workdir, name, addr, cert=None, key=None, users=None, password=None):
        extra = ["--bind", addr]
        if cert:
            extra += ["--tls-cert", cert, "--tls-key", key]
        if users:
            extra += ["--users", users]
        super().__init__(data_dir=os.path.join(workdir, name), extra_args=extra)
        os.makedirs(self.data, exist_ok=True)
        self.addr, self.cert, self.password = addr, cert, password if users else None

    @property
    def url(self):
        return "%s://%s:%d" % ("https" if self.cert else "http", self.addr, self.port)

    def request(self, method, path, body=None, headers=None, timeout=120):
        if self.cert:
            ctx = ssl.create_default_context(cafile=self.cert)
            conn = http.client.HTTPSConnection(self.addr, self.port, context=ctx,
                                               timeout=timeout)
        else:
            conn = http.client.HTTPConnection(self.addr, self.port, timeout=timeout)
        h = {}
        if self.password is not None:
            h["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % (USER, self.password)).encode()).decode()
        h.update(headers or {})
        return exchange(conn, method, path, body, h)

    def load(self, bulk):
        """The A/B indices with the sample's documents, refreshed."""
        with open(MAPPING) as f:
            mapping = json.load(f)
        for index, codec in INDICES:
            st, b, _ = self.request("PUT", "/" + index, {
                "settings": {"index": {"codec": codec}}, "mappings": mapping})
            assert st == 200, (self.url, b)
            st, b, _ = self.request("POST", "/_bulk?refresh=true", bulk[index],
                                    headers={"Content-Type": "application/x-ndjson"})
            assert st == 200 and b["errors"] is False, (self.url, str(b)[:300])


def make_secrets(workdir):
    """(cert, key, users file, password, password file) under workdir."""
    cert = os.path.join(workdir, "cert.pem")
    key = os.path.join(workdir, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.3",
                    "-addext", "subjectAltName=IP:127.0.0.3"], check=True, capture_output=True)
    password = "pw-" + secrets.token_hex(8)
    h = subprocess.run(["mkpasswd", "-m", "sha-512", "-s"], input=password.encode(), check=True,
                       capture_output=True).stdout.decode().strip()
    users = os.path.join(workdir, "users")
    with open(users, "w") as f:
        f.write("%s:%s\n" % (USER, h))
    pwfile = os.path.join(workdir, "password")
    with open(pwfile, "w") as f:
        f.write(password + "\n")
    os.chmod(pwfile, 0o600)
    return cert, key, users, password, pwfile


def bulk_bodies():
    return {index: convert("bulk", index=index) for index, _ in INDICES}


def start_cluster(workdir, extra_plain=0):
    """The three nodes (plus `extra_plain` more plain ones on 127.0.0.1),
    started and loaded.  Returns (nodes, cert, password file, password)."""
    cert, key, users, password, pwfile = make_secrets(workdir)
    nodes = [Node(workdir, "n1", "127.0.0.1"),
             Node(workdir, "n2", "127.0.0.2", users=users, password=password),
             Node(workdir, "n3", "127.0.0.3", cert=cert, key=key)]
    nodes += [Node(workdir, "x%d" % i, "127.0.0.1") for i in range(extra_plain)]
    bulk = bulk_bodies()
    try:
        for n in nodes:
            n.start()
            n.load(bulk)
    except BaseException:
        stop_cluster(nodes)
        raise
    return nodes, cert, pwfile, password


def stop_cluster(nodes):
    for n in nodes:
        if n.proc and n.proc.poll() is None:
            try:
                n.stop()
            except Exception as e:  # noqa: BLE001 -- report, keep stopping the rest
                print("stopping %s: %s" % (n.url, e), file=sys.stderr)
