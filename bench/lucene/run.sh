#!/usr/bin/env bash
# bench/lucene/run.sh: build the Lucene codec's benchmark and run it on the
# bundled nginx sample; writes results/lucene.md (LuceneStoredFieldsBench.java
# says what is measured and how).  Extra arguments go to the benchmark, e.g.
#   bench/lucene/run.sh --repeats 3 --fetches 5000 --out /tmp/lucene.md
# (a later --out wins).  Needs openjdk-17-jdk-headless and liblucene4.10-java
# (./scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=${BUILD_DIR:-build}
[ -f "$BUILD_DIR/CMakeCache.txt" ] || cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j2 --target fieldstore_jni fieldstore_lucene_bench_jar nginx2json >/dev/null
B=$(cd "$BUILD_DIR" && pwd)
jar() { ls /usr/share/java/"$1"-4.10*.jar | head -n1; }
CP="$(jar lucene-core):$(jar lucene-analyzers-common):$B/lucene/fieldstore-lucene.jar"
CP="$CP:$B/tests/lucene/fieldstore-lucene-test.jar:$B/bench/lucene/fieldstore-lucene-bench.jar"
WORK=$(mktemp -d /tmp/lucene-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# A fixed heap, so that heap resizing is not part of any one format's rounds.
java -Xms1g -Xmx1g -Dfieldstore.jni.library="$B/lucene/libfieldstore_jni.so" -cp "$CP" \
  org.fieldstore.lucene.bench.LuceneStoredFieldsBench \
  --nginx2json "$B/datasets/nginx2json" --log datasets/nginx-zanbil-access-10k.log \
  --work "$WORK" --out results/lucene.md "$@"
