#!/usr/bin/env bash
# bench/discover/run.sh: Discover's query shapes, a reference build against
# this one, in the same run (bench/discover/ab.py; docs/query.md "Ranges,
# sorts and phrases that follow their window").
#
# Why it exists: a dashboard's time window + match sorted by @timestamp and
# a phrase of common words must cost what their window and page cost, not
# what the index holds.  It builds once (reused from --data DIR) one ZSTD
# index of the JSON lines FILE (nginx documents: /tmp/real/real-1m.json, or
# synthlogs output) with datasets/nginx-mapping.json, refreshed and
# force-merged to one segment, with the reference binary; copies the data
# directory (a data directory has one server); starts the reference on one
# copy and the new build on the other; and runs ab.py: ROUNDS rounds,
# REQUESTS requests per shape per server per round, the servers taking
# turns at going first.  The Markdown table goes to --out (default
# results/discover.md).  The machine is shared: quote p50/p99 with the
# rounds' spread, never a single run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
ROUNDS=7
REQUESTS=40
BULK_LINES=40000    # JSON lines per _bulk request
REF=""              # empty: the --new binary (a build against itself)
NEW=$ROOT/build/fieldstore
OUT=$ROOT/results/discover.md
DATA_DIR=""; FILE=""; IDX=discover; SYNTHLOGS=""; DOCS=1000000; SEED=1
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/discover/run.sh --data DIR (--file JSONL | --synthlogs BIN) [options]

  --data DIR     data directory to build the index into / reuse (required)
  --file JSONL   nginx documents, one JSON object a line (to build)
  --synthlogs B  or build from B --docs N --seed S (datasets/synthlogs)
  --docs N       documents from synthlogs (default $DOCS)
  --seed S       synthlogs seed (default $SEED)
  --index NAME   index name (default $IDX)
  --ref BIN      reference fieldstore (default: the --new binary)
  --new BIN      fieldstore under test (default $NEW)
  --rounds N     rounds (default $ROUNDS)
  --requests N   measured requests per shape per server per round (default $REQUESTS)
  --out FILE     Markdown output (default results/discover.md)

Units: service time in ms (request sent to last byte read, one keep-alive
connection, one request at a time).  Building 1M documents takes ~4 min on
2 cores; the measurement ~1 min per 7 rounds.
EOF
}

while (($#)); do
  case $1 in
    --data) DATA_DIR=$2; shift 2 ;;
    --file) FILE=$2; shift 2 ;;
    --synthlogs) SYNTHLOGS=$2; shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --index) IDX=$2; shift 2 ;;
    --ref) REF=$2; shift 2 ;;
    --new) NEW=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --requests) REQUESTS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "discover bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_DIR ]] || { echo "discover bench: --data DIR is required" >&2; exit 2; }
[[ -n $REF ]] || REF=$NEW
for b in "$REF" "$NEW"; do
  [[ -x $b ]] || { echo "discover bench: $b missing; build first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/fieldstore-discover.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
log() { printf '[discover bench] %s\n' "$*" >&2; }

start() { # BIN DATA NAME: the server's port in $work/NAME.port
  "$1" --data "$2" --port 0 --port-file "$work/$3.port" 2>> "$work/$3.log" &
  pids+=($!)
  for _ in $(seq 600); do [[ -s $work/$3.port ]] && break; sleep 0.05; done
  [[ -s $work/$3.port ]] || { echo "discover bench: $3 did not start" >&2; cat "$work/$3.log" >&2; exit 1; }
}

mkdir -p "$DATA_DIR" "$(dirname "$OUT")"
start "$REF" "$DATA_DIR" build
URL=http://127.0.0.1:$(cat "$work/build.port")
docs() { curl -s "$URL/_cat/indices/$IDX?h=docs.count" 2>/dev/null | tr -d ' \n' | grep -E '^[0-9]+$' || true; }
count=$(docs)
if [[ -z $count ]]; then
  if [[ -n $SYNTHLOGS ]]; then
    docs_src() { "$SYNTHLOGS" --docs "$DOCS" --seed "$SEED"; }
  else
    [[ -n $FILE && -r $FILE ]] || { echo "discover bench: no index $IDX in $DATA_DIR and no --file" >&2; exit 2; }
    docs_src() { cat "$FILE"; }
  fi
  log "building $IDX from ${SYNTHLOGS:+$SYNTHLOGS --docs $DOCS --seed $SEED}$FILE"
  mapping=$(cat "$ROOT/datasets/nginx-mapping.json")
  curl -sS -f -XPUT "$URL/$IDX" -H 'Content-Type: application/json' -d \
    "{\"settings\":{\"index\":{\"codec\":\"ZSTD\",\"refresh_interval\":\"-1\",\"translog\":{\"durability\":\"async\"}}},\"mappings\":$mapping}" > /dev/null
  docs_src | awk -v idx="$IDX" '{print "{\"index\":{\"_index\":\"" idx "\"}}"; print}' \
    | URL=$URL split -l $((2 * BULK_LINES)) --filter='curl -s -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" --data-binary @- | head -c 200 | grep -q "\"errors\":false" || echo "discover bench: bulk errors" >&2' - "$work/chunk."
  curl -sS -f -XPOST "$URL/$IDX/_refresh" > /dev/null
  curl -sS -f -XPOST "$URL/$IDX/_forcemerge?max_num_segments=1" > /dev/null
  count=$(docs)
fi
kill "${pids[0]}"; wait "${pids[0]}" 2>/dev/null || true; pids=()
log "$IDX: $count docs; a copy of the data directory for the second server"
cp -a "$DATA_DIR" "$work/data-new"; rm -f "$work/data-new/node.lock"
start "$REF" "$DATA_DIR" ref
start "$NEW" "$work/data-new" new
{
  echo "# Discover's shapes: the reference build against this one"
  echo
  echo "Command: \`bench/discover/run.sh${ORIG_ARGS:+ $ORIG_ARGS}\`; $count docs, one segment, ZSTD;"
  echo "reference \`$REF\`, new \`$NEW\`; $(date -u +%Y-%m-%d) on $(nproc) shared cores."
  echo
  python3 "$here/ab.py" --a "$(cat "$work/ref.port")" --b "$(cat "$work/new.port")" \
    --index "$IDX" --rounds "$ROUNDS" --requests "$REQUESTS" --label-a ref --label-b new
} > "$OUT"
cat "$OUT"
