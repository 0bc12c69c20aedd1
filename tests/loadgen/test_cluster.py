"""`loadgen` against a three-node loopback cluster (lgcluster.py): plain HTTP
on 127.0.0.1, basic auth on 127.0.0.2, HTTPS on 127.0.0.3, each node an
independent fieldstore with the same two indices (ZSTD and
best_compression).

What is checked (never a timing): `loadgen ab` over the three nodes runs
with --cacert and a password from a file or the environment; every node
gets requests, and the report names the cluster, its nodes, each index's
index.codec per node, and every node's CPU (with the sum); and each kind of
bad input gets its sentence and exit status: a node that refuses, a 401
(no credentials, wrong password, an API key the node does not take), a
certificate that does not verify (and --insecure, which warns), a password
on the command line, and a node killed during a round (the round is marked
and left out of the means, exit status 3).  That the cluster gives the
same verdict as each node alone is measured by bench/loadgen/cluster_ab.py.

Environment: FDS_LOADGEN (the loadgen binary) and what tests/e2e/fdsserver.py
reads (FDS_SERVER, FDS_NGINX2JSON, FDS_DATASET).
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

from lgcluster import USER, start_cluster, stop_cluster

LOADGEN = os.environ.get("FDS_LOADGEN", "loadgen")


def load_strict(path):
    """The JSON at path; a key twice in one object fails."""
    def pairs(kv):
        keys = [k for k, _ in kv]
        assert len(keys) == len(set(keys)), "duplicate keys in %s: %s" % (path, keys)
        return dict(kv)
    with open(path) as f:
        return json.load(f, object_pairs_hook=pairs)
SHORT = ["--a", "logs-deflate", "--b", "logs-zstd", "--rounds", "2", "--round-duration", "1",
         "--warmup", "0.3", "--clients", "6", "--threads", "2", "--pool", "200",
         "--sample-docs", "100"]


class LoadgenCluster(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="fds-lgcluster-")
        # a fourth node (plain, 127.0.0.1) is the one killed mid-round
        cls.nodes, cls.cert, cls.pwfile, cls.password = start_cluster(cls.work, extra_plain=1)
        cls.three = ",".join(n.url for n in cls.nodes[:3])

    @classmethod
    def tearDownClass(cls):
        stop_cluster(cls.nodes)
        shutil.rmtree(cls.work, ignore_errors=True)

    def loadgen(self, *args, env=None, expect=0):
        e = dict(os.environ)
        e.pop("LOADGEN_PASSWORD", None)
        e.pop("FIELDSTORE_PASSWORD", None)
        e.update(env or {})
        r = subprocess.run([LOADGEN, *[str(a) for a in args]], capture_output=True, text=True,
                           timeout=300, env=e)
        if expect is not None:
            self.assertEqual(r.returncode, expect, r.stderr[-2000:])
        return r

    def out(self, name):
        p = os.path.join(self.work, name)
        if os.path.exists(p):
            os.remove(p)
        return p

    def test_ab_over_three_nodes(self):
        js, md = self.out("ab.json"), self.out("ab.md")
        r = self.loadgen("ab", "--host", self.three, "--cacert", self.cert, "--user", USER,
                         "--password-file", self.pwfile, *SHORT, "--json", js, "--md", md,
                         "--quiet")
        d = load_strict(js)
        cl = d["cluster"]
        self.assertEqual(cl["name"], "fieldstore")
        self.assertEqual([n["url"] for n in cl["nodes"]], [n.url for n in self.nodes[:3]])
        self.assertTrue(cl["nodes"][2]["url"].startswith("https://127.0.0.3:"))
        for n in cl["nodes"]:
            self.assertEqual(n["name"], "fieldstore-0")
            self.assertGreaterEqual(n["available_processors"], 1)
        for index, codec in (("logs-zstd", "ZSTD"), ("logs-deflate", "best_compression")):
            self.assertEqual(set(cl["index_codec"][index].values()), {codec})
            self.assertEqual(len(cl["index_codec"][index]), 3)
        self.assertEqual(d["marked_rounds"], [])
        self.assertEqual(d["config"]["rounds"], 2)
        for side in d["sides"]:
            self.assertEqual(side["errors"], 0)
            self.assertEqual(len(side["nodes"]), 3)
            for n in side["nodes"]:
                # every node worked, and reported CPU as Elasticsearch does
                self.assertGreater(n["cpu_percent"], 0, n)
                # Elasticsearch's scale for both: 100 = every core of the node
                self.assertTrue(0 <= n["process_cpu_percent"] <= 100, n)
                self.assertTrue(0 <= n["os_cpu_percent"] <= 100, n)
            procs = cl["nodes"][0]["available_processors"]
            for n in side["nodes"]:
                # the same window seen two ways: the node's percent (whole
                # numbers, share of all cores) and its CPU milliseconds
                self.assertLess(abs(n["cpu_percent"] / procs - n["process_cpu_percent"]), 5, n)
            total = sum(n["cpu_percent"] for n in side["nodes"])
            self.assertAlmostEqual(side["nodes_cpu"]["cpu_percent"], total, places=6)
            # without --server-pid the side's server CPU is the cluster's
            self.assertAlmostEqual(side["cpu_percent"], total, places=6)
            for rnd in side["rounds"]:
                self.assertEqual([t["url"] for t in rnd["targets"]],
                                 [n.url for n in self.nodes[:3]])
                for t in rnd["targets"]:
                    self.assertGreater(t["ok"], 0, t)  # round robin reached each node
                    self.assertEqual(t["connect"] + t["short_read"] + t["status"], 0, t)
        self.assertIn("## Cluster", r.stdout)
        with open(md) as f:
            text = f.read()
        self.assertIn("Cluster `fieldstore`, 3 nodes", text)
        self.assertIn("| https://127.0.0.3:", text)
        self.assertIn("**sum**", text)

    def test_password_from_environment(self):
        js = self.out("env.json")
        self.loadgen("run", "--host", self.nodes[1].url, "--user", USER, "--index", "logs-zstd",
                     "--duration", "1", "--warmup", "0.2", "--pool", "100", "--sample-docs",
                     "50", "--json", js, "--quiet", env={"LOADGEN_PASSWORD": self.password})
        with open(js) as f:
            d = json.load(f)
        self.assertEqual(d["result"]["errors"], 0)
        self.assertGreater(d["result"]["ok"], 0)
        self.assertEqual(d["config"]["auth"], "basic")
        self.assertNotIn(self.password, json.dumps(d))

    def test_refused_node(self):
        sk = socket.socket()
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
        sk.close()
        r = self.loadgen("ab", "--host", "%s,127.0.0.1:%d" % (self.nodes[0].url, port), *SHORT,
                         "--json", self.out("refused.json"), expect=1)
        self.assertIn("http://127.0.0.1:%d: connect: Connection refused" % port, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "refused.json")))

    def test_401(self):
        url = self.nodes[1].url
        r = self.loadgen("ab", "--host", url, *SHORT, expect=1)
        self.assertIn("%s answered GET / with HTTP 401" % url, r.stderr)
        self.assertIn("requires credentials", r.stderr)
        r = self.loadgen("ab", "--host", url, "--user", USER, *SHORT,
                         env={"LOADGEN_PASSWORD": "wrong"}, expect=1)
        self.assertIn("HTTP 401 Unauthorized: the credentials were refused", r.stderr)
        # fieldstore's file realm takes no API keys
        r = self.loadgen("ab", "--host", url, "--api-key", *SHORT,
                         env={"LOADGEN_API_KEY": "aWQ6a2V5"}, expect=1)
        self.assertIn("HTTP 401", r.stderr)

    def test_certificate_does_not_verify(self):
        url = self.nodes[2].url
        r = self.loadgen("ab", "--host", url, *SHORT, expect=1)
        self.assertIn("%s: TLS: the server's certificate does not verify" % url, r.stderr)
        self.assertIn("--cacert", r.stderr)
        r = self.loadgen("ab", "--host", url, "--insecure", *SHORT, "--quiet",
                         "--json", self.out("insecure.json"))
        self.assertIn("WARNING: --insecure", r.stderr)

    def test_every_node_needs_a_connection(self):
        r = self.loadgen("ab", "--host", self.three, *SHORT, "--clients", "2", expect=2)
        self.assertIn("fewer than the 3 nodes", r.stderr)

    def test_secrets_never_on_the_command_line(self):
        r = self.loadgen("ab", "--host", self.nodes[1].url, "--user", USER, "--password", "x",
                         *SHORT, expect=2)
        self.assertIn("ps(1)", r.stderr)
        r = self.loadgen("ab", "--host", self.nodes[1].url, "--user", USER, *SHORT, expect=2)
        self.assertIn("no password", r.stderr)

    def test_node_dies_mid_round(self):
        victim = self.nodes[3]
        hosts = "%s,%s" % (self.three, victim.url)
        js = self.out("dies.json")
        p = subprocess.Popen([LOADGEN, "ab", "--host", hosts, "--cacert", self.cert, "--user",
                              USER, "--password-file", self.pwfile, *SHORT[:4], "--rounds", "3",
                              *SHORT[6:], "--json", js],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        err, killed = [], []

        def read_stderr():
            for line in p.stderr:
                err.append(line)
                # round 1 is complete; kill the fourth node as round 2 measures
                if "[loadgen round 2/3" in line and not killed:
                    killed.append(line)
                    victim.kill9()

        t = threading.Thread(target=read_stderr)
        t.start()
        out = p.stdout.read()
        rc = p.wait(timeout=300)
        t.join()
        p.stdout.close()
        p.stderr.close()
        stderr = "".join(err)
        self.assertEqual(rc, 3, stderr[-3000:])
        self.assertIn("marked, not averaged in", stderr)
        self.assertIn("node %s failed" % victim.url, stderr)
        d = load_strict(js)
        self.assertEqual(d["config"]["rounds"], 1)  # round 1 only
        self.assertEqual([r["round"] for r in d["sides"][0]["rounds"]], [1])
        self.assertEqual([m["round"] for m in d["marked_rounds"]], [2, 3])
        self.assertIn(victim.url, d["marked_rounds"][0]["sides"][0]["reason"])
        self.assertIn("Marked rounds", out)


if __name__ == "__main__":
    unittest.main()
