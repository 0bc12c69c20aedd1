#!/usr/bin/env bash
# bench/scale/bulk.sh: _bulk indexing speed (DESIGN.md section 9: ">= 40k
# docs/s").  Loads DOCS synthlogs documents (seed SEED) in requests of
# BULK_DOCS documents, one request at a time, into a fresh ZSTD index
# (refresh_interval -1, translog durability DURABILITY, by default request:
# every request is fsync'd) of a fresh data directory, from CLIENTS clients
# (each sends every CLIENTS-th request, one at a time), for each server
# binary given (alternating A B, B A, ... over REPEATS), and prints per run
#   docs/s       documents over the wall time of the requests and the
#                _refresh after them (the last buffer becoming a segment)
#   CPU s        the server's CPU time over both (/proc/PID/stat utime +
#                stime: it keeps the time of threads that ended, which a sum
#                of live threads' schedstat would miss)
#   docs/CPU s   documents per server CPU second (robust against other load
#                on the machine)
# then the medians (min-max) per server.  Merges after the load are not
# timed.  Run with --help for options.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$here/../.." && pwd)

DOCS=1000000          # documents loaded
SEED=1                # synthlogs seed
BULK_DOCS=20000       # documents per _bulk request
REPEATS=3             # runs per server; medians are reported
CLIENTS=1             # concurrent _bulk clients
DURABILITY=request    # index.translog.durability: request (fsync per request) or async
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
SERVERS=()            # LABEL=BINARY

usage() {
  cat <<EOF
usage: bench/scale/bulk.sh [options]

  --server L=BIN   a fieldstore binary, labelled L (repeatable; default
                   current=BUILD/fieldstore)
  --docs N         documents (default $DOCS)
  --seed S         synthlogs seed (default $SEED)
  --bulk N         documents per _bulk request (default $BULK_DOCS)
  --repeats N      runs per server (default $REPEATS)
  --clients N      concurrent clients, one request at a time each (default $CLIENTS)
  --durability D   index.translog.durability, request or async (default $DURABILITY)
  --build DIR      build directory with synthlogs (default $BUILD_DIR)
  SYNTH_ARGS=...   (environment) extra synthlogs options; --resample:
                   the earlier corpus (default: vocabularies that grow)
  -h, --help       this text

Output: one line per run and a median (min-max) line per server, docs/s
(wall) and docs per server CPU second.  The bulk body is generated once
into a temporary directory (~0.5 GB for 1M docs).
EOF
}

while (($#)); do
  case $1 in
    --server) SERVERS+=("$2"); shift 2 ;;
    --docs) DOCS=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --bulk) BULK_DOCS=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --durability) DURABILITY=$2; shift 2 ;;
    --build) BUILD_DIR=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bulk bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
((${#SERVERS[@]})) || SERVERS=("current=$BUILD_DIR/fieldstore")
SYNTHLOGS=$BUILD_DIR/datasets/synthlogs
for b in "$SYNTHLOGS" "${SERVERS[@]#*=}"; do
  [[ -x $b ]] || { echo "bulk bench: $b missing; build first" >&2; exit 1; }
done

work=$(mktemp -d /tmp/fieldstore-bulk.XXXXXX)
. "$here/server.sh" # stop_server

# The server's CPU time so far, microseconds, threads that ended included:
# utime + stime of /proc/PID/stat (fields 14 and 15 after the command name,
# in clock ticks).
proc_cpu_us() {
  local hz; hz=$(getconf CLK_TCK)
  sed 's/.*) //' /proc/"$server_pid"/stat | awk -v hz="$hz" '{printf "%d\n", ($12 + $13) * 1e6 / hz}'
}
trap 'stop_server; rm -rf "$work"' EXIT
IDX=bulk-bench
synth --docs "$DOCS" --seed "$SEED" --format bulk --index "$IDX" \
  | split -l $((2 * BULK_DOCS)) - "$work/chunk."

: > "$work/runs"
for ((r = 1; r <= REPEATS; r++)); do
  order=("${SERVERS[@]}")
  if ((r % 2 == 0)); then
    order=(); for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[i]}"); done
  fi
  for s in "${order[@]}"; do
    label=${s%%=*}; bin=${s#*=}
    rm -rf "$work/data" "$work/port"; mkdir "$work/data"
    "$bin" --data "$work/data" --port 0 --port-file "$work/port" 2>> "$work/server.log" &
    server_pid=$!
    for _ in $(seq 600); do [[ -s $work/port ]] && break; sleep 0.05; done
    URL=http://127.0.0.1:$(cat "$work/port")
    curl -sS -f -XPUT "$URL/$IDX" -H 'Content-Type: application/json' \
      -d '{"settings":{"index":{"codec":"ZSTD","refresh_interval":"-1","translog":{"durability":"'"$DURABILITY"'"}}}}' > /dev/null
    c0=$(proc_cpu_us); t0=$(date +%s%N)
    pids=()
    for ((k = 0; k < CLIENTS; k++)); do
      ( i=0
        for f in "$work"/chunk.*; do
          ((i++ % CLIENTS == k)) || continue
          curl -sS -XPOST "$URL/_bulk" -H 'Content-Type: application/x-ndjson' \
            --data-binary @"$f" -o "$work/out.$k"
          head -c 200 "$work/out.$k" | grep -q '"errors":false' \
            || { echo "bulk bench: errors in $f: $(head -c 300 "$work/out.$k")" >&2; exit 1; }
        done ) &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || exit 1; done
    curl -sS -f -XPOST "$URL/$IDX/_refresh" > /dev/null
    t1=$(date +%s%N); c1=$(proc_cpu_us)
    stop_server
    awk -v l="$label" -v r="$r" -v n="$DOCS" -v w=$(( (t1 - t0) / 1000 )) -v c=$(( c1 - c0 )) \
      'BEGIN {printf "%s run %d: %.0f docs/s, %.1f CPU s, %.0f docs/CPU s\n", l, r, n / (w / 1e6), c / 1e6, n / (c / 1e6)}' \
      | tee -a "$work/runs"
  done
done
for s in "${SERVERS[@]}"; do
  label=${s%%=*}
  grep "^$label run" "$work/runs" | awk -v l="$label" '
    { w[NR] = $4; c[NR] = $9 }
    function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    END { n = NR; lo_w = hi_w = w[1]; lo_c = hi_c = c[1]
          for (i = 1; i <= n; i++) { if (w[i] < lo_w) lo_w = w[i]; if (w[i] > hi_w) hi_w = w[i]; if (c[i] < lo_c) lo_c = c[i]; if (c[i] > hi_c) hi_c = c[i] }
          printf "%s: median %.0f docs/s (%.0f-%.0f), %.0f docs/CPU s (%.0f-%.0f), %d runs\n", l, med(w, n), lo_w, hi_w, med(c, n), lo_c, hi_c, n }'
done
