#!/usr/bin/env bash
# bench/scale/run.sh: the engine targets of DESIGN.md section 9 at scale
# ("1M documents, 2 cores: default query mix >= 2,000 QPS per server core;
# one client p99 <= 5 ms and max <= 20 ms over the query pool; query phase
# <= 20% of server CPU").
#
# Why it exists: bench/search compares stored-fields codecs; it does not say
# where a query's time goes.  This script builds one ZSTD index of synthlogs
# documents (dynamic mapping, refreshed, force-merged to one segment) once
# into --data DIR, then for each server binary given (old and new builds on
# the same data, alternately, several repeats) measures
#   - one client over every body of loadgen's query pool, per query class
#     (service time p50 / p99 / max, ms);
#   - 8 closed-loop clients on loadgen's default mix: QPS, server CPU %,
#     QPS per server CPU %;
#   - the query phase's share of server CPU over the one-client passes
#     (search.query_time_in_micros from GET /{index}/_stats/search over the
#     server's CPU time from /proc/PID/task/*/schedstat), and query /
#     (query + fetch) time under the 8 clients;
#   - the server's RSS after a warm pass, under the 8 clients and its peak;
# with how the index was built (bulk / refresh / force-merge seconds, docs/s,
# peak RSS, kept in DIR/scale-build.json) and its store and stored-fields
# bytes per document, and prints the medians over repeats as a Markdown table into
# results/scale-1m.md (--out for another size).  Run with --help for options and units.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)

DOCS=1000000          # documents in the index
SEED=1                # synthlogs and loadgen seed
POOL=1000             # loadgen query pool (bodies)
REPEATS=3             # repeats per server; medians are reported
CLIENTS=8             # closed-loop clients of the throughput run
DURATION=10           # measured seconds of the throughput run
WARMUP=2              # warm-up seconds of the throughput run
BULK_DOCS=20000       # documents per _bulk request
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT=$ROOT/results/scale-1m.md
DATA_DIR=""
SERVERS=()            # LABEL=BINARY, measured alternately
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/scale/run.sh --data DIR [options]

Builds (once; reused when DIR already holds it) one ZSTD index of DOCS
synthlogs documents, seed SEED, dynamic mapping, force-merged to 1 segment,
then measures each server binary on it, REPEATS times, alternating binaries
(A B, B A, ...):

  one client   every body of loadgen's pool (--pool, --seed) once, split by
               class (bench/scale/classify.py): keyword (service_name,
               method, error_code), url-1 (one url term), url-n (a whole
               url: several terms), text-n (other), and all (the whole
               pool, which the targets are over); service time p50 / p99 /
               max in ms, and server CPU time per query in ms (thread
               schedstat; robust against other load on the machine)
  throughput   loadgen default mix, CLIENTS closed-loop clients, DURATION s:
               QPS, server CPU % (100 = one core), QPS per server CPU %,
               query / (query + fetch) phase time
  query phase  query_time_in_micros over the server's CPU time during the
               one-client passes (one request at a time: phase time is
               close to CPU time)

Values are medians over repeats.  Output: the table on stdout and in OUT.

options:
  --data DIR        data directory to build into / reuse (required)
  --server L=BIN    a fieldstore binary to measure, labelled L (repeatable;
                    default: current=BUILD/fieldstore).  The first one builds
                    or opens DIR itself, so name the oldest build first: each
                    server is measured on a copy of DIR, but one that
                    migrates DIR's catalogue locks older builds out of it
  --docs N          documents (default $DOCS)
  --seed S          synthlogs and loadgen seed (default $SEED)
  --pool N          query bodies (default $POOL)
  --repeats N       repeats per server (default $REPEATS)
  --clients N       throughput clients (default $CLIENTS)
  --duration S      throughput seconds (default $DURATION)
  --build DIR       build directory with synthlogs, loadgen (default $BUILD_DIR)
  --out FILE        Markdown output (default results/scale-1m.md; JSON beside it)
  SYNTH_ARGS=...    (environment) extra synthlogs options; --resample:
                    the earlier corpus (default: vocabularies that grow)
  -h, --help        this text

time: building 1M docs takes ~6 min on 2 cores; each repeat and server then
takes about DURATION + WARMUP s plus one pass over the pool (~10 s).
EOF
}

while (($#)); do
  case $1 in
    --data) DATA_DIR=$2; shift 2 ;;
    --server) SERVERS+=("$2"); shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --pool) POOL=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "scale bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_DIR ]] || { echo "scale bench: --data DIR is required" >&2; exit 2; }
