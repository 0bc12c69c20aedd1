#!/bin/sh
# measure_speed.sh: wall-clock speed of nginx2json and synthlogs, as quoted in
# docs/datasets.md.  Usage: datasets/measure_speed.sh BUILD_DIR [TMPDIR]
# Prints one line per case: case, documents, seconds (best of 3), docs/s, MB/s
# of output; synthlogs cases in its default mode and with --resample.  Output files go to TMPDIR (default /tmp) and are removed.
set -eu
build=${1:?usage: measure_speed.sh BUILD_DIR [TMPDIR]}
tmp=${2:-/tmp}
here=$(cd "$(dirname "$0")" && pwd)
sample=$here/nginx-zanbil-access-10k.log
n2j=$build/datasets/nginx2json
syn=$build/datasets/synthlogs
big=$tmp/fds-speed-1m.log
out=$tmp/fds-speed-out.json

now() { date +%s.%N; }
# best_of3 NAME DOCS OUTFILE CMD...: run 3 times, report the fastest.
best_of3() {
  name=$1 docs=$2 file=$3; shift 3
  best=
  for _ in 1 2 3; do
    t0=$(now); "$@" > "$file" 2>/dev/null || [ $? -eq 3 ]; t1=$(now)
    t=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    best=$(awk -v t="$t" -v b="$best" 'BEGIN { print (b == "" || t < b) ? t : b }')
  done
  bytes=$(wc -c < "$file")
  awk -v n="$name" -v d="$docs" -v t="$best" -v b="$bytes" 'BEGIN {
    printf "%-34s %8d docs %8.3f s %10.0f docs/s %7.1f MB/s\n", n, d, t, d / t,
           b / t / 1000000 }'
}

best_of3 "nginx2json json 10k (sample)" 10000 "$out" "$n2j" "$sample"
best_of3 "nginx2json bulk 10k (sample)" 10000 "$out" \
  "$n2j" --format bulk --index nginx "$sample"
for _ in $(seq 100); do cat "$sample"; done > "$big"
best_of3 "nginx2json json 1M (sample x100)" 1000000 "$out" "$n2j" "$big"
rm -f "$big"
for mode in "" --resample; do
  best_of3 "synthlogs $mode json 1M -> /dev/null" 1000000 /dev/null \
    "$syn" $mode --docs 1000000 --seed 1
  best_of3 "synthlogs $mode json 1M -> file" 1000000 "$out" \
    "$syn" $mode --docs 1000000 --seed 1
  best_of3 "synthlogs $mode bulk 1M -> file" 1000000 "$out" \
    "$syn" $mode --docs 1000000 --seed 1 --format bulk --index synth
done
best_of3 "synthlogs json 10M -> /dev/null" 10000000 /dev/null \
  "$syn" --docs 10000000 --seed 1
rm -f "$out"
