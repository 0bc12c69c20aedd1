#!/usr/bin/env python3
"""Benchmark: is loadgen itself fast enough?  loadgen vs wrk on a trivial endpoint.

Both tools hit the same trivial endpoint (GET / -> "ok") with the same number
of connections and threads for the same time; the runs alternate (wrk,
loadgen, wrk, loadgen, ...) so drifting background load hits both alike, and
the median of the repeats is compared.  The target (DESIGN.md section 8,
issue 6) is loadgen's QPS within 10% of wrk's: if loadgen were much slower,
its own overhead, not the server, would cap every QPS it reports.

Targets: the loadgen test fixture (tests/loadgen/testserver.c, libmicrohttpd
with an internal epoll thread pool, no delay) always; nginx too when it is
installed (a throw-away config serving `return 200 "ok"` on a free loopback
port).  On a 2-core machine the client and the server share the CPUs, so the
figures measure client efficiency as much as server speed -- which is the
point of the comparison.

Writes results/loadgen_vs_wrk.json and results/loadgen_vs_wrk.md.
Usage: loadgen_vs_wrk.py --loadgen BIN --server BIN [--out-dir results]
       [--connections 32] [--threads 2] [--duration 5] [--repeats 5]
"""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def start_fixture(server, prefix=(), pool=2):
    p = subprocess.Popen(list(prefix) + [server, "--port", "0", "--mode", "delay",
                                         "--pool", str(pool)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    port = int(p.stdout.readline().split()[1])
    return p, port, None


def start_nginx():
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not nginx:
        return None
    d = tempfile.mkdtemp(prefix="lg-nginx-")
    port = free_port()
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""daemon off; worker_processes 2; pid %s/nginx.pid; error_log %s/error.log;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path %s; proxy_temp_path %s;
  fastcgi_temp_path %s; uwsgi_temp_path %s; scgi_temp_path %s;
  server { listen 127.0.0.1:%d; location / { return 200 "ok"; } } }
""" % (d, d, d, d, d, d, d, port))
    p = subprocess.Popen([nginx, "-c", conf, "-p", d], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            return p, port, d
        except OSError:
            time.sleep(0.1)
    p.terminate()
    return None


def child_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_wrk(port, a, prefix=(), threads=None):
    c0 = child_cpu()
    out = subprocess.run(list(prefix) + ["wrk", "-t%d" % (threads or a.threads), "-c%d" % a.connections, "-d%ds" % a.duration,
                          "http://127.0.0.1:%d/" % port], capture_output=True, text=True,
                         timeout=a.duration * 5 + 30).stdout
    cpu = child_cpu() - c0
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out)
    n = re.search(r"(\d+) requests in", out)
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if not m or not n:
        raise SystemExit("cannot read wrk output:\n" + out)
    return float(m.group(1)), int(errs.group(1)) if errs else 0, cpu * 1e6 / max(1, int(n.group(1)))


def run_loadgen(port, a, tmp, prefix=(), threads=None):
    js = os.path.join(tmp, "lg.json")
    c0 = child_cpu()
    subprocess.run(list(prefix) + [a.loadgen, "run", "--port", str(port), "--path", "/",
                    "--method", "GET",
                    "--clients", str(a.connections), "--threads", str(threads or a.threads),
                    "--duration", str(a.duration), "--warmup", "0", "--quiet", "--json", js],
                   check=True, capture_output=True, timeout=a.duration * 5 + 30)
    cpu = child_cpu() - c0
    r = json.load(open(js))["result"]
    return (r["qps"], r["errors"], r["latency_ms"]["p50"], r["latency_ms"]["p99"],
            cpu * 1e6 / max(1, r["sent"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--out-dir", default="results")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed")
    os.makedirs(a.out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="lg-bench-")
    # (name, server, client command prefix, client threads)
    targets = [("loadgen test fixture (libmicrohttpd, 2 epoll threads, GET /)",
                start_fixture(a.server), (), a.threads)]
    if (os.cpu_count() or 1) >= 2 and shutil.which("taskset"):
        # the fair comparison on a small machine: the server alone on CPU 0,
        # the client alone on CPU 1, so neither client's own CPU use changes
        # what the server gets; both should then reach the server's limit
        targets.append(("pinned: fixture (1 thread) on CPU 0, client (1 thread) on CPU 1",
                        start_fixture(a.server, ("taskset", "-c", "0"), 1),
                        ("taskset", "-c", "1"), 1))
    ng = start_nginx()
    if ng:
        targets.append(("nginx (return 200 \"ok\")", ng, (), a.threads))
    results = []
    for name, (proc, port, _), prefix, threads in targets:
        wrk_q, lg_q, lg_p50, lg_p99, wrk_err, lg_err = [], [], [], [], 0, 0
        wrk_cpu, lg_cpu = [], []
        try:
            for i in range(a.repeats):
                q, e, cpu = run_wrk(port, a, prefix, threads)
                wrk_q.append(q)
                wrk_cpu.append(cpu)
                wrk_err += e
                q, e, p50, p99, cpu = run_loadgen(port, a, tmp, prefix, threads)
                lg_q.append(q)
                lg_cpu.append(cpu)
                lg_err += e
                lg_p50.append(p50)
                lg_p99.append(p99)
                print("%s: repeat %d: wrk %.0f req/s, loadgen %.0f req/s" %
                      (name, i + 1, wrk_q[-1], lg_q[-1]), file=sys.stderr)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        wm, lm = statistics.median(wrk_q), statistics.median(lg_q)
        results.append({
            "target": name, "connections": a.connections, "threads": threads,
            "duration_s": a.duration, "repeats": a.repeats,
            "wrk_qps": wm, "loadgen_qps": lm, "ratio_loadgen_over_wrk": lm / wm if wm else None,
            # the target guards against loadgen's own overhead capping what it
            # measures: being faster than wrk is not a failure
            "loadgen_at_least_0_9_of_wrk": bool(wm and lm / wm >= 0.90),
            "within_10_percent": bool(wm and abs(lm / wm - 1) <= 0.10),
            "wrk_qps_runs": wrk_q, "loadgen_qps_runs": lg_q,
            "wrk_non2xx": wrk_err, "loadgen_errors": lg_err,
            "wrk_client_cpu_us_per_request": statistics.median(wrk_cpu),
            "loadgen_client_cpu_us_per_request": statistics.median(lg_cpu),
            "loadgen_latency_p50_ms": statistics.median(lg_p50),
            "loadgen_latency_p99_ms": statistics.median(lg_p99),
        })
    doc = {"benchmark": "loadgen_vs_wrk", "ncpu": os.cpu_count(),
           "wrk_version": subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0],
           "method": "alternating runs wrk/loadgen, median of repeats; same connections, threads, "
                     "duration; loadgen with --warmup 0 like wrk; client CPU = user+system "
                     "time of the client process per request sent (robust to other load on "
                     "the machine, unlike QPS)",
           "loadavg_at_end": list(os.getloadavg()),
           "results": results}
    with open(os.path.join(a.out_dir, "loadgen_vs_wrk.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    lines = ["# loadgen vs wrk on a trivial endpoint", "",
             "Same connections (%d), threads (%d) and duration (%d s); %d alternating repeats, "
             "medians; %d CPUs shared by client and server. Target: loadgen's QPS at least 90%% of "
             "wrk's (its own overhead must not cap what it measures)."
             % (a.connections, a.threads, a.duration, a.repeats, os.cpu_count()), "",
             "| target | wrk req/s | loadgen req/s | loadgen / wrk | loadgen >= 0.9 x wrk | within 10% | wrk client CPU us/req | loadgen client CPU us/req | loadgen p50 ms | loadgen p99 ms |",
             "|---|---:|---:|---:|---|---|---:|---:|---:|---:|"]
    for r in results:
        lines.append("| %s | %.0f | %.0f | %.3f | %s | %s | %.2f | %.2f | %.3f | %.3f |" % (
            r["target"], r["wrk_qps"], r["loadgen_qps"], r["ratio_loadgen_over_wrk"],
            "yes" if r["loadgen_at_least_0_9_of_wrk"] else "no",
            "yes" if r["within_10_percent"] else "no", r["wrk_client_cpu_us_per_request"],
            r["loadgen_client_cpu_us_per_request"], r["loadgen_latency_p50_ms"],
            r["loadgen_latency_p99_ms"]))
    lines += ["", "Load average at the end: %.2f %.2f %.2f (other work on the machine makes QPS "
              "noisy; the per-request client CPU is the steadier figure)." % os.getloadavg()]
    if not ng:
        lines += ["", "nginx is not installed here, so only the test fixture was measured."]
    with open(os.path.join(a.out_dir, "loadgen_vs_wrk.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
