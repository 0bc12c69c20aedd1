#!/usr/bin/env python3
"""Reduce bench/scale/run.sh repeats to one Markdown table (medians, min–max).

usage: report.py --runs LIST --class-dir DIR [--docs N --seed S --pool N
                 --clients N --duration S --command CMD]
LIST lines: "REPEAT LABEL PREFIX"; PREFIX.one.<class>.json (loadgen, one
client over the class's bodies), PREFIX.one.<class>.cpu_us (server CPU us
during it), PREFIX.tput.json (loadgen, CLIENTS clients), PREFIX.cpu_us and
PREFIX.stats{0,1}.json (server CPU us and GET _stats/search around it).
Units: ms for service times and CPU per query; QPS = successful requests/s;
CPU % on top's scale (100 = one core); query phase % = query_time_in_micros
over the server's CPU time during the one-client passes
(PREFIX.statsA.json .. stats0.json).
"""
import argparse
import glob
import json
import os
import statistics

CLASS_ORDER = ["keyword", "url-1", "url-n", "text-n", "all"]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, nd=2):
    if x is None:
        return "-"
    return f"{x:,.{nd}f}"


def read_int(path):
    try:
        return int(open(path).read().strip())
    except (OSError, ValueError):
        return None


def mib(kib):
    return kib / 1024.0 if kib is not None else None


def mr(xs, nd=2):
    """The median of xs and, over several repeats, their range: "m (lo–hi)"."""
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return fmt(med(xs), nd)
    return f"{fmt(med(xs), nd)} ({fmt(min(xs), nd)}–{fmt(max(xs), nd)})"


