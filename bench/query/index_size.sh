#!/usr/bin/env bash
# bench/query/index_size.sh: what each part of an index costs per document.
#
# Builds (once; reused when DIR already holds it) one index of DOCS
# synthlogs documents (SYNTH_ARGS chooses the corpus, bench/synth.sh) with
# the nginx mapping (datasets/nginx-mapping.json) and codec CODEC,
# force-merged to one segment, then prints in bytes per document:
#   - the store and its two files per segment, from GET /{index}/_stats
#     (store.size_in_bytes, stored_fields_in_bytes, postings_in_bytes: the
#     .tim file, everything but stored fields);
#   - the .tim files per part and per field (bench/query/sidx_breakdown
#     --per-doc --fields: term dictionary entries, term bytes, skip
#     entries, postings blocks, positions, norms, doc values, the _id table).
#
# Usage: bench/query/index_size.sh --data DIR [--docs N] [--seed S]
#          [--codec C] [--server BIN] [--build BUILD_DIR] [--out FILE]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
DOCS=1000000
SEED=1
CODEC=ZSTD
BULK_DOCS=20000
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
DATA_DIR=
SERVER=
OUT=
IDX=logs

while (($#)); do
  case $1 in
    --data) DATA_DIR=$2; shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --codec) CODEC=$2; shift 2 ;;
    --server) SERVER=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "index size: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_DIR ]] || { echo "index size: --data DIR is required" >&2; exit 2; }
SERVER=${SERVER:-$BUILD_DIR/fieldstore}
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
BREAKDOWN=$BUILD_DIR/bench/query/sidx_breakdown
for b in "$SERVER" "$SYNTHLOGS" "$BREAKDOWN"; do
  [[ -x $b ]] || { echo "index size: $b missing; build first" >&2; exit 1; }
done
mkdir -p "$DATA_DIR"
work=$(mktemp -d /tmp/fieldstore-isize.XXXXXX)
. "$ROOT/bench/scale/server.sh"
trap 'stop_server; rm -rf "$work"' EXIT
t_start=$(date +%s)
log() { printf '[index size %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }
api() { # METHOD PATH [JSON]
  curl -sS -f -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
doc_count() {
  curl -s "$URL/_cat/indices/$IDX?h=docs.count" 2>/dev/null | tr -d ' \n' | grep -E '^[0-9]+$' || true
}
body=$(python3 - "$ROOT/datasets/nginx-mapping.json" "$CODEC" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(json.dumps({"settings": {"index": {"codec": sys.argv[2], "refresh_interval": "-1",
                                         "translog": {"durability": "async"}}},
                  "mappings": m.get("mappings", m)}))
PY
)
start_server "$SERVER" "$DATA_DIR"
build_synthlogs_index "index size" "$IDX" "$DOCS" "$SEED" "$BULK_DOCS" "$body"
stats=$(api GET "/$IDX/_stats/store,segments")
uuid=$(api GET "/$IDX/_settings" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(iter(d.values()))["settings"]["index"]["uuid"])')
stop_server
{
  echo "# Index size per part: $DOCS docs of $(synth_corpus), seed $SEED, codec $CODEC"
  echo
  echo "Command: \`bench/query/index_size.sh --data $DATA_DIR --docs $DOCS --seed $SEED --codec $CODEC\`${SYNTH_ARGS:+ with SYNTH_ARGS=$SYNTH_ARGS}"
  echo
  python3 - "$stats" "$DOCS" <<'PY'
import json, sys
s = json.loads(sys.argv[1])["_all"]["primaries"]
n = int(sys.argv[2])
st = s["store"]
print("| _stats | bytes | B/doc |\n|---|---:|---:|")
for k, v in (("store.size_in_bytes", st["size_in_bytes"]),
             ("store.stored_fields_in_bytes", st.get("stored_fields_in_bytes", 0)),
             ("store.postings_in_bytes", st.get("postings_in_bytes", 0))):
    print(f"| {k} | {v:,} | {v / n:.1f} |")
print(f"\nsegments: {s['segments']['count']}\n")
PY
  echo '```'
  "$BREAKDOWN" "$DATA_DIR"/indices/"$uuid"/*.tim --per-doc --fields
  echo '```'
} | tee ${OUT:+"$OUT"}
