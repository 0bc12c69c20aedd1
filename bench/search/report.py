#!/usr/bin/env python3
"""Reduce the loadgen A/B files of bench/search/run.sh to medians and ratios.

Why it exists: `loadgen ab` reports means over rounds; on a noisy 2-core
machine one disturbed round moves a mean, so this benchmark quotes the median
over rounds of every metric and the ratio ZSTD / other of those medians.

Inputs (written by run.sh): a list file of lines "WORKLOAD CODEC AB_JSON"
(each AB_JSON is `loadgen ab` output with A = CODEC, B = ZSTD) and, in
--store-dir, store.CODEC.json = GET /{index}/_stats/store of every index.

Outputs: --json (config, store sizes, per-round values, medians, ratios,
target checks) and --md (the tables), also printed on stdout.  Exit status
1 when any request failed (the files are still written), else 0.
Units: QPS in successful requests/s; latency in ms (closed loop, from the
moment the client was ready); CPU % on top's scale (100 = one core busy);
sizes in bytes.  Standard library only.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

# DESIGN.md section 9 targets: ratio ZSTD / other at least this much.
TARGETS = {"best_compression": 2.0, "lucene_best_compression": 4.7}
METRICS = [  # key, label, getter of one round's SIDE
    ("qps", "QPS", lambda s: s["qps"]),
    ("p50_ms", "p50 ms", lambda s: s["latency_ms"]["p50"]),
    ("p99_ms", "p99 ms", lambda s: s["latency_ms"]["p99"]),
    ("cpu_percent", "server CPU %", lambda s: s["cpu_percent"]),
    ("qps_per_cpu_percent", "QPS / CPU %", lambda s: s["qps_per_cpu_percent"]),
]
WORKLOAD_TEXT = {
    "match10": "random match queries (loadgen default), size 10",
    "match100": "the same match queries, size 100 (fetch-heavy)",
    "ids10": "ids queries, 10 uniformly random ids each (hits in 10 blocks)",
}


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(b, a):
    return b / a if a not in (None, 0) and b is not None else None


def fmt(x, nd=1):
    if x is None:
        return "n/a"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{nd}f}"


def side_rounds(side):
    rows = []
    for r in side["rounds"]:
        row = {k: get(r) for k, _, get in METRICS}
        row["errors"] = r["errors"]
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    for opt in ("runs", "store-dir", "codecs", "json", "md", "command",
                "build-seconds", "round-seconds", "warmup"):
        ap.add_argument("--" + opt, required=True)
    for opt in ("docs", "seed", "rounds", "clients", "threads", "total-seconds"):
        ap.add_argument("--" + opt, type=int, required=True)
    o = ap.parse_args()
    codecs = o.codecs.split(",")

    store = {}
    for c in codecs:
        st = json.load(open(os.path.join(o.store_dir, f"store.{c}.json")))
        p = st["_all"]["primaries"]["store"]
        store[c] = {k: p.get(k) for k in ("size_in_bytes", "stored_fields_in_bytes",
                                          "postings_in_bytes",
                                          "source_uncompressed_in_bytes")}

    runs, errors, loads = [], 0, []
    for line in open(o.runs):
        wl, codec, path = line.split()
        ab = json.load(open(path))
        a, b = side_rounds(ab["a"]), side_rounds(ab["b"])
        errors += sum(r["errors"] for r in a + b)
        med_a = {k: median([r[k] for r in a]) for k, _, _ in METRICS}
        med_b = {k: median([r[k] for r in b]) for k, _, _ in METRICS}
        paired = [ratio(rb["qps"], ra["qps"]) for ra, rb in zip(a, b)]
        sysinfo = ab.get("system") or {}
        for key in ("loadavg_before", "loadavg_after"):
            if sysinfo.get(key):
                loads.append(sysinfo[key][0])
        runs.append({
            "workload": wl, "other": codec, "zstd_index": ab["b"]["index"],
            "other_index": ab["a"]["index"],
            "rounds_other": a, "rounds_zstd": b,
            "median_other": med_a, "median_zstd": med_b,
            "ratio_zstd_over_other": {k: ratio(med_b[k], med_a[k]) for k in med_a},
            "qps_ratio_per_round": paired,
            "errors": sum(r["errors"] for r in a + b),
            "loadavg_1m_before_after": [sysinfo.get("loadavg_before"),
                                        sysinfo.get("loadavg_after")],
        })

    workloads = []
    for r in runs:
        if r["workload"] not in workloads:
            workloads.append(r["workload"])
    md = []
    md.append(f"Command: `{o.command}`  ")
    md.append(f"Machine: {os.cpu_count()} CPUs, {platform.platform()}; "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ")
    synth_args = os.environ.get("SYNTH_ARGS", "").strip()
    md.append(f"Data: {o.docs:,} synthlogs{' ' + synth_args if synth_args else ''} "
              f"documents (seed {o.seed}) per index, "
              f"1 segment each; loadgen closed loop, {o.clients} clients, "
              f"{o.threads} threads; {o.rounds} rounds x {o.round_seconds} s per "
              f"side after {o.warmup} s warm-up; order A B per round "
              f"(A = other codec, B = ZSTD).  Index build (s): {o.build_seconds}; "
              f"whole run {o.total_seconds} s.")
    if loads:
        md.append(f"Machine load (1-min load average at the start and end of each A/B "
                  f"run): min {min(loads):.2f}, median {statistics.median(loads):.2f}, "
                  f"max {max(loads):.2f} (the server and loadgen alone keep it near "
                  f"{os.cpu_count()}; more means other work shared the CPUs).")
    md.append("")
    md.append("Values are medians over rounds; ZSTD's row is from its rounds "
              "against every codec (median of all). Ratio = ZSTD / codec "
              "(medians of the same A/B pair). CPU %: 100 = one core busy.")
    md.append("")
    md.append("### Store size")
    md.append("")
    md.append("| codec | store bytes | stored fields bytes | postings bytes | "
              "ZSTD / codec (store) | ZSTD / codec (stored fields) |")
    md.append("|---|---:|---:|---:|---:|---:|")
    z = store[codecs[0]]
    for c in codecs:
        s = store[c]
        md.append(f"| {c} | {fmt(s['size_in_bytes'])} | "
                  f"{fmt(s['stored_fields_in_bytes'])} | {fmt(s['postings_in_bytes'])} | "
                  f"{fmt(ratio(z['size_in_bytes'], s['size_in_bytes']), 3)} | "
                  f"{fmt(ratio(z['stored_fields_in_bytes'], s['stored_fields_in_bytes']), 3)} |")
    md.append("")
    summary = {}
    for wl in workloads:
        md.append(f"### {wl}: {WORKLOAD_TEXT.get(wl, wl)}")
        md.append("")
        md.append("| codec | QPS | p50 ms | p99 ms | server CPU % | QPS / CPU % | "
                  "QPS ratio ZSTD/codec | QPS/CPU% ratio ZSTD/codec | "
                  "QPS ratio per round |")
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---|")
        wr = [r for r in runs if r["workload"] == wl]
        zr = [x for r in wr for x in r["rounds_zstd"]]
        zmed = {k: median([x[k] for x in zr]) for k, _, _ in METRICS}
        summary[wl] = {codecs[0]: {"median": zmed}}
        md.append(f"| {codecs[0]} | {fmt(zmed['qps'])} | {fmt(zmed['p50_ms'], 2)} | "
                  f"{fmt(zmed['p99_ms'], 2)} | {fmt(zmed['cpu_percent'])} | "
                  f"{fmt(zmed['qps_per_cpu_percent'], 2)} | 1 | 1 | |")
        for r in wr:
            m, q = r["median_other"], r["ratio_zstd_over_other"]
            summary[wl][r["other"]] = {"median": m, "ratio_zstd_over_other": q}
            per = ", ".join(fmt(x, 2) for x in r["qps_ratio_per_round"])
            md.append(f"| {r['other']} | {fmt(m['qps'])} | {fmt(m['p50_ms'], 2)} | "
                      f"{fmt(m['p99_ms'], 2)} | {fmt(m['cpu_percent'])} | "
                      f"{fmt(m['qps_per_cpu_percent'], 2)} | **{fmt(q['qps'], 2)}** | "
                      f"**{fmt(q['qps_per_cpu_percent'], 2)}** | {per} |")
        md.append("")

    checks = []
    for other, need in TARGETS.items():
        if other not in codecs:
            continue
        for wl in workloads:
            q = summary[wl][other]["ratio_zstd_over_other"]
            for k in ("qps", "qps_per_cpu_percent"):
                checks.append({"check": f"{wl}: {k} ZSTD/{other} >= {need}",
                               "value": q[k], "met": q[k] is not None and q[k] >= need})
    if "best_compression" in codecs:
        zs, bs = store[codecs[0]]["size_in_bytes"], store["best_compression"]["size_in_bytes"]
        checks.append({"check": "store bytes ZSTD <= best_compression",
                       "value": ratio(zs, bs), "met": zs <= bs})
    md.append("### DESIGN.md section 9 targets")
    md.append("")
    md.append("| target | measured | met |")
    md.append("|---|---:|---|")
    for c in checks:
        md.append(f"| {c['check']} | {fmt(c['value'], 3)} | {'yes' if c['met'] else 'no'} |")
    md.append("")
    md.append(f"Request errors over all runs: {errors}.")
    text = "\n".join(md) + "\n"

    doc = {
        "tool": "fieldstore-bench-search", "schema_version": 1,
        "command": o.command,
        "config": {"docs": o.docs, "seed": o.seed, "codecs": codecs,
                   "workloads": {w: WORKLOAD_TEXT.get(w, w) for w in workloads},
                   "rounds": o.rounds, "round_seconds": float(o.round_seconds),
                   "warmup_seconds": float(o.warmup), "clients": o.clients,
                   "threads": o.threads, "ncpu": os.cpu_count(),
                   "cpu_percent_scale": "100 = one core",
                   "latency_unit": "ms", "qps_unit": "successful requests/s",
                   "summary": "median over rounds; ratio = ZSTD / other of medians",
                   "build_seconds": o.build_seconds,
                   "total_seconds": o.total_seconds},
        "store": store, "summary": summary, "targets": checks,
        "errors": errors, "loadavg_1m": loads, "runs": runs,
    }
    with open(o.json, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    with open(o.md, "w") as f:
        f.write("# Search A/B by stored-fields codec (bench/search)\n\n" + text)
    print(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
