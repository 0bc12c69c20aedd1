#!/usr/bin/env bash
# Server CPU per search request, end to end (parse, query, fetch, render):
# starts fieldstore on 127.0.0.1, loads the real 10k-line nginx sample into
# a ZSTD index (one segment), runs loadgen's default workload (random match
# queries on service_name, method, error_code, url; size 10; 8 clients,
# 2 threads) RUNS times for SECONDS each, and prints per run and the median:
# QPS, server CPU % (100 = one core), QPS per server CPU %, and server CPU
# microseconds per request (= CPU% / 100 / QPS * 1e6).
#
# usage: bench/query/server_cpu.sh [BUILD_DIR (default build)] [RUNS (3)] [SECONDS (10)]
# writes results/server_cpu.json (one loadgen result per run)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build}; RUNS=${2:-3}; SECS=${3:-10}
work=$(mktemp -d /tmp/fds-servercpu.XXXXXX)
pid=
trap '[[ -n "$pid" ]] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
"$B/fieldstore" --data "$work/data" --port 0 --port-file "$work/port" 2>"$work/log" &
pid=$!
for _ in $(seq 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
U=http://127.0.0.1:$(cat "$work/port")
curl -sf -XPUT "$U/logs-zstd" -H 'Content-Type: application/json' \
  -d '{"settings":{"index":{"codec":"ZSTD","refresh_interval":"-1"}}}' >/dev/null
"$B/datasets/nginx2json" --format bulk --index logs-zstd \
  datasets/nginx-zanbil-access-10k.log > "$work/bulk.ndjson"
curl -sf -XPOST "$U/_bulk" -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$work/bulk.ndjson" | grep -q '"errors":false'
curl -sf -XPOST "$U/logs-zstd/_refresh" >/dev/null
for r in $(seq "$RUNS"); do
  "$B/tools/loadgen/loadgen" run --port "$(cat "$work/port")" --index logs-zstd \
    --duration "$SECS" --clients 8 --threads 2 --server-pid "$pid" \
    --json "$work/run$r.json" --quiet >/dev/null 2>&1
done
mkdir -p results
python3 - "$work" "$RUNS" <<'PY'
import json, statistics, sys
w, n = sys.argv[1], int(sys.argv[2])
rs = [json.load(open(f"{w}/run{i}.json"))["result"] for i in range(1, n + 1)]
us = lambda r: r["cpu_percent"] / 100 / r["qps"] * 1e6
for i, r in enumerate(rs, 1):
    print(f"run {i}: qps {r['qps']:.0f}  server cpu {r['cpu_percent']:.1f}%  "
          f"qps/cpu% {r['qps_per_cpu_percent']:.2f}  server us/request {us(r):.1f}")
m = statistics.median
print(f"median: qps {m(r['qps'] for r in rs):.0f}  qps/cpu% "
      f"{m(r['qps_per_cpu_percent'] for r in rs):.2f}  server us/request "
      f"{m(us(r) for r in rs):.1f}")
json.dump(rs, open("results/server_cpu.json", "w"), indent=1)
PY
