# bench/scale/server.sh: helpers the bench/scale scripts source to stop the
# fieldstore server they started ($server_pid, empty when none) and to read
# its CPU time.

server_pid=

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
# when it already holds DOCS documents.  The caller defines URL, SYNTHLOGS,
# work (a scratch directory), api METHOD PATH [JSON], doc_count and log;
# NAME prefixes the error messages.
build_synthlogs_index() { # NAME IDX DOCS SEED BULK_DOCS BODY
  local name=$1 idx=$2 docs=$3 seed=$4 bulk=$5 body=$6
  [[ $(doc_count) != "$docs" ]] || return 0
  [[ -z $(doc_count) ]] || api DELETE "/$idx" >/dev/null
  log "building $idx: $docs synthlogs docs (seed $seed)"
  api PUT "/$idx" "$body" >/dev/null
  : > "$work/bulk_errors"
  "$SYNTHLOGS" --docs "$docs" --seed "$seed" --format bulk --index "$idx" \
    | URL=$URL ERR=$work/bulk_errors split -l $((2 * bulk)) --filter='
        curl -sS -XPOST "$URL/_bulk" -H "Content-Type: application/x-ndjson" \
             --data-binary @- -o "$FILE.out" \
          && head -c 200 "$FILE.out" | grep -q "\"errors\":false" \
          || echo "$FILE: $(head -c 300 "$FILE.out" 2>/dev/null)" >> "$ERR"
        rm -f "$FILE.out"' - "$work/chunk."
  [[ ! -s $work/bulk_errors ]] || { echo "$name: bulk errors: $(cat "$work/bulk_errors")" >&2; exit 1; }
  api POST "/$idx/_refresh" >/dev/null
  api POST "/$idx/_forcemerge?max_num_segments=1" >/dev/null
  [[ $(doc_count) == "$docs" ]] || { echo "$name: $idx holds $(doc_count) docs" >&2; exit 1; }
}
