#!/usr/bin/env bash
# bench/scale/beside.sh: searches beside writes (DESIGN.md section 9:
# "search p99 while a _bulk loop runs beside it: <= 2x the idle p99").
#
# On a copy of an index built by bench/scale/run.sh (--data DIR, --docs N),
# one client runs every body of loadgen's query pool once, alternately
# idle and while a _bulk loop writes new synthlogs documents (auto ids,
# another seed, BULK_DOCS per request, one request at a time) into the
# same index.  Past the node's write buffer a write refreshes the index, so
# the searched index grows by what the loop writes: the table says by how
# much.  The copy is deleted at the end; DIR is not changed.  Run with --help.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)
DOCS=1000000
SEED=1
POOL=1000
REPEATS=3
BULK_DOCS=5000
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SERVER=""
DATA_DIR=""
OUT=$ROOT/results/scale-beside.md
ORIG_ARGS="$*"

usage() {
  cat <<EOF
usage: bench/scale/beside.sh --data DIR [options]

  --data DIR        a data directory bench/scale/run.sh built (not changed)
  --docs N          its document count (default $DOCS)
  --seed S          its synthlogs seed and the pool's seed (default $SEED)
  --server BIN      fieldstore binary (default BUILD/fieldstore)
  --repeats N       idle / beside pairs, medians reported (default $REPEATS)
  --bulk-docs N     documents per _bulk request of the loop (default $BULK_DOCS)
  --build DIR       build directory with synthlogs, loadgen (default $BUILD_DIR)
  --out FILE        Markdown output (default results/scale-beside.md)
  SYNTH_ARGS=...    (environment) extra synthlogs options; --resample:
                    the earlier corpus (default: vocabularies that grow)

Service times in ms (loadgen's service_time_ms: request sent to response
read, one request at a time); ratio = beside / idle of the same pair.
EOF
}

while (($#)); do
  case $1 in
    --data) DATA_DIR=$2; shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --server) SERVER=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --bulk-docs) BULK_DOCS=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "beside bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $DATA_DIR && -d $DATA_DIR ]] || { echo "beside bench: --data DIR (built by run.sh) is required" >&2; exit 2; }
SERVER=${SERVER:-$BUILD_DIR/fieldstore}
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
LOADGEN=$BUILD_DIR/tools/loadgen/loadgen
IDX=scale-zstd-d$DOCS-s$SEED

work=$(mktemp -d /tmp/fieldstore-beside.XXXXXX)
. "$here/server.sh" # start_server, stop_server
bulk_pid=
stop_bulk() {
  if [[ -n $bulk_pid ]]; then kill -- -"$bulk_pid" 2>/dev/null || true; wait "$bulk_pid" 2>/dev/null || true; fi
  bulk_pid=
}
trap 'stop_bulk; stop_server; rm -rf "$work"' EXIT
t_start=$(date +%s)
log() { printf '[beside bench %4ds] %s\n' $(( $(date +%s) - t_start )) "$*" >&2; }

log "copying $DATA_DIR"
cp -a "$DATA_DIR" "$work/data"
rm -f "$work/data/node.lock"
start_server "$SERVER" "$work/data"
count() { curl -sS "$URL/$IDX/_count" | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])'; }
[[ $(count) == "$DOCS" ]] || { echo "beside bench: $DATA_DIR does not hold $IDX with $DOCS docs" >&2; exit 1; }

"$LOADGEN" --port "$PORT" --index "$IDX" --seed "$SEED" --pool "$POOL" \
  --clients 1 --threads 1 --warmup 0 --duration 1 --max-requests 1 \
  --dump-queries "$work/pool.ndjson" --quiet > /dev/null
pass() { # JSON
  "$LOADGEN" --port "$PORT" --index "$IDX" --bodies "$work/pool.ndjson" --clients 1 \
    --threads 1 --warmup 0 --duration 600 --max-requests "$POOL" --quiet --json "$1" > /dev/null
}
pass "$work/warm.json"

# The bulk loop: one request of BULK_DOCS auto-id documents at a time until
# killed; each answered request appends its document count to $F.
bulk_loop() { # SEED
  set -m
  ( synth --docs 100000000 --seed "$1" --format bulk --index "$IDX" --no-ids \
      | split -l $((2 * BULK_DOCS)) --filter='
          curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
               --data-binary @- -o /dev/null -w "%{http_code}\n" \
            | grep -q "^200$" && echo "$N" >> "$F"' - "$work/chunk." ) &
  bulk_pid=$!
  set +m
}
export URL N=$BULK_DOCS

: > "$work/pairs"
for ((r = 1; r <= REPEATS; r++)); do
  c0=$(count); pass "$work/idle.$r.json"
  : > "$work/bulk.$r"
  export F=$work/bulk.$r
  tl=$(date +%s.%N)
  bulk_loop $((1000 + r))
  sleep 2 # the loop's first requests are in flight
  t0=$(date +%s.%N); pass "$work/beside.$r.json"; t1=$(date +%s.%N)
  stop_bulk
  t2=$(date +%s.%N)
  c1=$(count)
  echo "$r $c0 $c1 $tl $t2" >> "$work/pairs"
  log "pair $r: $c0 -> $c1 docs"
done

python3 - "$work" "$OUT" "bench/scale/beside.sh${ORIG_ARGS:+ $ORIG_ARGS}" <<'PY'
import json, os, statistics, sys
work, out, cmd = sys.argv[1:]
rows = []
for line in open(os.path.join(work, "pairs")):
    r, c0, c1, t0, t1 = line.split()
    idle = json.load(open(f"{work}/idle.{r}.json"))["result"]["service_time_ms"]
    bes = json.load(open(f"{work}/beside.{r}.json"))["result"]["service_time_ms"]
    docs = sum(int(x) for x in open(f"{work}/bulk.{r}") if x.strip())
    rows.append((idle, bes, docs / (float(t1) - float(t0)), int(c0), int(c1)))
def mm(xs):
    return f"{statistics.median(xs):,.2f} ({min(xs):,.2f}–{max(xs):,.2f})"
md = ["# Searches beside a _bulk loop\n", f"Command: `{cmd}`\n",
      f"{len(rows)} idle / beside pairs; medians (min–max) over pairs; service time ms, one client, "
      "every body of the pool once per pass.\n",
      "| | idle | beside the _bulk loop | beside / idle |", "|---|---:|---:|---:|"]
for k in ("p50", "p99", "max"):
    md.append(f"| {k} ms | {mm([x[0][k] for x in rows])} | {mm([x[1][k] for x in rows])} | "
              f"{mm([x[1][k] / x[0][k] for x in rows])} |")
md.append(f"\n_bulk loop: {mm([x[2] for x in rows])} docs/s (documents answered over the loop's "
          "wall time); the index "
          f"grew from {rows[0][3]:,} to {rows[-1][4]:,} searchable documents over the run.")
open(out, "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
