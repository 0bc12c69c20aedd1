#!/usr/bin/env bash
# The main job: install what is missing, build, start fieldstore on
# 127.0.0.1, index the bundled real nginx log (or DEMO_DOCS synthetic
# documents) into three indices that differ only in their stored-fields
# codec -- ZSTD, best_compression and lucene_best_compression (Lucene 8.7's
# BEST_COMPRESSION layout, the one Elasticsearch 7.10 ships) -- each created
# with the same explicit mapping (datasets/nginx-mapping.json), then run the
# three-way load test under background CPU load (about DEMO_SECONDS, default
# 60), print the table, stop the server.
#
# Settings (environment):
#   DEMO_SECONDS=60      measured seconds in all, split over 3 sides x ROUNDS
#   ROUNDS=4             rounds, direction alternating: A B C, C B A, ...
#   DEMO_BACKGROUND=1    stress-ng during the test; 0 turns it off
#   DEMO_BACKGROUND_SPEC=cpu=2,load=50   two workers, each busy 50% of a core
#   DEMO_DOCS=N          N synthetic documents (synthlogs) instead of the log:
#                        vocabularies that grow as a real log's (the default)
#   SYNTH_ARGS=--resample  extra synthlogs options; --resample: the earlier
#                        corpus, whose vocabularies stay the sample's
#   DEMO_BULK_DOCS=5000  documents per _bulk request
#   DEMO_WORKLOAD=match  loadgen's workload: match (the article's queries) or
#                        dashboard (Kibana/Grafana bodies, docs/loadgen.md)
#   DATASET=PATH         the nginx log (default: the bundled 10k-line sample)
#
# Results: results/ab.md, results/ab.json, results/ab_*.svg
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
DEMO_SECONDS=${DEMO_SECONDS:-60}
DATASET=${DATASET:-datasets/nginx-zanbil-access-10k.log}
ROUNDS=${ROUNDS:-4}
DEMO_BACKGROUND=${DEMO_BACKGROUND:-1}
DEMO_BACKGROUND_SPEC=${DEMO_BACKGROUND_SPEC:-cpu=2,load=50}
DEMO_DOCS=${DEMO_DOCS:-}
DEMO_BULK_DOCS=${DEMO_BULK_DOCS:-5000}
DEMO_WORKLOAD=${DEMO_WORKLOAD:-match}
MAPPING=datasets/nginx-mapping.json
# reference first: every ratio in the report is ZSTD / the other index
SPECS=(logs-zstd:ZSTD logs-best_compression:best_compression
       logs-lucene_best_compression:lucene_best_compression)

./scripts/setup.sh
./scripts/build.sh

work=$(mktemp -d /tmp/fieldstore-demo.XXXXXX)
server_pid=
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

"$BUILD_DIR/fieldstore" --data "$work/data" --port 0 --port-file "$work/port" \
  2> "$work/server.log" &
