#!/usr/bin/env bash
# bench/search/run.sh: the end-to-end stored-fields codec benchmark of
# DESIGN.md section 9 ("search QPS and QPS per CPU% with ZSTD >= 2 x
# best_compression at the same block size, >= 4.7 x the Lucene-compatible
# 480 KiB DEFLATE baseline, ZSTD on disk no larger than best_compression").
#
# Why it exists: the codec micro-benchmark (bench/codec) measures block
# decode alone and scripts/demo.sh runs a 10k-document A/B; neither shows what
# a search client sees on an index large enough that hits land in many
# different blocks.  This script builds the same synthetic documents into one
# index per codec on one server, force-merges each to one segment, and runs
# loadgen A/B rounds (ZSTD against each other codec) with three workloads
# that fetch stored fields, then reduces the rounds to medians and ratios.
#
# Run with --help for the options and units.  Outputs:
#   results/search_ab.json  config, store sizes, per-round values, summary
#   results/search_ab.md    the tables (also printed)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)

# ---- defaults (named so --help can quote them) ------------------------------
DOCS=1000000          # documents per index
SEED=1                # synthlogs seed (same seed -> same bytes)
CODECS="ZSTD,best_compression,lucene_best_compression,default,zstd_no_dict"
WORKLOADS="match10,match100,ids10"
ROUNDS=3              # A/B rounds per (pair, workload)
ROUND_S=6             # measured seconds per side per round
WARMUP_S=1            # warm-up seconds per side per round
CLIENTS=8             # keep-alive connections (closed loop)
THREADS=2             # loadgen threads
BULK_DOCS=20000       # documents per _bulk request (server body limit 100 MB)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT_DIR=$ROOT/results
DATA_DIR=""           # empty: a temporary directory, removed at the end
QUICK=0
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/search/run.sh [options]

End-to-end stored-fields codec benchmark (DESIGN.md section 9).  Starts one
fieldstore server on a free 127.0.0.1 port, builds one index per codec from the
same synthetic nginx documents (datasets/synthlogs, fixed seed), force-merges
each to 1 segment, then runs loadgen A/B rounds ZSTD vs each other codec:

  match10   random match queries (loadgen default), size 10
  match100  the same queries with size 100 (fetch-heavy)
  ids10     ids queries for 10 uniformly random doc ids each (hits scatter over
            10 different blocks: every hit decodes a block of its own)

Reported per codec and workload: QPS (successful requests/s), latency p50 and
p99 (ms, closed loop), server CPU % (top scale: 100 = one core busy; this
machine's maximum is nproc*100), QPS per server CPU %, and store size (bytes:
_stats/store size_in_bytes and stored_fields_in_bytes).  Each value is the
median over rounds; ratios are ZSTD / other of those medians (QPS ratio 2.0 =
ZSTD serves twice as many queries).

options:
  --docs N          documents per index (default $DOCS)
  --seed S          synthlogs seed (default $SEED)
  --codecs LIST     comma-separated index.codec values, ZSTD first
                    (default $CODECS)
  --workloads LIST  subset of match10,match100,ids10 (default $WORKLOADS)
  --rounds N        A/B rounds per pair and workload (default $ROUNDS)
  --round-seconds S measured seconds per side per round (default $ROUND_S)
  --warmup S        warm-up seconds per side per round (default $WARMUP_S)
  --clients N       closed-loop clients (default $CLIENTS)
  --data DIR        keep the server's data in DIR and reuse indices already
                    built there with the same docs/seed (default: temporary)
  --build DIR       build directory with fieldstore, synthlogs, loadgen
                    (default \$BUILD_DIR or $ROOT/build)
  --out DIR         where search_ab.json / search_ab.md go (default results/)
  --quick           ~2 minutes: 100000 docs, codecs ZSTD,best_compression,
                    lucene_best_compression, 3 rounds of 1.5 s (0.5 s warm-up)
  SYNTH_ARGS=...    (environment) extra synthlogs options; --resample:
                    the earlier corpus (default: vocabularies that grow)
  -h, --help        this text

time: measuring takes about pairs * workloads * rounds * 2 * (warmup + round
seconds): 4*3*3*2*7 s = ~8.5 min by default.  Building the indices comes on
top: on a 2-core machine about 32 s per 100k docs for the first (bulk) index
and ~9 s per 100k docs for each further codec (_reindex), so ~11 min for the
default 1M docs x 5 codecs; --data DIR keeps the indices for the next run,
which then takes only the measuring time.

