# bench/scale/server.sh: helpers the bench/scale scripts source to stop the
# fieldstore server they started ($server_pid, empty when none) and to read
# its CPU time, and to build a synthlogs index once (synth* from
# bench/synth.sh: SYNTH_ARGS chooses the corpus).

. "$(dirname "${BASH_SOURCE[0]}")/../synth.sh"

server_pid=

# Start BINARY on DATA (default $DATA_DIR) on a free port; sets server_pid,
# PORT and URL.  The caller defines work (a scratch directory).
start_server() { # BINARY [DATA]
  rm -f "$work/port"
  "$1" --data "${2:-$DATA_DIR}" --port 0 --port-file "$work/port" 2>> "$work/server.log" &
  server_pid=$!
  for _ in $(seq 600); do [[ -s $work/port ]] && break; sleep 0.05; done
  [[ -s $work/port ]] || { echo "bench: server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
  PORT=$(cat "$work/port"); URL=http://127.0.0.1:$PORT
}

# Stop the server started by the script, if it still runs.
stop_server() {
  if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  fi
  server_pid=
}

# The server's CPU time so far, microseconds: the sum over its threads of
# /proc/PID/task/TID/schedstat's first field (ns on a CPU); /proc/PID/stat's
# utime + stime count in ticks of 10 ms, too coarse for a pass of
# sub-millisecond queries.
cpu_us() {
  cat /proc/"$server_pid"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d\n", s / 1000}'
}

# Build index IDX from synthlogs, once: create it with the JSON body BODY
# (settings, mappings), load DOCS documents of seed SEED in _bulk requests
# of BULK_DOCS documents, refresh and force-merge it to one segment; nothing
# when it already holds DOCS documents of this corpus (synth_matches).  The
# caller defines URL, SYNTHLOGS, work (a scratch directory), api METHOD PATH
# [JSON], doc_count and log;
# NAME prefixes the error messages.  When BUILD_STATS names a file, a build
# writes there (JSON): bulk, refresh and force-merge wall seconds, docs/s
# through _bulk + refresh, the server's CPU seconds, and its VmHWM / VmRSS
# (KiB) after the force-merge.
build_synthlogs_index() { # NAME IDX DOCS SEED BULK_DOCS BODY
  local name=$1 idx=$2 docs=$3 seed=$4 bulk=$5 body=$6
  if [[ $(doc_count) == "$docs" ]] && synth_matches "$URL" "$idx" "$docs" "$seed"; then
    return 0
  fi
  [[ -z $(doc_count) ]] || api DELETE "/$idx" >/dev/null
  log "building $idx: $docs docs of $(synth_corpus) (seed $seed)"
  api PUT "/$idx" "$body" >/dev/null
  local t0 c0; t0=$(date +%s.%N); c0=$(cpu_us)
  : > "$work/bulk_errors"
  synth --docs "$docs" --seed "$seed" --format bulk --index "$idx" \
    | URL=$URL ERR=$work/bulk_errors split -l $((2 * bulk)) --filter='
        curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
             --data-binary @- -o "$FILE.out" \
          && head -c 200 "$FILE.out" | grep -q "\"errors\":false" \
          || echo "$FILE: $(head -c 300 "$FILE.out" 2>/dev/null)" >> "$ERR"
        rm -f "$FILE.out"' - "$work/chunk."
  [[ ! -s $work/bulk_errors ]] || { echo "$name: bulk errors: $(cat "$work/bulk_errors")" >&2; exit 1; }
  local t1 c1; t1=$(date +%s.%N); c1=$(cpu_us)
  api POST "/$idx/_refresh" >/dev/null
  local t2; t2=$(date +%s.%N)
  api POST "/$idx/_forcemerge?max_num_segments=1" >/dev/null
  local t3 c3; t3=$(date +%s.%N); c3=$(cpu_us)
  [[ $(doc_count) == "$docs" ]] || { echo "$name: $idx holds $(doc_count) docs" >&2; exit 1; }
  if [[ -n ${BUILD_STATS:-} ]]; then
    python3 - "$BUILD_STATS" "$docs" "$t0" "$t1" "$t2" "$t3" "$c0" "$c1" "$c3" \
      "$(rss_kib VmHWM)" "$(rss_kib VmRSS)" <<'PY'
import json, sys
out, docs, t0, t1, t2, t3, c0, c1, c3, hwm, rss = sys.argv[1:]
docs, t0, t1, t2, t3 = int(docs), float(t0), float(t1), float(t2), float(t3)
json.dump({"docs": docs, "bulk_s": t1 - t0, "refresh_s": t2 - t1,
           "forcemerge_s": t3 - t2, "docs_per_s": docs / (t2 - t0),
           "server_cpu_s_bulk": (int(c1) - int(c0)) / 1e6,
           "server_cpu_s": (int(c3) - int(c0)) / 1e6,
           "vmhwm_kib": int(hwm or 0), "vmrss_kib": int(rss or 0)},
          open(out, "w"), indent=1)
PY
  fi
}

# The server's VmRSS or VmHWM (FIELD), KiB, from /proc/PID/status.
rss_kib() { # FIELD
  awk -v f="$1:" '$1 == f {print $2}' /proc/"$server_pid"/status 2>/dev/null
}
