"""HTTPS (--tls-cert/--tls-key) with a self-signed certificate made here with
the openssl CLI, and basic auth (--users) with SHA-512 crypt hashes, answered as Elasticsearch does (401 security_exception with
WWW-Authenticate: Basic realm="security" charset="UTF-8")."""
import base64
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import unittest

from fdsserver import SERVER, Server

CHALLENGE = 'Basic realm="security" charset="UTF-8"'


def openssl(*args, stdin=None):
    return subprocess.run(["openssl"] + list(args), check=True, capture_output=True,
                          input=stdin).stdout


def crypt_hash(password):
    """SHA-512 crypt, as docs/api.md says to make one: `mkpasswd -m sha-512`
    (Debian package whois; `openssl passwd -6` cannot hash an empty
    password, so it is used for non-empty ones only)."""
    if password:
        return openssl("passwd", "-6", "-stdin", stdin=password.encode()).decode().strip()
    return subprocess.run(["mkpasswd", "-m", "sha-512", "-s"], input=b"", check=True,
                          capture_output=True).stdout.decode().strip()


class TlsAuth(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="fds-tls-")
        cls.cert = os.path.join(cls.tmp, "cert.pem")
        cls.key = os.path.join(cls.tmp, "key.pem")
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", cls.key,
                "-out", cls.cert, "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1")
        cls.users = os.path.join(cls.tmp, "users")
        with open(cls.users, "w") as f:
            f.write("# name:hash\n\nadmin:%s\nalice:%s\n"
                    % (crypt_hash(""), crypt_hash("s3cret")))
        cls.srv = Server(extra_args=["--tls-cert", cls.cert, "--tls-key", cls.key,
                                     "--users", cls.users]).start()

    @classmethod
    def tearDownClass(cls):
        cls.srv.cleanup()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def req(self, method, path, user=None, password=None, body=None, verify=True):
        ctx = ssl.create_default_context(cafile=self.cert) if verify else \
            ssl._create_unverified_context()
        c = http.client.HTTPSConnection("127.0.0.1", self.srv.port, context=ctx, timeout=30)
        h = {"Content-Type": "application/json"}
        if user is not None:
            h["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % (user, password)).encode()).decode()
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        raw = r.read()
        c.close()
        return r.status, r.getheader("WWW-Authenticate"), json.loads(raw) if raw else None

    def test_https_with_good_password(self):
        st, _, body = self.req("GET", "/", "alice", "s3cret")
        self.assertEqual(st, 200, body)
        self.assertIn("version", body)
        st, _, body = self.req("PUT", "/t", "alice", "s3cret", body="{}")
        self.assertEqual(st, 200, body)
        st, _, body = self.req("GET", "/t/_count", "alice", "s3cret")  # cached check
        self.assertEqual(st, 200, body)

    def test_empty_password(self):
        st, _, body = self.req("GET", "/", "admin", "")
        self.assertEqual(st, 200, body)
        r = subprocess.run(["curl", "-sk", "-u", "admin:",
                            "https://127.0.0.1:%d/" % self.srv.port],
                           capture_output=True)
        self.assertIn(b'"version"', r.stdout)

    def test_no_credentials(self):
        st, challenge, body = self.req("GET", "/_cat/indices")
        self.assertEqual(st, 401)
        self.assertEqual(challenge, CHALLENGE)
        reason = "missing authentication credentials for REST request [/_cat/indices]"
        self.assertEqual(body, {"error": {
            "root_cause": [{"type": "security_exception", "reason": reason,
                            "header": {"WWW-Authenticate": CHALLENGE}}],
            "type": "security_exception", "reason": reason,
            "header": {"WWW-Authenticate": CHALLENGE}}, "status": 401})

    def test_wrong_password_and_user(self):
        for user, pw in (("alice", "wrong"), ("alice", ""), ("admin", "x"), ("bob", "s3cret")):
            st, challenge, body = self.req("PUT", "/x", user, pw, body="{}")
            self.assertEqual(st, 401, (user, pw))
            self.assertEqual(challenge, CHALLENGE)
            self.assertEqual(body["error"]["reason"],
                             "unable to authenticate user [%s] for REST request [/x]" % user)
        st, _, _ = self.req("GET", "/x", "alice", "s3cret")
        self.assertEqual(st, 404)  # nothing was created

    def test_plain_http_refused(self):
        c = http.client.HTTPConnection("127.0.0.1", self.srv.port, timeout=5)
        with self.assertRaises((OSError, http.client.HTTPException)):
            c.request("GET", "/")
            c.getresponse().read()
        c.close()


class StartupErrors(unittest.TestCase):
    def run_server(self, args):
        d = tempfile.mkdtemp(prefix="fds-test-")
        try:
            p = subprocess.run([SERVER, "--data", d, "--port", "0"] + args,
                               capture_output=True, timeout=20)
            return p.returncode, p.stderr.decode()
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_bad_users_line(self):
        tmp = tempfile.mkdtemp(prefix="fds-users-")
        try:
            path = os.path.join(tmp, "users")
            with open(path, "w") as f:
                f.write("admin:%s\n# ok\nbroken line without colon\n" % crypt_hash("x"))
            rc, err = self.run_server(["--users", path])
            self.assertEqual(rc, 1)
            self.assertIn("users file [%s] line 3" % path, err)
            with open(path, "w") as f:
                f.write("admin:plaintext\n")
            rc, err = self.run_server(["--users", path])
            self.assertEqual(rc, 1)
            self.assertIn("line 1", err)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_key_without_cert(self):
        rc, err = self.run_server(["--tls-key", "/nonexistent"])
        self.assertEqual(rc, 1)
        self.assertIn("--tls-cert", err)


if __name__ == "__main__":
    unittest.main()
