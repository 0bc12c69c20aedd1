#!/usr/bin/env python3
"""Does `loadgen ab` over a three-node cluster give the same verdict as
against each node alone?

The cluster is tests/loadgen/lgcluster.py's: fieldstore nodes on 127.0.0.1
(plain), 127.0.0.2 (basic auth) and 127.0.0.3 (HTTPS), each holding the
bundled sample under ZSTD (logs-zstd) and best_compression
(logs-deflate).  Each repeat runs the same A/B (--a logs-deflate --b
logs-zstd, same seed, rounds, clients) against the three nodes together and
against each node alone, in an order that reverses every repeat (cluster,
n1, n2, n3, then n3, n2, n1, cluster), so a drift of the machine favours
no target.

For each metric the verdict is loadgen's own: the ratio b/a with the
min-max of its per-round ratios, "clear" when that range does not reach 1.
The cluster agrees with a node when both verdicts are clear in the same
direction, or neither is clear; "within the spread" when the cluster's
ratio lies inside the nodes' per-round min-max.  Medians over repeats,
with min-max.  Results: results/cluster_ab.json and .md.

Usage: cluster_ab.py --loadgen BIN [--repeats 2] [--rounds 4]
       [--round-duration 3] [--out-dir results]; FDS_SERVER, FDS_NGINX2JSON
and FDS_DATASET as tests/e2e/fdsserver.py reads them.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "loadgen"))
from lgcluster import USER, start_cluster, stop_cluster  # noqa: E402

METRICS = ("qps", "qps_per_cpu_percent", "latency_ms.mean", "latency_ms.p99")


def direction(cell):
    """+1 / -1 for a clear verdict above / below 1, 0 for none."""
    if cell.get("verdict") != "clear" or cell.get("ratio") is None:
        return 0
    return 1 if cell["ratio"] > 1 else -1


def run_ab(a, target_hosts, cert, pwfile, out):
    cmd = [a.loadgen, "ab", "--host", target_hosts, "--cacert", cert, "--user", USER,
           "--password-file", pwfile, "--a", "logs-deflate", "--b", "logs-zstd",
           "--rounds", str(a.rounds), "--round-duration", str(a.round_duration),
           "--warmup", "1", "--clients", "6", "--threads", "2", "--quiet", "--json", out]
    print("+", " ".join(cmd), file=sys.stderr)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise SystemExit("loadgen ab failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
    with open(out) as f:
        d = json.load(f)
    # ratio b/a: ratios[0] is reference (b) / side (a)
    cells = d["ratios"][0]
    return {m: {k: cells[m][k] for k in ("ratio", "min", "max", "verdict")} for m in METRICS}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--round-duration", type=float, default=3)
    ap.add_argument("--out-dir", default="results")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="fds-cluster-ab-")
    nodes, cert, pwfile, _ = start_cluster(work)
    targets = [("cluster", ",".join(n.url for n in nodes))] + \
              [("node %s" % n.addr, n.url) for n in nodes]
    runs = {name: [] for name, _ in targets}
    try:
        for rep in range(a.repeats):
            order = targets if rep % 2 == 0 else list(reversed(targets))
            for name, hosts in order:
                out = os.path.join(work, "ab-%d-%s.json" % (rep, name.replace(" ", "_")))
                runs[name].append(run_ab(a, hosts, cert, pwfile, out))
    finally:
        stop_cluster(nodes)
        shutil.rmtree(work, ignore_errors=True)

    summary = {}
    for name in runs:
        summary[name] = {}
        for m in METRICS:
            rs = [r[m]["ratio"] for r in runs[name] if r[m]["ratio"] is not None]
            summary[name][m] = {
                "median_ratio": statistics.median(rs) if rs else None,
                "min_ratio": min(rs) if rs else None, "max_ratio": max(rs) if rs else None,
                "round_min": min(r[m]["min"] for r in runs[name]),
                "round_max": max(r[m]["max"] for r in runs[name]),
                "verdicts": [r[m]["verdict"] for r in runs[name]],
                "directions": [direction(r[m]) for r in runs[name]]}
    agree = {}
    for m in METRICS:
        c = summary["cluster"][m]
        per = {}
        for name in runs:
            if name == "cluster":
                continue
            s = summary[name][m]
            same = sorted(set(c["directions"])) == sorted(set(s["directions"])) and \
                len(set(c["directions"])) == 1
            within = c["median_ratio"] is not None and \
                s["round_min"] <= c["median_ratio"] <= s["round_max"]
            per[name] = {"same_verdict": same, "within_spread": within}
        agree[m] = per
    doc = {"tool": "bench/loadgen/cluster_ab.py", "repeats": a.repeats, "rounds": a.rounds,
           "round_duration_s": a.round_duration, "clients": 6, "threads": 2,
           "pair": "b = logs-zstd (ZSTD) / a = logs-deflate (best_compression)",
           "runs": runs, "summary": summary, "agreement": agree}
    os.makedirs(a.out_dir, exist_ok=True)
    with open(os.path.join(a.out_dir, "cluster_ab.json"), "w") as f:
        json.dump(doc, f, indent=1)
    lines = ["# loadgen ab: three-node loopback cluster against each node alone", "",
             "`%s` (repeats %d, %d rounds of %g s per side, 6 clients, 2 threads; order "
             "reversed every repeat). Ratio = ZSTD / best_compression (b/a); median over "
             "repeats [min-max over repeats]; rounds: the min-max of every per-round "
             "ratio; verdict per repeat (clear = every round on the same side of 1)."
             % (" ".join(sys.argv[:1] + ["--repeats", str(a.repeats), "--rounds",
                                          str(a.rounds), "--round-duration",
                                          str(a.round_duration)]),
                a.repeats, a.rounds, a.round_duration), "",
             "| metric | target | ratio | rounds | verdicts | same verdict as cluster | "
             "cluster within this spread |", "|---|---|---:|---|---|---|---|"]
    for m in METRICS:
        for name in runs:
            s = summary[name][m]
            ag = agree[m].get(name)
            fmt = (lambda v: "n/a" if v is None else "%.3f" % v)
            lines.append("| %s | %s | %s [%s-%s] | %s-%s | %s | %s | %s |" % (
                m, name, fmt(s["median_ratio"]), fmt(s["min_ratio"]), fmt(s["max_ratio"]),
                fmt(s["round_min"]), fmt(s["round_max"]), ", ".join(s["verdicts"]),
                "" if not ag else ("yes" if ag["same_verdict"] else "no"),
                "" if not ag else ("yes" if ag["within_spread"] else "no")))
    with open(os.path.join(a.out_dir, "cluster_ab.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