server_pid=$!
for _ in $(seq 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
[[ -s "$work/port" ]] || { echo "demo: server did not start"; cat "$work/server.log"; exit 1; }
PORT=$(cat "$work/port")
URL="http://127.0.0.1:$PORT"
echo "demo: fieldstore pid $server_pid on $URL"

if [[ -n "$DEMO_DOCS" ]]; then
  echo "demo: generating $DEMO_DOCS synthetic documents (synthlogs)"
  read -r -a synth_args <<< "${SYNTH_ARGS:-}"
  "$BUILD_DIR/datasets/synthlogs" ${synth_args[@]+"${synth_args[@]}"} --docs "$DEMO_DOCS" \
    --format json -o "$work/docs.json"
  source_desc="$DEMO_DOCS synthetic documents (synthlogs${SYNTH_ARGS:+ $SYNTH_ARGS}, seed 1)"
else
  "$BUILD_DIR/datasets/nginx2json" --format json "$DATASET" > "$work/docs.json"
  source_desc="$(wc -l < "$work/docs.json") documents of $DATASET"
fi

# POST docs.json to _bulk in chunks of DEMO_BULK_DOCS, printing documents
# indexed, docs/s and the ETA at most once a second; fails on any item error.
bulk_load() {
  python3 - "$PORT" "$1" "$work/docs.json" "$DEMO_BULK_DOCS" <<'PY'
import http.client, json, sys, time
port, index, path, chunk = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
total = sum(1 for _ in open(path, "rb"))
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
t0 = last = time.monotonic()
done = 0

def send(lines):
    global done
    body = b"".join(lines)
    conn.request("POST", "/_bulk", body, {"Content-Type": "application/x-ndjson"})
    r = conn.getresponse()
    answer = r.read()
    if r.status != 200 or json.loads(answer).get("errors") is not False:
        sys.exit("demo: bulk into %s failed (HTTP %d): %s" % (index, r.status, answer[:500]))
    done += len(lines) // 2

def progress(final=False):
    el = time.monotonic() - t0
    rate = done / el if el > 0 else 0
    eta = (total - done) / rate if rate > 0 else 0
    print("demo: %s: %d/%d documents, %.0f docs/s, %s" %
          (index, done, total, rate, "%.1f s" % el if final else "ETA %.0f s" % eta),
          file=sys.stderr, flush=True)

lines = []
with open(path, "rb") as f:
    for i, doc in enumerate(f, 1):
        lines.append(b'{"index":{"_index":"%s","_id":"%d"}}\n' % (index.encode(), i))
        lines.append(doc if doc.endswith(b"\n") else doc + b"\n")
        if len(lines) >= 2 * chunk:
            send(lines)
            lines = []
            if time.monotonic() - last >= 1:
                last = time.monotonic()
                progress()
if lines:
    send(lines)
progress(final=True)
PY
}

# {"settings":..., "mappings": the mapping file} (the file may hold the
# mapping body or {"mappings": body})
python3 - "$MAPPING" > "$work/create.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m = m.get("mappings", m)
print(json.dumps({"settings": {"index": {"codec": "CODEC", "refresh_interval": "-1"}},
                  "mappings": m}))
PY

start=$(date +%s)
indices=()
for spec in "${SPECS[@]}"; do
  index=${spec%%:*}; codec=${spec#*:}
  indices+=(--index "$index")
  sed "s/\"CODEC\"/\"$codec\"/" "$work/create.json" > "$work/create-$index.json"
  curl -sf -XPUT "$URL/$index" -H 'Content-Type: application/json' \
    --data-binary @"$work/create-$index.json" >/dev/null \
    || { echo "demo: cannot create $index"; exit 1; }
  bulk_load "$index"
  curl -sf -XPOST "$URL/$index/_refresh" >/dev/null
  curl -sf -XPOST "$URL/$index/_forcemerge?max_num_segments=1" >/dev/null
  echo "demo: indexed $source_desc into $index ($codec)"
done
echo "demo: loading took $(( $(date +%s) - start )) s"
curl -s "$URL/_cat/indices?v&h=index,codec,docs.count,store.size&s=index"

# the mapping each index returns, normalized to the mapping body (sorted
# keys, no whitespace), and its md5
python3 - "$PORT" "${SPECS[@]%%:*}" > "$work/mappings.json" <<'PY'
import hashlib, json, sys, urllib.request
port, names = sys.argv[1], sys.argv[2:]
md5 = {}
for n in names:
    d = json.load(urllib.request.urlopen("http://127.0.0.1:%s/%s/_mapping" % (port, n)))
    body = json.dumps(d[n]["mappings"], sort_keys=True, separators=(",", ":"))
    md5[n] = hashlib.md5(body.encode()).hexdigest()
print(json.dumps({"identical": len(set(md5.values())) == 1, "md5": md5,
                  "normalization": "md5 of GET /{index}/_mapping's {index}.mappings, "
                                   "JSON with sorted keys and no whitespace"}))
PY

mkdir -p results
round_s=$(( DEMO_SECONDS / (${#SPECS[@]} * ROUNDS) )); (( round_s >= 2 )) || round_s=2
workload_args=(--fields service_name,method,error_code,url --size 10)
[[ "$DEMO_WORKLOAD" == dashboard ]] && workload_args=()
background=()
[[ "$DEMO_BACKGROUND" != 0 ]] && background=(--background "$DEMO_BACKGROUND_SPEC")
"$BUILD_DIR/tools/loadgen/loadgen" ab --host 127.0.0.1 --port "$PORT" "${indices[@]}" \
  --rounds "$ROUNDS" --round-duration "$round_s" --warmup 1 --clients 8 --threads 2 \
  --workload "$DEMO_WORKLOAD" "${workload_args[@]}" \
  --server-pid "$server_pid" "${background[@]}" \
  --json results/ab.json --md results/ab.md --svg-prefix results/ab

# the data set and the mapping check go into the report
python3 - "$work/mappings.json" "$source_desc" <<'PY'
import json, sys
maps, source = json.load(open(sys.argv[1])), sys.argv[2]
doc = json.load(open("results/ab.json"))
doc["mappings"] = maps
doc["dataset"] = source
json.dump(doc, open("results/ab.json", "w"), indent=2)
line = ("Data: %s, mapping datasets/nginx-mapping.json. Mappings %s: %s.\n\n" %
        (source, "identical" if maps["identical"] else "DIFFER",
         ", ".join("%s md5 %s" % kv for kv in maps["md5"].items())))
md = open("results/ab.md").read()
head, sep, rest = md.partition("\n\n")
open("results/ab.md", "w").write(head + sep + line + rest)
print("demo: " + line.strip())
PY
echo "demo: results in results/ab.md, results/ab.json"
