#!/usr/bin/env bash
# bench/mem/run.sh: the memory target of DESIGN.md section 9 ("RSS <= 500 MB
# at 2M documents, no growth after a force-merge").
#
# Why it exists: search and codec benchmarks report speed and size on disk; a
# server that keeps every segment, refresh arena and merge buffer on its heap
# passes them and still grows by ~1 GB per million documents.  This script
# loads synthetic documents in steps (1M, then another 1M into the same index)
# and records the server's resident memory after each phase.
#
# Run with --help for the options and units.  Outputs:
#   results/mem.md   the RSS table (also printed)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)

STEPS="1000000,2000000"   # cumulative document counts at which to measure
SEED=1
BULK_DOCS=20000           # documents per _bulk request
LOAD_S=30                 # seconds of loadgen search load per step
CLIENTS=8
THREADS=2
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
OUT=$ROOT/results/mem.md
SERVER_ARGS=""
ORIG_ARGS="$*"

usage() {
  cat <<USAGE
usage: bench/mem/run.sh [options]

Memory benchmark (DESIGN.md section 9).  Starts one fieldstore server on a free
127.0.0.1 port, creates one index (refresh_interval -1, async translog) and, for
each cumulative step of --steps, bulk-loads synthlogs documents up to that
count, then reads /proc/PID/status after each phase:

  bulk        after the _bulk requests of the step (documents in the buffer)
  refresh     after POST _refresh
  forcemerge  after POST _forcemerge?max_num_segments=1
  search      after --load-seconds of loadgen match queries (size 10)

Reported per phase: VmRSS and VmHWM (MiB = 2^20 bytes), and from
/proc/PID/smaps_rollup the anonymous part (Anonymous, MiB: heap, arenas,
thread stacks) and the file-backed part (Rss - Anonymous, MiB: mmap'd segment
files and the binary; the kernel may drop these pages under pressure).

options:
  --steps LIST       cumulative doc counts (default $STEPS)
  --seed S           synthlogs seed (default $SEED)
  --load-seconds S   loadgen seconds per step (default $LOAD_S)
  --server-args STR  extra fieldstore arguments
  --build DIR        build directory (default \$BUILD_DIR or $ROOT/build)
  --out FILE         Markdown output (default results/mem.md)
  --quick            steps 100000,200000, 5 s of load
  SYNTH_ARGS=...     (environment) extra synthlogs options; --resample:
                     the earlier corpus (default: vocabularies that grow)
  -h, --help         this text

time: ~35 s per 100k documents loaded on a 2-core machine (bulk + refresh +
force-merge), plus the load seconds per step: ~13 min by default.

exit status: 0 done (target met or not), 1 a step failed, 2 usage.
USAGE
}

while (($#)); do
  case $1 in
    --steps) STEPS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --load-seconds) LOAD_S=$2; shift 2 ;;
    --server-args) SERVER_ARGS=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --quick) STEPS=100000,200000; LOAD_S=5; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mem bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

FIELDSTORE=$BUILD_DIR/fieldstore
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
. "$ROOT/bench/synth.sh" # synth (SYNTH_ARGS)
LOADGEN=$BUILD_DIR/tools/loadgen/loadgen
for b in "$FIELDSTORE" "$SYNTHLOGS" "$LOADGEN"; do
  [[ -x $b ]] || { echo "mem bench: $b missing; build first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/fieldstore-mem.XXXXXX)
server_pid=
cleanup() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
t_start=$(date +%s)
log() { printf '[mem bench %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }

# shellcheck disable=SC2086
"$FIELDSTORE" --data "$work/data" --port 0 --port-file "$work/port" $SERVER_ARGS 2> "$work/server.log" &
server_pid=$!
for _ in $(seq 400); do [[ -s $work/port ]] && break; sleep 0.05; done
[[ -s $work/port ]] || { echo "mem bench: server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
PORT=$(cat "$work/port")
URL=http://127.0.0.1:$PORT
log "fieldstore pid $server_pid on $URL"

api() { # METHOD PATH [JSON]
  curl -sS -f -X "$1" "$URL$2" -H 'Content-Type: application/json' ${3:+-d "$3"} >/dev/null \
    || { echo "mem bench: $1 $2 failed" >&2; exit 1; }
}
kib() { awk -v k="$1:" '$1 == k {print $2}' "$2"; }
rows=()
sample() { # STEP PHASE
  cp "/proc/$server_pid/status" "$work/status"
  cp "/proc/$server_pid/smaps_rollup" "$work/rollup"
  local rss hwm anon
  rss=$(kib VmRSS "$work/status"); hwm=$(kib VmHWM "$work/status")
  anon=$(kib Anonymous "$work/rollup")
  rows+=("$(printf '| %s | %s | %d | %d | %d | %d |' "$1" "$2" $((rss / 1024)) $((hwm / 1024)) \
    $((anon / 1024)) $(((rss - anon) / 1024)))")
  log "${rows[-1]}"
}

IDX=mem-s$SEED
api PUT "/$IDX" '{"settings":{"index":{"refresh_interval":"-1","translog":{"durability":"async"}}}}'
IFS=, read -r -a steps <<< "$STEPS"
loaded=0
for step in "${steps[@]}"; do
  log "bulk: docs $((loaded + 1))..$step"
  : > "$work/bulk_errors"
  # synthlogs numbers documents from 1; later steps skip the earlier ones.
  synth --docs "$step" --seed "$SEED" --format bulk --index "$IDX" \
    | tail -n +$((2 * loaded + 1)) \
    | URL=$URL ERR=$work/bulk_errors split -l $((2 * BULK_DOCS)) --filter='
        curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
             --data-binary @- -o "$FILE.out" \
          && head -c 200 "$FILE.out" | grep -q "\"errors\":false" \
          || echo "$FILE: $(head -c 300 "$FILE.out" 2>/dev/null)" >> "$ERR"
        rm -f "$FILE.out"' - "$work/chunk."
  [[ ! -s $work/bulk_errors ]] || { echo "mem bench: bulk errors: $(cat "$work/bulk_errors")" >&2; exit 1; }
  loaded=$step
  sample "$step" bulk
  api POST "/$IDX/_refresh"; sample "$step" refresh
  api POST "/$IDX/_forcemerge?max_num_segments=1"; sample "$step" forcemerge
  count=$(curl -s "$URL/_cat/indices/$IDX?h=docs.count" | tr -d ' \n')
  [[ $count == "$step" ]] || { echo "mem bench: $IDX holds $count docs, expected $step" >&2; exit 1; }
  "$LOADGEN" --host 127.0.0.1 --port "$PORT" --index "$IDX" --clients "$CLIENTS" \
    --threads "$THREADS" --duration "$LOAD_S" --warmup 1 > "$work/loadgen.out" 2>&1 \
    || { echo "mem bench: loadgen failed" >&2; cat "$work/loadgen.out" >&2; exit 1; }
  sample "$step" search
done

{
  echo "# Server memory (DESIGN.md section 9: RSS <= 500 MB at 2M documents)"
  echo
  echo "Command: \`bench/mem/run.sh${ORIG_ARGS:+ $ORIG_ARGS}\` ($(date -u +%Y-%m-%d), $(nproc) cores)."
  echo "MiB = 2^20 bytes; anon = heap, arenas, stacks; file = mapped files resident."
  echo
  echo "| docs | after | VmRSS MiB | VmHWM MiB | anon MiB | file MiB |"
  echo "|---:|---|---:|---:|---:|---:|"
  printf '%s\n' "${rows[@]}"
} > "$OUT"
cat "$OUT"
log "results in $OUT"
