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
