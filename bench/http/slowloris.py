#!/usr/bin/env python3
"""Slow-client benchmark: hold N connections that trickle a request head
(one byte every --interval seconds, from 127.0.0.2 .. 127.0.0.(1+S)), and
measure the latency of a normal GET /_cluster/health from 127.0.0.1 while
they are held.  Prints the connections accepted, latency percentiles (ms)
and how long the server let the slow heads live.

  bench/http/slowloris.py --port 9200 [--conns 10000] [--sources 16]
                          [--interval 5] [--probes 50]

Start the server with defaults (--head-timeout 10) to see the bound work;
it never gates CI.  Needs RLIMIT_NOFILE above --conns (raised to the hard
limit here)."""
import argparse
import http.client
import resource
import socket
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=9200)
    ap.add_argument("--conns", type=int, default=10000)
    ap.add_argument("--sources", type=int, default=16)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--probes", type=int, default=50)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    socks, failed = [], 0
    t0 = time.monotonic()
    for i in range(a.conns):
        s = socket.socket()
        try:
            s.bind(("127.0.0.%d" % (2 + i % a.sources), 0))
            s.settimeout(5)
            s.connect(("127.0.0.1", a.port))
            s.sendall(b"G")
            s.setblocking(False)
            socks.append(s)
        except OSError:
            failed += 1
            s.close()
    print("held %d slow connections (%d failed to connect) in %.2f s"
          % (len(socks), failed, time.monotonic() - t0))
    lat = []
    next_trickle = time.monotonic() + a.interval
    for _ in range(a.probes):
        c = http.client.HTTPConnection("127.0.0.1", a.port, timeout=30)
        t = time.monotonic()
        c.request("GET", "/_cluster/health")
        c.getresponse().read()
        lat.append(1000 * (time.monotonic() - t))
        c.close()
        if time.monotonic() >= next_trickle:
            for s in socks:
                try:
                    s.send(b"E")
                except OSError:
                    pass
            next_trickle += a.interval
        time.sleep(0.05)
    lat.sort()
    pct = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
    print("normal GET latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f"
          % (pct(0.5), pct(0.9), pct(0.99), lat[-1]))
    alive = socks
    while alive and time.monotonic() - t0 < 120:
        still = []
        for s in alive:
            try:
                d = s.recv(1)
                if d == b"":
                    continue
            except BlockingIOError:
                try:
                    s.send(b"T")
                except OSError:
                    continue
                still.append(s)
            except OSError:
                continue
        alive = still
        time.sleep(0.5)
    print("slow heads closed by the server after %.1f s (%d still open)"
          % (time.monotonic() - t0, len(alive)))
    for s in socks:
        s.close()


if __name__ == "__main__":
    main()
