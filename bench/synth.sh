# bench/synth.sh: how the benchmark scripts call synthlogs (sourced; the
# caller defines SYNTHLOGS, the binary).
#
# SYNTH_ARGS (environment): extra synthlogs options for the documents of
# every benchmark, word-split.  Empty (the default): vocabularies that grow
# as a real log's (docs/datasets.md).  SYNTH_ARGS=--resample: the earlier
# corpus, whose vocabularies stay the bundled sample's, to reproduce old
# results.

read -r -a SYNTH_ARGV <<< "${SYNTH_ARGS:-}"

# synth OPTION...: run synthlogs with SYNTH_ARGS, then the options given.
synth() {
  "$SYNTHLOGS" ${SYNTH_ARGV[@]+"${SYNTH_ARGV[@]}"} "$@"
}

# The corpus in words, for logs and reports.
synth_corpus() {
  if [[ " ${SYNTH_ARGS:-} " == *" --resample "* ]]; then
    echo "synthlogs ${SYNTH_ARGS} (vocabularies of the sample)"
  else
    echo "synthlogs${SYNTH_ARGS:+ $SYNTH_ARGS} (growing vocabularies)"
  fi
}

# synth_matches URL IDX DOCS SEED: true when document K = min(DOCS, 1000) of
# index IDX (loaded with _id = document number) has the _source synthlogs
# writes for it now, i.e. a kept index holds this corpus (seed, options and
# generator), not one built before a change of them.
synth_matches() {
  local url=$1 idx=$2 docs=$3 seed=$4 k
  k=$((docs < 1000 ? docs : 1000))
  ((k > 0)) || return 1
  python3 - "$(synth --docs "$k" --seed "$seed" | tail -n 1)" \
    "$(curl -sS "$url/$idx/_doc/$k")" <<'PY'
import json, sys
want, got = sys.argv[1:]
try:
    same = json.loads(got).get("_source") == json.loads(want)
except ValueError:
    same = False
sys.exit(0 if same else 1)
PY
}
