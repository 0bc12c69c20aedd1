#!/usr/bin/env bash
# The main job: install what is missing, build, start fieldstore on
# 127.0.0.1, index the bundled real nginx log into a ZSTD index and a
# best_compression index, run the A/B load test (about DEMO_SECONDS, default
# 60), print the table, stop the server.
#
# Results: results/ab.md, results/ab.json, results/ab_*.svg
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD_DIR=${BUILD_DIR:-build}
DEMO_SECONDS=${DEMO_SECONDS:-60}
DATASET=${DATASET:-datasets/nginx-zanbil-access-10k.log}
ROUNDS=${ROUNDS:-3}

./scripts/setup.sh
./scripts/build.sh

work=$(mktemp -d /tmp/fieldstore-demo.XXXXXX)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$BUILD_DIR/fieldstore" --data "$work/data" --port 0 --port-file "$work/port" \
  2> "$work/server.log" &
server_pid=$!
for _ in $(seq 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
[[ -s "$work/port" ]] || { echo "demo: server did not start"; cat "$work/server.log"; exit 1; }
PORT=$(cat "$work/port")
URL="http://127.0.0.1:$PORT"
echo "demo: fieldstore pid $server_pid on $URL"

"$BUILD_DIR/datasets/nginx2json" --format json "$DATASET" > "$work/docs.json"
for spec in logs-zstd:ZSTD logs-deflate:best_compression; do
  index=${spec%%:*}; codec=${spec#*:}
  curl -sf -XPUT "$URL/$index" -H 'Content-Type: application/json' \
    -d "{\"settings\":{\"index\":{\"codec\":\"$codec\",\"refresh_interval\":\"-1\"}}}" >/dev/null
  "$BUILD_DIR/datasets/nginx2json" --format bulk --index "$index" "$DATASET" > "$work/bulk.ndjson"
  curl -sf -XPOST "$URL/_bulk" -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$work/bulk.ndjson" -o "$work/bulk.out"
  grep -q '"errors":false' "$work/bulk.out" || { echo "demo: bulk into $index had errors"; exit 1; }
  curl -sf -XPOST "$URL/$index/_refresh" >/dev/null
  curl -sf -XPOST "$URL/$index/_forcemerge?max_num_segments=1" >/dev/null
  echo "demo: indexed $(wc -l < "$work/docs.json") documents into $index ($codec)"
done
curl -s "$URL/_cat/indices?v&h=index,codec,docs.count,store.size&s=index"

mkdir -p results
round_s=$(( DEMO_SECONDS / (2 * ROUNDS) )); (( round_s >= 2 )) || round_s=2
"$BUILD_DIR/tools/loadgen/loadgen" ab --host 127.0.0.1 --port "$PORT" \
  --a logs-deflate --b logs-zstd --rounds "$ROUNDS" --round-duration "$round_s" \
  --warmup 1 --clients 8 --threads 2 --server-pid "$server_pid" \
  --json results/ab.json --md results/ab.md --svg-prefix results/ab
echo "demo: results in results/ab.md, results/ab.json"