exit status: 0 done (targets met or not), 1 a step failed (server error, bulk
errors, loadgen errors), 2 usage.
EOF
}

while (($#)); do
  case $1 in
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --codecs) CODECS=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --round-seconds) ROUND_S=$2; shift 2 ;;
    --warmup) WARMUP_S=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --data) DATA_DIR=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT_DIR=$2; shift 2 ;;
    --quick) QUICK=1; DOCS=100000; CODECS="ZSTD,best_compression,lucene_best_compression"
             ROUNDS=3; ROUND_S=1.5; WARMUP_S=0.5; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "search bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $CODECS == ZSTD,* ]] || { echo "search bench: --codecs must start with ZSTD" >&2; exit 2; }

FIELDSTORE=$BUILD_DIR/fieldstore
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
. "$ROOT/bench/synth.sh" # synth, synth_matches, synth_corpus (SYNTH_ARGS)
LOADGEN=$BUILD_DIR/tools/loadgen/loadgen
for b in "$FIELDSTORE" "$SYNTHLOGS" "$LOADGEN"; do
  [[ -x $b ]] || { echo "search bench: $b missing; build first (cmake --build $BUILD_DIR)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/fieldstore-searchab.XXXXXX)
keep_data=1
if [[ -z $DATA_DIR ]]; then DATA_DIR=$work/data; keep_data=0; fi
mkdir -p "$DATA_DIR" "$OUT_DIR"
server_pid=
cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
t_start=$(date +%s)
log() { printf '[search bench %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }

"$FIELDSTORE" --data "$DATA_DIR" --port 0 --port-file "$work/port" 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 400); do [[ -s $work/port ]] && break; sleep 0.05; done
[[ -s $work/port ]] || { echo "search bench: server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
PORT=$(cat "$work/port")
URL=http://127.0.0.1:$PORT
log "fieldstore pid $server_pid on $URL, data in $DATA_DIR"

# Fail with the server's answer on any HTTP error.
api() { # METHOD PATH [JSON]
  local out
  if ! out=$(curl -sS -f -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"} 2>&1); then
    echo "search bench: $1 $2 failed: $out" >&2
    curl -sS -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"} >&2 || true
    exit 1
  fi
  printf '%s' "$out"
}
index_name() { echo "sab-$(echo "$1" | tr 'A-Z' 'a-z')-d$DOCS-s$SEED"; }
doc_count() { # INDEX -> docs.count, or empty when missing
  curl -s "$URL/_cat/indices/$1?h=docs.count" 2>/dev/null | tr -d ' \n' | grep -E '^[0-9]+$' || true
}
finish_index() { # INDEX: refresh, force-merge to one segment, check count
  api POST "/$1/_refresh" >/dev/null
  api POST "/$1/_forcemerge?max_num_segments=1" >/dev/null
  local n; n=$(doc_count "$1")
  [[ $n == "$DOCS" ]] || { echo "search bench: $1 holds ${n:-?} docs, expected $DOCS" >&2; exit 1; }
}
create_index() { # INDEX CODEC
  api PUT "/$1" "{\"settings\":{\"index\":{\"codec\":\"$2\",\"refresh_interval\":\"-1\",\"translog\":{\"durability\":\"async\"}}}}" >/dev/null
}

# ---- build the indices -----------------------------------------------------
IFS=, read -r -a codecs <<< "$CODECS"
IFS=, read -r -a workloads <<< "$WORKLOADS"
first=$(index_name "${codecs[0]}")
build_s=()
for codec in "${codecs[@]}"; do
  idx=$(index_name "$codec"); t0=$(date +%s)
  if [[ $(doc_count "$idx") == "$DOCS" ]] && synth_matches "$URL" "$idx" "$DOCS" "$SEED"; then
    log "$idx ($codec): reusing $DOCS docs"
    api POST "/$idx/_forcemerge?max_num_segments=1" >/dev/null
  else
    if [[ -n $(doc_count "$idx") ]]; then api DELETE "/$idx" >/dev/null; fi
    create_index "$idx" "$codec"
    if [[ $idx == "$first" ]]; then
      log "$idx ($codec): bulk-indexing $DOCS docs of $(synth_corpus) (seed $SEED)"
      : > "$work/bulk_errors"
      # split --filter streams each chunk of BULK_DOCS docs into one _bulk.
      synth --docs "$DOCS" --seed "$SEED" --format bulk --index "$idx" \
        | URL=$URL ERR=$work/bulk_errors split -l $((2 * BULK_DOCS)) --filter='
            curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
                 --data-binary @- -o "$FILE.out" \
              && head -c 200 "$FILE.out" | grep -q "\"errors\":false" \
              || echo "$FILE: $(head -c 300 "$FILE.out" 2>/dev/null)" >> "$ERR"
            rm -f "$FILE.out"' - "$work/chunk."
      [[ ! -s $work/bulk_errors ]] || { echo "search bench: bulk errors in chunks: $(cat "$work/bulk_errors")" >&2; exit 1; }
    else
      log "$idx ($codec): _reindex from $first"
      out=$(api POST /_reindex "{\"source\":{\"index\":\"$first\"},\"dest\":{\"index\":\"$idx\"}}")
      grep -q '"failures":\[\]' <<< "$out" || { echo "search bench: reindex into $idx: $out" >&2; exit 1; }
    fi
    finish_index "$idx"
  fi
  build_s+=("$codec=$(( $(date +%s) - t0 ))")
  log "$idx ready ($(( $(date +%s) - t0 )) s)"
done
for codec in "${codecs[@]}"; do
  api GET "/$(index_name "$codec")/_stats/store" > "$work/store.$codec.json"
done

# ---- workloads ---------------------------------------------------------------
# ids10: 1000 bodies of 10 distinct uniformly random ids in 1..DOCS (synthlogs
# gives document i the _id "i"), fixed seed.
python3 - "$DOCS" "$SEED" > "$work/ids10.ndjson" <<'EOF'
import json, random, sys
docs, seed = int(sys.argv[1]), int(sys.argv[2])
rng = random.Random(seed)
for _ in range(1000):
    ids = [str(i) for i in rng.sample(range(1, docs + 1), min(10, docs))]
    print(json.dumps({"query": {"ids": {"values": ids}}, "size": 10}, separators=(",", ":")))
EOF

workload_args() {
  case $1 in
    match10) echo "--size 10" ;;
    match100) echo "--size 100" ;;
    ids10) echo "--bodies $work/ids10.ndjson" ;;
    *) echo "search bench: unknown workload $1" >&2; exit 2 ;;
  esac
}