def query_us(path):
    s = json.load(open(path))["_all"]["primaries"]["search"]
    return s["query_time_in_micros"], s["fetch_time_in_micros"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", required=True)
    ap.add_argument("--class-dir", required=True)
    ap.add_argument("--docs", default="?")
    ap.add_argument("--seed", default="?")
    ap.add_argument("--pool", default="?")
    ap.add_argument("--clients", default="?")
    ap.add_argument("--duration", default="?")
    ap.add_argument("--command", default="bench/scale/run.sh")
    ap.add_argument("--store", help="GET /{index}/_stats/store answer")
    ap.add_argument("--build-stats", help="scale-build.json of the data directory")
    ap.add_argument("--json", help="also write the medians here")
    a = ap.parse_args()
    counts = {}
    for f in glob.glob(os.path.join(a.class_dir, "class.*.ndjson")):
        c = os.path.basename(f)[len("class."):-len(".ndjson")]
        counts[c] = sum(1 for line in open(f) if line.strip())
    classes = [c for c in CLASS_ORDER if c in counts] + sorted(
        c for c in counts if c not in CLASS_ORDER)
    labels, one, tput, mem = [], {}, {}, {}
    for line in open(a.runs):
        _, label, pre = line.split()
        if label not in labels:
            labels.append(label)
        for c in classes:
            r = json.load(open(f"{pre}.one.{c}.json"))["result"]
            st = r["service_time_ms"]
            cpu = int(open(f"{pre}.one.{c}.cpu_us").read()) / 1000.0
            one.setdefault((label, c), []).append(
                (st["p50"], st["p99"], st["max"], cpu / max(r["ok"], 1)))
        mem.setdefault(label, []).append(tuple(
            read_int(f"{pre}.{k}") for k in ("rss_idle", "rss_load", "hwm")))
        r = json.load(open(f"{pre}.tput.json"))["result"]
        q0, f0 = query_us(f"{pre}.stats0.json")
        q1, f1 = query_us(f"{pre}.stats1.json")
        qa, fa = query_us(f"{pre}.statsA.json")
        one_cpu = sum(int(open(f"{pre}.one.{c}.cpu_us").read()) for c in classes)
        tput.setdefault(label, []).append((
            r["qps"], r.get("cpu_percent"), r.get("qps_per_cpu_percent"),
            100.0 * (q0 - qa) / one_cpu if one_cpu else None,
            100.0 * (q1 - q0) / ((q1 - q0) + (f1 - f0)) if q1 > q0 else None))
    out = []
    out.append(f"# Engine at scale ({a.docs} docs, seed {a.seed}, 1 segment, ZSTD)\n")
    out.append(f"Command: `{a.command}`\n")
    nrep = max(len(v) for v in tput.values())
    out.append(f"Medians over {nrep} repeats per server (min–max), servers alternating.\n")
    out.append(f"## One client, every body of the {a.pool}-query pool once\n")
    out.append("| server | class | bodies | p50 ms | p99 ms | max ms | server CPU ms / query |")
    out.append("|---|---|---:|---:|---:|---:|---:|")
    for label in labels:
        for c in classes:
            v = one[(label, c)]
            out.append(f"| {label} | {c} | {counts[c]} | {mr([x[0] for x in v], 3)} | "
                       f"{mr([x[1] for x in v], 3)} | {mr([x[2] for x in v], 3)} | "
                       f"{mr([x[3] for x in v], 3)} |")
    out.append(f"\n## {a.clients} clients, loadgen default mix, {a.duration} s\n")
    out.append("| server | QPS | server CPU % | QPS / server CPU % | QPS per server core | "
               "query phase % of server CPU (1 client) | query / (query + fetch) % (8 clients) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for label in labels:
        v = tput[label]
        qpc = [x[2] * 100 if x[2] else None for x in v]
        out.append(f"| {label} | {mr([x[0] for x in v], 0)} | {mr([x[1] for x in v], 1)} | "
                   f"{mr([x[2] for x in v], 2)} | {mr(qpc, 0)} | "
                   f"{mr([x[3] for x in v], 1)} | {mr([x[4] for x in v], 1)} |")
    out.append("\n## Server memory (MiB)\n")
    out.append("| server | RSS after a warm pass | RSS under 8 clients | peak (VmHWM) |")
    out.append("|---|---:|---:|---:|")
    for label in labels:
        v = mem[label]
        out.append(f"| {label} | " + " | ".join(
            fmt(mib(med(x[i] for x in v)), 0) for i in range(3)) + " |")
    build = store = None
    if a.build_stats and os.path.exists(a.build_stats):
        build = json.load(open(a.build_stats))
    if a.store and os.path.exists(a.store):
        p = json.load(open(a.store))["_all"]["primaries"]["store"]
        store = {k: p.get(k) for k in ("size_in_bytes", "stored_fields_in_bytes")}
    ndocs = int(a.docs) if str(a.docs).isdigit() else None
    if build or store:
        out.append("\n## The index\n")
        out.append("| docs | bulk s | refresh s | force-merge s | docs/s (bulk + refresh) | "
                   "server CPU s (build) | peak RSS MiB (build) | store bytes / doc | "
                   "stored fields bytes / doc |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        b = build or {}
        per = (lambda k: store[k] / ndocs if store and ndocs and store.get(k) else None)
        out.append(f"| {fmt(ndocs, 0) if ndocs else a.docs} | {fmt(b.get('bulk_s'), 1)} | "
                   f"{fmt(b.get('refresh_s'), 1)} | {fmt(b.get('forcemerge_s'), 1)} | "
                   f"{fmt(b.get('docs_per_s'), 0)} | {fmt(b.get('server_cpu_s'), 1)} | "
                   f"{fmt(mib(b.get('vmhwm_kib')), 0)} | {fmt(per('size_in_bytes'), 1)} | "
                   f"{fmt(per('stored_fields_in_bytes'), 1)} |")
        if not build:
            out.append("\n(The index was built before build figures were kept.)")
    if a.json:
        res = {"docs": ndocs, "build": build, "store": store, "servers": {}}
        for label in labels:
            v = tput[label]
            res["servers"][label] = {
                "classes": {c: dict(zip(("p50_ms", "p99_ms", "max_ms", "cpu_ms_per_query"),
                                        (med(x[i] for x in one[(label, c)]) for i in range(4))))
                            for c in classes},
                "qps": med(x[0] for x in v), "cpu_percent": med(x[1] for x in v),
                "qps_per_cpu_percent": med(x[2] for x in v),
                "query_phase_pct_one_client": med(x[3] for x in v),
                "query_share_pct_8_clients": med(x[4] for x in v),
                "rss_idle_kib": med(x[0] for x in mem[label]),
                "rss_load_kib": med(x[1] for x in mem[label]),
                "vmhwm_kib": med(x[2] for x in mem[label])}
        json.dump(res, open(a.json, "w"), indent=1)
    out.append("\nQuery phase % of server CPU: search.query_time_in_micros over the "
               "server's CPU time during the one-client passes over the pool (a phase "
               "timer is wall time; with one request at a time it is close to CPU "
               "time, and other load on the machine can only raise it). QPS per "
               "server core = QPS / server CPU % x 100.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