((${#SERVERS[@]})) || SERVERS=("current=$BUILD_DIR/fieldstore")
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
LOADGEN=$BUILD_DIR/tools/loadgen/loadgen
for b in "$SYNTHLOGS" "$LOADGEN" "${SERVERS[@]#*=}"; do
  [[ -x $b ]] || { echo "scale bench: $b missing; build first" >&2; exit 1; }
done

IDX=scale-zstd-d$DOCS-s$SEED
work=$(mktemp -d /tmp/fieldstore-scale.XXXXXX)
mkdir -p "$DATA_DIR" "$(dirname "$OUT")"
. "$here/server.sh" # start_server, stop_server, cpu_us, build_synthlogs_index
trap 'stop_server; rm -rf "$work"' EXIT
t_start=$(date +%s)
log() { printf '[scale bench %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }

api() { # METHOD PATH [JSON]
  curl -sS -f -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"}
}
doc_count() {
  curl -s "$URL/_cat/indices/$IDX?h=docs.count" 2>/dev/null | tr -d ' \n' | grep -E '^[0-9]+$' || true
}

# ---- build (once) -----------------------------------------------------------
start_server "${SERVERS[0]#*=}"
BUILD_STATS=$work/build.json build_synthlogs_index "scale bench" "$IDX" "$DOCS" "$SEED" "$BULK_DOCS" \
  '{"settings":{"index":{"codec":"ZSTD","refresh_interval":"-1","translog":{"durability":"async"}}}}'
# kept with the data: later runs reuse the index and report how it was built
[[ ! -s $work/build.json ]] || cp "$work/build.json" "$DATA_DIR/scale-build.json"
api GET "/$IDX/_stats/store" > "$work/store.json"
log "$IDX: $DOCS docs"

# ---- the query pool, split by class ------------------------------------------
"$LOADGEN" --port "$PORT" --index "$IDX" --seed "$SEED" --pool "$POOL" \
  --clients 1 --threads 1 --warmup 0 --duration 1 --max-requests 1 \
  --dump-queries "$work/pool.ndjson" --quiet > /dev/null
api GET "/$IDX/_mapping" > "$work/mapping.json"
python3 "$here/classify.py" "$work/mapping.json" "$work/pool.ndjson" "$work/class"
cp "$work/pool.ndjson" "$work/class.all.ndjson" # the targets are over the whole pool
# kept beside the data for bench/scale/topk_ab.sh (--bodies DIR/classes, --map)
mkdir -p "$DATA_DIR/classes"
cp "$work"/class.*.ndjson "$DATA_DIR/classes/"
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); print(json.dumps(next(iter(m.values()))["mappings"]))' \
  "$work/mapping.json" > "$DATA_DIR/classes/mapping.json"
stop_server
# The catalogue pages the build's translog freed: a server gives them back
# to the file system once writes pause for a sync interval (store.c), ~0.3
# server CPU seconds after 1M documents.  Done here, once, so that no
# measured server (each starts on a copy of this catalogue) spends its
# first seconds on it.
# (Python's sqlite3 steps a pragma that returns no columns once: one page
# per call, so it calls until the free list is empty.)
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
free = lambda: c.execute("PRAGMA freelist_count").fetchone()[0]
left = free()
while left:  # a catalogue without auto_vacuum frees nothing: stop then
    c.execute("PRAGMA incremental_vacuum").fetchall()
    left, was = free(), left
    if left >= was:
        break
c.close()' "$DATA_DIR/catalog.sqlite"

# ---- measure: servers alternately, REPEATS times ------------------------------
# Each server gets its own copy of the data directory: the catalogue copied,
# the segment files (never changed in place) hard-linked.  A newer build may
# migrate the catalogue to a schema an older one then refuses to open.
server_data() { # LABEL -> prints the copy's path
  local d=$work/data.$1 f sub
  if [[ ! -d $d ]]; then
    mkdir -p "$d/indices"
    for f in "$DATA_DIR"/catalog.sqlite*; do cp "$f" "$d/"; done
    for sub in "$DATA_DIR"/indices/*/; do
      mkdir "$d/indices/$(basename "$sub")"
      for f in "$sub"*; do ln "$f" "$d/indices/$(basename "$sub")/"; done
    done
  fi
  echo "$d"
}
: > "$work/runs.list"
for ((r = 1; r <= REPEATS; r++)); do
  order=("${SERVERS[@]}")
  if ((r % 2 == 0)); then # A B, B A, ...
    order=(); for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[i]}"); done
  fi
  for s in "${order[@]}"; do
    label=${s%%=*}; bin=${s#*=}; pre=$work/r$r.$label
    start_server "$bin" "$(server_data "$label")"
    log "repeat $r: $label ($bin)"
    # one pass over the whole pool first: page cache and lazily built state
    "$LOADGEN" --port "$PORT" --index "$IDX" --bodies "$work/pool.ndjson" --clients 1 \
      --threads 1 --warmup 0 --duration 600 --max-requests "$POOL" --quiet > /dev/null
    rss_kib VmRSS > "$pre.rss_idle"
    api GET "/$IDX/_stats/search" > "$pre.statsA.json"
    for f in "$work"/class.*.ndjson; do
      c=${f##*/class.}; c=${c%.ndjson}
      c0=$(cpu_us)
      "$LOADGEN" --port "$PORT" --index "$IDX" --bodies "$f" --clients 1 --threads 1 \
        --warmup 0 --duration 600 --max-requests "$(wc -l < "$f")" --quiet \
        --json "$pre.one.$c.json" > /dev/null
      echo $(( $(cpu_us) - c0 )) > "$pre.one.$c.cpu_us"
    done
    api GET "/$IDX/_stats/search" > "$pre.stats0.json"
    c0=$(cpu_us)
    "$LOADGEN" --port "$PORT" --index "$IDX" --seed "$SEED" --pool "$POOL" \
      --clients "$CLIENTS" --threads 2 --warmup "$WARMUP" --duration "$DURATION" \
      --server-pid "$server_pid" --quiet --json "$pre.tput.json" > /dev/null
    echo $(( $(cpu_us) - c0 )) > "$pre.cpu_us"
    rss_kib VmRSS > "$pre.rss_load"; rss_kib VmHWM > "$pre.hwm"
    api GET "/$IDX/_stats/search" > "$pre.stats1.json"
    echo "$r $label $pre" >> "$work/runs.list"
    stop_server
  done
done

python3 "$here/report.py" --runs "$work/runs.list" --docs "$DOCS" --seed "$SEED" \
  --pool "$POOL" --clients "$CLIENTS" --duration "$DURATION" --class-dir "$work" \
  --store "$work/store.json" --build-stats "$DATA_DIR/scale-build.json" \
  --json "${OUT%.md}.json" --command "bench/scale/run.sh${ORIG_ARGS:+ $ORIG_ARGS}" > "$OUT"
cat "$OUT"
log "table in $OUT"