npairs=$(( ${#codecs[@]} - 1 ))
est=$(python3 -c "print(round($npairs*${#workloads[@]}*$ROUNDS*2*($ROUND_S+$WARMUP_S)))")
log "measuring: $npairs pairs x ${#workloads[@]} workloads x $ROUNDS rounds, ~${est} s"
: > "$work/runs.list"
for wl in "${workloads[@]}"; do
  for codec in "${codecs[@]:1}"; do
    a=$(index_name "$codec"); b=$first
    f=$work/ab.$wl.$codec.json
    log "A/B $wl: A=$codec B=ZSTD"
    # shellcheck disable=SC2046
    "$LOADGEN" ab --host 127.0.0.1 --port "$PORT" --a "$a" --b "$b" \
      --rounds "$ROUNDS" --round-duration "$ROUND_S" --warmup "$WARMUP_S" \
      --clients "$CLIENTS" --threads "$THREADS" --server-pid "$server_pid" \
      $(workload_args "$wl") --quiet --json "$f" --svg-prefix "$work/svg" \
      > "$work/ab.$wl.$codec.md"
    echo "$wl $codec $f" >> "$work/runs.list"
  done
done
kill -0 "$server_pid" 2>/dev/null || { echo "search bench: the server died" >&2; tail "$work/server.log" >&2; exit 1; }

python3 "$here/report.py" \
  --runs "$work/runs.list" --store-dir "$work" --codecs "$CODECS" \
  --docs "$DOCS" --seed "$SEED" --rounds "$ROUNDS" --round-seconds "$ROUND_S" \
  --warmup "$WARMUP_S" --clients "$CLIENTS" --threads "$THREADS" \
  --build-seconds "${build_s[*]}" --total-seconds $(( $(date +%s) - t_start )) \
  --command "bench/search/run.sh${ORIG_ARGS:+ $ORIG_ARGS}" --json "$OUT_DIR/search_ab.json" --md "$OUT_DIR/search_ab.md"
log "results in $OUT_DIR/search_ab.md and $OUT_DIR/search_ab.json"
