#!/usr/bin/env bash
# bench/scale/sizes.sh: the scaling table of DESIGN.md section 9 ("10M docs:
# QPS per server core within 2x of the 1M figure; RSS stays bounded").
#
# Runs bench/scale/run.sh once per size (default 100k, 1M and 10M
# documents, 10M being the size of the article the product answers), each
# index built once into ROOT/dN and reused, and joins their JSON results
# into one Markdown table: build seconds and docs/s, store and stored-fields
# bytes per document, RSS after the build and under load, QPS and QPS per
# server CPU % on the default mix, one-client p50 / p99 / max per query
# class, and the query phase's share of server CPU.  Run with --help.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
SIZES=100000,1000000,10000000
DATA_ROOT=""
SERVER=""
REPEATS=3
OUT=$ROOT/results/scale-sizes.md
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/scale/sizes.sh --data-root DIR [options]

For each size N in --sizes: bench/scale/run.sh --data DIR/dN --docs N
(building the index the first time: 10M documents took 6 min on 2 cores,
and 2.8 GB of disk), then one table of all sizes into OUT.

options:
  --data-root DIR   where the indices are built and kept (required)
  --sizes LIST      comma-separated document counts (default $SIZES)
  --server BIN      the fieldstore binary (default build/fieldstore)
  --repeats N       repeats per size, medians reported (default $REPEATS)
  --out FILE        Markdown output (default results/scale-sizes.md); each
                    size's own table goes to FILE's directory as
                    scale-sizes.N.md and .json
  -h, --help        this text
EOF
}

while (($#)); do
  case $1 in
    --data-root) DATA_ROOT=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --server) SERVER=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "scale sizes: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_ROOT ]] || { echo "scale sizes: --data-root DIR is required" >&2; exit 2; }
SERVER=${SERVER:-$ROOT/build/fieldstore}
outdir=$(dirname "$OUT")
mkdir -p "$outdir" "$DATA_ROOT"

jsons=()
IFS=, read -ra sizes <<< "$SIZES"
for n in "${sizes[@]}"; do
  "$here/run.sh" --data "$DATA_ROOT/d$n" --docs "$n" --server "fieldstore=$SERVER" \
    --repeats "$REPEATS" --out "$outdir/scale-sizes.$n.md" > /dev/null
  jsons+=("$outdir/scale-sizes.$n.json")
done

python3 - "$OUT" "bench/scale/sizes.sh${ORIG_ARGS:+ $ORIG_ARGS}" "${jsons[@]}" <<'PY'
import json, sys
out, cmd, files = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = [json.load(open(f)) for f in files]

def fmt(x, nd=1):
    return "-" if x is None else f"{x:,.{nd}f}"

def mib(k):
    return None if k is None else k / 1024.0

md = ["# Engine at scale: 100k to 10M documents\n",
      f"Command: `{cmd}` (each size's own tables: scale-sizes.N.md beside this file)\n",
      "## Build and size\n",
      "| docs | bulk s | refresh s | force-merge s | docs/s (bulk + refresh) | server CPU s | "
      "peak RSS MiB (build) | store bytes / doc | stored fields bytes / doc |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
for r in runs:
    b, s, n = r.get("build") or {}, r.get("store") or {}, r["docs"]
    md.append(f"| {n:,} | {fmt(b.get('bulk_s'))} | {fmt(b.get('refresh_s'))} | "
              f"{fmt(b.get('forcemerge_s'))} | {fmt(b.get('docs_per_s'), 0)} | "
              f"{fmt(b.get('server_cpu_s'))} | {fmt(mib(b.get('vmhwm_kib')), 0)} | "
              f"{fmt(s['size_in_bytes'] / n if s.get('size_in_bytes') else None)} | "
              f"{fmt(s['stored_fields_in_bytes'] / n if s.get('stored_fields_in_bytes') else None)} |")
md += ["\n## Search (medians over repeats)\n",
       "| docs | QPS (8 clients) | QPS / server CPU % | QPS per server core | RSS MiB idle / under load / peak | "
       "query phase % of server CPU (1 client) | all: p50 / p99 / max ms | url-n: p99 / max ms | "
       "keyword p99 ms | url-1 p99 ms |",
       "|---:|---:|---:|---:|---|---:|---|---|---:|---:|"]
for r in runs:
    (s,) = r["servers"].values()
    c = s["classes"]
    g = lambda k, f: c.get(k, {}).get(f)
    qpc = s["qps_per_cpu_percent"]
    md.append(f"| {r['docs']:,} | {fmt(s['qps'], 0)} | {fmt(qpc, 2)} | "
              f"{fmt(qpc * 100 if qpc else None, 0)} | {fmt(mib(s['rss_idle_kib']), 0)} / "
              f"{fmt(mib(s['rss_load_kib']), 0)} / {fmt(mib(s['vmhwm_kib']), 0)} | "
              f"{fmt(s['query_phase_pct_one_client'])} | {fmt(g('all', 'p50_ms'), 3)} / "
              f"{fmt(g('all', 'p99_ms'), 2)} / {fmt(g('all', 'max_ms'), 2)} | "
              f"{fmt(g('url-n', 'p99_ms'), 2)} / {fmt(g('url-n', 'max_ms'), 2)} | "
              f"{fmt(g('keyword', 'p99_ms'), 3)} | {fmt(g('url-1', 'p99_ms'), 3)} |")
open(out, "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
