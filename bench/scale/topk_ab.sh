#!/usr/bin/env bash
# bench/scale/topk_ab.sh: the query phase of two or more builds over the
# same segment files, in CPU time and postings scored, without a server.
#
# Why it exists: the scale benchmark (run.sh) measures whole requests on a
# shared 2-core machine, where other load moves every figure by 30% or
# more.  topk_cpu times only fds_search_execute on this thread's CPU clock
# (the least of -r runs per body), and prints the postings scored and a hash
# of every page, so two builds can be compared body class by body class and
# shown to return the same pages to the last bit.  Builds run alternately,
# `--repeats` times; the table gives medians (min-max) of each class's sum
# of per-body CPU milliseconds.
#
# Usage: bench/scale/topk_ab.sh --map MAPPING.json --bodies DIR
#          --seg LABEL=SEGMENT.tim [--seg ...]
#          --bin LABEL=TOPK_CPU [--bin ...] [--repeats N] [--runs R]
#          [--out FILE]
#        bench/scale/topk_ab.sh --map MAPPING.json --bodies DIR
#          --pair LABEL=TOPK_CPU@SEGMENT.tim [--pair ...] [...]
#   --map      the index mapping ({"properties": ...}; sqlite3
#              DIR/catalog.sqlite 'select json from mappings')
#   --bodies   a directory of class.NAME.ndjson files (run.sh's work
#              directory keeps them: keyword, url-1, url-n)
#   --seg      a segment index file (DATA/indices/UUID/seg_N.tim), labelled
#   --bin      a topk_cpu binary (build/bench/scale/topk_cpu of a build)
#   --pair     a binary with its own segment file, for builds that write
#              different formats of the same documents (an older build
#              cannot read a newer file); pairs alternate as --bin does,
#              their rows under segment "-" 
#   --repeats  alternating repeats (default 3); --runs: topk_cpu -r (2)
#   --out      Markdown table (default results/scale-topk.md)
set -euo pipefail
ARGS="$*"
MAP= BODIES= OUT=results/scale-topk.md REPEATS=3 RUNS=2
SEGS=() BINS=() PAIRS=()
while [ $# -gt 0 ]; do
  case $1 in
    --map) MAP=$2; shift 2 ;;
    --bodies) BODIES=$2; shift 2 ;;
    --seg) SEGS+=("$2"); shift 2 ;;
    --bin) BINS+=("$2"); shift 2 ;;
    --pair) PAIRS+=("$2"); shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
if [ -z "$MAP" ] || [ -z "$BODIES" ] ||
   { [ ${#PAIRS[@]} -eq 0 ] && { [ ${#SEGS[@]} -eq 0 ] || [ ${#BINS[@]} -eq 0 ]; }; }; then
  echo "need --map, --bodies, and --seg and --bin, or --pair (--help)" >&2
  exit 2
fi
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for f in "$BODIES"/class.*.ndjson; do
  [ ${#PAIRS[@]} -gt 0 ] || break
  c=${f##*/class.}; c=${c%.ndjson}
  for r in $(seq "$REPEATS"); do
    for p in "${PAIRS[@]}"; do
      bs=${p#*=}
      line=$("${bs%@*}" -r "$RUNS" "$MAP" "${bs##*@}" "$f" | tail -1)
      echo "- $c ${p%%=*} $line" >>"$raw"
    done
  done
done
for s in "${SEGS[@]}"; do
  for f in "$BODIES"/class.*.ndjson; do
    c=${f##*/class.}; c=${c%.ndjson}
    for r in $(seq "$REPEATS"); do
      for b in "${BINS[@]}"; do
        line=$("${b#*=}" -r "$RUNS" "$MAP" "${s#*=}" "$f" | tail -1)
        echo "${s%%=*} $c ${b%%=*} $line" >>"$raw"
      done
    done
  done
done
python3 - "$raw" "$OUT" "$ARGS" <<'EOF'
import collections, re, statistics, sys
raw, out, args = sys.argv[1], sys.argv[2], sys.argv[3]
rows = collections.OrderedDict()
for l in open(raw):
    f = l.split()
    seg, cls, b = f[0], f[1], f[2]
    d = dict(re.findall(r"(sum|p99|max|scored|hash) (\S+)", l))
    key = (seg, cls, b)
    r = rows.setdefault(key, {"ms": [], "scored": d["scored"], "hash": d["hash"],
                              "p99": [], "max": []})
    r["ms"].append(float(d["sum"]))
    r["p99"].append(float(d["p99"]))
    r["max"].append(float(d["max"]))
def mm(v, fmt):
    return (fmt % statistics.median(v)) + " (" + (fmt % min(v)) + "-" + (fmt % max(v)) + ")"
with open(out, "w") as o:
    o.write("# Query phase by build (bench/scale/topk_ab.sh)\n\n")
    o.write("Command: `bench/scale/topk_ab.sh " + args + "`\n\n")
    o.write("Medians of alternating repeats (min-max); CPU ms is the sum over a class's bodies of each body's least thread CPU time.\n\n")
    o.write("| segment | class | build | CPU ms | p99 us | max us | postings scored | page hash |\n")
    o.write("|---|---|---|---:|---:|---:|---:|---|\n")
    for (seg, cls, b), r in rows.items():
        o.write(f"| {seg} | {cls} | {b} | {mm(r['ms'], '%.1f')} | {mm(r['p99'], '%.0f')} | {mm(r['max'], '%.0f')} | {int(r['scored']):,} | {r['hash']} |\n")
print(open(out).read())
EOF
