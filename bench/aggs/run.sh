#!/usr/bin/env bash
# bench/aggs/run.sh: aggregation service time at 1M documents (docs/api.md
# "Aggregations"; target: <= 10 ms for a full-index date_histogram with a
# terms sub-aggregation, one request at a time).
#
# Why it exists: an aggregation visits every matching document, unlike a
# top-k search that can stop early, so its cost grows with the index; this
# measures what a dashboard panel costs on a realistic log index.  It builds
# (once, reused from --data DIR) one ZSTD index of DOCS synthlogs documents
# (seed SEED) with the explicit mapping datasets/nginx-mapping.json,
# refreshed and force-merged to one segment, then runs each body of
# bench/aggs/queries.ndjson over one keep-alive connection
# (bench/aggs/measure.py): REPEATS rounds, the bodies in alternating order
# (forward, backward, ...), REQUESTS requests per body per round after
# WARMUP unmeasured ones.  It reports per body the median service time over
# all requests (ms), the min-max of the rounds' medians, and the server CPU
# time per request (thread schedstat, ms), into results/aggs.md.  The
# machine is shared: quote medians and spread, not single runs.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)

DOCS=1000000          # documents in the index
SEED=1                # synthlogs seed
REPEATS=5             # rounds (bodies alternate their order per round)
REQUESTS=20           # measured requests per body per round
WARMUP=3              # unmeasured requests per body per round
BULK_DOCS=20000       # documents per _bulk request
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT=$ROOT/results/aggs.md
DATA_DIR=""
SERVER=""
DOCS_FILE=""          # JSON lines to load instead of synthlogs output
QUERIES=$here/queries.ndjson
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/aggs/run.sh --data DIR [options]

  --data DIR      data directory to build the index into / reuse (required)
  --server BIN    fieldstore binary (default BUILD/fieldstore)
  --docs N        documents (default $DOCS)
  --seed S        synthlogs seed (default $SEED)
  --repeats N     rounds (default $REPEATS)
  --requests N    measured requests per body per round (default $REQUESTS)
  --warmup N      unmeasured requests per body per round (default $WARMUP)
  --build DIR     build directory with synthlogs (default $BUILD_DIR)
  --out FILE      Markdown output (default results/aggs.md)
  --docs-file F   load the documents of F (JSON lines, e.g. a realistic
                  corpus from synthlogs or nginx2json) instead of
                  generating them; --docs is then F's line count
  --queries F     bodies to measure (default bench/aggs/queries.ndjson;
                  bench/aggs/dbbench.ndjson: db-benchmarks' logs10m
                  shapes and Kibana Lens top values)
  SYNTH_ARGS=...  (environment) extra synthlogs options; --resample:
                  the earlier corpus (default: vocabularies that grow)
  -h, --help      this text

Units: service time in ms (request sent to last byte received, keep-alive
connection, one request at a time); server CPU ms per request.  Building
1M documents takes ~6 min on 2 cores; each round then takes a few seconds.
EOF
}

while (($#)); do
  case $1 in
    --data) DATA_DIR=$2; shift 2 ;;
    --server) SERVER=$2; shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --docs-file) DOCS_FILE=$2; shift 2 ;;
    --queries) QUERIES=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "aggs bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_DIR ]] || { echo "aggs bench: --data DIR is required" >&2; exit 2; }
SERVER=${SERVER:-$BUILD_DIR/fieldstore}
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
for b in "$SYNTHLOGS" "$SERVER"; do
  [[ -x $b ]] || { echo "aggs bench: $b missing; build first" >&2; exit 1; }
done

if [[ -n $DOCS_FILE ]]; then
  DOCS=$(wc -l < "$DOCS_FILE")
  IDX=aggs-file-d$DOCS
else
  IDX=aggs-nginx-d$DOCS-s$SEED
fi
work=$(mktemp -d /tmp/fieldstore-aggs.XXXXXX)
mkdir -p "$DATA_DIR" "$(dirname "$OUT")"
. "$ROOT/bench/scale/server.sh" # stop_server, build_synthlogs_index
trap 'stop_server; rm -rf "$work"' EXIT
t_start=$(date +%s)
log() { printf '[aggs bench %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }

rm -f "$work/port"
"$SERVER" --data "$DATA_DIR" --port 0 --port-file "$work/port" 2>> "$work/server.log" &
server_pid=$!
for _ in $(seq 600); do [[ -s $work/port ]] && break; sleep 0.05; done
[[ -s $work/port ]] || { echo "aggs bench: server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
PORT=$(cat "$work/port"); URL=http://127.0.0.1:$PORT
api() { curl -sS -f -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"}; }
doc_count() {
  curl -s "$URL/_cat/indices/$IDX?h=docs.count" 2>/dev/null | tr -d ' \n' | grep -E '^[0-9]+$' || true
}

mapping=$(cat "$ROOT/datasets/nginx-mapping.json")
create="{\"settings\":{\"index\":{\"codec\":\"ZSTD\",\"refresh_interval\":\"-1\",\"translog\":{\"durability\":\"async\"}}},\"mappings\":$mapping}"
if [[ -n $DOCS_FILE ]]; then
  # the file's documents in _bulk requests of BULK_DOCS, once
  if [[ $(doc_count) != "$DOCS" ]]; then
    [[ -z $(doc_count) ]] || api DELETE "/$IDX" >/dev/null
    log "building $IDX from $DOCS_FILE"
    api PUT "/$IDX" "$create" >/dev/null
    : > "$work/bulk_errors"
    awk -v idx="$IDX" '{print "{\"index\":{\"_index\":\"" idx "\"}}"; print}' "$DOCS_FILE" \
      | URL=$URL ERR=$work/bulk_errors split -l $((2 * BULK_DOCS)) --filter='
          curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
               --data-binary @- -o "$FILE.out" \
            && head -c 200 "$FILE.out" | grep -q "\"errors\":false" \
            || echo "$FILE: $(head -c 300 "$FILE.out" 2>/dev/null)" >> "$ERR"
          rm -f "$FILE.out"' - "$work/chunk."
    [[ ! -s $work/bulk_errors ]] || { echo "aggs bench: bulk errors: $(cat "$work/bulk_errors")" >&2; exit 1; }
    api POST "/$IDX/_refresh" >/dev/null
    api POST "/$IDX/_forcemerge?max_num_segments=1" >/dev/null
    [[ $(doc_count) == "$DOCS" ]] || { echo "aggs bench: $IDX holds $(doc_count) docs" >&2; exit 1; }
  fi
else
  build_synthlogs_index "aggs bench" "$IDX" "$DOCS" "$SEED" "$BULK_DOCS" "$create"
fi
log "$IDX: $DOCS docs; measuring"
python3 "$here/measure.py" --port "$PORT" --index "$IDX" --pid "$server_pid" \
  --queries "$QUERIES" --repeats "$REPEATS" --requests "$REQUESTS" \
  --warmup "$WARMUP" --docs "$DOCS" --seed "$SEED" \
  --command "bench/aggs/run.sh${ORIG_ARGS:+ $ORIG_ARGS}" > "$OUT"
cat "$OUT"
log "table in $OUT"
